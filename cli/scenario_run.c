/*
 * scenario_run.c - `lockstorm scenario list | show | run` (see scenario_run.h).
 *
 * `run` executes every revision of a scenario as a child
 * `/proc/self/exe run -p REV OPTIONS.. -q --json FILE` (no shell: the file's
 * options are argv words), reads the child's JSON report and compares the
 * verdict with the scenario's `expect` line.
 */
#include "scenario_run.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check/verdict.h"
#include "../check/checker.h"
#include "../report/junit.h"
#include "scenario_file.h"

#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

#define SC_WRAP 100

/* ---- printing ---- */

static void wrap(FILE *f, const char *text, int indent)
{
	const char *p = text;
	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t plen = eol ? (size_t)(eol - p) : strlen(p);
		size_t col = 0;
		const char *q = p, *end = p + plen;
		fprintf(f, "%*s", indent, "");
		while (q < end) {
			while (q < end && *q == ' ')
				q++;
			const char *w = q;
			while (q < end && *q != ' ')
				q++;
			size_t wl = (size_t)(q - w);
			if (!wl)
				break;
			if (col && col + 1 + wl > (size_t)(SC_WRAP - indent)) {
				fprintf(f, "\n%*s", indent, "");
				col = 0;
			}
			fprintf(f, "%s%.*s", col ? " " : "", (int)wl, w);
			col += (col ? 1 : 0) + wl;
		}
		fputc('\n', f);
		p = eol ? eol + 1 : end;
		if (eol && *p)
			fputc('\n', f); /* a blank line between paragraphs */
	}
}

/* The first sentence of the story, for `list`. */
static void summary(const char *story, char *out, size_t len)
{
	size_t n = 0;
	while (story[n] && story[n] != '\n' && !(story[n] == '.' && (story[n + 1] == ' ' || !story[n + 1])))
		n++;
	if (story[n] == '.')
		n++;
	if (story[n] == '"')
		n++;
	if (n >= len)
		n = len - 1;
	memcpy(out, story, n);
	out[n] = '\0';
	if (n > 92) { /* one line in `list`: cut at a word */
		size_t cut = 88;
		while (cut > 40 && out[cut] != ' ')
			cut--;
		strcpy(out + cut, " ...");
	}
}

static void shell_word(FILE *f, const char *w)
{
	int plain = *w != '\0';
	for (const char *p = w; *p; p++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%+=:,./_-", *p))
			plain = 0;
	if (plain) {
		fputs(w, f);
		return;
	}
	fputc('\'', f);
	for (const char *p = w; *p; p++) {
		if (*p == '\'')
			fputs("'\\''", f);
		else
			fputc(*p, f);
	}
	fputc('\'', f);
}

static void expect_text(const struct sc_rev *r, char *out, size_t len)
{
	char invs[256];
	switch (r->expect) {
	case SC_EXPECT_PASS:
		snprintf(out, len, "PASS");
		break;
	case SC_EXPECT_FAIL:
		sc_inv_list(r->inv_mask, invs, sizeof invs);
		snprintf(out, len, "FAIL (%s)", invs);
		break;
	default:
		snprintf(out, len, "bound");
		break;
	}
}

/* ---- list, show ---- */

static int load_all(const char *dir, struct scenario ***out, size_t *n)
{
	size_t nf;
	char **files = sc_dir_files(dir, &nf);
	struct scenario **v = calloc(nf ? nf : 1, sizeof *v);
	*n = 0;
	if (!v) {
		sc_free_files(files, nf);
		return 3;
	}
	for (size_t i = 0; i < nf; i++) {
		char why[1024];
		v[i] = scenario_load(files[i], why, sizeof why);
		if (!v[i]) {
			fprintf(stderr, "lockstorm: %s\n", why);
			for (size_t k = 0; k < i; k++)
				scenario_free(v[k]);
			free(v);
			sc_free_files(files, nf);
			return 2;
		}
		*n = i + 1;
	}
	sc_free_files(files, nf);
	*out = v;
	return 0;
}

int sc_bad_option(const char *verb, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		fprintf(stderr, "lockstorm: scenario %s: option %s needs a value\n", verb, arg);
	else if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))
		fprintf(stderr, "lockstorm: scenario %s: option '%.*s' takes no value\n", verb, (int)strcspn(arg, "="), arg);
	else if (optopt && optopt < 256 && arg[1] != '-')
		fprintf(stderr, "lockstorm: scenario %s: unknown option '-%c' (see lockstorm scenario %s --help)\n",
			verb, optopt, verb);
	else
		fprintf(stderr, "lockstorm: scenario %s: unknown option '%s' (see lockstorm scenario %s --help)\n",
			verb, arg, verb);
	return 2;
}

