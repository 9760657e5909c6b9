/*
 * driver.c - fork, supervise, stop, check (see driver.h).
 *
 * Safety of the harness itself: it creates and removes files only inside a
 * work directory it made (mkdtemp) or one the user named and that carries
 * its marker file; it never leaves a worker behind (every worker joins one
 * process group and gets PR_SET_PDEATHSIG; the driver SIGKILLs stragglers and
 * reaps every child before it returns).
 */
#include "driver.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../core/fsutil.h"
#include "extworker.h"
#include "../core/journal.h"
#include "../report/junit.h"
#include "../report/report.h"
#include "runcfg.h"

#define WORK_MARKER ".lockstorm-owned"
#define OUT_MARKER ".lockstorm-out"
#define WATCHDOG_MARGIN_MS 2000

struct slot {
	pid_t pid;            /* 0: not running */
	unsigned incarnation;
	int watchdog_killed;
	uint64_t last_tick;   /* the worker's progress ticks when last sampled */
	int64_t last_change;  /* mono ns when they last moved */
	int exited;           /* left on its own after stop */
};

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted++;
}

static int64_t mono_ms(void)
{
	return fsx_mono_ns() / 1000000;
}

static void say(const struct run_config *cfg, const char *fmt, ...)
{
	if (cfg->quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

/* ---- directories ---- */

static int dir_is_empty(const char *path, const char *except)
{
	DIR *d = opendir(path);
	if (!d)
		return -1;
	struct dirent *de;
	int empty = 1;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || (except && !strcmp(de->d_name, except)))
			continue;
		empty = 0;
		break;
	}
	closedir(d);
	return empty;
}

static int has_marker(const char *dir, const char *marker)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/%s", dir, marker);
	return access(p, F_OK) == 0;
}

static int put_marker(const char *dir, const char *marker)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/%s", dir, marker);
	int fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	dprintf(fd, "made by lockstorm (pid %d); lockstorm may remove what it made here\n", (int)getpid());
	close(fd);
	return 0;
}

/* A directory we may write into: made fresh, or empty, or already ours. */
static int claim_dir(const char *dir, const char *marker, const char *what, char *why, size_t len)
{
	if (mkdir(dir, 0777) == 0)
		return put_marker(dir, marker);
	if (errno != EEXIST) {
		snprintf(why, len, "%s %s: %s", what, dir, strerror(errno));
		return -1;
	}
	int empty = dir_is_empty(dir, NULL);
	if (empty < 0) {
		snprintf(why, len, "%s %s: %s", what, dir, strerror(errno));
		return -1;
	}
	if (!empty && !has_marker(dir, marker)) {
		snprintf(why, len, "%s %s is not empty and not marked as lockstorm's (%s): refusing to use it",
			 what, dir, marker);
		return -1;
	}
	return put_marker(dir, marker);
}

static int make_temp_dir(char *out, size_t len, const char *prefix)
{
	const char *base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(out, len, "%s/%s.XXXXXX", base, prefix);
	return mkdtemp(out) ? 0 : -1;
}

static int prepare_dirs(struct run_config *cfg, char *why, size_t len)
{
	if (!cfg->workdir[0]) {
		if (make_temp_dir(cfg->workdir, sizeof cfg->workdir, "lockstorm-work")) {
			snprintf(why, len, "cannot make a work directory: %s", strerror(errno));
			return -1;
		}
		cfg->workdir_ours = 1;
		put_marker(cfg->workdir, WORK_MARKER);
	} else if (claim_dir(cfg->workdir, WORK_MARKER, "work directory", why, len)) {
		return -1;
	}
	if (!cfg->outdir[0]) {
		if (make_temp_dir(cfg->outdir, sizeof cfg->outdir, "lockstorm-out")) {
			snprintf(why, len, "cannot make an output directory: %s", strerror(errno));
			return -1;
		}
		cfg->outdir_temp = 1;
	} else if (claim_dir(cfg->outdir, OUT_MARKER, "output directory", why, len)) {
		return -1;
	}
	/* Leftovers of an earlier run in a marked directory are ours to clear. */
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/store", cfg->workdir);
	fsutil_rm_tree(p);
	snprintf(p, sizeof p, "%s/journal", cfg->outdir);
	fsutil_rm_tree(p);
	if (mkdir(p, 0777) != 0) {
		snprintf(why, len, "cannot make %s: %s", p, strerror(errno));
		return -1;
	}
	snprintf(p, sizeof p, "%s/final-state.json", cfg->outdir);
	unlink(p);
	snprintf(p, sizeof p, "%s/final-snapshot.json", cfg->outdir);
	unlink(p);
	return 0;
}

