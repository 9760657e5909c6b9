/*
 * guided.c - `--strategy guided`: coverage-guided search, AFL for schedules.
 *
 * A schedule is its deviations from the default (explore.h).  The strategy
 * keeps a corpus of schedules that reached something no schedule before
 * them did - a new ordered pair of steps across workers (coverage.c) or a
 * new abstract state of the lock directory (below) - and makes most new
 * schedules by mutating a corpus entry: drop a deviation, move one a few
 * decisions, give it to another worker, insert a fresh run, stall, pause,
 * crash or one of the other fault kinds with a budget, or splice two entries (a prefix of one, the rest of another), then
 * a stack of those (AFL's havoc).  A mutant follows its plan and makes a
 * random pick at few other decisions, so the tail beyond the plan is
 * searched too.  One schedule in GD_FRESH, and every schedule while the
 * corpus is empty, is a fresh random one (as --strategy random draws it).
 *
 * The abstract state after a step: the step's protocol point, its call and
 * its outcome (success, or which errno), and how many workers had taken the
 * lock so far without releasing it (0, 1, 2+: what the journal of holds
 * says) - the lock directory as the protocol sees it.
 *
 * Determinism: every draw is from (seed, 0x6a1d, k) for schedule number k,
 * and the corpus is a function of the schedules before, so a seed gives the
 * same schedules in the same order.  It guarantees nothing beyond random's
 * (every schedule it can make, it makes with a positive probability); what
 * it buys is reach: deep cases that need several deviations in a row.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../core/journal.h"
#include "../core/point.h"
#include "../core/prng.h"
#include "../core/sched.h"
#include "../faults/fsx.h"
#include "xint.h"

#define GD_FRESH 8          /* one schedule in 8 is fresh */
#define GD_CORPUS 512       /* entries kept (the oldest non-seed entries go first) */
#define GD_STATES 65536     /* abstract states remembered */
#define GD_TAIL_PERMILLE 30 /* off the plan: a random pick at 3% of the decisions */

struct gd_entry {
	struct xchoice *dev;
	size_t ndev;
	uint32_t decisions;
	uint32_t picked;         /* times it was a parent */
};

struct xguided {
	struct gd_entry *corpus;
	size_t n;
	uint64_t *states;        /* hash set of abstract states */
	size_t nstates;
	uint64_t kept, fresh, mutants;
	/* the schedule under way */
	struct prng rng;
	struct xchoice *plan;
	size_t nplan, capplan, next;
	int random_all;          /* fresh: a random pick at every decision */
	struct xfaults f;        /* fresh: its faults, drawn as --strategy random draws them */
	unsigned tail_permille;
	uint8_t kinds[XK__COUNT]; /* the fault kinds with a budget (errno, ..., restart): a mutation */
	unsigned nkinds;          /* may insert one of them too */
};

struct xguided *guided_new(void)
{
	struct xguided *g = calloc(1, sizeof *g);
	if (!g)
		return NULL;
	g->corpus = calloc(GD_CORPUS, sizeof *g->corpus);
	g->states = calloc(GD_STATES, sizeof *g->states);
	if (!g->corpus || !g->states) {
		guided_free(g);
		return NULL;
	}
	return g;
}

void guided_free(struct xguided *g)
{
	if (!g)
		return;
	for (size_t i = 0; g->corpus && i < g->n; i++)
		free(g->corpus[i].dev);
	free(g->corpus);
	free(g->states);
	free(g->plan);
	free(g);
}

void guided_seed(struct xguided *g, uint64_t seed, uint64_t k)
{
	prng_seed(&g->rng, seed, 0x6a1d, k);
}

size_t guided_corpus_size(const struct xguided *g)
{
	return g ? g->n : 0;
}

/* ---- mutations ---- */

static int plan_reserve(struct xguided *g, size_t n)
{
	if (n <= g->capplan)
		return 0;
	size_t cap = g->capplan ? g->capplan : 64;
	while (cap < n)
		cap *= 2;
	struct xchoice *p = realloc(g->plan, cap * sizeof *p);
	if (!p)
		return -1;
	g->plan = p;
	g->capplan = cap;
	return 0;
}

