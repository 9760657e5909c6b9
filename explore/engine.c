/*
 * engine.c - the explorer's setup and one execution: fork the workers, grant their steps one at a time, check (see xint.h).
 */
#include <errno.h>
#include <fcntl.h>
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
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../core/fsutil.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"
#include "mfs.h"
#include "../faults/fsx_backend.h"

struct xshape shape_even(unsigned n, unsigned ops)
{
	struct xshape sh = { n, { 0 } };
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		sh.ops[i] = ops;
	return sh;
}

/* "2" when every worker runs 2 ops, else "2,1,2" */
void shape_ops(const struct xshape *sh, char *buf, size_t len)
{
	int even = 1;
	for (unsigned i = 1; i < sh->n; i++)
		even &= sh->ops[i] == sh->ops[0];
	size_t k = 0;
	for (unsigned i = 0; i < (even ? 1 : sh->n); i++)
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%u", i ? "," : "", sh->ops[i]);
}
static struct sched *clock_s;

static uint64_t x_clock(void)
{
	return 1000000000ULL + (uint64_t)atomic_load(&clock_s->now_ns);
}
/* ---- growing arrays ---- */

static int push_dev(struct xexec *x, struct xchoice c)
{
	if (x->ndev == x->capdev) {
		size_t cap = x->capdev ? x->capdev * 2 : 32;
		struct xchoice *g = realloc(x->dev, cap * sizeof *g);
		if (!g)
			return -1;
		x->dev = g;
		x->capdev = cap;
	}
	x->dev[x->ndev++] = c;
	return 0;
}

static struct xstep *push_step(struct xexec *x)
{
	if (x->nstep == x->capstep) {
		size_t cap = x->capstep ? x->capstep * 2 : 128;
		struct xstep *g = realloc(x->step, cap * sizeof *g);
		if (!g)
			return NULL;
		x->step = g;
		x->capstep = cap;
	}
	struct xstep *st = &x->step[x->nstep++];
	memset(st, 0, offsetof(struct xstep, path));
	st->path[0] = st->path2[0] = '\0';
	return st;
}

void xexec_free(struct xexec *x)
{
	free(x->dev);
	free(x->step);
	memset(x, 0, sizeof *x);
}

/* ---- one execution ---- */

/* One execution in a worker process: everything set up afresh. */
static void x_worker_exec(struct explorer *ex, unsigned id)
{
	struct xcfg *cfg = ex->cfg;  /* this process's copy */
	if (ex->body) {
		struct fsx_binding b = { .worker = id, .arena = ex->arena, .stale_ms = ex->stall_base[id],
					 .pid = SCHED_VPID_BASE + (pid_t)id, .sched = ex->s };
		fsx_bind(&b);
		ex->body(id, ex->store, ex->body_arg);
		fsx_unbind();
		return;
	}
	unsigned slot = cfg_proto_slot(&cfg->run, id);
	const pid_t vpid = x_vpid(ex, id);
	struct worker_spec sp = {
		.id = id,
		.incarnation = ex->s->w[id].restarts, /* a new process's prng: new uuids and tokens */
		.op_base = ex->s->w[id].op_base,
		.pid = vpid,
		.workers = ex->s->n,
		.seed = cfg->run.seed,
		.proto = cfg->run.proto[slot],
		.pvals = cfg->run.pvals[slot],
		.pvals_us = cfg->run.pvals_us[slot],
		.workload = cfg->run.workload,
		.wparam = cfg_wparam(&cfg->run, id),
		.wparam_us = cfg->run.wvals_us_slot[cfg_proto_slot(&cfg->run, id)],
		.state_file = ex->state_file,
		.arena = ex->arena,
		.jmem = &ex->s->jmem,
		.ops = ex->s->ops[id],
		.fsx = { .pid = vpid, .sched = ex->s },
	};
	if (worker_run(&sp) != 0)
		_exit(3);
}

/* A worker process: executions one after another, until it is killed. */
static _Noreturn void x_worker(struct explorer *ex, unsigned id)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	journal_clock_ns = x_clock;
	sched_attach(ex->s, id);
	mfs_attach((int)id);
	static sigjmp_buf died;
	sched_die_to(&died);
	for (;;) {
		sched_finish(); /* ready: wait for the start of an execution */
		if (sigsetjmp(died, 0) != 0) { /* a crash choice (x_kill_one): it waits for its */
			fsx_forget_process();   /* next start as a new process would (worker_run */
			mfs_forget_process();   /* sets up everything else again) */
			lock_forget_process();
			continue;
		}
		x_worker_exec(ex, id);
	}
}

/* Wait until worker W's process, killed, is gone: its pidfd says so (a
 * child of the zygote), or waitpid (a child of ours). */