static void cleanup_dirs(const struct run_config *cfg)
{
	char p[PATH_MAX + 64];
	if (!cfg->keep) {
		if (cfg->workdir_ours) {
			fsutil_rm_tree(cfg->workdir);
		} else {
			snprintf(p, sizeof p, "%s/store", cfg->workdir);
			fsutil_rm_tree(p);
		}
	}
	if (cfg->outdir_temp)
		fsutil_rm_tree(cfg->outdir);
}

/* ---- workers ---- */

struct supervisor {
	struct run_config *cfg;
	struct arena *arena;
	struct fault_state *fstates; /* per worker: the fault rules' nth/once counters */
	struct slot *slot;
	pid_t pgid;
	pid_t driver_pid;
	char state_file[PATH_MAX];
	struct journal dj;     /* the driver's own journal */
	int64_t *budget_ms;    /* per worker: wait budget + margin */
	int64_t *stale_ms;
	sigset_t oldmask;
	pid_t sweeper;         /* sweep fault: the process that removes empty folders */
	pid_t bystander;       /* pid-reuse fault: a live process unrelated to the lock */
	struct ext_run *ext;   /* external workers (adapters), NULL if none */
};

static _Noreturn void worker_main(struct supervisor *sv, unsigned id, unsigned incarnation)
{
	const struct run_config *cfg = sv->cfg;
	sigprocmask(SIG_SETMASK, &sv->oldmask, NULL);
	signal(SIGINT, SIG_IGN);   /* the driver decides when workers stop */
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);

	char jpath[PATH_MAX + 64];
	snprintf(jpath, sizeof jpath, "%s/journal/w%04u.bin", cfg->outdir, id);
	unsigned slot = cfg_proto_slot(cfg, id);
	struct worker_spec sp = {
		.id = id,
		.incarnation = incarnation,
		.pid = (int)getpid(),
		.workers = cfg->workers,
		.seed = cfg->seed,
		.proto = cfg->proto[slot],
		.pvals = cfg->pvals[slot],
		.workload = cfg->workload,
		.wparam = cfg->wvals,
		.state_file = sv->state_file,
		.arena = sv->arena,
		.journal_path = jpath,
		.ops = WORKER_CLAIM_OPS,
		.wait_go = incarnation == 0,
		.fsx = {
			.faults = &cfg->faults,
			.fstate = &sv->fstates[id],
			.trace = cfg->trace,
			.pid = fault_process_rule(&cfg->faults, FK_PID_REUSE, id) ? sv->bystander : 0,
		},
	};
	_exit(worker_run(&sp) == 0 ? 0 : 3);
}

static int spawn(struct supervisor *sv, unsigned id, unsigned incarnation)
{
	/* an adapter gets a process group of its own: stop and crash faults
	 * signal the whole of it (a lock tool it runs, a runtime's helpers) */
	int ext = ext_is(sv->ext, id);
	if (ext && ext_before_fork(sv->ext, id) != 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != sv->driver_pid) /* the driver died before we got here */
			_exit(3);
		if (ext) {
			setpgid(0, 0);
			ext_child_exec(sv->ext, id, incarnation, &sv->oldmask);
		}
		if (setpgid(0, sv->pgid) != 0)
			setpgid(0, 0);
		worker_main(sv, id, incarnation);
	}
	/* Both sides set the group, so it is right whichever runs first. */
	if (ext) {
		setpgid(pid, pid);
		ext_spawned(sv->ext, id, incarnation, pid);
	} else if (setpgid(pid, sv->pgid) != 0 && setpgid(pid, pid) == 0) {
		sv->pgid = pid;
	}
	if (!sv->pgid && !ext)
		sv->pgid = pid;
	sv->slot[id].pid = pid;
	sv->slot[id].incarnation = incarnation;
	atomic_store(&sv->arena->w[id].pid, pid);
	atomic_store(&sv->arena->w[id].incarnation, incarnation);
	sv->slot[id].last_tick = atomic_load(&sv->arena->w[id].progress);
	sv->slot[id].last_change = fsx_mono_ns();
	return 0;
}

static int find_slot(const struct supervisor *sv, pid_t pid)
{
	for (unsigned i = 0; i < sv->cfg->workers; i++)
		if (sv->slot[i].pid == pid)
			return (int)i;
	return -1;
}

