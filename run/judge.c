/*
 * judge.c - judging a kept output folder: its journals, final state and
 * run.json through the checker into a verdict (driver_verdict), what a run or
 * `lockstorm check` prints and writes of it (driver_finish_report), and
 * `lockstorm check OUTDIR` itself.  Below the driver: driver.c calls these at
 * the end of a run; nothing here calls back into it.
 */
#include "driver.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../core/fsutil.h"
#include "extworker.h"
#include "../core/journal.h"
#include "../report/junit.h"
#include "../report/report.h"
#include "runcfg.h"
#include "rundir.h"
#include "leftover.h"

/*
 * What makes a kept run's records unjudgeable beyond a damaged journal (WHY
 * already says that one): a run that never ended (no EV_STOP from the
 * driver: it was killed) or a worker without a journal.  Learnt from the
 * records one at a time (unj_see) as the checker walks them, judged at the
 * end (unj_judge).
 */
struct unj {
	unsigned workers;
	int stopped, interrupted;
	uint64_t *last;
	unsigned char *ok;
};

static void unj_init(struct unj *u, unsigned workers)
{
	memset(u, 0, sizeof *u);
	u->workers = workers;
	u->last = calloc(workers ? workers : 1, sizeof *u->last);
	u->ok = calloc(workers ? workers : 1, 1);
}

static void unj_free(struct unj *u)
{
	free(u->last);
	free(u->ok);
}

static inline void unj_see(struct unj *u, const struct jrec *r)
{
	if (r->worker == JOURNAL_DRIVER && r->type == EV_STOP && !u->stopped) {
		u->stopped = 1;
		u->interrupted = r->a != 0;
	}
	if (!u->last || !u->ok)
		return;
	if (r->worker < u->workers) {
		u->last[r->worker] = r->seq;
		/* its exit, or its crash: a crash fault journals itself last
		 * (built-in workers, and the driver for an adapter it or the
		 * shim killed) */
		u->ok[r->worker] = r->type == EV_WORKER_EXIT || (r->type == EV_FAULT && r->a == FK_CRASH);
	} else if (r->worker == JOURNAL_DRIVER && r->type == EV_KILLED && r->op < u->workers &&
		   r->seq > u->last[r->op]) {
		u->ok[r->op] = 1;
	}
}

static void unj_judge(const struct unj *u, const char *outdir, char *why, size_t len)
{
	if (why[0])
		return;
	if (!u->stopped) {
		snprintf(why, len, "the run did not finish (no end record in journal/driver.bin: was the driver killed?)");
		return;
	}
	/* An interrupted run is INCOMPLETE for that reason (the caller says so):
	 * journals missing or cut short by the interrupt are its marks, not damage. */
	if (u->interrupted)
		return;
	for (unsigned w = 0; w < u->workers; w++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/journal/w%04u.bin", outdir, w);
		if (access(p, F_OK) != 0) {
			snprintf(why, len, "journal/w%04u.bin is missing", w);
			return;
		}
	}
	/* A worker's journal ends with its EV_WORKER_EXIT, unless the driver saw
	 * it die after its last record: anything else lost its end (a record
	 * torn or cut off by something other than its writer's death). */
	if (!u->last || !u->ok)
		return;
	for (unsigned w = 0; w < u->workers; w++) {
		if (!u->ok[w]) {
			snprintf(why, len, "journal/w%04u.bin ends before its worker exited, and w%u was not killed", w, w);
			break;
		}
	}
}

/* The checker's record source: the journals' cursor, watched on the way. */
struct judge_src {
	struct journal_cursor *cur;
	struct unj u;
	struct check_input *in;
	const char *outdir;
	char damaged[200];
	int unordered;
};

static int judge_next(void *ctx, const struct jrec **r, size_t *n)
{
	struct judge_src *s = ctx;
	int k = journal_cursor_run(s->cur, r, n);
	if (k == 1)
		for (size_t i = 0; i < *n; i++)
			unj_see(&s->u, &(*r)[i]);
	if (k != 0)
		return k;
	size_t torn = 0;
	s->unordered = !journal_cursor_finish(s->cur, &torn, s->damaged, sizeof s->damaged);
	unj_judge(&s->u, s->outdir, s->damaged, sizeof s->damaged);
	s->in->torn_bytes = torn;
	s->in->unjudgeable = s->damaged[0] ? s->damaged : NULL;
	return 0;
}

/* The slow path, for journals not in seq order: all records, sorted. */
static int judge_sorted(const struct run_config *cfg, const char *outdir, struct check_input *in,
			struct check_result *res, struct jrec **rec, char *damaged, size_t dlen,
			unsigned *files, char *why, size_t len)
{
	size_t n = 0, torn = 0;
	if (journal_read_dir_checked(outdir, rec, &n, &torn, files, damaged, dlen) != 0) {
		snprintf(why, len, "cannot read journals in %s/journal: %s", outdir, strerror(errno));
		return -1;
	}
	struct unj u;
	unj_init(&u, cfg->workers);
	for (size_t i = 0; i < n; i++)
		unj_see(&u, &(*rec)[i]);
	unj_judge(&u, outdir, damaged, dlen);
	unj_free(&u);
	in->rec = *rec;
	in->n = n;
	in->next = NULL;
	in->next_run = NULL;
	in->torn_bytes = torn;
	in->unjudgeable = damaged[0] ? damaged : NULL;
	if (check_run(in, res) != 0) {
		snprintf(why, len, "checker: %s", strerror(errno));
		return -1;
	}
	return 0;
}