/* A verb that takes only --help: 0 go on (optind at the operands), 1 help printed, 2 bad usage. */
static int sc_help_only(const char *verb, const char *help, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		if (c != 'h')
			return sc_bad_option(verb, c, argv);
		fputs(help, stdout);
		return 1;
	}
	return 0;
}

static const char sc_list_usage[] =
	"usage: lockstorm scenario list\n"
	"  every scenario of the library ($LOCKSTORM_SCENARIOS, else scenarios/ next to the binary,\n"
	"  else the source tree's): its revisions with their expected verdicts and the story's first line\n"
	"exit: 0 listed, 2 a bad scenario file\n";

int sc_list(int argc, char **argv)
{
	int h = sc_help_only("list", sc_list_usage, argc, argv);
	if (h)
		return h == 1 ? 0 : h;
	if (optind < argc)
		return fprintf(stderr, "lockstorm: scenario list: unexpected argument '%s'\n", argv[optind]), 2;
	char dir[PATH_MAX];
	if (scenario_dir(dir, sizeof dir)) {
		fprintf(stderr, "lockstorm: no scenarios directory (next to the binary, or %s/scenarios)\n",
			LS_SOURCE_DIR);
		return 2;
	}
	struct scenario **all;
	size_t n;
	int rc = load_all(dir, &all, &n);
	if (rc)
		return rc;
	int wn = 4;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(all[i]->name) > wn)
			wn = (int)strlen(all[i]->name);
	printf("%-*s  %s\n", wn, "NAME", "REVISIONS (expected)  -  SUMMARY");
	for (size_t i = 0; i < n; i++) {
		char revs[512] = "", sum[200];
		size_t k = 0;
		for (unsigned r = 0; r < all[i]->nrev; r++) {
			const struct sc_rev *rv = &all[i]->rev[r];
			k += (size_t)snprintf(revs + k, k < sizeof revs ? sizeof revs - k : 0, "%s%s %s", r ? ", " : "",
					      rv->label, rv->expect == SC_EXPECT_PASS ? "pass"
							 : rv->expect == SC_EXPECT_FAIL ? "fail" : "bound");
		}
		summary(all[i]->story, sum, sizeof sum);
		printf("%-*s  %s\n", wn, all[i]->name, revs);
		if (*sum)
			printf("%-*s    %s\n", wn, "", sum);
		scenario_free(all[i]);
	}
	free(all);
	printf("(%zu scenario%s in %s)\n", n, n == 1 ? "" : "s", dir);
	return 0;
}

static const char sc_show_usage[] =
	"usage: lockstorm scenario show NAME|FILE\n"
	"  the story, and every revision's expected verdict and `lockstorm run` command line\n"
	"exit: 0 shown, 2 unknown or bad scenario\n";