/* Reap whatever has ended; journal deaths; respawn when asked. Returns live count. */
static unsigned reap(struct supervisor *sv, int stopping)
{
	int status;
	pid_t pid;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		int id = find_slot(sv, pid);
		if (id < 0)
			continue;
		struct slot *s = &sv->slot[id];
		s->pid = 0;
		atomic_store(&sv->arena->w[id].pid, 0);
		arena_hold_leave(sv->arena, (unsigned)id);
		if (ext_is(sv->ext, (unsigned)id) && !ext_reaped(sv->ext, (unsigned)id, status)) {
			s->exited = 1; /* a clean exit, or an adapter failure already reported */
			continue;
		}
		if (WIFSIGNALED(status)) {
			journal_log(&sv->dj, EV_KILLED, (uint32_t)id, 0, WTERMSIG(status), pid, s->watchdog_killed);
			if (sv->cfg->respawn && !stopping) {
				s->watchdog_killed = 0;
				spawn(sv, (unsigned)id, s->incarnation + 1);
			}
		} else {
			s->exited = 1;
		}
	}
	unsigned live = 0;
	for (unsigned i = 0; i < sv->cfg->workers; i++)
		live += sv->slot[i].pid != 0;
	return live;
}

/* A worker that shows no progress for longer than its budget, with no stall
 * or hold of its own or any announced stall elsewhere to excuse it, is a
 * liveness violation: report it with its last step, and kill it. */
/* stop fault: a worker SIGSTOPped itself until stop_until_ns; wake it then,
 * as a laptop lid opening or a debugger detaching would. */
static void wake_stopped(struct supervisor *sv)
{
	int64_t now = fsx_mono_ns();
	for (unsigned i = 0; i < sv->cfg->workers; i++) {
		int64_t until = atomic_load(&sv->arena->w[i].stop_until_ns);
		if (until && now >= until && sv->slot[i].pid) {
			atomic_store(&sv->arena->w[i].stop_until_ns, 0);
			kill(sv->slot[i].pid, SIGCONT);
		}
	}
}

static void watchdog(struct supervisor *sv, int64_t extra_ms)
{
	wake_stopped(sv);
	int64_t now = fsx_mono_ns();
	int64_t global_excuse = atomic_load(&sv->arena->stall_until_ns);
	for (unsigned i = 0; i < sv->cfg->workers; i++) {
		struct slot *s = &sv->slot[i];
		if (!s->pid || s->watchdog_killed)
			continue;
		if (ext_is(sv->ext, i)) { /* judged by its lines, not the arena's ticks */
			if (ext_watchdog(sv->ext, i, extra_ms, &sv->dj))
				s->watchdog_killed = 1;
			continue;
		}
		struct arena_worker *aw = &sv->arena->w[i];
		uint64_t tick = atomic_load(&aw->progress);
		if (tick != s->last_tick) {
			s->last_tick = tick;
			s->last_change = now;
		}
		int64_t since = s->last_change;
		int64_t excuse = atomic_load(&aw->excuse_ns);
		if (excuse > since)
			since = excuse;
		if (global_excuse > since)
			since = global_excuse;
		int64_t quiet_ms = (now - since) / 1000000;
		if (quiet_ms <= sv->budget_ms[i] + extra_ms)
			continue;
		const char *point = (const char *)(uintptr_t)atomic_load(&aw->last_point);
		journal_log(&sv->dj, EV_LIVENESS, i, 0, point ? (int64_t)point_hash(point) : 0, quiet_ms,
			    sv->budget_ms[i]);
		s->watchdog_killed = 1;
		kill(s->pid, SIGKILL);
	}
}

/* Progress: on a terminal a status line redrawn in place every 0.5 s; in a
 * log (stderr not a terminal) one plain line every PROGRESS_LOG_MS, so a long
 * CI cell shows life.  Overlaps are the online holder counter's: violations
 * and legal reclaims alike (the checker tells them apart at the end). */
#define PROGRESS_TTY_MS 500
#define PROGRESS_LOG_MS 10000

