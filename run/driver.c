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
#include <sys/mman.h>
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
#include "rundir.h"
#include "leftover.h"
#include "hosts.h"
#include "netfs.h"

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

/* The work and output folders, claimed and locked (run/rundir.h); the
 * names below are the only ones a run clears or removes there. */
struct dirs {
	struct rundir work, out;
};

static int prepare_dirs(struct run_config *cfg, struct dirs *d, char *why, size_t len)
{
	rundir_init(&d->work);
	rundir_init(&d->out);
	rundir_sweep_stale(); /* a SIGKILLed run's temp folders */
	if (!cfg->workdir[0]) {
		if (rundir_temp(&d->work, "lockstorm-work", WORK_MARKER, why, len))
			return -1;
		snprintf(cfg->workdir, sizeof cfg->workdir, "%s", d->work.path);
		cfg->workdir_ours = 1;
	} else if (rundir_claim(&d->work, cfg->workdir, WORK_MARKER, "work directory", why, len)) {
		return -1;
	}
	if (!cfg->outdir[0]) {
		/* inside the work directory: journals on its file system (tmpfs for
		 * --dir /dev/shm), not on $TMPDIR's; removed with it */
		char at[PATH_MAX + 8];
		snprintf(at, sizeof at, "%s/out", cfg->workdir);
		if (rundir_clear(&d->work, "out", why, len) || rundir_temp_at(&d->out, at, OUT_MARKER, why, len))
			return -1;
		snprintf(cfg->outdir, sizeof cfg->outdir, "%s", d->out.path);
		cfg->outdir_temp = 1;
	} else if (rundir_claim(&d->out, cfg->outdir, OUT_MARKER, "output directory", why, len)) {
		return -1;
	}
	/* Leftovers of an earlier run, cleared only where its marker lists them. */
	static const char *const out_names[] = { "journal", "final-state.json", "final-snapshot.json",
						 "run.json", "report.json" };
	if (rundir_clear(&d->work, "store", why, len) || (cfg->netfs[0] && rundir_clear(&d->work, ".lockstorm-netfs", why, len)))
		return -1;
	for (size_t i = 0; i < sizeof out_names / sizeof out_names[0]; i++)
		if (rundir_clear(&d->out, out_names[i], why, len))
			return -1;
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/journal", cfg->outdir);
	if (mkdir(p, 0777) != 0) {
		snprintf(why, len, "cannot make %s: %s", p, strerror(errno));
		return -1;
	}
	return 0;
}

