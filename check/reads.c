/*
 * reads.c - stale-read (the generation workload): a read returns at least
 * the newest version whose write had finished before the read began.
 */
#include "checker.h"
#include "ck.h"


/* A write of version r->a finished. */
void ck_stale_commit(struct ck *c, unsigned w, const struct jrec *r)
{
	if (!c->in->check_stale_read || r->a <= c->max_ver)
		return;
	c->max_ver = r->a;
	c->max_w = (int32_t)w;
	c->max_op = r->op;
	c->max_seq = r->seq;
}

void ck_read_begin(struct ck *c, unsigned w, const struct jrec *r)
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
void ck_read_end(struct ck *c, unsigned w, const struct jrec *r)
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
