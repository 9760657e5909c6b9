/*
 * main.c - `lockstorm` command line: the command table, run, check, dump,
 * list, help and version.
 *
 * One convention for every command: getopt_long, so `--opt=VALUE` and
 * `--opt VALUE` are alike; `lockstorm CMD --help` and `lockstorm help CMD`
 * print that command's help and exit 0; bad input exits 2 with one line.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check/inv.h"
#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../protocols/external.h"
#include "../workloads/workload.h"
#include "../run/driver.h"
#include "../run/exec.h"
#include "../core/fsutil.h"
#include "../core/journal.h"
#include "../run/runcfg.h"
#include "../report/pyscript.h"
#include "compare.h"
#include "scenario.h"
#include "../explore/explore.h"
#include "ls_version.h" /* generated: BUILD/generated (cmake/version.cmake) */

static const char usage[] =
	"usage: lockstorm COMMAND [options]\n"
	"\n"
	"  run      fork workers that run a lock protocol and a workload against one directory,\n"
	"           inject faults, and check the invariants from their journals\n"
	"  check    OUTDIR: re-derive the verdict of a kept run (run -o OUTDIR) from its files\n"
	"  dump     OUTDIR: print every journal record of a kept run as JSON lines\n"
	"  list     protocols | workloads | points [-p PROTO] | faults\n"
	"  explore  [-p ..] [-n ..] [--ops N] [--strategy random|pct:d=N|dfs:preempt=N]: search the\n"
	"           interleavings of the workers' steps (virtual time), shrink a failure to a story\n"
	"  replay   CEXFILE [--full] [--trace]: re-run a saved counterexample step for step\n"
	"  triage   OUTDIR [--budget D]: turn a failing run's journals into a counterexample (a targeted\n"
	"           explore), or say it was not reproduced within the budget\n"
	"  exec     [--fault SPEC].. [-s SEED] [--log FILE] -- CMD [ARGS]: run any program under\n"
	"           the preload fault shim and print what was injected\n"
	"  report   OUTDIR --html FILE [--markdown FILE]: one self-contained HTML page (plots\n"
	"           inlined) and a markdown summary of a kept run\n"
	"  merge    [-o OUTDIR] SHARD_DIR..: join ci/nightly shard folders into one report\n"
	"  compare  -p A,B[,C] [run options] [--repeat R]: revisions side by side on the same seeds\n"
	"           and fault plan (--json, --markdown, --junit FILE)\n"
	"  scenario list | show NAME | run NAME.. | run --all [-o OUTDIR] [-q] |\n"
	"           new NAME --from-run OUTDIR [-o FILE]: incidents and known bad interleavings\n"
	"           (scenarios/*.scenario), each revision against its expected verdict\n"
	"  adapter  new NAME --lang node|python|c [--dir DIR]: the skeleton of your own adapter\n"
	"           (-p ext:NAME with DIR on LOCKSTORM_ADAPTERS or --adapters DIR, any command)\n"
	"\n"
	"  help     [COMMAND]: this page, or a command's own (as COMMAND --help)\n"
	"  version  the version (also --version)\n"
	"\n"
	"`lockstorm run --help` lists the run options; every command takes --opt=VALUE and --opt VALUE.\n"
	"exit: 0 every invariant held, 1 a violation, 2 bad usage or input, 3 the harness failed\n";

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lockstorm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 2;
}

static int cmd_run(int argc, char **argv)
{
	static struct run_config cfg;
	char why[1024];
	runcfg_defaults(&cfg);
	int r = runcfg_parse(&cfg, argc, argv, why, sizeof why);
	if (r == 1)
		return 0;
	if (r != 0)
		return usage_error("%s", why);
	if (!cfg.triage_ms)
		return driver_run(&cfg);
	/* --triage: the journals must outlive the run; without -o they go to a
	 * folder kept only when there is something to triage */
	int temp = !cfg.outdir[0];
	if (temp) {
		const char *base = getenv("TMPDIR");
		snprintf(cfg.outdir, sizeof cfg.outdir, "%s/lockstorm-triage.XXXXXX", base && *base ? base : "/tmp");
		if (!mkdtemp(cfg.outdir)) {
			fprintf(stderr, "lockstorm: cannot make an output directory: %s\n", strerror(errno));
			return 3;
		}
	}
	int rc = driver_run(&cfg);
	if (rc == 1) {
		printf("\n");
		triage_outdir(cfg.outdir, NULL, cfg.triage_ms, cfg.quiet);
		if (temp)
			fprintf(stderr, "lockstorm: the run and its triage are kept in %s\n", cfg.outdir);
	} else if (temp) {
		fsutil_rm_tree(cfg.outdir);
	}
	return rc;
}

