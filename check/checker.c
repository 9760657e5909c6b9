/*
 * checker.c - re-derive every invariant's verdict from the journals (sorted
 * by seq) and the final state, in one pass over the records.
 *
 * The walk keeps, per worker, the state its own records imply:
 *
 *              EV_ATTEMPT                 EV_ACQUIRED
 *     idle ---------------> attempting -------------> holding
 *       ^                    |  EV_BUSY / ACQUIRE_ERROR   |
 *       +--------------------+                           |
 *       +------------- EV_RELEASE_BEGIN, or death -------+
 *
 * "Death" is anything after which the process cannot act on its hold: its
 * own EV_FAULT crash record, the driver's EV_KILLED naming it (victim in
 * `op`), EV_WORKER_EXIT, or EV_WORKER_START of a new incarnation (which also
 * proves the old one is gone).
 *
 * A hold's age for stale judgments runs from EV_ACQUIRED's payload a (when
 * its lock object was created) when set, else from the record's own time:
 * the protocols judge staleness by the lock object's age, not by when its
 * holder noticed it had won.
 *
 * Cost: O(n * holders at once) for the walk, plus sorting the wait/hold
 * samples and the commits (O(n log n)); per-worker state is indexed by id.
 */
#include "checker.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../faults/fault.h"
#include "../protocols/lock.h"
#include "../workloads/workload.h"

#define NS_PER_MS 1000000LL
#define LIVENESS_GRACE_MS 2000LL /* slack for scheduling noise on a loaded CI machine */

static const char *const check_inv_names[INV__COUNT] = {
	[INV_EXCLUSION] = "exclusion",
	[INV_ZOMBIE_WRITE] = "zombie-write",
	[INV_NO_LOST_WRITES] = "no-lost-writes",
	[INV_SERIAL_UPDATES] = "serial-updates",
	[INV_STATE_INTACT] = "state-intact",
	[INV_OWN_RELEASE] = "own-release",
	[INV_LIVENESS] = "liveness",
	[INV_JOURNAL_SEQ] = "journal-seq",
	[INV_STALE_READ] = "stale-read",
};

const char *check_inv_name(enum inv_id id)
{
	if ((int)id < 0 || id >= INV__COUNT)
		return "unknown";
	return check_inv_names[id];
}

struct ck_worker {
	/* the current hold */
	int holding;
	int reclaimed;          /* a legal reclaim took it over: no longer counts as a holder */
	int overlapped;         /* another worker acquired during it (reclaim or not) */
	uint64_t hold_start_ns; /* stale clock: lock object creation, else acquired.ns */
	uint64_t hold_acq_ns;   /* EV_ACQUIRED's own time (hold distribution) */
	uint64_t hold_seq;
	uint32_t hold_op;
	size_t hslot;           /* index in ck.holders */
	int32_t over_by;        /* first worker that acquired during the hold */
	uint32_t over_op;
	uint64_t over_seq;
	int over_legal;
	uint64_t over_age_ns;
	/* the current attempt */
	int attempting;
	int att_reported;       /* the watchdog already reported it */
	uint64_t att_ns, att_seq;
	uint32_t att_op;
	int64_t att_stall_ms;   /* own announced stalls since the attempt began */
	uint64_t att_epoch;     /* acquisitions counted when the attempt began */
	int att_held;           /* some worker held the lock when it began */
	/* update workload */
	int has_read;
	int64_t read_rev;
	uint64_t commits;
	/* a crash fault was journaled by this incarnation: the driver's
	 * EV_KILLED for the same death is not a second crash */
	int crash_announced;
	/* stale-read: the read begun and the newest write finished before it */
	int rb_pending;
	uint64_t rb_seq;
	int64_t rb_floor;       /* -1: no write had finished */
	int32_t rb_floor_w;
	uint32_t rb_floor_op;
	uint64_t rb_floor_seq;
};

/* journal-seq: one EV_APPEND, or one line of the final journal */
struct ck_app {
	int64_t seq;
	int32_t worker;         /* -1: a final line without a worker (seeded) */
	int64_t op;
	uint64_t rseq;          /* EV_APPEND's record seq; final lines: 0 */
	size_t line;            /* final lines: 1-based line number; appends: 0 */
	int final;              /* 0 appended (EV_APPEND), 1 a line of the final journal */
	int matched;
};

/* journal-seq: a getSnapshot that wrote its replay of the journal's first
 * `bytes` bytes to the snapshot file (EV_READ c = bytes + 1) */
struct ck_snapread {
	int32_t worker;
	uint32_t op;
	uint64_t rseq;
	uint64_t bytes;
};

struct ck_commit {
	int64_t rev;
	uint64_t seq;
	uint32_t op;
	uint32_t worker;
	int64_t read_rev;       /* -2: no read seen */
	int bad_read;           /* rev != read + 1 */
	int dup;                /* an earlier commit wrote the same revision */
	size_t first;           /* if dup: index of that earlier commit */
};

/* A lock object on disk now (fed by obj-create / obj-remove): whose it is,
 * and whether its creator has died (an orphan nobody alive will release). */
struct ck_obj {
	int64_t ino;
	int32_t creator;
	int orphan;
	uint64_t seq;
};

struct ck_samples {
	uint64_t *v;
	size_t n, cap;
};

struct ck {
	const struct check_input *in;
	struct check_result *out;
	struct ck_worker *w;
	unsigned *holders;
	size_t nholders;
	size_t live;            /* holders whose hold was not reclaimed */
	/* liveness (3): a stretch with no live holder */
	int stuck_on;           /* check (3) at all: some stale age is finite */
	int64_t stuck_bound_ms;
	int stretch_open;
	int stretch_started;    /* start_ns is set */
	uint64_t stretch_ns, stretch_seq;
	int32_t stretch_after;  /* the worker whose hold ended it, -1 */
	uint64_t stretch_busy;
	uint64_t last_busy_ns, last_busy_seq;
	uint32_t last_busy_op;
	int32_t last_busy_w;
	/* liveness (5): waiting on a dead worker's lock object until giving up */
	struct ck_obj *objs;
	size_t nobjs, capobjs;
	size_t orphans;
	uint64_t orphan_since_seq;
	uint64_t acq_epoch;
	uint64_t *viol_by;      /* per worker: violations it is the first worker of */
	/* throughput */
	struct ck_samples wait, hold;
	struct ck_commit *commits;
	size_t ncommits, capcommits;
	uint64_t released;
	uint64_t first_ns, last_ns;
	int seen_worker_rec;
	/* journal-seq */
	struct ck_app *apps;
	size_t napps, capapps;
	uint64_t appended;
	struct ck_snapread *snapreads;
	size_t nsnapreads, capsnapreads;
	/* stale-read: the newest version any finished write wrote */
	int64_t max_ver;        /* -1: none yet */
	int32_t max_w;
	uint32_t max_op;
	uint64_t max_seq;
	uint64_t reads;
};

static int64_t ck_stale(const struct ck *c, unsigned w)
{
	return c->in->stale_ms ? c->in->stale_ms[w] : LS_NEVER;
}

static int64_t ck_budget(const struct ck *c, unsigned w)
{
	return c->in->budget_ms ? c->in->budget_ms[w] : LS_NEVER;
}

/* Is AGE_NS past a stale age of STALE_MS?  LS_NEVER (or absurd) never is. */
/* The kernel stamps file times from its coarse clock, up to a tick (4 ms at
 * HZ=250) behind the real one: a protocol that reads mtime sees a lock up to
 * a tick older than it is, and may reclaim it that much before the stale age
 * by our clock.  Such a reclaim is still legal. */
