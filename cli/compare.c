/*
 * compare.c - `lockstorm compare`: protocol revisions side by side (see compare.h).
 */
#include "compare.h"
#include "compare_child.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../core/num.h"
#include "../workloads/workload.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/fsutil.h"
#include "../core/journal.h"
#include "../report/junit.h"
#include "../check/verdict.h"
#include "../run/runcfg.h"
#include "../run/rundir.h"

#define MAX_REVS CFG_MAX_PROTOS
#define MAX_INVS 32
#define MAX_ERRNO 4096
#define MAX_PASS 256

static const char compare_usage[] =
	"usage: lockstorm compare -p A,B[,C..] [run options] [--repeat R] [--json FILE] [--markdown FILE]\n"
	"                         [--junit FILE] [-o DIR] [-q]\n"
	"  -p, --protocol A,B,..   the revisions to compare (A+B: a mixed fleet as one revision)\n"
	"      --repeat R          runs per revision (default 1); run r of every revision uses seed S+r\n"
	"      --json FILE         the table and every run's report (schema lockstorm-compare/1)\n"
	"      --markdown FILE     the table as markdown (a CI summary)\n"
	"      --junit FILE        JUnit XML: one testsuite per revision, one testcase per invariant\n"
	"  -o, --out DIR           keep every run (DIR/REV-rN: journals, report.json; see lockstorm report)\n"
	"  -s, --seed S            the base seed (default 1)\n"
	"  -q, --quiet             no progress lines\n"
	"  -h, --help              this help (options take --opt=VALUE and --opt VALUE alike)\n"
	"Runs are interleaved A B A B so that drift of the machine hits every revision alike.\n"
	"exit: 0 no revision had a violation, 1 one did, 2 bad usage, 3 a run could not be judged\n";

struct rev {
	char name[160];   /* as given: A, or A+B for a mixed fleet */
	char plist[160];  /* the -p value of its runs */
	unsigned runs, failed, harness;
	double *ops, *wp50, *wp99, *hp50, *hp99;
	uint64_t viol[MAX_INVS];
	int applicable[MAX_INVS];
	uint64_t reclaims, lost, errors, crashes, stalls, busy, kills;
	uint64_t by_errno[MAX_ERRNO];
	json_t *runs_json;  /* every run: seed, exit, report */
	json_t *summary;    /* a lockstorm-report/1-like document summing its runs (for JUnit) */
};

struct cmp {
	struct rev rev[MAX_REVS];
	unsigned nrev;
	unsigned repeat;
	uint64_t seed;
	char *pass[MAX_PASS];  /* run options for every child */
	unsigned npass;
	const char *json, *markdown, *junit, *outdir;
	int quiet;
	struct rundir tmpd;    /* our scratch, marked and locked (run/rundir.h) */
	char tmp[PATH_MAX];    /* its path: child JSON reports (and run dirs without -o) */
	char exe[PATH_MAX];
	char inv[MAX_INVS][48];
	unsigned ninv;
	char incomplete[160];  /* runs missing (interrupted) or cut short: why; "" when complete */
	int errno_seen[MAX_ERRNO];
	/* from the first report: the shared plan, for the header */
	char workload[64], length[64], profile[64];
	unsigned workers, nfaults;
	double time_scale;
};

static volatile sig_atomic_t cmp_interrupted; /* SIGINT or SIGTERM: no new runs, the current one stops */

static void on_int(int sig)
{
	(void)sig;
	cmp_interrupted = 1;
}

static int usage(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lockstorm: compare: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	return 2;
}

static int add_revs(struct cmp *c, const char *list)
{
	char buf[1024];
	snprintf(buf, sizeof buf, "%s", list);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (c->nrev == MAX_REVS)
			return usage("at most %d revisions", MAX_REVS);
		struct rev *r = &c->rev[c->nrev++];
		snprintf(r->name, sizeof r->name, "%s", t);
		snprintf(r->plist, sizeof r->plist, "%s", t);
		for (char *p = r->plist; *p; p++)
			if (*p == '+')
				*p = ',';
	}
	return 0;
}

/* Compare's own options; every other option of `lockstorm run` passes to
 * every run (CO_PASS + its index in runcfg_longopts). */
