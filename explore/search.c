/*
 * search.c - the search of `lockstorm explore` in one process (see explore.h,
 * docs/explore.md): the loop, and for each failure found: more search for a shorter story,
 * shrink, print, save.  The other parts are beside it (xint.h lists them).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../check/checker.h"
#include "../check/verdict.h"
#include "../report/junit.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"
#include "xext.h"

volatile sig_atomic_t x_interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	x_interrupted = 1;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- explore ---- */

/* --junit: a testcase per invariant, failing with its distinct counterexamples
 * (files, story lengths, the replay command); an error testcase when the
 * search itself failed (rc 3). */
void explore_junit(const struct xcfg *cfg, const struct found *found, size_t nfound, int rc, double elapsed)
{
	char names[256] = "", suite[400], cls[300];
	size_t used = 0;
	for (unsigned i = 0; i < cfg->run.nproto; i++)
		used += (size_t)snprintf(names + used, used < sizeof names ? sizeof names - used : 0, "%s%s",
					 i ? "," : "", cfg->run.proto[i]->name);
	snprintf(suite, sizeof suite, "lockstorm explore %s/%s", names, cfg->run.workload->name);
	snprintf(cls, sizeof cls, "lockstorm.explore.%s.%s", names, cfg->run.workload->name);
	struct junit_doc *d = junit_doc_open();
	if (!d)
		return;
	junit_doc_suite(d, suite);
	char seed[32];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)cfg->run.seed);
	junit_doc_property(d, "seed", seed);
	for (int k = 0; k < INV__COUNT; k++) {
		char *text = NULL, msg[300];
		size_t tlen = 0;
		unsigned hits = 0;
		size_t shortest = 0;
		FILE *t = open_memstream(&text, &tlen);
		for (size_t i = 0; i < nfound; i++) {
			if (found[i].inv != k)
				continue;
			if (!hits++ || found[i].story_steps < shortest)
				shortest = found[i].story_steps;
			if (t)
				fprintf(t, "%s: a %zu-step story; lockstorm replay %s\n", found[i].file, found[i].story_steps,
					found[i].file);
		}
		if (t)
			fclose(t);
		snprintf(msg, sizeof msg, "%u distinct counterexample%s, the shortest a %zu-step story", hits,
			 hits == 1 ? "" : "s", shortest);
		junit_doc_case(d, cls, check_inv_name((enum inv_id)k), 0, hits ? JUNIT_FAILURE : JUNIT_PASS, msg, text);
		free(text);
	}
	if (rc == 3)
		junit_doc_case(d, cls, "harness", elapsed, JUNIT_ERROR, "the search failed (exit 3)", NULL);
	if (junit_doc_write(d, cfg->junit) != 0)
		fprintf(stderr, "lockstorm: explore: cannot write %s: %s\n", cfg->junit, strerror(errno));
	junit_doc_free(d);
}

/* A mixed fleet (-p A,B or a --param list): which revision each worker ran,
 * and the revision of the worker the violation's first example names. */
static void revisions_print(FILE *out, const struct explorer *ex, const struct xexec *x, json_t *cj)
{
	const struct run_config *r = &ex->cfg->run;
	if (r->instances > 1) { /* --param instances=N: which workers are one process */
		json_t *pa = json_array();
		fprintf(out, "  processes:");
		for (unsigned w = 0; w < x->sh.n; w++) {
			unsigned first = cfg_pid_worker(r, w);
			if (first == w)
				fprintf(out, "%s pid %d =", w ? ";" : "", SCHED_VPID_BASE + (int)first);
			fprintf(out, " w%u", w);
			json_array_append_new(pa, json_integer(SCHED_VPID_BASE + (int)first));
		}
		fprintf(out, " (module instances of one process share its pid)\n");
		json_object_set_new(cj, "pid_of_worker", pa);
	}
	if (r->nproto < 2)
		return;
	json_t *a = json_array();
	fprintf(out, "  workers:");
	for (unsigned w = 0; w < x->sh.n; w++) {
		fprintf(out, "%s w%u %s", w ? "," : "", w, ex->rev_of[w]);
		json_array_append_new(a, json_string(ex->rev_of[w]));
	}
	fprintf(out, "\n");
	json_object_set_new(cj, "revision_of_worker", a);
	const struct check_inv *ci = x->inv >= 0 && x->inv < INV__COUNT ? &x->res.inv[x->inv] : NULL;
	int w = ci && ci->nex ? ci->ex[0].worker[0] : -1;
	if (w >= 0 && (unsigned)w < x->sh.n) {
		fprintf(out, "  caused by: w%d, a %s worker\n", w, ex->rev_of[w]);
		json_object_set_new(cj, "caused_by", json_pack("{s:i,s:s}", "worker", w, "revision", ex->rev_of[w]));
	}
}