/* getopt_long's "unknown option" and "needs a value", as one line (exit 2). */
static int bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		return fprintf(stderr, "lockstorm: %s: option %s needs a value\n", cmd, arg), 2;
	if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))
		return fprintf(stderr, "lockstorm: %s: option '%.*s' takes no value\n", cmd, (int)strcspn(arg, "="), arg), 2;
	if (optopt && optopt < 256 && arg[1] != '-')
		return fprintf(stderr, "lockstorm: %s: unknown option '-%c' (see lockstorm %s --help)\n", cmd, optopt,
			       cmd), 2;
	return fprintf(stderr, "lockstorm: %s: unknown option '%s' (see lockstorm %s --help)\n", cmd, arg, cmd), 2;
}

static const char check_usage[] =
	"usage: lockstorm check OUTDIR [-q] [--json FILE] [--junit FILE]\n"
	"  OUTDIR          a kept run (lockstorm run -o OUTDIR): re-derive its verdict from the journals\n"
	"                  and the final state alone\n"
	"  -q, --quiet     only the verdict line\n"
	"      --json FILE write the JSON report (schema lockstorm-report/1)\n"
	"      --junit FILE write JUnit XML: one testcase per invariant\n"
	"exit: 0 every invariant held, 1 a violation, 2 bad usage or input, 3 the harness failed\n";

static int cmd_check(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", required_argument, NULL, 'j' },
		{ "junit", required_argument, NULL, 'u' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *json = NULL, *junit = NULL;
	int quiet = 0, c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'q':
			quiet = 1;
			break;
		case 'j':
			json = optarg;
			break;
		case 'u':
			junit = optarg;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return 0;
		default:
			return bad_option("check", c, argv);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (dir)
			return usage_error("check: one OUTDIR only (got '%s' too)", argv[i]);
		dir = argv[i];
	}
	if (!dir)
		return usage_error("%s", "check: usage: lockstorm check OUTDIR [-q] [--json FILE] [--junit FILE]");
	return driver_check_junit(dir, quiet, json, junit);
}

static const char dump_usage[] =
	"usage: lockstorm dump OUTDIR\n"
	"  print every journal record of a kept run (lockstorm run -o OUTDIR) as JSON lines, in the\n"
	"  global sequence order; torn tails are skipped and counted on stderr\n"
	"exit: 0 printed, 2 bad usage or no journals\n";

static int cmd_dump(int argc, char **argv)
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
			return bad_option("dump", c, argv);
		fputs(dump_usage, stdout);
		return 0;
	}
	if (argc - optind != 1)
		return usage_error("%s", argc - optind ? "dump: one OUTDIR only: lockstorm dump OUTDIR"
						    : "dump: usage: lockstorm dump OUTDIR");
	const char *dir = argv[optind];
	struct journal_cursor *cur;
	const struct jrec *r;
	size_t torn = 0;
	unsigned files;
	if (journal_cursor_open(dir, &cur, &files) != 0)
		return usage_error("dump: cannot read journals: %s", strerror(errno));
	if (files == 0) {
		journal_cursor_close(cur);
		return usage_error("dump: no journals in %s/journal", dir);
	}
	/* straight from the files in seq order, formatted into one big buffer */
	static char out[1 << 20];
	size_t used = 0;
	int rc;
	while ((rc = journal_cursor_next(cur, &r)) == 1) {
		if (used > sizeof out - JOURNAL_JSON_MAX) {
			fwrite(out, 1, used, stdout);
			used = 0;
		}
		used += journal_format_json(out + used, r);
	}
	fwrite(out, 1, used, stdout);
	if (rc == 0 && !journal_cursor_finish(cur, &torn, NULL, 0))
		/* never written so (one process numbers its records in order) */
		fprintf(stderr, "lockstorm: a journal is not in seq order: the lines are not sorted\n");
	journal_cursor_close(cur);
	if (rc < 0)
		return usage_error("dump: cannot read journals: %s", strerror(errno));
	if (torn)
		fprintf(stderr, "lockstorm: %zu torn bytes skipped at journal tails\n", torn);
	return 0;
}