#define STALE_SLACK_NS (10 * NS_PER_MS)

static int ck_past_stale(int64_t stale_ms, uint64_t age_ns)
{
	if (stale_ms == LS_NEVER || stale_ms < 0 || stale_ms > INT64_MAX / NS_PER_MS)
		return 0;
	return age_ns + STALE_SLACK_NS > (uint64_t)(stale_ms * NS_PER_MS);
}

static uint64_t ck_since(uint64_t later, uint64_t earlier)
{
	return later > earlier ? later - earlier : 0;
}

static double ck_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void ck_stale_text(int64_t stale_ms, char *buf, size_t len)
{
	if (stale_ms == LS_NEVER)
		snprintf(buf, len, "no stale age");
	else
		snprintf(buf, len, "stale age %lld ms", (long long)stale_ms);
}

/* Count one violation of INV; keep its example while there is room. */
__attribute__((format(printf, 9, 10)))
static void ck_violation(struct ck *c, enum inv_id inv, int32_t w0, uint32_t op0, uint64_t seq0,
			 int32_t w1, uint32_t op1, uint64_t seq1, const char *fmt, ...)
{
	struct check_inv *v = &c->out->inv[inv];
	struct check_example *ex;
	va_list ap;

	v->violations++;
	if (w0 >= 0 && (unsigned)w0 < c->in->workers && c->viol_by)
		c->viol_by[w0]++;
	if (v->nex >= CHECK_MAX_EXAMPLES)
		return;
	ex = &v->ex[v->nex++];
	ex->worker[0] = w0;
	ex->op[0] = op0;
	ex->seq[0] = seq0;
	ex->worker[1] = w1;
	ex->op[1] = op1;
	ex->seq[1] = seq1;
	va_start(ap, fmt);
	vsnprintf(ex->text, sizeof ex->text, fmt, ap);
	va_end(ap);
}

static int ck_push(struct ck_samples *s, uint64_t v)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 1024;
		uint64_t *nv = realloc(s->v, nc * sizeof *nv);

		if (!nv)
			return -1;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = v;
	return 0;
}

static int ck_u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* p50/p99 by nearest rank (the smallest sample with at least p of them at or below it). */
static void ck_dist(struct ck_samples *s, struct dist *d)
{
	memset(d, 0, sizeof *d);
	d->n = s->n;
	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof *s->v, ck_u64_cmp);
	size_t r50 = (s->n * 50 + 99) / 100, r99 = (s->n * 99 + 99) / 100;

	d->p50 = ck_ms(s->v[(r50 ? r50 : 1) - 1]);
	d->p99 = ck_ms(s->v[(r99 ? r99 : 1) - 1]);
	d->max = ck_ms(s->v[s->n - 1]);
}

/* liveness (3): judge the stretch that is closing (or open at the end). */
static void ck_stretch_judge(struct ck *c)
{
	uint64_t dur;

	if (!c->stuck_on || !c->stretch_open || !c->stretch_started || !c->stretch_busy)
		return;
	/* Measured to the last busy, not to the stretch's end: the busy is the
	 * evidence that the lock could not be taken; idle time after it
	 * (everybody stalled elsewhere, the run winding down) proves nothing. */
	dur = ck_since(c->last_busy_ns, c->stretch_ns);
	if (dur <= (uint64_t)c->stuck_bound_ms * NS_PER_MS)
		return;
	if (c->stretch_after >= 0)
		ck_violation(c, INV_LIVENESS, c->last_busy_w, c->last_busy_op, c->last_busy_seq,
			     c->stretch_after, 0, c->stretch_seq,
			     "nobody held the lock from seq %llu (w%d's hold ended) to seq %llu, "
			     "%.1f ms, while %llu attempts ended busy (last: w%d op %u); "
			     "bound %lld ms",
			     (unsigned long long)c->stretch_seq, (int)c->stretch_after,
			     (unsigned long long)c->last_busy_seq, ck_ms(dur),
			     (unsigned long long)c->stretch_busy, (int)c->last_busy_w, c->last_busy_op,
			     (long long)c->stuck_bound_ms);
	else
		ck_violation(c, INV_LIVENESS, c->last_busy_w, c->last_busy_op, c->last_busy_seq,
			     -1, 0, c->stretch_seq,
			     "nobody held the lock from the start (seq %llu) to seq %llu, %.1f ms, "
			     "while %llu attempts ended busy (last: w%d op %u); bound %lld ms",
			     (unsigned long long)c->stretch_seq, (unsigned long long)c->last_busy_seq,
			     ck_ms(dur), (unsigned long long)c->stretch_busy, (int)c->last_busy_w,
			     c->last_busy_op, (long long)c->stuck_bound_ms);
}

static void ck_stretch_begin(struct ck *c, const struct jrec *r, int32_t after)
{
	c->stretch_open = 1;
	c->stretch_started = 1;
	c->stretch_ns = r->ns;
	c->stretch_seq = r->seq;
	c->stretch_after = after;
	c->stretch_busy = 0;
}

/* End W's hold, if any (release-begin or death); R is the record that ends it. */
static void ck_hold_end(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	size_t last;

	if (!s->holding)
		return;
	last = c->nholders - 1;
	c->holders[s->hslot] = c->holders[last];
	c->w[c->holders[last]].hslot = s->hslot;
	c->nholders--;
	s->holding = 0;
	if (!s->reclaimed) {
		c->live--;
		if (c->live == 0)
			ck_stretch_begin(c, r, (int32_t)w);
	}
}

/* liveness (2): an attempt that ends at R.  HOW finishes "the attempt took
 * N ms and ...": "acquired", "ended busy", "ended in an error". */
static void ck_attempt_end(struct ck *c, unsigned w, const struct jrec *r, const char *how)
{
	struct ck_worker *s = &c->w[w];
	int64_t budget = ck_budget(c, w), bound;
	double took_ms;

	if (!s->attempting)
		return;
	s->attempting = 0;
	if (s->att_reported || budget == LS_NEVER || budget < 0 || budget > INT64_MAX / 4)
		return;
	bound = budget + (budget > LIVENESS_GRACE_MS ? budget : LIVENESS_GRACE_MS);
	took_ms = ck_ms(ck_since(r->ns, s->att_ns)) - (double)s->att_stall_ms;
	if (took_ms <= (double)bound)
		return;
	ck_violation(c, INV_LIVENESS, (int32_t)w, s->att_op, s->att_seq, -1, 0, r->seq,
		     "w%u's attempt (op %u, seq %llu) took %.1f ms and %s at seq %llu "
		     "(own stalls excluded: %lld ms); bound %lld ms for a %lld ms wait budget",
		     w, s->att_op, (unsigned long long)s->att_seq, took_ms, how,
		     (unsigned long long)r->seq, (long long)s->att_stall_ms, (long long)bound,
		     (long long)budget);
}

/* A death or a new incarnation: whatever W was doing is over, unjudged. */
/* A worker died (or a new incarnation replaced it): what it created and did
 * not remove is an orphan now. */
static void ck_orphan(struct ck *c, unsigned w, const struct jrec *r)
{
	for (size_t i = 0; i < c->nobjs; i++) {
		struct ck_obj *o = &c->objs[i];
		if (o->creator != (int32_t)w || o->orphan)
			continue;
		o->orphan = 1;
		if (c->orphans++ == 0)
			c->orphan_since_seq = r->seq;
	}
}

