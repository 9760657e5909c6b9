/*
 * ckbase.c - what every invariant family of the checker reads and does: a
 * worker's stale age, budget and protocol flags, whether the lock is
 * occupied, the violation record, saturating sums and the samples.  The
 * families (holds.c, liveness.c, ...) and the walk (checker.c) call these;
 * this file calls none of them.
 */
#include "checker.h"
#include "ck.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../faults/fault.h"
#include "../protocols/lock.h"

int64_t ck_stale(const struct ck *c, unsigned w)
{
	return c->in->stale_ms ? c->in->stale_ms[w] : LS_NEVER;
}

int64_t ck_budget(const struct ck *c, unsigned w)
{
	return c->in->budget_ms ? c->in->budget_ms[w] : LS_NEVER;
}

/* W's protocol's declared flags (LOCK_DEAD_AT_ONCE, ...); 0 when not known. */
unsigned ck_flags(const struct ck *c, unsigned w)
{
	const struct lock_ops *ops = c->in->proto_of && c->in->proto_of[w] ?
				     lock_find(c->in->proto_of[w]) : NULL;
	return ops ? ops->flags : 0;
}

/* Explore: how far other workers' stalls may have moved every clock. */
int64_t ck_jump(const struct ck *c)
{
	return c->in->clock_jump_ms > 0 ? c->in->clock_jump_ms : 0;
}

/* Workers that hold the lock (not reclaimed) or are inside a release whose
 * lock object is still there: nobody else can take it meanwhile. */
size_t ck_occupied(const struct ck *c)
{
	return c->live + c->releasing;
}

/* The time from which waiter W's protocol ages a lock object that was last
 * fresh at SINCE_NS (made, or left by its maker): no earlier than the last
 * time anyone held the lock, and for a lock aged by its directory's mtime
 * (LOCK_AGE_BY_DIR) no earlier than the last lock object anyone made or
 * removed inside it. */
uint64_t ck_lock_since(const struct ck *c, unsigned w, uint64_t since_ns)
{
	uint64_t t = since_ns > c->held_ns ? since_ns : c->held_ns;
	if ((ck_flags(c, w) & LOCK_AGE_BY_DIR) && c->obj_change_ns > t)
		t = c->obj_change_ns;
	return t;
}

/* How long W's attempt, ending at R, waited on the lock itself (its own
 * announced stalls and other workers' clock jumps taken off), or 0 when that
 * was less than its whole budget: a try that gave up at once, or stalls that
 * ate the budget, say nothing about the lock.  The budget hook reports exact
 * microseconds rounded up to whole ms, so a give-up up to 1 ms short of the
 * budget is its whole budget.  ck_waited_budget_from counts from FROM_NS
 * instead of the attempt's start. */
uint64_t ck_waited_budget(const struct ck *c, unsigned w, const struct jrec *r)
{
	return ck_waited_budget_from(c, w, r, c->w[w].att_ns);
}

uint64_t ck_waited_budget_from(const struct ck *c, unsigned w, const struct jrec *r, uint64_t from_ns)
{
	const struct ck_worker *s = &c->w[w];
	int64_t budget = ck_budget(c, w);
	if (budget == LS_NEVER || budget < 1 || budget > INT64_MAX / (4 * NS_PER_MS))
		return 0;
	uint64_t waited = ck_since(r->ns, from_ns);
	uint64_t not_own = (uint64_t)(s->att_stall_ms + s->att_jump_ms) * NS_PER_MS;
	waited = waited > not_own ? waited - not_own : 0;
	return waited + NS_PER_MS < (uint64_t)budget * NS_PER_MS ? 0 : (waited ? waited : 1);
}

/* Did stalls eat the wait budget of W's attempt ending at R?  Its own stalls
 * (the explorer's stall or pause of W, a run's stall fault) and, in virtual
 * time, other workers' stalls that moved its clock: with them taken off, it
 * waited less than its budget, so a protocol that waits by the wall clock
 * (mkdir-legacy's acquireLock: 5 s) gave up on time it never spent waiting on
 * anybody.  0 for a budget of 0 (a try never waits: no stall can eat it) and
 * when nothing stalled. */
int ck_stalls_ate_budget(const struct ck *c, unsigned w, const struct jrec *r)
{
	const struct ck_worker *s = &c->w[w];
	int64_t budget = ck_budget(c, w);
	if (s->att_stall_ms + s->att_jump_ms <= 0 || budget == LS_NEVER || budget < 1 ||
	    budget > INT64_MAX / (4 * NS_PER_MS))
		return 0;
	return ck_waited_budget(c, w, r) == 0;
}

/* Is a live worker other than W inside its own attempt with a lock object it
 * made in it (mkdir-owner's reclaimer with its entry in L, a taker between
 * its create and its record)?  Then the lock is being taken: a waiter that
 * gives up meanwhile met contention, not a lock left to nobody (the stall of
 * a live taker is not the protocol's doing). */
int ck_taker_inside(const struct ck *c, unsigned w)
{
	for (size_t i = 0; i < c->nobjs; i++) {
		const struct ck_obj *o = &c->objs[i];
		if (o->orphan || o->creator < 0 || o->creator == (int32_t)w ||
		    (unsigned)o->creator >= c->in->workers)
			continue;
		const struct ck_worker *cw = &c->w[o->creator];
		if (cw->attempting && o->seq >= cw->att_seq)
			return 1;
	}
	return 0;
}

/* Is AGE_NS past a stale age of STALE_MS?  LS_NEVER (or absurd) never is. */
/* The kernel stamps file times from its coarse clock, up to a tick (4 ms at
 * HZ=250) behind the real one: a protocol that reads mtime sees a lock up to
 * a tick older than it is, and may reclaim it that much before the stale age
 * by our clock.  Such a reclaim is still legal. */
#define STALE_SLACK_NS (10 * NS_PER_MS)

int ck_past_stale(int64_t stale_ms, uint64_t age_ns)
{
	if (stale_ms == LS_NEVER || stale_ms < 0 || stale_ms > INT64_MAX / NS_PER_MS)
		return 0;
	return age_ns + STALE_SLACK_NS > (uint64_t)(stale_ms * NS_PER_MS);
}

void ck_stale_text(int64_t stale_ms, char *buf, size_t len)
{
	if (stale_ms == LS_NEVER)
		snprintf(buf, len, "no stale age");
	else
		snprintf(buf, len, "stale age %lld ms", (long long)stale_ms);
}

/* Count one violation of INV; keep its example while there is room. */
__attribute__((format(printf, 9, 10)))
void ck_violation(struct ck *c, enum inv_id inv, int32_t w0, uint32_t op0, uint64_t seq0,
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

/* A sum of durations read from journals: negative parts count as 0 and the
 * sum stops at CK_MAX_MS, so ms * NS_PER_MS never overflows (a crafted or
 * damaged journal must not make the checker's arithmetic undefined). */
int64_t ck_add_ms(int64_t sum, int64_t ms)
{
	if (ms <= 0)
		return sum;
	return ms >= CK_MAX_MS - sum ? CK_MAX_MS : sum + ms;
}

int ck_push(struct ck_samples *s, uint64_t v)
{
	return hist_push(&s->h, v);
}
