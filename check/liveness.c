/*
 * liveness.c - the liveness invariant: every attempt ends within its bound
 * (2), no stretch without a holder outlasts the stale age while attempts end
 * busy (3), nobody waits on a lock object its maker abandoned (5), and a run
 * that never took the lock does not pass; plus the lock objects on disk and
 * their orphans that (5) judges against.
 */
#include "checker.h"
#include "ck.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../protocols/lock.h"

/* liveness (3): judge the stretch that is closing (or open at the end). */
void ck_stretch_judge(struct ck *c)
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

void ck_stretch_begin(struct ck *c, const struct jrec *r, int32_t after)
{
	c->stretch_open = 1;
	c->stretch_started = 1;
	c->stretch_ns = r->ns;
	c->stretch_seq = r->seq;
	c->stretch_after = after;
	c->stretch_busy = 0;
}

/* liveness (2): an attempt that ends at R.  HOW finishes "the attempt took
 * N ms and ...": "acquired", "ended busy", "ended in an error". */
void ck_attempt_end(struct ck *c, unsigned w, const struct jrec *r, const char *how)
{
	struct ck_worker *s = &c->w[w];
	int64_t budget = ck_budget(c, w), bound;
	double took_ms;

	if (!s->attempting)
		return;
	s->attempting = 0;
	if (s->att_reported || budget == LS_NEVER || budget < 0 || budget > INT64_MAX / 4)
		return;
	bound = budget + (budget > LIVENESS_GRACE_MS ? budget : LIVENESS_GRACE_MS) + ck_jump(c);
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

/* A worker died (or a new incarnation replaced it): what it created and did
 * not remove is an orphan now. */
void ck_orphan(struct ck *c, unsigned w, const struct jrec *r)
{
	for (size_t i = 0; i < c->nobjs; i++) {
		struct ck_obj *o = &c->objs[i];
		if (o->creator != (int32_t)w || o->orphan)
			continue;
		o->orphan = 1;
		if (!o->left_ns)
			o->left_ns = r->ns;
		if (c->orphans++ == 0)
			c->orphan_since_seq = r->seq;
	}
}

int ck_obj_create(struct ck *c, unsigned w, const struct jrec *r)
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
	c->obj_epoch++;
	c->objs[c->nobjs++] = (struct ck_obj){ r->a, (int32_t)w, 0, r->seq, r->ns, 0, 0 };
	return 0;
}

void ck_obj_gone(struct ck *c, const struct jrec *r)
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
	if (cw->releasing)
		return 0; /* paused inside its release: it still holds */
	if (!cw->attempting && !cw->holding)
		return 1;
	return cw->attempting && !cw->holding && o->seq < cw->att_seq;
}

/* The newest object CREATOR still has on disk: a lock's age for its stale
 * judgment runs from its newest part (mkdir-owner's entry refreshes L). */
static uint64_t ck_newest_ns(const struct ck *c, int32_t creator)
{
	uint64_t ns = 0;
	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].creator == creator && c->objs[i].ns > ns)
			ns = c->objs[i].ns;
	return ns;
}

/* May waiter W's protocol still leave dead holder O's lock alone when W's
 * attempt began at ATT_NS?  A protocol that claims to see a dead holder
 * (LOCK_DEAD_AT_ONCE: it asks whether the recorded pid lives) may not; any
 * other promises only "reclaimed once it is stale_ms old", so until the lock
 * was that old (plus CK_JITTER_MS) when the attempt began, giving up on it
 * is what the protocol documents.  RULE gets the rule that applies. */
/* Was a lock last fresh at SINCE_NS (ck_lock_since) no older than STALE_MS
 * plus CK_JITTER_MS when the attempt began at ATT_NS?  *AGE gets its age. */
static int ck_young(const struct ck *c, unsigned w, int64_t stale_ms, uint64_t since_ns, uint64_t att_ns,
		    uint64_t *age)
{
	*age = ck_since(att_ns, ck_lock_since(c, w, since_ns));
	return *age <= (uint64_t)(stale_ms + CK_JITTER_MS) * NS_PER_MS;
}

static int ck_dead_young(const struct ck *c, unsigned w, const struct ck_obj *o, uint64_t att_ns,
			 char *rule, size_t len)
{
	if (ck_flags(c, w) & LOCK_DEAD_AT_ONCE) {
		snprintf(rule, len, "rule dead-holder: the protocol claims a dead holder's lock is "
			 "reclaimed at once");
		return 0;
	}
	int64_t stale = ck_stale(c, w);
	if (stale == LS_NEVER || stale < 0 || stale > INT64_MAX / (4 * NS_PER_MS))
		return 1; /* it never promised to reclaim it */
	uint64_t age;
	int young = ck_young(c, w, stale, ck_newest_ns(c, o->creator), att_ns, &age);
	snprintf(rule, len, "rule dead-holder-stale: the lock was %.1f ms old when the attempt began, "
		 "past its stale age %lld ms + %lld ms jitter, and the wait %lld ms ran out",
		 ck_ms(age), (long long)stale, (long long)CK_JITTER_MS, (long long)ck_budget(c, w));
	return young;
}

/* May waiter W's protocol leave lock object O, which a live worker left
 * behind (a release that removed nothing, mkdir-owner's publish check that
 * withdraws its entry and leaves L "as found"), alone when W's attempt began
 * at ATT_NS?  A lock aged only by its directory's mtime (LOCK_AGE_BY_DIR)
 * promises no more than "reclaimed once it is stale_ms old", whoever left
 * it: until then (plus CK_JITTER_MS), giving up on it is what the protocol
 * documents.  Other protocols judge a live maker's lock by its record (its
 * own pid: K-VL-3) and are blamed at once. */
