/*
 * shrink.c - shrinking: fewer workers, fewer ops, ddmin over deviations (see xint.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"

/* ---- shrinking ---- */

size_t explore_ddmin(void *items, size_t n, size_t size,
		     int (*pred)(void *ctx, const void *items, size_t n), void *ctx)
{
	unsigned char *v = items;
	unsigned char *trial = malloc(n * size + 1);
	if (!trial)
		return n;
	size_t gran = 2;
	while (n >= 2) {
		size_t chunk = (n + gran - 1) / gran;
		int reduced = 0;
		for (size_t start = 0; start < n; start += chunk) {
			size_t end = start + chunk < n ? start + chunk : n;
			/* the complement of [start, end) */
			memcpy(trial, v, start * size);
			memcpy(trial + start * size, v + end * size, (n - end) * size);
			size_t k = n - (end - start);
			if (pred(ctx, trial, k)) {
				memcpy(v, trial, k * size);
				n = k;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = 1;
				break;
			}
		}
		if (reduced)
			continue;
		if (gran >= n)
			break;
		gran = gran * 2 < n ? gran * 2 : n;
	}
	if (n == 1 && pred(ctx, v, 0))
		n = 0;
	free(trial);
	return n;
}

struct shrink_ctx {
	struct explorer *ex;
	struct xshape sh;
	int inv;
	size_t limit;            /* a candidate's story may not be longer */
	size_t last_len;         /* the story length of the last passing candidate */
	struct xexec tmp;
	unsigned runs;
};

/* Does this candidate fail the same invariant with a story no longer than
 * the best so far? */
static int shrink_pred(void *ctx, const void *items, size_t k)
{
	struct shrink_ctx *c = ctx;
	if (c->runs >= X_SHRINK_MAX || x_interrupted)
		return 0;
	c->runs++;
	if (x_replay(c->ex, &c->sh, items, k, &c->tmp) != 0)
		return 0;
	if (c->tmp.outcome != XO_FAIL || c->tmp.inv != c->inv)
		return 0;
	c->last_len = story_len(c->ex, &c->tmp);
	return c->last_len <= c->limit;
}

/* DEV without worker DROP's deviations, the workers above it renumbered. */
static struct xchoice *without_worker(const struct xchoice *dev, size_t ndev, unsigned drop, size_t *k)
{
	struct xchoice *out = malloc((ndev + 1) * sizeof *out);
	*k = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < ndev; i++)
		if (dev[i].w != drop) {
			out[*k] = dev[i];
			out[(*k)++].w -= dev[i].w > drop;
		}
	return out;
}

/* Shrink the failing execution X in place to one that fails the same
 * invariant with a story as short as it can find: each round tries every
 * worker fewer (any of them when all run one protocol, the others
 * renumbered; the last in a mixed fleet) and every worker with one op fewer,
 * and takes the shortest story; when none is shorter, ddmin over the
 * deviations, then the deviations that took effect.  X's journal must be the
 * current one.  Returns replays spent. */
unsigned shrink(struct explorer *ex, struct xexec *x)
{
	struct shrink_ctx c = { .ex = ex, .sh = x->sh, .inv = x->inv };
	c.limit = story_len(ex, x);
	size_t ndev = x->ndev;
	struct xchoice *dev = malloc((ndev + 1) * sizeof *dev);
	if (!dev)
		return 0;
	if (ndev) /* a NULL pointer even with a length of 0 is undefined */
		memcpy(dev, x->dev, ndev * sizeof *dev);
	for (int pass = 0; pass < 32; pass++) {
		struct xchoice *best = NULL;
		size_t best_n = 0, best_len = SIZE_MAX;
		struct xshape best_sh = c.sh;
		const struct xshape sh0 = c.sh;
		/* cand < n: worker cand out; cand >= n: worker cand-n runs one op fewer */
		for (unsigned cand = 0; cand < 2 * sh0.n; cand++) {
			size_t k = ndev;
			struct xchoice *cd;
			c.sh = sh0;
			if (cand < sh0.n) {
				if (sh0.n < 2 || (ex->cfg->run.nproto > 1 && cand != sh0.n - 1))
					continue;
				cd = without_worker(dev, ndev, cand, &k);
				c.sh.n--;
				for (unsigned i = cand; i < c.sh.n; i++)
					c.sh.ops[i] = sh0.ops[i + 1];
			} else {
				unsigned w = cand - sh0.n;
				if (sh0.ops[w] < 1 + (ex->cfg->run.nproto == 1)) /* 0 ops: the same as out */
					continue;
				c.sh.ops[w]--;
				cd = malloc((ndev + 1) * sizeof *cd);
				if (cd && ndev) /* memcpy from NULL is undefined, even of 0 bytes */
					memcpy(cd, dev, ndev * sizeof *cd);
			}
			if (!cd)
				break;
			if (shrink_pred(&c, cd, k) && c.last_len < best_len) {
				free(best);
				best = cd;
				best_n = k;
				best_len = c.last_len;
				best_sh = c.sh;
			} else {
				free(cd);
			}
		}
		c.sh = sh0;
		if (best) {
			free(dev);
			dev = best;
			ndev = best_n;
			c.sh = best_sh;
			c.limit = best_len;
			continue; /* another round from the smaller shape */
		}
		size_t k = explore_ddmin(dev, ndev, sizeof *dev, shrink_pred, &c);
		int changed = k != ndev;
		ndev = k;
		/* local moves: each choice a little earlier or later, or on another worker */
		static const int moves[] = { -1, 1, -2, 2, -4, 4, -8, 8, -16, 16 };
		for (size_t i = 0; i < ndev && c.runs < X_SHRINK_MAX; i++) {
			for (unsigned m = 0; m < sizeof moves / sizeof *moves + c.sh.n; m++) {
				struct xchoice was = dev[i];
				if (m < sizeof moves / sizeof *moves) {
					long at = (long)was.at + moves[m];
					if (at < 0 || (i && at <= (long)dev[i - 1].at) || (i + 1 < ndev && at >= (long)dev[i + 1].at))
						continue;
					dev[i].at = (uint32_t)at;
				} else {
					unsigned w = m - (unsigned)(sizeof moves / sizeof *moves);
					if (w == was.w)
						continue;
					dev[i].w = (uint8_t)w;
				}
				size_t lim = c.limit;
				c.limit = lim - 1; /* strictly shorter */
				if (lim > 0 && shrink_pred(&c, dev, ndev)) {
					changed = 1;
					c.limit = c.last_len;
					m = (unsigned)-1; /* again from this choice's first move */
					continue;
				}
				c.limit = lim;
				dev[i] = was;
			}
		}
		/* canonical form: the deviations that took effect */
		if (shrink_pred(&c, dev, ndev)) {
			changed |= c.last_len < c.limit;
			c.limit = c.last_len;
			free(dev);
			ndev = c.tmp.ndev;
			dev = malloc((ndev + 1) * sizeof *dev);
			if (!dev)
				break;
			if (ndev) /* a NULL pointer even with a length of 0 is undefined */
				memcpy(dev, c.tmp.dev, ndev * sizeof *dev);
		}
		if (!changed)
			break;
	}
	if (dev && x_replay(ex, &c.sh, dev, ndev, &c.tmp) == 0 && c.tmp.outcome == XO_FAIL &&
	    c.tmp.inv == x->inv) {
		xexec_free(x);
		*x = c.tmp;
		memset(&c.tmp, 0, sizeof c.tmp);
	}
	free(dev);
	xexec_free(&c.tmp);
	return c.runs;
}