static int ck_obj_create(struct ck *c, unsigned w, const struct jrec *r)
{
	for (size_t i = 0; i < c->nobjs; i++) {
		if (c->objs[i].ino == r->a) { /* a stale entry under a reused inode */
			if (c->objs[i].orphan)
				c->orphans--;
			c->objs[i] = c->objs[--c->nobjs];
			break;
		}
	}
	if (c->nobjs == c->capobjs) {
		size_t cap = c->capobjs ? c->capobjs * 2 : 16;
		struct ck_obj *g = realloc(c->objs, cap * sizeof *g);
		if (!g)
			return -1;
		c->objs = g;
		c->capobjs = cap;
	}
	c->objs[c->nobjs++] = (struct ck_obj){ r->a, (int32_t)w, 0, r->seq };
	return 0;
}

static void ck_obj_gone(struct ck *c, const struct jrec *r)
{
	for (size_t i = 0; i < c->nobjs; i++) {
		if (c->objs[i].ino != r->a)
			continue;
		if (c->objs[i].orphan)
			c->orphans--;
		c->objs[i] = c->objs[--c->nobjs];
		return;
	}
}

/* Is object o abandoned as seen from an attempt that began at seq since: its
 * creator died before then, or made it before its own current attempt began
 * (it left it behind: a release that removed nothing, a failed take), or is
 * neither attempting nor holding at all? */
static int ck_abandoned(const struct ck *c, const struct ck_obj *o, uint64_t since)
{
	if (o->seq >= since)
		return 0;
	if (o->orphan)
		return 1;
	if (o->creator < 0 || (unsigned)o->creator >= c->in->workers)
		return 0;
	const struct ck_worker *cw = &c->w[o->creator];
	if (!cw->attempting && !cw->holding)
		return 1;
	return cw->attempting && !cw->holding && o->seq < cw->att_seq;
}

/* An attempt gave up after waiting its whole budget.  If nobody alive held
 * the lock at any moment of it and a lock object its maker had abandoned was
 * there all along, the waiter waited on nobody: a lock outlived its holder
 * (PROTOCOLS.md K-VL-1's empty lock of a killed taker, a crashed holder's
 * directory younger than the stale age) or a release removed nothing and the
 * process now waits on itself (K-VL-3). */
static void ck_dead_wait(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	int64_t budget = ck_budget(c, w);
	if (!s->attempting || s->att_held || s->att_epoch != c->acq_epoch || c->live || !c->nobjs)
		return;
	uint64_t waited = ck_since(r->ns, s->att_ns), own_stalls = (uint64_t)s->att_stall_ms * NS_PER_MS;
	waited = waited > own_stalls ? waited - own_stalls : 0;
	if (budget == LS_NEVER || budget < 1 || waited < (uint64_t)budget * NS_PER_MS)
		return; /* gave up at once (a try), or its own stalls ate the budget: not the lock's doing */
	const struct ck_obj *o = NULL;
	for (size_t i = 0; i < c->nobjs && !o; i++)
		if (ck_abandoned(c, &c->objs[i], s->att_seq))
			o = &c->objs[i];
	if (!o)
		return;
	const char *how = o->orphan ? "left when it died" : "left behind and no longer held";
	if (o->creator < 0)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, -1, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object carried over "
			     "from before the run (found at the start); no live worker held the lock meanwhile",
			     w, r->op, (unsigned long long)r->seq, ck_ms(ck_since(r->ns, s->att_ns)));
	else if (o->creator == (int32_t)w && !o->orphan)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, (int32_t)w, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on itself: on a lock object it "
			     "itself left behind (made at seq %llu); no live worker held the lock meanwhile",
			     w, r->op, (unsigned long long)r->seq, ck_ms(ck_since(r->ns, s->att_ns)),
			     (unsigned long long)o->seq);
	else
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, o->creator, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object w%d %s "
			     "(made at seq %llu); no live worker held the lock meanwhile",
			     w, r->op, (unsigned long long)r->seq, ck_ms(ck_since(r->ns, s->att_ns)), o->creator,
			     how, (unsigned long long)o->seq);
}

static void ck_worker_gone(struct ck *c, unsigned w, const struct jrec *r)
{
	ck_orphan(c, w, r);
	ck_hold_end(c, w, r);
	c->w[w].attempting = 0;
	c->w[w].rb_pending = 0;
}

static const char *ck_proto(const struct ck *c, unsigned w)
{
	return c->in->proto_of ? c->in->proto_of[w] : NULL;
}

/* W acquired at R: exclusion against every current holder, then W holds.
 * 0, or -1 on allocation failure. */
static int ck_acquired(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	uint64_t start = r->a > 0 ? (uint64_t)r->a : r->ns;

	if (s->attempting && ck_push(&c->wait, ck_since(r->ns, s->att_ns)) < 0)
		return -1;
	ck_attempt_end(c, w, r, "acquired");
	ck_hold_end(c, w, r); /* a hold never released: replaced */
	if (c->live == 0) {
		/* somebody holds again: the stretch without a holder is over */
		ck_stretch_judge(c);
		c->stretch_open = 0;
	}

	for (size_t i = 0; i < c->nholders; i++) {
		unsigned h = c->holders[i];
		struct ck_worker *hs = &c->w[h];
		uint64_t age = ck_since(r->ns, hs->hold_start_ns);
		int64_t stale = ck_stale(c, h);
		char st[48];

		if (h == w)
			continue;
		if (!hs->overlapped) {
			hs->overlapped = 1;
			hs->over_by = (int32_t)w;
			hs->over_op = r->op;
			hs->over_seq = r->seq;
			hs->over_age_ns = age;
			hs->over_legal = 0;
		}
		if (hs->reclaimed)
			continue; /* taken over already: this hold no longer counts */
		if (ck_past_stale(stale, age)) {
			/* legal reclaim of a holder past its stale age */
			hs->reclaimed = 1;
			if (hs->over_by == (int32_t)w && hs->over_seq == r->seq)
				hs->over_legal = 1;
			c->out->reclaims++;
			c->live--;
			continue;
		}
		ck_stale_text(stale, st, sizeof st);
		if (ck_proto(c, w) && ck_proto(c, h) && strcmp(ck_proto(c, w), ck_proto(c, h)) != 0)
			ck_violation(c, INV_EXCLUSION, (int32_t)w, r->op, r->seq, (int32_t)h,
				     hs->hold_op, hs->hold_seq,
				     "w%u (%s) acquired (op %u, seq %llu) while w%u (%s) held since "
				     "seq %llu (op %u, %.1f ms, %s)",
				     w, ck_proto(c, w), r->op, (unsigned long long)r->seq, h,
				     ck_proto(c, h), (unsigned long long)hs->hold_seq, hs->hold_op,
				     ck_ms(age), st);
		else
			ck_violation(c, INV_EXCLUSION, (int32_t)w, r->op, r->seq, (int32_t)h,
				     hs->hold_op, hs->hold_seq,
				     "w%u acquired (op %u, seq %llu) while w%u held since seq %llu "
				     "(op %u, %.1f ms, %s)",
				     w, r->op, (unsigned long long)r->seq, h,
				     (unsigned long long)hs->hold_seq, hs->hold_op, ck_ms(age), st);
	}

	s->holding = 1;
	s->reclaimed = 0;
	s->overlapped = 0;
	s->over_by = -1;
	s->hold_start_ns = start;
	s->hold_acq_ns = r->ns;
	s->hold_seq = r->seq;
	s->hold_op = r->op;
	s->hslot = c->nholders;
	c->holders[c->nholders++] = w;
	c->live++;
	return 0;
}