static void x_reap(struct explorer *ex, unsigned w, pid_t pid)
{
	if (ex->pidfd[w] >= 0) {
		struct pollfd p = { .fd = ex->pidfd[w], .events = POLLIN };
		while (poll(&p, 1, -1) < 0 && errno == EINTR)
			;
		close(ex->pidfd[w]);
		ex->pidfd[w] = -1;
	} else {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
}

/* Kill and collect every worker process (the next execution forks new ones). */
static void x_kill_all(struct explorer *ex, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ex->s->w[i].pid > 0)
			kill(ex->s->w[i].pid, SIGKILL);
	for (unsigned i = 0; i < n; i++)
		if (ex->s->w[i].pid > 0) {
			x_reap(ex, i, ex->s->w[i].pid);
			ex->s->w[i].pid = 0;
			ex->deaths[i] = 0;
			atomic_store(&ex->s->w[i].state, SS_DONE);
		}
}

/* A crash choice (or a power loss) of worker W, journaled as the fault
 * engine's crash at POINT and the driver's kill. */
static void x_kill_one(struct explorer *ex, unsigned w, const char *point)
{
	struct sched_slot *sl = &ex->s->w[w];
	x_log(ex, w, sl->op_no, EV_FAULT, FK_CRASH, (int64_t)point_hash(point), 0);
	pid_t pid = sl->pid;
	int dead;
	/* A crash needs no new process: the process waits for its next start
	 * as a new one would (sched_kill), and what a death would let go goes:
	 * on the modelled file system everything the worker held is the
	 * model's (mfs_proc_gone); on the real one the worker closes every
	 * descriptor it opened through the seam (fsx_forget_process), which
	 * lets its flocks and record locks go as its exit would, unless it
	 * opened one the seam does not keep (fds_untracked: then it dies for
	 * real).  A fork and an exit cost more than many executions here.
	 * Each process lives through X_DEATHS of them at most, so what a
	 * worker killed in the middle of something leaves in its memory stays
	 * bounded. */
	if (pid > 0 && (mfs_on() || !sl->fds_untracked) && !ex->body && !ex->fork_crash && ex->deaths[w] < X_DEATHS) {
		sched_kill(ex->s, w);
		if (sched_wait_quiet(ex->s, X_QUIET_TIMEOUT_MS, &dead) == 0) {
			ex->deaths[w]++;
			pid = 0; /* alive, and parked */
		}
	}
	if (pid > 0) { /* never kill(0): that is the caller's whole group */
		kill(pid, SIGKILL);
		x_reap(ex, w, pid);
		sl->pid = 0;
		ex->deaths[w] = 0;
	}
	if (mfs_on()) /* its descriptors close */
		mfs_proc_gone((int)w);
	ex->s->ahead.release_epoch++; /* and its locks go: a blocked flock may try again */
	atomic_store(&sl->state, SS_DONE);
	x_log(ex, JOURNAL_DRIVER, w, EV_KILLED, SIGKILL, x_vpid(ex, w), 0);
}

/* A worker process for slot I, in the child of a fork: it waits in
 * sched_finish until granted. */
static _Noreturn void x_worker_child(struct explorer *ex, unsigned i, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(3);
	x_worker(ex, i);
}

/*
 * The zygote: worker processes are forked from it, not from the explorer.
 * A fork shares every page of the forking process copy-on-write, so after
 * each fork the explorer took a page fault (and a TLB flush) at the first
 * write to every page it then touched: with crashes and restarts (a new
 * process each) that was a third of explore's time.  The zygote is forked
 * once, before the first worker, and then only forks: it writes almost
 * nothing, and the explorer's pages stay its own.  A worker it forks is
 * what a fork of the explorer at that moment was (everything a worker reads
 * is set up by then and lives on in shared mappings).  It answers on a pipe
 * (a slot number in, a pid or -errno out), reaps its children itself
 * (SA_NOCLDWAIT), and the explorer waits for a killed worker on a pidfd.
 * Its own group is the workers' (as the first worker's was).  It dies with
 * the explorer (PR_SET_PDEATHSIG) and ends when its pipe closes.
 */
static _Noreturn void x_zygote(struct explorer *ex, int req, int ans)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != ex->self)
		_exit(3);
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	struct sigaction sa = { .sa_handler = SIG_DFL, .sa_flags = SA_NOCLDWAIT };
	sigaction(SIGCHLD, &sa, NULL);
	setpgid(0, 0);
	const pid_t me = getpid();
	for (;;) {
		int32_t slot;
		ssize_t k;
		while ((k = read(req, &slot, sizeof slot)) < 0 && errno == EINTR)
			;
		if (k != (ssize_t)sizeof slot)
			_exit(0); /* the explorer closed its end */
		pid_t pid = fork();
		if (pid == 0) {
			close(req);
			close(ans);
			struct sigaction dfl = { .sa_handler = SIG_DFL };
			sigaction(SIGCHLD, &dfl, NULL);
			x_worker_child(ex, (unsigned)slot, me);
		}
		int32_t r = pid > 0 ? (int32_t)pid : -errno;
		if (write(ans, &r, sizeof r) != (ssize_t)sizeof r)
			_exit(3);
	}
}

