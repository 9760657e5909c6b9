/*
 * exec.c - `lockstorm exec`: run any program under the preload fault shim.
 *
 *   lockstorm exec [--fault SPEC].. [-s SEED] [--log FILE] [--ctrl] [-q] -- CMD [ARGS]
 *
 * Validates the plan (the kinds and points the shim can act on), finds
 * liblockstorm_preload.so next to this binary, runs CMD with LD_PRELOAD and
 * the LOCKSTORM_* variables (faults/preload/preload.h), waits, prints to
 * stderr what the shim injected (from its inject log), and exits with CMD's
 * status (128+signal when a signal ended it).  See docs/preload.md.
 */
#include "exec.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/num.h"
#include "../faults/fault.h"
#include "../faults/preload/preload.h"

static const char exec_usage[] =
	"usage: lockstorm exec [--fault SPEC].. [-s SEED] [--log FILE] [--ctrl] [-q] -- CMD [ARGS]\n"
	"\n"
	"Run CMD (any dynamically linked program) with the preload fault shim: its libc calls\n"
	"mkdir, rmdir, link, unlink, rename, open, utimens, write, fsync and close (and their\n"
	"*at/64 forms) are the points fs/mkdir .. fs/close, faulted as the plan says.\n"
	"\n"
	"  --fault SPEC   KIND[@POINT][:KEY=VAL,...]; KIND stall, stop, crash, errno, short-write;\n"
	"                 keys p, nth, once, for, err, path, bytes (see `lockstorm list faults`).\n"
	"                 1stale means 10 s here (LOCKSTORM_STALE_MS changes it)\n"
	"  -s, --seed S   same seed and same program: same decisions (default 1; decimal)\n"
	"  --log FILE     keep the inject log (one line per injection) in FILE\n"
	"  --ctrl         let fiu-ctrl steer the running program (fifo ${TMPDIR:-/tmp}/fiu-ctrl-PID)\n"
	"  -q, --quiet    do not print the injection summary\n"
	"  -h, --help     this help\n"
	"options take --opt=VALUE and --opt VALUE alike; they end at '--'\n"
	"\n"
	"exit: CMD's status (128+signal if a signal ended it); 2 bad usage; 3 the shim is missing\n"
	"example: lockstorm exec --fault 'errno@fs/mkdir:err=EACCES,path=*/x*' -- node app.js\n";

#define SHOW_LINES 5
#define MAX_KEYS 64

static int exec_usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "lockstorm: exec: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	return 2;
}

static int shim_kind(enum fault_kind k)
{
	return k == FK_STALL || k == FK_STOP || k == FK_CRASH || k == FK_ERRNO || k == FK_SHORT_WRITE;
}

/* The shim next to /proc/self/exe, else in an install's PREFIX/lib/lockstorm/
 * (the binary in PREFIX/bin), or LOCKSTORM_PRELOAD. */
int exec_find_shim(char *out, size_t len)
{
	return exec_find_lib("LOCKSTORM_PRELOAD", PRELOAD_LIB_NAME, out, len);
}

int exec_find_lib(const char *envname, const char *name, char *out, size_t len)
{
	const char *env = getenv(envname);
	if (env && *env) {
		snprintf(out, len, "%s", env);
		return access(out, R_OK);
	}
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n < 0)
		return -1;
	self[n] = '\0';
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = '\0';
	snprintf(out, len, "%s/%s", slash ? self : ".", name);
	if (access(out, R_OK) == 0)
		return 0;
	snprintf(out, len, "%s/../lib/lockstorm/%s", slash ? self : ".", name);
	return access(out, R_OK);
}

struct tally {
	char key[MAX_KEYS][160];
	unsigned long count[MAX_KEYS];
	unsigned n;
	unsigned long other, total;
};

/* "pid P POINT PATH KIND [ARG..]": counted by point, kind and errno. */
static void tally_line(struct tally *t, const char *line)
{
	char f[8][160];
	int nf = 0;
	const char *p = line;
	while (*p && nf < 8) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		size_t k = strcspn(p, " ");
		snprintf(f[nf++], sizeof f[0], "%.*s", (int)(k < 159 ? k : 159), p);
		p += k;
	}
	t->total++;
	if (nf < 5 || strcmp(f[0], "pid")) {
		t->other++;
		return;
	}
	char key[160];
	if (!strcmp(f[4], "errno") && nf >= 6)
		snprintf(key, sizeof key, "%s errno %s", f[2], f[5]);
	else if (!strcmp(f[4], "short-write") && nf >= 7)
		snprintf(key, sizeof key, "%s short-write %s", f[2], f[6]);
	else
		snprintf(key, sizeof key, "%s %s", f[2], f[4]);
	for (unsigned i = 0; i < t->n; i++)
		if (!strcmp(t->key[i], key)) {
			t->count[i]++;
			return;
		}
	if (t->n == MAX_KEYS) {
		t->other++;
		return;
	}
	snprintf(t->key[t->n], sizeof t->key[0], "%s", key);
	t->count[t->n++] = 1;
}