static int dev_cmp(const void *a, const void *b)
{
	const struct xchoice *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

/* Sort by decision and keep one deviation per decision (the first). */
static void plan_normalise(struct xguided *g)
{
	if (g->nplan) /* a NULL pointer even with a length of 0 is undefined */
		qsort(g->plan, g->nplan, sizeof *g->plan, dev_cmp);
	size_t o = 0;
	for (size_t i = 0; i < g->nplan; i++)
		if (!o || g->plan[o - 1].at != g->plan[i].at)
			g->plan[o++] = g->plan[i];
	g->nplan = o;
}

/* A fresh deviation: a run, stall, pause or crash, or (one in six, when the
 * run gives them a budget) one of the other fault kinds, its m drawn small:
 * the chooser takes the option of that kind and worker nearest to it. */
static struct xchoice random_choice(const struct xguided *g, struct prng *r, unsigned workers, uint32_t span,
				    unsigned nstallv)
{
	struct xchoice c = { 0 };
	c.at = (uint32_t)prng_below(r, span ? span : 32);
	c.w = (uint8_t)prng_below(r, workers ? workers : 1);
	unsigned k = (unsigned)prng_below(r, g->nkinds ? 12 : 10);
	if (k >= 10) {
		c.kind = g->kinds[prng_below(r, g->nkinds)];
		c.m = (uint8_t)prng_below(r, 8);
		return c;
	}
	c.kind = k < 6 ? XK_RUN : k < 8 ? XK_STALL : k < 9 ? XK_PAUSE : XK_CRASH;
	if (c.kind == XK_STALL || c.kind == XK_PAUSE)
		c.m = (uint8_t)prng_below(r, nstallv ? nstallv : 1);
	return c;
}

/* One mutation of the plan; OTHER (may be NULL) is a second parent for a splice. */
static void mutate_once(struct xguided *g, const struct gd_entry *other, unsigned workers, uint32_t span,
			unsigned nstallv)
{
	struct prng *r = &g->rng;
	unsigned op = (unsigned)prng_below(r, other ? 7 : 6);
	if (!g->nplan && op < 4)
		op = 4;
	size_t i = g->nplan ? (size_t)prng_below(r, g->nplan) : 0;
	switch (op) {
	case 0: /* drop */
		memmove(&g->plan[i], &g->plan[i + 1], (g->nplan - i - 1) * sizeof *g->plan);
		g->nplan--;
		break;
	case 1: { /* move a few decisions */
		int64_t d = (int64_t)prng_below(r, 8) + 1;
		int64_t at = (int64_t)g->plan[i].at + (prng_below(r, 2) ? d : -d);
		g->plan[i].at = (uint32_t)(at < 0 ? 0 : at);
		break;
	}
	case 2: /* another worker */
		g->plan[i].w = (uint8_t)prng_below(r, workers ? workers : 1);
		break;
	case 3: /* another kind */
		g->plan[i] = (struct xchoice){ g->plan[i].at, random_choice(g, r, workers, span, nstallv).kind,
					       g->plan[i].w, (uint8_t)prng_below(r, nstallv ? nstallv : 1) };
		break;
	case 4:
	case 5: /* insert */
		if (plan_reserve(g, g->nplan + 1) == 0)
			g->plan[g->nplan++] = random_choice(g, r, workers, span, nstallv);
		break;
	default: { /* splice: ours before the cut, the other's from it */
		uint32_t cut = (uint32_t)prng_below(r, span ? span : 32);
		size_t o = 0;
		for (size_t k = 0; k < g->nplan; k++)
			if (g->plan[k].at < cut)
				g->plan[o++] = g->plan[k];
		g->nplan = o;
		for (size_t k = 0; other->dev && k < other->ndev; k++)
			if (other->dev[k].at >= cut && plan_reserve(g, g->nplan + 1) == 0)
				g->plan[g->nplan++] = other->dev[k];
		break;
	}
	}
	plan_normalise(g);
}

int guided_mutate(struct xguided *g, const struct xchoice *dev, size_t ndev, const struct xchoice *other,
		  size_t nother, unsigned workers, uint32_t span, unsigned nstallv, unsigned stack)
{
	if (plan_reserve(g, ndev + 1) != 0)
		return -1;
	if (ndev)
		memcpy(g->plan, dev, ndev * sizeof *dev);
	g->nplan = ndev;
	struct gd_entry o = { (struct xchoice *)other, nother, 0, 0 };
	for (unsigned s = 0; s < stack; s++)
		mutate_once(g, other ? &o : NULL, workers, span, nstallv);
	return 0;
}

const struct xchoice *guided_plan(const struct xguided *g, size_t *n)
{
	*n = g->nplan;
	return g->plan;
}

/* ---- the chooser ---- */

static unsigned choose_guided(void *ctx, const struct xdec *d)
{
	struct xguided *g = ctx;
	while (g->next < g->nplan && g->plan[g->next].at < d->at)
		g->next++;
	if (g->next < g->nplan && g->plan[g->next].at == d->at) {
		const struct xchoice *c = &g->plan[g->next++];
		unsigned near = 0;
		for (unsigned i = 0; i < d->nopt; i++)
			if (d->opt[i].kind == c->kind && d->opt[i].w == c->w) {
				if (d->opt[i].m == c->m)
					return i;
				if (!near && c->kind >= XK_ERRNO) /* another errno, skew, ... of the kind */
					near = i;
			}
		return near;
	}
	if (g->random_all) {
		unsigned p = 0;
		if (x_faults_pick(&g->f, &g->rng, d, &p))
			return p;
		return (unsigned)prng_below(&g->rng, d->nrun);
	}
	if (d->nrun > 1 && prng_below(&g->rng, 1000) < g->tail_permille)
		return (unsigned)prng_below(&g->rng, d->nrun);
	return 0;
}

/* The hand-off (core/sched.h): up to the plan's next choice (and, in a
 * fresh schedule, the next fault drawn) the workers decide as choose_guided
 * would, from its stream. */
static void give_guided(void *ctx, uint32_t at, struct sched_ahead *a)
{
	struct xguided *g = ctx;
	uint32_t plan = x_next_dev(g->plan, g->nplan, g->next, at);
	a->rng = g->rng;
	a->limit = plan;
	a->watch_from = UINT32_MAX;
	if (g->random_all) {
		x_faults_ahead(&g->f, at, a);
		a->mode = SA_RANDOM;
		a->limit = plan < a->limit ? plan : a->limit;
	} else {
		a->mode = SA_TAIL;
		a->permille = g->tail_permille;
	}
}

static void take_guided(void *ctx, const struct sched_ahead *a)
{
	((struct xguided *)ctx)->rng = a->rng;
}

static const struct xahead ahead_guided = { give_guided, take_guided };

/* The parent: entries picked fewer times first, by a draw weighted to them. */
static size_t pick_parent(struct xguided *g)
{
	size_t a = (size_t)prng_below(&g->rng, g->n), b = (size_t)prng_below(&g->rng, g->n);
	return g->corpus[a].picked <= g->corpus[b].picked ? a : b;
}

int guided_run(struct explorer *ex, const struct xcfg *cfg, struct xguided *g, const struct xshape *sh,
	       uint64_t k, struct xexec *x)
{
	guided_seed(g, cfg->run.seed, k);
	uint32_t span = ex->cal_kest ? ex->cal_kest : 32;
	g->next = 0;
	g->nplan = 0;
	g->random_all = 0;
	g->tail_permille = GD_TAIL_PERMILLE;
	g->nkinds = 0;
	for (int j = XK_ERRNO; j < XK__COUNT; j++)
		if (cfg->maxf[j])
			g->kinds[g->nkinds++] = (uint8_t)j;
	if (!g->n || prng_below(&g->rng, GD_FRESH) == 0) {
		uint32_t mean = ex->cal_execs ? (uint32_t)((ex->cal_dsum + ex->cal_execs - 1) / ex->cal_execs) : 32;
		g->random_all = 1;
		x_faults_draw(&g->f, &g->rng, mean, cfg, k, ex); /* every kind, as random's */
		g->fresh++;
	} else {
		struct gd_entry *p = &g->corpus[pick_parent(g)];
		p->picked++;
		const struct gd_entry *o = g->n > 1 ? &g->corpus[(size_t)prng_below(&g->rng, g->n)] : NULL;
		unsigned stack = 1u << prng_below(&g->rng, 4); /* 1, 2, 4 or 8 mutations */
		if (guided_mutate(g, p->dev, p->ndev, o ? o->dev : NULL, o ? o->ndev : 0, sh->n,
				  p->decisions ? p->decisions : span, cfg->nstallv, stack) != 0)
			g->nplan = 0;
		g->mutants++;
	}
	return x_exec_ahead(ex, sh, choose_guided, &ahead_guided, g, x);
}

/* ---- feedback ---- */

static int state_add(struct xguided *g, uint64_t h)
{
	h |= 1;
	size_t i = h % GD_STATES;
	for (size_t probe = 0; probe < GD_STATES; probe++, i = (i + 1) % GD_STATES) {
		if (g->states[i] == h)
			return 0;
		if (!g->states[i]) {
			if (g->nstates >= GD_STATES * 3 / 4)
				return 0; /* full enough: no more news */
			g->states[i] = h;
			g->nstates++;
			return 1;
		}
	}
	return 0;
}

/* The abstract states X went through: new ones?  (ex's journal is X's.) */
static int new_states(struct xguided *g, const struct explorer *ex, const struct xexec *x)
{
	int fresh = 0, held = 0, objs = 0;
	const struct journal_mem *jm = ex && ex->s ? &ex->s->jmem : NULL;
	for (size_t k = 0; k < x->nstep; k++) {
		const struct xstep *st = &x->step[k];
		for (uint32_t r = st->rec_from; jm && r < st->rec_to && r < jm->n; r++)
			switch (jm->rec[r].type) {
			case EV_ACQUIRED: held++; break;
			case EV_RELEASED: held -= held > 0; break;
			case EV_OBJ_CREATE: objs++; break;
			case EV_OBJ_REMOVE: objs -= objs > 0; break;
			default: break;
			}
		uint64_t h = 0xcbf29ce484222325ULL;
		h = (h ^ (st->point ? point_hash(st->point) : 0)) * 0x100000001b3ULL;
		h = (h ^ st->kind) * 0x100000001b3ULL;
		h = (h ^ st->fsop) * 0x100000001b3ULL;
		h = (h ^ (uint64_t)(st->result < 0 ? 1000 + st->err : st->result > 0)) * 0x100000001b3ULL;
		h = (h ^ (uint64_t)(held > 2 ? 2 : held)) * 0x100000001b3ULL;
		h = (h ^ (uint64_t)(objs > 2 ? 2 : objs)) * 0x100000001b3ULL;
		fresh |= state_add(g, h);
	}
	return fresh;
}

int guided_learn(struct xguided *g, const struct explorer *ex, const struct xexec *x, int new_pairs)
{
	int news = new_states(g, ex, x) | new_pairs;
	if (!news || x->outcome == XO_HARNESS)
		return 0;
	size_t at = g->n;
	if (g->n == GD_CORPUS) { /* full: the most picked entry goes */
		at = 0;
		for (size_t i = 1; i < g->n; i++)
			if (g->corpus[i].picked > g->corpus[at].picked)
				at = i;
		free(g->corpus[at].dev);
	} else {
		g->n++;
	}
	struct gd_entry *e = &g->corpus[at];
	e->dev = malloc((x->ndev + 1) * sizeof *e->dev);
	if (!e->dev) {
		e->ndev = 0;
		return 0;
	}
	if (x->ndev) /* a NULL pointer even with a length of 0 is undefined */
		memcpy(e->dev, x->dev, x->ndev * sizeof *e->dev);
	e->ndev = x->ndev;
	e->decisions = x->decisions;
	e->picked = 0;
	g->kept++;
	return 1;
}