static void ck_commit_begin(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	if (!s->holding || !s->overlapped)
		return;
	ck_violation(c, INV_ZOMBIE_WRITE, (int32_t)w, r->op, r->seq, s->over_by, s->over_op,
		     s->over_seq,
		     "w%u began a commit of revision %lld (op %u, seq %llu) after w%d took its "
		     "lock at seq %llu (op %u): %s %.1f ms into the hold",
		     w, (long long)r->a, r->op, (unsigned long long)r->seq, (int)s->over_by,
		     (unsigned long long)s->over_seq, s->over_op,
		     s->over_legal ? "a legal reclaim" : "an overlap, not a legal reclaim,",
		     ck_ms(s->over_age_ns));
}

static int ck_commit(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	struct ck_commit *k;

	c->out->committed++;
	s->commits++;
	if (!c->in->check_state)
		return 0;
	if (c->ncommits == c->capcommits) {
		size_t nc = c->capcommits ? c->capcommits * 2 : 1024;
		struct ck_commit *nk = realloc(c->commits, nc * sizeof *nk);

		if (!nk)
			return -1;
		c->commits = nk;
		c->capcommits = nc;
	}
	k = &c->commits[c->ncommits++];
	memset(k, 0, sizeof *k);
	k->rev = r->a;
	k->seq = r->seq;
	k->op = r->op;
	k->worker = w;
	k->read_rev = s->has_read ? s->read_rev : -2;
	/* the workload writes (read < 0 ? 0 : read) + 1: a missing file is revision 0 */
	if (s->has_read)
		k->bad_read = r->a != (s->read_rev < 0 ? 0 : s->read_rev) + 1;
	return 0;
}

static void ck_obj_remove(struct ck *c, unsigned y, const struct jrec *r)
{
	int64_t x = r->b, stale;
	struct ck_worker *xs;
	uint64_t age;
	char st[48];

	if (x < 0 || x >= (int64_t)c->in->workers || x == (int64_t)y)
		return;
	xs = &c->w[x];
	if (!xs->holding)
		return;
	age = ck_since(r->ns, xs->hold_start_ns);
	stale = ck_stale(c, (unsigned)x);
	if (ck_past_stale(stale, age))
		return; /* a legal reclaim of a holder past its stale age */
	ck_stale_text(stale, st, sizeof st);
	ck_violation(c, INV_OWN_RELEASE, (int32_t)y, r->op, r->seq, (int32_t)x, xs->hold_op,
		     xs->hold_seq,
		     "w%u removed the lock object w%lld created and still holds (w%u op %u, "
		     "seq %llu; w%lld held since seq %llu, op %u, held %.1f ms, %s)",
		     y, (long long)x, y, r->op, (unsigned long long)r->seq, (long long)x,
		     (unsigned long long)xs->hold_seq, xs->hold_op, ck_ms(age), st);
}

static void ck_driver(struct ck *c, const struct jrec *r)
{
	unsigned v = r->op; /* the victim */
	struct ck_worker *s;

	if (r->type == EV_OBJ_CREATE) {
		/* found at the start (carried over a restore): an orphan from the outset */
		if (ck_obj_create(c, 0, r) == 0) {
			c->objs[c->nobjs - 1].creator = -1;
			c->objs[c->nobjs - 1].orphan = 1;
			if (c->orphans++ == 0)
				c->orphan_since_seq = r->seq;
		}
		return;
	}
	if (r->type != EV_KILLED && r->type != EV_LIVENESS)
		return;
	if (v >= c->in->workers)
		return;
	s = &c->w[v];
	if (r->type == EV_LIVENESS) {
		const char *pname = journal_point_name ? journal_point_name((uint64_t)r->a) : NULL;
		char hex[32];
		snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)r->a);
		ck_violation(c, INV_LIVENESS, (int32_t)v, s->attempting ? s->att_op : 0,
			     s->attempting ? s->att_seq : 0, -1, 0, r->seq,
			     "the watchdog found w%u without progress for %lld ms (budget %lld ms), "
			     "last point %s, at seq %llu",
			     v, (long long)r->b, (long long)r->c, pname ? pname : hex,
			     (unsigned long long)r->seq);
		s->att_reported = 1; /* do not count the same stuck attempt twice */
		return;
	}
	c->out->kills++;
	if (r->c == 0 && !s->crash_announced)
		c->out->crashes++;
	ck_worker_gone(c, v, r);
}

/* ---- journal-seq (append) ---- */

static int ck_app_push(struct ck *c, const struct ck_app *a)
{
	if (c->napps == c->capapps) {
		size_t nc = c->capapps ? c->capapps * 2 : 1024;
		struct ck_app *na = realloc(c->apps, nc * sizeof *na);

		if (!na)
			return -1;
		c->apps = na;
		c->capapps = nc;
	}
	c->apps[c->napps++] = *a;
	return 0;
}

/* W appended seq r->a. */
static int ck_append(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_app a = { r->a, (int32_t)w, r->op, r->seq, 0, 0, 0 };

	c->appended++;
	if (!c->in->check_seq)
		return 0;
	if (r->a < 1)
		ck_violation(c, INV_JOURNAL_SEQ, (int32_t)w, r->op, r->seq, -1, 0, 0,
			     "w%u appended seq %lld (op %u, seq %llu): sequence numbers start at 1",
			     w, (long long)r->a, r->op, (unsigned long long)r->seq);
	return ck_app_push(c, &a);
}

/* W's getSnapshot wrote its replay of the journal's first r->c - 1 bytes. */
static int ck_snapread(struct ck *c, unsigned w, const struct jrec *r)
{
	if (c->nsnapreads == c->capsnapreads) {
		size_t nc = c->capsnapreads ? c->capsnapreads * 2 : 64;
		struct ck_snapread *g = realloc(c->snapreads, nc * sizeof *g);
		if (!g)
			return -1;
		c->snapreads = g;
		c->capsnapreads = nc;
	}
	c->snapreads[c->nsnapreads++] =
		(struct ck_snapread){ (int32_t)w, r->op, r->seq, (uint64_t)(r->c - 1) };
	return 0;
}