int driver_verdict(const struct run_config *cfg, const char *outdir, struct check_result *res,
		   unsigned *files, char *why, size_t len)
{
	struct jrec *rec = NULL;
	struct judge_src src = { .outdir = outdir };
	unj_init(&src.u, cfg->workers);
	if (journal_cursor_open(outdir, &src.cur, files) != 0) {
		snprintf(why, len, "cannot read journals in %s/journal: %s", outdir, strerror(errno));
		unj_free(&src.u);
		return -1;
	}
	int64_t *stale = calloc(cfg->workers, sizeof *stale);
	int64_t *budget = calloc(cfg->workers, sizeof *budget);
	const char **proto_of = calloc(cfg->workers, sizeof *proto_of);
	const char **rev_of = calloc(cfg->workers, sizeof *rev_of);
	char *final = NULL, *snap = NULL;
	size_t final_len = 0, snap_len = 0;
	int rc = -1;
	if (!stale || !budget || !proto_of || !rev_of) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < cfg->workers; i++) {
		stale[i] = runcfg_stale_ms(cfg, i);
		budget[i] = runcfg_budget_ms(cfg, i);
		proto_of[i] = cfg->proto[cfg_proto_slot(cfg, i)]->name;
		rev_of[i] = cfg_slot_label(cfg, i);
	}
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/final-state.json", outdir);
	final = fsutil_slurp(p, &final_len);
	/* the append workload's snapshot file, kept beside the final journal */
	if (cfg->workload->flags & WL_CHECK_SEQ) {
		snprintf(p, sizeof p, "%s/final-snapshot.json", outdir);
		snap = fsutil_slurp(p, &snap_len);
	}
	struct check_input in = {
		.next_run = judge_next,
		.next_ctx = &src,
		.workers = cfg->workers,
		.stale_ms = stale,
		.budget_ms = budget,
		.proto_of = proto_of,
		.rev_of = rev_of,
		.strict = cfg->strict,
		.check_state = (cfg->workload->flags & WL_CHECK_STATE) != 0,
		.check_seq = (cfg->workload->flags & WL_CHECK_SEQ) != 0,
		.check_stale_read = (cfg->workload->flags & WL_CHECK_STALE_READ) != 0,
		.final_state = final,
		.final_len = final_len,
		.final_snapshot = snap,
		.final_snapshot_len = snap_len,
	};
	src.in = &in;
	/* one streaming pass over the journals; memory bounded by the workers
	 * and what is open at once, not by the history */
	if (check_run(&in, res) != 0) {
		snprintf(why, len, "checker: %s", strerror(errno));
		goto out;
	}
	if (src.unordered &&
	    judge_sorted(cfg, outdir, &in, res, &rec, src.damaged, sizeof src.damaged, files, why, len) != 0)
		goto out;
	rc = 0;
out:
	journal_cursor_close(src.cur);
	unj_free(&src.u);
	free(snap);
	free(final);
	free(proto_of);
	free(rev_of);
	free(budget);
	free(stale);
	free(rec);
	return rc;
}

/* V is the run's verdict: the checker's (verdict_from_check), and whatever
 * only the run knows. */
void driver_finish_report(const struct run_config *cfg, const struct check_result *res,
			  const struct verdict *v, const struct report_live *live, const char *outdir,
			  int write_outdir_json)
{
	if (cfg->quiet)
		verdict_print(stdout, v);
	else
		report_print_text(stdout, cfg, res, v, live);
	if (write_outdir_json) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/report.json", outdir);
		if (report_write_json(p, cfg, res, v, live) != 0)
			fprintf(stderr, "lockstorm: cannot write %s: %s\n", p, strerror(errno));
	}
	if (cfg->json_path[0] && report_write_json(cfg->json_path, cfg, res, v, live) != 0)
		fprintf(stderr, "lockstorm: cannot write %s: %s\n", cfg->json_path, strerror(errno));
	if (cfg->junit_path[0] && junit_write_result(cfg->junit_path, cfg, res, v) != 0)
		fprintf(stderr, "lockstorm: cannot write %s: %s\n", cfg->junit_path, strerror(errno));
}

int driver_check(const char *outdir, int quiet, const char *json_path)
{
	return driver_check_junit(outdir, quiet, json_path, NULL);
}

int driver_check_junit(const char *outdir, int quiet, const char *json_path, const char *junit_path)
{
	static struct run_config cfg;
	char why[512], p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/run.json", outdir);
	if (access(p, F_OK) != 0) {
		fprintf(stderr, "lockstorm: %s has no run.json: not a kept run (use run -o OUTDIR)\n", outdir);
		return 2;
	}
	if (runcfg_load(&cfg, p, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	snprintf(cfg.outdir, sizeof cfg.outdir, "%s", outdir);
	cfg.quiet = quiet;
	if (json_path)
		snprintf(cfg.json_path, sizeof cfg.json_path, "%s", json_path);
	if (junit_path)
		snprintf(cfg.junit_path, sizeof cfg.junit_path, "%s", junit_path);
	struct check_result res;
	unsigned files = 0;
	if (driver_verdict(&cfg, outdir, &res, &files, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	if (files == 0) {
		fprintf(stderr, "lockstorm: no journals in %s/journal\n", outdir);
		return 2;
	}
	struct verdict v;
	verdict_from_check(&v, &res);
	/* the driver's stop record says whether the run was interrupted */
	struct jrec *drec = NULL;
	size_t dn = 0, dtorn = 0;
	snprintf(p, sizeof p, "%s/journal/driver.bin", outdir);
	if (journal_read_file(p, &drec, &dn, &dtorn) == 0)
		for (size_t i = 0; i < dn; i++)
			if (drec[i].type == EV_STOP && drec[i].a)
				verdict_incomplete(&v, "the run was interrupted");
	free(drec);
	driver_finish_report(&cfg, &res, &v, NULL, outdir, 0);
	return verdict_exit(&v);
}
