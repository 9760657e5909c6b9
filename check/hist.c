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

static unsigned group_size(unsigned g)
{
	return g ? 128 : 256;
}

int hist_push(struct hist *h, uint64_t v)
{
	unsigned b = hist_bucket(v);
	unsigned g = b < 256 ? 0 : 1 + (b - 256) / 128, i = b < 256 ? b : (b - 256) % 128;
	uint64_t *c = h->grp[g];
	if (!c) {
		c = h->grp[g] = calloc(2 * (size_t)group_size(g), sizeof *c);
		if (!c) {
			errno = ENOMEM;
			return -1;
		}
	}
	c[i]++;
	uint64_t *top = c + group_size(g);
	if (v > top[i])
		top[i] = v;
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
	for (unsigned g = 0; g < HIST_GROUPS; g++) {
		const uint64_t *c = h->grp[g];
		for (unsigned i = 0, k = group_size(g); c && i < k; i++) {
			seen += c[i];
			if (seen >= rank)
				return c[k + i];
		}
	}
	return h->max;
}

void hist_free(struct hist *h)
{
	for (unsigned g = 0; g < HIST_GROUPS; g++) {
		free(h->grp[g]);
		h->grp[g] = NULL;
	}
	h->n = h->max = 0;
}
