/*
 * parallel.c - `lockstorm explore -j N`: one explorer process per core.
 *
 * Process k (0..N-1) runs the ordinary search (search.c) on its own CPU,
 * in its own scratch directory, on the schedule numbers k, k+N, k+2N, ..
 * below --schedules: the partition of the schedule space is fixed by the
 * numbers, not by who is faster.  Random and PCT draw schedule K from
 * (seed, K) alone, so -j N runs exactly the schedules -j 1 runs; guided
 * learns from what its own process ran, so its schedules depend on N but
 * not on timing.  Each process writes its summary (every distinct failure
 * with its signature, schedule number and story) to a scratch file; the
 * parent merges them by failure signature, the earliest schedule first, and
 * saves the counterexamples as -o DIR/cex-N.json.  With --schedules spent
 * before the time budget, the same seed gives the same set of findings
 * whatever the timing.  An interrupted process makes the whole search
 * INCOMPLETE (as one process's interrupt does); one that failed (exit 3)
 * makes it fail.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>

#include "../check/verdict.h"
#include "../faults/fsx.h"
#include "../run/rundir.h"
#include "xint.h"

#define PX_MAX 64

static pid_t px_pid[PX_MAX];
static unsigned px_n;

static void px_forward(int sig)
{
	x_interrupted = 1;
	for (unsigned i = 0; i < px_n; i++)
		if (px_pid[i] > 0)
			kill(px_pid[i], sig);
}

static int64_t px_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The K-th CPU of the ones we may run on (wrapping). */
static void px_pin(unsigned k)
{
	cpu_set_t set, one;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return;
	int n = CPU_COUNT(&set);
	if (n < 1)
		return;
	int want = (int)(k % (unsigned)n), seen = 0;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set) && seen++ == want) {
			CPU_ZERO(&one);
			CPU_SET(c, &one);
			sched_setaffinity(0, sizeof one, &one);
			return;
		}
}

struct px_find {
	struct found f;
	char src[PATH_MAX + 32];
	unsigned proc;
};

static int px_cmp(const void *a, const void *b)
{
	const struct px_find *x = a, *y = b;
	return x->f.sched < y->f.sched ? -1 : x->f.sched > y->f.sched;
}