enum { CO_REPEAT = 1000, CO_JSON, CO_MARKDOWN, CO_JUNIT, CO_PASS = 2000 };
static const struct option compare_own[] = {
	{ "protocol", required_argument, NULL, 'p' },
	{ "repeat", required_argument, NULL, CO_REPEAT },
	{ "json", required_argument, NULL, CO_JSON },
	{ "markdown", required_argument, NULL, CO_MARKDOWN },
	{ "junit", required_argument, NULL, CO_JUNIT },
	{ "out", required_argument, NULL, 'o' },
	{ "seed", required_argument, NULL, 's' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int compare_owns(const char *name)
{
	for (const struct option *o = compare_own; o->name; o++)
		if (!strcmp(o->name, name))
			return 1;
	return 0;
}

/* own options, then the run's (the ones compare does not own) */
static const struct option *compare_options(void)
{
	static struct option all[96];
	if (all[0].name)
		return all;
	size_t n = 0;
	for (const struct option *o = compare_own; o->name; o++)
		all[n++] = *o;
	for (const struct option *o = runcfg_longopts; o->name && n + 1 < sizeof all / sizeof all[0]; o++)
		if (!compare_owns(o->name)) {
			all[n] = *o;
			all[n].flag = NULL;
			all[n].val = CO_PASS + (int)(o - runcfg_longopts);
			n++;
		}
	return all;
}

static void compare_usage_print(FILE *f)
{
	fputs(compare_usage, f);
	fputs("run options (passed to every run alike; see lockstorm run --help):\n ", f);
	int col = 1;
	for (const struct option *o = runcfg_longopts; o->name; o++) {
		if (compare_owns(o->name))
			continue;
		char w[64];
		int k = snprintf(w, sizeof w, " --%s%s", o->name, o->has_arg ? " X" : "");
		if (col + k > 100) {
			fputs("\n ", f);
			col = 1;
		}
		fputs(w, f);
		col += k;
	}
	fputs("\n", f);
}

static int parse(struct cmp *c, int argc, char **argv)
{
	c->repeat = 1;
	c->seed = 1;
	const struct option *opts = compare_options();
	char shorts[64];
	size_t ns = (size_t)snprintf(shorts, sizeof shorts, ":p:o:s:qvh");
	for (const char *s = runcfg_shortopts; *s; s++) /* the run's short options compare does not own */
		if (*s != ':' && !strchr(":p:o:s:qvh", *s) && ns + 2 < sizeof shorts) {
			shorts[ns++] = *s;
			if (s[1] == ':')
				shorts[ns++] = ':';
		}
	shorts[ns] = '\0';
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, shorts, opts, NULL)) != -1) {
		char msg[160];
		uint64_t r;
		const struct option *run_opt = NULL;
		switch (ch) {
		case 'p':
			if (add_revs(c, optarg))
				return 2;
			continue;
		case CO_REPEAT:
			if (num_u64(optarg, 1, 1000, &r, msg, sizeof msg))
				return usage("--repeat: %s", msg);
			c->repeat = (unsigned)r;
			continue;
		case CO_JSON:
			c->json = optarg;
			continue;
		case CO_MARKDOWN:
			c->markdown = optarg;
			continue;
		case CO_JUNIT:
			c->junit = optarg;
			continue;
		case 'o':
			c->outdir = optarg;
			continue;
		case 's':
			if (num_u64(optarg, 0, UINT64_MAX, &c->seed, msg, sizeof msg))
				return usage("-s: %s (the base seed)", msg);
			continue;
		case 'q':
			c->quiet = 1;
			continue;
		case 'v':
			continue;
		case 'h':
			compare_usage_print(stdout);
			return 1;
		case ':':
			return usage("option %s needs a value", argv[optind - 1]);
		case '?':
			if (optopt && !strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '='))
				return usage("option '%.*s' takes no value", (int)strcspn(argv[optind - 1], "="), argv[optind - 1]);
			if (optopt && optopt < 256 && argv[optind - 1][1] != '-')
				return usage("unknown option '-%c' (see lockstorm compare --help)", optopt);
			return usage("unknown option '%s' (see lockstorm compare --help)", argv[optind - 1]);
		default:
			run_opt = ch >= CO_PASS ? &runcfg_longopts[ch - CO_PASS] : runcfg_option(ch);
			break;
		}
		if (!run_opt)
			return usage("unknown option '%s' (see lockstorm compare --help)", argv[optind - 1]);
		/* one spelling for every child: --name=VALUE or --name */
		if (c->npass + 1 >= MAX_PASS)
			return usage("too many options");
		char *w;
		if (asprintf(&w, "--%s%s%s", run_opt->name, run_opt->has_arg ? "=" : "",
			     run_opt->has_arg ? optarg : "") < 0)
			return usage("out of memory");
		c->pass[c->npass++] = w;
	}
	if (optind < argc)
		return usage("unexpected argument '%s' (see lockstorm compare --help)", argv[optind]);
	if (!c->nrev)
		return usage("-p A,B: name the protocol revisions to compare (see lockstorm list protocols)");
	/* the output files are checked before any run: a typo is bad usage now, not
	 * "cannot write" after the whole comparison */
	const char *files[][2] = { { "--json", c->json }, { "--markdown", c->markdown }, { "--junit", c->junit } };
	for (unsigned k = 0; k < sizeof files / sizeof files[0]; k++) {
		char why[PATH_MAX + 200];
		if (rundir_check_writable(files[k][1], files[k][0], why, sizeof why) != 0)
			return usage("%s", why);
	}
	/* Every revision's run must parse: unknown protocols, bad options and
	 * fault points are bad usage now, not a failure halfway through. */
	static struct run_config cfg;
	for (unsigned r = 0; r < c->nrev; r++) {
		char *av[MAX_PASS + 8];
		int n = 0;
		av[n++] = "run";
		av[n++] = "-p";
		av[n++] = c->rev[r].plist;
		for (unsigned k = 0; k < c->npass; k++)
			av[n++] = c->pass[k];
		av[n] = NULL;
		char why[1024];
		runcfg_defaults(&cfg);
		int rc = runcfg_parse(&cfg, n, av, why, sizeof why);
		if (rc != 0)
			return usage("%s: %s", c->rev[r].name, rc == 1 ? "--help is not a run option here" : why);
		if (r == 0) {
			snprintf(c->workload, sizeof c->workload, "%s", cfg.workload->name);
			if (cfg.duration_ms)
				snprintf(c->length, sizeof c->length, "%.1f s", (double)cfg.duration_ms / 1000.0);
			else
				snprintf(c->length, sizeof c->length, "%llu ops", (unsigned long long)cfg.ops);
			snprintf(c->profile, sizeof c->profile, "%s", cfg.faults.profile);
			c->workers = cfg.workers;
			c->time_scale = cfg.time_scale;
			c->nfaults = cfg.faults.n;
		}
	}
	return 0;
}

