/*
 * triage.c - `lockstorm triage OUTDIR`: from a failing run's journals to a
 * counterexample, or an honest "not reproduced" (see docs/explore.md).
 *
 * A torture run's failure is the machine's interleaving: the seed fixes the
 * fault decisions, not the scheduler, so a rerun may pass.  Triage turns
 * what the journals say about the failure into a small, targeted search:
 *
 *   run.json + journals -> the checker's verdict (driver_verdict)
 *     -> per violated invariant: its first example, the workers it names,
 *        the faults that fired on them shortly before (kind, point, length)
 *     -> attempts, fewest workers first: `lockstorm explore` with those
 *        faults as choices (stall multiples of the stale age, pauses for
 *        stops, crashes), protocol points as decisions when a fault fired
 *        at one, `--invariant` the one to show, a share of the budget each
 *     -> the first counterexample found is replayed (10 times) and printed
 *        with its shrunk story; an invariant the replay of an earlier one
 *        also violates is confirmed by it.
 *
 * Each explore and replay runs as a child (/proc/self/exe): its workers,
 * signal handlers and CPU pinning stay out of this process.
 *
 * Exit: 1 at least one invariant confirmed (a violation, now replayable),
 * 0 nothing to triage or nothing reproduced within the budget (the failure is
 * not disproved: it stays the machine's), 2 bad usage or not a kept run,
 * 3 the harness failed, 4 interrupted before anything was confirmed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../check/checker.h"
#include "../core/fsutil.h"
#include "../core/journal.h"
#include "../core/num.h"
#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../run/driver.h"
#include "../run/runcfg.h"
#include "../workloads/workload.h"
#include "xint.h"

#define T_MAX_FAULTS 6      /* faults on the named workers, the most recent kept */
#define T_MAX_ATTEMPTS 4    /* per invariant */
#define T_REPLAYS 10

static const char triage_usage[] =
	"usage: lockstorm triage OUTDIR [--budget D] [-o DIR] [-q]\n"
	"\n"
	"Turn a failing run (lockstorm run -o OUTDIR) into a counterexample: for each violated invariant\n"
	"take its first example, the workers it names and the faults that fired on them shortly before,\n"
	"and run a targeted `lockstorm explore` (those faults as choices, the points they fired at as\n"
	"decisions, the fewest workers first: 2, then 3) within the budget.  A counterexample found is\n"
	"replayed 10 times and printed as its shrunk story.\n"
	"\n"
	"  --budget D   wall time for all the searches (default 60s)\n"
	"  -o DIR       where the counterexamples go (default OUTDIR/triage): DIR/cex-N.json\n"
	"  -q, --quiet  only the confirmed / not reproduced lines\n"
	"\n"
	"exit: 1 confirmed (a counterexample replays the violation), 0 nothing reproduced within the\n"
	"      budget (or the run passed), 2 bad usage or not a kept run, 3 the harness failed,\n"
	"      4 interrupted before anything was confirmed\n";

static volatile sig_atomic_t t_interrupted;

