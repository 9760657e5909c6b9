/*
 * hist.c - the log-linear histogram (see hist.h).
 */
#include "hist.h"

#include <errno.h>
#include <stdlib.h>

unsigned hist_bucket(uint64_t v)
{
	if (v < 256)
		return (unsigned)v;
	unsigned shift = (unsigned)(63 - __builtin_clzll(v)) - 7; /* v >> shift is in [128, 255] */
	return 256 + (shift - 1) * 128 + (unsigned)((v >> shift) - 128);
}

int hist_push(struct hist *h, uint64_t v)
{
	if (!h->count) {
		h->count = calloc(2 * (size_t)HIST_BUCKETS, sizeof *h->count);
		if (!h->count) {
			errno = ENOMEM;
			return -1;
		}
		h->top = h->count + HIST_BUCKETS;
	}
	unsigned b = hist_bucket(v);
	h->count[b]++;
	if (v > h->top[b])
		h->top[b] = v;
	if (!h->n++ || v > h->max)
		h->max = v;
	return 0;
}

uint64_t hist_rank(const struct hist *h, unsigned pct)
{
	if (!h->n)
		return 0;
	uint64_t rank = (h->n * pct + 99) / 100, seen = 0;
	if (!rank)
		rank = 1;
	for (unsigned b = 0; b < HIST_BUCKETS; b++) {
		seen += h->count[b];
		if (seen >= rank)
			return h->top[b];
	}
	return h->max;
}

void hist_free(struct hist *h)
{
	free(h->count);
	h->count = h->top = NULL;
	h->n = h->max = 0;
}
