/*
 * num.h - the one grammar for numbers and durations: command-line options,
 * fault spec keys, --param values and scenario files all read through it.
 *
 *   whole number   decimal digits only: "010" is ten (no octal, no hex, no
 *                  sign, no spaces), within [lo, hi]
 *   real number    decimal digits with an optional fraction: "0.01", "1.5",
 *                  ".5" (no exponent, no inf or nan), within its range;
 *                  a leading + or - only with NUM_SIGNED
 *   duration       a real number and a unit: "300ms", "2s", "1.5m", "1h";
 *                  rounded to whole ms, at most NUM_MAX_MS (30 days)
 *                  NUM_SIGNED    "+500ms", "-2s" (a clock skew)
 *                  NUM_STALE     "1.5stale": a multiple of the protocol's
 *                                stale age, resolved by the caller
 *                  NUM_BARE_MS   a bare number is ms, for a key whose name
 *                                says so (stale_ms=1500); without it a bare
 *                                number is refused: "-d 1500" would be
 *                                1500 s to one reader and 1500 ms to another
 *
 * Errors: every function returns 0, or -1 with a one-line reason in why
 * that names the text, e.g. "bad duration '1500': give a unit (ms, s, m, h)";
 * the caller prefixes where it was ("-d: ...", "for=: ...").  *out is
 * written only on success.  errno is not used.  This module includes
 * nothing of ours (core/, floor 1).
 */
#ifndef LS_NUM_H
#define LS_NUM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum num_flags {
	NUM_SIGNED = 1,  /* a leading '+' or '-' */
	NUM_STALE = 2,   /* durations: "Kstale" */
	NUM_BARE_MS = 4, /* durations: a bare number is ms */
	NUM_ABOVE = 8,   /* reals: strictly above lo (lo itself is refused) */
};

#define NUM_MAX_MS (30LL * 24 * 3600 * 1000) /* 30 days: anything longer is a typo */
#define NUM_MAX_STALE 1000.0                 /* "1000stale" at most */

struct num_dur {
	int64_t ms;      /* the length, when !is_stale (negative only with NUM_SIGNED) */
	double stale;    /* the multiple of the stale age, when is_stale (>= 0) */
	int is_stale;
};

/* A whole decimal number in [lo, hi]. */
int num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, char *why, size_t len);
/* A real number in [lo, hi] ((lo, hi] with NUM_ABOVE); NUM_SIGNED allows a sign. */
int num_real(const char *s, double lo, double hi, unsigned flags, double *out, char *why, size_t len);
/* A duration (flags: NUM_SIGNED, NUM_STALE, NUM_BARE_MS). */
int num_duration(const char *s, unsigned flags, struct num_dur *out, char *why, size_t len);
/* A duration in ms, no stale multiple (flags: NUM_SIGNED, NUM_BARE_MS). */
int num_ms(const char *s, unsigned flags, int64_t *out, char *why, size_t len);

#ifdef __cplusplus
}
#endif
#endif
