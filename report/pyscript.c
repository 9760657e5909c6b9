/*
 * pyscript.c - run the report scripts under reports/ (see pyscript.h).
 */
#include "pyscript.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/fsutil.h"
#include "../faults/fault.h"
#include "../core/journal.h"

#ifndef LS_SOURCE_DIR
#define LS_SOURCE_DIR "."
#endif

static int is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int self_exe(char *out, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	return 0;
}

int pyscript_find(const char *name, char *out, size_t len)
{
	const char *env = getenv("LOCKSTORM_REPORTS");
	if (env && *env) {
		snprintf(out, len, "%s/%s", env, name);
		if (is_file(out))
			return 0;
	}
	char beside[PATH_MAX], source[PATH_MAX];
	snprintf(beside, sizeof beside, "reports/%s", name);
	snprintf(source, sizeof source, "report/%s", name);
	return fsutil_find_beside(beside, source, FSUTIL_FILE, out, len);
}

/* "a,b,c" of names[0..n) into a malloc'd string. */
static char *join_names(const char *(*name)(int), int n)
{
	size_t cap = 64, len = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		const char *v = name(i);
		size_t need = len + strlen(v) + 2;
		if (need > cap) {
			cap = need * 2;
			char *t = realloc(s, cap);
			if (!t) {
				free(s);
				return NULL;
			}
			s = t;
		}
		len += (size_t)sprintf(s + len, "%s%s", i ? "," : "", v);
	}
	return s;
}

static const char *kind_name(int i)
{
	return fault_kind_name((enum fault_kind)i);
}

static void script_env(void)
{
	char exe[PATH_MAX];
	if (self_exe(exe, sizeof exe) == 0)
		setenv("LOCKSTORM_BIN", exe, 1);
	char *types = join_names(journal_type_name, EV__COUNT);
	char *kinds = join_names(kind_name, FK__COUNT);
	if (types)
		setenv("LOCKSTORM_EV_TYPES", types, 1);
	if (kinds)
		setenv("LOCKSTORM_FAULT_KINDS", kinds, 1);
	free(types);
	free(kinds);
}

int pyscript_run(const char *name, char *const args[])
{
	char script[PATH_MAX];
	if (pyscript_find(name, script, sizeof script) != 0) {
		fprintf(stderr, "lockstorm: cannot find reports/%s next to the binary or in %s/report\n", name,
			LS_SOURCE_DIR);
		return 3;
	}
	const char *py = getenv("LOCKSTORM_PYTHON");
	if (!py || !*py)
		py = "/usr/bin/python3";
	if (access(py, X_OK) != 0) {
		fprintf(stderr, "lockstorm: %s not found: install Debian's python3 and python3-matplotlib "
				"(./ci/setup does)\n", py);
		return 3;
	}
	size_t n = 0;
	while (args[n])
		n++;
	char **argv = calloc(n + 3, sizeof *argv);
	if (!argv)
		return 3;
	argv[0] = (char *)py;
	argv[1] = script;
	for (size_t i = 0; i < n; i++)
		argv[i + 2] = args[i];
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "lockstorm: fork: %s\n", strerror(errno));
		free(argv);
		return 3;
	}
	if (pid == 0) {
		script_env();
		execv(py, argv);
		fprintf(stderr, "lockstorm: cannot run %s: %s\n", py, strerror(errno));
		_exit(3);
	}
	free(argv);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return 3;
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "lockstorm: reports/%s died by signal %d\n", name, WTERMSIG(status));
	return 3;
}

static const char report_usage[] =
	"usage: lockstorm report OUTDIR [--html FILE] [--markdown FILE] [--title TEXT]\n"
	"  OUTDIR           a kept run (lockstorm run -o OUTDIR): report.json, run.json, journal/\n"
	"  --html FILE      one self-contained page: verdict, config, invariants with examples, throughput\n"
	"                   over time with faults marked, wait and hold histograms, per-worker fairness,\n"
	"                   a timeline of the holders around the first violations\n"
	"  --markdown FILE  a short summary for a CI job page\n"
	"  --title TEXT     the page's title\n"
	"  -h, --help       this help (options take --opt=VALUE and --opt VALUE alike)\n"
	"needs /usr/bin/python3 with python3-matplotlib (report/report.py)\n"
	"exit: 0 written, 2 bad usage or OUTDIR not a kept run, 3 the report script failed\n";

