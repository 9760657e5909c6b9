/*
 * options.c - the explore command's configuration and options (see xint.h).
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
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../core/num.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"

enum { OPT_FS = 480 }; /* --fs (apart from xint.h's list, which others extend) */

/* ---- configuration ---- */

static const char explore_usage[] =
	"usage: lockstorm explore [options]\n"
	"\n"
	"Search the interleavings of the workers' file-system steps instead of hoping a random\n"
	"torture hits them.  Every fsx call is a step the scheduler grants; time is virtual (the\n"
	"origins' real stale ages apply and a stall costs nothing); a stall (the clock jumps past\n"
	"a multiple of the stall-ed worker's stale age) and a crash (SIGKILL at a step) are choices\n"
	"too.  A failure is shrunk, printed as a story and saved for `lockstorm replay`.\n"
	"\n"
	"  -p, --protocol P[,P..]   protocol revision(s) (default mkdir-owner; a list makes a mixed fleet);\n"
	"                           ext:NAME explores the real library (Node, Python adapters: every fs call a\n"
	"                           step, time virtual; one adapter; docs/external-workers.md)\n"
	"  -w, --workload W         update (default), hold, append, generation\n"
	"  -n, --workers N          worker processes, 1 to 16 (default 2)\n"
	"      --ops N              operations per worker (default 2)\n"
	"      --param K=V          a protocol or workload parameter (real time: no --time-scale)\n"
	"  -s, --seed S             seed of the search and of the workers' names and tokens (default 1)\n"
	"      --strategy S         random (default) | pct:d=N (PCT, bug depth N, default 3) |\n"
	"                           dfs:preempt=N (every schedule with at most N preemptions) |\n"
	"                           guided (keep schedules that reach new coverage, mutate them)\n"
	"  -j, --jobs N             N explorer processes (one per core; default 1), each taking every\n"
	"                           Nth schedule; their findings merged (random, pct, guided)\n"
	"      --schedules N        stop after N schedules (default 20000; dfs: until exhausted)\n"
	"      --time-budget D      stop after D of wall time (default 60s)\n"
	"      --all                go on after a failure; report each distinct one (default: stop)\n"
	"      --max-faults K=N[,K=N..]  faults of each kind per schedule (0 turns one off; `all=N`\n"
	"                           sets every kind): stall, crash, errno (an fs call fails: EPERM,\n"
	"                           EACCES, ENOSPC, ENOENT at mkdir, ...), short-write (10 bytes land,\n"
	"                           then ENOSPC), split-write (10 bytes land, the writer pauses, the\n"
	"                           rest lands later), pid-reuse (a dead holder's pid answers alive),\n"
	"                           pid-dead (a live holder's pid answers ESRCH), sweep (the empty\n"
	"                           folders beside the lock are removed), skew (a worker's clock runs\n"
	"                           +-K stale ages off), coarse-mtime (its stat sees 2 s steps),\n"
	"                           other-host (it plays a second machine), restart (a worker is\n"
	"                           killed and starts again at once with the same pid, as in a\n"
	"                           container or a tab).  Default 1 of each, 2 crashes\n"
	"                           (dfs: 1 stall and 1 crash only, unless this option is given);\n"
	"                           power-loss (the power fails: every worker dies, whatever was not\n"
	"                           fsync'd is lost, and the workers it killed start again as new\n"
	"                           processes, their restart judged; modelled file system only) is\n"
	"                           off unless named: all=N leaves it.  ext:NAME: crash, errno,\n"
	"                           short-write and split-write only (at Node's write, writeFile,\n"
	"                           appendFile, Python's os.write), each only when named (or all=N)\n"
	"      --max-stalls N       the same as --max-faults stall=N\n"
	"      --max-crashes N      the same as --max-faults crash=N (default 2, dfs 1)\n"
	"      --stall K[,K..]      a stall moves the clock K x the stale age; several: the strategy\n"
	"                           picks one per stall (default 0.5,1.5: below and above the stale\n"
	"                           age); a skew is one of them ahead or behind\n"
	"      --pauses             a stall may also be a pause: the worker is descheduled while the\n"
	"                           others go on through the times in between (the clock moves with\n"
	"                           their sleeps), instead of the clock jumping for all at once\n"
	"      --points             every protocol point is a decision too, so a stall or a crash can\n"
	"                           land between a step and the decision taken from it (slower)\n"
	"      --max-steps N        steps per schedule before it is cut off and judged (default 20000)\n"
	"      --invariant I[,I..]  look for violations of these only (default: any); e.g.\n"
	"                           no-lost-writes to find a lost write where a double holder comes first\n"
	"      --no-shrink          save failures as found\n"
	"  -o, --out DIR            write counterexamples as DIR/cex-N.json (default ./explore-out,\n"
	"                           made only when something is found)\n"
	"      --json FILE          a summary: schedules, rate, failures, coverage\n"
	"      --junit FILE         JUnit XML: a testcase per invariant, failing with its counterexamples\n"
	"      --dir DIR            where to make the scratch directory (default /dev/shm, else /tmp)\n"
	"      --fs real|model[:P]  the file system the workers see: model (default) is the modelled\n"
	"                           one (docs/explore.md), P a preset ext4 (default) | tmpfs | fat |\n"
	"                           windows | tab and/or KEY=VALUE: reuse=immediate|never,\n"
	"                           btime=yes|no, readdir=steps|snapshot, time=ns|1s|2s,\n"
	"                           case=sensitive|insensitive, windows=yes|no, split=yes|no;\n"
	"                           real: system calls in the scratch directory (the host decides)\n"
	"      --no-pin             do not pin the explorer and its workers to the CPU it starts on\n"
	"  -q, --quiet              only the verdict and the story\n"
	"  -v, --verbose            every schedule's outcome\n"
	"\n"
	"exit: 0 nothing found, 1 a violation found, 2 bad usage, 3 the harness failed\n";