static int px_has(json_t *arr, const char *s)
{
	size_t i;
	json_t *v;
	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

int parallel_explore(struct xcfg *cfg)
{
	const unsigned n = cfg->jobs;
	struct stat sb;
	const char *base = cfg->dir[0] ? cfg->dir : stat("/dev/shm", &sb) == 0 ? "/dev/shm" : "/tmp";
	struct rundir jd;
	char why[PATH_MAX + 128];
	rundir_sweep_stale_in(base); /* a SIGKILLed explorer's */
	if (rundir_temp_in(&jd, base, "lockstorm-j", ".lockstorm-owned", why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: explore -j: %s\n", why);
		return 3;
	}
	const char *tmp = jd.path;
	if (!cfg->quiet) {
		say_config(cfg);
		fprintf(stderr, "lockstorm explore: -j %u: %u explorer processes, schedules k, k+%u, .. each\n", n, n, n);
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = px_forward;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	fflush(NULL);
	int64_t t0 = px_ms();
	px_n = n;
	for (unsigned k = 0; k < n; k++) {
		pid_t p = fork();
		if (p < 0) {
			fprintf(stderr, "lockstorm: explore -j: fork: %s\n", strerror(errno));
			px_forward(SIGTERM);
			px_n = k;
			break;
		}
		if (p == 0) {
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			struct xcfg c = *cfg;
			c.part = k;
			c.quiet = 1;
			c.verbose = 0;
			c.junit[0] = '\0';
			snprintf(c.json, sizeof c.json, "%s/j%u.json", tmp, k);
			snprintf(c.outdir, sizeof c.outdir, "%s/out%u", tmp, k);
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0) {
				dup2(null, STDOUT_FILENO);
				close(null);
			}
			if (!c.no_pin)
				px_pin(k);
			_exit(explore_search(&c));
		}
		px_pid[k] = p;
	}
	int rc_of[PX_MAX];
	int harness = 0;
	for (unsigned k = 0; k < px_n; k++) {
		int status;
		pid_t r;
		while ((r = waitpid(px_pid[k], &status, 0)) < 0 && errno == EINTR)
			;
		rc_of[k] = r < 0 ? 3 : WIFEXITED(status) ? WEXITSTATUS(status) : 3;
		harness |= rc_of[k] == 3 || rc_of[k] == 2;
		px_pid[k] = 0;
	}
	harness |= px_n < n;
	double elapsed = (double)(px_ms() - t0) / 1000.0;

	/* merge */
	struct px_find *fl = NULL;
	size_t nf = 0;
	uint64_t scheds = 0, steps = 0, failures = 0, pairs = 0;
	double search_s = 0;
	json_t *hit = json_array(); /* the union of the points hit */
	int nall = 0;
	char incomplete[200] = "";
	for (unsigned k = 0; k < px_n; k++) {
		char p[PATH_MAX + 32];
		snprintf(p, sizeof p, "%s/j%u.json", tmp, k);
		json_t *o = json_load_file(p, 0, NULL);
		if (!o) {
			harness = 1;
			continue;
		}
		json_int_t s = json_integer_value(json_object_get(o, "schedules"));
		double rate = json_number_value(json_object_get(o, "schedules_per_s"));
		scheds += (uint64_t)s;
		steps += (uint64_t)json_integer_value(json_object_get(o, "steps"));
		failures += (uint64_t)json_integer_value(json_object_get(o, "failures"));
		if (rate > 0 && (double)s / rate > search_s)
			search_s = (double)s / rate;
		json_t *cov = json_object_get(o, "coverage");
		if ((json_int_t)pairs < json_integer_value(json_object_get(cov, "step_pairs")))
			pairs = (uint64_t)json_integer_value(json_object_get(cov, "step_pairs"));
		nall = (int)json_integer_value(json_object_get(cov, "points"));
		size_t i;
		json_t *v;
		json_array_foreach(json_object_get(cov, "hit"), i, v)
			if (!px_has(hit, json_string_value(v)))
				json_array_append(hit, v);
		const char *why = json_string_value(json_object_get(o, "incomplete_reason"));
		if (why && !incomplete[0])
			snprintf(incomplete, sizeof incomplete, "explorer process %u of %u: %s", k + 1, n, why);
		json_array_foreach(json_object_get(o, "distinct"), i, v) {
			struct px_find *g = realloc(fl, (nf + 1) * sizeof *g);
			if (!g)
				break;
			fl = g;
			struct px_find *e = &fl[nf++];
			memset(e, 0, sizeof *e);
			const char *inv = json_string_value(json_object_get(v, "invariant"));
			e->f.inv = INV__COUNT;
			for (int q = 0; q < INV__COUNT && inv; q++)
				if (!strcmp(inv, check_inv_name((enum inv_id)q)))
					e->f.inv = q;
			e->f.sig = strtoull(json_string_value(json_object_get(v, "signature")) ?: "0", NULL, 16);
			e->f.sched = (uint64_t)json_integer_value(json_object_get(v, "schedule"));
			e->f.story_steps = (size_t)json_integer_value(json_object_get(v, "story_steps"));
			const char *t = json_string_value(json_object_get(v, "text"));
			e->f.text = t ? strdup(t) : NULL;
			snprintf(e->src, sizeof e->src, "%s", json_string_value(json_object_get(v, "file")) ?: "");
			e->proc = k;
		}
		json_decref(o);
	}
	if (nf) /* a NULL pointer even with a length of 0 is undefined */
		qsort(fl, nf, sizeof *fl, px_cmp);
	struct found *found = calloc(nf + 1, sizeof *found);
	size_t nfound = 0;
	for (size_t i = 0; found && i < nf; i++) {
		int dup = 0;
		for (size_t j = 0; j < nfound; j++)
			dup |= found[j].sig == fl[i].f.sig;
		if (dup)
			continue;
		struct found *f = &found[nfound++];
		*f = fl[i].f;
		f->text = NULL;
		printf("failure %zu: %s (schedule %llu, explorer process %u)\n", nfound,
		       check_inv_name((enum inv_id)f->inv), (unsigned long long)f->sched, fl[i].proc + 1);
		if (fl[i].f.text)
			fputs(fl[i].f.text, stdout);
		snprintf(f->file, sizeof f->file, "%s/cex-%zu.json", cfg->outdir, nfound);
		json_t *cj = fl[i].src[0] ? json_load_file(fl[i].src, 0, NULL) : NULL;
		if (!cj || fsx_mkdir_p(cfg->outdir) != 0 || json_dump_file(cj, f->file, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm: cannot write %s: %s\n", f->file, strerror(errno));
			f->file[0] = '\0';
		} else {
			printf("  saved: %s (replay: lockstorm replay %s)\n", f->file, f->file);
		}
		json_decref(cj);
	}
	for (size_t i = 0; i < nf; i++)
		free(fl[i].f.text);
	free(fl);
	if (!found)
		harness = 1;

	int rc = harness ? 3 : nfound || failures ? 1 : 0;
	struct verdict v;
	verdict_init(&v);
	for (size_t i = 0; i < nfound; i++)
		verdict_fail(&v, NULL, check_inv_name((enum inv_id)found[i].inv));
	if (rc != 3 && incomplete[0]) {
		verdict_incomplete(&v, incomplete);
		if (rc == 0)
			rc = VERDICT_EXIT_INCOMPLETE;
	}
	double rate = search_s > 0 ? (double)scheds / search_s : 0;
	if (rc != 3) {
		printf("explored %llu schedules (%llu steps) in %.2f s with %u processes: %.0f schedules/s\n",
		       (unsigned long long)scheds, (unsigned long long)steps, elapsed, n, rate);
		printf("coverage: %zu of %d points, up to %llu ordered step pairs across workers in one process\n",
		       json_array_size(hit), nall, (unsigned long long)pairs);
		if (rc != 1)
			printf(x_interrupted ? "nothing found before the interrupt\n" : "nothing found\n");
		verdict_print(stdout, &v);
	} else {
		fprintf(stderr, "lockstorm: explore -j: an explorer process failed (exit");
		for (unsigned k = 0; k < px_n; k++)
			fprintf(stderr, " %d", rc_of[k]);
		fprintf(stderr, ")\n");
	}
	if (cfg->json[0]) {
		json_t *dl = json_array();
		for (size_t i = 0; i < nfound; i++) {
			char sig[24];
			snprintf(sig, sizeof sig, "%016llx", (unsigned long long)found[i].sig);
			json_array_append_new(dl, json_pack("{s:s,s:s,s:I,s:s,s:I}", "invariant",
							    check_inv_name((enum inv_id)found[i].inv), "file", found[i].file,
							    "story_steps", (json_int_t)found[i].story_steps, "signature", sig,
							    "schedule", (json_int_t)found[i].sched));
		}
		json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:i,s:I,s:I,s:I,s:f,s:f,s:I,s:o,s:{s:i,s:i,s:O,s:I},s:s,s:b}",
				      "schema", "lockstorm-explore/1", "strategy", strategy_name(cfg->strategy),
				      "jobs", n, "workers", cfg->run.workers, "ops", cfg->ops,
				      "seed", (json_int_t)cfg->run.seed, "schedules", (json_int_t)scheds,
				      "steps", (json_int_t)steps, "elapsed_s", elapsed, "schedules_per_s", rate,
				      "failures", (json_int_t)failures, "distinct", dl,
				      "coverage", "points_hit", (int)json_array_size(hit), "points", nall, "hit", hit,
				      "step_pairs", (json_int_t)pairs,
				      "verdict", rc == 3 ? "error" : verdict_json(&v),
				      "complete", !v.incomplete && rc != 3);
		if (v.incomplete)
			json_object_set_new(o, "incomplete_reason", json_string(v.why));
		if (!o || json_dump_file(o, cfg->json, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm: cannot write %s\n", cfg->json);
			if (rc == 0)
				rc = 3;
		}
		json_decref(o);
	}
	if (cfg->junit[0])
		explore_junit(cfg, found, nfound, rc, elapsed);
	json_decref(hit);
	free(found);
	rundir_release(&jd, 1);
	if (x_interrupted)
		fprintf(stderr, "lockstorm: interrupted before the %s was spent\n",
			cfg->schedules ? "schedule budget" : "time budget");
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