/* getopt_long's "unknown option" and "needs a value", as one line (exit 2). */
static int pyscript_bad_option(const char *cmd, int c, char **argv)
{
	const char *arg = argv[optind - 1];
	if (c == ':')
		fprintf(stderr, "lockstorm: %s: option %s needs a value\n", cmd, arg);
	else if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '='))
		fprintf(stderr, "lockstorm: %s: option '%.*s' takes no value\n", cmd, (int)strcspn(arg, "="), arg);
	else if (optopt && optopt < 256 && arg[1] != '-')
		fprintf(stderr, "lockstorm: %s: unknown option '-%c' (see lockstorm %s --help)\n", cmd, optopt, cmd);
	else
		fprintf(stderr, "lockstorm: %s: unknown option '%s' (see lockstorm %s --help)\n", cmd, arg, cmd);
	return 2;
}

int report_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "html", required_argument, NULL, 'H' },
		{ "markdown", required_argument, NULL, 'm' },
		{ "title", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL, *html = NULL, *md = NULL, *title = NULL;
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case 'H':
			html = optarg;
			break;
		case 'm':
			md = optarg;
			break;
		case 't':
			title = optarg;
			break;
		case 'h':
			fputs(report_usage, stdout);
			return 0;
		default:
			return pyscript_bad_option("report", c, argv);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (dir) {
			fprintf(stderr, "lockstorm: report: one OUTDIR only (got '%s' too)\n", argv[i]);
			return 2;
		}
		dir = argv[i];
	}
	if (!dir || (!html && !md)) {
		fprintf(stderr, "lockstorm: report: usage: lockstorm report OUTDIR --html FILE [--markdown FILE]\n");
		return 2;
	}
	char p[PATH_MAX + 32];
	if (!is_dir(dir)) {
		fprintf(stderr, "lockstorm: report: %s: not a directory\n", dir);
		return 2;
	}
	snprintf(p, sizeof p, "%s/report.json", dir);
	if (!is_file(p)) {
		fprintf(stderr, "lockstorm: report: %s has no report.json: not a kept run (use lockstorm run -o OUTDIR)\n",
			dir);
		return 2;
	}
	char *args[10];
	int n = 0;
	args[n++] = (char *)dir;
	if (html) {
		args[n++] = "--html";
		args[n++] = (char *)html;
	}
	if (md) {
		args[n++] = "--markdown";
		args[n++] = (char *)md;
	}
	if (title) {
		args[n++] = "--title";
		args[n++] = (char *)title;
	}
	args[n] = NULL;
	return pyscript_run("report.py", args);
}

static const char merge_usage[] =
	"usage: lockstorm merge [-o OUTDIR] [--baseline FILE] [--strict] SHARD_DIR..\n"
	"  join ci/nightly shard folders into one report (report/merge.py)\n"
	"  SHARD_DIR          a shard's output folder (ci/nightly --shard I/N -o SHARD_DIR)\n"
	"  -o, --out OUTDIR   where the merged report goes (default nightly-merged)\n"
	"      --baseline FILE  known failures (ci/nightly-baseline.txt)\n"
	"      --strict       a NEW failure seen once (ci/nightly's re-runs and triage) fails too\n"
	"  -h, --help         this help (options take --opt=VALUE and --opt VALUE alike)\n"
	"needs /usr/bin/python3 (report/merge.py)\n"
	"exit: 0 no new failure (or only ones seen once), 1 a new failure (not in the baseline) that fails the night,\n"
	"      2 bad usage or input, 3 the script failed\n";

int merge_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, 'o' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "strict", no_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *out = NULL, *baseline = NULL;
	int c, strict = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case 'b':
			baseline = optarg;
			break;
		case 's':
			strict = 1;
			break;
		case 'h':
			fputs(merge_usage, stdout);
			return 0;
		default:
			return pyscript_bad_option("merge", c, argv);
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "lockstorm: merge: usage: lockstorm merge [-o OUTDIR] [--baseline FILE] SHARD_DIR..\n");
		return 2;
	}
	/* merge.py gets the options in one spelling, the folders after "--" */
	char **args = calloc((size_t)(argc - optind) + 7, sizeof *args);
	if (!args)
		return 3;
	int n = 0;
	if (out) {
		args[n++] = "--out";
		args[n++] = (char *)out;
	}
	if (baseline) {
		args[n++] = "--baseline";
		args[n++] = (char *)baseline;
	}
	if (strict)
		args[n++] = "--strict";
	args[n++] = "--";
	for (int i = optind; i < argc; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	int rc = pyscript_run("merge.py", args);
	free(args);
	return rc;
}