static void t_on_interrupt(int sig)
{
	(void)sig;
	t_interrupted = 1;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* fork + exec /proc/self/exe ARGV, its output to LOG.  Exit code, 128+signal, or -1. */
static int t_spawn(char *const *argv, const char *log)
{
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (fd < 0 || nul < 0)
			_exit(127);
		dup2(nul, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* What the journals say about one violated invariant. */
struct tcase {
	int inv;
	const struct check_example *ex;
	int w[2];
	unsigned nw;
	struct { int kind, w; int64_t ms; const char *point; uint64_t seq; double stale; } f[T_MAX_FAULTS];
	unsigned nf;
	double stallv[X_MAX_STALLV];
	unsigned nstallv, nstall, ncrash, nstop, nother;
	int proto_points;      /* a fault fired at a protocol point (not fs/...) */
	char confirmed[PATH_MAX + 32];
	char by[PATH_MAX + 32];  /* confirmed by an earlier invariant's counterexample */
	char tried[1024];
};

static const char *fault_kind_word(int k)
{
	static const char *const w[] = { "none", "stall", "crash", "stop", "errno", "short-write" };
	return k >= 0 && k <= FK_SHORT_WRITE ? w[k] : "fault";
}

/* Faults on the example's workers, from a while before its last record up to it. */
static void collect_faults(struct tcase *c, const struct run_config *cfg, const struct jrec *rec, size_t n)
{
	uint64_t last = 0, first_ns = UINT64_MAX;
	int64_t stale = 0;
	for (unsigned k = 0; k < 2; k++) {
		if (c->ex->worker[k] < 0)
			continue;
		int dup = 0;
		for (unsigned j = 0; j < c->nw; j++)
			dup |= c->w[j] == c->ex->worker[k];
		if (!dup && c->ex->worker[k] < (int)cfg->workers)
			c->w[c->nw++] = c->ex->worker[k];
		if (c->ex->seq[k] > last)
			last = c->ex->seq[k];
	}
	for (unsigned j = 0; j < c->nw; j++) {
		int64_t s = runcfg_stale_ms(cfg, (unsigned)c->w[j]);
		if (s > 0 && s < INT64_MAX / 4 && s > stale)
			stale = s;
	}
	if (!last) /* judged on the final state: up to the end */
		last = UINT64_MAX;
	for (size_t i = 0; i < n; i++)
		if (rec[i].seq <= last && (rec[i].seq == c->ex->seq[0] || rec[i].seq == c->ex->seq[1]) &&
		    rec[i].ns < first_ns)
			first_ns = rec[i].ns;
	/* "shortly before": within four stale ages (a stall of 1.5 is followed by a reclaim) */
	uint64_t window = stale ? (uint64_t)stale * 4 * 1000000ull : 0;
	uint64_t from = first_ns == UINT64_MAX || !window || first_ns < window ? 0 : first_ns - window;
	for (size_t i = 0; i < n && rec[i].seq <= last; i++) {
		const struct jrec *r = &rec[i];
		if (r->type != EV_FAULT || r->ns < from)
			continue;
		int mine = 0;
		for (unsigned j = 0; j < c->nw; j++)
			mine |= r->worker == c->w[j];
		if (!mine)
			continue;
		if (c->nf == T_MAX_FAULTS) {
			memmove(&c->f[0], &c->f[1], (T_MAX_FAULTS - 1) * sizeof c->f[0]);
			c->nf--;
		}
		int64_t s = runcfg_stale_ms(cfg, r->worker);
		c->f[c->nf].kind = (int)r->a;
		c->f[c->nf].w = r->worker;
		c->f[c->nf].ms = r->c;
		c->f[c->nf].point = journal_point_name ? journal_point_name((uint64_t)r->b) : NULL;
		c->f[c->nf].seq = r->seq;
		c->f[c->nf].stale = s > 0 && s < INT64_MAX / 4 ? (double)r->c / (double)s : 0;
		c->nf++;
	}
	for (unsigned i = 0; i < c->nf; i++) {
		int k = c->f[i].kind;
		if (k == FK_STALL || k == FK_STOP) {
			k == FK_STALL ? c->nstall++ : c->nstop++;
			double m = round(c->f[i].stale * 20) / 20; /* to 0.05 of the stale age */
			if (m < 0.05)
				m = 0.05;
			int have = 0;
			for (unsigned j = 0; j < c->nstallv; j++)
				have |= fabs(c->stallv[j] - m) < 1e-9;
			if (!have && c->nstallv < X_MAX_STALLV)
				c->stallv[c->nstallv++] = m;
		} else if (k == FK_CRASH) {
			c->ncrash++;
		} else {
			c->nother++;
		}
		if (c->f[i].point && strncmp(c->f[i].point, "fs/", 3))
			c->proto_points = 1;
	}
}

struct tattempt {
	unsigned n, ops, max_stalls, max_crashes;
	double stallv[X_MAX_STALLV];
	unsigned nstallv;
	int pauses, points;
};

/* The attempts for one case, fewest workers first, then widened. */
static unsigned plan_attempts(const struct tcase *c, struct tattempt *a)
{
	unsigned n0 = c->nw ? c->nw : 1, k = 0;
	if (n0 < 2 && c->inv != INV_LIVENESS)
		n0 = 2;
	struct tattempt t = { .n = n0, .ops = 2, .max_stalls = c->nstall + c->nstop ? (c->nstall + c->nstop > 2 ? 2 : 1) : 0,
			      .max_crashes = c->ncrash ? 1 : 0, .pauses = c->nstop > 0, .points = c->proto_points };
	memcpy(t.stallv, c->stallv, sizeof t.stallv);
	t.nstallv = c->nstallv;
	if (!t.nstallv) {
		t.stallv[0] = 1.5;
		t.nstallv = 1;
	}
	a[k++] = t;
	t.n = n0 + 1;
	a[k++] = t;
	/* widened: what the journals do not show may still be needed (a slow step is a stall to explore) */
	struct tattempt w = t;
	w.n = n0;
	w.max_stalls = t.max_stalls > 1 ? t.max_stalls : 1;
	w.max_crashes = 1;
	w.pauses = 1;
	int has15 = 0;
	for (unsigned j = 0; j < w.nstallv; j++)
		has15 |= fabs(w.stallv[j] - 1.5) < 1e-9;
	if (!has15 && w.nstallv < X_MAX_STALLV)
		w.stallv[w.nstallv++] = 1.5;
	a[k++] = w;
	w.n = n0 + 1;
	w.ops = 3;
	a[k++] = w;
	return k;
}

static void stall_list(const struct tattempt *a, char *buf, size_t len)
{
	size_t o = 0;
	buf[0] = '\0';
	for (unsigned j = 0; j < a->nstallv; j++)
		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%.3g", j ? "," : "", a->stallv[j]);
}

/* The invariants a counterexample's replay violates (bits), -1 on error; *ok replays that showed it. */
static int replay_check(const char *cex, const char *dir, unsigned times, unsigned *ok, unsigned *mask)
{
	char rj[PATH_MAX + 64], log[PATH_MAX + 64];
	snprintf(rj, sizeof rj, "%s/replay.json", dir);
	snprintf(log, sizeof log, "%s/replay.log", dir);
	*ok = 0;
	*mask = 0;
	for (unsigned t = 0; t < times; t++) {
		char *argv[] = { "lockstorm", "replay", (char *)cex, "-q", "--json", rj, NULL };
		unlink(rj);
		int rc = t_spawn(argv, log);
		if (rc != 1)
			continue;
		json_t *o = json_load_file(rj, 0, NULL);
		size_t i;
		json_t *v;
		if (o && json_is_true(json_object_get(o, "same_steps")))
			(*ok)++;
		json_array_foreach(json_object_get(o, "invariants"), i, v) {
			for (int k = 0; k < INV__COUNT; k++)
				if (json_string_value(v) && !strcmp(json_string_value(v), check_inv_name((enum inv_id)k)))
					*mask |= 1u << k;
		}
		json_decref(o);
	}
	unlink(rj);
	unlink(log);
	return 0;
}

struct topts {
	const char *outdir;
	char tdir[PATH_MAX];
	int64_t budget_ms;
	int quiet;
};

/* One attempt: `lockstorm explore ...` in DIR/try-K.  1 found (file set), 0 not, -1 harness. */
static int t_explore(const struct run_config *cfg, const struct tcase *c, const struct tattempt *a, unsigned k,
		     int64_t ms, const struct topts *to, char *file, size_t flen, char *cmd, size_t clen)
{
	char dir[PATH_MAX + 32], json[PATH_MAX + 64], log[PATH_MAX + 64], protos[512] = "", ns[16], ops[16];
	char stalls[64], mst[16], mcr[16], bud[32];
	size_t o = 0;
	for (unsigned i = 0; i < cfg->nproto; i++)
		o += (size_t)snprintf(protos + o, o < sizeof protos ? sizeof protos - o : 0, "%s%s", i ? "," : "",
				      cfg->proto[i]->name);
	snprintf(dir, sizeof dir, "%s/try-%u", to->tdir, k);
	snprintf(json, sizeof json, "%s/explore.json", dir);
	snprintf(log, sizeof log, "%s/explore.log", dir);
	snprintf(ns, sizeof ns, "%u", a->n);
	snprintf(ops, sizeof ops, "%u", a->ops);
	stall_list(a, stalls, sizeof stalls);
	snprintf(mst, sizeof mst, "%u", a->max_stalls);
	snprintf(mcr, sizeof mcr, "%u", a->max_crashes);
	snprintf(bud, sizeof bud, "%lldms", (long long)ms);
	if (fsx_mkdir_p(dir) != 0)
		return -1;
	char *argv[32 + 2 * CFG_MAX_KV];
	int n = 0;
	argv[n++] = "lockstorm";
	argv[n++] = "explore";
	argv[n++] = "-p";
	argv[n++] = protos;
	argv[n++] = "-w";
	argv[n++] = (char *)cfg->workload->name;
	argv[n++] = "-n";
	argv[n++] = ns;
	argv[n++] = "--ops";
	argv[n++] = ops;
	for (unsigned i = 0; i < cfg->nkv; i++) {
		argv[n++] = "--param";
		argv[n++] = (char *)cfg->kv[i];
	}
	argv[n++] = "--invariant";
	argv[n++] = (char *)check_inv_name((enum inv_id)c->inv);
	argv[n++] = "--stall";
	argv[n++] = stalls;
	argv[n++] = "--max-stalls";
	argv[n++] = mst;
	argv[n++] = "--max-crashes";
	argv[n++] = mcr;
	if (a->pauses)
		argv[n++] = "--pauses";
	if (a->points)
		argv[n++] = "--points";
	argv[n++] = "--time-budget";
	argv[n++] = bud;
	int shown = n; /* the rest is where it goes */
	argv[n++] = "-o";
	argv[n++] = dir;
	argv[n++] = "--json";
	argv[n++] = json;
	argv[n++] = "-q";
	argv[n] = NULL;
	size_t co = 0;
	for (int i = 0; i < shown; i++)
		co += (size_t)snprintf(cmd + co, co < clen ? clen - co : 0, "%s%s", i ? " " : "", argv[i]);
	int rc = t_spawn(argv, log);
	if (rc != 0 && rc != 1)
		return -1;
	json_t *jo = json_load_file(json, 0, NULL);
	const char *f = json_string_value(json_object_get(json_array_get(json_object_get(jo, "distinct"), 0), "file"));
	int found = rc == 1 && f && *f;
	if (found)
		snprintf(file, flen, "%s", f);
	json_decref(jo);
	return found;
}

static void print_story(const char *cex)
{
	json_t *o = json_load_file(cex, 0, NULL);
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(o, "story"), i, v)
		printf("    %2zu. %s\n", i + 1, json_string_value(v) ? json_string_value(v) : "");
	json_t *ex = json_array_get(json_object_get(o, "examples"), 0);
	if (json_string_value(ex))
		printf("    %s: %s\n", json_string_value(json_object_get(o, "invariant")), json_string_value(ex));
	json_decref(o);
}

static void say_faults(const struct tcase *c)
{
	printf("  faults on ");
	for (unsigned j = 0; j < c->nw; j++)
		printf("%sw%d", j ? ", " : "", c->w[j]);
	if (!c->nf) {
		printf(" shortly before: none (a pure interleaving, or a slow step the journals cannot show)\n");
		return;
	}
	printf(" shortly before:");
	for (unsigned i = 0; i < c->nf; i++) {
		printf("%s %s", i ? ";" : "", fault_kind_word(c->f[i].kind));
		if (c->f[i].kind == FK_STALL || c->f[i].kind == FK_STOP)
			printf(" %lld ms (%.2g stale)", (long long)c->f[i].ms, c->f[i].stale);
		printf(" on w%d at %s (seq %llu)", c->f[i].w, c->f[i].point ? c->f[i].point : "?",
		       (unsigned long long)c->f[i].seq);
	}
	printf("\n");
	if (c->nother)
		printf("  (%u of them errno or short-write faults: not modelled by explore, left out)\n", c->nother);
}

int triage_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "budget", required_argument, NULL, 'b' },
		{ "out", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct topts to = { .budget_ms = 60000 };
	const char *odir = NULL;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":b:o:qh", longopts, NULL)) != -1) {
		char msg[160];
		switch (ch) {
		case 'b':
			if (num_ms(optarg, 0, &to.budget_ms, msg, sizeof msg) || to.budget_ms < 1000) {
				fprintf(stderr, "lockstorm: triage --budget %s: want a duration of 1s or more\n", optarg);
				return 2;
			}
			break;
		case 'o':
			odir = optarg;
			break;
		case 'q':
			to.quiet = 1;
			break;
		case 'h':
			fputs(triage_usage, stdout);
			return 0;
		case ':':
			fprintf(stderr, "lockstorm: triage: option %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "lockstorm: triage: unknown option '%s' (see lockstorm triage --help)\n",
				argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "lockstorm: triage wants one kept run's OUTDIR (see lockstorm triage --help)\n");
		return 2;
	}
	to.outdir = argv[optind];
	return triage_outdir(to.outdir, odir, to.budget_ms, to.quiet);
}