/* A whole decimal number in [lo, hi] (core/num.h). */
static int parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	return num_u64(s, lo, hi, out, NULL, 0);
}

void xcfg_defaults(struct xcfg *c)
{
	memset(c, 0, sizeof *c);
	runcfg_defaults(&c->run);
	char why[256];
	runcfg_set_protocols(&c->run, "mkdir-owner", why, sizeof why);
	c->run.workers = 2;
	c->run.time_scale = 1.0;
	c->run.duration_ms = 0;
	c->ops = 2;
	c->jobs = 1;
	c->strategy = XS_RANDOM;
	c->pct_d = 3;
	c->preempt = 2;
	c->schedules = 20000;
	c->budget_ms = 60000;
	c->max_stalls = 1;
	c->max_crashes = 1;
	c->max_steps = 20000; /* a volter waiter polls 25 ms for 10 s: 400 rounds of a few steps */
	c->stallv[0] = 1.5; /* first: a file that names stall 1.5 as its only multiple reads the same */
	c->stallv[1] = 0.5;
	c->nstallv = 2;
	for (int k = XK_ERRNO; k < XK__COUNT; k++)
		c->maxf[k] = k != XK_POWER; /* power loss ends the execution: asked for by name */
	snprintf(c->outdir, sizeof c->outdir, "explore-out");
	mfs_pers_default(&c->fs);
}

static int parse_strategy(struct xcfg *c, const char *s, char *why, size_t len)
{
	uint64_t v;
	if (!strcmp(s, "random")) {
		c->strategy = XS_RANDOM;
	} else if (!strcmp(s, "pct")) {
		c->strategy = XS_PCT;
	} else if (!strncmp(s, "pct:d=", 6)) {
		if (parse_uint(s + 6, 1, 15, &v))
			return runcfg_fail(why, len, "--strategy %s: want pct:d=N with N from 1 to 15", s);
		c->strategy = XS_PCT;
		c->pct_d = (unsigned)v;
	} else if (!strcmp(s, "guided")) {
		c->strategy = XS_GUIDED;
	} else if (!strcmp(s, "dfs")) {
		c->strategy = XS_DFS;
	} else if (!strncmp(s, "dfs:preempt=", 12)) {
		if (parse_uint(s + 12, 0, 100, &v))
			return runcfg_fail(why, len, "--strategy %s: want dfs:preempt=N with N from 0 to 100", s);
		c->strategy = XS_DFS;
		c->preempt = (unsigned)v;
	} else {
		return runcfg_fail(why, len, "--strategy %s: want random, pct:d=N, dfs:preempt=N or guided", s);
	}
	return 0;
}

const char *const kind_names[XK__COUNT] = { "run", "stall", "crash", "pause", "errno", "short-write", "split-write",
					     "pid-reuse", "pid-dead", "sweep", "skew", "coarse-mtime", "other-host", "power-loss",
					     "restart" };

int x_kind_parse(const char *name)
{
	for (int k = 0; name && k < XK__COUNT; k++)
		if (!strcmp(name, kind_names[k]))
			return k;
	return -1;
}

