/*
 * livelock.c - no-livelock (see livelock.h).  One walk over the steps with a
 * counter per worker: +1 per step of its own in the same op; back to 0 when
 * it sleeps, when its op changes, or when any worker changes the lock
 * directory (a waiter that polls a directory others keep changing is making
 * progress, or at least watching it).  A count past the limit is one
 * violation per (worker, op): a spinning loop would otherwise count once per
 * step.
 */
#include "livelock.h"

#include <stdio.h>
#include <string.h>

#include "checker.h"
#include "ck.h"

#include "../protocols/lock.h"

#define LL_WORKERS 64

void check_livelock(const struct ck_step *st, size_t n, unsigned limit, struct check_inv *out)
{
	size_t run[LL_WORKERS] = { 0 }, first[LL_WORKERS] = { 0 };
	uint32_t op[LL_WORKERS] = { 0 };
	unsigned char told[LL_WORKERS] = { 0 };
	if (!limit)
		limit = 200;
	for (size_t k = 0; k < n; k++) {
		unsigned w = st[k].w;
		if (w >= LL_WORKERS)
			continue;
		if (!run[w] || op[w] != st[k].op) {
			run[w] = 0;
			first[w] = k;
			op[w] = st[k].op;
			told[w] = 0;
		}
		run[w]++;
		if (run[w] > limit && !told[w]) {
			told[w] = 1;
			if (out->nex < CHECK_MAX_EXAMPLES) {
				struct check_example *e = &out->ex[out->nex++];
				snprintf(e->text, sizeof e->text,
					 "w%u took %zu steps inside op %u without a sleep or a change of the lock directory "
					 "(steps %zu to %zu)", w, run[w], st[k].op, first[w] + 1, k + 1);
				e->worker[0] = (int32_t)w;
				e->worker[1] = -1;
				e->op[0] = e->op[1] = st[k].op;
				e->seq[0] = first[w];
				e->seq[1] = k;
			}
			out->violations++;
		}
		if (st[k].sleeps) {
			run[w] = 0;
		}
		if (st[k].changes)
			memset(run, 0, sizeof run);
	}
}

/* A real run's EV_SPIN at R: W made R->b calls inside op R->op without a
 * sleep.  A lock object made or removed since the half-way call (R->a) is a
 * change others made that the worker may be watching: not blamed. */
void ck_spin(struct ck *c, unsigned w, const struct jrec *r)
{
	if (r->a > 0 && c->obj_change_ns >= (uint64_t)r->a)
		return;
	ck_violation(c, INV_NO_LIVELOCK, (int32_t)w, r->op, r->seq, -1, 0, 0,
		     "w%u made %lld file-system calls inside op %u without a sleep (seq %llu), and no "
		     "lock object was made or removed by anyone over the last half of them",
		     w, (long long)r->b, r->op, (unsigned long long)r->seq);
}

/* Does the seam count W's calls (a built-in protocol, not an adapter's)? */
static int ck_seam_counts(const struct check_input *in, unsigned w)
{
	const struct lock_ops *ops = in->proto_of && in->proto_of[w] ? lock_find(in->proto_of[w]) : NULL;
	return ops && !(ops->flags & LOCK_EXTERNAL);
}

/* The checker's call after the walk: explore's steps judged here; a real
 * run's EV_SPIN records were judged during the walk (ck_spin). */
void ck_livelock(const struct check_input *in, struct check_result *out)
{
	struct check_inv *ci = &out->inv[INV_NO_LIVELOCK];
	if (in->steps && in->nsteps) {
		ci->applicable = 1;
		check_livelock(in->steps, in->nsteps, in->livelock_steps, ci);
		return;
	}
	ci->applicable = 0;
	for (unsigned w = 0; w < in->workers && !ci->applicable; w++)
		ci->applicable = ck_seam_counts(in, w);
}