int triage_outdir(const char *outdir, const char *odir, int64_t budget_ms, int quiet)
{
	static struct run_config cfg;
	char why[1024], p[PATH_MAX + 64];
	struct topts to = { .outdir = outdir, .budget_ms = budget_ms, .quiet = quiet };
	snprintf(p, sizeof p, "%s/run.json", outdir);
	if (access(p, F_OK) != 0) {
		fprintf(stderr, "lockstorm: triage: %s has no run.json: not a kept run (use run -o OUTDIR)\n", outdir);
		return 2;
	}
	memset(&cfg, 0, sizeof cfg);
	if (runcfg_load(&cfg, p, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: triage: %s\n", why);
		return 2;
	}
	struct check_result *res = calloc(1, sizeof *res);
	struct jrec *rec = NULL;
	size_t nrec = 0, torn = 0;
	unsigned files = 0;
	if (!res || driver_verdict(&cfg, outdir, res, &files, why, sizeof why) != 0 ||
	    journal_read_dir(outdir, &rec, &nrec, &torn, &files) != 0) {
		fprintf(stderr, "lockstorm: triage: %s\n", res ? why : "out of memory");
		free(res);
		return 2;
	}
	int rc = 0;
	struct tcase *cs = calloc(INV__COUNT, sizeof *cs);
	unsigned ncs = 0;
	if (!cs) {
		rc = 3;
		goto out;
	}
	for (int i = 0; i < INV__COUNT; i++)
		if (res->inv[i].applicable && res->inv[i].violations && res->inv[i].nex) {
			cs[ncs].inv = i;
			cs[ncs].ex = &res->inv[i].ex[0];
			collect_faults(&cs[ncs], &cfg, rec, nrec);
			ncs++;
		}
	printf("triage %s: ", outdir);
	for (unsigned i = 0; i < cfg.nproto; i++)
		printf("%s%s", i ? "," : "", cfg.proto[i]->name);
	printf(" / %s, %u workers, seed %llu, faults %s; budget %.0f s\n", cfg.workload->name, cfg.workers,
	       (unsigned long long)cfg.seed, cfg.faults.profile[0] ? cfg.faults.profile : "as given",
	       (double)budget_ms / 1000.0);
	if (!ncs) {
		printf("nothing to triage: the run's verdict is PASS\n");
		goto out;
	}
	for (unsigned i = 0; i < cfg.nproto; i++)
		if (cfg.proto[i]->flags & LOCK_EXTERNAL) {
			printf("not reproduced: %s is an external adapter; explore schedules the built-in protocols' "
			       "steps only\n", cfg.proto[i]->name);
			goto out;
		}
	if (odir)
		snprintf(to.tdir, sizeof to.tdir, "%s", odir);
	else
		snprintf(to.tdir, sizeof to.tdir, "%s/triage", outdir);
	if (fsx_mkdir_p(to.tdir) != 0) {
		fprintf(stderr, "lockstorm: triage: cannot make %s: %s\n", to.tdir, strerror(errno));
		rc = 2;
		goto out;
	}
	struct tattempt plan[INV__COUNT][T_MAX_ATTEMPTS];
	unsigned nplan[INV__COUNT];
	unsigned left = 0;
	for (unsigned i = 0; i < ncs; i++)
		left += nplan[i] = plan_attempts(&cs[i], plan[i]);
	/* ^C or a TERM: the running search stops (its process group gets it too), and so does triage */
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = t_on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	int64_t t0 = mono_ms();
	unsigned tries = 0, ncex = 0, nconf = 0;
	for (unsigned i = 0; i < ncs; i++) {
		struct tcase *c = &cs[i];
		const char *inv = check_inv_name((enum inv_id)c->inv);
		if (c->by[0]) {
			printf("\n%s: confirmed by %s too (its replay violates it)\n", inv, c->by);
			left -= nplan[i];
			nconf++;
			continue;
		}
		printf("\n%s: %s\n", inv, c->ex->text);
		if (!quiet)
			say_faults(c);
		size_t to_len = 0;
		for (unsigned k = 0; k < nplan[i]; k++, left--) {
			int64_t rem = budget_ms - (mono_ms() - t0);
			if (rem < 500 || t_interrupted)
				break;
			/* a quarter of what is left at most: the targeted first attempts matter most, and a
			 * search that finds stops early, leaving its time to the rest */
			int64_t share = rem / (int64_t)(left < 4 ? left : 4);
			if (share < 1000)
				share = rem < 1000 ? rem : 1000;
			char file[PATH_MAX + 32], cmd[2048];
			int64_t a0 = mono_ms();
			int f = t_explore(&cfg, c, &plan[i][k], ++tries, share, &to, file, sizeof file, cmd, sizeof cmd);
			double took = (double)(mono_ms() - a0) / 1000.0;
			if (!quiet)
				printf("  try %u: lockstorm %s: %s (%.1f s)\n", tries, cmd + strlen("lockstorm "),
				       f > 0 ? "found" : f == 0 ? "nothing found" : "explore failed", took);
			to_len += (size_t)snprintf(c->tried + to_len, to_len < sizeof c->tried ? sizeof c->tried - to_len : 0,
						  "%s-n %u --ops %u%s%s", k ? "; " : "", plan[i][k].n, plan[i][k].ops,
						  plan[i][k].pauses ? " --pauses" : "", plan[i][k].points ? " --points" : "");
			if (f <= 0)
				continue;
			char dest[PATH_MAX + 32];
			snprintf(dest, sizeof dest, "%s/cex-%u.json", to.tdir, ++ncex);
			if (rename(file, dest) != 0) {
				fprintf(stderr, "lockstorm: triage: cannot keep %s as %s: %s\n", file, dest, strerror(errno));
				rc = 3;
				continue;
			}
			unsigned ok, mask;
			replay_check(dest, to.tdir, T_REPLAYS, &ok, &mask);
			if (ok != T_REPLAYS || !(mask & (1u << c->inv))) {
				printf("  found %s, but it replays the violation %u/%u times: not confirmed\n", dest, ok,
				       T_REPLAYS);
				continue;
			}
			snprintf(c->confirmed, sizeof c->confirmed, "%s", dest);
			char also[256] = "";
			size_t ao = 0;
			for (unsigned j = i + 1; j < ncs; j++)
				if (!cs[j].by[0] && (mask & (1u << cs[j].inv))) {
					snprintf(cs[j].by, sizeof cs[j].by, "%s", dest);
					ao += (size_t)snprintf(also + ao, ao < sizeof also ? sizeof also - ao : 0, "%s%s",
							       ao ? ", " : "", check_inv_name((enum inv_id)cs[j].inv));
				}
			printf("confirmed: %s (replays %u/%u%s%s)\n", dest, ok, T_REPLAYS, ao ? "; also shows " : "", also);
			print_story(dest);
			printf("  replay: lockstorm replay %s\n", dest);
			nconf++;
			left -= nplan[i] - k;
			break;
		}
		if (!c->confirmed[0] && t_interrupted)
			printf("not reproduced: interrupted (%s; tried %s)\n", inv, c->tried[0] ? c->tried : "nothing");
		else if (!c->confirmed[0])
			printf("not reproduced within %.0f s: %s (tried %s)\n", (double)budget_ms / 1000.0, inv,
			       c->tried[0] ? c->tried : "nothing: the budget was spent");
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (t_interrupted)
		printf("\ntriage: interrupted after %.1f s of %.0f s\n", (double)(mono_ms() - t0) / 1000.0,
		       (double)budget_ms / 1000.0);
	printf("\ntriage: %u of %u violated invariants confirmed", nconf, ncs);
	if (nconf < ncs && t_interrupted)
		printf(", %u not tried to the end (interrupted)", ncs - nconf);
	else if (nconf < ncs)
		printf(", %u not reproduced within %.0f s (the failure stays the machine's interleaving: rerun, or "
		       "give more --budget)", ncs - nconf, (double)budget_ms / 1000.0);
	printf("\n");
	if (nconf && rc == 0)
		rc = 1;
	else if (t_interrupted && rc == 0)
		rc = 4; /* INCOMPLETE: cut short with nothing confirmed proves nothing */
	/* the attempts' folders: only the counterexamples are worth keeping */
	for (unsigned k = 1; k <= tries; k++) {
		snprintf(p, sizeof p, "%s/try-%u", to.tdir, k);
		fsutil_rm_tree(p);
	}
	if (!ncex)
		rmdir(to.tdir);
out:
	free(cs);
	free(rec);
	free(res);
	return rc;
}