static void status_line(struct supervisor *sv, int tty, int64_t elapsed_ms, uint64_t *last_ops, int64_t *last_ms)
{
	uint64_t ops = 0, viol = atomic_load(&sv->arena->breaches);
	for (unsigned i = 0; i < sv->cfg->workers; i++)
		ops += atomic_load(&sv->arena->w[i].acquired);
	double rate = elapsed_ms > *last_ms ? (double)(ops - *last_ops) * 1000.0 / (double)(elapsed_ms - *last_ms) : 0;
	*last_ops = ops;
	*last_ms = elapsed_ms;
	/* done/total and what is left: by time for -d, by ops for --ops */
	char done[64];
	const struct run_config *cfg = sv->cfg;
	if (cfg->duration_ms)
		snprintf(done, sizeof done, "%.1f/%.1fs", (double)elapsed_ms / 1000.0, (double)cfg->duration_ms / 1000.0);
	else {
		uint64_t claimed = atomic_load(&sv->arena->ops_claimed);
		if (claimed > cfg->ops)
			claimed = cfg->ops;
		double eta = rate > 0 ? (double)(cfg->ops - claimed) / rate : 0;
		snprintf(done, sizeof done, "%llu/%llu ops %.1fs eta %.0fs", (unsigned long long)claimed,
			 (unsigned long long)cfg->ops, (double)elapsed_ms / 1000.0, eta);
	}
	if (tty)
		fprintf(stderr, "\r  %s  %9llu acquired  %9.0f/s  %llu overlapping holds so far   ", done,
			(unsigned long long)ops, rate, (unsigned long long)viol);
	else
		fprintf(stderr, "progress    %s, %llu acquired, %.0f/s, %llu overlapping holds so far (violations or legal reclaims)\n",
			done, (unsigned long long)ops, rate, (unsigned long long)viol);
}

static void stop_helper(pid_t *pid);

static void kill_all(struct supervisor *sv)
{
	stop_helper(&sv->sweeper);
	stop_helper(&sv->bystander);
	if (sv->ext)
		ext_kill_all(sv->ext);
	for (unsigned i = 0; i < sv->cfg->workers; i++)
		if (sv->slot[i].pid)
			kill(sv->slot[i].pid, SIGKILL);
	if (sv->pgid)
		kill(-sv->pgid, SIGKILL);
}

static int wait_sigchld(const sigset_t *set, int64_t ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	return sigtimedwait(set, NULL, &ts);
}

/* Wait for a child's end; with adapters, handle their event lines meanwhile. */
static void sv_wait(struct supervisor *sv, const sigset_t *set, int64_t ms)
{
	if (sv->ext)
		ext_wait(sv->ext, ms);
	else
		wait_sigchld(set, ms);
}

/* sweep fault: remove empty folders under the work dir (never the work dir
 * itself, never a lock object: a *.lock directory or anything inside one),
 * as a stale-folder pruner does. */
static const struct fault_rule *sweep_rule;
static struct arena *sweep_arena;
static const char *sweep_root;

static int sweep_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	if (flag != FTW_DP || ftw->level == 0)
		return 0;
	if (strstr(path, ".lock/") || (strlen(path) >= 5 && !strcmp(path + strlen(path) - 5, ".lock")))
		return 0;
	if (sweep_rule->path[0] && fnmatch(sweep_rule->path, path, 0) != 0)
		return 0;
	if (rmdir(path) == 0)
		atomic_fetch_add(&sweep_arena->sweeps, 1);
	return 0;
}

static pid_t start_sweeper(struct supervisor *sv, const struct fault_rule *r)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sv->driver_pid)
		_exit(0);
	sigprocmask(SIG_SETMASK, &sv->oldmask, NULL);
	signal(SIGINT, SIG_IGN);
	sweep_rule = r;
	sweep_arena = sv->arena;
	sweep_root = sv->cfg->workdir;
	struct timespec ts = { r->every_ms / 1000, (r->every_ms % 1000) * 1000000L };
	while (!atomic_load(&sv->arena->stop)) {
		nftw(sweep_root, sweep_entry, 16, FTW_DEPTH | FTW_PHYS);
		nanosleep(&ts, NULL);
	}
	_exit(0);
}

static pid_t start_bystander(struct supervisor *sv)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != sv->driver_pid)
		_exit(0);
	for (;;)
		pause();
}

static void stop_helper(pid_t *pid)
{
	if (*pid <= 0)
		return;
	kill(*pid, SIGKILL);
	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	*pid = 0;
}