int sc_show(int argc, char **argv)
{
	int h = sc_help_only("show", sc_show_usage, argc, argv);
	if (h)
		return h == 1 ? 0 : h;
	if (argc - optind != 1)
		return fprintf(stderr, "lockstorm: scenario show: usage: lockstorm scenario show NAME\n"), 2;
	char path[PATH_MAX], why[1024];
	if (sc_resolve(argv[optind], path, sizeof path, why, sizeof why))
		return fprintf(stderr, "lockstorm: %s\n", why), 2;
	struct scenario *sc = scenario_load(path, why, sizeof why);
	if (!sc)
		return fprintf(stderr, "lockstorm: %s\n", why), 2;
	printf("%s  (%s)\n", sc->name, sc->path);
	if (*sc->story)
		wrap(stdout, sc->story, 2);
	for (unsigned i = 0; i < sc->nrev; i++) {
		const struct sc_rev *r = &sc->rev[i];
		char ex[300];
		expect_text(r, ex, sizeof ex);
		printf("\nrevision %s: expect %s\n", r->label, ex);
		if (r->expect == SC_EXPECT_BOUND)
			wrap(stdout, r->bound, 4);
		int ac;
		char **av = scenario_run_argv(sc, r, &ac);
		if (!av)
			break;
		printf("  lockstorm");
		for (int k = 0; k < ac; k++) {
			fputc(' ', stdout);
			shell_word(stdout, av[k]);
		}
		printf("\n");
		free(av);
		for (unsigned k = 0; k < r->ncex; k++) /* replayed first; they decide the FAIL */
			printf("  decided by: lockstorm replay %s\n", r->cex[k]);
		if (r->expect == SC_EXPECT_FAIL && !r->ncex && sc->nseeds) {
			printf("  seeds tried in turn until it fails:");
			for (unsigned k = 0; k < sc->nseeds; k++)
				printf("%s%llu", k ? "," : " ", sc->seeds[k]);
			printf("\n");
		}
	}
	scenario_free(sc);
	return 0;
}

/* ---- run ---- */

static void last_line(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");
	char buf[1024];
	out[0] = '\0';
	if (!f)
		return;
	while (fgets(buf, sizeof buf, f)) {
		char *s = sc_trim(buf);
		if (*s)
			snprintf(out, len, "%s", s);
	}
	fclose(f);
}

int sc_read_report(const char *path, struct sc_observed *o)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err);
	if (!root) {
		snprintf(o->err, sizeof o->err, "no report (%s: %s)", path, err.text);
		return -1;
	}
	const char *v = json_string_value(json_object_get(root, "verdict"));
	size_t i;
	json_t *inv;
	o->pass = v && !strcmp(v, "pass");
	json_array_foreach(json_object_get(root, "invariants"), i, inv) {
		const char *name = json_string_value(json_object_get(inv, "name"));
		int k = name ? sc_inv_index(name) : -1;
		if (k < 0 || !json_is_true(json_object_get(inv, "applicable")) ||
		    json_integer_value(json_object_get(inv, "violations")) <= 0)
			continue;
		o->viol |= 1u << k;
		const char *t = json_string_value(
			json_object_get(json_array_get(json_object_get(inv, "examples"), 0), "text"));
		snprintf(o->example[k], sizeof o->example[k], "%s", t ? t : "");
	}
	o->ops_per_s = json_number_value(json_object_get(json_object_get(root, "throughput"), "ops_per_s"));
	json_t *tot = json_object_get(root, "totals");
	o->attempts = json_integer_value(json_object_get(tot, "attempts"));
	o->acquired = json_integer_value(json_object_get(tot, "acquired"));
	o->busy = json_integer_value(json_object_get(tot, "busy"));
	o->errors = json_integer_value(json_object_get(tot, "errors"));
	o->ran = 1;
	json_decref(root);
	return 0;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* SIGINT or SIGTERM: no new revision starts; the running one is told to stop. */
static volatile sig_atomic_t sc_interrupted;

static void sc_on_interrupt(int sig)
{
	(void)sig;
	sc_interrupted = 1;
}

/* fork + exec /proc/self/exe ARGV, stdout and stderr to LOG.  Exit code or
 * 128+signal, -1.  The run dies with us (PDEATHSIG SIGTERM: it stops its own
 * workers) and sits in a group of its own: an interrupt reaches it once, from
 * us, and it ends INCOMPLETE. */
