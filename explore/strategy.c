/*
 * strategy.c - the strategies: random, PCT, bounded DFS, replay of deviations (see xint.h).
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

/* ---- strategies ---- */

static unsigned choose_random(void *ctx, const struct xdec *d)
{
	struct xrandom *r = ctx;
	unsigned pick;
	if (x_faults_pick(&r->f, &r->rng, d, &pick))
		return pick;
	return x_faults_run(&r->f, &r->rng, d);
}

static void give_random(void *ctx, uint32_t at, struct sched_ahead *a)
{
	struct xrandom *r = ctx;
	a->mode = SA_RANDOM;
	x_faults_ahead(&r->f, at, a);
	if (r->f.hold_w >= 0 && at < r->f.hold_until && a->limit > at)
		a->limit = at; /* random's run picks keep a worker out (x_faults_run): the controller's */
	a->rng = r->rng;
}

static void take_rng(void *ctx, const struct sched_ahead *a)
{
	((struct xrandom *)ctx)->rng = a->rng;
}

static const struct xahead ahead_random = { give_random, take_rng };

static void pct_begin(struct xpct *p, unsigned n, uint32_t kest, uint32_t kmean, const struct xcfg *cfg, uint64_t sched,
		      const struct explorer *ex)
{
	unsigned perm[SCHED_MAX_WORKERS];
	for (unsigned i = 0; i < n; i++)
		perm[i] = i;
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)prng_below(&p->rng, i);
		unsigned t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (unsigned i = 0; i < n; i++)
		p->prio[i] = (int)(p->d + perm[i]);
	uint32_t k = kest ? kest : 32;
	for (unsigned i = 1; i < p->d && i < 16; i++)
		p->change[i] = (uint32_t)prng_below(&p->rng, k);
	x_faults_draw(&p->f, &p->rng, kmean, cfg, sched, ex);
}

static unsigned choose_pct(void *ctx, const struct xdec *d)
{
	struct xpct *p = ctx;
	unsigned pick;
	if (x_faults_pick(&p->f, &p->rng, d, &pick))
		return pick;
	uint8_t order[SCHED_MAX_WORKERS];
	for (unsigned i = 0; i < d->nrun; i++)
		order[i] = d->opt[i].w;
	return sched_pct_pick(p->prio, p->change, p->d, d->run_steps, order, d->nrun);
}

static void give_pct(void *ctx, uint32_t at, struct sched_ahead *a)
{
	const struct xpct *p = ctx;
	a->mode = SA_PCT;
	x_faults_ahead(&p->f, at, a);
	a->pct_d = p->d;
	memcpy(a->change, p->change, sizeof a->change);
	memcpy(a->prio, p->prio, sizeof a->prio);
}

static void take_pct(void *ctx, const struct sched_ahead *a)
{
	struct xpct *p = ctx;
	memcpy(p->prio, a->prio, sizeof p->prio);
}

static const struct xahead ahead_pct = { give_pct, take_pct };

static unsigned dfs_cost(const struct dfs_node *nd, unsigned i)
{
	return nd->opt[i].kind == XK_RUN && nd->cur_en && nd->opt[i].w != nd->current;
}

static unsigned choose_dfs(void *ctx, const struct xdec *d)
{
	struct xdfs *f = ctx;
	if (d->at < f->depth) {
		struct dfs_node *nd = &f->node[d->at];
		if (nd->nopt != d->nopt)
			f->mismatch++;
		return nd->idx < d->nopt ? nd->idx : 0;
	}
	if (f->depth == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct dfs_node *g = realloc(f->node, cap * sizeof *g);
		if (!g)
			return 0;
		f->node = g;
		f->cap = cap;
	}
	struct dfs_node *nd = &f->node[f->depth];
	memcpy(nd->opt, d->opt, d->nopt * sizeof *d->opt);
	nd->nopt = (uint16_t)d->nopt;
	nd->idx = 0;
	nd->current = (int8_t)d->current;
	nd->cur_en = (uint8_t)d->current_enabled;
	nd->pre = 0;
	if (f->depth) {
		const struct dfs_node *up = &f->node[f->depth - 1];
		nd->pre = (uint16_t)(up->pre + dfs_cost(up, up->idx));
	}
	f->depth++;
	return 0;
}