/* A failing schedule kept for shrinking: its shape and deviations. */
struct xcand {
	struct xshape sh;
	struct xchoice *dev;
	size_t ndev, len;
};

#define X_POLISH_KEEP 3

/* Keep the X_POLISH_KEEP failures with the shortest stories (X's journal is current). */
static void cand_offer(struct xcand *c, size_t *nc, const struct explorer *ex, const struct xexec *x)
{
	size_t len = story_len(ex, x);
	size_t at = *nc < X_POLISH_KEEP ? (*nc)++ : X_POLISH_KEEP - 1;
	if (at == X_POLISH_KEEP - 1 && *nc == X_POLISH_KEEP && c[at].dev && c[at].len <= len)
		return;
	free(c[at].dev);
	c[at].sh = x->sh;
	c[at].ndev = x->ndev;
	c[at].len = len;
	c[at].dev = malloc((x->ndev + 1) * sizeof *c[at].dev);
	if (c[at].dev && x->ndev) /* x->dev is NULL when it has none: memcpy(NULL, 0) is undefined */
		memcpy(c[at].dev, x->dev, x->ndev * sizeof *c[at].dev);
	for (size_t i = at; i > 0 && c[i].len < c[i - 1].len; i--) {
		struct xcand t = c[i];
		c[i] = c[i - 1];
		c[i - 1] = t;
	}
}

const char *strategy_name(int strategy)
{
	return strategy == XS_RANDOM ? "random" : strategy == XS_PCT ? "pct" : strategy == XS_GUIDED ? "guided" : "dfs";
}

static struct xcfg cfg;

/* -j: schedule number LOCAL of this process is the search's number
 * local * jobs + part; it runs its share of --schedules. */
static uint64_t gnum(uint64_t local)
{
	return local * (cfg.jobs ? cfg.jobs : 1) + cfg.part;
}

static uint64_t quota(void)
{
	uint64_t j = cfg.jobs ? cfg.jobs : 1;
	return cfg.schedules > cfg.part ? (cfg.schedules - cfg.part + j - 1) / j : 0;
}

/* The search's schedule number G (of all -j processes'): first, in a process
 * of -j, the schedules below X_CALIBRATE that are other processes' and not
 * run yet (only for their decision counts: the strategies' scale is taken
 * from every schedule below X_CALIBRATE, whoever runs it), then G. */
static uint64_t cal_next;

static int run_numbered(struct explorer *ex, struct strategy *st, const struct xshape *sh, uint64_t g,
			struct xexec *x)
{
	/* a calibration schedule's every decision is the controller's: it
	 * gathers the fault atoms each offers (x->atoms), which the hand-off's
	 * decisions would not list */
	ex->calibrating = 1;
	for (; cal_next < g && cal_next < X_CALIBRATE; cal_next++) {
		if (run_schedule(ex, &cfg, st, sh, cal_next, x) != 0) {
			ex->calibrating = 0;
			return -1;
		}
		if (ex->cal_execs < X_CALIBRATE)
			ex->cal_dec[ex->cal_execs] = x->decisions;
		ex->cal_execs++;
		ex->cal_dsum += x->decisions;
		ex->cal_atoms |= x->atoms;
		if (x->decisions > ex->cal_kest)
			ex->cal_kest = x->decisions;
	}
	ex->calibrating = g < X_CALIBRATE && g >= cal_next;
	int r = run_schedule(ex, &cfg, st, sh, g, x);
	ex->calibrating = 0;
	if (r == 0 && g < X_CALIBRATE && g >= cal_next) {
		cal_next = g + 1;
		if (ex->cal_execs < X_CALIBRATE)
			ex->cal_dec[ex->cal_execs] = x->decisions;
		ex->cal_execs++;
		ex->cal_dsum += x->decisions;
		ex->cal_atoms |= x->atoms;
		if (x->decisions > ex->cal_kest)
			ex->cal_kest = x->decisions;
	}
	return r;
}