/* ---- one child run ---- */

static int run_child(struct cmp *c, struct rev *r, uint64_t seed, const char *json, const char *outdir)
{
	return compare_child_run(c->exe, r->plist, c->pass, c->npass, seed, json, outdir, &cmp_interrupted);
}

/* Errors by errno from the run's journals. */
static void tally_errnos(struct cmp *c, struct rev *r, const char *outdir, json_t *run)
{
	struct jrec *rec = NULL;
	size_t n = 0, torn = 0;
	unsigned files = 0;
	json_t *by = json_object();
	if (journal_read_dir(outdir, &rec, &n, &torn, &files) == 0) {
		for (size_t i = 0; i < n; i++) {
			int t = rec[i].type;
			if (t != EV_ACQUIRE_ERROR && t != EV_WRITE_ERROR && t != EV_RELEASE_ERROR)
				continue;
			int e = rec[i].err;
			if (e <= 0 || e >= MAX_ERRNO)
				continue;
			r->by_errno[e]++;
			c->errno_seen[e] = 1;
			const char *name = strerrorname_np(e);
			char num[16];
			if (!name) {
				snprintf(num, sizeof num, "%d", e);
				name = num;
			}
			json_t *v = json_object_get(by, name);
			json_object_set_new(by, name, json_integer((v ? json_integer_value(v) : 0) + 1));
		}
	}
	free(rec);
	json_object_set_new(run, "errors_by_errno", by);
}

static unsigned inv_index(struct cmp *c, const char *name)
{
	for (unsigned i = 0; i < c->ninv; i++)
		if (!strcmp(c->inv[i], name))
			return i;
	if (c->ninv == MAX_INVS)
		return MAX_INVS;
	snprintf(c->inv[c->ninv], sizeof c->inv[0], "%s", name);
	return c->ninv++;
}

static json_t *summary_inv(json_t *summary, const char *name, int applicable)
{
	json_t *invs = json_object_get(summary, "invariants");
	size_t i;
	json_t *v;
	json_array_foreach(invs, i, v)
		if (!strcmp(json_string_value(json_object_get(v, "name")), name))
			return v;
	v = json_pack("{s:s,s:b,s:I,s:[]}", "name", name, "applicable", applicable, "violations", (json_int_t)0,
		      "examples");
	json_array_append_new(invs, v);
	return v;
}

static double num(json_t *o, const char *a, const char *b)
{
	json_t *v = json_object_get(o, a);
	if (b)
		v = json_object_get(v, b);
	return json_number_value(v);
}

static uint64_t total(json_t *rep, const char *k)
{
	return (uint64_t)json_integer_value(json_object_get(json_object_get(rep, "totals"), k));
}

