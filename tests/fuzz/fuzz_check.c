/* fuzz_check - the checker on a journal (check/checker.h check_run), through
 * the journal reader, as `lockstorm check OUTDIR` runs it.
 *
 * Input: whole 64-byte records, then fewer than 64 bytes of set-up.  Each
 * record is sealed first (type folded into the known ones, worker into this
 * run's workers or the driver, magic and checksum set), so mutations reach
 * the checker instead of stopping at the reader's checksum.  Set-up byte 0:
 * workers (1-8) and workload kind; byte 1: stale age and wait budget; the
 * rest: the final state file's bytes. */
#include "fuzz.h"

#include "check/checker.h"
#include "check/verdict.h"
#include "protocols/lock.h"

static int by_seq(const void *a, const void *b)
{
	const struct jrec *x = a, *y = b;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static const int64_t ages[8] = { LS_NEVER, 0, 1, 100, 10000, INT64_MAX / 2, INT64_MAX - 1, -5 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	size_t nrec = size / sizeof(struct jrec), tail = size % sizeof(struct jrec);
	const uint8_t *set = data + nrec * sizeof(struct jrec);
	unsigned nw = 1 + (tail > 0 ? set[0] & 7 : 0), kind = tail > 0 ? (set[0] >> 3) & 3 : 1;
	int64_t stale = ages[tail > 1 ? set[1] & 7 : 3], budget = ages[tail > 1 ? (set[1] >> 3) & 7 : 4];
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();

	struct jrec *in = calloc(nrec + 1, sizeof *in);
	if (!in)
		abort();
	memcpy(in, data, nrec * sizeof *in);
	for (size_t i = 0; i < nrec; i++) {
		struct jrec *r = &in[i];
		if (r->type == EV_NONE || r->type >= EV__COUNT)
			r->type = (uint16_t)(1 + r->type % (EV__COUNT - 1));
		if (r->worker != JOURNAL_DRIVER) {
			r->worker = (uint16_t)(r->worker % (nw + 1));
			if (r->worker == nw)
				r->worker = JOURNAL_DRIVER;
		}
		r->magic = JOURNAL_MAGIC;
		r->pad = 0;
		r->check = journal_checksum(r);
	}
	struct jrec *rec = NULL;
	size_t n = 0, torn = 0;
	if (journal_read_file(fuzz_file((const uint8_t *)in, nrec * sizeof *in), &rec, &n, &torn) != 0)
		abort();
	FUZZ_ASSERT(n == nrec && torn == 0);
	free(in);
	if (n)
		qsort(rec, n, sizeof *rec, by_seq);

	int64_t stale_ms[8], budget_ms[8];
	const char *proto_of[8];
	for (unsigned w = 0; w < nw; w++) {
		stale_ms[w] = stale;
		budget_ms[w] = budget;
		proto_of[w] = w & 1 ? "mkdir-owner" : "flock";
	}
	/* NUL-terminated, as fsutil_slurp gives it */
	char *final = tail > 2 ? fuzz_cstr(set + 2, tail - 2) : NULL;
	size_t final_len = final ? tail - 2 : 0;
	struct check_input ci = {
		.rec = rec,
		.n = n,
		.workers = nw,
		.stale_ms = stale_ms,
		.budget_ms = budget_ms,
		.proto_of = proto_of,
		.check_state = kind == 1,
		.check_seq = kind == 2,
		.check_stale_read = kind == 3,
		.final_state = final,
		.final_len = final_len,
		.final_snapshot = kind == 2 ? final : NULL,
		.final_snapshot_len = kind == 2 ? final_len : 0,
		.torn_bytes = torn,
	};
	static struct check_result res;
	if (check_run(&ci, &res) == 0) {
		struct verdict v;
		verdict_from_check(&v, &res);
		verdict_print(devnull, &v);
	}
	free(final);
	free(rec);
	return 0;
}