static void summarize(const char *log, int keep, uint64_t seed)
{
	FILE *f = fopen(log, "r");
	static struct tally t;
	memset(&t, 0, sizeof t);
	char first[SHOW_LINES][PATH_MAX + 200];
	unsigned shown = 0;
	char line[PATH_MAX + 200];
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line)
			continue;
		if (shown < SHOW_LINES)
			snprintf(first[shown++], sizeof first[0], "%s", line);
		tally_line(&t, line);
	}
	if (f)
		fclose(f);
	if (t.total == 0) {
		fprintf(stderr, "lockstorm exec: no faults injected (seed %llu)\n", (unsigned long long)seed);
		return;
	}
	fprintf(stderr, "lockstorm exec: %lu fault%s injected (seed %llu)\n", t.total, t.total == 1 ? "" : "s",
		(unsigned long long)seed);
	for (unsigned i = 0; i < t.n; i++)
		fprintf(stderr, "  %6lu  %s\n", t.count[i], t.key[i]);
	if (t.other)
		fprintf(stderr, "  %6lu  (other)\n", t.other);
	fprintf(stderr, "  first injections:\n");
	for (unsigned i = 0; i < shown; i++)
		fprintf(stderr, "    %s\n", first[i]);
	if (t.total > shown)
		fprintf(stderr, "    ... %lu more%s%s\n", t.total - shown, keep ? " in " : "", keep ? log : "");
}

static volatile sig_atomic_t child_pid;