static int spawn_run(char *const *argv, const char *log)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int nul = open("/dev/null", O_RDONLY);
		if (fd < 0 || nul < 0)
			_exit(127);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	setpgid(pid, pid);
	int st, told = 0;
	for (;;) {
		if (sc_interrupted && !told) {
			kill(pid, SIGTERM);
			told = 1;
		}
		if (waitpid(pid, &st, 0) >= 0)
			break;
		if (errno != EINTR)
			return -1;
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

struct run_opts {
	const char *outdir; /* -o, or NULL */
	char tmp[PATH_MAX]; /* without -o: reports and logs, removed at the end */
	int quiet;
	int wname, wlabel, wexpect;
	unsigned revs, bad, errors;
	char first_bad[600];
	struct verdict v;   /* FAIL (scenario: revision, ..) for each revision not as expected */
	struct junit_doc *junit; /* --junit: a suite per scenario, a testcase per revision; or NULL */
};

static void run_revision(const struct scenario *sc, const struct sc_rev *r, struct run_opts *ro,
			 struct sc_observed *o, const char *seed)
{
	char dir[PATH_MAX + 80], log[PATH_MAX + 160], json[PATH_MAX + 160];
	memset(o, 0, sizeof *o);
	int argc;
	char **base = scenario_run_argv(sc, r, &argc);
	char **argv = base ? calloc((size_t)argc + 8, sizeof *argv) : NULL;
	if (!argv) {
		free(base);
		snprintf(o->err, sizeof o->err, "out of memory");
		return;
	}
	argv[0] = "lockstorm";
	memcpy(argv + 1, base, (size_t)argc * sizeof *argv);
	int n = argc + 1;
	if (seed) { /* after the file's own -s: the last one counts */
		argv[n++] = "-s";
		argv[n++] = (char *)seed;
	}
	argv[n++] = "-q";
	if (ro->outdir) {
		snprintf(dir, sizeof dir, "%s/%s", ro->outdir, sc->name);
		if (mkdir(dir, 0777) && errno != EEXIST) {
			snprintf(o->err, sizeof o->err, "%s: %s", dir, strerror(errno));
			free(base);
			free(argv);
			return;
		}
		snprintf(log, sizeof log, "%s/%s.log", dir, r->label);
		snprintf(dir, sizeof dir, "%s/%s/%s", ro->outdir, sc->name, r->label);
		snprintf(json, sizeof json, "%s/report.json", dir);
		argv[n++] = "-o";
		argv[n++] = dir;
	} else {
		snprintf(log, sizeof log, "%s/%s.%s.log", ro->tmp, sc->name, r->label);
		snprintf(json, sizeof json, "%s/%s.%s.json", ro->tmp, sc->name, r->label);
		argv[n++] = "--json";
		argv[n++] = json;
	}
	argv[n] = NULL;
	unlink(json);
	o->status = spawn_run(argv, log);
	free(base);
	free(argv);
	if (o->status < 0) {
		snprintf(o->err, sizeof o->err, "cannot run /proc/self/exe: %s", strerror(errno));
		return;
	}
	if (o->status != 0 && o->status != 1) {
		char last[400];
		last_line(log, last, sizeof last);
		snprintf(o->err, sizeof o->err, "lockstorm run exited %d: %s", o->status,
			 *last ? last : "(no output)");
	} else if (sc_read_report(json, o) == 0 && o->pass != (o->status == 0)) {
		snprintf(o->err, sizeof o->err, "exit %d disagrees with the report's verdict", o->status);
		o->ran = 0;
	}
	if (!ro->outdir) {
		unlink(json);
		if (o->ran)
			unlink(log);
	}
}

/* 1 as expected, 0 not (why says which invariant), -1 no verdict. */
static int judge(const struct sc_rev *r, const struct sc_observed *o, char *why, size_t len)
{
	char invs[256];
	why[0] = '\0';
	if (!o->ran) {
		snprintf(why, len, "%s", o->err);
		return -1;
	}
	switch (r->expect) {
	case SC_EXPECT_PASS:
		if (o->pass)
			return 1;
		sc_inv_list(o->viol, invs, sizeof invs);
		snprintf(why, len, "expected every invariant to hold; %s broke", invs);
		return 0;
	case SC_EXPECT_FAIL: {
		unsigned held = r->inv_mask & ~o->viol;
		char want[256];
		if (!held)
			return 1;
		sc_inv_list(r->inv_mask, want, sizeof want);
		sc_inv_list(held, invs, sizeof invs);
		snprintf(why, len, "expected %s to break; %s held", want, invs);
		return 0;
	}
	default:
		return 1;
	}
}

void sc_got_text(const struct sc_observed *o, char *out, size_t len)
{
	char invs[256];
	if (!o->ran)
		snprintf(out, len, "no verdict");
	else if (o->pass)
		snprintf(out, len, "PASS");
	else {
		sc_inv_list(o->viol, invs, sizeof invs);
		snprintf(out, len, "FAIL (%s)", invs);
	}
}

/* What a revision's counterexamples show when replayed (`lockstorm replay FILE --json`). */
struct sc_cex {
	unsigned viol;         /* invariants the replays violate */
	int bad;               /* one no longer shows its violation: diverged or gone */
	int error;             /* one could not be replayed */
	char why[700];
};

static void replay_cexes(const struct scenario *sc, const struct sc_rev *r, const struct run_opts *ro,
			 struct sc_cex *c)
{
	memset(c, 0, sizeof *c);
	if (ro->outdir && r->ncex) { /* the replays come first: before the torture makes it */
		char dir[PATH_MAX + 100];
		snprintf(dir, sizeof dir, "%s/%s", ro->outdir, sc->name);
		if (mkdir(dir, 0777) && errno != EEXIST) {
			c->error = 1;
			snprintf(c->why, sizeof c->why, "%s: %s", dir, strerror(errno));
			return;
		}
	}
	for (unsigned k = 0; k < r->ncex; k++) {
		char log[PATH_MAX + 200], json[PATH_MAX + 200];
		if (ro->outdir) {
			snprintf(log, sizeof log, "%s/%s/%s.cex-%u.log", ro->outdir, sc->name, r->label, k + 1);
			snprintf(json, sizeof json, "%s/%s/%s.cex-%u.json", ro->outdir, sc->name, r->label, k + 1);
		} else {
			snprintf(log, sizeof log, "%s/%s.%s.cex-%u.log", ro->tmp, sc->name, r->label, k + 1);
			snprintf(json, sizeof json, "%s/%s.%s.cex-%u.json", ro->tmp, sc->name, r->label, k + 1);
		}
		char *argv[] = { "lockstorm", "replay", r->cex[k], "-q", "--json", json, NULL };
		unlink(json);
		int rc = spawn_run(argv, log);
		const char *base = strrchr(r->cex[k], '/') ? strrchr(r->cex[k], '/') + 1 : r->cex[k];
		json_t *o = rc == 0 || rc == 1 || rc == 5 ? json_load_file(json, 0, NULL) : NULL;
		if (!o) {
			char last[400];
			last_line(log, last, sizeof last);
			c->error = 1;
			snprintf(c->why, sizeof c->why, "replay of %s exited %d: %s", base, rc, *last ? last : "(no output)");
		} else if (rc == 1) {
			size_t i;
			json_t *v;
			json_array_foreach(json_object_get(o, "invariants"), i, v) {
				int inv = json_string_value(v) ? sc_inv_index(json_string_value(v)) : -1;
				if (inv >= 0)
					c->viol |= 1u << inv;
			}
		} else if (!c->bad) {
			const char *how = json_string_value(json_object_get(o, "how"));
			c->bad = 1;
			if (rc == 5)
				snprintf(c->why, sizeof c->why, "counterexample %s no longer replays: %s (the model changed: "
					 "make it again with lockstorm explore, see docs/scenarios.md)", base, how ? how : "?");
			else
				snprintf(c->why, sizeof c->why, "counterexample %s: the violation no longer happens on its "
					 "steps", base);
		}
		json_decref(o);
		if (!ro->outdir) {
			unlink(json);
			if (!c->error)
				unlink(log);
		}
	}
}

/* A FAIL revision with counterexamples: they decide (1 as expected, 0 not, -1 no verdict); the torture
 * run can add invariants they do not show, never take one away. */
static int judge_cex(const struct sc_rev *r, const struct sc_cex *c, const struct sc_observed *o, char *why,
		     size_t len)
{
	char want[256], invs[256];
	if (c->error) {
		snprintf(why, len, "%s", c->why);
		return -1;
	}
	if (c->bad) {
		snprintf(why, len, "%s", c->why);
		return 0;
	}
	unsigned held = r->inv_mask & ~(c->viol | (o->ran ? o->viol : 0));
	if (!held)
		return 1;
	sc_inv_list(r->inv_mask, want, sizeof want);
	sc_inv_list(held, invs, sizeof invs);
	snprintf(why, len, "expected %s to break; %s held in the counterexamples and the torture run", want, invs);
	return 0;
}

static void run_scenario(const struct scenario *sc, struct run_opts *ro)
{
	char suite[300], cls[300];
	snprintf(suite, sizeof suite, "lockstorm scenario %s", sc->name);
	snprintf(cls, sizeof cls, "lockstorm.scenario.%s", sc->name);
	if (ro->junit)
		junit_doc_suite(ro->junit, suite);
	if (!ro->quiet) {
		printf("\n%s  (%s)\n", sc->name, sc->path);
		if (*sc->story)
			wrap(stdout, sc->story, 2);
		fflush(stdout);
	}
	for (unsigned i = 0; i < sc->nrev && !sc_interrupted; i++) {
		const struct sc_rev *r = &sc->rev[i];
		struct sc_observed *o = malloc(sizeof *o);
		struct sc_cex cx;
		char ex[300], got[600], why[800];
		if (!o) {
			ro->errors++;
			continue;
		}
		double t0 = now_s();
		if (r->ncex) /* the deterministic half first; the torture run is the informative second */
			replay_cexes(sc, r, ro, &cx);
		/* a FAIL without a counterexample: the torture tries the file's seeds until one shows it */
		unsigned nseed = r->expect == SC_EXPECT_FAIL && !r->ncex ? sc->nseeds : 0, tried = 0;
		char seed[32] = "";
		do {
			if (nseed)
				snprintf(seed, sizeof seed, "%llu", sc->seeds[tried]);
			run_revision(sc, r, ro, o, nseed ? seed : NULL);
			tried++;
		} while (tried < nseed && o->ran && (r->inv_mask & ~o->viol));
		double dt = now_s() - t0;
		int j = r->ncex ? judge_cex(r, &cx, o, why, sizeof why) : judge(r, o, why, sizeof why);
		if (sc_interrupted && (j < 0 || o->status == VERDICT_EXIT_INCOMPLETE)) { /* cut short: no judgment */
			free(o);
			break;
		}
		expect_text(r, ex, sizeof ex);
		if (r->ncex) {
			char invs[256], tort[300];
			sc_inv_list(cx.viol, invs, sizeof invs);
			sc_got_text(o, tort, sizeof tort);
			if (cx.error || cx.bad)
				snprintf(got, sizeof got, "no counterexample verdict; torture %s", tort);
			else
				snprintf(got, sizeof got, "FAIL (%s) replayed; torture %s", invs, tort);
		} else {
			sc_got_text(o, got, sizeof got);
			if (nseed) {
				size_t l = strlen(got);
				snprintf(got + l, sizeof got - l, " (seed %s, %u of %u tried)", seed, tried, nseed);
			}
		}
		if (r->expect == SC_EXPECT_BOUND && o->ran) {
			size_t l = strlen(got);
			/* no verdict can show a bound: what the run did instead */
			snprintf(got + l, sizeof got - l, "; %lld attempts: %lld acquired, %lld busy, %lld errors; %.0f ops/s",
				 o->attempts, o->acquired, o->busy, o->errors, o->ops_per_s);
		}
		ro->revs++;
		printf("%-*s  %-*s  %-8s %5.1fs  expect %-*s  got %s\n", ro->wname, sc->name, ro->wlabel, r->label,
		       j > 0 ? "ok" : j == 0 ? "MISMATCH" : "ERROR", dt, ro->wexpect, ex, got);
		if (j > 0 && r->ncex && !o->ran)
			printf("    (the torture run gave no verdict: %s)\n", o->err);
		if (j <= 0) {
			printf("    %s\n", why);
			if (j == 0) {
				ro->bad++;
				verdict_fail(&ro->v, sc->name, r->label);
				unsigned show = r->expect == SC_EXPECT_PASS ? o->viol : 0;
				for (int k = 0; k < INV__COUNT; k++)
					if (show & (1u << k))
						printf("    %s: %s\n", check_inv_name((enum inv_id)k), o->example[k]);
			} else {
				ro->errors++;
				verdict_incomplete(&ro->v, "a revision ran to no verdict");
			}
			if (!ro->first_bad[0])
				snprintf(ro->first_bad, sizeof ro->first_bad, "%s %s: %s", sc->name, r->label, why);
		}
		if (ro->junit) {
			char msg[1000], text[4000];
			size_t tl = (size_t)snprintf(text, sizeof text, "%s", why);
			for (int k = 0; j == 0 && o->ran && k < INV__COUNT && tl < sizeof text; k++)
				if (o->viol & (1u << k))
					tl += (size_t)snprintf(text + tl, sizeof text - tl, "\n%s: %s",
							       check_inv_name((enum inv_id)k), o->example[k]);
			snprintf(msg, sizeof msg, "expect %s, got %s%s%s", ex, got, j > 0 ? "" : ": ", j > 0 ? "" : why);
			junit_doc_case(ro->junit, cls, r->label, dt, j > 0 ? JUNIT_PASS : j == 0 ? JUNIT_FAILURE : JUNIT_ERROR,
				       msg, j > 0 ? NULL : text);
		}
		if (r->expect == SC_EXPECT_BOUND && !ro->quiet)
			wrap(stdout, r->bound, 4);
		fflush(stdout);
		free(o);
	}
}

static void rm_tmp(const char *dir)
{
	size_t n = 0;
	DIR *d = opendir(dir);
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		char p[PATH_MAX + 300];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		unlink(p);
		n++;
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static const char sc_run_usage[] =
	"usage: lockstorm scenario run NAME|FILE.. [-o OUTDIR] [--junit FILE] [-q]\n"
	"       lockstorm scenario run --all [-o OUTDIR] [--junit FILE] [-q]\n"
	"  -a, --all         every scenario of the library\n"
	"      --junit FILE  JUnit XML: a testsuite per scenario, a testcase per revision (failure: not as expected)\n"
	"  -o, --out OUTDIR  keep every revision's run as OUTDIR/SCENARIO/REVISION (journals, report.json)\n"
	"                    and its output as OUTDIR/SCENARIO/REVISION.log\n"
	"  -q, --quiet       one line per scenario and revision (no stories, no bound texts)\n"
	"  -h, --help        this help (options take --opt=VALUE and --opt VALUE alike)\n"
	"exit: 0 every revision as expected, 1 one was not, 2 a bad scenario file, 3 a run failed\n";

int sc_run(int argc, char **argv)
{
	struct run_opts ro;
	int all = 0;
	const char **names = calloc((size_t)argc, sizeof *names);
	size_t nnames = 0;
	memset(&ro, 0, sizeof ro);
	if (!names)
		return 3;
	static const struct option longopts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "out", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "junit", required_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *junit = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ao:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'J':
			junit = optarg;
			break;
		case 'a':
			all = 1;
			break;
		case 'o':
			ro.outdir = optarg;
			break;
		case 'q':
			ro.quiet = 1;
			break;
		case 'h':
			fputs(sc_run_usage, stdout);
			free(names);
			return 0;
		default:
			free(names);
			return sc_bad_option("run", c, argv);
		}
	}
	for (int i = optind; i < argc; i++)
		names[nnames++] = argv[i];
	if (all == (nnames > 0)) {
		fprintf(stderr, "lockstorm: scenario run: name scenarios or give --all (not both, not neither)\n");
		free(names);
		return 2;
	}

	/* load everything first: a bad file stops the run before anything ran */
	struct scenario **scs = NULL;
	size_t nsc = 0;
	int rc = 0;
	if (all) {
		char dir[PATH_MAX];
		if (scenario_dir(dir, sizeof dir)) {
			fprintf(stderr, "lockstorm: no scenarios directory (next to the binary, or %s/scenarios)\n",
				LS_SOURCE_DIR);
			free(names);
			return 2;
		}
		rc = load_all(dir, &scs, &nsc);
		if (rc) {
			free(names);
			return rc;
		}
		if (!nsc) {
			fprintf(stderr, "lockstorm: no *.scenario files in %s\n", dir);
			free(scs);
			free(names);
			return 2;
		}
	} else {
		scs = calloc(nnames, sizeof *scs);
		for (size_t i = 0; scs && i < nnames; i++) {
			char path[PATH_MAX], why[1024];
			if (sc_resolve(names[i], path, sizeof path, why, sizeof why) ||
			    !(scs[i] = scenario_load(path, why, sizeof why))) {
				fprintf(stderr, "lockstorm: %s\n", why);
				rc = 2;
				break;
			}
			nsc = i + 1;
		}
		if (!scs)
			rc = 3;
	}
	free(names);
	if (rc)
		goto out;

	if (ro.outdir) {
		if (mkdir(ro.outdir, 0777) && errno != EEXIST) {
			fprintf(stderr, "lockstorm: scenario run -o %s: %s\n", ro.outdir, strerror(errno));
			rc = 2;
			goto out;
		}
	} else {
		const char *base = getenv("TMPDIR");
		snprintf(ro.tmp, sizeof ro.tmp, "%s/lockstorm-scenario.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(ro.tmp)) {
			fprintf(stderr, "lockstorm: cannot make a temporary directory: %s\n", strerror(errno));
			rc = 3;
			goto out;
		}
	}
	verdict_init(&ro.v);
	ro.wname = ro.wlabel = 1;
	ro.wexpect = 4;
	for (size_t i = 0; i < nsc; i++) {
		if ((int)strlen(scs[i]->name) > ro.wname)
			ro.wname = (int)strlen(scs[i]->name);
		for (unsigned k = 0; k < scs[i]->nrev; k++) {
			char ex[300];
			expect_text(&scs[i]->rev[k], ex, sizeof ex);
			if ((int)strlen(scs[i]->rev[k].label) > ro.wlabel)
				ro.wlabel = (int)strlen(scs[i]->rev[k].label);
			if ((int)strlen(ex) > ro.wexpect && strlen(ex) <= 40)
				ro.wexpect = (int)strlen(ex);
		}
	}
	if (junit && !(ro.junit = junit_doc_open())) {
		rc = 3;
		goto out;
	}
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = sc_on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	unsigned total = 0;
	for (size_t i = 0; i < nsc; i++)
		total += scs[i]->nrev;
	double t0 = now_s();
	for (size_t i = 0; i < nsc && !sc_interrupted; i++)
		run_scenario(scs[i], &ro);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (sc_interrupted) {
		char why[160];
		snprintf(why, sizeof why, "interrupted after %u of %u revisions", ro.revs, total);
		verdict_incomplete(&ro.v, why);
	}
	printf("\n%zu scenario%s, %u revision%s, %.1f s: ", nsc, nsc == 1 ? "" : "s", ro.revs,
	       ro.revs == 1 ? "" : "s", now_s() - t0);
	if (!ro.bad && !ro.errors)
		printf(sc_interrupted ? "interrupted; every revision run so far as expected\n"
		       : "every revision as expected\n");
	else
		printf("%u not as expected, %u without a verdict; first: %s\n", ro.bad, ro.errors, ro.first_bad);
	verdict_print(stdout, &ro.v);
	rc = ro.bad ? 1 : sc_interrupted ? VERDICT_EXIT_INCOMPLETE : ro.errors ? 3 : 0;
	if (ro.outdir && !ro.quiet)
		printf("runs kept in %s\n", ro.outdir);
	else if (!ro.outdir && (ro.bad || ro.errors))
		printf("(run it again with -o OUTDIR to keep every revision's journals and report)\n");
	if (!ro.outdir)
		rm_tmp(ro.tmp);
	if (ro.junit && junit_doc_write(ro.junit, junit) != 0)
		fprintf(stderr, "lockstorm: scenario run: cannot write %s: %s\n", junit, strerror(errno));
out:
	junit_doc_free(ro.junit);
	for (size_t i = 0; i < nsc; i++)
		scenario_free(scs[i]);
	free(scs);
	return rc;
}
