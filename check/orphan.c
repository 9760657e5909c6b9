/*
 * orphan.c - no-orphan-lock: the stuck lock as an invariant of its own.  A
 * lock object is left once every process that made it has died or returned
 * from its release with it still there; a protocol may leave it alone for
 * its stale age (plus CK_JITTER_MS), but a waiter that, with nobody else
 * holding or inside a release, waits its whole budget on it after that and
 * gives up shows a lock nobody will ever take again by itself (PROTOCOLS.md
 * K-VL-1 under retainLiveOwner, K-VL-2's leftover).
 */
#include "checker.h"
#include "ck.h"

#include <stdint.h>

#include "../protocols/lock.h"

/* W's release returned at R: what it made and still is there is left now. */
void ck_objs_left(struct ck *c, unsigned w, const struct jrec *r)
{
	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].creator == (int32_t)w && !c->objs[i].left_ns)
			c->objs[i].left_ns = r->ns;
}

/* W's attempt ended busy at R. */
void ck_orphan_wait(struct ck *c, unsigned w, const struct jrec *r)
{
	const struct ck_worker *s = &c->w[w];
	int64_t stale = ck_stale(c, w);

	if (!s->attempting || s->att_held || ck_occupied(c) || ck_taker_inside(c, w) || stale == LS_NEVER || stale < 0 ||
	    stale > INT64_MAX / (4 * NS_PER_MS))
		return;
	uint64_t waited = ck_waited_budget(c, w, r);
	if (!waited)
		return;
	for (size_t i = 0; i < c->nobjs; i++) {
		struct ck_obj *o = &c->objs[i];
		if (o->reported || !o->left_ns || o->creator < 0 || o->seq >= s->att_seq)
			continue;
		uint64_t left = ck_since(s->att_ns, ck_lock_since(c, w, o->left_ns));
		if (left <= (uint64_t)(stale + CK_JITTER_MS) * NS_PER_MS)
			continue;
		o->reported = 1;
		ck_violation(c, INV_NO_ORPHAN_LOCK, (int32_t)w, r->op, r->seq, o->creator, 0, o->seq,
			     "the lock object w%d made (seq %llu) was left %s %.1f ms before w%u's attempt "
			     "(op %u) began, past the stale age %lld ms + %lld ms jitter; w%u waited %.1f ms "
			     "on it and gave up at seq %llu, nobody else holding",
			     o->creator, (unsigned long long)o->seq,
			     o->orphan ? "(its maker died)" : "(its maker's release returned)", ck_ms(left), w,
			     s->att_op, (long long)stale, (long long)CK_JITTER_MS, w, ck_ms(waited),
			     (unsigned long long)r->seq);
	}
}