static int x_zygote_start(struct explorer *ex)
{
	int req[2], ans[2];
	if (pipe2(req, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(ans, O_CLOEXEC) != 0) {
		close(req[0]);
		close(req[1]);
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(req[0]);
		close(req[1]);
		close(ans[0]);
		close(ans[1]);
		errno = e;
		return -1;
	}
	if (pid == 0) {
		close(req[1]);
		close(ans[0]);
		x_zygote(ex, req[0], ans[1]);
	}
	close(req[0]);
	close(ans[1]);
	setpgid(pid, pid); /* (the zygote does too: whichever comes first) */
	ex->zygote = ex->pgid = pid;
	ex->zy_req = req[1];
	ex->zy_ans = ans[0];
	return 0;
}

static void x_zygote_stop(struct explorer *ex)
{
	if (!ex->zygote)
		return;
	close(ex->zy_req); /* it reads the end and leaves */
	close(ex->zy_ans);
	kill(ex->zygote, SIGKILL);
	while (waitpid(ex->zygote, NULL, 0) < 0 && errno == EINTR)
		;
	ex->zygote = 0;
}

/* A worker process for slot I, forked by the zygote; it waits in
 * sched_finish until granted. */
static int x_fork(struct explorer *ex, unsigned i)
{
	struct sched *s = ex->s;
	if (!ex->zygote && x_zygote_start(ex) != 0)
		return -1;
	if (ex->pidfd[i] >= 0) { /* a worker that died outside the seam (sched_wait_quiet) */
		close(ex->pidfd[i]);
		ex->pidfd[i] = -1;
	}
	atomic_store(&s->w[i].state, SS_IDLE);
	s->w[i].fds_untracked = 0; /* a new process */
	int32_t slot = (int32_t)i, r = -EPIPE;
	ssize_t k;
	if (write(ex->zy_req, &slot, sizeof slot) == (ssize_t)sizeof slot) {
		while ((k = read(ex->zy_ans, &r, sizeof r)) < 0 && errno == EINTR)
			;
		if (k != (ssize_t)sizeof r)
			r = -EPIPE;
	}
	if (r < 0) {
		atomic_store(&s->w[i].state, SS_DONE);
		errno = -r;
		return -1;
	}
	pid_t pid = (pid_t)r;
	ex->pidfd[i] = (int)syscall(SYS_pidfd_open, pid, 0);
	if (ex->pidfd[i] < 0) { /* cannot wait for it: do without it */
		int e = errno;
		kill(pid, SIGKILL);
		atomic_store(&s->w[i].state, SS_DONE);
		errno = e;
		return -1;
	}
	s->w[i].pid = pid;
	ex->deaths[i] = 0;
	return 0;
}

static int x_restart(struct explorer *ex, const struct xshape *sh, unsigned i, unsigned boot)
{
	struct sched *s = ex->s;
	struct sched_slot *r = &s->w[i];
	uint32_t base = r->op_no + 1;
	s->ops[i] = sh->ops[i] > base ? sh->ops[i] - base : 1;
	r->op_base = base;
	r->boot = (uint8_t)boot;
	r->restarts++;
	return r->pid > 0 ? 0 : x_fork(ex, i); /* (a process x_kill_one kept waits already) */
}

static int x_harness(struct xexec *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->why, sizeof x->why, fmt, ap);
	va_end(ap);
	x->outcome = XO_HARNESS;
	return -1;
}

static int x_quiet(struct explorer *ex, struct xexec *x)
{
	int dead;
	if (sched_wait_quiet(ex->s, X_QUIET_TIMEOUT_MS, &dead) == 0)
		return 0;
	if (dead >= 0)
		return x_harness(x, "w%d died outside the file-system seam (a harness bug)", dead);
	return x_harness(x, "a worker ran %d s without reaching its next step", X_QUIET_TIMEOUT_MS / 1000);
}

static void x_check(struct explorer *ex, struct xexec *x);

/* How step ST ended: its result, its records up to REC_TO, what it did (ACTED,
 * which a focused crash aims by), and whether its worker went to sleep then
 * (STATE, until WAKE_NS; the clock is at NOW). */
static void x_step_end(struct xstep *st, int32_t result, int32_t err, uint32_t rec_to, uint32_t state, int64_t wake_ns,
		       int64_t now, uint8_t *acted)
{
	st->result = result;
	st->err = err;
	st->rec_to = rec_to;
	acted[st->w] = (uint8_t)x_step_acted(st);
	if (state == SS_SLEEP) {
		st->then_sleeps = 1;
		st->ms = (wake_ns - now) / 1000000;
	}
}

/* The decisions the workers took themselves since the controller's last
 * grant (core/sched.h's hand-off), taken in as if the controller had made
 * them: how the step before each ended, its deviation, its step. */
