/*
 * claims.c - the invariants that judge what a protocol's ops table claims
 * beside its code (protocols/lock.h):
 *
 *   exclusion, on every other mutex it declares (lockfile's .recovery): no
 *     two workers between EV_MUTEX_TAKE and EV_MUTEX_DROP of the same mutex
 *     at once, unless the earlier one had held it past the stale age the
 *     take recorded (a legal takeover); the lock itself is holds.c's;
 *   no-escaped-error: an error its `absorbs` claims say never reaches the
 *     caller did (the worker journals the claim's verdict with the error:
 *     EV_ACQUIRE_ERROR / EV_RELEASE_ERROR b = 1; a claim is keyed by the
 *     failing call and the path it named, c: the lock, an entry inside it,
 *     another), and, for a protocol that
 *     claims to wait only for a live holder (LOCK_BUSY_MEANS_HELD), an
 *     attempt ended busy although nobody held, occupied or made any lock
 *     object from its start to its end (K-ML-3: a swept folder), unless
 *     stalls ate its wait budget (rule busy-without-holder);
 *     Also (rule error-on-contention) an acquire that raised the errno the
 *     file system gave only because a lock folder someone removed was still
 *     delete pending (EV_DELETE_PENDING: windows; nobody injected it) while
 *     nobody held, occupied or had a lock object: a release in progress taken
 *     for a failure (K-ML-4; 2.0.0's comment: "Windows reports EPERM/EACCES
 *     for a lock folder another process is deleting at this moment");
 *   strict-lease (only with --strict): a live holder's lock taken over at
 *     all, past its stale age, by a protocol without a held() check.
 */
#include "checker.h"
#include "ck.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../protocols/lock.h"

/* The mutex INDEX of W's protocol: its declared name, else "mutex N". */
const char *ck_mutex_name(const struct ck *c, unsigned w, unsigned index, char *buf, size_t len)
{
	const struct lock_ops *ops = c->in->proto_of && c->in->proto_of[w] ? lock_find(c->in->proto_of[w]) : NULL;
	unsigned n;
	const struct lock_mutex *m = lock_mutexes(ops, &n);

	if (index < n)
		return m[index].name;
	snprintf(buf, len, "mutex %u", index);
	return buf;
}

void ck_attempt_begin_claims(struct ck *c, unsigned w)
{
	struct ck_worker *s = &c->w[w];

	s->att_clear = ck_occupied(c) == 0 && c->nobjs == 0;
	s->att_obj_epoch = c->obj_epoch;
}

void ck_mutex_take(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];
	char nb[32];

	if (r->a < 1 || r->a >= LOCK_MAX_MUTEXES)
		return; /* 0 is the lock itself (EV_ACQUIRED); others are not ours */
	unsigned m = (unsigned)r->a;
	const char *name = ck_mutex_name(c, w, m, nb, sizeof nb);
	for (unsigned h = 0; h < c->in->workers; h++) {
		struct ck_worker *hs = &c->w[h];
		if (h == w || !hs->mx_held[m])
			continue;
		uint64_t age = ck_since(r->ns, hs->mx_ns[m]);
		int64_t st = hs->mx_stale_us[m];
		int64_t st_ms = st < 0 ? LS_NEVER : param_us_to_ms(st);
		if (ck_past_stale(st_ms, age)) {
			hs->mx_held[m] = 0; /* a legal takeover: that hold no longer counts */
			c->out->reclaims++;
			continue;
		}
		char stt[48];
		ck_stale_text(st_ms, stt, sizeof stt);
		ck_violation(c, INV_EXCLUSION, (int32_t)w, r->op, r->seq, (int32_t)h, hs->mx_op[m], hs->mx_seq[m],
			     "w%u took mutex '%s' (op %u, seq %llu) while w%u held it since seq %llu "
			     "(op %u, %.1f ms, %s)",
			     w, name, r->op, (unsigned long long)r->seq, h, (unsigned long long)hs->mx_seq[m],
			     hs->mx_op[m], ck_ms(age), stt);
	}
	s->mx_held[m] = 1;
	s->mx_ns[m] = r->ns;
	s->mx_seq[m] = r->seq;
	s->mx_op[m] = r->op;
	s->mx_stale_us[m] = r->b;
}

void ck_mutex_drop(struct ck *c, unsigned w, const struct jrec *r)
{
	if (r->a >= 1 && r->a < LOCK_MAX_MUTEXES)
		c->w[w].mx_held[r->a] = 0;
}

/* W died: it holds no mutex any more. */
void ck_mutex_gone(struct ck *c, unsigned w)
{
	memset(c->w[w].mx_held, 0, sizeof c->w[w].mx_held);
}

/* R: W's call failed only because a removed directory was still open
 * somewhere (delete pending).  The folder still stood: an attempt under way
 * did not begin on a clear lock (busy-without-holder does not apply). */
void ck_delete_pending(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	s->pending = 1;
	s->pending_op = r->op;
	s->pending_err = r->err;
	s->pending_call = (int)r->a;
	s->pending_by = r->b >= 0 && r->b < (int64_t)c->in->workers ? (int32_t)r->b : -1;
	s->pending_seq = r->seq;
	if (s->attempting)
		s->att_clear = 0;
}