static int supervise(struct supervisor *sv)
{
	struct run_config *cfg = sv->cfg;
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);

	const struct fault_rule *sweep = fault_process_rule(&cfg->faults, FK_SWEEP, 0);
	if (sweep && (sv->sweeper = start_sweeper(sv, sweep)) < 0) {
		fprintf(stderr, "lockstorm: fork sweeper: %s\n", strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < cfg->workers && !sv->bystander; i++)
		if (fault_process_rule(&cfg->faults, FK_PID_REUSE, i) && (sv->bystander = start_bystander(sv)) < 0) {
			fprintf(stderr, "lockstorm: fork: %s\n", strerror(errno));
			stop_helper(&sv->sweeper);
			return -1;
		}
	for (unsigned i = 0; i < cfg->workers; i++) {
		if (spawn(sv, i, 0) != 0) {
			fprintf(stderr, "lockstorm: fork worker %u: %s\n", i, strerror(errno));
			kill_all(sv);
			return -1;
		}
	}
	/* Start barrier: every worker set up, then all go at once. */
	while (atomic_load(&sv->arena->ready) < cfg->workers) {
		if ((reap(sv, 0) < cfg->workers && !cfg->respawn) || ext_failed(sv->ext)) {
			if (!ext_failed(sv->ext))
				fprintf(stderr, "lockstorm: a worker died before the start\n");
			kill_all(sv);
			while (reap(sv, 1) > 0)
				wait_sigchld(&chld, 20);
			return -1;
		}
		for (unsigned i = 0; i < cfg->workers; i++) /* an adapter that never starts */
			if (ext_is(sv->ext, i) && sv->slot[i].pid && !sv->slot[i].watchdog_killed &&
			    ext_watchdog(sv->ext, i, WATCHDOG_MARGIN_MS, &sv->dj))
				sv->slot[i].watchdog_killed = 1;
		sv_wait(sv, &chld, 5);
	}
	journal_log(&sv->dj, EV_WORKER_START, 0, 0, 0, 0, 0);
	arena_go(sv->arena);
	if (sv->ext)
		ext_go(sv->ext);

	int tty = isatty(STDERR_FILENO) && !cfg->quiet;
	int64_t every = cfg->quiet ? 0 : tty ? PROGRESS_TTY_MS : PROGRESS_LOG_MS;
	int64_t start = mono_ms(), last_status = start, last_ms = 0;
	uint64_t last_ops = 0;
	int64_t extra = WATCHDOG_MARGIN_MS + (int64_t)cfg->workers * 2;
	for (;;) {
		sv_wait(sv, &chld, 50);
		if (reap(sv, 0) == 0) /* every worker has ended (and none is respawned) */
			break;
		int64_t now = mono_ms();
		watchdog(sv, extra);
		if (every && now - last_status >= every) {
			status_line(sv, tty, now - start, &last_ops, &last_ms);
			last_status = now;
		}
		if (interrupted || atomic_load(&sv->arena->stop) ||
		    (cfg->duration_ms && now - start >= cfg->duration_ms))
			break;
	}
	atomic_store(&sv->arena->stop, 1);
	journal_log(&sv->dj, EV_STOP, 0, 0, interrupted, 0, 0);
	if (tty)
		fprintf(stderr, "\r%80s\r", "");

	/* Grace: each worker finishes its op; the watchdog still judges them. */
	int64_t max_budget = 0;
	for (unsigned i = 0; i < cfg->workers; i++)
		if (sv->budget_ms[i] > max_budget)
			max_budget = sv->budget_ms[i];
	int64_t deadline = mono_ms() + max_budget + extra + 1000;
	while (reap(sv, 1) > 0) {
		int64_t stall_end = atomic_load(&sv->arena->stall_until_ns) / 1000000;
		if (mono_ms() > deadline && mono_ms() > stall_end + extra) {
			kill_all(sv);
			break;
		}
		if (interrupted > 1) {
			kill_all(sv);
			break;
		}
		watchdog(sv, extra);
		sv_wait(sv, &chld, 50);
	}
	while (reap(sv, 1) > 0) /* after kill_all: collect every last one */
		wait_sigchld(&chld, 20);
	stop_helper(&sv->sweeper);
	stop_helper(&sv->bystander);
	return 0;
}

/* ---- checking ---- */

/* What makes a kept run's records unjudgeable beyond a damaged journal (WHY
 * already says that one): a run that never ended (no EV_STOP from the
 * driver: it was killed) or a worker without a journal. */