static int x_take_ahead(struct explorer *ex, struct xexec *x, struct xstep **last, int *current, uint32_t *run_steps,
			uint8_t *acted)
{
	const struct sched_ahead *a = &ex->s->ahead;
	for (uint32_t i = 0; i < a->n; i++) {
		const struct sched_ahead_step *e = &a->step[i];
		/* (before push_step: it may move the array; none before the first
		 * decision, taken by the last to start) */
		if (*last)
			x_step_end(*last, e->prev_result, e->prev_err, e->prev_rec_to, e->prev_state, e->prev_wake_ns,
				   e->prev_now_ns, acted);
		if (e->dev && push_dev(x, (struct xchoice){ e->at, XK_RUN, e->w, 0 }))
			return -1;
		x->decisions = e->at + 1;
		struct xstep *st = push_step(x);
		if (!st)
			return -1;
		st->kind = XK_RUN;
		st->w = e->w;
		st->state = e->state;
		st->fsop = e->fsop;
		st->op_no = e->op_no;
		st->point = e->point;
		st->now_ns = e->now_ns;
		st->rec_from = st->rec_to = e->rec_from;
		memcpy(st->path, e->path, sizeof st->path);
		memcpy(st->path2, e->path2, sizeof st->path2);
		*last = st;
		*current = e->w;
		(*run_steps)++;
	}
	return 0;
}

/* The fault kinds x_fault_opts (and the stall and crash options) offer no
 * more in this execution, STALLS and CRASHES made and USED of the others:
 * a planned one of them offers nothing (x_faults_pick draws nothing), so
 * its decision is the workers' as any other. */
static uint32_t x_kinds_out(const struct explorer *ex, unsigned stalls, unsigned crashes, const unsigned *used)
{
	uint32_t out = 0;
	if (stalls >= ex->cfg->max_stalls)
		out |= 1u << XK_STALL | 1u << XK_PAUSE;
	if (crashes >= ex->cfg->max_crashes)
		out |= 1u << XK_CRASH;
	for (unsigned k = XK_ERRNO; k < XK__COUNT && k < 32; k++)
		if (used[k] >= ex->cfg->maxf[k] || (k == XK_POWER && !mfs_on()))
			out |= 1u << k;
	return out;
}

/* Set up the hand-off (core/sched.h) from decision AT, step NSTEP on, W
 * having run last; KINDS_OUT: x_kinds_out. */
static void x_hand_over(struct explorer *ex, const struct xahead *ah, void *ctx, uint32_t at, uint32_t nstep, int32_t w,
			uint32_t run_steps, uint32_t kinds_out)
{
	struct sched_ahead *a = &ex->s->ahead;
	a->decisions = at;
	a->nstep = nstep;
	a->max_steps = ex->cfg->max_steps;
	a->current = w;
	a->run_steps = run_steps;
	a->step_ns = X_STEP_NS;
	a->kinds_out = kinds_out;
	a->act_fsops = X_ACT_FSOPS;
	a->acted_watch_from = UINT32_MAX; /* (x_faults_ahead: an aimed crash) */
	a->n = 0;
	ah->give(ctx, at, a);
}

/* After a grant with the decisions handed over: take in those the workers
 * took (x_take_ahead), give the strategy its state back, and the
 * decisions are the controller's again.  -1: out of memory. */
static int x_take_back(struct explorer *ex, struct xexec *x, const struct xahead *ah, void *ctx, struct xstep **last,
		       int *current, uint32_t *run_steps, uint8_t *acted)
{
	struct sched *s = ex->s;
	int r = 0;
	if (s->ahead.mode != SA_OFF) {
		r = x_take_ahead(ex, x, last, current, run_steps, acted);
		if (r == 0 && ah->take)
			ah->take(ctx, &s->ahead);
	}
	sched_ahead_off(s);
	return r;
}

int x_exec(struct explorer *ex, const struct xshape *sh, xchoose choose, void *ctx, struct xexec *x)
{
	return x_exec_ahead(ex, sh, choose, NULL, ctx, x);
}

/* Run one execution of N workers x OPS ops; CHOOSE picks at every decision
 * (and AH, when given, hands the decisions it can to the workers).
 * Returns 0 (x->outcome says how it ended) or -1 when the harness failed. */
int x_exec_ahead(struct explorer *ex, const struct xshape *sh, xchoose choose, const struct xahead *ah, void *ctx,
		 struct xexec *x)
{
	struct sched *s = ex->s;
	const unsigned n = sh->n;
	x->sh = *sh;
	x->ndev = x->nstep = 0;
	x->decisions = 0;
	x->outcome = XO_PASS;
	x->inv = -1;
	x->stall_ms = 0;
	x->atoms = 0;
	x->why[0] = '\0';
	ex->cfg->run.workers = n;

	int store_fd = -1;
	if (mfs_on()) {
		mfs_reset();
		if (mfs_make_store(ex->store) != 0)
			return x_harness(x, "cannot make %s in the model: %s", ex->store, strerror(errno));
	} else if (x_reset_store(ex->store, &store_fd) != 0) {
		return x_harness(x, "cannot reset %s: %s", ex->store, strerror(errno));
	} else if (store_fd < 0) { /* made again: the workers' descriptors of it are of the old one */
		atomic_fetch_add(&s->store_gen, 1);
	}
	sched_reset(s, n, sh->ops);
	arena_reset(ex->arena);
	const int counted = fsx_backend && !mfs_on(); /* the anchor counts what the seam may change */
	const unsigned long before = counted ? fsx_anchor_changes() : 0;
	if (!ex->body && ex->cfg->run.workload->setup(ex->cfg->run.wvals, ex->state_file) != 0) {
		if (store_fd >= 0)
			close(store_fd);
		return x_harness(x, "workload setup: %s", strerror(errno));
	}
	if (mfs_on()) /* what setup made is as old as the clock, and on disk */
		mfs_settle(SCHED_EPOCH_MS * 1000000LL);
	else /* a setup that made nothing leaves nothing but the store to stamp */
		x_stamp_store(s, ex->store, store_fd, counted && fsx_anchor_changes() == before);

