/*
 * main.c - `lockstorm` command line: run, check, dump, list.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../protocols/external.h"
#include "../workloads/workload.h"
#include "../run/driver.h"
#include "../run/exec.h"
#include "../core/journal.h"
#include "../run/runcfg.h"
#include "../report/pyscript.h"
#include "compare.h"
#include "scenario.h"
#include "../explore/explore.h"

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
	"\n"
	"`lockstorm run --help` lists the run options.\n"
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
	return driver_run(&cfg);
}

static int cmd_check(int argc, char **argv)
{
	const char *dir = NULL, *json = NULL, *junit = NULL;
	int quiet = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet"))
			quiet = 1;
		else if (!strcmp(argv[i], "--json") && i + 1 < argc)
			json = argv[++i];
		else if (!strcmp(argv[i], "--junit") && i + 1 < argc)
			junit = argv[++i];
		else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: lockstorm check OUTDIR [-q] [--json FILE] [--junit FILE]\n");
			return 0;
		} else if (argv[i][0] == '-')
			return usage_error("check: unknown option '%s'", argv[i]);
		else if (dir)
			return usage_error("check: one OUTDIR only (got '%s' too)", argv[i]);
		else
			dir = argv[i];
	}
	if (!dir)
		return usage_error("%s", "check: usage: lockstorm check OUTDIR");
	return driver_check_junit(dir, quiet, json, junit);
}

static int cmd_dump(int argc, char **argv)
{
	if (argc != 2 || argv[1][0] == '-')
		return usage_error("%s", "dump: usage: lockstorm dump OUTDIR");
	struct jrec *rec;
	size_t n, torn;
	unsigned files;
	if (journal_read_dir(argv[1], &rec, &n, &torn, &files) != 0)
		return usage_error("dump: cannot read journals: %s", strerror(errno));
	if (files == 0) {
		free(rec);
		return usage_error("dump: no journals in %s/journal", argv[1]);
	}
	for (size_t i = 0; i < n; i++)
		journal_print_json(stdout, &rec[i]);
	if (torn)
		fprintf(stderr, "lockstorm: %zu torn bytes skipped at journal tails\n", torn);
	free(rec);
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

static int cmd_list(int argc, char **argv)
{
	if (argc < 2)
		return usage_error("%s", "list: usage: lockstorm list protocols|workloads|points [-p PROTO]|faults");
	const char *what = argv[1];
	const struct lock_ops *only = NULL;
	if (argc == 4 && !strcmp(argv[2], "-p")) {
		only = lock_find(argv[3]);
		if (!only) {
			char names[512];
			lock_names(names, sizeof names);
			fprintf(stderr, "lockstorm: unknown protocol '%s' (known: %s)\n", argv[3], names);
			return 2;
		}
	} else if (argc != 2) {
		return usage_error("list: unexpected argument '%s'", argv[2]);
	}
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
		for (const struct ext_adapter *a = ext_adapters; a->name; a++) {
			if (only && a->ops != only)
				continue;
			printf("%s\n  origin   %s\n  summary  %s\n", a->ops->name, a->ops->origin, a->ops->summary);
			printf("  adapter  %s%s\n", a->run ? "adapters/" : "", a->run ? a->run : "--exec CMD");
			printf("  params\n");
			list_params(a->ops->params);
			printf("\n");
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

int main(int argc, char **argv)
{
	journal_point_name = point_name;
	if (argc < 2) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return cmd_check(argc - 1, argv + 1);
	if (!strcmp(cmd, "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(cmd, "list"))
		return cmd_list(argc - 1, argv + 1);
	if (!strcmp(cmd, "exec"))
		return exec_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "merge"))
		return merge_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "compare"))
		return compare_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "scenario"))
		return scenario_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "explore"))
		return explore_main(argc - 1, argv + 1);
	if (!strcmp(cmd, "replay"))
		return replay_main(argc - 1, argv + 1);
	return usage_error("unknown command '%s' (see lockstorm --help)", cmd);
}