static void verdict_unjudgeable(const struct run_config *cfg, const char *outdir, const struct jrec *rec,
				size_t n, char *why, size_t len)
{
	if (why[0])
		return;
	int stopped = 0;
	for (size_t i = 0; i < n && !stopped; i++)
		stopped = rec[i].worker == JOURNAL_DRIVER && rec[i].type == EV_STOP;
	if (!stopped) {
		snprintf(why, len, "the run did not finish (no end record in journal/driver.bin: was the driver killed?)");
		return;
	}
	for (unsigned w = 0; w < cfg->workers; w++) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/journal/w%04u.bin", outdir, w);
		if (access(p, F_OK) != 0) {
			snprintf(why, len, "journal/w%04u.bin is missing", w);
			return;
		}
	}
	/* A worker's journal ends with its EV_WORKER_EXIT, unless the driver saw
	 * it die after its last record: anything else lost its end (a record
	 * torn or cut off by something other than its writer's death). */
	uint64_t *last = calloc(cfg->workers, sizeof *last);
	unsigned char *ok = calloc(cfg->workers, 1);
	if (!last || !ok) {
		free(last);
		free(ok);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		const struct jrec *r = &rec[i];
		if (r->worker < cfg->workers) {
			last[r->worker] = r->seq;
			ok[r->worker] = r->type == EV_WORKER_EXIT;
		} else if (r->worker == JOURNAL_DRIVER && r->type == EV_KILLED && r->op < cfg->workers &&
			   r->seq > last[r->op]) {
			ok[r->op] = 1;
		}
	}
	for (unsigned w = 0; w < cfg->workers; w++) {
		if (!ok[w]) {
			snprintf(why, len, "journal/w%04u.bin ends before its worker exited, and w%u was not killed", w, w);
			break;
		}
	}
	free(last);
	free(ok);
}

int driver_verdict(const struct run_config *cfg, const char *outdir, struct check_result *res,
		   unsigned *files, char *why, size_t len)
{
	struct jrec *rec = NULL;
	size_t n = 0, torn = 0;
	char damaged[200] = "";
	if (journal_read_dir_checked(outdir, &rec, &n, &torn, files, damaged, sizeof damaged) != 0) {
		snprintf(why, len, "cannot read journals in %s/journal: %s", outdir, strerror(errno));
		return -1;
	}
	verdict_unjudgeable(cfg, outdir, rec, n, damaged, sizeof damaged);
	int64_t *stale = calloc(cfg->workers, sizeof *stale);
	int64_t *budget = calloc(cfg->workers, sizeof *budget);
	const char **proto_of = calloc(cfg->workers, sizeof *proto_of);
	char *final = NULL, *snap = NULL;
	size_t final_len = 0, snap_len = 0;
	int rc = -1;
	if (!stale || !budget || !proto_of) {
		snprintf(why, len, "out of memory");
		goto out;
	}
	for (unsigned i = 0; i < cfg->workers; i++) {
		stale[i] = runcfg_stale_ms(cfg, i);
		budget[i] = runcfg_budget_ms(cfg, i);
		proto_of[i] = cfg->proto[cfg_proto_slot(cfg, i)]->name;
	}
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/final-state.json", outdir);
	final = fsutil_slurp(p, &final_len);
	/* the append workload's snapshot file, kept beside the final journal */
	if (cfg->workload->flags & WL_CHECK_SEQ) {
		snprintf(p, sizeof p, "%s/final-snapshot.json", outdir);
		snap = fsutil_slurp(p, &snap_len);
	}
	struct check_input in = {
		.rec = rec,
		.n = n,
		.workers = cfg->workers,
		.stale_ms = stale,
		.budget_ms = budget,
		.proto_of = proto_of,
		.check_state = (cfg->workload->flags & WL_CHECK_STATE) != 0,
		.check_seq = (cfg->workload->flags & WL_CHECK_SEQ) != 0,
		.check_stale_read = (cfg->workload->flags & WL_CHECK_STALE_READ) != 0,
		.final_state = final,
		.final_len = final_len,
		.final_snapshot = snap,
		.final_snapshot_len = snap_len,
		.torn_bytes = torn,
		.unjudgeable = damaged[0] ? damaged : NULL,
	};
	if (check_run(&in, res) != 0) {
		snprintf(why, len, "checker: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	free(snap);
	free(final);
	free(proto_of);
	free(budget);
	free(stale);
	free(rec);
	return rc;
}

static int copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	ssize_t r;
	int rc = 0;
	while ((r = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)r) != r) {
			rc = -1;
			break;
		}
	if (r < 0)
		rc = -1;
	close(in);
	close(out);
	return rc;
}

/* V is the run's verdict: the checker's (verdict_from_check), and whatever
 * only the run knows. */