	/* workers: the live ones wait in sched_finish; fork the missing ones */
	for (unsigned i = 0; i < n; i++)
		if (s->w[i].pid <= 0 && x_fork(ex, i) != 0)
			return x_harness(x, "fork: %s", strerror(errno));
	if (x_quiet(ex, x))
		goto fail;
	/* start them one after another: each runs until its first step; a
	 * start that did more than start (a protocol whose acquire makes no
	 * call holds already) is a line of the story */
	const int handing = ah && !ex->no_handoff && !ex->calibrating;
	if (handing) { /* the last to start may take the first decisions (sched_start_all) */
		s->start_silent = STORY_SILENT_EVENTS;
		const unsigned none[XK__COUNT] = { 0 };
		x_hand_over(ex, ah, ctx, 0, 0, -1, 0, x_kinds_out(ex, 0, 0, none));
	}
	sched_start_all(s);
	if (x_quiet(ex, x))
		goto fail;
	for (unsigned i = 0; i < n; i++) {
		struct xstep probe = { .kind = XK_RUN, .w = (uint8_t)i, .state = SS_STEP, .fsop = FSX_OP_COUNT,
				       .rec_from = s->start_from[i], .rec_to = s->start_to[i] };
		char ev[256];
		int holding[SCHED_MAX_WORKERS] = { 0 };
		step_events(ex, &probe, holding, ev, sizeof ev);
		if (ev[0] && s->ahead.mode != SA_OFF) { /* STORY_SILENT_EVENTS is wrong: the story would be out of order */
			x_harness(x, "w%u's start is a line of the story, but the workers decided before it", i);
			goto fail;
		}
		struct xstep *st = ev[0] ? push_step(x) : NULL;
		if (st) {
			memcpy(st, &probe, offsetof(struct xstep, path));
			st->path[0] = st->path2[0] = '\0';
		}
	}