static void forward(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

int exec_main(int argc, char **argv)
{
	static struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[1024];
	uint64_t seed = 1;
	const char *log = NULL;
	int quiet = 0, ctrl = 0, cmd = -1;
	/* the specs as given, one per line, for the shim */
	size_t specs_cap = 1, specs_len = 0;
	for (int i = 1; i < argc; i++)
		specs_cap += strlen(argv[i]) + 1;
	char *specs = calloc(1, specs_cap);
	if (!specs)
		return 3;
	int rc = 2;

	static const struct option longopts[] = {
		{ "fault", required_argument, NULL, 'f' },
		{ "seed", required_argument, NULL, 's' },
		{ "log", required_argument, NULL, 'l' },
		{ "ctrl", no_argument, NULL, 'c' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	/* '+': stop at the first word that is no option; '--' must come before CMD */
	while ((c = getopt_long(argc, argv, "+:s:qh", longopts, NULL)) != -1) {
		const char *val = optarg;
		switch (c) {
		case 'h':
			fputs(exec_usage, stdout);
			rc = 0;
			goto out;
		case 'q':
			quiet = 1;
			continue;
		case 'c':
			ctrl = 1;
			continue;
		case 'l':
			log = val;
			continue;
		case 's': {
			char msg[160];
			if (num_u64(val, 0, UINT64_MAX, &seed, msg, sizeof msg)) {
				rc = exec_usage_error("-s: %s (the seed)", msg);
				goto out;
			}
			continue;
		}
		case ':':
			rc = exec_usage_error("option '%s' needs a value", argv[optind - 1]);
			goto out;
		case '?':
			if (optopt && !strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '=')) {
				rc = exec_usage_error("option '%s' takes no value", argv[optind - 1]);
			} else if (optopt && optopt < 256 && argv[optind - 1][1] != '-') {
				char o[3] = { '-', (char)optopt, '\0' };
				rc = exec_usage_error("unknown option '%s' (see lockstorm exec --help)", o);
			} else {
				rc = exec_usage_error("unknown option '%s' (see lockstorm exec --help)", argv[optind - 1]);
			}
			goto out;
		default: /* 'f' */
			break;
		}
		if (fault_parse(&plan, val, why, sizeof why) != 0) {
			rc = exec_usage_error("%s", why);
			goto out;
		}
		const struct fault_rule *r = &plan.rule[plan.n - 1];
		if (!shim_kind(r->kind)) {
			snprintf(why, sizeof why,
				 "bad fault spec '%s': %s: not something the shim does to a program "
				 "(exec takes stall, stop, crash, errno, short-write)",
				 val, fault_kind_name(r->kind));
			rc = exec_usage_error("%s", why);
			goto out;
		}
		if (r->split) {
			snprintf(why, sizeof why,
				 "bad fault spec '%s': the shim does not split writes (short-write "
				 "takes err=, not for=, under exec)", val);
			rc = exec_usage_error("%s", why);
			goto out;
		}
		int hits = 0;
		for (int p = 0; p < PRELOAD_NPOINTS; p++)
			hits += (int)(fault_point_mask(&plan, preload_points[p]) >> (plan.n - 1) & 1u);
		if (!hits) {
			snprintf(why, sizeof why,
				 "bad fault spec '%s': %s: %s never fires there (the shim wraps fs/mkdir, fs/rmdir, "
				 "fs/link, fs/unlink, fs/rename, fs/open, fs/utimens, fs/write, fs/fsync, fs/close; "
				 "short-write acts at fs/write only)",
				 val, r->point, fault_kind_name(r->kind));
			rc = exec_usage_error("%s", why);
			goto out;
		}
		if (strchr(val, '\n')) {
			rc = exec_usage_error("bad fault spec '%s': contains a newline", val);
			goto out;
		}
		specs_len += (size_t)sprintf(specs + specs_len, "%s\n", val);
	}
	if (optind > 1 && !strcmp(argv[optind - 1], "--"))
		cmd = optind;
	else if (optind < argc) {
		rc = exec_usage_error("'--' is required before the command (got '%s')", argv[optind]);
		goto out;
	}
	if (cmd < 0) {
		rc = exec_usage_error("%s", "'--' is required before the command: lockstorm exec [--fault SPEC].. -- CMD [ARGS]");
		goto out;
	}
	if (cmd >= argc) {
		rc = exec_usage_error("%s", "no command after '--'");
		goto out;
	}

	char shim[PATH_MAX];
	if (exec_find_shim(shim, sizeof shim) != 0) {
		fprintf(stderr, "lockstorm: exec: preload library not found: %s (%s)\n", shim, strerror(errno));
		rc = 3;
		goto out;
	}

	/* the inject log: --log FILE (emptied now), else a temp file */
	char logbuf[PATH_MAX];
	if (log) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			fprintf(stderr, "lockstorm: exec: cannot create log %s: %s\n", log, strerror(errno));
			rc = 2;
			goto out;
		}
		close(fd);
		if (!realpath(log, logbuf))
			snprintf(logbuf, sizeof logbuf, "%s", log);
	} else {
		const char *tmp = getenv("TMPDIR");
		snprintf(logbuf, sizeof logbuf, "%s/lockstorm-exec.XXXXXX", tmp && *tmp ? tmp : "/tmp");
		int fd = mkstemp(logbuf);
		if (fd < 0) {
			fprintf(stderr, "lockstorm: exec: cannot create a temp log %s: %s\n", logbuf, strerror(errno));
			rc = 3;
			goto out;
		}
		close(fd);
	}

	/* the environment the shim reads */
	const char *old = getenv("LD_PRELOAD");
	size_t plen = strlen(shim) + (old ? strlen(old) : 0) + 2;
	char *preload = malloc(plen);
	if (!preload) {
		rc = 3;
		goto out_log;
	}
	if (old && *old)
		snprintf(preload, plen, "%s:%s", shim, old);
	else
		snprintf(preload, plen, "%s", shim);
	char seedbuf[32];
	snprintf(seedbuf, sizeof seedbuf, "%llu", (unsigned long long)seed);
	setenv("LD_PRELOAD", preload, 1);
	setenv(PRELOAD_ENV_FAULTS, specs, 1);
	setenv(PRELOAD_ENV_SEED, seedbuf, 1);
	setenv(PRELOAD_ENV_LOG, logbuf, 1);
	setenv(PRELOAD_ENV_LINEAGE, "0000000000000000", 1);
	if (ctrl) {
		const char *tmp = getenv("TMPDIR");
		char fifo[PATH_MAX];
		snprintf(fifo, sizeof fifo, "%s/fiu-ctrl", tmp && *tmp ? tmp : "/tmp");
		setenv(PRELOAD_ENV_FIFO, fifo, 1);
	}
	free(preload);

	/* run it; while it runs, ^C and ^\ are the program's, TERM and HUP are forwarded */
	struct sigaction ign = { .sa_handler = SIG_IGN }, fwd = { .sa_handler = forward }, old_int, old_quit,
			 old_term, old_hup;
	sigemptyset(&ign.sa_mask);
	sigemptyset(&fwd.sa_mask);
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "lockstorm: exec: fork: %s\n", strerror(errno));
		rc = 3;
		goto out_sig;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		execvp(argv[cmd], argv + cmd);
		int e = errno;
		fprintf(stderr, "lockstorm: exec: %s: %s\n", argv[cmd], strerror(e));
		_exit(e == ENOENT ? 127 : 126);
	}
	child_pid = pid;
	int st;
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR) {
			fprintf(stderr, "lockstorm: exec: waitpid: %s\n", strerror(errno));
			rc = 3;
			goto out_sig;
		}
	}
	child_pid = 0;
	rc = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 3;
	if (!quiet)
		summarize(logbuf, log != NULL, seed);
	if (!quiet && WIFSIGNALED(st))
		fprintf(stderr, "lockstorm exec: %s killed by signal %d (%s)\n", argv[cmd], WTERMSIG(st),
			strsignal(WTERMSIG(st)));
out_sig:
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
out_log:
	if (!log)
		unlink(logbuf);
out:
	free(specs);
	return rc;
}