static void cleanup_dirs(const struct run_config *cfg, struct dirs *d)
{
	rundir_release(&d->work, !cfg->keep);
	rundir_release(&d->out, cfg->outdir_temp);
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
	int64_t start_ms;      /* mono ms of the go; 0: interrupted before it */
	int64_t stop_ms;       /* mono ms of the stop */
	unsigned respawn_failed; /* crashed workers that could not be forked again */
	struct journal_ring *rings; /* per worker: its journal's ring (shared, see journal.h) */
	unsigned unsettled;    /* rings whose records could not be written to their journal */
	unsigned cut;          /* stops and stalls cut at the end of the run */
	struct hosts *hosts;   /* --hosts: the namespaces workers are forked into, NULL none */
	uint64_t netfs_dev;    /* --netfs: the work directory's own device (fsx_binding.dev) */
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
		.host = cfg_host_of(cfg, id),
		.seed = cfg->seed,
		.proto = cfg->proto[slot],
		.pvals = cfg->pvals[slot],
		.pvals_us = cfg->pvals_us[slot],
		.workload = cfg->workload,
		.wparam = cfg_wparam(cfg, id),
		.wparam_us = cfg->wvals_us_slot[cfg_proto_slot(cfg, id)],
		.state_file = sv->state_file,
		.arena = sv->arena,
		.journal_path = jpath,
		.journal_ring = &sv->rings[id],
		.ops = WORKER_CLAIM_OPS,
		.wait_go = incarnation == 0,
		.fsx = {
			.faults = &cfg->faults,
			.fstate = &sv->fstates[id],
			.trace = cfg->trace,
			.pid = fault_process_rule(&cfg->faults, FK_PID_REUSE, id) ? sv->bystander
			       : cfg_pid_worker(cfg, id) != id ? sv->slot[cfg_pid_worker(cfg, id)].pid : 0, /* instances */
			.dev = sv->netfs_dev,
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
	pid_t pid = sv->hosts ? hosts_fork(sv->hosts, cfg_host_of(sv->cfg, id)) : fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* the driver died before we got here (on a host, its pid is 0 to us) */
		if (getppid() != (sv->hosts ? 0 : sv->driver_pid))
			_exit(3);
		if (ext) {
			setpgid(0, 0);
			ext_child_exec(sv->ext, id, incarnation, &sv->oldmask);
		}
		if (!sv->hosts && setpgid(0, sv->pgid) != 0) /* a host's numbers are not the driver's */
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

/* What worker ID's journal ring still holds (it exited, or died in the
 * middle of an op) goes to its journal file. */
static void settle(struct supervisor *sv, unsigned id)
{
	char jpath[PATH_MAX + 64];
	snprintf(jpath, sizeof jpath, "%s/journal/w%04u.bin", sv->cfg->outdir, id);
	if (journal_ring_settle(&sv->rings[id], jpath) != 0) {
		/* never silent: the verdict cannot be PASS without those records */
		sv->unsettled++;
		fprintf(stderr, "lockstorm: cannot write worker %u's last records to %s: %s\n", id, jpath,
			strerror(errno));
	}
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
		settle(sv, (unsigned)id); /* before anyone reads the journal or a new incarnation opens it */
		arena_hold_leave(sv->arena, (unsigned)id);
		if (ext_is(sv->ext, (unsigned)id) && !ext_reaped(sv->ext, (unsigned)id, status)) {
			s->exited = 1; /* a clean exit, or an adapter failure already reported */
			continue;
		}
		if (WIFSIGNALED(status)) {
			journal_log(&sv->dj, EV_KILLED, (uint32_t)id, 0, WTERMSIG(status), pid, s->watchdog_killed);
			if (sv->cfg->respawn && !stopping) {
				s->watchdog_killed = 0;
				if (spawn(sv, (unsigned)id, s->incarnation + 1) != 0) {
					/* never silent: the verdict cannot be PASS without it */
					sv->respawn_failed++;
					fprintf(stderr, "lockstorm: cannot respawn worker %d: %s\n", id, strerror(errno));
				}
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

/* The run is over (or interrupted): a worker stopped past it is woken now,
 * to finish its op; one whose stop had time left is counted as cut. */
static void wake_all(struct supervisor *sv)
{
	int64_t now = fsx_mono_ns();
	for (unsigned i = 0; i < sv->cfg->workers; i++) {
		int64_t until = atomic_exchange(&sv->arena->w[i].stop_until_ns, 0);
		if (until && sv->slot[i].pid) {
			sv->cut += until > now;
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
	/* the workers' group, only while one of its members is unreaped: then
	 * its number cannot have been reused, and it never is the caller's */
	for (unsigned i = 0; i < sv->cfg->workers; i++)
		if (sv->pgid > 1 && sv->slot[i].pid && !ext_is(sv->ext, i) && sv->pgid != getpgrp()) {
			kill(-sv->pgid, SIGKILL);
			break;
		}
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
	/* only inside the lock's folder (store/, which lockstorm made): never a
	 * folder of the user's beside it in a --dir */
	size_t rl = strlen(sweep_root);
	if (strncmp(path, sweep_root, rl) || strncmp(path + rl, "/store", 6) || (path[rl + 6] && path[rl + 6] != '/'))
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
	setpgid(0, 0); /* out of the caller's group: a terminal's ^C is the driver's to handle */
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
	setpgid(0, 0);
	signal(SIGINT, SIG_IGN);
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
		if (interrupted) { /* during start-up: nothing ran, nothing to judge */
			journal_log(&sv->dj, EV_STOP, 0, 0, interrupted, 0, 0); /* for `check`: interrupted */
			kill_all(sv);
			while (reap(sv, 1) > 0)
				wait_sigchld(&chld, 20);
			stop_helper(&sv->sweeper);
			stop_helper(&sv->bystander);
			return 0;
		}
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
	sv->start_ms = start;
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
	sv->stop_ms = mono_ms();
	journal_log(&sv->dj, EV_STOP, 0, 0, interrupted, 0, 0);
	wake_all(sv);
	if (tty)
		fprintf(stderr, "\r%80s\r", "");

	/* Grace: each worker finishes its op; the watchdog still judges them. */
	int64_t max_budget = 0;
	for (unsigned i = 0; i < cfg->workers; i++)
		if (sv->budget_ms[i] > max_budget)
			max_budget = sv->budget_ms[i];
	if (max_budget > 3600000) /* LS_NEVER, or absurd: no sum below may overflow */
		max_budget = 3600000;
	/* ends at duration + budget + margin whatever stall was announced; an
	 * interrupt leaves the margin only, and one in a grace already past
	 * that margin ends it at once */
	int64_t deadline = (cfg->duration_ms ? start + cfg->duration_ms : sv->stop_ms) + max_budget + extra + 1000;
	if (interrupted && deadline > sv->stop_ms + WATCHDOG_MARGIN_MS)
		deadline = sv->stop_ms + WATCHDOG_MARGIN_MS;
	int seen = interrupted;
	while (reap(sv, 1) > 0) {
		if (interrupted != seen) { /* a first interrupt in the grace shortens it; a second ends it */
			wake_all(sv);
			if (seen || mono_ms() > sv->stop_ms + WATCHDOG_MARGIN_MS)
				deadline = 0;
			else if (deadline > mono_ms() + WATCHDOG_MARGIN_MS)
				deadline = mono_ms() + WATCHDOG_MARGIN_MS;
			seen = interrupted;
		}
		if (mono_ms() > deadline) {
			for (unsigned i = 0; i < cfg->workers; i++)
				sv->cut += sv->slot[i].pid != 0;
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

/* What cut the run short, for the verdict line: "interrupted after 12.9 s of 30 s". */
static void incomplete_why(const struct supervisor *sv, char *why, size_t len)
{
	const struct run_config *cfg = sv->cfg;
	double el = (double)(sv->stop_ms - sv->start_ms) / 1000.0;
	if (!sv->start_ms)
		snprintf(why, len, "interrupted during start-up");
	else if (cfg->duration_ms)
		snprintf(why, len, "interrupted after %.1f s of %g s", el, (double)cfg->duration_ms / 1000.0);
	else
		snprintf(why, len, "interrupted after %.1f s, %llu of %llu ops", el,
			 (unsigned long long)atomic_load(&sv->arena->ops_claimed), (unsigned long long)cfg->ops);
}

/* FILE can be written: its folder is there and writable, or it is the -o
 * folder this run will make, in a writable folder. */
static int check_output(const struct run_config *cfg, const char *file, const char *what, char *why, size_t len)
{
	const char *slash = file ? strrchr(file, '/') : NULL;
	struct stat st;
	if (slash && cfg->outdir[0] && (size_t)(slash - file) == strlen(cfg->outdir) &&
	    !strncmp(file, cfg->outdir, (size_t)(slash - file)) && stat(cfg->outdir, &st) != 0)
		return rundir_check_writable(cfg->outdir, what, why, len);
	return rundir_check_writable(file, what, why, len);
}

int driver_run(struct run_config *cfg)
{
	char why[512];
	/* refuse early: an output that cannot be written is known before anything runs */
	if (check_output(cfg, cfg->json_path, "--json", why, sizeof why) ||
	    check_output(cfg, cfg->junit_path, "--junit", why, sizeof why)) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	/* ^C and SIGTERM from here on ask for a clean stop, in every phase */
	interrupted = 0;
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	/* orphans of our children (an adapter's background job) become ours to reap and kill */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct dirs dirs;
	if (prepare_dirs(cfg, &dirs, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		cleanup_dirs(cfg, &dirs);
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
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
	sv.rings = mmap(NULL, cfg->workers * sizeof *sv.rings, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			-1, 0);
	if (sv.rings == MAP_FAILED)
		sv.rings = NULL;
	sv.fstates = fault_states_create(cfg->workers);
	sv.slot = calloc(cfg->workers, sizeof *sv.slot);
	sv.budget_ms = calloc(cfg->workers, sizeof *sv.budget_ms);
	sv.stale_ms = calloc(cfg->workers, sizeof *sv.stale_ms);
	if (!sv.arena || !sv.rings || !sv.fstates || !sv.slot || !sv.budget_ms || !sv.stale_ms) {
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

	/* SIGCHLD is taken synchronously (sigtimedwait). */
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGCHLD);
	sigprocmask(SIG_BLOCK, &block, &sv.oldmask);

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
	static struct hosts hosts;
	static struct netfs nf;
	int sup = -1;
	if (cfg->hosts && hosts_start_run(cfg, &hosts, &nf, &sv.netfs_dev, &interrupted, why, sizeof why) != 0) {
		if (interrupted) { /* as an interrupt in the start barrier: nothing ran, INCOMPLETE */
			journal_log(&sv.dj, EV_STOP, 0, 0, interrupted, 0, 0);
			sup = 0;
		} else {
			fprintf(stderr, "lockstorm: %s\n", why);
			rc = 2;
		}
	} else {
		sv.hosts = cfg->hosts ? &hosts : NULL;
		if (sv.hosts)
			say(cfg, "lockstorm: %u host%s ready (lockstorm-h0..%u)%s\n", cfg->hosts, cfg->hosts == 1 ? "" : "s",
			    cfg->hosts - 1, cfg->netfs[0] ? ", each with its sshfs mount of the work directory" : "");
		sup = supervise(&sv);
		netfs_stop(&nf);
		if (sv.hosts)
			hosts_stop(&hosts);
	}
	leftover_kill_all();
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
	if (sup != 0 || rc == 2)
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
	live.cut = sv.cut;
	struct verdict v;
	verdict_from_check(&v, &res);
	if (interrupted) {
		incomplete_why(&sv, why, sizeof why);
		verdict_incomplete(&v, why);
	}
	if (sv.respawn_failed) {
		snprintf(why, sizeof why, "%u crashed worker%s could not be respawned", sv.respawn_failed,
			 sv.respawn_failed == 1 ? "" : "s");
		verdict_incomplete(&v, why);
	}
	if (sv.unsettled) {
		snprintf(why, sizeof why, "the last records of %u worker%s could not be written to the journal",
			 sv.unsettled, sv.unsettled == 1 ? "" : "s");
		verdict_incomplete(&v, why);
	}
	if (sv.cut)
		fprintf(stderr, "lockstorm: %u stall%s or stop%s longer than the run were cut at its end\n", sv.cut,
			sv.cut == 1 ? "" : "s", sv.cut == 1 ? "" : "s");
	driver_finish_report(cfg, &res, &v, &live, cfg->outdir, !cfg->outdir_temp);
	if (!cfg->quiet && !cfg->outdir_temp)
		fprintf(stderr, "lockstorm: journals, final state and report.json kept in %s\n", cfg->outdir);
	rc = verdict_exit(&v);
	if (interrupted && rc == 1)
		fprintf(stderr, "lockstorm: interrupted; the violations above were seen before\n");
out_mem:
	free(sv.stale_ms);
	free(sv.budget_ms);
	free(sv.slot);
	fault_states_destroy(sv.fstates, cfg->workers);
	arena_destroy(sv.arena);
	if (sv.rings)
		munmap(sv.rings, cfg->workers * sizeof *sv.rings);
out_dirs:
	leftover_kill_all();
	cleanup_dirs(cfg, &dirs);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}