static void finish_report(const struct run_config *cfg, const struct check_result *res,
			  const struct verdict *v, const struct report_live *live, const char *outdir,
			  int write_outdir_json)
{
	if (cfg->quiet)
		verdict_print(stdout, v);
	else
		report_print_text(stdout, cfg, res, v, live);
	if (write_outdir_json) {
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/report.json", outdir);
		if (report_write_json(p, cfg, res, v, live) != 0)
			fprintf(stderr, "lockstorm: cannot write %s: %s\n", p, strerror(errno));
	}
	if (cfg->json_path[0] && report_write_json(cfg->json_path, cfg, res, v, live) != 0)
		fprintf(stderr, "lockstorm: cannot write %s: %s\n", cfg->json_path, strerror(errno));
	if (cfg->junit_path[0] && junit_write_result(cfg->junit_path, cfg, res, v) != 0)
		fprintf(stderr, "lockstorm: cannot write %s: %s\n", cfg->junit_path, strerror(errno));
}

int driver_run(struct run_config *cfg)
{
	char why[512];
	if (prepare_dirs(cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		cleanup_dirs(cfg);
		return 2;
	}
	struct supervisor sv;
	memset(&sv, 0, sizeof sv);
	sv.cfg = cfg;
	sv.driver_pid = getpid();
	snprintf(sv.state_file, sizeof sv.state_file, "%s/store/state.json", cfg->workdir);
	int rc = 3;

	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/run.json", cfg->outdir);
	if (runcfg_save(cfg, p) != 0) {
		fprintf(stderr, "lockstorm: cannot write %s\n", p);
		goto out_dirs;
	}
	if (cfg->workload->setup(cfg->wvals, sv.state_file) != 0) {
		fprintf(stderr, "lockstorm: workload setup: %s\n", strerror(errno));
		goto out_dirs;
	}
	sv.arena = arena_create(cfg->workers);
	sv.fstates = fault_states_create(cfg->workers);
	sv.slot = calloc(cfg->workers, sizeof *sv.slot);
	sv.budget_ms = calloc(cfg->workers, sizeof *sv.budget_ms);
	sv.stale_ms = calloc(cfg->workers, sizeof *sv.stale_ms);
	if (!sv.arena || !sv.fstates || !sv.slot || !sv.budget_ms || !sv.stale_ms) {
		fprintf(stderr, "lockstorm: cannot set up the shared arena: %s\n", strerror(errno));
		goto out_mem;
	}
	sv.arena->ops_limit = cfg->ops;
	for (unsigned i = 0; i < cfg->workers; i++) {
		sv.budget_ms[i] = runcfg_budget_ms(cfg, i);
		sv.stale_ms[i] = runcfg_stale_ms(cfg, i);
	}
	snprintf(p, sizeof p, "%s/journal/driver.bin", cfg->outdir);
	if (journal_open(&sv.dj, p, JOURNAL_DRIVER) != 0) {
		fprintf(stderr, "lockstorm: cannot open %s: %s\n", p, strerror(errno));
		goto out_mem;
	}
	/* A lock object already there at the start (the workload's carried
	 * state): nobody alive made it; the checker judges waits on it. */
	snprintf(p, sizeof p, "%s.lock", sv.state_file);
	struct stat carried;
	if (lstat(p, &carried) == 0) {
		uint64_t seq = journal_log(&sv.dj, EV_OBJ_CREATE, 0, 0, (int64_t)carried.st_ino,
					   (int64_t)carried.st_dev, 0);
		arena_obj_add(sv.arena, carried.st_dev, carried.st_ino, JOURNAL_DRIVER, seq);
	}

	int xrc = ext_prepare(&sv.ext, cfg, sv.arena, sv.fstates, sv.state_file, why, sizeof why);
	if (xrc != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		journal_close(&sv.dj);
		rc = xrc;
		goto out_mem;
	}

	/* SIGCHLD is taken synchronously (sigtimedwait); ^C asks for a clean stop. */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &sv.oldmask);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);

	if (!cfg->quiet) {
		say(cfg, "lockstorm: %u workers, %s", cfg->workers, cfg->proto[0]->name);
		for (unsigned i = 1; i < cfg->nproto; i++)
			say(cfg, ",%s", cfg->proto[i]->name);
		say(cfg, " / %s, ", cfg->workload->name);
		if (cfg->duration_ms)
			say(cfg, "%.1fs", (double)cfg->duration_ms / 1000.0);
		else
			say(cfg, "%llu ops", (unsigned long long)cfg->ops);
		say(cfg, ", work dir %s\n", cfg->workdir);
	}
	int sup = supervise(&sv);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigprocmask(SIG_SETMASK, &sv.oldmask, NULL);
	journal_close(&sv.dj);
	if (sv.ext) {
		int failed = ext_failed(sv.ext);
		ext_free(sv.ext);
		sv.ext = NULL;
		if (failed) {
			if (cfg->outdir_temp)
				fprintf(stderr, "lockstorm: an adapter failed: no verdict\n");
			else
				fprintf(stderr, "lockstorm: an adapter failed: no verdict (journals and adapter logs "
					"kept in %s)\n", cfg->outdir);
			rc = failed;
			goto out_mem;
		}
		/* lines from several pipes arrived interleaved: order by their times */
		if (sup == 0 && ext_resequence(cfg->outdir) != 0) {
			fprintf(stderr, "lockstorm: cannot order the journals: %s\n", strerror(errno));
			goto out_mem;
		}
	}
	if (sup != 0)
		goto out_mem;

	snprintf(p, sizeof p, "%s/final-state.json", cfg->outdir);
	if (copy_file(sv.state_file, p) != 0 && errno != ENOENT)
		fprintf(stderr, "lockstorm: cannot keep the final state: %s\n", strerror(errno));
	if (cfg->workload->flags & WL_CHECK_SEQ) {
		char snap[PATH_MAX + 64];
		append_snapshot_path(sv.state_file, snap, sizeof snap);
		snprintf(p, sizeof p, "%s/final-snapshot.json", cfg->outdir);
		if (copy_file(snap, p) != 0 && errno != ENOENT)
			fprintf(stderr, "lockstorm: cannot keep the final snapshot: %s\n", strerror(errno));
	}

	struct check_result res;
	unsigned files = 0;
	if (driver_verdict(cfg, cfg->outdir, &res, &files, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		goto out_mem;
	}
	static struct report_live live;
	memset(&live, 0, sizeof live);
	for (unsigned i = 0; i < cfg->workers; i++)
		for (int op = 0; op < FSX_OP_COUNT; op++)
			live.fs_calls[op] += atomic_load(&sv.arena->w[i].calls[op]);
	live.online_breaches = atomic_load(&sv.arena->breaches);
	if (live.online_breaches) {
		live.first_a = sv.arena->breach[0].first;
		live.first_b = sv.arena->breach[0].second;
	}
	struct verdict v;
	verdict_from_check(&v, &res);
	finish_report(cfg, &res, &v, &live, cfg->outdir, !cfg->outdir_temp);
	if (!cfg->quiet && !cfg->outdir_temp)
		fprintf(stderr, "lockstorm: journals, final state and report.json kept in %s\n", cfg->outdir);
	rc = verdict_kind(&v) == VERDICT_PASS ? 0 : verdict_kind(&v) == VERDICT_INCOMPLETE ? 4 : 1;
	if (interrupted)
		fprintf(stderr, "lockstorm: interrupted; the verdict covers the run until then\n");
out_mem:
	free(sv.stale_ms);
	free(sv.budget_ms);
	free(sv.slot);
	fault_states_destroy(sv.fstates, cfg->workers);
	arena_destroy(sv.arena);
out_dirs:
	cleanup_dirs(cfg);
	return rc;
}