	int current = -1, barred = -1;
	unsigned stalls = 0, crashes = 0, used[XK__COUNT] = { 0 };
	uint32_t run_steps = 0;
	uint32_t *blocked_at = s->ahead.blocked_at;  /* shared: the workers decide by them too */
	int64_t *pause_until = s->ahead.pause_until; /* pause: not before this virtual time */
	struct xstep *last = NULL;
	uint8_t *acted = s->ahead.acted; /* each worker's last step made, opened, wrote or removed (shared:
					  * the workers of the hand-off keep it too; sched_reset clears it) */
	if (x_take_back(ex, x, ah, ctx, &last, &current, &run_steps, acted) != 0) { /* what the last to start decided */
		x_harness(x, "out of memory");
		goto fail;
	}
	for (;;) {
		/* what the last step did */
		if (last) {
			struct sched_slot *sl = &s->w[last->w];
			uint32_t st = atomic_load(&sl->state);
			x_step_end(last, sl->result, sl->err, s->jmem.n, st, sl->wake_ns, atomic_load(&s->now_ns), acted);
			if (st == SS_BLOCKED)
				blocked_at[last->w] = s->ahead.release_epoch;
			last = NULL;
		}
		if (s->jmem.dropped) {
			x_harness(x, "more than %u journal records in one execution", X_REC_CAP);
			goto fail;
		}

		int64_t now = atomic_load(&s->now_ns);
		int enabled[SCHED_MAX_WORKERS], live[SCHED_MAX_WORKERS];
		unsigned nlive, nblocked;
		int64_t next_wake;
		unsigned nen = sched_enabled(s, enabled, live, &nlive, &nblocked, &next_wake);
		if (barred >= 0 && enabled[barred] && nen > 1) {
			enabled[barred] = 0;
			nen--;
		}
		barred = -1;
		if (!nlive)
			break;
		if (!nen) {
			if (next_wake != INT64_MAX) { /* everyone waits for the clock: move it */
				atomic_store(&s->now_ns, next_wake);
				continue;
			}
			/* blocked on each other for good */
			x->outcome = XO_FAIL;
			x->inv = INV_LIVENESS;
			snprintf(x->why, sizeof x->why, "deadlock: %u workers wait for a lock nobody will release", nblocked);
			x_kill_all(ex, n);
			break;
		}
		if (x->nstep >= ex->cfg->max_steps) { /* judged by the prefix invariants and no-livelock */
			x->outcome = XO_BOUND;
			snprintf(x->why, sizeof x->why, "stopped at the step bound (%u steps)", ex->cfg->max_steps);
			x_kill_all(ex, n);
			break;
		}

		/* the options: the default first */
		struct xopt opt[X_MAX_OPTS];
		unsigned nopt = 0;
		int cur_en = current >= 0 && enabled[current];
		uint8_t order[SCHED_MAX_WORKERS];
		for (unsigned k = 0, nr = sched_run_order(s, enabled, current, order); k < nr; k++)
			opt[nopt++] = (struct xopt){ XK_RUN, order[k], 0 };
		unsigned nrun = nopt;
		if (stalls < ex->cfg->max_stalls)
			for (unsigned k = XK_STALL; k <= XK_PAUSE; k += XK_PAUSE - XK_STALL)
				for (unsigned m = 0; m < ex->cfg->nstallv; m++)
					for (unsigned i = 0; i < n; i++)
						if (live[i] && (k == XK_STALL || (ex->cfg->pauses && pause_until[i] <= now)))
							opt[nopt++] = (struct xopt){ (uint8_t)k, (uint8_t)i, (uint8_t)m };
		if (crashes < ex->cfg->max_crashes)
			for (unsigned i = 0; i < n; i++)
				if (live[i])
					opt[nopt++] = (struct xopt){ XK_CRASH, (uint8_t)i, 0 };
		nopt = x_fault_opts(ex, opt, nopt, enabled, live, used);
		struct xdec d = { x->decisions, opt, nopt, nrun, current, cur_en, run_steps, { 0 }, { 0 } };
		for (unsigned i = 0; i < n; i++) {
			d.fsop[i] = enabled[i] && atomic_load(&s->w[i].state) == SS_STEP ? s->w[i].fsop : FSX_OP_COUNT;
			d.acted[i] = acted[i];
		}
		if (ex->calibrating) /* what the focused plans aim at: read of calibration schedules only */
			x->atoms |= x_atoms_offered(&d);
		unsigned pick = choose(ctx, &d);
		if (pick >= nopt)
			pick = 0;
		if (pick && push_dev(x, (struct xchoice){ x->decisions, opt[pick].kind, opt[pick].w, opt[pick].m })) {
			x_harness(x, "out of memory");
			goto fail;
		}
		x->decisions++;

		unsigned w = opt[pick].w;
		struct sched_slot *sl = &s->w[w];
		struct xstep *st = push_step(x);
		if (!st) {
			x_harness(x, "out of memory");
			goto fail;
		}
		st->kind = opt[pick].kind;
		st->w = (uint8_t)w;
		st->m = opt[pick].m;
		st->state = (uint8_t)atomic_load(&sl->state);
		st->fsop = sl->fsop;
		st->op_no = sl->op_no;
		st->point = sl->point;
		st->now_ns = now;
		st->rec_from = st->rec_to = s->jmem.n;
		memcpy(st->path, sl->path, sizeof st->path);
		memcpy(st->path2, sl->path2, sizeof st->path2);
		if (st->kind != XK_RUN && x_ran(st->kind)) { /* a fault at the step: the worker applies it */
			used[st->kind]++;
			sl->xf = x_step_fault(ex, st, w);
			if (st->kind == XK_SPLIT) { /* the rest of the write comes after the others went on */
				pause_until[w] = now + st->ms * 1000000LL;
				x->stall_ms += st->ms; /* a pause of its own, as a pause choice's */
				x_log(ex, w, sl->op_no, EV_FAULT, FK_STALL, (int64_t)point_hash("explore/pause"), st->ms);
			}
		} else if (x_sticky_kind(st->kind)) {
			used[st->kind]++;
			x_sticky(ex, st, w);
		}
		if (x_ran(st->kind)) {
			atomic_store(&s->now_ns, now + X_STEP_NS);
			run_steps++;
			current = (int)w;
			sl->started = 1; /* it has run: too late to be on another host */
			last = st;
			if (handing) /* the next decisions the workers may take */
				x_hand_over(ex, ah, ctx, x->decisions, (uint32_t)x->nstep, (int32_t)w, run_steps,
					    x_kinds_out(ex, stalls, crashes, used));
			sched_ahead_grant(s, w);
			if (x_quiet(ex, x))
				goto fail;
			if (x_take_back(ex, x, ah, ctx, &last, &current, &run_steps, acted) != 0) {
				x_harness(x, "out of memory");
				goto fail;
			}
		} else if (x_sticky_kind(st->kind)) {
			st->rec_to = s->jmem.n;
		} else if (st->kind == XK_STALL) {
			/* it is descheduled while the clock moves past the stale age */
			int64_t ms = (int64_t)llround(ex->cfg->stallv[st->m] * (double)ex->stall_base[w]);
			st->ms = ms;
			x->stall_ms += ms;
			stalls++;
			atomic_store(&s->now_ns, now + ms * 1000000LL);
			x_log(ex, w, sl->op_no, EV_FAULT, FK_STALL, (int64_t)point_hash("explore/stall"), ms);
			st->rec_to = s->jmem.n;
			barred = (int)w;
		} else if (st->kind == XK_PAUSE) {
			/* descheduled while the others go on: the clock moves through their sleeps */
			int64_t ms = (int64_t)llround(ex->cfg->stallv[st->m] * (double)ex->stall_base[w]);
			st->ms = ms;
			x->stall_ms += ms;
			stalls++;
			pause_until[w] = now + ms * 1000000LL;
			x_log(ex, w, sl->op_no, EV_FAULT, FK_STALL, (int64_t)point_hash("explore/pause"), ms);
			st->rec_to = s->jmem.n;
			if (current == (int)w)
				current = -1;
		} else if (st->kind == XK_POWER) {
			/* every worker dies at once, and the disk keeps what was fsync'd */
			used[XK_POWER]++;
			for (unsigned i = 0; i < n; i++)
				if (live[i])
					x_kill_one(ex, i, "explore/power-loss");
			mfs_power_loss();
			/* ... and the machine comes back: each worker the power killed
			 * starts again as a new process (new pid, as --respawn does)
			 * for what was left of its ops, at least one, on the disk it
			 * finds; the restart is judged with the rest */
			const unsigned boot = used[XK_POWER];
			for (unsigned i = 0; i < n && boot < SCHED_BOOTS; i++) {
				if (!live[i])
					continue;
				pause_until[i] = 0;
				if (x_restart(ex, sh, i, boot) != 0) {
					x_harness(x, "fork: %s", strerror(errno));
					goto fail;
				}
			}
			if (x_quiet(ex, x))
				goto fail;
			for (unsigned i = 0; i < n && boot < SCHED_BOOTS; i++) {
				if (!live[i])
					continue;
				sched_grant(s, i); /* it runs its set-up, up to its first step */
				if (x_quiet(ex, x))
					goto fail;
			}
			st->rec_to = s->jmem.n;
			current = -1;
		} else if (st->kind == XK_RESTART) {
			/* killed, and started again at once with the same pid: a dead
			 * holder's recorded pid is alive again, and its own (K-VL-4) */
			used[XK_RESTART]++;
			x_kill_one(ex, w, "explore/crash");
			pause_until[w] = 0;
			if (x_restart(ex, sh, w, s->w[w].boot) != 0) {
				x_harness(x, "fork: %s", strerror(errno));
				goto fail;
			}
			if (x_quiet(ex, x))
				goto fail;
			sched_grant(s, w); /* it runs its set-up, up to its first step */
			if (x_quiet(ex, x))
				goto fail;
			st->rec_to = s->jmem.n;
			current = -1;
		} else {
			crashes++;
			x_kill_one(ex, w, "explore/crash");
			st->rec_to = s->jmem.n;
			if (current == (int)w)
				current = -1;
		}
	}
	ex->execs++;
	ex->steps += x->nstep;
	if (x->decisions > ex->kest)
		ex->kest = x->decisions;
	ex->dsum += x->decisions;
	if (!ex->body)
		x_check(ex, x);
	return 0;
fail:
	x_kill_all(ex, n);
	return -1;
}