int explore_search(const struct xcfg *c)
{
	char why[1024];
	if (c != &cfg)
		cfg = *c;
	const int child = cfg.jobs > 1; /* a process of -j: the parent prints the findings */
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		explorer_close(&ex);
		return 3;
	}
	const unsigned n = cfg.run.workers, ops = cfg.ops;
	const struct xshape sh0 = shape_even(n, ops);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (!cfg.quiet)
		say_config(&cfg);

	struct xexec x = { 0 };
	struct strategy st = { .dfs = { NULL, 0, 0, cfg.preempt, 0 } };
	if (cfg.strategy == XS_GUIDED && !(st.guided = guided_new())) {
		fprintf(stderr, "lockstorm: explore: out of memory\n");
		explorer_close(&ex);
		return 3;
	}
	struct xdfs *const dfsp = &st.dfs;
	struct found *found = NULL;
	size_t nfound = 0, failures = 0;
	uint64_t bounded = 0;
	int rc = 0, exhausted = 0;
	double pct_bound = 0;
	int tty = isatty(STDERR_FILENO) && !cfg.quiet;
	int64_t t0 = mono_ms(), last_status = t0, shrink_ms = 0;
	unsigned shrink_runs = 0;
	uint64_t sched_no = 0;
	for (;;) {
		if (x_interrupted || (cfg.schedules && sched_no >= quota()) || mono_ms() - t0 >= cfg.budget_ms)
			break;
		int er = run_numbered(&ex, &st, &sh0, gnum(sched_no), &x);
		sched_no++;
		if (er != 0) {
			fprintf(stderr, "lockstorm: explore: schedule %llu: %s\n", (unsigned long long)sched_no, x.why);
			rc = 3;
			break;
		}
		size_t np0 = ex.npairs;
		cover(&ex, &x);
		if (st.guided)
			guided_learn(st.guided, &ex, &x, ex.npairs > np0);
		bounded += x.outcome == XO_BOUND;
		if (cfg.verbose)
			fprintf(stderr, "schedule %llu: %zu steps, %s%s\n", (unsigned long long)sched_no, x.nstep,
				x.outcome == XO_FAIL ? check_inv_name((enum inv_id)x.inv)
				: x.outcome == XO_BOUND ? "cut at the step bound" : "pass",
				x_plan_words(cfg.strategy == XS_PCT ? &st.pct.f : &st.rnd.f, cfg.strategy));
		if (x.outcome == XO_FAIL) {
			failures++;
			int64_t found_at = mono_ms();
			const uint64_t found_sched = gnum(sched_no - 1) + 1;
			if (!cfg.quiet)
				fprintf(stderr, "%sfound %s in schedule %llu after %.2f s%s\n", tty ? "\r\033[K" : "",
					check_inv_name((enum inv_id)x.inv), (unsigned long long)sched_no,
					(double)(found_at - t0) / 1000.0, cfg.no_shrink ? "" : "; shrinking");
			struct xexec keep = { 0 };
			unsigned runs = 0;
			if (cfg.no_shrink || cfg.strategy == XS_DFS || cfg.all) {
				/* the DFS stack must survive: shrink a copy */
				x_replay(&ex, &x.sh, x.dev, x.ndev, &keep);
				runs = cfg.no_shrink ? 0 : shrink(&ex, &keep);
			} else {
				/* a little more search for the same failure with a shorter
				 * story, then shrink the shortest few and keep the best */
				struct xcand cand[X_POLISH_KEEP] = { { .dev = NULL } };
				size_t nc = 0;
				cand_offer(cand, &nc, &ex, &x);
				int inv = x.inv;
				uint64_t extra = sched_no < 100 ? 100 : sched_no > 1000 ? 1000 : sched_no;
				for (uint64_t e = 0; e < extra && !x_interrupted && mono_ms() - t0 < cfg.budget_ms &&
						     (!cfg.schedules || sched_no < quota()); e++) {
					if (run_numbered(&ex, &st, &sh0, gnum(sched_no++), &x) == 0 &&
					    x.outcome == XO_FAIL && x.inv == inv)
						cand_offer(cand, &nc, &ex, &x);
				}
				found_at = mono_ms(); /* the search went on until here; shrinking starts */
				size_t best_len = SIZE_MAX;
				for (size_t i = 0; i < nc; i++) {
					struct xexec t = { 0 };
					if (!cand[i].dev || x_replay(&ex, &cand[i].sh, cand[i].dev, cand[i].ndev, &t) != 0 ||
					    t.outcome != XO_FAIL || t.inv != inv) {
						xexec_free(&t);
						continue;
					}
					runs += 1 + shrink(&ex, &t);
					x_rerun(&ex, &t);
					size_t len = story_len(&ex, &t);
					if (len < best_len) {
						best_len = len;
						xexec_free(&keep);
						keep = t;
					} else {
						xexec_free(&t);
					}
				}
				for (size_t i = 0; i < nc; i++)
					free(cand[i].dev);
			}
			struct xexec *fx = &keep;
			shrink_runs += runs;
			if (!fx->sh.n) { /* cannot happen: the failure replays */
				fprintf(stderr, "lockstorm: explore: the failure of schedule %llu did not replay\n",
					(unsigned long long)found_sched);
				rc = 3;
				break;
			}
			/* the journal in the mapping is the last replay's: make it this one's */
			x_rerun(&ex, fx);
			shrink_ms += mono_ms() - found_at;
			uint64_t sig = failure_sig(&ex, fx);
			int dup = 0;
			for (size_t i = 0; i < nfound; i++)
				dup |= found[i].sig == sig;
			if (!dup) {
				struct found *g = realloc(found, (nfound + 1) * sizeof *g);
				if (g) {
					found = g;
					struct found *f = &found[nfound++];
					memset(f, 0, sizeof *f);
					f->sig = sig;
					f->inv = fx->inv;
					if (!cfg.no_shrink && !cfg.quiet) {
						char ops[128];
						shape_ops(&fx->sh, ops, sizeof ops);
						fprintf(stderr, "shrunk to %u workers x %s ops, %zu choices (%u replays)\n",
							fx->sh.n, ops, fx->ndev, runs);
					}
					/* a process of -j tells its findings to the parent, which prints them */
					size_t tlen = 0;
					FILE *fo = child ? open_memstream(&f->text, &tlen) : stdout;
					if (!fo)
						fo = stdout;
					f->sched = found_sched;
					if (fo == stdout)
						printf("failure %zu: %s\n", nfound, check_inv_name((enum inv_id)fx->inv));
					story_print(fo, &ex, fx, 0, NULL);
					violation_print(fo, fx);
					snprintf(f->file, sizeof f->file, "%s/cex-%zu.json", cfg.outdir, nfound);
					json_t *cj = cex_json(&ex, fx, strategy_name(cfg.strategy), found_sched);
					revisions_print(fo, &ex, fx, cj);
					if (fo != stdout)
						fclose(fo);
					if (fsx_mkdir_p(cfg.outdir) != 0 || /* the controller is unbound: plain calls */ json_dump_file(cj, f->file, JSON_INDENT(1)) != 0) {
						fprintf(stderr, "lockstorm: cannot write %s: %s\n", f->file, strerror(errno));
						f->file[0] = '\0';
					} else if (!child) {
						printf("  saved: %s (replay: lockstorm replay %s)\n", f->file, f->file);
					}
					f->story_steps = json_array_size(json_object_get(cj, "story"));
					json_decref(cj);
				}
			}
			xexec_free(&keep);
			rc = 1;
			if (!cfg.all)
				break;
		}
		if (cfg.strategy == XS_DFS && !dfs_next(dfsp, x.decisions)) {
			exhausted = 1;
			break;
		}
		if (tty && mono_ms() - last_status >= 500) {
			double el = (double)(mono_ms() - t0) / 1000.0;
			fprintf(stderr, "\r\033[Kexplore: %llu schedules, %.0f/s, %zu failures, %zu distinct",
				(unsigned long long)sched_no, (double)sched_no / el, failures, nfound);
			last_status = mono_ms();
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	double elapsed = (double)(mono_ms() - t0) / 1000.0;
	double search_s = (double)(mono_ms() - t0 - shrink_ms) / 1000.0;
	double rate = search_s > 0 ? (double)sched_no / search_s : 0;
	json_t *hit = json_array(), *missed = json_array();
	unsigned nhit = 0, nall = 0;
	coverage_lists(&ex, hit, missed, &nhit, &nall);
	if (cfg.strategy == XS_PCT && ex.kest)
		pct_bound = 1.0 / ((double)n * pow((double)ex.kest, (double)cfg.pct_d - 1));
	struct verdict v;
	verdict_init(&v);
	for (size_t i = 0; i < nfound; i++)
		verdict_fail(&v, NULL, check_inv_name((enum inv_id)found[i].inv));
	if (rc == 1 && !nfound) /* a failure it could not keep (out of memory) is still one */
		verdict_fail(&v, NULL, check_inv_name(INV__COUNT));
	/* stopped before its budget: what it did not search proves nothing (a
	 * failure already found still stands: FAIL) */
	if (x_interrupted && rc != 3) {
		char why[160];
		if (cfg.schedules)
			snprintf(why, sizeof why, "interrupted after %.1f s of %g s, %llu of %llu schedules", elapsed,
				 (double)cfg.budget_ms / 1000.0, (unsigned long long)sched_no,
				 (unsigned long long)cfg.schedules);
		else
			snprintf(why, sizeof why, "interrupted after %.1f s of %g s", elapsed, (double)cfg.budget_ms / 1000.0);
		verdict_incomplete(&v, why);
		if (rc == 0)
			rc = VERDICT_EXIT_INCOMPLETE;
	}
	if (rc != 3) {
		printf("explored %llu schedules (%llu steps) in %.2f s: %.0f schedules/s%s\n", (unsigned long long)sched_no,
		       (unsigned long long)ex.steps, elapsed, rate, shrink_runs ? " (shrinking not counted)" : "");
		if (cfg.strategy == XS_PCT)
			printf("pct d=%u: each schedule finds a bug of depth <= %u with probability >= 1/(n*k^(d-1)) = "
			       "%.3g (n = %u workers, k = %u steps)\n", cfg.pct_d, cfg.pct_d, pct_bound, n, ex.kest);
		if (cfg.strategy == XS_DFS)
			printf("dfs preempt <= %u: bounded space %s after %llu schedules%s\n", cfg.preempt,
			       exhausted ? "exhausted" : "NOT exhausted", (unsigned long long)sched_no,
			       exhausted ? "" : rc == 1 && !cfg.all ? " (stopped at the first failure)"
			       : " (schedule or time budget spent)");
		if (dfsp->mismatch)
			printf("warning: %llu replays of a prefix saw other options (nondeterminism)\n",
			       (unsigned long long)dfsp->mismatch);
		if (bounded)
			printf("%llu schedules cut at the step bound (--max-steps %u)\n", (unsigned long long)bounded,
			       cfg.max_steps);
		printf("coverage: %u of %u points", nhit, nall);
		if (json_array_size(missed)) {
			printf(" (not hit:");
			for (size_t i = 0; i < json_array_size(missed) && i < 6; i++)
				printf(" %s", json_string_value(json_array_get(missed, i)));
			if (json_array_size(missed) > 6)
				printf(" ...");
			printf(")");
		}
		printf(", %zu ordered step pairs across workers\n", ex.npairs);
		if (rc != 1)
			printf(x_interrupted ? "nothing found before the interrupt\n" : "nothing found\n");
		verdict_print(stdout, &v);
	}
	if (cfg.json[0]) {
		json_t *fl = json_array();
		for (size_t i = 0; i < nfound; i++) {
			char sig[24];
			snprintf(sig, sizeof sig, "%016llx", (unsigned long long)found[i].sig);
			json_t *e = json_pack("{s:s,s:s,s:I,s:s,s:I}", "invariant", check_inv_name((enum inv_id)found[i].inv),
					      "file", found[i].file, "story_steps", (json_int_t)found[i].story_steps,
					      "signature", sig, "schedule", (json_int_t)found[i].sched);
			if (found[i].text)
				json_object_set_new(e, "text", json_string(found[i].text));
			json_array_append_new(fl, e);
		}
		json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:I,s:I,s:I,s:f,s:f,s:b,s:I,s:o,s:{s:i,s:i,s:o,s:o,s:I},s:s}",
				      "schema", "lockstorm-explore/1",
				      "strategy", strategy_name(cfg.strategy),
				      "workers", n, "ops", ops, "seed", (json_int_t)cfg.run.seed,
				      "schedules", (json_int_t)sched_no, "steps", (json_int_t)ex.steps,
				      "elapsed_s", elapsed, "schedules_per_s", rate, "exhausted", exhausted,
				      "failures", (json_int_t)failures, "distinct", fl,
				      "coverage", "points_hit", nhit, "points", nall, "hit", hit, "missed", missed,
				      "step_pairs", (json_int_t)ex.npairs,
				      "verdict", rc == 3 ? "error" : verdict_json(&v));
		hit = missed = NULL;
		json_object_set_new(o, "complete", json_boolean(!v.incomplete && rc != 3));
		if (v.incomplete)
			json_object_set_new(o, "incomplete_reason", json_string(v.why));
		if (cfg.strategy == XS_PCT)
			json_object_set_new(o, "pct_probability_bound", json_real(pct_bound));
		if (json_dump_file(o, cfg.json, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm: cannot write %s\n", cfg.json);
			if (rc == 0)
				rc = 3;
		}
		json_decref(o);
	}
	if (cfg.junit[0])
		explore_junit(&cfg, found, nfound, rc, elapsed);
	json_decref(hit);
	json_decref(missed);
	if (x_interrupted)
		fprintf(stderr, "lockstorm: interrupted before the %s was spent\n", cfg.schedules ? "schedule budget" : "time budget");
	for (size_t i = 0; i < nfound; i++)
		free(found[i].text);
	free(found);
	free(dfsp->node);
	guided_free(st.guided);
	xexec_free(&x);
	explorer_close(&ex);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