int driver_check(const char *outdir, int quiet, const char *json_path)
{
	return driver_check_junit(outdir, quiet, json_path, NULL);
}

int driver_check_junit(const char *outdir, int quiet, const char *json_path, const char *junit_path)
{
	static struct run_config cfg;
	char why[512], p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/run.json", outdir);
	if (access(p, F_OK) != 0) {
		fprintf(stderr, "lockstorm: %s has no run.json: not a kept run (use run -o OUTDIR)\n", outdir);
		return 2;
	}
	if (runcfg_load(&cfg, p, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	snprintf(cfg.outdir, sizeof cfg.outdir, "%s", outdir);
	cfg.quiet = quiet;
	if (json_path)
		snprintf(cfg.json_path, sizeof cfg.json_path, "%s", json_path);
	if (junit_path)
		snprintf(cfg.junit_path, sizeof cfg.junit_path, "%s", junit_path);
	struct check_result res;
	unsigned files = 0;
	if (driver_verdict(&cfg, outdir, &res, &files, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	if (files == 0) {
		fprintf(stderr, "lockstorm: no journals in %s/journal\n", outdir);
		return 2;
	}
	struct verdict v;
	verdict_from_check(&v, &res);
	finish_report(&cfg, &res, &v, NULL, outdir, 0);
	return verdict_kind(&v) == VERDICT_PASS ? 0 : verdict_kind(&v) == VERDICT_INCOMPLETE ? 4 : 1;
}
