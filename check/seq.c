/*
 * seq.c - journal-seq (the append workload): appended sequence numbers are
 * unique and gap-free and each is in the final journal; a snapshot written
 * from a half-written journal, or a trusted final snapshot that disagrees
 * with a replay of the journal, is a violation.
 */
#include "checker.h"
#include "ck.h"

#include <stdio.h>
#include <stdlib.h>

#include "../workloads/workload.h"


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
int ck_append(struct ck *c, unsigned w, const struct jrec *r)
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
int ck_snapread(struct ck *c, unsigned w, const struct jrec *r)
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
int ck_journal_seq(struct ck *c)
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