static void list_params(const struct param *p)
{
	for (; p->name; p++) {
		char def[64];
		param_format(p, p->def, def, sizeof def);
		printf("    %-22s %-10s %s\n", p->name, def, p->help ? p->help : "");
	}
}

static void list_points(const char *const *points)
{
	for (; points && *points; points++)
		printf("    %s\n", *points);
}

static const char list_usage[] =
	"usage: lockstorm list protocols|workloads|points|faults|invariants [-p PROTO]\n"
	"  invariants    every invariant: what it means, which workloads exercise it\n"
	"  protocols     every protocol revision: origin, summary, parameters with their defaults\n"
	"  workloads     every workload and its parameters\n"
	"  points        every fault point: fs/<call> and each protocol's and workload's steps\n"
	"  faults        the fault kinds, their keys and the --faults profiles\n"
	"  -p, --protocol PROTO   protocols and points: only this one\n"
	"exit: 0 listed, 2 bad usage\n";

static int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "protocol", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const struct lock_ops *only = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":p:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			only = lock_find(optarg);
			if (!only) {
				char names[512];
				lock_names(names, sizeof names);
				fprintf(stderr, "lockstorm: list: unknown protocol '%s' (known: %s)\n", optarg, names);
				return 2;
			}
			break;
		case 'h':
			fputs(list_usage, stdout);
			return 0;
		default:
			return bad_option("list", c, argv);
		}
	}
	if (optind >= argc)
		return usage_error("%s", "list: usage: lockstorm list protocols|workloads|points|faults|invariants "
				   "[-p PROTO]");
	if (argc - optind > 1)
		return usage_error("list: unexpected argument '%s'", argv[optind + 1]);
	const char *what = argv[optind];
	if (!strcmp(what, "protocols")) {
		for (const struct lock_ops *const *o = lock_registry; *o; o++) {
			if (only && *o != only)
				continue;
			printf("%s\n  origin   %s\n  summary  %s\n", (*o)->name, (*o)->origin, (*o)->summary);
			if ((*o)->claims && *(*o)->claims)
				printf("  claims   %s\n", (*o)->claims);
			printf("  params\n");
			list_params((*o)->params);
			printf("\n");
		}
		/* external adapters: run by their own process (docs/external-workers.md) */
		const struct ext_adapter *a;
		for (unsigned k = 0; (a = ext_adapter_at(k)); k++) {
			if (only && a->ops != only)
				continue;
			printf("%s\n  origin   %s\n  summary  %s\n", a->ops->name, a->ops->origin, a->ops->summary);
			printf("  adapter  %s%s\n", a->run && a->run[0] != '/' ? "adapters/" : "", a->run ? a->run : "--exec CMD");
			printf("  params\n");
			list_params(a->ops->params);
			printf("\n");
		}
	} else if (!strcmp(what, "invariants")) {
		for (int i = 0; i < INV__COUNT; i++) {
			unsigned needs = check_inv_needs((enum inv_id)i);
			printf("%s\n  %s\n  workloads", check_inv_name((enum inv_id)i), check_inv_means((enum inv_id)i));
			for (const struct workload_ops *const *w = workload_registry; *w; w++)
				if (!needs || ((*w)->flags & needs))
					printf(" %s", (*w)->name);
			printf("\n\n");
		}
	} else if (!strcmp(what, "workloads")) {
		for (const struct workload_ops *const *w = workload_registry; *w; w++) {
			printf("%s\n  %s\n  params\n", (*w)->name, (*w)->summary);
			list_params((*w)->params);
			printf("\n");
		}
	} else if (!strcmp(what, "points")) {
		printf("fs (every call through the seam)\n");
		for (int op = 0; op < FSX_OP_COUNT; op++)
			if (op != FSX_POINT)
				printf("    %s\n", fsx_op_point((enum fsx_op)op));
		for (const struct lock_ops *const *o = lock_registry; *o; o++) {
			if (only && *o != only)
				continue;
			printf("%s\n", (*o)->name);
			list_points((*o)->points);
		}
		if (only && (only->flags & LOCK_EXTERNAL)) {
			printf("%s (the driver acts after each event line)\n", only->name);
			list_points(only->points);
		} else if (!only) {
			printf("ext:* and exec (external adapters; the driver acts after each event line)\n");
			list_points(ext_point_names);
		}
		for (const struct workload_ops *const *w = workload_registry; *w; w++) {
			printf("%s (workload)\n", (*w)->name);
			list_points((*w)->points);
		}
	} else if (!strcmp(what, "faults")) {
		printf("--fault KIND[@POINT][:KEY=VAL,...]   POINT is a glob over `lockstorm list points`\n"
		       "  stall         pause the worker at the point; for=300ms | 2s | 1.5stale (default 1stale)\n"
		       "  stop          the driver SIGSTOPs the worker and SIGCONTs it `for` later (a lid, a debugger)\n"
		       "  crash         journal the fault, then SIGKILL (use --respawn to restart the worker)\n"
		       "  errno         an fs/<call> fails with err=NAME without acting (default EIO); path=GLOB limits it\n"
		       "  short-write   fs/write writes bytes=K bytes, then fails with err (default ENOSPC);\n"
		       "                with for=DUR it is split instead: K bytes, a pause, then the rest (no error)\n"
		       "  sweep         a sweeper removes empty folders in the work dir every every=DUR (default 5ms);\n"
		       "                never the work dir itself, a *.lock directory or anything inside one\n"
		       "  skew          the worker's clock runs by=+-DUR ahead or behind\n"
		       "  coarse-mtime  file times seen through stat are rounded down to res=1s|2s (FAT, SMB, HFS+)\n"
		       "  pid-reuse     the worker's records name the pid of a live unrelated process\n"
		       "  split-identity fstat(fd) and lstat(path) report different identities for one file\n"
		       "                (a browser tab's VFS)\n"
		       "  other-host    the worker plays a second machine on a shared file system (hostname-other)\n"
		       "keys for all: p=PROB (default 1)  nth=N  once  workers=0,2,5-7\n"
		       "decisions draw from each worker's PRNG, seeded from (seed, worker id): same seed, same decisions\n"
		       "\nprofiles (--faults NAME):\n");
		fault_profiles_describe(stdout);
	} else {
		return usage_error("list: unknown list '%s' (protocols, workloads, points, faults)", what);
	}
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argv;
	if (argc > 1 && strcmp(argv[1], "-h") && strcmp(argv[1], "--help"))
		return usage_error("version: unexpected argument '%s'", argv[1]);
	if (argc > 1) {
		printf("usage: lockstorm version | lockstorm --version\n"
		       "  print the version: `git describe --always --dirty` of the source tree at build time,\n"
		       "  else the project version (%s)\n", LS_PROJECT_VERSION);
		return 0;
	}
	printf("lockstorm %s\n", LS_VERSION);
	return 0;
}

