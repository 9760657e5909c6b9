/*
 * writes.c - the update workload's invariants: serial-updates (each commit
 * writes its read's revision + 1, no revision twice), no-lost-writes (every
 * commit is counted in the final state) and state-intact (the final state
 * parses; reads that do not parse are judged in the walk).
 */
#include "checker.h"
#include "ck.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../workloads/workload.h"

int ck_commit(struct ck *c, unsigned w, const struct jrec *r)
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
int ck_serial(struct ck *c)
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

/* no-phantom-result: follow each op's commit from EV_COMMIT_BEGIN (b: the
 * own count it writes) to its reported outcome. */
void ck_phantom_record(struct ck *c, unsigned w, const struct jrec *r)
{
	struct ck_worker *s = &c->w[w];

	switch (r->type) {
	case EV_COMMIT_BEGIN:
		s->pend_own = r->b;
		return;
	case EV_COMMIT:
		if (r->b > s->ok_max)
			s->ok_max = r->b;
		break;
	case EV_WRITE_ERROR:
		if (s->pend_own > s->fail_own) {
			s->fail_own = s->pend_own;
			s->fail_op = r->op;
			s->fail_seq = r->seq;
		}
		break;
	default: /* a death or a new incarnation: the begun commit's outcome is unknown */
		if (s->pend_own > s->unknown_max)
			s->unknown_max = s->pend_own;
		break;
	}
	s->pend_own = 0;
}

/* A failure reported for a write that landed: the final count of W is at
 * least the count its failed write wrote, and neither a reported success nor
 * a write whose outcome died unreported wrote that much. */
static void ck_phantom_judge(struct ck *c, unsigned w, int64_t final_own)
{
	const struct ck_worker *s = &c->w[w];

	if (s->pend_own > 0 && s->pend_own >= s->fail_own)
		return; /* still pending at the end: unknown */
	if (!s->fail_own || final_own < s->fail_own || s->ok_max >= s->fail_own ||
	    s->unknown_max >= s->fail_own || s->pend_own >= s->fail_own)
		return;
	ck_violation(c, INV_NO_PHANTOM_RESULT, (int32_t)w, s->fail_op, s->fail_seq, -1, 0, 0,
		     "w%u reported a write error (op %u, seq %llu) for the write of its count %lld, "
		     "and the final state holds %lld (its highest reported success: %lld)",
		     w, s->fail_op, (unsigned long long)s->fail_seq, (long long)s->fail_own,
		     (long long)final_own, (long long)s->ok_max);
}

/* no-lost-writes and the final state's part of state-intact. */
int ck_final_state(struct ck *c)
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

		if (parsed)
			ck_phantom_judge(c, w, st.counts[w]);
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