/* seq, then appends before final lines, then record/line order */
static int ck_app_cmp(const void *x, const void *y)
{
	const struct ck_app *a = x, *b = y;

	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	if (a->final != b->final)
		return a->final - b->final;
	if (a->rseq != b->rseq)
		return a->rseq < b->rseq ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* "w1 and w3 both appended seq 5 (ops 7 and 2)" - one violation per extra. */
static void ck_seq_dups(struct ck *c, const struct ck_app *g, size_t na, size_t nf)
{
	const struct ck_app *f = g + na; /* the final lines of the group */
	size_t extra = (na > nf ? na : nf) - 1;
	char more[48] = "";

	if (na > 2)
		snprintf(more, sizeof more, "; %zu appends of it in all", na);
	if (na >= nf) {
		ck_violation(c, INV_JOURNAL_SEQ, g[1].worker, (uint32_t)g[1].op, g[1].rseq,
			     g[0].worker, (uint32_t)g[0].op, g[0].rseq,
			     "w%d and w%d both appended seq %lld (ops %lld and %lld, at seq %llu and "
			     "%llu)%s",
			     (int)g[0].worker, (int)g[1].worker, (long long)g[0].seq,
			     (long long)g[0].op, (long long)g[1].op, (unsigned long long)g[0].rseq,
			     (unsigned long long)g[1].rseq, more);
	} else {
		ck_violation(c, INV_JOURNAL_SEQ, f[1].worker, (uint32_t)(f[1].op < 0 ? 0 : f[1].op), 0,
			     f[0].worker, (uint32_t)(f[0].op < 0 ? 0 : f[0].op), 0,
			     "the final journal holds seq %lld %zu times (lines %zu and %zu)",
			     (long long)f[0].seq, nf, f[0].line, f[1].line);
	}
	c->out->inv[INV_JOURNAL_SEQ].violations += extra - 1;
}

static int ck_half_written(struct ck *c);
static int ck_final_snapshot(struct ck *c);

/*
 * After the walk: the appended seqs (EV_APPEND) and, when given, the final
 * journal's lines, together.  Per seq: appended or held more than once is a
 * duplicate; a seq between 1 and the highest that neither appended nor holds
 * is a gap; an append whose line (worker, op, seq) is not in the final journal
 * is lost.  A line with no EV_APPEND (seeded, or its writer died before it
 * journaled the append) is fine.
 */
static int ck_journal_seq(struct ck *c)
{
	const struct check_input *in = c->in;
	struct append_line *lines = NULL;
	size_t nlines = 0, nappend = c->napps;
	int64_t prev = 0;
	int have_final = in->final_state != NULL;

	if (have_final) {
		if (append_journal_scan(in->final_state, in->final_len, &lines, &nlines) != 0)
			return -1;
		for (size_t i = 0; i < nlines; i++) {
			struct ck_app a = { lines[i].seq, lines[i].worker, lines[i].op, 0, lines[i].line,
					    1, 0 };
			if (lines[i].seq < 1)
				continue; /* torn or foreign: the replay skips it too */
			if (ck_app_push(c, &a) < 0) {
				free(lines);
				return -1;
			}
		}
		free(lines);
	} else if (nappend) {
		ck_violation(c, INV_JOURNAL_SEQ, c->apps[0].worker, (uint32_t)c->apps[0].op,
			     c->apps[0].rseq, -1, 0, 0,
			     "the final journal is missing after %zu appends", nappend);
		c->out->inv[INV_JOURNAL_SEQ].violations += nappend - 1;
	}
	if (c->napps > 1)
		qsort(c->apps, c->napps, sizeof *c->apps, ck_app_cmp);

	for (size_t i = 0; i < c->napps;) {
		struct ck_app *g = &c->apps[i];
		size_t n = 1, na = 0, nf;

		while (i + n < c->napps && c->apps[i + n].seq == g->seq)
			n++;
		i += n;
		if (g->seq < 1)
			continue; /* reported when appended */
		for (; na < n && !g[na].final; na++)
			;
		nf = n - na;
		if (g->seq > prev + 1) {
			int64_t missing = g->seq - prev - 1;

			char from[48];

			if (prev)
				snprintf(from, sizeof from, "goes from %lld to", (long long)prev);
			else
				snprintf(from, sizeof from, "starts at");
			if (missing == 1)
				ck_violation(c, INV_JOURNAL_SEQ, -1, 0, 0, -1, 0, 0,
					     "no append and no line of the final journal has seq %lld "
					     "(the sequence %s %lld)",
					     (long long)(prev + 1), from, (long long)g->seq);
			else
				ck_violation(c, INV_JOURNAL_SEQ, -1, 0, 0, -1, 0, 0,
					     "no append and no line of the final journal has seqs "
					     "%lld..%lld (the sequence %s %lld)",
					     (long long)(prev + 1), (long long)(g->seq - 1), from,
					     (long long)g->seq);
			c->out->inv[INV_JOURNAL_SEQ].violations += (uint64_t)missing - 1;
		}
		prev = g->seq;
		if ((na > nf ? na : nf) > 1)
			ck_seq_dups(c, g, na, nf);
		if (!have_final)
			continue;
		/* each append must have its own line */
		for (size_t a = 0; a < na; a++) {
			size_t k;

			for (k = na; k < n; k++)
				if (!g[k].matched && g[k].worker == g[a].worker && g[k].op == g[a].op)
					break;
			if (k < n) {
				g[k].matched = 1;
				continue;
			}
			ck_violation(c, INV_JOURNAL_SEQ, g[a].worker, (uint32_t)g[a].op, g[a].rseq, -1,
				     0, 0,
				     "w%d's append of seq %lld (op %lld, at seq %llu) is not in the final "
				     "journal",
				     (int)g[a].worker, (long long)g[a].seq, (long long)g[a].op,
				     (unsigned long long)g[a].rseq);
		}
	}
	if (have_final && (ck_half_written(c) < 0 || ck_final_snapshot(c) < 0))
		return -1;
	return 0;
}

/*
 * journal-seq's second clause: a trusted snapshot matches the journal.
 *
 * (1) K-JL-2: a getSnapshot that wrote to disk its replay of a journal whose
 * last line was half written.  Its replay ended inside a line (the bytes it
 * read stop before that line's "\n", and the part it saw does not parse),
 * and the same line is whole in the final journal: the replay left out an
 * event and counted a parse failure that no line of the journal has, and put
 * that on disk for everyone.
 *
 * (2) The final snapshot file against a replay of the final journal, when
 * the snapshot claims to describe it:
 *   1.0.0's format (__journalBytes present): a reader trusts it iff
 *     __journalBytes is the journal's exact size, __nextSeq is an integer and
 *     the id is the session's (PROTOCOLS.md §8.3 RS2);
 *   0.8.0's format (no meta): 0.8.0 writes it after every append and every
 *     read and never checks it, so it stands for the journal as it is.
 * Trusted, its events, last seq, parse failures (and 1.0.0's next seq) must
 * be the replay's.  An unparseable or missing snapshot claims nothing.
 */

/* The line of the final journal that holds byte i: [*s, *e), *e at its "\n" or the end. */
static void ck_line_at(const char *buf, size_t len, size_t i, size_t *s, size_t *e)
{
	size_t a = i, b = i;

	while (a > 0 && buf[a - 1] != '\n')
		a--;
	while (b < len && buf[b] != '\n')
		b++;
	*s = a;
	*e = b;
}

/* Does buf[s, e) parse as one journal line? */
static int ck_line_parses(const char *buf, size_t s, size_t e, struct append_line *out)
{
	struct append_line *l;
	size_t n;
	int ok = 0;

	if (append_journal_scan(buf + s, e - s, &l, &n) != 0)
		return -1;
	if (n == 1) {
		*out = l[0];
		ok = l[0].parsed;
	}
	free(l);
	return ok;
}

static int ck_half_written(struct ck *c)
{
	const struct check_input *in = c->in;

	for (size_t i = 0; i < c->nsnapreads; i++) {
		const struct ck_snapread *r = &c->snapreads[i];
		struct append_line whole, part;
		size_t s, e;
		int ok;

		if (r->bytes == 0 || r->bytes >= in->final_len || in->final_state[r->bytes - 1] == '\n')
			continue; /* it read whole lines (or more than the journal now holds) */
		ck_line_at(in->final_state, in->final_len, r->bytes - 1, &s, &e);
		if (r->bytes >= e)
			continue; /* the cut fell on the "\n": the text it read was whole */
		if ((ok = ck_line_parses(in->final_state, s, e, &whole)) < 0)
			return -1;
		if (!ok)
			continue; /* not whole in the final journal either: a tear, not a half write */
		if ((ok = ck_line_parses(in->final_state, s, r->bytes, &part)) < 0)
			return -1;
		if (ok)
			continue;
		whole.line = 1;
		for (size_t k = 0; k < s; k++)
			whole.line += in->final_state[k] == '\n';
		ck_violation(c, INV_JOURNAL_SEQ, r->worker, r->op, r->rseq, whole.worker,
			     (uint32_t)(whole.op < 0 ? 0 : whole.op), 0,
			     "w%d's getSnapshot (op %u, seq %llu) wrote the snapshot from a half-written "
			     "journal: the %llu bytes it replayed end inside line %zu (seq %lld, w%d op %lld), "
			     "whole in the final journal; that event is missing and a parse failure counted",
			     (int)r->worker, r->op, (unsigned long long)r->rseq,
			     (unsigned long long)r->bytes, whole.line, (long long)whole.seq,
			     (int)whole.worker, (long long)whole.op);
	}
	return 0;
}

static int ck_final_snapshot(struct ck *c)
{
	const struct check_input *in = c->in;
	struct append_snapshot sn;
	struct append_replay rp;
	char who[96], what[160] = "";
	int next_bad;

	if (!in->final_snapshot || append_snapshot_parse(in->final_snapshot, in->final_snapshot_len, &sn) != 0)
		return 0;
	if (sn.has_meta && (sn.journal_bytes != (int64_t)in->final_len || sn.next_seq < 0 || !sn.id_ok))
		return 0; /* 1.0.0 readers do not trust it: they replay */
	if (append_replay(in->final_state, in->final_len, &rp) != 0)
		return -1;
	next_bad = sn.has_meta && sn.next_seq != rp.next_seq;
	if (sn.events == rp.events && sn.last_seq == rp.last_seq && sn.diagnostics == rp.diagnostics &&
	    !next_bad)
		return 0;

	if (sn.worker >= 0)
		snprintf(who, sizeof who, "written by w%d's %s, op %lld", (int)sn.worker,
			 sn.call[0] ? sn.call : "call", (long long)sn.op);
	else
		snprintf(who, sizeof who, "writer unknown");
	/* what is wrong, in the journal's terms */
	int32_t mw = -1;
	int64_t mop = -1;
	if (sn.last_seq < rp.last_seq || sn.events < rp.events) {
		struct append_line *l;
		size_t n;
		if (append_journal_scan(in->final_state, in->final_len, &l, &n) != 0)
			return -1;
		for (size_t i = 0; i < n; i++)
			if (l[i].parsed && l[i].seq > sn.last_seq) {
				mw = l[i].worker;
				mop = l[i].op;
				snprintf(what, sizeof what, "it misses %lld event%s, from seq %lld (w%d op %lld, line %zu)",
					 (long long)(rp.events - sn.events), rp.events - sn.events == 1 ? "" : "s",
					 (long long)l[i].seq, (int)l[i].worker, (long long)l[i].op, l[i].line);
				break;
			}
		free(l);
		if (!what[0])
			snprintf(what, sizeof what, "it misses %lld event%s",
				 (long long)(rp.events - sn.events), rp.events - sn.events == 1 ? "" : "s");
	} else if (sn.events > rp.events || sn.last_seq > rp.last_seq) {
		snprintf(what, sizeof what, "it counts %lld event%s no parsed line of the journal holds",
			 (long long)(sn.events - rp.events), sn.events - rp.events == 1 ? "" : "s");
	} else if (sn.diagnostics != rp.diagnostics) {
		snprintf(what, sizeof what, "its parse failures are not the journal's");
	} else {
		snprintf(what, sizeof what, "a reader that hydrates it takes next seq %lld, a replay %lld",
			 (long long)sn.next_seq, (long long)rp.next_seq);
	}
	char claim[80];
	if (sn.has_meta)
		snprintf(claim, sizeof claim, "claims the journal's %zu bytes (__journalBytes)", in->final_len);
	else
		snprintf(claim, sizeof claim, "stands for the whole journal (0.8.0's: no __journalBytes)");
	ck_violation(c, INV_JOURNAL_SEQ, sn.worker, (uint32_t)(sn.op < 0 ? 0 : sn.op), 0, mw,
		     (uint32_t)(mop < 0 ? 0 : mop), 0,
		     "the final snapshot (%s) %s but says %lld events, last seq %lld, %lld parse "
		     "failure%s; a replay of the journal: %lld, %lld, %lld: %s",
		     who, claim, (long long)sn.events, (long long)sn.last_seq, (long long)sn.diagnostics,
		     sn.diagnostics == 1 ? "" : "s", (long long)rp.events, (long long)rp.last_seq,
		     (long long)rp.diagnostics, what);
	return 0;
}

/* ---- stale-read (generation) ---- */

/* A write of version r->a finished. */
static void ck_stale_commit(struct ck *c, unsigned w, const struct jrec *r)
{
	if (!c->in->check_stale_read || r->a <= c->max_ver)
		return;
	c->max_ver = r->a;
	c->max_w = (int32_t)w;
	c->max_op = r->op;
	c->max_seq = r->seq;
}

static void ck_read_begin(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	s->rb_pending = 1;
	s->rb_seq = r->seq;
	s->rb_floor = c->max_ver;
	s->rb_floor_w = c->max_w;
	s->rb_floor_op = c->max_op;
	s->rb_floor_seq = c->max_seq;
}

/* A read returned version r->a (b = 1: from a kept answer). */
static void ck_read_end(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	if (!s->rb_pending)
		return;
	s->rb_pending = 0;
	if (r->err != 0)
		return;
	c->reads++;
	if (!c->in->check_stale_read || r->a >= s->rb_floor)
		return;
	ck_violation(c, INV_STALE_READ, (int32_t)w, r->op, r->seq, s->rb_floor_w, s->rb_floor_op,
		     s->rb_floor_seq,
		     "w%u's read (op %u, begun at seq %llu) returned version %lld %s, but w%d had "
		     "finished writing version %lld (op %u, seq %llu) before it began",
		     w, r->op, (unsigned long long)s->rb_seq, (long long)r->a,
		     r->b ? "from its cache" : "from disk", (int)s->rb_floor_w,
		     (long long)s->rb_floor, s->rb_floor_op, (unsigned long long)s->rb_floor_seq);
}

/* One worker record; 0, or -1 on allocation failure. */
static int ck_record(struct ck *c, unsigned w, const struct jrec *r)
{
	struct check_result *o = c->out;
	struct ck_worker *s = &c->w[w];

	if (!c->seen_worker_rec || r->ns < c->first_ns)
		c->first_ns = r->ns;
	if (!c->seen_worker_rec || r->ns > c->last_ns)
		c->last_ns = r->ns;
	if (!c->seen_worker_rec && c->live == 0)
		ck_stretch_begin(c, r, -1);
	c->seen_worker_rec = 1;

	switch (r->type) {
	case EV_ATTEMPT:
		o->attempts++;
		s->attempting = 1;
		s->att_reported = 0;
		s->att_ns = r->ns;
		s->att_seq = r->seq;
		s->att_op = r->op;
		s->att_stall_ms = 0;
		s->att_epoch = c->acq_epoch;
		s->att_held = c->live > 0;
		break;
	case EV_ACQUIRED:
		o->acquired++;
		c->acq_epoch++;
		if (ck_acquired(c, w, r) < 0)
			return -1;
		break;
	case EV_BUSY:
		o->busy++;
		ck_dead_wait(c, w, r);
		ck_attempt_end(c, w, r, "ended busy");
		if (c->stretch_open) {
			c->stretch_busy++;
			c->last_busy_ns = r->ns;
			c->last_busy_seq = r->seq;
			c->last_busy_op = r->op;
			c->last_busy_w = (int32_t)w;
		}
		break;
	case EV_ACQUIRE_ERROR:
		o->errors++;
		ck_attempt_end(c, w, r, "ended in an error");
		break;
	case EV_READ:
		ck_read_end(c, w, r);
		if (c->in->check_seq && r->err == 0 && r->c > 0 && ck_snapread(c, w, r) < 0)
			return -1;
		/* only a read that succeeded says what the next commit must write */
		s->has_read = r->err == 0;
		s->read_rev = r->a;
		if (c->in->check_state && r->err == EBADMSG)
			ck_violation(c, INV_STATE_INTACT, (int32_t)w, r->op, r->seq, -1, 0, 0,
				     "w%u read a state file that does not parse (op %u, seq %llu)",
				     w, r->op, (unsigned long long)r->seq);
		break;
	case EV_COMMIT_BEGIN:
		ck_commit_begin(c, w, r);
		break;
	case EV_COMMIT:
		if (ck_commit(c, w, r) < 0)
			return -1;
		ck_stale_commit(c, w, r);
		break;
	case EV_APPEND:
		if (ck_append(c, w, r) < 0)
			return -1;
		break;
	case EV_READ_BEGIN:
		ck_read_begin(c, w, r);
		break;
	case EV_LOST:
		o->lost++;
		break;
	case EV_WRITE_ERROR:
		o->errors++;
		o->write_errors++;
		break;
	case EV_RELEASE_BEGIN:
		if (s->holding && ck_push(&c->hold, ck_since(r->ns, s->hold_acq_ns)) < 0)
			return -1;
		ck_hold_end(c, w, r);
		break;
	case EV_RELEASED:
		c->released++;
		break;
	case EV_RELEASE_ERROR:
		o->errors++;
		break;
	case EV_FAULT:
		if (r->a == FK_CRASH) {
			o->crashes++;
			s->crash_announced = 1;
			ck_worker_gone(c, w, r);
		} else if (r->a == FK_STALL || r->a == FK_STOP) {
			o->stalls++;
			if (s->attempting)
				s->att_stall_ms += r->c;
		}
		break;
	case EV_WORKER_START:
		ck_worker_gone(c, w, r);
		s->has_read = 0;
		s->crash_announced = 0;
		break;
	case EV_WORKER_EXIT:
		ck_worker_gone(c, w, r);
		break;
	case EV_OBJ_CREATE:
		if (ck_obj_create(c, w, r) < 0)
			return -1;
		break;
	case EV_OBJ_REMOVE:
		ck_obj_remove(c, w, r);
		ck_obj_gone(c, r);
		break;
	default:
		break;
	}
	return 0;
}

static int ck_commit_cmp(const void *a, const void *b)
{
	const struct ck_commit *x = *(const struct ck_commit *const *)a;
	const struct ck_commit *y = *(const struct ck_commit *const *)b;

	if (x->rev != y->rev)
		return x->rev < y->rev ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* serial-updates: each offending commit once, whether its read or its
 * revision (shared with an earlier commit) or both are wrong. */
static int ck_serial(struct ck *c)
{
	struct ck_commit **by = NULL;
	size_t n = c->ncommits;

	if (n) {
		by = malloc(n * sizeof *by);
		if (!by)
			return -1;
	}
	for (size_t i = 0; i < n; i++)
		by[i] = &c->commits[i];
	if (n > 1)
		qsort(by, n, sizeof *by, ck_commit_cmp);
	for (size_t i = 1; i < n; i++) {
		if (by[i]->rev != by[i - 1]->rev)
			continue;
		by[i]->dup = 1;
		/* point at the first commit of the revision */
		by[i]->first = by[i - 1]->dup ? by[i - 1]->first : (size_t)(by[i - 1] - c->commits);
	}
	free(by);

	for (size_t i = 0; i < n; i++) {
		const struct ck_commit *k = &c->commits[i];

		if (k->dup) {
			const struct ck_commit *f = &c->commits[k->first];

			ck_violation(c, INV_SERIAL_UPDATES, (int32_t)k->worker, k->op, k->seq,
				     (int32_t)f->worker, f->op, f->seq,
				     "w%u committed revision %lld (op %u, seq %llu), which w%u had "
				     "already committed (op %u, seq %llu)%s",
				     k->worker, (long long)k->rev, k->op, (unsigned long long)k->seq,
				     f->worker, f->op, (unsigned long long)f->seq,
				     k->bad_read ? "; it had not read revision - 1 either" : "");
		} else if (k->bad_read) {
			ck_violation(c, INV_SERIAL_UPDATES, (int32_t)k->worker, k->op, k->seq, -1, 0,
				     0,
				     "w%u committed revision %lld (op %u, seq %llu) after reading "
				     "revision %lld: expected %lld",
				     k->worker, (long long)k->rev, k->op, (unsigned long long)k->seq,
				     (long long)k->read_rev,
				     (long long)((k->read_rev < 0 ? 0 : k->read_rev) + 1));
		}
	}
	return 0;
}

/* no-lost-writes and the final state's part of state-intact. */
static int ck_final_state(struct ck *c)
{
	const struct check_input *in = c->in;
	struct update_state st;
	int parsed = 0;
	const char *why = NULL;

	memset(&st, 0, sizeof st);
	st.nworkers = in->workers;
	if (!in->final_state) {
		why = "missing";
		/* a missing state file is only wrong when something was committed */
		if (c->out->committed)
			ck_violation(c, INV_STATE_INTACT, -1, 0, 0, -1, 0, 0,
				     "the final state file is missing after %llu commits",
				     (unsigned long long)c->out->committed);
	} else if (update_state_parse(in->final_state, in->final_len, &st) < 0) {
		if (errno != EBADMSG)
			return -1;
		why = "unparseable";
		ck_violation(c, INV_STATE_INTACT, -1, 0, 0, -1, 0, 0,
			     "the final state file does not parse (%zu bytes)", in->final_len);
	} else {
		parsed = 1;
		c->out->final_revision = (uint64_t)st.revision;
	}

	for (unsigned w = 0; w < in->workers; w++) {
		uint64_t committed = c->w[w].commits, f;

		if (!committed)
			continue;
		if (!parsed) {
			struct check_inv *v = &c->out->inv[INV_NO_LOST_WRITES];

			/* one example per worker, but every commit is lost */
			ck_violation(c, INV_NO_LOST_WRITES, (int32_t)w, 0, 0, -1, 0, 0,
				     "w%u committed %llu update%s, the final state is %s", w,
				     (unsigned long long)committed, committed == 1 ? "" : "s", why);
			v->violations += committed - 1;
			continue;
		}
		f = st.counts[w] > 0 ? (uint64_t)st.counts[w] : 0;
		if (f >= committed)
			continue;
		ck_violation(c, INV_NO_LOST_WRITES, (int32_t)w, 0, 0, -1, 0, 0,
			     "w%u committed %llu update%s, the final state holds %llu", w,
			     (unsigned long long)committed, committed == 1 ? "" : "s",
			     (unsigned long long)f);
		c->out->inv[INV_NO_LOST_WRITES].violations += committed - f - 1;
	}
	update_state_free(&st);
	return 0;
}

static void ck_free(struct ck *c)
{
	free(c->w);
	free(c->holders);
	free(c->wait.v);
	free(c->hold.v);
	free(c->commits);
	free(c->apps);
	free(c->snapreads);
	free(c->objs);
	free(c->viol_by);
}

/* Every figure again, by revision, for a mixed-version fleet. */
static void ck_by_revision(struct ck *c)
{
	const struct check_input *in = c->in;
	struct check_result *out = c->out;
	if (!in->proto_of)
		return;
	int *slot = calloc(in->workers ? in->workers : 1, sizeof *slot);
	if (!slot)
		return;
	for (unsigned w = 0; w < in->workers; w++) {
		unsigned k;
		for (k = 0; k < out->nrev; k++)
			if (!strcmp(out->rev[k].name, in->proto_of[w]))
				break;
		if (k == out->nrev) {
			if (out->nrev == CHECK_MAX_REVS) {
				slot[w] = -1;
				continue;
			}
			out->rev[out->nrev++].name = in->proto_of[w];
		}
		slot[w] = (int)k;
		out->rev[k].workers++;
		out->rev[k].violations += c->viol_by ? c->viol_by[w] : 0;
	}
	uint64_t released[CHECK_MAX_REVS] = { 0 };
	for (size_t i = 0; i < in->n; i++) {
		const struct jrec *r = &in->rec[i];
		if (r->worker >= in->workers || slot[r->worker] < 0)
			continue;
		struct check_rev *v = &out->rev[slot[r->worker]];
		switch (r->type) {
		case EV_ATTEMPT: v->attempts++; break;
		case EV_ACQUIRED: v->acquired++; break;
		case EV_COMMIT: v->committed++; break;
		case EV_BUSY: v->busy++; break;
		case EV_ACQUIRE_ERROR: case EV_WRITE_ERROR: case EV_RELEASE_ERROR: v->errors++; break;
		case EV_LOST: v->lost++; break;
		case EV_RELEASED: released[slot[r->worker]]++; break;
		case EV_FAULT:
			if (r->a == FK_CRASH)
				v->crashes++;
			else if (r->a == FK_STALL || r->a == FK_STOP)
				v->stalls++;
			break;
		default: break;
		}
	}
	for (unsigned k = 0; k < out->nrev; k++) {
		uint64_t ops = in->check_state ? out->rev[k].committed : released[k];
		out->rev[k].ops_per_s = out->elapsed_s > 0 ? (double)ops / out->elapsed_s : 0;
	}
	free(slot);
}

/* A run in which attempts were made, some raised an error, and not one ever
 * took the lock proves nothing about safety and everything about liveness
 * (a missing folder, a refused mkdir): never let it pass as clean. */
static void ck_never_acquired(struct ck *c)
{
	const struct jrec *first = NULL;
	if (c->out->acquired || !c->out->attempts)
		return;
	for (size_t i = 0; i < c->in->n && !first; i++)
		if (c->in->rec[i].type == EV_ACQUIRE_ERROR && c->in->rec[i].worker != JOURNAL_DRIVER)
			first = &c->in->rec[i];
	if (!first)
		return;
	ck_violation(c, INV_LIVENESS, first->worker, first->op, first->seq, -1, 0, 0,
		     "no attempt ever took the lock: %llu attempts, %llu busy, %llu errors "
		     "(first: w%u op %u raised %s)",
		     (unsigned long long)c->out->attempts, (unsigned long long)c->out->busy,
		     (unsigned long long)c->out->errors, (unsigned)first->worker, first->op,
		     strerrorname_np(first->err) ? strerrorname_np(first->err) : "an error");
}

int check_run(const struct check_input *in, struct check_result *out)
{
	struct ck c;
	unsigned nw = in->workers;
	int64_t max_stale = -1, max_budget = 0;
	int saved;

	memset(out, 0, sizeof *out);
	memset(&c, 0, sizeof c);
	for (int i = 0; i < INV__COUNT; i++) {
		out->inv[i].name = check_inv_name((enum inv_id)i);
		out->inv[i].applicable = 1;
	}
	if (!in->check_state) {
		out->inv[INV_NO_LOST_WRITES].applicable = 0;
		out->inv[INV_SERIAL_UPDATES].applicable = 0;
		out->inv[INV_STATE_INTACT].applicable = 0;
	}
	out->inv[INV_JOURNAL_SEQ].applicable = in->check_seq != 0;
	out->inv[INV_STALE_READ].applicable = in->check_stale_read != 0;
	out->torn_bytes = in->torn_bytes;

	c.in = in;
	c.out = out;
	c.w = calloc(nw ? nw : 1, sizeof *c.w);
	c.viol_by = calloc(nw ? nw : 1, sizeof *c.viol_by);
	c.holders = calloc(nw ? nw : 1, sizeof *c.holders);
	if (!c.w || !c.holders)
		goto out_nomem;
	c.last_busy_w = -1;
	c.stretch_after = -1;
	c.max_ver = -1;
	c.max_w = -1;

	for (unsigned w = 0; w < nw; w++) {
		int64_t st = ck_stale(&c, w), b = ck_budget(&c, w);

		if (st != LS_NEVER && st > max_stale)
			max_stale = st;
		if (b != LS_NEVER && b > max_budget)
			max_budget = b;
	}
	/* liveness (3) needs some stale age to bound how long a leftover lock may stay */
	c.stuck_on = max_stale >= 0 && max_stale < INT64_MAX / (4 * NS_PER_MS) &&
		     max_budget < INT64_MAX / (4 * NS_PER_MS);
	c.stuck_bound_ms = c.stuck_on ? max_stale + max_budget + LIVENESS_GRACE_MS : 0;
	c.stretch_open = 1; /* nobody holds at the start; started at the first record */

	for (size_t i = 0; i < in->n; i++) {
		const struct jrec *r = &in->rec[i];

		if (r->worker == JOURNAL_DRIVER) {
			ck_driver(&c, r);
			continue;
		}
		if (r->worker >= nw)
			continue; /* not this run's worker */
		if (ck_record(&c, r->worker, r) < 0)
			goto out_nomem;
	}

	/* attempts still open at the end are judged against the last record */
	if (c.seen_worker_rec) {
		struct jrec end = { .ns = c.last_ns, .seq = in->n ? in->rec[in->n - 1].seq : 0 };

		for (unsigned w = 0; w < nw; w++)
			ck_attempt_end(&c, w, &end, "was still waiting when the journal ended");
	}
	ck_stretch_judge(&c);
	ck_never_acquired(&c);

	if (in->check_state) {
		if (ck_serial(&c) < 0 || ck_final_state(&c) < 0)
			goto out_nomem;
	}
	if (in->check_seq && ck_journal_seq(&c) < 0)
		goto out_nomem;

	out->ops = in->check_state ? out->committed : c.released;
	if (in->check_seq)
		out->ops = c.appended;
	else if (in->check_stale_read)
		out->ops = out->committed + c.reads;
	out->elapsed_s = c.seen_worker_rec ? (double)(c.last_ns - c.first_ns) / 1e9 : 0;
	out->ops_per_s = out->elapsed_s > 0 ? (double)out->ops / out->elapsed_s : 0;
	ck_dist(&c.wait, &out->wait);
	ck_dist(&c.hold, &out->hold);
	ck_by_revision(&c);

	out->pass = 1;
	for (int i = 0; i < INV__COUNT; i++)
		if (out->inv[i].applicable && out->inv[i].violations)
			out->pass = 0;
	ck_free(&c);
	return 0;

out_nomem:
	saved = errno ? errno : ENOMEM;
	ck_free(&c);
	out->pass = 0;
	errno = saved;
	return -1;
}