static void x_check(struct explorer *ex, struct xexec *x)
{
	const struct xcfg *cfg = ex->cfg;
	size_t flen = 0, slen = 0;
	char *final = mfs_on() ? mfs_slurp(ex->state_file, &flen) : fsutil_slurp(ex->state_file, &flen);
	unsigned f = cfg->run.workload->flags;
	char *snap = NULL;
	if (f & WL_CHECK_SEQ) { /* the append workload's snapshot, judged against the journal */
		char sp[PATH_MAX + 64];
		append_snapshot_path(ex->state_file, sp, sizeof sp);
		snap = mfs_on() ? mfs_slurp(sp, &slen) : fsutil_slurp(sp, &slen);
	}
	struct check_input in = {
		.rec = ex->s->jmem.rec,
		.n = ex->s->jmem.n,
		.workers = x->sh.n,
		.stale_ms = ex->stale_ms,
		.budget_ms = ex->budget_ms,
		.proto_of = ex->proto_of,
		.rev_of = ex->rev_of,
		.clock_jump_ms = x->stall_ms, /* a stall moves everyone's clock: it is not their wait */
		.excuse_injected = 1,
		.check_state = (f & WL_CHECK_STATE) != 0,
		.check_seq = (f & WL_CHECK_SEQ) != 0,
		.check_stale_read = (f & WL_CHECK_STALE_READ) != 0,
		.final_state = final,
		.final_len = flen,
		.final_snapshot = snap,
		.final_snapshot_len = slen,
	};
	int deadlock = x->outcome == XO_FAIL, cut = x->outcome == XO_BOUND;
	struct ck_step *ll = x_livelock_steps(ex, x, &in.nsteps);
	in.steps = ll;
	in.livelock_steps = X_LIVELOCK_STEPS;
	int cr = check_run(&in, &x->res);
	free(ll);
	free(final);
	free(snap);
	if (cr != 0) {
		x_harness(x, "checker: %s", strerror(errno));
		return;
	}
	if (deadlock)
		return;
	/* the first violated invariant among those asked for (--invariant); a cut
	 * schedule only by those a prefix can break */
	for (int i = 0; i < INV__COUNT && !x->res.pass; i++)
		if (x->res.inv[i].applicable && x->res.inv[i].violations && (!cut || x_prefix_inv(i)) &&
		    (!cfg->want || (cfg->want & (1u << i)))) {
			x->outcome = XO_FAIL;
			x->inv = i;
			break;
		}
	if (x->outcome == XO_FAIL && x->inv == INV_NO_LIVELOCK) { /* the loop's length, for the story */
		struct check_example *e = &x->res.inv[INV_NO_LIVELOCK].ex[0];
		unsigned p = x_livelock_period(ex, x, (unsigned)e->worker[0], (size_t)e->seq[1]);
		size_t l = strlen(e->text);
		snprintf(e->text + l, sizeof e->text - l, ", repeating every %u step%s", p, p == 1 ? "" : "s");
	}
}