/* The explorer schedules fsx steps: an adapter process makes none. */
int builtin_only(const struct run_config *r, char *why, size_t len)
{
	for (unsigned i = 0; i < r->nproto; i++)
		if (r->proto[i]->flags & LOCK_EXTERNAL)
			return runcfg_fail(why, len, "%s: explore schedules the built-in protocols' steps; an external "
				     "adapter runs under `lockstorm run` only", r->proto[i]->name);
	return 0;
}

/* "no-lost-writes,zombie-write" -> a bit per invariant */
int parse_invariants(const char *list, unsigned *want, char *why, size_t len)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", list);
	*want = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int found = -1;
		for (int i = 0; i < INV__COUNT; i++)
			if (!strcmp(t, check_inv_name((enum inv_id)i)))
				found = i;
		if (found < 0) {
			char names[256];
			size_t n = 0;
			for (int i = 0; i < INV__COUNT; i++)
				n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
						      i ? ", " : "", check_inv_name((enum inv_id)i));
			return runcfg_fail(why, len, "--invariant %s: unknown invariant '%s' (known: %s)", list, t, names);
		}
		*want |= 1u << found;
	}
	return *want ? 0 : runcfg_fail(why, len, "--invariant needs a name");
}

/* "1.5" or "0.5,1.5,3": the multiples of the stale age a stall may take. */
static int parse_stalls(struct xcfg *c, const char *list, char *why, size_t len)
{
	char buf[128];
	snprintf(buf, sizeof buf, "%s", list);
	c->nstallv = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		double f;
		if (num_real(t, 0, 1000, NUM_ABOVE, &f, NULL, 0) || c->nstallv == X_MAX_STALLV)
			return runcfg_fail(why, len, "--stall %s: want up to %d multiples of the stale age > 0 (e.g. 1.5 or "
				     "0.5,1.5)", list, X_MAX_STALLV);
		c->stallv[c->nstallv++] = f;
	}
	return c->nstallv ? 0 : runcfg_fail(why, len, "--stall needs a multiple of the stale age");
}

/* 0 ok, 1 --help printed, -1 bad usage (why). */
/* --max-faults errno=1,short-write=0,...; stall= and crash= are --max-stalls and --max-crashes. */
static int parse_max_faults(struct xcfg *c, const char *arg, char *why, size_t len)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", arg);
	char *save = NULL;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t v;
		if (!eq || parse_uint(eq + 1, 0, 16, &v))
			return runcfg_fail(why, len, "--max-faults %s: want KIND=N (N from 0 to 16), e.g. errno=1,sweep=0", arg);
		*eq = '\0';
		int k = strcmp(t, "all") ? x_kind_parse(t) : XK__COUNT;
		if (k < 0 || k == XK_RUN || k == XK_PAUSE) {
			return runcfg_fail(why, len, "--max-faults: unknown kind '%s' (known: all, stall, crash, errno, short-write, "
				     "split-write, pid-reuse, pid-dead, sweep, skew, coarse-mtime, other-host, power-loss, "
				     "restart)", t);
		}
		for (int j = k == XK__COUNT ? 0 : k; j < (k == XK__COUNT ? XK__COUNT : k + 1); j++) {
			if (k == XK__COUNT && j == XK_POWER)
				continue; /* all= leaves it: power-loss=N names it */
			if (j == XK_STALL)
				c->max_stalls = (unsigned)v;
			else if (j == XK_CRASH) {
				c->max_crashes = (unsigned)v;
				c->crashes_named = 1;
			} else if (j >= XK_ERRNO)
				c->maxf[j] = (unsigned)v;
			c->maxf_named |= 1u << j;
		}
	}
	c->maxf_set = 1;
	return 0;
}