/* Fold one run's report into its revision. */
static void fold(struct cmp *c, struct rev *r, json_t *rep)
{
	unsigned k = r->runs - r->harness - 1; /* index among judged runs */
	json_t *thr = json_object_get(rep, "throughput");
	r->ops[k] = num(thr, "ops_per_s", NULL);
	r->wp50[k] = num(thr, "wait_ms", "p50");
	r->wp99[k] = num(thr, "wait_ms", "p99");
	r->hp50[k] = num(thr, "hold_ms", "p50");
	r->hp99[k] = num(thr, "hold_ms", "p99");
	r->reclaims += total(rep, "reclaims");
	r->lost += total(rep, "lost");
	r->errors += total(rep, "errors");
	r->crashes += total(rep, "crashes");
	r->stalls += total(rep, "stalls");
	r->busy += total(rep, "busy");
	r->kills += total(rep, "kills");
	if (!r->summary) {
		r->summary = json_pack("{s:s,s:O,s:{s:f},s:[]}", "schema", "lockstorm-report/1", "config",
				       json_object_get(rep, "config"), "throughput", "elapsed_s", 0.0, "invariants");
	}
	json_t *sthr = json_object_get(r->summary, "throughput");
	json_object_set_new(sthr, "elapsed_s", json_real(num(sthr, "elapsed_s", NULL) + num(thr, "elapsed_s", NULL)));
	size_t i;
	json_t *inv;
	json_array_foreach(json_object_get(rep, "invariants"), i, inv) {
		const char *name = json_string_value(json_object_get(inv, "name"));
		if (!name)
			continue;
		unsigned x = inv_index(c, name);
		int app = json_is_true(json_object_get(inv, "applicable"));
		json_int_t v = json_integer_value(json_object_get(inv, "violations"));
		if (x < MAX_INVS) {
			r->viol[x] += (uint64_t)v;
			r->applicable[x] |= app;
		}
		json_t *s = summary_inv(r->summary, name, app);
		if (app)
			json_object_set_new(s, "applicable", json_true());
		json_object_set_new(s, "violations",
				    json_integer(json_integer_value(json_object_get(s, "violations")) + v));
		json_t *sex = json_object_get(s, "examples");
		size_t k2;
		json_t *e;
		json_array_foreach(json_object_get(inv, "examples"), k2, e)
			if (json_array_size(sex) < CHECK_MAX_EXAMPLES)
				json_array_append(sex, e);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(const double *v, unsigned n)
{
	if (!n)
		return 0;
	double *s = malloc(n * sizeof *s);
	if (!s)
		return v[0];
	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

static double vmin(const double *v, unsigned n)
{
	double m = n ? v[0] : 0;
	for (unsigned i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

static double vmax(const double *v, unsigned n)
{
	double m = n ? v[0] : 0;
	for (unsigned i = 1; i < n; i++)
		m = v[i] > m ? v[i] : m;
	return m;
}

/* ---- the table ---- */

#define CELL 64

typedef void (*cell_fn)(const struct cmp *c, const struct rev *r, unsigned arg, char *out, size_t len);

static unsigned judged(const struct rev *r)
{
	return r->runs - r->harness;
}

static void cell_verdict(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	(void)arg;
	if (!r->runs)
		snprintf(o, n, "not run");
	else if (r->failed)
		snprintf(o, n, "FAIL %u/%u runs", r->failed, r->runs);
	else if (r->harness)
		snprintf(o, n, "ERROR %u/%u runs", r->harness, r->runs);
	else
		snprintf(o, n, "PASS %u/%u runs", r->runs, r->runs);
}

static void cell_ops(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	(void)arg;
	snprintf(o, n, "%.1f", median(r->ops, judged(r)));
}

static void cell_spread(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	(void)arg;
	unsigned k = judged(r);
	double m = median(r->ops, k), lo = vmin(r->ops, k), hi = vmax(r->ops, k);
	if (k < 2)
		snprintf(o, n, "- (1 run)");
	else
		snprintf(o, n, "%.1f-%.1f (%.1f%%)", lo, hi, m > 0 ? (hi - lo) / m * 100.0 : 0.0);
}

static void cell_dist(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	const double *v = arg == 0 ? r->wp50 : arg == 1 ? r->wp99 : arg == 2 ? r->hp50 : r->hp99;
	snprintf(o, n, "%.3f", median(v, judged(r)));
}

static void cell_inv(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	if (!r->applicable[arg])
		snprintf(o, n, "n/a");
	else
		snprintf(o, n, "%llu", (unsigned long long)r->viol[arg]);
}

static void cell_total(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	uint64_t v = arg == 0 ? r->reclaims : arg == 1 ? r->lost : arg == 2 ? r->errors : arg == 3 ? r->crashes
		   : arg == 4 ? r->stalls : r->busy;
	snprintf(o, n, "%llu", (unsigned long long)v);
}

static void cell_errno(const struct cmp *c, const struct rev *r, unsigned arg, char *o, size_t n)
{
	(void)c;
	snprintf(o, n, "%llu", (unsigned long long)r->by_errno[arg]);
}

struct row {
	char label[64];
	cell_fn fn;
	unsigned arg;
	int indent;
};

static unsigned table_rows(const struct cmp *c, struct row *rows, unsigned max)
{
	unsigned n = 0;
#define ROW(lbl, f, a, ind)                                                                    \
	do {                                                                                   \
		if (n < max) {                                                                 \
			snprintf(rows[n].label, sizeof rows[n].label, "%s", lbl);              \
			rows[n].fn = f;                                                        \
			rows[n].arg = a;                                                       \
			rows[n].indent = ind;                                                  \
			n++;                                                                   \
		}                                                                              \
	} while (0)
	ROW("verdict", cell_verdict, 0, 0);
	ROW("ops/s median", cell_ops, 0, 0);
	ROW("ops/s spread", cell_spread, 0, 0);
	ROW("wait p50 ms", cell_dist, 0, 0);
	ROW("wait p99 ms", cell_dist, 1, 0);
	ROW("hold p50 ms", cell_dist, 2, 0);
	ROW("hold p99 ms", cell_dist, 3, 0);
	for (unsigned i = 0; i < c->ninv; i++)
		ROW(c->inv[i], cell_inv, i, 0);
	ROW("reclaims", cell_total, 0, 0);
	ROW("lost-lock aborts", cell_total, 1, 0);
	ROW("errors", cell_total, 2, 0);
	for (int e = 1; e < MAX_ERRNO; e++)
		if (c->errno_seen[e]) {
			const char *name = strerrorname_np(e);
			char lbl[32];
			if (name)
				snprintf(lbl, sizeof lbl, "%s", name);
			else
				snprintf(lbl, sizeof lbl, "errno %d", e);
			ROW(lbl, cell_errno, (unsigned)e, 1);
		}
	ROW("crashes", cell_total, 3, 0);
	ROW("stalls", cell_total, 4, 0);
	ROW("busy", cell_total, 5, 0);
#undef ROW
	return n;
}

static void header_line(const struct cmp *c, char *out, size_t len)
{
	size_t n = 0;
	for (unsigned r = 0; r < c->nrev; r++)
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s", r ? " vs " : "", c->rev[r].name);
	n += (size_t)snprintf(out + n, n < len ? len - n : 0, ": %s, %u workers, %s, ", c->workload, c->workers,
			      c->length);
	if (c->repeat > 1)
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "seeds %llu..%llu", (unsigned long long)c->seed,
				      (unsigned long long)(c->seed + c->repeat - 1));
	else
		n += (size_t)snprintf(out + n, n < len ? len - n : 0, "seed %llu", (unsigned long long)c->seed);
	n += (size_t)snprintf(out + n, n < len ? len - n : 0, ", time-scale %g, ", c->time_scale);
	if (c->profile[0])
		snprintf(out + n, n < len ? len - n : 0, "faults %s (the same plan for all)", c->profile);
	else if (c->nfaults)
		snprintf(out + n, n < len ? len - n : 0, "%u fault rules (the same plan for all)", c->nfaults);
	else
		snprintf(out + n, n < len ? len - n : 0, "no faults");
}

static int any_violation(const struct cmp *c)
{
	for (unsigned r = 0; r < c->nrev; r++)
		if (c->rev[r].failed)
			return 1;
	return 0;
}

/* The comparison's verdict: each failing revision with its failing invariants. */
static void compare_verdict(const struct cmp *c, struct verdict *v)
{
	verdict_init(v);
	for (unsigned r = 0; r < c->nrev; r++) {
		const struct rev *rv = &c->rev[r];
		unsigned before = v->nfail + v->more;
		if (!rv->failed)
			continue;
		for (unsigned i = 0; i < c->ninv; i++)
			if (rv->applicable[i] && rv->viol[i])
				verdict_fail(v, rv->name, c->inv[i]);
		if (v->nfail + v->more == before) /* its failed runs' reports named no invariant */
			verdict_fail(v, rv->name, "violation");
	}
	if (c->incomplete[0])
		verdict_incomplete(v, c->incomplete);
}

static void print_table(FILE *f, const struct cmp *c)
{
	struct row rows[128];
	unsigned nrows = table_rows(c, rows, 128);
	int w = 12;
	for (unsigned r = 0; r < c->nrev; r++) {
		int l = (int)strlen(c->rev[r].name) + 3;
		w = l > w ? l : w;
		for (unsigned i = 0; i < nrows; i++) {
			char cell[CELL];
			rows[i].fn(c, &c->rev[r], rows[i].arg, cell, sizeof cell);
			l = (int)strlen(cell) + 3;
			w = l > w ? l : w;
		}
	}
	char head[1024];
	header_line(c, head, sizeof head);
	fprintf(f, "compare     %s\n\n%-18s", head, "");
	for (unsigned r = 0; r < c->nrev; r++)
		fprintf(f, "%*s", w, c->rev[r].name);
	fprintf(f, "\n");
	for (unsigned i = 0; i < nrows; i++) {
		char lbl[80];
		snprintf(lbl, sizeof lbl, "%s%s", rows[i].indent ? "  " : "", rows[i].label);
		fprintf(f, "%-18s", lbl);
		for (unsigned r = 0; r < c->nrev; r++) {
			char cell[CELL];
			rows[i].fn(c, &c->rev[r], rows[i].arg, cell, sizeof cell);
			fprintf(f, "%*s", w, cell);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
	struct verdict v;
	compare_verdict(c, &v);
	if (verdict_kind(&v) == VERDICT_PASS)
		fprintf(f, "no revision had a violation\n");
	verdict_print(f, &v);
}

static void md_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputc('\\', f);
		fputc(*s, f);
	}
}

static int write_markdown(const struct cmp *c, const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	struct row rows[128];
	unsigned nrows = table_rows(c, rows, 128);
	char head[1024];
	header_line(c, head, sizeof head);
	fprintf(f, "### lockstorm compare: %s\n\n", any_violation(c) ? "FAIL" : "PASS");
	md_escape(f, head);
	fprintf(f, "\n\n| |");
	for (unsigned r = 0; r < c->nrev; r++) {
		fputc(' ', f);
		md_escape(f, c->rev[r].name);
		fprintf(f, " |");
	}
	fprintf(f, "\n|---|");
	for (unsigned r = 0; r < c->nrev; r++)
		fprintf(f, "---:|");
	fprintf(f, "\n");
	for (unsigned i = 0; i < nrows; i++) {
		fprintf(f, "| %s%s |", rows[i].indent ? "&nbsp;&nbsp;" : "", rows[i].label);
		for (unsigned r = 0; r < c->nrev; r++) {
			char cell[CELL];
			rows[i].fn(c, &c->rev[r], rows[i].arg, cell, sizeof cell);
			int bold = rows[i].fn == cell_verdict ? !strncmp(cell, "FAIL", 4)
				 : rows[i].fn == cell_inv && strcmp(cell, "0") && strcmp(cell, "n/a");
			fprintf(f, bold ? " **%s** |" : " %s |", cell);
		}
		fprintf(f, "\n");
	}
	fprintf(f, "\n");
	int bad = ferror(f);
	return fclose(f) != 0 || bad ? -1 : 0;
}

static json_t *dist_json(const double *v, unsigned n)
{
	return json_pack("{s:f,s:f,s:f}", "median", median(v, n), "min", vmin(v, n), "max", vmax(v, n));
}

static int write_json(const struct cmp *c, const char *path)
{
	json_t *revs = json_array(), *pass = json_array(), *invnames = json_array();
	for (unsigned k = 0; k < c->npass; k++)
		json_array_append_new(pass, json_string(c->pass[k]));
	for (unsigned i = 0; i < c->ninv; i++)
		json_array_append_new(invnames, json_string(c->inv[i]));
	for (unsigned r = 0; r < c->nrev; r++) {
		const struct rev *v = &c->rev[r];
		unsigned k = judged(v);
		json_t *viol = json_object(), *errs = json_object();
		for (unsigned i = 0; i < c->ninv; i++)
			json_object_set_new(viol, c->inv[i], v->applicable[i] ? json_integer((json_int_t)v->viol[i])
									    : json_null());
		for (int e = 1; e < MAX_ERRNO; e++)
			if (v->by_errno[e]) {
				const char *name = strerrorname_np(e);
				char numbuf[16];
				snprintf(numbuf, sizeof numbuf, "%d", e);
				json_object_set_new(errs, name ? name : numbuf, json_integer((json_int_t)v->by_errno[e]));
			}
		double m = median(v->ops, k);
		json_t *summary = json_pack(
			"{s:s,s:I,s:I,s:I,s:{s:f,s:f,s:f,s:f},s:o,s:o,s:o,s:o,s:o,s:I,s:I,s:I,s:o,s:I,s:I,s:I}",
			"verdict", v->failed ? "fail" : v->harness ? "error" : "pass", "runs", (json_int_t)v->runs,
			"failed_runs", (json_int_t)v->failed, "harness_errors", (json_int_t)v->harness, "ops_per_s",
			"median", m, "min", vmin(v->ops, k), "max", vmax(v->ops, k), "spread_pct",
			m > 0 && k > 1 ? (vmax(v->ops, k) - vmin(v->ops, k)) / m * 100.0 : 0.0, "wait_p50_ms",
			dist_json(v->wp50, k), "wait_p99_ms", dist_json(v->wp99, k), "hold_p50_ms",
			dist_json(v->hp50, k), "hold_p99_ms", dist_json(v->hp99, k), "violations", viol, "reclaims",
			(json_int_t)v->reclaims, "lost", (json_int_t)v->lost, "errors", (json_int_t)v->errors,
			"errors_by_errno", errs, "crashes", (json_int_t)v->crashes, "stalls", (json_int_t)v->stalls,
			"busy", (json_int_t)v->busy);
		json_array_append_new(revs, json_pack("{s:s,s:s,s:o,s:O}", "name", v->name, "protocols", v->plist,
						      "summary", summary, "runs", v->runs_json));
	}
	char head[1024];
	header_line(c, head, sizeof head);
	struct verdict cv;
	compare_verdict(c, &cv);
	json_t *root = json_pack("{s:s,s:s,s:{s:o,s:I,s:I,s:s,s:I,s:s,s:f,s:o},s:o,s:s}", "schema",
				 "lockstorm-compare/1", "title", head, "config", "run_options", pass, "repeat",
				 (json_int_t)c->repeat, "seed", (json_int_t)c->seed, "workload", c->workload, "workers",
				 (json_int_t)c->workers, "length", c->length, "time_scale", c->time_scale, "invariants",
				 invnames, "revisions", revs, "verdict", verdict_json(&cv));
	if (root) {
		json_object_set_new(root, "complete", json_boolean(!cv.incomplete));
		if (cv.incomplete)
			json_object_set_new(root, "incomplete_reason", json_string(cv.why));
	}
	int rc = root ? json_dump_file(root, path, JSON_INDENT(2)) : -1;
	json_decref(root);
	return rc;
}

static void progress(const struct cmp *c, unsigned done, unsigned total_runs, const struct rev *r, uint64_t seed,
		     int rc, json_t *rep, double elapsed, unsigned viol_runs)
{
	if (c->quiet)
		return;
	int tty = isatty(STDERR_FILENO);
	char what[256] = "";
	if (rep) {
		size_t i;
		json_t *inv;
		size_t n = 0;
		json_array_foreach(json_object_get(rep, "invariants"), i, inv)
			if (json_integer_value(json_object_get(inv, "violations")))
				n += (size_t)snprintf(what + n, n < sizeof what ? sizeof what - n : 0, "%s%s",
						      n ? ", " : "", json_string_value(json_object_get(inv, "name")));
	}
	double eta = done ? elapsed / done * (total_runs - done) : 0;
	fprintf(stderr, "%scompare: [%u/%u] %s seed %llu: %s%s%s%s, %.1f ops/s; %.0fs elapsed, ETA %.0fs, %u with violations%s",
		tty ? "\r" : "", done, total_runs, r->name, (unsigned long long)seed,
		rc == 0 ? "PASS" : rc == 1 ? "FAIL" : "ERROR", *what ? " (" : "", what, *what ? ")" : "",
		rep ? num(json_object_get(rep, "throughput"), "ops_per_s", NULL) : 0.0, elapsed, eta, viol_runs,
		tty ? "\033[K" : "\n");
	if (tty && done == total_runs)
		fprintf(stderr, "\n");
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void cleanup(struct cmp *c)
{
	for (unsigned r = 0; r < c->nrev; r++) {
		struct rev *v = &c->rev[r];
		free(v->ops);
		free(v->wp50);
		free(v->wp99);
		free(v->hp50);
		free(v->hp99);
		json_decref(v->runs_json);
		json_decref(v->summary);
	}
	for (unsigned k = 0; k < c->npass; k++)
		free(c->pass[k]);
	c->npass = 0;
	if (c->tmp[0])
		rundir_release(&c->tmpd, 1);
	c->tmp[0] = '\0';
}

int compare_main(int argc, char **argv)
{
	static struct cmp c;
	memset(&c, 0, sizeof c);
	int rc = parse(&c, argc, argv);
	if (rc)
		return rc == 1 ? 0 : rc;
	ssize_t n = readlink("/proc/self/exe", c.exe, sizeof c.exe - 1);
	if (n <= 0) {
		fprintf(stderr, "lockstorm: compare: cannot find this binary: %s\n", strerror(errno));
		return 3;
	}
	c.exe[n] = '\0';
	char why[PATH_MAX + 128];
	rundir_sweep_stale(); /* a SIGKILLed compare's */
	if (rundir_temp(&c.tmpd, "lockstorm-compare", ".lockstorm-owned", why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: compare: %s\n", why);
		return 3;
	}
	snprintf(c.tmp, sizeof c.tmp, "%s", c.tmpd.path);
	if (c.outdir && mkdir(c.outdir, 0777) != 0 && errno != EEXIST) {
		fprintf(stderr, "lockstorm: compare: -o %s: %s\n", c.outdir, strerror(errno));
		cleanup(&c);
		return 2;
	}
	for (unsigned r = 0; r < c.nrev; r++) {
		struct rev *v = &c.rev[r];
		v->ops = calloc(c.repeat, sizeof(double));
		v->wp50 = calloc(c.repeat, sizeof(double));
		v->wp99 = calloc(c.repeat, sizeof(double));
		v->hp50 = calloc(c.repeat, sizeof(double));
		v->hp99 = calloc(c.repeat, sizeof(double));
		v->runs_json = json_array();
		if (!v->ops || !v->wp50 || !v->wp99 || !v->hp50 || !v->hp99 || !v->runs_json) {
			fprintf(stderr, "lockstorm: compare: out of memory\n");
			cleanup(&c);
			return 3;
		}
	}
	struct sigaction sa, old, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_int;
	sigaction(SIGINT, &sa, &old);
	sigaction(SIGTERM, &sa, &old_term);

	double t0 = now_s();
	unsigned done = 0, total_runs = c.repeat * c.nrev, viol_runs = 0, incomplete_runs = 0;
	int usage_failed = 0;
	for (unsigned k = 0; k < c.repeat && !cmp_interrupted && !usage_failed; k++) {
		for (unsigned r = 0; r < c.nrev && !cmp_interrupted; r++) {
			struct rev *v = &c.rev[r];
			uint64_t seed = c.seed + k;
			char json[PATH_MAX + 64], out[PATH_MAX + 64], tag[200];
			snprintf(tag, sizeof tag, "%s-r%u", v->name, k + 1);
			for (char *p = tag; *p; p++)
				if (*p == '/' || *p == ',')
					*p = '_';
			snprintf(json, sizeof json, "%s/%s.json", c.tmp, tag);
			snprintf(out, sizeof out, "%s/%s", c.outdir ? c.outdir : c.tmp, tag);
			int st = run_child(&c, v, seed, json, out);
			json_error_t err;
			json_t *rep = (st == 0 || st == 1 || st == VERDICT_EXIT_INCOMPLETE) ? json_load_file(json, 0, &err)
												 : NULL;
			v->runs++;
			done++;
			json_t *run = json_pack("{s:I,s:I,s:i,s:s}", "order", (json_int_t)done, "seed", (json_int_t)seed,
						"exit", st, "outdir", c.outdir ? out : "");
			if (rep && st == VERDICT_EXIT_INCOMPLETE) { /* cut short: kept, not folded into the figures */
				incomplete_runs++;
				json_object_set_new(run, "verdict", json_string("incomplete"));
				json_object_set(run, "report", rep);
			} else if (!rep) {
				v->harness++;
				if (st == 2)
					usage_failed = 1;
				json_object_set_new(run, "verdict", json_string("error"));
			} else {
				if (st == 1) {
					v->failed++;
					viol_runs++;
				}
				fold(&c, v, rep);
				tally_errnos(&c, v, out, run);
				json_object_set_new(run, "verdict", json_string(st == 1 ? "fail" : "pass"));
				json_object_set(run, "report", rep);
			}
			json_array_append_new(v->runs_json, run);
			progress(&c, done, total_runs, v, seed, st, rep, now_s() - t0, viol_runs);
			json_decref(rep);
			if (!c.outdir)
				fsutil_rm_tree(out);
			if (usage_failed)
				break;
		}
	}
	sigaction(SIGINT, &old, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (!usage_failed && (cmp_interrupted || incomplete_runs || done < total_runs))
		snprintf(c.incomplete, sizeof c.incomplete, "%s after %u of %u runs%s",
			 cmp_interrupted ? "interrupted" : "cut short", done - incomplete_runs, total_runs,
			 incomplete_runs ? ", the last one cut short" : "");

	print_table(stdout, &c);
	fflush(stdout);
	int wrote_bad = 0;
	if (c.json && write_json(&c, c.json) != 0) {
		fprintf(stderr, "lockstorm: compare: cannot write %s\n", c.json);
		wrote_bad = 1;
	}
	if (c.markdown && write_markdown(&c, c.markdown) != 0) {
		fprintf(stderr, "lockstorm: compare: cannot write %s: %s\n", c.markdown, strerror(errno));
		wrote_bad = 1;
	}
	if (c.junit) {
		const char *names[MAX_REVS];
		json_t *reps[MAX_REVS];
		unsigned runs[MAX_REVS], failed[MAX_REVS], harness[MAX_REVS];
		json_t *empty = json_pack("{s:[]}", "invariants");
		for (unsigned r = 0; r < c.nrev; r++) {
			names[r] = c.rev[r].name;
			reps[r] = c.rev[r].summary ? c.rev[r].summary : empty;
			runs[r] = c.rev[r].runs;
			failed[r] = c.rev[r].failed;
			harness[r] = c.rev[r].harness;
		}
		if (junit_write_reports(c.junit, c.nrev, names, reps, runs, failed, harness) != 0) {
			fprintf(stderr, "lockstorm: compare: cannot write %s: %s\n", c.junit, strerror(errno));
			wrote_bad = 1;
		}
		json_decref(empty);
	}
	int harness = 0;
	for (unsigned r = 0; r < c.nrev; r++)
		harness += c.rev[r].harness;
	if (cmp_interrupted)
		fprintf(stderr, "lockstorm: compare: interrupted; the table covers the runs until then\n");
	if (c.outdir && !c.quiet)
		fprintf(stderr, "lockstorm: compare: every run kept in %s (lockstorm report DIR --html FILE)\n", c.outdir);
	cleanup(&c);
	if (usage_failed)
		return 2;
	if (harness || wrote_bad)
		return 3;
	if (any_violation(&c))
		return 1;
	return c.incomplete[0] ? VERDICT_EXIT_INCOMPLETE : 0;
}