/* ---- the explorer's own setup ---- */

int explorer_open(struct explorer *ex, struct xcfg *cfg, char *why, size_t len)
{
	memset(ex, 0, sizeof *ex);
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		ex->pidfd[i] = -1;
	rundir_init(&ex->xrd);
	ex->cfg = cfg;
	ex->self = getpid();
	const char *base = cfg->dir[0] ? cfg->dir : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	struct stat st;
	if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode))
		return runcfg_fail(why, len, "--dir %s: not a directory", base);
	rundir_sweep_stale_in(base); /* a SIGKILLed explorer's */
	if (rundir_temp_in(&ex->xrd, base, "lockstorm-explore", ".lockstorm-owned", why, len) != 0)
		return -1;
	snprintf(ex->xdir, sizeof ex->xdir, "%s", ex->xrd.path);
	snprintf(ex->store, sizeof ex->store, "%s/store", ex->xdir);
	snprintf(ex->state_file, sizeof ex->state_file, "%s/state.json", ex->store);
	/* one CPU for the explorer and its workers (sched.c says why); the
	 * workers inherit it */
	if (!cfg->no_pin && sched_getaffinity(0, sizeof ex->old_cpus, &ex->old_cpus) == 0) {
		int cpu = sched_getcpu();
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu >= 0 ? cpu : 0, &one);
		ex->pinned = sched_setaffinity(0, sizeof one, &one) == 0;
	}
	ex->s = sched_create(SCHED_MAX_WORKERS, X_REC_CAP);
	ex->arena = arena_create(SCHED_MAX_WORKERS);
	ex->pairs = calloc(X_PAIRS, sizeof *ex->pairs);
	if (!ex->s || !ex->arena || !ex->pairs)
		return runcfg_fail(why, len, "cannot set up the scheduler: %s", strerror(errno));
	clock_s = ex->s;
	if (cfg->fs.model) { /* the modelled file system, shared with the workers forked later */
		if (mfs_open(ex->xdir, &cfg->fs, ex->s) != 0) /* the store is a folder inside it, sweepable */
			return runcfg_fail(why, len, "cannot map the modelled file system: %s", strerror(errno));
		fsx_backend = mfs_backend();
	} else { /* the real one, the calls under the store relative to it */
		fsx_backend = fsx_anchor_backend(ex->store, &ex->s->store_gen);
	}
	ex->s->yield_points = cfg->points;
	const char *nh = getenv("LOCKSTORM_NO_HANDOFF"); /* the test that proves the hand-off changes nothing */
	ex->no_handoff = nh && strcmp(nh, "1") == 0;
	const char *fc = getenv("LOCKSTORM_FORK_CRASH"); /* the test that proves a kept process changes nothing */
	ex->fork_crash = fc && strcmp(fc, "1") == 0;
	journal_clock_ns = x_clock;
	journal_point_name = point_name;
	journal_open_mem(&ex->ctl_j, &ex->s->jmem, JOURNAL_DRIVER, (int32_t)getpid());
	static struct lock lk;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++) {
		unsigned slot = cfg_proto_slot(&cfg->run, i);
		lock_setup(&lk, cfg->run.proto[slot], ex->state_file, cfg->run.pvals[slot], i, NULL);
		ex->stale_ms[i] = lk.ops->stale_ms(&lk);
		ex->budget_ms[i] = lk.ops->wait_budget_ms(&lk);
		ex->stall_base[i] = worker_stale_ms(&lk);
		ex->proto_of[i] = lk.ops->name;
		ex->rev_of[i] = cfg_slot_label(&cfg->run, i);
	}
	return 0;
}

void explorer_close(struct explorer *ex)
{
	if (ex->s)
		x_kill_all(ex, SCHED_MAX_WORKERS);
	x_zygote_stop(ex);
	rundir_release(&ex->xrd, 1);
	fsx_backend = NULL;
	mfs_close();
	sched_destroy(ex->s);
	arena_destroy(ex->arena);
	free(ex->pairs);
	journal_clock_ns = NULL;
	if (ex->pinned)
		sched_setaffinity(0, sizeof ex->old_cpus, &ex->old_cpus);
}