static int ck_left_young(const struct ck *c, unsigned w, const struct ck_obj *o, uint64_t att_ns)
{
	if (!(ck_flags(c, w) & LOCK_AGE_BY_DIR))
		return 0;
	int64_t stale = ck_stale(c, w);
	if (stale == LS_NEVER || stale < 0 || stale > INT64_MAX / (4 * NS_PER_MS))
		return 0;
	uint64_t age;
	return ck_young(c, w, stale, o->ns, att_ns, &age);
}

/* An attempt gave up after waiting its whole budget (its own elapsed time:
 * own stalls and, in virtual time, other workers' stalls taken out).  If
 * nobody alive held or occupied the lock at any moment of it and a lock
 * object its maker had abandoned was there all along, the waiter waited on
 * nobody: a lock outlived its holder (PROTOCOLS.md K-VL-1's empty lock of a
 * killed taker; a dead holder's lock only once the protocol's promise to
 * reclaim it is due, see ck_dead_young) or a release removed nothing and the
 * process now waits on itself (K-VL-3).  Each message names its rule. */
/* Did W's attempt, ending at R, meet a live holder less than a whole budget
 * before it gave up?  One that met none at all did not; nor did one whose
 * last holder died (or let go) a whole budget (its own stalls and other
 * workers' clock jumps taken out) before the give-up: the waiter then waited
 * its budget on nobody (K-VL-2: the holder dies, the reclaimer dies inside
 * .recovery, and a waiter that began while the first still held times out). */
static int ck_met_holder(const struct ck *c, unsigned w, const struct jrec *r, uint64_t *since_seq)
{
	const struct ck_worker *s = &c->w[w];
	*since_seq = s->att_seq;
	if (!s->att_held && s->att_epoch == c->acq_epoch)
		return 0;
	if (!c->stretch_open || !c->stretch_started || c->stretch_ns <= s->att_ns)
		return 1;
	*since_seq = c->stretch_seq; /* the wait on nobody began there */
	return !ck_waited_budget_from(c, w, r, c->stretch_ns);
}

void ck_dead_wait(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	char rule[200];
	uint64_t since = 0;
	if (!s->attempting || ck_met_holder(c, w, r, &since) || ck_occupied(c) || !c->nobjs ||
	    ck_taker_inside(c, w))
		return;
	uint64_t waited = ck_waited_budget(c, w, r);
	if (!waited)
		return; /* gave up at once (a try), or stalls ate the budget: not the lock's doing */
	const struct ck_obj *o = NULL;
	for (size_t i = 0; i < c->nobjs && !o; i++) {
		const struct ck_obj *x = &c->objs[i];
		if (!ck_abandoned(c, x, since))
			continue;
		if (x->orphan && x->creator >= 0 && ck_dead_young(c, w, x, s->att_ns, rule, sizeof rule))
			continue;
		if (!x->orphan && x->creator >= 0 && ck_left_young(c, w, x, s->att_ns))
			continue;
		o = x;
	}
	if (!o)
		return;
	double took = ck_ms(ck_since(r->ns, s->att_ns));
	if (o->creator < 0)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, -1, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object carried over "
			     "from before the run (found at the start); no live worker held the lock meanwhile "
			     "(rule carried-over)",
			     w, r->op, (unsigned long long)r->seq, took);
	else if (o->creator == (int32_t)w && !o->orphan)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, (int32_t)w, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on itself: on a lock object it "
			     "itself left behind (made at seq %llu); no live worker held the lock meanwhile "
			     "(rule waits-on-itself)",
			     w, r->op, (unsigned long long)r->seq, took, (unsigned long long)o->seq);
	else if (!o->orphan)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, o->creator, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object w%d left "
			     "behind and no longer held (made at seq %llu; its release had returned); no live "
			     "worker held the lock meanwhile (rule left-behind)",
			     w, r->op, (unsigned long long)r->seq, took, o->creator,
			     (unsigned long long)o->seq);
	else if (o->creator == (int32_t)w)
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, (int32_t)w, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object it left when it "
			     "died (it was killed and started again as a new process; made at seq %llu); no live "
			     "worker held the lock meanwhile (%s)",
			     w, r->op, (unsigned long long)r->seq, took, (unsigned long long)o->seq, rule);
	else
		ck_violation(c, INV_LIVENESS, (int32_t)w, r->op, r->seq, o->creator, 0, o->seq,
			     "w%u gave up (op %u, seq %llu) after %.1f ms waiting on a lock object w%d left "
			     "when it died (made at seq %llu); no live worker held the lock meanwhile (%s)",
			     w, r->op, (unsigned long long)r->seq, took, o->creator,
			     (unsigned long long)o->seq, rule);
}

/* A run in which attempts were made, some raised an error, and not one ever
 * took the lock proves nothing about safety and everything about liveness
 * (a missing folder, a refused mkdir): never let it pass as clean. */
void ck_never_acquired(struct ck *c)
{
	const struct jrec *first = c->has_acq_error ? &c->first_acq_error : NULL;
	if (c->out->acquired || !c->out->attempts)
		return;
	if (!first)
		return;
	ck_violation(c, INV_LIVENESS, first->worker, first->op, first->seq, -1, 0, 0,
		     "no attempt ever took the lock: %llu attempts, %llu busy, %llu errors "
		     "(first: w%u op %u raised %s)",
		     (unsigned long long)c->out->attempts, (unsigned long long)c->out->busy,
		     (unsigned long long)c->out->errors, (unsigned)first->worker, first->op,
		     strerrorname_np(first->err) ? strerrorname_np(first->err) : "an error");
}
