/*
 * holds.c - the invariants of a hold: exclusion (no two live holders unless
 * the earlier one is past its stale age: a legal reclaim), zombie-write (no
 * commit after the lock was taken over) and own-release (no removal of a
 * lock object another worker still holds).
 */
#include "checker.h"
#include "ck.h"

#include <stdint.h>
#include <string.h>

/* Nobody holds or occupies the lock any more after R: a stretch without a
 * holder begins (liveness 3), AFTER being the worker whose step ended the last. */
static void ck_maybe_vacant(struct ck *c, const struct jrec *r, int32_t after)
{
	if (ck_occupied(c) == 0)
		ck_stretch_begin(c, r, after);
}

/* End W's hold, if any (release-begin or death); R is the record that ends it. */
void ck_hold_end(struct ck *c, unsigned w, const struct jrec *r)
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
		ck_maybe_vacant(c, r, (int32_t)w);
	}
}

static int ck_has_obj(const struct ck *c, unsigned w)
{
	for (size_t i = 0; i < c->nobjs; i++)
		if (c->objs[i].creator == (int32_t)w)
			return 1;
	return 0;
}

/* W's release begins at R.  Its writes are over (exclusion, zombie-write and
 * own-release judge the hold up to here), but the lock is its until a step
 * removes or replaces the lock object it made: a holder paused inside its
 * release still occupies the lock, and waiters that give up meanwhile waited
 * on a live holder (liveness judges occupancy, not holds). */
void ck_release_begin(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	int occupy = s->holding && !s->reclaimed && ck_has_obj(c, w);

	if (occupy && !s->releasing) {
		s->releasing = 1;
		c->releasing++;
	}
	ck_hold_end(c, w, r);
}

/* W no longer occupies the lock: its object is gone, its release returned,
 * it died, or it begins anew. */
void ck_release_end(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	if (!s->releasing)
		return;
	s->releasing = 0;
	c->releasing--;
	ck_maybe_vacant(c, r, (int32_t)w);
}

/* R removed (or replaced) a lock object: if it was the last one a releasing
 * worker made, that worker's release has let go of the lock. */
void ck_vacated(struct ck *c, const struct jrec *r)
{
	int64_t x = r->b;

	if (x < 0 || x >= (int64_t)c->in->workers || !c->w[x].releasing)
		return;
	if (!ck_has_obj(c, (unsigned)x))
		ck_release_end(c, (unsigned)x, r);
}

static const char *ck_proto(const struct ck *c, unsigned w)
{
	return c->in->proto_of ? c->in->proto_of[w] : NULL;
}

/* W acquired at R: exclusion against every current holder, then W holds.
 * 0, or -1 on allocation failure. */
int ck_acquired(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	uint64_t start = r->a > 0 ? (uint64_t)r->a : r->ns;

	if (s->attempting && ck_push(&c->wait, ck_since(r->ns, s->att_ns)) < 0)
		return -1;
	ck_attempt_end(c, w, r, "acquired");
	ck_release_end(c, w, r);
	ck_hold_end(c, w, r); /* a hold never released: replaced */
	if (ck_occupied(c) == 0) {
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
			ck_strict_lease(c, w, r, h, age);
			continue;
		}
		ck_stale_text(stale, st, sizeof st);
		char nb[32];
		const char *mx = ck_mutex_name(c, w, 0, nb, sizeof nb);
		if (ck_proto(c, w) && ck_proto(c, h) && strcmp(ck_proto(c, w), ck_proto(c, h)) != 0)
			ck_violation(c, INV_EXCLUSION, (int32_t)w, r->op, r->seq, (int32_t)h,
				     hs->hold_op, hs->hold_seq,
				     "w%u (%s) acquired '%s' (op %u, seq %llu) while w%u (%s) held it since "
				     "seq %llu (op %u, %.1f ms, %s)",
				     w, ck_proto(c, w), mx, r->op, (unsigned long long)r->seq, h,
				     ck_proto(c, h), (unsigned long long)hs->hold_seq, hs->hold_op,
				     ck_ms(age), st);
		else
			ck_violation(c, INV_EXCLUSION, (int32_t)w, r->op, r->seq, (int32_t)h,
				     hs->hold_op, hs->hold_seq,
				     "w%u acquired '%s' (op %u, seq %llu) while w%u held it since seq %llu "
				     "(op %u, %.1f ms, %s)",
				     w, mx, r->op, (unsigned long long)r->seq, h,
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

void ck_commit_begin(struct ck *c, unsigned w, const struct jrec *r)
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

void ck_obj_remove(struct ck *c, unsigned y, const struct jrec *r)
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