static int cmd_help(int argc, char **argv);
int adapter_main(int argc, char **argv); /* cli/adapter.c */
int adapter_take_option(int *argc, char **argv); /* cli/adapter.c: --adapters DIR */

static const struct command {
	const char *name;
	int (*main)(int argc, char **argv); /* argv[0] is the command's name */
} commands[] = {
	{ "run", cmd_run },         { "check", cmd_check },       { "dump", cmd_dump },
	{ "list", cmd_list },       { "explore", explore_main },  { "replay", replay_main },
	{ "triage", triage_main },
	{ "exec", exec_main },      { "report", report_main },    { "merge", merge_main },
	{ "compare", compare_main }, { "scenario", scenario_main }, { "help", cmd_help },
	{ "version", cmd_version }, { "adapter", adapter_main }, { NULL, NULL },
};

static const struct command *find_command(const char *name)
{
	for (const struct command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

/* help CMD [SUB]: CMD [SUB] --help. */
static int cmd_help(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	const struct command *c = find_command(argv[1]);
	if (!c)
		return usage_error("help: unknown command '%s' (see lockstorm --help)", argv[1]);
	if (argc > 3)
		return usage_error("help: unexpected argument '%s'", argv[3]);
	char help[] = "--help";
	char *av[4] = { argv[1], argc == 3 ? argv[2] : help, argc == 3 ? help : NULL, NULL };
	if (c->main == cmd_help)
		return fputs(usage, stdout), 0;
	return c->main(argc == 3 ? 3 : 2, av);
}

int main(int argc, char **argv)
{
	journal_point_name = point_name;
	if (adapter_take_option(&argc, argv) != 0)
		return 2;
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "-V"))
		return cmd_version(1, argv + 1);
	const struct command *c = find_command(cmd);
	if (!c)
		return usage_error("unknown command '%s' (see lockstorm --help)", cmd);
	return c->main(argc - 1, argv + 1);
}