/* W's acquire raised R's errno, the file system's answer to a delete-pending
 * folder (ck_delete_pending), while the lock was free. */
static void ck_error_on_contention(struct ck *c, unsigned w, const struct jrec *r)
{
	const struct ck_worker *s = &c->w[w];

	if (r->type != EV_ACQUIRE_ERROR || !s->pending || s->pending_op != r->op || s->pending_err != r->err ||
	    s->pending_call != (int)r->a - 1)
		return;
	if (s->injected && s->injected_op == r->op)
		return; /* an errno the explorer chose in this op: the choice's doing */
	if (ck_occupied(c) || c->nobjs)
		return; /* someone held it or its lock object stood: not a free lock */
	const char *en = strerrorname_np(r->err);
	char by[64] = "";
	if (s->pending_by >= 0)
		snprintf(by, sizeof by, " (w%d had it open)", s->pending_by);
	ck_violation(c, INV_NO_ESCAPED_ERROR, (int32_t)w, r->op, r->seq, s->pending_by, 0, s->pending_seq,
		     "w%u's acquire (op %u, seq %llu) raised %s from %s, which the file system gave only because "
		     "the lock folder removed before was still delete pending%s, while nobody held the lock: "
		     "a release in progress is contention, not a failure (rule error-on-contention)",
		     w, r->op, (unsigned long long)r->seq, en ? en : "an error",
		     fsx_op_name((enum fsx_op)s->pending_call), by);
}

/* W's acquire or release raised R's errno, which the protocol claims to absorb. */
void ck_escaped(struct ck *c, unsigned w, const struct jrec *r)
{
	if (r->b != 1) {
		ck_error_on_contention(c, w, r);
		return;
	}
	const char *en = strerrorname_np(r->err);
	const char *call = r->a - 1 == FSX_CALL_FSTAT			? "fstat"
			   : r->a > 0 && r->a - 1 < FSX_OP_COUNT ? fsx_op_name((enum fsx_op)(r->a - 1))
								   : "an unknown call";
	const char *path = r->c > FSX_PATH_UNKNOWN && r->c < FSX_PATH_COUNT ? fsx_path_name((enum fsx_path)r->c) : "";
	ck_violation(c, INV_NO_ESCAPED_ERROR, (int32_t)w, r->op, r->seq, -1, 0, 0,
		     "w%u's %s (op %u, seq %llu) raised %s from %s%s%s, which the protocol claims to absorb "
		     "(rule absorbed-errno; see lockstorm list protocols)",
		     w, r->type == EV_RELEASE_ERROR ? "release" : "acquire", r->op, (unsigned long long)r->seq,
		     en ? en : "an error", call, *path ? " of " : "", path);
}

/* W's attempt ended busy at R. */
void ck_busy_nobody(struct ck *c, unsigned w, const struct jrec *r)
{
	const struct ck_worker *s = &c->w[w];

	if (!s->attempting || !s->att_clear || !(ck_flags(c, w) & LOCK_BUSY_MEANS_HELD))
		return;
	if (s->att_epoch != c->acq_epoch || s->att_obj_epoch != c->obj_epoch || ck_occupied(c) || c->nobjs)
		return;
	/* Its budget spent frozen, not waiting: mkdir-legacy's acquire after an
	 * injected errno at MA1 (contention to it) sleeps, is stalled 0.5 x stale
	 * and wakes past its 5 s deadline.  "Busy" then says nothing about a
	 * holder (liveness's rules take stalls off the same way). */
	if (ck_stalls_ate_budget(c, w, r))
		return;
	ck_violation(c, INV_NO_ESCAPED_ERROR, (int32_t)w, r->op, r->seq, -1, 0, s->att_seq,
		     "w%u gave up (op %u, seq %llu) after %.1f ms although nobody held or occupied the lock "
		     "and no lock object was made from its attempt's start (seq %llu) to then; the protocol "
		     "claims busy means a live holder (rule busy-without-holder)",
		     w, r->op, (unsigned long long)r->seq, ck_ms(ck_since(r->ns, s->att_ns)),
		     (unsigned long long)s->att_seq);
}

/* W's acquire at R took over H's live hold, AGE old, past its stale age. */
void ck_strict_lease(struct ck *c, unsigned w, const struct jrec *r, unsigned h, uint64_t age)
{
	if (!c->in->strict || (ck_flags(c, h) & (LOCK_HAS_HELD | LOCK_EXTERNAL)))
		return;
	const struct ck_worker *hs = &c->w[h];
	char st[48];
	ck_stale_text(ck_stale(c, h), st, sizeof st);
	ck_violation(c, INV_STRICT_LEASE, (int32_t)w, r->op, r->seq, (int32_t)h, hs->hold_op, hs->hold_seq,
		     "w%u acquired (op %u, seq %llu) over w%u's live hold since seq %llu (op %u, %.1f ms, %s): "
		     "a legal reclaim by the stale age, but the protocol has no heartbeat or held() check, so "
		     "w%u does not know (--strict)",
		     w, r->op, (unsigned long long)r->seq, h, (unsigned long long)hs->hold_seq, hs->hold_op,
		     ck_ms(age), st, h);
}

void ck_claims_applicable(struct ck *c)
{
	c->out->inv[INV_STRICT_LEASE].applicable = c->in->strict != 0;
}
