/*
 * prng.h - the per-worker pseudo-random generator.
 *
 * xoshiro256** seeded through splitmix64.  Every random decision a worker
 * makes (fault draws, entry names, hold times) comes from its own stream,
 * seeded from (run seed, worker id, incarnation) right after fork(), so the
 * same seed gives the same decisions.  Never use rand() or libfiu's PRNG.
 */
#ifndef LS_PRNG_H
#define LS_PRNG_H

#include <stdint.h>

struct prng {
	uint64_t s[4];
};

static inline uint64_t prng_splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed from up to three words: (run seed, worker id, incarnation). */
static inline void prng_seed(struct prng *r, uint64_t seed, uint64_t a, uint64_t b)
{
	uint64_t x = seed ^ prng_splitmix(&a) ^ (prng_splitmix(&b) << 1);
	for (int i = 0; i < 4; i++)
		r->s[i] = prng_splitmix(&x);
}

static inline uint64_t prng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t prng_next(struct prng *r)
{
	uint64_t *s = r->s;
	uint64_t out = prng_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = prng_rotl(s[3], 45);
	return out;
}

/* Uniform double in [0, 1). */
static inline double prng_unit(struct prng *r)
{
	return (double)(prng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n); n > 0. */
static inline uint64_t prng_below(struct prng *r, uint64_t n)
{
	return prng_next(r) % n;
}

#endif
