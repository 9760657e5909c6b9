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
 * Cost: O(n * holders at once) for the walk, plus sorting the commits
 * (O(n log n)); wait and hold times go to fixed-size histograms (hist.h);
 * per-worker state is indexed by id.
 */
#include "checker.h"
#include "ck.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../faults/fault.h"
#include "../protocols/lock.h"

/* p50/p99 by nearest rank (the smallest sample with at least p of them at or
 * below it), from the histogram: within 1%, exact when that bucket's samples
 * are equal; max exact. */
static void ck_dist(struct ck_samples *s, struct dist *d)
{
	memset(d, 0, sizeof *d);
	d->n = s->h.n;
	if (!s->h.n)
		return;
	d->p50 = ck_ms(hist_rank(&s->h, 50));
	d->p99 = ck_ms(hist_rank(&s->h, 99));
	d->max = ck_ms(s->h.max);
}

/* A death or a new incarnation: whatever W was doing is over, unjudged. */
static void ck_worker_gone(struct ck *c, unsigned w, const struct jrec *r)
{
	if (c->w[w].holding || c->w[w].releasing)
		c->held_ns = r->ns; /* a holder's death: held until now */
	ck_orphan(c, w, r);
	ck_mutex_gone(c, w);
	ck_hold_end(c, w, r);
	ck_release_end(c, w, r);
	c->w[w].attempting = 0;
	c->w[w].rb_pending = 0;
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

/* Records no-phantom-result follows (writes.c). */
static int in_phantom(int type)
{
	return type == EV_COMMIT_BEGIN || type == EV_COMMIT || type == EV_WRITE_ERROR ||
	       type == EV_WORKER_START || type == EV_WORKER_EXIT ||
	       (type == EV_ATTEMPT);
}

/* One worker record; 0, or -1 on allocation failure. */
static int ck_record(struct ck *c, unsigned w, const struct jrec *r)
{
	struct check_result *o = c->out;
	struct ck_worker *s = &c->w[w];

	/* throughput runs from the first op, not the first fork: with 2,048
	 * workers the fork phase alone takes seconds */
	if (r->type != EV_WORKER_START && (!c->seen_op || r->ns < c->first_ns)) {
		c->first_ns = r->ns;
		c->seen_op = 1;
	}
	if (!c->seen_worker_rec || r->ns > c->last_ns)
		c->last_ns = r->ns;
	if (!c->seen_worker_rec && ck_occupied(c) == 0)
		ck_stretch_begin(c, r, -1);
	c->seen_worker_rec = 1;

	if (in_phantom(r->type))
		ck_phantom_record(c, w, r);
	switch (r->type) {
	case EV_ATTEMPT:
		o->attempts++;
		ck_release_end(c, w, r);
		s->attempting = 1;
		s->att_reported = 0;
		s->att_ns = r->ns;
		s->att_seq = r->seq;
		s->att_op = r->op;
		s->att_stall_ms = 0;
		s->att_jump_ms = 0;
		s->att_epoch = c->acq_epoch;
		s->att_held = ck_occupied(c) > 0;
		ck_attempt_begin_claims(c, w);
		break;
	case EV_ACQUIRED:
		o->acquired++;
		c->acq_epoch++;
		c->held_ns = r->ns;
		if (ck_acquired(c, w, r) < 0)
			return -1;
		break;
	case EV_BUSY:
		o->busy++;
		ck_orphan_wait(c, w, r);
		ck_dead_wait(c, w, r);
		ck_busy_nobody(c, w, r);
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
		ck_escaped(c, w, r);
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
		ck_release_begin(c, w, r);
		break;
	case EV_RELEASED:
		c->released++;
		c->held_ns = r->ns;
		ck_objs_left(c, w, r);
		ck_release_end(c, w, r);
		break;
	case EV_RELEASE_ERROR:
		o->errors++;
		ck_escaped(c, w, r);
		ck_release_end(c, w, r);
		break;
	case EV_MUTEX_TAKE:
		ck_mutex_take(c, w, r);
		break;
	case EV_DELETE_PENDING:
		ck_delete_pending(c, w, r);
		break;
	case EV_MUTEX_DROP:
		ck_mutex_drop(c, w, r);
		break;
	case EV_FAULT:
		if (r->a == FK_CRASH) {
			o->crashes++;
			s->crash_announced = 1;
			ck_worker_gone(c, w, r);
		} else if (r->a == FK_STALL || r->a == FK_STOP) {
			o->stalls++;
			if (s->attempting)
				s->att_stall_ms = ck_add_ms(s->att_stall_ms, r->c);
			/* virtual time: a stall moves every worker's clock, not
			 * only the staller's; it is no waiter's own waiting */
			for (unsigned x = 0; ck_jump(c) && x < c->in->workers; x++)
				if (x != w && c->w[x].attempting)
					c->w[x].att_jump_ms = ck_add_ms(c->w[x].att_jump_ms, r->c);
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
		c->obj_change_ns = r->ns;
		break;
	case EV_SPIN:
		ck_spin(c, w, r);
		break;
	case EV_OBJ_REMOVE:
		c->obj_change_ns = r->ns;
		ck_obj_remove(c, w, r);
		ck_obj_gone(c, r);
		ck_vacated(c, r);
		break;
	default:
		break;
	}
	return 0;
}

static void ck_free(struct ck *c)
{
	free(c->w);
	free(c->holders);
	hist_free(&c->wait.h);
	hist_free(&c->hold.h);
	free(c->commits);
	free(c->apps);
	free(c->snapreads);
	free(c->objs);
	free(c->viol_by);
}

/* One worker's figures for the by-revision split, counted during the walk. */
struct ck_count {
	uint64_t attempts, acquired, committed, busy, errors, lost, released, crashes, stalls;
};

static void ck_count_rec(struct ck_count *k, const struct jrec *r)
{
	switch (r->type) {
	case EV_ATTEMPT: k->attempts++; break;
	case EV_ACQUIRED: k->acquired++; break;
	case EV_COMMIT: k->committed++; break;
	case EV_BUSY: k->busy++; break;
	case EV_ACQUIRE_ERROR: case EV_WRITE_ERROR: case EV_RELEASE_ERROR: k->errors++; break;
	case EV_LOST: k->lost++; break;
	case EV_RELEASED: k->released++; break;
	case EV_FAULT:
		if (r->a == FK_CRASH)
			k->crashes++;
		else if (r->a == FK_STALL || r->a == FK_STOP)
			k->stalls++;
		break;
	default: break;
	}
}

/* Every figure again, by revision, for a mixed-version fleet. */
static void ck_by_revision(struct ck *c, const struct ck_count *count)
{
	const struct check_input *in = c->in;
	struct check_result *out = c->out;
	const char *const *rev_of = in->rev_of ? in->rev_of : in->proto_of;
	if (!rev_of || !count)
		return;
	int *slot = calloc(in->workers ? in->workers : 1, sizeof *slot);
	if (!slot)
		return;
	uint64_t released[CHECK_MAX_REVS] = { 0 };
	for (unsigned w = 0; w < in->workers; w++) {
		unsigned k;
		for (k = 0; k < out->nrev; k++)
			if (!strcmp(out->rev[k].name, rev_of[w]))
				break;
		if (k == out->nrev) {
			if (out->nrev == CHECK_MAX_REVS) {
				slot[w] = -1;
				continue;
			}
			out->rev[out->nrev++].name = rev_of[w];
		}
		slot[w] = (int)k;
		struct check_rev *v = &out->rev[k];
		const struct ck_count *x = &count[w];
		v->workers++;
		v->violations += c->viol_by ? c->viol_by[w] : 0;
		v->attempts += x->attempts;
		v->acquired += x->acquired;
		v->committed += x->committed;
		v->busy += x->busy;
		v->errors += x->errors;
		v->lost += x->lost;
		v->crashes += x->crashes;
		v->stalls += x->stalls;
		released[k] += x->released;
	}
	for (unsigned k = 0; k < out->nrev; k++) {
		uint64_t ops = in->check_state ? out->rev[k].committed : released[k];
		out->rev[k].ops_per_s = out->elapsed_s > 0 ? (double)ops / out->elapsed_s : 0;
	}
	free(slot);
}

/* One record of the walk, in seq order: 0, or -1 on allocation failure. */
static inline int ck_walk(struct ck *c, const struct jrec *r, struct ck_count *count)
{
	const struct check_input *in = c->in;

	if (r->worker == JOURNAL_DRIVER) {
		if (in->excuse_injected && r->type == EV_FAULT && r->a == FK_SWEEP && r->c > 0)
			c->swept = 1; /* the explorer's sweep removed the lock's folder, or one beside it */
		ck_driver(c, r);
		return 0;
	}
	if (r->worker >= in->workers)
		return 0; /* not this run's worker */
	if (in->excuse_injected && r->type == EV_FAULT && r->err &&
	    (r->a == FK_ERRNO || r->a == FK_SHORT_WRITE)) {
		c->w[r->worker].injected = 1; /* a failure the harness made, in this op */
		c->w[r->worker].injected_op = r->op;
	}
	/* an acquire error the harness injected is the fault's doing, not the
	 * protocol's (whether it should have absorbed it: no-escaped-error) */
	if (r->type == EV_ACQUIRE_ERROR && !c->has_acq_error) {
		int injected = (c->w[r->worker].injected && c->w[r->worker].injected_op == r->op) ||
			       (c->swept && r->err == ENOENT); /* explore only */
		if (!injected) {
			c->first_acq_error = *r;
			c->has_acq_error = 1;
		}
	}
	if (count)
		ck_count_rec(&count[r->worker], r);
	return ck_record(c, r->worker, r);
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
		out->inv[INV_NO_PHANTOM_RESULT].applicable = 0;
		out->inv[INV_NO_LOST_WRITES].applicable = 0;
		out->inv[INV_SERIAL_UPDATES].applicable = 0;
		out->inv[INV_STATE_INTACT].applicable = 0;
	}
	out->inv[INV_JOURNAL_SEQ].applicable = in->check_seq != 0;
	out->inv[INV_STALE_READ].applicable = in->check_stale_read != 0;

	c.in = in;
	c.out = out;
	ck_claims_applicable(&c);
	c.w = calloc(nw ? nw : 1, sizeof *c.w);
	c.viol_by = calloc(nw ? nw : 1, sizeof *c.viol_by);
	c.holders = calloc(nw ? nw : 1, sizeof *c.holders);
	struct ck_count *count = in->proto_of ? calloc(nw ? nw : 1, sizeof *count) : NULL;
	if (!c.w || !c.holders || (in->proto_of && !count))
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
	c.stuck_bound_ms = c.stuck_on ? max_stale + max_budget + LIVENESS_GRACE_MS + ck_jump(&c) : 0;
	c.stretch_open = 1; /* nobody holds at the start; started at the first record */

	/* one pass in seq order, from the array or from the source */
	uint64_t last_seq = 0;
	int whole_array = 0;
	for (;;) {
		const struct jrec *run;
		size_t m;

		if (!in->rec && in->next_run) {
			int k = in->next_run(in->next_ctx, &run, &m);
			if (k < 0)
				goto out_err;
			if (k == 0)
				break;
		} else if (!in->rec && in->next) {
			int k = in->next(in->next_ctx, &run);
			if (k < 0)
				goto out_err;
			if (k == 0)
				break;
			m = 1;
		} else if (!whole_array) {
			whole_array = 1;
			run = in->rec;
			m = in->rec ? in->n : 0;
		} else {
			break;
		}
		for (size_t k = 0; k < m; k++)
			if (ck_walk(&c, &run[k], count) < 0)
				goto out_nomem;
		if (m)
			last_seq = run[m - 1].seq;
	}
	out->torn_bytes = in->torn_bytes;

	/* attempts still open at the end are judged against the last record */
	if (c.seen_worker_rec) {
		struct jrec end = { .ns = c.last_ns, .seq = last_seq };

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
	out->elapsed_s = c.seen_op && c.last_ns > c.first_ns ? (double)(c.last_ns - c.first_ns) / 1e9 : 0;
	out->ops_per_s = out->elapsed_s > 0 ? (double)out->ops / out->elapsed_s : 0;
	ck_dist(&c.wait, &out->wait);
	ck_dist(&c.hold, &out->hold);
	ck_by_revision(&c, count);
	free(count);

	ck_livelock(in, out);
	out->pass = 1;
	for (int i = 0; i < INV__COUNT; i++)
		if (out->inv[i].applicable && out->inv[i].violations)
			out->pass = 0;
	/* damaged data proves nothing either way: neither a pass nor its violations */
	if (in->unjudgeable) {
		snprintf(out->incomplete, sizeof out->incomplete, "%s", in->unjudgeable[0] ? in->unjudgeable : "damaged");
		out->pass = 0;
	}
	ck_free(&c);
	return 0;

out_nomem:
	errno = errno ? errno : ENOMEM;
out_err:
	saved = errno ? errno : EIO;
	free(count);
	ck_free(&c);
	out->pass = 0;
	errno = saved;
	return -1;
}