/* After an execution of `decisions` decisions: the next prefix, or 0 when
 * the bounded space is exhausted. */
int dfs_next(struct xdfs *f, uint32_t decisions)
{
	if (f->depth > decisions)
		f->depth = decisions;
	while (f->depth) {
		struct dfs_node *nd = &f->node[f->depth - 1];
		for (unsigned i = nd->idx + 1u; i < nd->nopt; i++)
			if (nd->pre + dfs_cost(nd, i) <= f->bound) {
				nd->idx = (uint16_t)i;
				return 1;
			}
		f->depth--;
	}
	return 0;
}

static void give_replay(void *ctx, uint32_t at, struct sched_ahead *a)
{
	const struct xreplay *r = ctx;
	a->mode = SA_DEFAULT;
	a->limit = x_next_dev(r->dev, r->n, r->next, at);
	a->watch_from = UINT32_MAX;
}

static const struct xahead ahead_replay = { give_replay, NULL };

unsigned choose_replay(void *ctx, const struct xdec *d)
{
	struct xreplay *r = ctx;
	while (r->next < r->n && r->dev[r->next].at < d->at)
		r->next++;
	if (r->next < r->n && r->dev[r->next].at == d->at) {
		const struct xchoice *c = &r->dev[r->next++];
		for (unsigned i = 0; i < d->nopt; i++)
			if (d->opt[i].kind == c->kind && d->opt[i].w == c->w && d->opt[i].m == c->m)
				return i;
	}
	return 0;
}

int x_replay(struct explorer *ex, const struct xshape *sh, const struct xchoice *dev, size_t ndev,
		    struct xexec *x)
{
	struct xreplay r = { dev, ndev, 0 };
	struct xshape copy = *sh; /* sh may be x's own */
	return x_exec_ahead(ex, &copy, choose_replay, &ahead_replay, &r, x);
}

/* Run X's own schedule again (its deviations are copied first: the run
 * rewrites them), so the shared journal is X's. */
int x_rerun(struct explorer *ex, struct xexec *x)
{
	struct xchoice *dev = malloc((x->ndev + 1) * sizeof *dev);
	if (!dev)
		return -1;
	if (x->ndev) /* a NULL pointer even with a length of 0 is undefined */
		memcpy(dev, x->dev, x->ndev * sizeof *dev);
	int r = x_replay(ex, &x->sh, dev, x->ndev, x);
	free(dev);
	return r;
}

static uint32_t x_mean_decisions(const struct explorer *ex)
{
	return ex->cal_execs ? (uint32_t)((ex->cal_dsum + ex->cal_execs - 1) / ex->cal_execs) : 0;
}

/* Schedule number K of the search (random and PCT draw from (seed, K)). */
int run_schedule(struct explorer *ex, const struct xcfg *cfg, struct strategy *st, const struct xshape *sh,
			uint64_t k, struct xexec *x)
{
	if (cfg->strategy == XS_RANDOM) {
		prng_seed(&st->rnd.rng, cfg->run.seed, 0x5eed, k);
		x_faults_draw(&st->rnd.f, &st->rnd.rng, x_mean_decisions(ex), cfg, k, ex);
		return x_exec_ahead(ex, sh, choose_random, &ahead_random, &st->rnd, x);
	}
	if (cfg->strategy == XS_PCT) {
		memset(&st->pct, 0, sizeof st->pct);
		st->pct.d = cfg->pct_d;
		prng_seed(&st->pct.rng, cfg->run.seed, 0x9c7, k);
		pct_begin(&st->pct, sh->n, ex->cal_kest, x_mean_decisions(ex), cfg, k, ex);
		return x_exec_ahead(ex, sh, choose_pct, &ahead_pct, &st->pct, x);
	}
	if (cfg->strategy == XS_GUIDED)
		return guided_run(ex, cfg, st->guided, sh, k, x);
	return x_exec(ex, sh, choose_dfs, &st->dfs, x);
}