int xcfg_parse(struct xcfg *c, int argc, char **argv, char *why, size_t len)
{
	static const struct option longopts[] = {
		{ "protocol", required_argument, NULL, 'p' },
		{ "workload", required_argument, NULL, 'w' },
		{ "workers", required_argument, NULL, 'n' },
		{ "ops", required_argument, NULL, OPT_OPS },
		{ "param", required_argument, NULL, OPT_PARAM },
		{ "seed", required_argument, NULL, 's' },
		{ "strategy", required_argument, NULL, OPT_STRATEGY },
		{ "schedules", required_argument, NULL, OPT_SCHEDULES },
		{ "time-budget", required_argument, NULL, OPT_BUDGET },
		{ "all", no_argument, NULL, OPT_ALL },
		{ "max-stalls", required_argument, NULL, OPT_MAX_STALLS },
		{ "max-crashes", required_argument, NULL, OPT_MAX_CRASHES },
		{ "max-faults", required_argument, NULL, OPT_MAX_FAULTS },
		{ "stall", required_argument, NULL, OPT_STALL },
		{ "max-steps", required_argument, NULL, OPT_MAX_STEPS },
		{ "no-shrink", no_argument, NULL, OPT_NO_SHRINK },
		{ "invariant", required_argument, NULL, OPT_INVARIANT },
		{ "no-pin", no_argument, NULL, OPT_NO_PIN },
		{ "pauses", no_argument, NULL, OPT_PAUSES },
		{ "points", no_argument, NULL, OPT_POINTS },
		{ "out", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "junit", required_argument, NULL, OPT_JUNIT },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "fs", required_argument, NULL, OPT_FS },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int saw_schedules = 0;
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":p:w:n:s:o:j:qvh", longopts, NULL)) != -1) {
		uint64_t v;
		switch (ch) {
		case 'p':
			if (runcfg_set_protocols(&c->run, optarg, why, len))
				return -1;
			break;
		case 'w':
			if (runcfg_set_workload(&c->run, optarg, why, len))
				return -1;
			break;
		case 'n':
			if (parse_uint(optarg, 1, SCHED_MAX_WORKERS, &v))
				return runcfg_fail(why, len, "-n %s: want a worker count from 1 to %d", optarg, SCHED_MAX_WORKERS);
			c->run.workers = (unsigned)v;
			break;
		case OPT_OPS:
			if (parse_uint(optarg, 1, 1000, &v))
				return runcfg_fail(why, len, "--ops %s: want operations per worker from 1 to 1000", optarg);
			c->ops = (unsigned)v;
			break;
		case OPT_PARAM:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return runcfg_fail(why, len, "--param %s: want K=V", optarg);
			if (c->run.nkv == CFG_MAX_KV)
				return runcfg_fail(why, len, "too many --param (at most %d)", CFG_MAX_KV);
			c->run.kv[c->run.nkv++] = optarg;
			break;
		case 's':
			if (parse_uint(optarg, 0, UINT64_MAX, &v))
				return runcfg_fail(why, len, "-s %s: want a whole number", optarg);
			c->run.seed = v;
			break;
		case OPT_STRATEGY:
			if (parse_strategy(c, optarg, why, len))
				return -1;
			break;
		case OPT_SCHEDULES:
			if (parse_uint(optarg, 1, UINT64_MAX, &v))
				return runcfg_fail(why, len, "--schedules %s: want a whole number >= 1", optarg);
			c->schedules = v;
			saw_schedules = 1;
			break;
		case OPT_BUDGET: {
			int64_t ms;
			char msg[160];
			if (num_ms(optarg, 0, &ms, msg, sizeof msg))
				return runcfg_fail(why, len, "--time-budget: %s", msg);
			if (ms <= 0)
				return runcfg_fail(why, len, "--time-budget %s: want 1ms or more", optarg);
			c->budget_ms = ms;
			break;
		}
		case OPT_ALL:
			c->all = 1;
			break;
		case OPT_MAX_STALLS:
			if (parse_uint(optarg, 0, 16, &v))
				return runcfg_fail(why, len, "--max-stalls %s: want 0 to 16", optarg);
			c->max_stalls = (unsigned)v;
			break;
		case OPT_MAX_CRASHES:
			if (parse_uint(optarg, 0, 16, &v))
				return runcfg_fail(why, len, "--max-crashes %s: want 0 to 16", optarg);
			c->max_crashes = (unsigned)v;
			c->crashes_named = 1;
			break;
		case OPT_MAX_FAULTS:
			if (parse_max_faults(c, optarg, why, len))
				return -1;
			break;
		case OPT_STALL:
			if (parse_stalls(c, optarg, why, len))
				return -1;
			break;
		case OPT_MAX_STEPS:
			if (parse_uint(optarg, 10, 1000000, &v))
				return runcfg_fail(why, len, "--max-steps %s: want 10 to 1000000", optarg);
			c->max_steps = (unsigned)v;
			break;
		case OPT_NO_SHRINK:
			c->no_shrink = 1;
			break;
		case OPT_INVARIANT:
			if (parse_invariants(optarg, &c->want, why, len))
				return -1;
			break;
		case OPT_NO_PIN:
			c->no_pin = 1;
			break;
		case OPT_PAUSES:
			c->pauses = 1;
			break;
		case OPT_POINTS:
			c->points = 1;
			break;
		case 'o':
			if (strlen(optarg) >= sizeof c->outdir - 32)
				return runcfg_fail(why, len, "-o: path too long");
			snprintf(c->outdir, sizeof c->outdir, "%s", optarg);
			break;
		case OPT_JSON:
			snprintf(c->json, sizeof c->json, "%s", optarg);
			break;
		case OPT_JUNIT:
			snprintf(c->junit, sizeof c->junit, "%s", optarg);
			break;
		case OPT_DIR:
			if (strlen(optarg) >= sizeof c->dir - 64)
				return runcfg_fail(why, len, "--dir: path too long");
			snprintf(c->dir, sizeof c->dir, "%s", optarg);
			break;
		case 'j':
			if (parse_uint(optarg, 1, 64, &v))
				return runcfg_fail(why, len, "-j %s: want 1 to 64 explorer processes", optarg);
			c->jobs = (unsigned)v;
			break;
		case 'q':
			c->quiet = 1;
			break;
		case 'v':
			c->verbose = 1;
			break;
		case OPT_FS:
			if (mfs_pers_parse(optarg, &c->fs, why, len))
				return -1;
			break;
		case 'h':
			fputs(explore_usage, stdout);
			return 1;
		case ':':
			return runcfg_fail(why, len, "option %s needs a value", argv[optind - 1]);
		default:
			return runcfg_fail(why, len, "unknown option '%s' (see lockstorm explore --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return runcfg_fail(why, len, "unexpected argument '%s' (see lockstorm explore --help)", argv[optind]);
	if (c->strategy == XS_DFS && !saw_schedules)
		c->schedules = 0;
	/* two crashes by default where they are drawn (K-VL-2: a holder and its
	 * reclaimer dead); dfs branches on every crash it may make: one */
	if (c->strategy != XS_DFS && !c->crashes_named)
		c->max_crashes = 2;
	if (c->strategy == XS_DFS && !c->maxf_set) /* every kind is a branch: the bounded space would explode */
		for (int k = XK_ERRNO; k < XK__COUNT; k++)
			c->maxf[k] = 0;
	if (c->maxf[XK_POWER] && !c->fs.model)
		return runcfg_fail(why, len, "--max-faults power-loss=%u: power loss is a choice of the modelled file "
				   "system (--fs model...), not of --fs real", c->maxf[XK_POWER]);
	if (c->jobs > 1 && c->strategy == XS_DFS)
		return runcfg_fail(why, len, "-j %u: dfs is one search tree; use random, pct or guided with -j", c->jobs);
	struct stat st;
	if (c->dir[0] && (stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return runcfg_fail(why, len, "--dir %s: not a directory", c->dir);
	if (c->run.nproto && (c->run.proto[0]->flags & LOCK_EXTERNAL))
		return runcfg_resolve(&c->run, why, len); /* explore/xext.c runs the adapter's own calls */
	return builtin_only(&c->run, why, len) ? -1 : runcfg_resolve(&c->run, why, len);
}

void say_config(const struct xcfg *c)
{
	fprintf(stderr, "lockstorm explore: ");
	unsigned given = c->run.nproto_given ? c->run.nproto_given : c->run.nproto;
	for (unsigned i = 0; i < given; i++)
		fprintf(stderr, "%s%s", i ? "," : "", c->run.proto[i]->name);
	fprintf(stderr, " / %s, %u workers x %u ops", c->run.workload->name, c->run.workers, c->ops);
	if (given < c->run.nproto) { /* --param lists: the workers' revisions */
		for (unsigned w = 0; w < c->run.workers && w < c->run.nproto; w++)
			fprintf(stderr, "%s w%u %s", w ? "," : " (", w, cfg_slot_label(&c->run, w));
		fprintf(stderr, "%s)", c->run.workers > c->run.nproto ? ", .." : "");
	}
	fprintf(stderr, ", strategy ");
	if (c->strategy == XS_RANDOM)
		fprintf(stderr, "random");
	else if (c->strategy == XS_PCT)
		fprintf(stderr, "pct:d=%u", c->pct_d);
	else if (c->strategy == XS_GUIDED)
		fprintf(stderr, "guided");
	else
		fprintf(stderr, "dfs:preempt=%u", c->preempt);
	fprintf(stderr, ", seed %llu, stalls <= %u (", (unsigned long long)c->run.seed, c->max_stalls);
	for (unsigned i = 0; i < c->nstallv; i++)
		fprintf(stderr, "%s%.3g", i ? " or " : "", c->stallv[i]);
	fprintf(stderr, " x stale), crashes <= %u", c->max_crashes);
	for (int k = XK_ERRNO; k < XK__COUNT; k++)
		if (c->maxf[k])
			fprintf(stderr, ", %s <= %u", kind_names[k], c->maxf[k]);
	fprintf(stderr, "\n");
}

