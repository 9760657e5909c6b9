/*
 * explore.c - `lockstorm explore` and `lockstorm replay` (see explore.h and
 * docs/explore.md).
 *
 * Layout of this file:
 *   configuration and options
 *   one execution: fork, grant steps one at a time, check       x_exec
 *   strategies: random, PCT, bounded DFS, replay of deviations  choose_*
 *   shrinking: fewer workers, fewer ops, ddmin over deviations  shrink
 *   the story: the steps the violation depends on, in words     story_*
 *   counterexample files, coverage, the two commands
 */
#include "explore.h"

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
#include "../run/runcfg.h"
#include "../core/sched.h"

#define X_REC_CAP (1u << 16)            /* journal records one execution may write */
#define X_MAX_STALLV 4                  /* --stall multiples a run may offer */
#define X_MAX_OPTS ((2 + X_MAX_STALLV) * SCHED_MAX_WORKERS)
#define X_STEP_NS 1000                  /* the virtual clock moves 1 us per step */
#define X_QUIET_TIMEOUT_MS 10000        /* real time one step may take before we call it hung */
#define X_SHRINK_MAX 4000               /* executions the shrinker may spend */
#define X_PAIRS 65536                   /* coverage: distinct step pairs remembered */

enum { XS_RANDOM, XS_PCT, XS_DFS };
enum { XO_PASS, XO_FAIL, XO_BOUND, XO_HARNESS };

static const char *const kind_names[] = { "run", "stall", "crash", "pause" };

/* How many workers, and how many operations each one runs. */
struct xshape {
	unsigned n;
	unsigned ops[SCHED_MAX_WORKERS];
};

static struct xshape shape_even(unsigned n, unsigned ops)
{
	struct xshape sh = { n, { 0 } };
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		sh.ops[i] = ops;
	return sh;
}

/* "2" when every worker runs 2 ops, else "2,1,2" */
static void shape_ops(const struct xshape *sh, char *buf, size_t len)
{
	int even = 1;
	for (unsigned i = 1; i < sh->n; i++)
		even &= sh->ops[i] == sh->ops[0];
	size_t k = 0;
	for (unsigned i = 0; i < (even ? 1 : sh->n); i++)
		k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%u", i ? "," : "", sh->ops[i]);
}

struct xcfg {
	struct run_config run;   /* protocols, workload, workers, seed, params (time scale 1) */
	unsigned ops;            /* operations per worker */
	int strategy;
	unsigned pct_d, preempt;
	uint64_t schedules;      /* 0: no limit */
	int64_t budget_ms;
	int all;
	unsigned max_stalls, max_crashes, max_steps;
	double stallv[X_MAX_STALLV]; /* --stall: the multiples of the stale age a stall may take */
	int pauses;              /* --pauses: a stall may also be a pause (the others go on meanwhile) */
	int points;              /* --points: every protocol point is a decision too */
	unsigned nstallv;
	char outdir[PATH_MAX];
	char dir[PATH_MAX];      /* where our work directory is made */
	char json[PATH_MAX];
	int quiet, verbose, no_shrink;
	struct xshape replay_sh; /* replay: the file's workers and ops */
	int no_pin;              /* --no-pin: leave the CPU affinity alone */
	unsigned want;           /* --invariant: bit per enum inv_id; 0 = any */
};

/* One line of an execution: a granted step, a stall or a crash. */
struct xstep {
	uint8_t kind;            /* enum xkind */
	uint8_t w;
	uint8_t m;               /* stall: the multiple's index */
	uint8_t state;           /* SS_STEP, SS_SLEEP or SS_BLOCKED when granted */
	uint8_t then_sleeps;     /* the worker went to sleep after this step */
	uint16_t fsop;           /* FSX_*; FSX_OP_COUNT for the start of a worker */
	int32_t result, err;
	uint32_t op_no;
	int64_t now_ns;          /* the clock when it was taken */
	int64_t ms;              /* stall: its length; then_sleeps: how long */
	const char *point;       /* the last protocol point before it */
	uint32_t rec_from, rec_to; /* the journal records it produced */
	char path[SCHED_PATH], path2[SCHED_PATH];
};

struct xexec {
	struct xshape sh;
	struct xchoice *dev;     /* deviations from the default, in decision order */
	size_t ndev, capdev;
	struct xstep *step;
	size_t nstep, capstep;
	uint32_t decisions;
	int outcome;             /* XO_* */
	int inv;                 /* XO_FAIL: the first violated invariant */
	struct check_result res;
	int64_t stall_ms;
	char why[256];
};

struct xopt {
	uint8_t kind, w, m;
};

struct xdec {
	uint32_t at;
	const struct xopt *opt;
	unsigned nopt, nrun;     /* runs first, then stalls, then crashes */
	int current;             /* the worker that ran last, -1 none */
	int current_enabled;
	uint32_t run_steps;      /* RUN decisions so far */
};

typedef unsigned (*xchoose)(void *ctx, const struct xdec *d);

struct explorer {
	struct xcfg *cfg;
	struct sched *s;
	struct arena *arena;
	pid_t self;
	pid_t pgid;              /* the workers' process group */
	cpu_set_t old_cpus;      /* the affinity before we pinned ourselves */
	int pinned;
	char xdir[PATH_MAX];     /* our work directory (mkdtemp) */
	char store[PATH_MAX];
	char state_file[PATH_MAX];
	int64_t stale_ms[SCHED_MAX_WORKERS];   /* the checker's */
	int64_t budget_ms[SCHED_MAX_WORKERS];
	int64_t stall_base[SCHED_MAX_WORKERS]; /* what "1 stale" is for a stall */
	const char *proto_of[SCHED_MAX_WORKERS];
	uint64_t *pairs;         /* coverage: ordered step pairs across workers (hash set) */
	size_t npairs;
	uint64_t execs, steps;
	uint32_t kest;           /* decisions one execution makes (largest seen) */
	uint64_t dsum;           /* decisions over all executions, for the mean */
	void (*body)(unsigned id, const char *dir, void *arg); /* explore_script: instead of a workload */
	void *body_arg;
	struct journal ctl_j;    /* the controller's records (stalls, kills) */
};

static volatile sig_atomic_t x_interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	x_interrupted = 1;
}

static struct sched *clock_s;

static uint64_t x_clock(void)
{
	return 1000000000ULL + (uint64_t)atomic_load(&clock_s->now_ns);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "ok";
	return n ? n : "error";
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

static void xexec_free(struct xexec *x)
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
	cfg->run.workers = ex->s->n;
	unsigned ops = ex->s->ops[id];
	static struct worker w;
	memset(&w, 0, sizeof w);
	w.id = id;
	w.pid = SCHED_VPID_BASE + (int)id;
	w.arena = ex->arena;
	w.cfg = &cfg->run;
	w.wparam = cfg->run.wvals;
	snprintf(w.state_file, sizeof w.state_file, "%s", ex->state_file);
	prng_seed(&w.rng, cfg->run.seed, id, 0);
	journal_open_mem(&w.journal, &ex->s->jmem, id, w.pid);
	if (cfg->run.workload->reset)
		cfg->run.workload->reset();
	unsigned slot = cfg_proto_slot(&cfg->run, id);
	lock_setup(&w.lock, cfg->run.proto[slot], w.state_file, cfg->run.pvals[slot], id, &w.rng);
	struct fsx_binding b = {
		.worker = id,
		.journal = &w.journal,
		.arena = ex->arena,
		.rng = &w.rng,
		.lock_path = w.lock.path,
		.stale_ms = ex->stall_base[id],
		.op = &w.op,
		.pid = w.pid,
		.sched = ex->s,
	};
	fsx_bind(&b);
	if (w.lock.ops->init(&w.lock) != 0)
		_exit(3);
	worker_log(&w, EV_WORKER_START, 0, 0, 0, 0);
	for (unsigned op = 0; op < ops; op++) {
		w.op = op;
		ex->s->w[id].op_no = op;
		if (cfg->run.workload->op(&w) != 0)
			break;
	}
	worker_log(&w, EV_WORKER_EXIT, 0, 0, 0, 0);
	fsx_unbind();
}

/* A worker process: executions one after another, until it is killed. */
static _Noreturn void x_worker(struct explorer *ex, unsigned id)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	journal_clock_ns = x_clock;
	sched_attach(ex->s, id);
	for (;;) {
		sched_finish(); /* ready: wait for the start of an execution */
		x_worker_exec(ex, id);
	}
}

static int stamp_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	struct timespec ts[2] = { { SCHED_EPOCH_MS / 1000, 0 }, { SCHED_EPOCH_MS / 1000, 0 } };
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}

/* Kill and collect every worker process (the next execution forks new ones). */
static void x_kill_all(struct explorer *ex, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ex->s->w[i].pid > 0)
			kill(ex->s->w[i].pid, SIGKILL);
	for (unsigned i = 0; i < n; i++)
		if (ex->s->w[i].pid > 0) {
			while (waitpid(ex->s->w[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
			ex->s->w[i].pid = 0;
			atomic_store(&ex->s->w[i].state, SS_DONE);
		}
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

/* A record on a worker's behalf, or the driver's (w = JOURNAL_DRIVER). */
static void x_log(struct explorer *ex, unsigned w, uint32_t op, int type, int64_t a, int64_t b, int64_t c)
{
	ex->ctl_j.worker = (uint16_t)w;
	ex->ctl_j.pid = w == JOURNAL_DRIVER ? (int32_t)getpid() : SCHED_VPID_BASE + (int32_t)w;
	journal_log(&ex->ctl_j, type, op, 0, a, b, c);
}

static void x_check(struct explorer *ex, struct xexec *x);
static void step_events(const struct explorer *ex, const struct xstep *st, int *holding, char *buf, size_t len);

/* Run one execution of N workers x OPS ops; CHOOSE picks at every decision.
 * Returns 0 (x->outcome says how it ended) or -1 when the harness failed. */
static int x_exec(struct explorer *ex, const struct xshape *sh, xchoose choose, void *ctx, struct xexec *x)
{
	struct sched *s = ex->s;
	const unsigned n = sh->n;
	x->sh = *sh;
	x->ndev = x->nstep = 0;
	x->decisions = 0;
	x->outcome = XO_PASS;
	x->inv = -1;
	x->stall_ms = 0;
	x->why[0] = '\0';
	ex->cfg->run.workers = n;

	if (ls_rm_tree(ex->store) != 0 || mkdir(ex->store, 0777) != 0)
		return x_harness(x, "cannot reset %s: %s", ex->store, strerror(errno));
	sched_reset(s, n, sh->ops);
	arena_reset(ex->arena);
	if (!ex->body && ex->cfg->run.workload->setup(&ex->cfg->run, ex->state_file) != 0)
		return x_harness(x, "workload setup: %s", strerror(errno));
	nftw(ex->store, stamp_entry, 16, FTW_PHYS); /* what setup made is as old as the clock */

	/* workers: the live ones wait in sched_finish; fork the missing ones */
	fflush(NULL);
	for (unsigned i = 0; i < n; i++) {
		if (s->w[i].pid > 0)
			continue;
		atomic_store(&s->w[i].state, SS_IDLE);
		pid_t pid = fork();
		if (pid < 0) {
			atomic_store(&s->w[i].state, SS_DONE);
			return x_harness(x, "fork: %s", strerror(errno));
		}
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != ex->self)
				_exit(3);
			setpgid(0, ex->pgid);
			x_worker(ex, i);
		}
		if (setpgid(pid, ex->pgid) != 0 && ex->pgid)
			setpgid(pid, 0);
		if (!ex->pgid)
			ex->pgid = pid;
		s->w[i].pid = pid;
	}
	if (x_quiet(ex, x))
		goto fail;
	/* start them one after another: each runs until its first step; a
	 * start that did more than start (a protocol whose acquire makes no
	 * call holds already) is a line of the story */
	for (unsigned i = 0; i < n; i++) {
		uint32_t from = s->jmem.n;
		sched_grant(s, i);
		if (x_quiet(ex, x))
			goto fail;
		struct xstep probe = { .kind = XK_RUN, .w = (uint8_t)i, .state = SS_STEP, .fsop = FSX_OP_COUNT,
				       .rec_from = from, .rec_to = s->jmem.n };
		char ev[256];
		int holding[SCHED_MAX_WORKERS] = { 0 };
		step_events(ex, &probe, holding, ev, sizeof ev);
		struct xstep *st = ev[0] ? push_step(x) : NULL;
		if (st) {
			memcpy(st, &probe, offsetof(struct xstep, path));
			st->path[0] = st->path2[0] = '\0';
		}
	}

	int current = -1, barred = -1;
	unsigned stalls = 0, crashes = 0;
	uint32_t run_steps = 0;
	size_t blocked_at[SCHED_MAX_WORKERS] = { 0 };
	int64_t pause_until[SCHED_MAX_WORKERS] = { 0 }; /* pause: not before this virtual time */
	struct xstep *last = NULL;
	for (;;) {
		/* what the last step did */
		if (last) {
			struct sched_slot *sl = &s->w[last->w];
			last->result = sl->result;
			last->err = sl->err;
			last->rec_to = s->jmem.n;
			uint32_t st = atomic_load(&sl->state);
			if (st == SS_SLEEP) {
				last->then_sleeps = 1;
				last->ms = (sl->wake_ns - atomic_load(&s->now_ns)) / 1000000;
			} else if (st == SS_BLOCKED) {
				blocked_at[last->w] = x->nstep;
			}
			last = NULL;
		}
		if (s->jmem.dropped) {
			x_harness(x, "more than %u journal records in one execution", X_REC_CAP);
			goto fail;
		}

		int64_t now = atomic_load(&s->now_ns);
		int enabled[SCHED_MAX_WORKERS], live[SCHED_MAX_WORKERS];
		unsigned nen = 0, nlive = 0, nsleep = 0, nblocked = 0;
		int64_t next_wake = INT64_MAX;
		for (unsigned i = 0; i < n; i++) {
			uint32_t st = atomic_load(&s->w[i].state);
			enabled[i] = live[i] = 0;
			if (st == SS_DONE)
				continue;
			live[i] = 1;
			nlive++;
			int64_t at = pause_until[i]; /* when it may go on */
			if (st == SS_SLEEP) {
				nsleep++;
				if (s->w[i].wake_ns > at)
					at = s->w[i].wake_ns;
			}
			if (at > now) {
				if (at < next_wake)
					next_wake = at;
			} else if (st == SS_STEP || st == SS_SLEEP) {
				enabled[i] = 1;
			} else if (st == SS_BLOCKED) {
				nblocked++;
				enabled[i] = x->nstep > blocked_at[i];
			}
			nen += enabled[i];
		}
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
		if (x->nstep >= ex->cfg->max_steps) {
			x->outcome = XO_BOUND;
			snprintf(x->why, sizeof x->why, "stopped at the step bound (%u steps)", ex->cfg->max_steps);
			x_kill_all(ex, n);
			break;
		}

		/* the options: the default first */
		struct xopt opt[X_MAX_OPTS];
		unsigned nopt = 0;
		int cur_en = current >= 0 && enabled[current];
		int first = cur_en ? current : -1;
		for (unsigned i = 0; first < 0 && i < n; i++)
			if (enabled[i])
				first = (int)i;
		opt[nopt++] = (struct xopt){ XK_RUN, (uint8_t)first, 0 };
		for (unsigned i = 0; i < n; i++)
			if (enabled[i] && (int)i != first)
				opt[nopt++] = (struct xopt){ XK_RUN, (uint8_t)i, 0 };
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
		struct xdec d = { x->decisions, opt, nopt, nrun, current, cur_en, run_steps };
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
		if (st->kind == XK_RUN) {
			atomic_store(&s->now_ns, now + X_STEP_NS);
			run_steps++;
			current = (int)w;
			sched_grant(s, w);
			if (x_quiet(ex, x))
				goto fail;
			last = st;
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
		} else {
			crashes++;
			x_log(ex, w, sl->op_no, EV_FAULT, FK_CRASH, (int64_t)point_hash("explore/crash"), 0);
			pid_t pid = sl->pid;
			kill(pid, SIGKILL);
			while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
				;
			sl->pid = 0;
			atomic_store(&sl->state, SS_DONE);
			x_log(ex, JOURNAL_DRIVER, w, EV_KILLED, SIGKILL, SCHED_VPID_BASE + (int64_t)w, 0);
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
	if (!ex->body && (x->outcome == XO_PASS || x->outcome == XO_FAIL)) /* a cut schedule is not judged */
		x_check(ex, x);
	return 0;
fail:
	x_kill_all(ex, n);
	return -1;
}

static void x_check(struct explorer *ex, struct xexec *x)
{
	const struct xcfg *cfg = ex->cfg;
	int64_t budget[SCHED_MAX_WORKERS];
	for (unsigned i = 0; i < x->sh.n; i++) /* a stall moves everyone's clock: it is not their wait */
		budget[i] = ex->budget_ms[i] == LS_NEVER ? LS_NEVER : ex->budget_ms[i] + x->stall_ms;
	size_t flen = 0, slen = 0;
	char *final = ls_slurp_file(ex->state_file, &flen);
	unsigned f = cfg->run.workload->flags;
	char *snap = NULL;
	if (f & WL_CHECK_SEQ) { /* the append workload's snapshot, judged against the journal */
		char sp[PATH_MAX + 64];
		append_snapshot_path(ex->state_file, sp, sizeof sp);
		snap = ls_slurp_file(sp, &slen);
	}
	struct check_input in = {
		.rec = ex->s->jmem.rec,
		.n = ex->s->jmem.n,
		.workers = x->sh.n,
		.stale_ms = ex->stale_ms,
		.budget_ms = budget,
		.proto_of = ex->proto_of,
		.check_state = (f & WL_CHECK_STATE) != 0,
		.check_seq = (f & WL_CHECK_SEQ) != 0,
		.check_stale_read = (f & WL_CHECK_STALE_READ) != 0,
		.final_state = final,
		.final_len = flen,
		.final_snapshot = snap,
		.final_snapshot_len = slen,
	};
	int deadlock = x->outcome == XO_FAIL;
	int cr = check_run(&in, &x->res);
	free(final);
	free(snap);
	if (cr != 0) {
		x_harness(x, "checker: %s", strerror(errno));
		return;
	}
	if (deadlock)
		return;
	/* the first violated invariant among those asked for (--invariant) */
	for (int i = 0; i < INV__COUNT && !x->res.pass; i++)
		if (x->res.inv[i].applicable && x->res.inv[i].violations &&
		    (!cfg->want || (cfg->want & (1u << i)))) {
			x->outcome = XO_FAIL;
			x->inv = i;
			break;
		}
}

/* ---- strategies ---- */

/* Faults in random and PCT: at most one stall and one crash per execution,
 * each at a decision drawn uniformly over the mean length of an execution
 * (the longest can be a waiter's long loop: most draws would miss). */
struct xfaults {
	uint32_t stall_at[4], crash_at; /* UINT32_MAX: none this execution */
};

/* The first stall and the crash are drawn first, so that a run with one
 * stall draws what it always drew; further stalls (--max-stalls 2..4)
 * after them. */
static void faults_draw(struct xfaults *f, struct prng *r, uint32_t kest, unsigned max_stalls)
{
	uint32_t k = kest ? kest : 32;
	f->stall_at[0] = prng_unit(r) < 0.75 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
	f->crash_at = prng_unit(r) < 0.25 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
	for (unsigned i = 1; i < 4; i++)
		f->stall_at[i] = i < max_stalls && prng_unit(r) < 0.75 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
}

static int faults_pick(const struct xfaults *f, struct prng *r, const struct xdec *d, unsigned *pick)
{
	unsigned nst = 0, ncr = 0;
	for (unsigned i = d->nrun; i < d->nopt; i++)
		d->opt[i].kind == XK_CRASH ? ncr++ : nst++;
	for (unsigned i = 0; i < 4 && nst; i++)
		if (d->at == f->stall_at[i]) {
			*pick = d->nrun + (unsigned)prng_below(r, nst);
			return 1;
		}
	if (d->at == f->crash_at && ncr) {
		*pick = d->nrun + nst + (unsigned)prng_below(r, ncr);
		return 1;
	}
	return 0;
}

struct xrandom {
	struct prng rng;
	struct xfaults f;
};

static unsigned choose_random(void *ctx, const struct xdec *d)
{
	struct xrandom *r = ctx;
	unsigned pick;
	if (faults_pick(&r->f, &r->rng, d, &pick))
		return pick;
	return (unsigned)prng_below(&r->rng, d->nrun);
}

/* PCT (Burckhardt et al., ASPLOS 2010): random distinct priorities d..d+n-1,
 * d-1 change points over the run's steps; at change point i the worker about
 * to run drops to priority i; the highest-priority worker that can run, runs. */
struct xpct {
	struct prng rng;
	struct xfaults f;
	unsigned d;
	uint32_t change[16];
	int prio[SCHED_MAX_WORKERS];
};

static void pct_begin(struct xpct *p, unsigned n, uint32_t kest, uint32_t kmean, unsigned max_stalls)
{
	unsigned perm[SCHED_MAX_WORKERS];
	for (unsigned i = 0; i < n; i++)
		perm[i] = i;
	for (unsigned i = n; i > 1; i--) {
		unsigned j = (unsigned)prng_below(&p->rng, i);
		unsigned t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (unsigned i = 0; i < n; i++)
		p->prio[i] = (int)(p->d + perm[i]);
	uint32_t k = kest ? kest : 32;
	for (unsigned i = 1; i < p->d && i < 16; i++)
		p->change[i] = (uint32_t)prng_below(&p->rng, k);
	faults_draw(&p->f, &p->rng, kmean, max_stalls);
}

static unsigned choose_pct(void *ctx, const struct xdec *d)
{
	struct xpct *p = ctx;
	unsigned pick;
	if (faults_pick(&p->f, &p->rng, d, &pick))
		return pick;
	for (;;) {
		unsigned best = 0;
		for (unsigned i = 1; i < d->nrun; i++)
			if (p->prio[d->opt[i].w] > p->prio[d->opt[best].w])
				best = i;
		int changed = 0;
		for (unsigned i = 1; i < p->d && i < 16; i++)
			if (p->change[i] == d->run_steps && p->prio[d->opt[best].w] >= (int)p->d) {
				p->prio[d->opt[best].w] = (int)i;
				changed = 1;
				break;
			}
		if (!changed)
			return best;
	}
}

/* Bounded DFS over decisions (stateless: every schedule is a re-execution
 * of a prefix), counting preemptions as CHESS does: running another worker
 * while the one that ran last could go on. */
struct dfs_node {
	struct xopt opt[X_MAX_OPTS];
	uint8_t nopt, idx;
	int8_t current;
	uint8_t cur_en;
	uint16_t pre;            /* preemptions before this decision */
};

struct xdfs {
	struct dfs_node *node;
	size_t depth, cap;
	unsigned bound;
	uint64_t mismatch;       /* a prefix that did not replay the same options */
};

static unsigned dfs_cost(const struct dfs_node *nd, unsigned i)
{
	return nd->opt[i].kind == XK_RUN && nd->cur_en && nd->opt[i].w != nd->current;
}

static unsigned choose_dfs(void *ctx, const struct xdec *d)
{
	struct xdfs *f = ctx;
	if (d->at < f->depth) {
		struct dfs_node *nd = &f->node[d->at];
		if (nd->nopt != d->nopt)
			f->mismatch++;
		return nd->idx < d->nopt ? nd->idx : 0;
	}
	if (f->depth == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		struct dfs_node *g = realloc(f->node, cap * sizeof *g);
		if (!g)
			return 0;
		f->node = g;
		f->cap = cap;
	}
	struct dfs_node *nd = &f->node[f->depth];
	memcpy(nd->opt, d->opt, d->nopt * sizeof *d->opt);
	nd->nopt = (uint8_t)d->nopt;
	nd->idx = 0;
	nd->current = (int8_t)d->current;
	nd->cur_en = (uint8_t)d->current_enabled;
	nd->pre = 0;
	if (f->depth) {
		const struct dfs_node *up = &f->node[f->depth - 1];
		nd->pre = (uint16_t)(up->pre + dfs_cost(up, up->idx));
	}
	f->depth++;
	return 0;
}

/* After an execution of `decisions` decisions: the next prefix, or 0 when
 * the bounded space is exhausted. */
static int dfs_next(struct xdfs *f, uint32_t decisions)
{
	if (f->depth > decisions)
		f->depth = decisions;
	while (f->depth) {
		struct dfs_node *nd = &f->node[f->depth - 1];
		for (unsigned i = nd->idx + 1u; i < nd->nopt; i++)
			if (nd->pre + dfs_cost(nd, i) <= f->bound) {
				nd->idx = (uint8_t)i;
				return 1;
			}
		f->depth--;
	}
	return 0;
}

/* Replay: the deviations, else the default. */
struct xreplay {
	const struct xchoice *dev;
	size_t n, next;
};

static unsigned choose_replay(void *ctx, const struct xdec *d)
{
	struct xreplay *r = ctx;
	while (r->next < r->n && r->dev[r->next].at < d->at)
		r->next++;
	if (r->next < r->n && r->dev[r->next].at == d->at) {
		const struct xchoice *c = &r->dev[r->next++];
		for (unsigned i = 0; i < d->nopt; i++)
			if (d->opt[i].kind == c->kind && d->opt[i].w == c->w && d->opt[i].m == c->m)
				return i;
	}
	return 0;
}

static int x_replay(struct explorer *ex, const struct xshape *sh, const struct xchoice *dev, size_t ndev,
		    struct xexec *x)
{
	struct xreplay r = { dev, ndev, 0 };
	struct xshape copy = *sh; /* sh may be x's own */
	return x_exec(ex, &copy, choose_replay, &r, x);
}

/* Run X's own schedule again (its deviations are copied first: the run
 * rewrites them), so the shared journal is X's. */
static int x_rerun(struct explorer *ex, struct xexec *x)
{
	struct xchoice *dev = malloc((x->ndev + 1) * sizeof *dev);
	if (!dev)
		return -1;
	memcpy(dev, x->dev, x->ndev * sizeof *dev);
	int r = x_replay(ex, &x->sh, dev, x->ndev, x);
	free(dev);
	return r;
}

/* ---- shrinking ---- */

size_t explore_ddmin(void *items, size_t n, size_t size,
		     int (*pred)(void *ctx, const void *items, size_t n), void *ctx)
{
	unsigned char *v = items;
	unsigned char *trial = malloc(n * size + 1);
	if (!trial)
		return n;
	size_t gran = 2;
	while (n >= 2) {
		size_t chunk = (n + gran - 1) / gran;
		int reduced = 0;
		for (size_t start = 0; start < n; start += chunk) {
			size_t end = start + chunk < n ? start + chunk : n;
			/* the complement of [start, end) */
			memcpy(trial, v, start * size);
			memcpy(trial + start * size, v + end * size, (n - end) * size);
			size_t k = n - (end - start);
			if (pred(ctx, trial, k)) {
				memcpy(v, trial, k * size);
				n = k;
				gran = gran > 2 ? gran - 1 : 2;
				reduced = 1;
				break;
			}
		}
		if (reduced)
			continue;
		if (gran >= n)
			break;
		gran = gran * 2 < n ? gran * 2 : n;
	}
	if (n == 1 && pred(ctx, v, 0))
		n = 0;
	free(trial);
	return n;
}

static size_t story_len(const struct explorer *ex, const struct xexec *x);

struct shrink_ctx {
	struct explorer *ex;
	struct xshape sh;
	int inv;
	size_t limit;            /* a candidate's story may not be longer */
	size_t last_len;         /* the story length of the last passing candidate */
	struct xexec tmp;
	unsigned runs;
};

/* Does this candidate fail the same invariant with a story no longer than
 * the best so far? */
static int shrink_pred(void *ctx, const void *items, size_t k)
{
	struct shrink_ctx *c = ctx;
	if (c->runs >= X_SHRINK_MAX || x_interrupted)
		return 0;
	c->runs++;
	if (x_replay(c->ex, &c->sh, items, k, &c->tmp) != 0)
		return 0;
	if (c->tmp.outcome != XO_FAIL || c->tmp.inv != c->inv)
		return 0;
	c->last_len = story_len(c->ex, &c->tmp);
	return c->last_len <= c->limit;
}

/* DEV without worker DROP's deviations, the workers above it renumbered. */
static struct xchoice *without_worker(const struct xchoice *dev, size_t ndev, unsigned drop, size_t *k)
{
	struct xchoice *out = malloc((ndev + 1) * sizeof *out);
	*k = 0;
	if (!out)
		return NULL;
	for (size_t i = 0; i < ndev; i++)
		if (dev[i].w != drop) {
			out[*k] = dev[i];
			out[(*k)++].w -= dev[i].w > drop;
		}
	return out;
}

/* Shrink the failing execution X in place to one that fails the same
 * invariant with a story as short as it can find: each round tries every
 * worker fewer (any of them when all run one protocol, the others
 * renumbered; the last in a mixed fleet) and every worker with one op fewer,
 * and takes the shortest story; when none is shorter, ddmin over the
 * deviations, then the deviations that took effect.  X's journal must be the
 * current one.  Returns replays spent. */
static unsigned shrink(struct explorer *ex, struct xexec *x)
{
	struct shrink_ctx c = { .ex = ex, .sh = x->sh, .inv = x->inv };
	c.limit = story_len(ex, x);
	size_t ndev = x->ndev;
	struct xchoice *dev = malloc((ndev + 1) * sizeof *dev);
	if (!dev)
		return 0;
	memcpy(dev, x->dev, ndev * sizeof *dev);
	for (int pass = 0; pass < 32; pass++) {
		struct xchoice *best = NULL;
		size_t best_n = 0, best_len = SIZE_MAX;
		struct xshape best_sh = c.sh;
		const struct xshape sh0 = c.sh;
		/* cand < n: worker cand out; cand >= n: worker cand-n runs one op fewer */
		for (unsigned cand = 0; cand < 2 * sh0.n; cand++) {
			size_t k = ndev;
			struct xchoice *cd;
			c.sh = sh0;
			if (cand < sh0.n) {
				if (sh0.n < 2 || (ex->cfg->run.nproto > 1 && cand != sh0.n - 1))
					continue;
				cd = without_worker(dev, ndev, cand, &k);
				c.sh.n--;
				for (unsigned i = cand; i < c.sh.n; i++)
					c.sh.ops[i] = sh0.ops[i + 1];
			} else {
				unsigned w = cand - sh0.n;
				if (sh0.ops[w] < 1 + (ex->cfg->run.nproto == 1)) /* 0 ops: the same as out */
					continue;
				c.sh.ops[w]--;
				cd = malloc((ndev + 1) * sizeof *cd);
				if (cd)
					memcpy(cd, dev, ndev * sizeof *cd);
			}
			if (!cd)
				break;
			if (shrink_pred(&c, cd, k) && c.last_len < best_len) {
				free(best);
				best = cd;
				best_n = k;
				best_len = c.last_len;
				best_sh = c.sh;
			} else {
				free(cd);
			}
		}
		c.sh = sh0;
		if (best) {
			free(dev);
			dev = best;
			ndev = best_n;
			c.sh = best_sh;
			c.limit = best_len;
			continue; /* another round from the smaller shape */
		}
		size_t k = explore_ddmin(dev, ndev, sizeof *dev, shrink_pred, &c);
		int changed = k != ndev;
		ndev = k;
		/* local moves: each choice a little earlier or later, or on another worker */
		static const int moves[] = { -1, 1, -2, 2, -4, 4, -8, 8, -16, 16 };
		for (size_t i = 0; i < ndev && c.runs < X_SHRINK_MAX; i++) {
			for (unsigned m = 0; m < sizeof moves / sizeof *moves + c.sh.n; m++) {
				struct xchoice was = dev[i];
				if (m < sizeof moves / sizeof *moves) {
					long at = (long)was.at + moves[m];
					if (at < 0 || (i && at <= (long)dev[i - 1].at) || (i + 1 < ndev && at >= (long)dev[i + 1].at))
						continue;
					dev[i].at = (uint32_t)at;
				} else {
					unsigned w = m - (unsigned)(sizeof moves / sizeof *moves);
					if (w == was.w)
						continue;
					dev[i].w = (uint8_t)w;
				}
				size_t lim = c.limit;
				c.limit = lim - 1; /* strictly shorter */
				if (lim > 0 && shrink_pred(&c, dev, ndev)) {
					changed = 1;
					c.limit = c.last_len;
					m = (unsigned)-1; /* again from this choice's first move */
					continue;
				}
				c.limit = lim;
				dev[i] = was;
			}
		}
		/* canonical form: the deviations that took effect */
		if (shrink_pred(&c, dev, ndev)) {
			changed |= c.last_len < c.limit;
			c.limit = c.last_len;
			free(dev);
			ndev = c.tmp.ndev;
			dev = malloc((ndev + 1) * sizeof *dev);
			if (!dev)
				break;
			memcpy(dev, c.tmp.dev, ndev * sizeof *dev);
		}
		if (!changed)
			break;
	}
	if (dev && x_replay(ex, &c.sh, dev, ndev, &c.tmp) == 0 && c.tmp.outcome == XO_FAIL &&
	    c.tmp.inv == x->inv) {
		xexec_free(x);
		*x = c.tmp;
		memset(&c.tmp, 0, sizeof c.tmp);
	}
	free(dev);
	xexec_free(&c.tmp);
	return c.runs;
}

/* ---- the story ---- */

static const char *rel(const struct explorer *ex, const char *p)
{
	size_t l = strlen(ex->store);
	if (!strncmp(p, ex->store, l) && p[l] == '/')
		return p + l + 1;
	l = strlen(ex->xdir);
	if (!strncmp(p, ex->xdir, l) && p[l] == '/')
		return p + l + 1;
	return p;
}

static int same_path(const char *a, const char *b)
{
	return a[0] && b[0] && !strcmp(a, b);
}

static int in_dir(const char *dir, const char *p)
{
	size_t l = strlen(dir);
	return dir[0] && !strncmp(p, dir, l) && p[l] == '/' && !strchr(p + l + 1, '/');
}

/* Steps that only look: their order among themselves does not matter. */
static int looks_only(const struct xstep *a)
{
	return a->state == SS_SLEEP || a->fsop == FSX_STAT || a->fsop == FSX_LIST || a->fsop == FSX_READ ||
	       a->fsop == FSX_KILL || a->fsop == FSX_SLEEP || a->fsop == FSX_NOW || a->fsop == FSX_POINT;
}

/* Can the earlier step A (of another worker) have changed what the later
 * step B saw or did?  When A changes an object B touches (or a directory B
 * lists).  A read before a write is no such dependency. */
static int affects(const struct xstep *a, const struct xstep *b)
{
	if (a->kind != XK_RUN || b->kind != XK_RUN || looks_only(a))
		return 0;
	if (same_path(a->path, b->path) || same_path(a->path, b->path2) || same_path(a->path2, b->path) ||
	    same_path(a->path2, b->path2))
		return 1;
	if (a->fsop == FSX_LIST && (in_dir(a->path, b->path) || in_dir(a->path, b->path2)))
		return 1;
	return b->fsop == FSX_LIST && (in_dir(b->path, a->path) || in_dir(b->path, a->path2));
}

static long step_of_seq(const struct explorer *ex, const struct xexec *x, uint64_t seq)
{
	const struct journal_mem *m = &ex->s->jmem;
	for (uint32_t r = 0; r < m->n; r++) {
		if (m->rec[r].seq != seq)
			continue;
		for (size_t k = 0; k < x->nstep; k++)
			if (x->step[k].rec_from <= r && r < x->step[k].rec_to)
				return (long)k;
		return -1;
	}
	return -1;
}

/* Mark the steps the violation depends on: the steps that wrote the records
 * its first example names, and everything before them in the same worker or
 * that changed what they touched (happens-before), and every stall and crash. */
static size_t story_slice(const struct explorer *ex, const struct xexec *x, unsigned char *keep)
{
	memset(keep, 0, x->nstep);
	long cut = -1;
	if (x->outcome == XO_FAIL && x->inv >= 0 && x->res.inv[x->inv].nex) {
		const struct check_example *e = &x->res.inv[x->inv].ex[0];
		for (int i = 0; i < 2; i++) {
			long k = e->seq[i] ? step_of_seq(ex, x, e->seq[i]) : -1;
			if (k >= 0) {
				keep[k] = 1;
				if (k > cut)
					cut = k;
			}
		}
		/* judged on the final state: the last step that changed it is evidence too */
		if (x->inv == INV_NO_LOST_WRITES || x->inv == INV_STATE_INTACT || x->inv == INV_JOURNAL_SEQ)
			for (long k = (long)x->nstep - 1; k >= 0; k--) {
				const struct xstep *st = &x->step[k];
				if (st->kind == XK_RUN && !looks_only(st) &&
				    (!strcmp(st->path, ex->state_file) || !strcmp(st->path2, ex->state_file))) {
					keep[k] = 1;
					if (k > cut)
						cut = k;
					break;
				}
			}
	}
	if (cut < 0) { /* nothing to anchor on: the whole execution */
		memset(keep, 1, x->nstep);
		return x->nstep;
	}
	for (long k = cut; k >= 0; k--) {
		if (x->step[k].kind != XK_RUN)
			keep[k] = 1;
		if (!keep[k])
			continue;
		for (long j = k - 1; j >= 0; j--)
			if (x->step[j].w == x->step[k].w || affects(&x->step[j], &x->step[k]))
				keep[j] = 1;
	}
	/* a decision that is no call (the moment after acquiring) says nothing by itself */
	for (long k = 0; k <= cut; k++)
		if (x->step[k].kind == XK_RUN && x->step[k].fsop == FSX_POINT && x->step[k].rec_from == x->step[k].rec_to)
			keep[k] = 0;
	return (size_t)cut + 1;
}

static size_t story_len(const struct explorer *ex, const struct xexec *x)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	if (!keep)
		return x->nstep;
	size_t upto = story_slice(ex, x, keep), n = 0;
	for (size_t k = 0; k < upto; k++)
		n += keep[k];
	free(keep);
	return n;
}

static const char *op_verb(unsigned fsop)
{
	return fsop == FSX_LIST ? "readdir" : fsop == FSX_KILL ? "kill -0" : fsop == FSX_UTIMENS ? "touch"
		: fsx_op_name((enum fsx_op)fsop);
}

/* "w1 rename state.json.2001.tmp -> state.json -> ok" */
static void step_words(const struct explorer *ex, const struct xstep *st, char *buf, size_t len)
{
	if (st->kind == XK_STALL) {
		snprintf(buf, len, "w%u stalls %.3g s (%.3g x its stale age); the clock jumps to %.3f s", st->w,
			 (double)st->ms / 1000.0, ex->cfg->stallv[st->m], (double)(st->now_ns / 1000000 + st->ms) / 1000.0);
		return;
	}
	if (st->kind == XK_PAUSE) {
		snprintf(buf, len, "w%u pauses %.3g s (%.3g x its stale age) while the others go on, until %.3f s", st->w,
			 (double)st->ms / 1000.0, ex->cfg->stallv[st->m], (double)(st->now_ns / 1000000 + st->ms) / 1000.0);
		return;
	}
	if (st->kind == XK_CRASH) {
		if (st->state == SS_STEP && st->fsop < FSX_OP_COUNT)
			snprintf(buf, len, "w%u is killed (SIGKILL) before its %s %s", st->w, op_verb(st->fsop),
				 rel(ex, st->path));
		else
			snprintf(buf, len, "w%u is killed (SIGKILL) while it waits", st->w);
		return;
	}
	if (st->state == SS_SLEEP) {
		snprintf(buf, len, "w%u wakes up at %.3f s", st->w, (double)st->now_ns / 1e9);
		return;
	}
	if (st->state == SS_BLOCKED) {
		snprintf(buf, len, "w%u looks again (its %s found the lock taken)", st->w, op_verb(st->fsop));
		return;
	}
	if (st->fsop == FSX_POINT) {
		if (st->path[0])
			snprintf(buf, len, "w%u reaches %s", st->w, st->path);
		else
			snprintf(buf, len, "w%u goes on with the lock", st->w);
		return;
	}
	if (st->fsop == FSX_OP_COUNT) {
		snprintf(buf, len, "w%u starts", st->w);
		return;
	}
	const char *verb = op_verb(st->fsop);
	char res[48];
	snprintf(res, sizeof res, "%s", st->result < 0 ? errname(st->err) : "ok");
	if (st->fsop == FSX_RENAME)
		snprintf(buf, len, "w%u rename %s -> %s -> %s", st->w, rel(ex, st->path), rel(ex, st->path2), res);
	else if (st->fsop == FSX_LINK)
		snprintf(buf, len, "w%u link %s -> %s -> %s", st->w, rel(ex, st->path2), rel(ex, st->path), res);
	else if (st->path[0])
		snprintf(buf, len, "w%u %s %s -> %s", st->w, verb, rel(ex, st->path), res);
	else
		snprintf(buf, len, "w%u %s -> %s", st->w, verb, res);
}

/* What the step's journal records say, in words ("w1 holds the lock"). */
static void step_events(const struct explorer *ex, const struct xstep *st, int *holding, char *buf, size_t len)
{
	const struct journal_mem *m = &ex->s->jmem;
	size_t n = 0;
	buf[0] = '\0';
#define SAY(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	for (uint32_t r = st->rec_from; r < st->rec_to && r < m->n; r++) {
		const struct jrec *j = &m->rec[r];
		const char *sep = n ? "; " : ": ";
		unsigned w = j->worker;
		switch (j->type) {
		case EV_ACQUIRED:
			if (w < SCHED_MAX_WORKERS)
				holding[w] = 1;
			SAY("%sw%u holds the lock", sep, w);
			break;
		case EV_BUSY:
			SAY("%sgives up (busy)", sep);
			break;
		case EV_ACQUIRE_ERROR:
			SAY("%sacquire fails (%s)", sep, errname(j->err));
			break;
		case EV_READ:
			if (j->err)
				SAY("%sthe read fails (%s)", sep, errname(j->err));
			else if (j->a < 0)
				SAY("%sfinds no state yet", sep);
			else
				SAY("%sreads revision %lld", sep, (long long)j->a);
			break;
		case EV_COMMIT:
			SAY("%scommits revision %lld", sep, (long long)j->a);
			break;
		case EV_LOST:
			SAY("%ssees the lock lost and writes nothing", sep);
			break;
		case EV_WRITE_ERROR:
			SAY("%sthe write fails (%s)", sep, errname(j->err));
			break;
		case EV_RELEASE_BEGIN:
			if (w < SCHED_MAX_WORKERS)
				holding[w] = 0;
			break;
		case EV_RELEASED:
			SAY("%sreleased", sep);
			break;
		case EV_RELEASE_ERROR:
			SAY("%sthe release fails (%s)", sep, errname(j->err));
			break;
		case EV_APPEND:
			SAY("%sappends seq %lld", sep, (long long)j->a);
			break;
		case EV_OBJ_REMOVE: {
			long c = (long)j->b;
			if (c >= 0 && c < SCHED_MAX_WORKERS && (unsigned)c != w) {
				if (holding[c])
					SAY("%sremoves the lock object w%ld made, which w%ld still holds", sep, c, c);
				else
					SAY("%sremoves the lock object w%ld made", sep, c);
			}
			break;
		}
		case EV_KILLED:
			if (j->op < SCHED_MAX_WORKERS)
				holding[j->op] = 0;
			break;
		default:
			break;
		}
	}
#undef SAY
}

/* Print the story of X: the steps the violation depends on, numbered. */
static void story_print(FILE *out, const struct explorer *ex, const struct xexec *x, int full, json_t *lines)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	if (!keep)
		return;
	size_t upto = full ? x->nstep : story_slice(ex, x, keep);
	if (full)
		memset(keep, 1, x->nstep);
	size_t shown = 0;
	for (size_t k = 0; k < upto; k++)
		shown += keep[k];
	int holding[SCHED_MAX_WORKERS] = { 0 };
	if (out) {
		if (shown < x->nstep)
			fprintf(out, "  story: %zu of its %zu steps (the rest do not touch what the violation involves; "
				     "`lockstorm replay FILE --full` shows all):\n", shown, x->nstep);
		else
			fprintf(out, "  story (%zu steps):\n", shown);
	}
	unsigned num = 0;
	for (size_t k = 0; k < upto; k++) {
		char words[512], ev[512];
		step_events(ex, &x->step[k], holding, ev, sizeof ev);
		if (!keep[k])
			continue;
		step_words(ex, &x->step[k], words, sizeof words);
		if (x->step[k].then_sleeps && x->step[k].ms > 0) {
			size_t l = strlen(ev);
			snprintf(ev + l, sizeof ev - l, "%ssleeps %lld ms", l ? "; " : ": ", (long long)x->step[k].ms);
		}
		num++;
		if (out)
			fprintf(out, "  %3u. %s%s\n", num, words, ev);
		if (lines) {
			char line[1100];
			snprintf(line, sizeof line, "%s%s", words, ev);
			json_array_append_new(lines, json_string(line));
		}
	}
	free(keep);
}

static void verdict_print(FILE *out, const struct xexec *x)
{
	if (x->why[0] && x->inv == INV_LIVENESS && !x->res.inv[INV_LIVENESS].violations) {
		fprintf(out, "  violated: liveness - %s\n", x->why);
		return;
	}
	const struct check_inv *ci = &x->res.inv[x->inv];
	fprintf(out, "  violated: %s (%llu)\n", ci->name, (unsigned long long)ci->violations);
	for (unsigned e = 0; e < ci->nex && e < 2; e++)
		fprintf(out, "    - %s\n", ci->ex[e].text);
}

/* All steps, one plain line each: what replay compares. */
static json_t *steps_json(const struct explorer *ex, const struct xexec *x)
{
	json_t *a = json_array();
	for (size_t k = 0; k < x->nstep; k++) {
		char words[512];
		step_words(ex, &x->step[k], words, sizeof words);
		json_array_append_new(a, json_string(words));
	}
	return a;
}

/* A signature of the shrunk failure: invariant + the story's steps. */
static uint64_t failure_sig(const struct explorer *ex, const struct xexec *x)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	uint64_t h = point_hash(check_inv_name((enum inv_id)x->inv));
	if (!keep)
		return h;
	size_t upto = story_slice(ex, x, keep);
	for (size_t k = 0; k < upto; k++) {
		if (!keep[k])
			continue;
		char words[512];
		step_words(ex, &x->step[k], words, sizeof words);
		h = (h ^ point_hash(words)) * 0x100000001b3ULL;
	}
	free(keep);
	return h;
}

/* ---- counterexample files ---- */

static json_t *cex_json(const struct explorer *ex, const struct xexec *x, const char *found_by, uint64_t schedule)
{
	const struct xcfg *cfg = ex->cfg;
	json_t *o = json_object(), *protos = json_array(), *params = json_array(), *ch = json_array();
	for (unsigned i = 0; i < cfg->run.nproto; i++)
		json_array_append_new(protos, json_string(cfg->run.proto[i]->name));
	for (unsigned i = 0; i < cfg->run.nkv; i++)
		json_array_append_new(params, json_string(cfg->run.kv[i]));
	for (size_t i = 0; i < x->ndev; i++) {
		json_t *c = json_pack("{s:i,s:s,s:i}", "at", (json_int_t)x->dev[i].at, "do", kind_names[x->dev[i].kind],
				      "w", (json_int_t)x->dev[i].w);
		if (x->dev[i].kind == XK_STALL || x->dev[i].kind == XK_PAUSE) /* how long: a multiple of the stale age */
			json_object_set_new(c, "stall", json_real(cfg->stallv[x->dev[i].m]));
		json_array_append_new(ch, c);
	}
	json_object_set_new(o, "schema", json_string("lockstorm-cex/1"));
	json_object_set_new(o, "protocols", protos);
	json_object_set_new(o, "workload", json_string(cfg->run.workload->name));
	json_object_set_new(o, "workers", json_integer(x->sh.n));
	int even = 1;
	for (unsigned i = 1; i < x->sh.n; i++)
		even &= x->sh.ops[i] == x->sh.ops[0];
	if (even) {
		json_object_set_new(o, "ops", json_integer(x->sh.ops[0]));
	} else {
		json_t *ops = json_array();
		for (unsigned i = 0; i < x->sh.n; i++)
			json_array_append_new(ops, json_integer(x->sh.ops[i]));
		json_object_set_new(o, "ops", ops);
	}
	json_object_set_new(o, "seed", json_integer((json_int_t)cfg->run.seed));
	json_object_set_new(o, "params", params);
	json_t *sv = json_array();
	for (unsigned i = 0; i < cfg->nstallv; i++)
		json_array_append_new(sv, json_real(cfg->stallv[i]));
	json_object_set_new(o, "stall", sv);
	json_object_set_new(o, "pauses", json_boolean(cfg->pauses));
	json_object_set_new(o, "points", json_boolean(cfg->points));
	json_object_set_new(o, "max_stalls", json_integer(cfg->max_stalls));
	json_object_set_new(o, "max_crashes", json_integer(cfg->max_crashes));
	json_object_set_new(o, "max_steps", json_integer(cfg->max_steps));
	json_object_set_new(o, "choices", ch);
	json_object_set_new(o, "invariant", json_string(x->inv >= 0 ? check_inv_name((enum inv_id)x->inv) : ""));
	json_t *exs = json_array();
	if (x->inv >= 0)
		for (unsigned e = 0; e < x->res.inv[x->inv].nex; e++)
			json_array_append_new(exs, json_string(x->res.inv[x->inv].ex[e].text));
	if (x->why[0])
		json_array_append_new(exs, json_string(x->why));
	json_object_set_new(o, "examples", exs);
	json_t *story = json_array();
	story_print(NULL, ex, x, 0, story);
	json_object_set_new(o, "story", story);
	json_object_set_new(o, "steps", steps_json(ex, x));
	json_object_set_new(o, "found_by", json_pack("{s:s,s:I}", "strategy", found_by, "schedule",
						     (json_int_t)schedule));
	return o;
}

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
	"  -p, --protocol P[,P..]   protocol revision(s) (default mkdir-owner; a list makes a mixed fleet)\n"
	"  -w, --workload W         update (default), hold, append, generation\n"
	"  -n, --workers N          worker processes, 1 to 16 (default 2)\n"
	"      --ops N              operations per worker (default 2)\n"
	"      --param K=V          a protocol or workload parameter (real time: no --time-scale)\n"
	"  -s, --seed S             seed of the search and of the workers' names and tokens (default 1)\n"
	"      --strategy S         random (default) | pct:d=N (PCT, bug depth N, default 3) |\n"
	"                           dfs:preempt=N (every schedule with at most N preemptions)\n"
	"      --schedules N        stop after N schedules (default 20000; dfs: until exhausted)\n"
	"      --time-budget D      stop after D of wall time (default 60s)\n"
	"      --all                go on after a failure; report each distinct one (default: stop)\n"
	"      --max-stalls N       stalls per schedule (default 1)\n"
	"      --max-crashes N      crashes per schedule (default 1)\n"
	"      --stall K[,K..]      a stall moves the clock K x the stale age; several: the strategy\n"
	"                           picks one per stall (default 1.5)\n"
	"      --pauses             a stall may also be a pause: the worker is descheduled while the\n"
	"                           others go on through the times in between (the clock moves with\n"
	"                           their sleeps), instead of the clock jumping for all at once\n"
	"      --points             every protocol point is a decision too, so a stall or a crash can\n"
	"                           land between a step and the decision taken from it (slower)\n"
	"      --max-steps N        steps per schedule before it is cut off (default 2000)\n"
	"      --invariant I[,I..]  look for violations of these only (default: any); e.g.\n"
	"                           no-lost-writes to find a lost write where a double holder comes first\n"
	"      --no-shrink          save failures as found\n"
	"  -o, --out DIR            write counterexamples as DIR/cex-N.json (default ./explore-out,\n"
	"                           made only when something is found)\n"
	"      --json FILE          a summary: schedules, rate, failures, coverage\n"
	"      --dir DIR            where to make the scratch directory (default /dev/shm, else /tmp)\n"
	"      --no-pin             do not pin the explorer and its workers to the CPU it starts on\n"
	"  -q, --quiet              only the verdict and the story\n"
	"  -v, --verbose            every schedule's outcome\n"
	"\n"
	"exit: 0 nothing found, 1 a violation found, 2 bad usage, 3 the harness failed\n";

static const char replay_usage[] =
	"usage: lockstorm replay CEXFILE [--full] [--trace] [-q]\n"
	"\n"
	"Re-run a counterexample saved by `lockstorm explore` with the same steps, print its story\n"
	"and verdict, and say whether the steps are the ones saved.\n"
	"\n"
	"  --full     the story with every step, not only those the violation depends on\n"
	"  --trace    every step as it is granted, with the clock and its result\n"
	"\n"
	"exit: 1 the violation happens (again), 0 it no longer does (e.g. after a fix),\n"
	"      2 bad input, 3 the harness failed\n";

enum { OPT_OPS = 256, OPT_PARAM, OPT_STRATEGY, OPT_SCHEDULES, OPT_BUDGET, OPT_ALL, OPT_MAX_STALLS,
       OPT_MAX_CRASHES, OPT_STALL, OPT_MAX_STEPS, OPT_NO_SHRINK, OPT_JSON, OPT_DIR, OPT_FULL, OPT_TRACE, OPT_INVARIANT, OPT_NO_PIN, OPT_PAUSES, OPT_POINTS };

static int parse_uint(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!s[0] || s[0] == '-')
		return -1;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static void xcfg_defaults(struct xcfg *c)
{
	memset(c, 0, sizeof *c);
	runcfg_defaults(&c->run);
	char why[256];
	runcfg_set_protocols(&c->run, "mkdir-owner", why, sizeof why);
	c->run.workers = 2;
	c->run.time_scale = 1.0;
	c->run.duration_ms = 0;
	c->ops = 2;
	c->strategy = XS_RANDOM;
	c->pct_d = 3;
	c->preempt = 2;
	c->schedules = 20000;
	c->budget_ms = 60000;
	c->max_stalls = 1;
	c->max_crashes = 1;
	c->max_steps = 2000;
	c->stallv[0] = 1.5;
	c->nstallv = 1;
	snprintf(c->outdir, sizeof c->outdir, "explore-out");
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
	} else if (!strcmp(s, "dfs")) {
		c->strategy = XS_DFS;
	} else if (!strncmp(s, "dfs:preempt=", 12)) {
		if (parse_uint(s + 12, 0, 100, &v))
			return runcfg_fail(why, len, "--strategy %s: want dfs:preempt=N with N from 0 to 100", s);
		c->strategy = XS_DFS;
		c->preempt = (unsigned)v;
	} else {
		return runcfg_fail(why, len, "--strategy %s: want random, pct:d=N or dfs:preempt=N", s);
	}
	return 0;
}

/* The explorer schedules fsx steps: an adapter process makes none. */
static int builtin_only(const struct run_config *r, char *why, size_t len)
{
	for (unsigned i = 0; i < r->nproto; i++)
		if (r->proto[i]->flags & LOCK_EXTERNAL)
			return runcfg_fail(why, len, "%s: explore schedules the built-in protocols' steps; an external "
				     "adapter runs under `lockstorm run` only", r->proto[i]->name);
	return 0;
}

/* "no-lost-writes,zombie-write" -> a bit per invariant */
static int parse_invariants(const char *list, unsigned *want, char *why, size_t len)
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
		char *end;
		errno = 0;
		double f = strtod(t, &end);
		if (errno || *end || !(f > 0) || f > 1000 || c->nstallv == X_MAX_STALLV)
			return runcfg_fail(why, len, "--stall %s: want up to %d multiples of the stale age > 0 (e.g. 1.5 or "
				     "0.5,1.5)", list, X_MAX_STALLV);
		c->stallv[c->nstallv++] = f;
	}
	return c->nstallv ? 0 : runcfg_fail(why, len, "--stall needs a multiple of the stale age");
}

/* 0 ok, 1 --help printed, -1 bad usage (why). */
static int xcfg_parse(struct xcfg *c, int argc, char **argv, char *why, size_t len)
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
		{ "stall", required_argument, NULL, OPT_STALL },
		{ "max-steps", required_argument, NULL, OPT_MAX_STEPS },
		{ "no-shrink", no_argument, NULL, OPT_NO_SHRINK },
		{ "invariant", required_argument, NULL, OPT_INVARIANT },
		{ "no-pin", no_argument, NULL, OPT_NO_PIN },
		{ "pauses", no_argument, NULL, OPT_PAUSES },
		{ "points", no_argument, NULL, OPT_POINTS },
		{ "out", required_argument, NULL, 'o' },
		{ "json", required_argument, NULL, OPT_JSON },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int saw_schedules = 0;
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":p:w:n:s:o:qvh", longopts, NULL)) != -1) {
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
			int64_t ms = runcfg_parse_duration(optarg);
			if (ms <= 0)
				return runcfg_fail(why, len, "--time-budget %s: want a duration like 500ms, 5s or 2m", optarg);
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
		case OPT_DIR:
			if (strlen(optarg) >= sizeof c->dir - 64)
				return runcfg_fail(why, len, "--dir: path too long");
			snprintf(c->dir, sizeof c->dir, "%s", optarg);
			break;
		case 'q':
			c->quiet = 1;
			break;
		case 'v':
			c->verbose = 1;
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
	struct stat st;
	if (c->dir[0] && (stat(c->dir, &st) != 0 || !S_ISDIR(st.st_mode)))
		return runcfg_fail(why, len, "--dir %s: not a directory", c->dir);
	return builtin_only(&c->run, why, len) ? -1 : runcfg_resolve(&c->run, why, len);
}

/* ---- the explorer's own setup ---- */

static int explorer_open(struct explorer *ex, struct xcfg *cfg, char *why, size_t len)
{
	memset(ex, 0, sizeof *ex);
	ex->cfg = cfg;
	ex->self = getpid();
	const char *base = cfg->dir[0] ? cfg->dir : access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	struct stat st;
	if (stat(base, &st) != 0 || !S_ISDIR(st.st_mode))
		return runcfg_fail(why, len, "--dir %s: not a directory", base);
	snprintf(ex->xdir, sizeof ex->xdir, "%s/lockstorm-explore-XXXXXX", base);
	if (!mkdtemp(ex->xdir))
		return runcfg_fail(why, len, "cannot make a scratch directory in %s: %s", base, strerror(errno));
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
	ex->s->yield_points = cfg->points;
	journal_clock_ns = x_clock;
	journal_point_name = point_name;
	journal_open_mem(&ex->ctl_j, &ex->s->jmem, JOURNAL_DRIVER, (int32_t)getpid());
	static struct lock lk;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++) {
		unsigned slot = cfg_proto_slot(&cfg->run, i);
		lock_setup(&lk, cfg->run.proto[slot], ex->state_file, cfg->run.pvals[slot], i, NULL);
		ex->stale_ms[i] = lk.ops->stale_ms(&lk);
		ex->budget_ms[i] = lk.ops->wait_budget_ms(&lk);
		ex->stall_base[i] = driver_fault_stale_ms(&lk);
		ex->proto_of[i] = lk.ops->name;
	}
	return 0;
}

static void explorer_close(struct explorer *ex)
{
	if (ex->s)
		x_kill_all(ex, SCHED_MAX_WORKERS);
	if (ex->xdir[0])
		ls_rm_tree(ex->xdir);
	sched_destroy(ex->s);
	arena_destroy(ex->arena);
	free(ex->pairs);
	journal_clock_ns = NULL;
	if (ex->pinned)
		sched_setaffinity(0, sizeof ex->old_cpus, &ex->old_cpus);
}

/* Coverage: ordered pairs of consecutive steps by different workers, each
 * step named by its call and the last protocol point before it. */
static void cover(struct explorer *ex, const struct xexec *x)
{
	uint64_t prev = 0;
	int prev_w = -1;
	for (size_t k = 0; k < x->nstep; k++) {
		const struct xstep *st = &x->step[k];
		if (st->kind != XK_RUN)
			continue;
		uint64_t label = (st->point ? point_hash(st->point) : 0) * 31 + st->fsop + 1;
		if (prev_w >= 0 && prev_w != st->w) {
			uint64_t h = (prev * 0x100000001b3ULL) ^ label;
			h |= 1;
			size_t i = h % X_PAIRS;
			for (size_t probe = 0; probe < X_PAIRS; probe++, i = (i + 1) % X_PAIRS) {
				if (ex->pairs[i] == h)
					break;
				if (!ex->pairs[i]) {
					ex->pairs[i] = h;
					ex->npairs++;
					break;
				}
			}
		}
		prev = label;
		prev_w = st->w;
	}
}

static int point_hit(const struct explorer *ex, const char *name)
{
	uint64_t h = point_hash(name);
	size_t i = h % SCHED_POINTS;
	for (size_t k = 0; k < SCHED_POINTS; k++, i = (i + 1) % SCHED_POINTS) {
		if (ex->s->points[i] == h)
			return 1;
		if (!ex->s->points[i])
			return 0;
	}
	return 0;
}

/* The points this run's protocols and workload declare: hit and missed. */
static void coverage_lists(const struct explorer *ex, json_t *hit, json_t *missed, unsigned *nhit, unsigned *nall)
{
	const struct run_config *r = &ex->cfg->run;
	*nhit = *nall = 0;
	for (unsigned i = 0; i <= r->nproto; i++) {
		const char *const *p = i < r->nproto ? r->proto[i]->points : r->workload->points;
		int dup = 0;
		for (unsigned j = 0; j < i && i < r->nproto; j++)
			dup |= r->proto[j] == r->proto[i];
		for (; p && *p && !dup; p++) {
			int h = point_hit(ex, *p);
			(*nall)++;
			*nhit += (unsigned)h;
			json_array_append_new(h ? hit : missed, json_string(*p));
		}
	}
}

/* ---- explore ---- */

struct found {
	uint64_t sig;
	char file[PATH_MAX + 32];
	int inv;
	size_t story_steps;
};

static void say_config(const struct xcfg *c)
{
	fprintf(stderr, "lockstorm explore: ");
	for (unsigned i = 0; i < c->run.nproto; i++)
		fprintf(stderr, "%s%s", i ? "," : "", c->run.proto[i]->name);
	fprintf(stderr, " / %s, %u workers x %u ops, strategy ", c->run.workload->name, c->run.workers, c->ops);
	if (c->strategy == XS_RANDOM)
		fprintf(stderr, "random");
	else if (c->strategy == XS_PCT)
		fprintf(stderr, "pct:d=%u", c->pct_d);
	else
		fprintf(stderr, "dfs:preempt=%u", c->preempt);
	fprintf(stderr, ", seed %llu, stalls <= %u (", (unsigned long long)c->run.seed, c->max_stalls);
	for (unsigned i = 0; i < c->nstallv; i++)
		fprintf(stderr, "%s%.3g", i ? " or " : "", c->stallv[i]);
	fprintf(stderr, " x stale), crashes <= %u\n", c->max_crashes);
}

static uint32_t x_mean_decisions(const struct explorer *ex)
{
	return ex->execs ? (uint32_t)((ex->dsum + ex->execs - 1) / ex->execs) : 0;
}

struct strategy {
	struct xrandom rnd;
	struct xpct pct;
	struct xdfs dfs;
};

/* Schedule number K of the search (random and PCT draw from (seed, K)). */
static int run_schedule(struct explorer *ex, const struct xcfg *cfg, struct strategy *st, const struct xshape *sh,
			uint64_t k, struct xexec *x)
{
	if (cfg->strategy == XS_RANDOM) {
		prng_seed(&st->rnd.rng, cfg->run.seed, 0x5eed, k);
		faults_draw(&st->rnd.f, &st->rnd.rng, x_mean_decisions(ex), cfg->max_stalls);
		return x_exec(ex, sh, choose_random, &st->rnd, x);
	}
	if (cfg->strategy == XS_PCT) {
		memset(&st->pct, 0, sizeof st->pct);
		st->pct.d = cfg->pct_d;
		prng_seed(&st->pct.rng, cfg->run.seed, 0x9c7, k);
		pct_begin(&st->pct, sh->n, ex->kest, x_mean_decisions(ex), cfg->max_stalls);
		return x_exec(ex, sh, choose_pct, &st->pct, x);
	}
	return x_exec(ex, sh, choose_dfs, &st->dfs, x);
}

/* A failing schedule kept for shrinking: its shape and deviations. */
struct xcand {
	struct xshape sh;
	struct xchoice *dev;
	size_t ndev, len;
};

#define X_POLISH_KEEP 3

/* Keep the X_POLISH_KEEP failures with the shortest stories (X's journal is current). */
static void cand_offer(struct xcand *c, size_t *nc, const struct explorer *ex, const struct xexec *x)
{
	size_t len = story_len(ex, x);
	size_t at = *nc < X_POLISH_KEEP ? (*nc)++ : X_POLISH_KEEP - 1;
	if (at == X_POLISH_KEEP - 1 && *nc == X_POLISH_KEEP && c[at].dev && c[at].len <= len)
		return;
	free(c[at].dev);
	c[at].sh = x->sh;
	c[at].ndev = x->ndev;
	c[at].len = len;
	c[at].dev = malloc((x->ndev + 1) * sizeof *c[at].dev);
	if (c[at].dev)
		memcpy(c[at].dev, x->dev, x->ndev * sizeof *c[at].dev);
	for (size_t i = at; i > 0 && c[i].len < c[i - 1].len; i--) {
		struct xcand t = c[i];
		c[i] = c[i - 1];
		c[i - 1] = t;
	}
}

int explore_main(int argc, char **argv)
{
	static struct xcfg cfg;
	char why[1024];
	xcfg_defaults(&cfg);
	int r = xcfg_parse(&cfg, argc, argv, why, sizeof why);
	if (r == 1)
		return 0;
	if (r != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		return 2;
	}
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		explorer_close(&ex);
		return 3;
	}
	const unsigned n = cfg.run.workers, ops = cfg.ops;
	const struct xshape sh0 = shape_even(n, ops);
	struct sigaction sa, old_int, old_term;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_interrupt;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	if (!cfg.quiet)
		say_config(&cfg);

	struct xexec x = { 0 };
	struct strategy st = { .dfs = { NULL, 0, 0, cfg.preempt, 0 } };
	struct xdfs *const dfsp = &st.dfs;
	struct found *found = NULL;
	size_t nfound = 0, failures = 0;
	uint64_t bounded = 0;
	int rc = 0, exhausted = 0;
	double pct_bound = 0;
	int tty = isatty(STDERR_FILENO) && !cfg.quiet;
	int64_t t0 = mono_ms(), last_status = t0, shrink_ms = 0;
	unsigned shrink_runs = 0;
	uint64_t sched_no = 0;
	for (;;) {
		if (x_interrupted || (cfg.schedules && sched_no >= cfg.schedules) || mono_ms() - t0 >= cfg.budget_ms)
			break;
		int er = run_schedule(&ex, &cfg, &st, &sh0, sched_no, &x);
		sched_no++;
		if (er != 0) {
			fprintf(stderr, "lockstorm: explore: schedule %llu: %s\n", (unsigned long long)sched_no, x.why);
			rc = 3;
			break;
		}
		cover(&ex, &x);
		bounded += x.outcome == XO_BOUND;
		if (cfg.verbose)
			fprintf(stderr, "schedule %llu: %zu steps, %s\n", (unsigned long long)sched_no, x.nstep,
				x.outcome == XO_FAIL ? check_inv_name((enum inv_id)x.inv)
				: x.outcome == XO_BOUND ? "cut at the step bound" : "pass");
		if (x.outcome == XO_FAIL) {
			failures++;
			int64_t found_at = mono_ms();
			const uint64_t found_sched = sched_no;
			if (!cfg.quiet)
				fprintf(stderr, "%sfound %s in schedule %llu after %.2f s%s\n", tty ? "\r\033[K" : "",
					check_inv_name((enum inv_id)x.inv), (unsigned long long)sched_no,
					(double)(found_at - t0) / 1000.0, cfg.no_shrink ? "" : "; shrinking");
			struct xexec keep = { 0 };
			unsigned runs = 0;
			if (cfg.no_shrink || cfg.strategy == XS_DFS || cfg.all) {
				/* the DFS stack must survive: shrink a copy */
				x_replay(&ex, &x.sh, x.dev, x.ndev, &keep);
				runs = cfg.no_shrink ? 0 : shrink(&ex, &keep);
			} else {
				/* a little more search for the same failure with a shorter
				 * story, then shrink the shortest few and keep the best */
				struct xcand cand[X_POLISH_KEEP] = { { .dev = NULL } };
				size_t nc = 0;
				cand_offer(cand, &nc, &ex, &x);
				int inv = x.inv;
				uint64_t extra = sched_no < 100 ? 100 : sched_no > 1000 ? 1000 : sched_no;
				for (uint64_t e = 0; e < extra && !x_interrupted && mono_ms() - t0 < cfg.budget_ms &&
						     (!cfg.schedules || sched_no < cfg.schedules); e++) {
					if (run_schedule(&ex, &cfg, &st, &sh0, sched_no++, &x) == 0 &&
					    x.outcome == XO_FAIL && x.inv == inv)
						cand_offer(cand, &nc, &ex, &x);
				}
				found_at = mono_ms(); /* the search went on until here; shrinking starts */
				size_t best_len = SIZE_MAX;
				for (size_t i = 0; i < nc; i++) {
					struct xexec t = { 0 };
					if (!cand[i].dev || x_replay(&ex, &cand[i].sh, cand[i].dev, cand[i].ndev, &t) != 0 ||
					    t.outcome != XO_FAIL || t.inv != inv) {
						xexec_free(&t);
						continue;
					}
					runs += 1 + shrink(&ex, &t);
					x_rerun(&ex, &t);
					size_t len = story_len(&ex, &t);
					if (len < best_len) {
						best_len = len;
						xexec_free(&keep);
						keep = t;
					} else {
						xexec_free(&t);
					}
				}
				for (size_t i = 0; i < nc; i++)
					free(cand[i].dev);
			}
			struct xexec *fx = &keep;
			shrink_runs += runs;
			if (!fx->sh.n) { /* cannot happen: the failure replays */
				fprintf(stderr, "lockstorm: explore: the failure of schedule %llu did not replay\n",
					(unsigned long long)found_sched);
				rc = 3;
				break;
			}
			/* the journal in the mapping is the last replay's: make it this one's */
			x_rerun(&ex, fx);
			shrink_ms += mono_ms() - found_at;
			uint64_t sig = failure_sig(&ex, fx);
			int dup = 0;
			for (size_t i = 0; i < nfound; i++)
				dup |= found[i].sig == sig;
			if (!dup) {
				struct found *g = realloc(found, (nfound + 1) * sizeof *g);
				if (g) {
					found = g;
					struct found *f = &found[nfound++];
					memset(f, 0, sizeof *f);
					f->sig = sig;
					f->inv = fx->inv;
					if (!cfg.no_shrink && !cfg.quiet) {
						char ops[128];
						shape_ops(&fx->sh, ops, sizeof ops);
						fprintf(stderr, "shrunk to %u workers x %s ops, %zu choices (%u replays)\n",
							fx->sh.n, ops, fx->ndev, runs);
					}
					printf("failure %zu: %s\n", nfound, check_inv_name((enum inv_id)fx->inv));
					story_print(stdout, &ex, fx, 0, NULL);
					verdict_print(stdout, fx);
					snprintf(f->file, sizeof f->file, "%s/cex-%zu.json", cfg.outdir, nfound);
					json_t *cj = cex_json(&ex, fx, cfg.strategy == XS_RANDOM ? "random"
							      : cfg.strategy == XS_PCT ? "pct" : "dfs", found_sched);
					if (fsx_mkdir_p(cfg.outdir) != 0 || /* the controller is unbound: plain calls */ json_dump_file(cj, f->file, JSON_INDENT(1)) != 0) {
						fprintf(stderr, "lockstorm: cannot write %s: %s\n", f->file, strerror(errno));
						f->file[0] = '\0';
					} else {
						printf("  saved: %s (replay: lockstorm replay %s)\n", f->file, f->file);
					}
					f->story_steps = json_array_size(json_object_get(cj, "story"));
					json_decref(cj);
				}
			}
			xexec_free(&keep);
			rc = 1;
			if (!cfg.all)
				break;
		}
		if (cfg.strategy == XS_DFS && !dfs_next(dfsp, x.decisions)) {
			exhausted = 1;
			break;
		}
		if (tty && mono_ms() - last_status >= 500) {
			double el = (double)(mono_ms() - t0) / 1000.0;
			fprintf(stderr, "\r\033[Kexplore: %llu schedules, %.0f/s, %zu failures, %zu distinct",
				(unsigned long long)sched_no, (double)sched_no / el, failures, nfound);
			last_status = mono_ms();
		}
	}
	if (tty)
		fprintf(stderr, "\r\033[K");
	double elapsed = (double)(mono_ms() - t0) / 1000.0;
	double search_s = (double)(mono_ms() - t0 - shrink_ms) / 1000.0;
	double rate = search_s > 0 ? (double)sched_no / search_s : 0;
	json_t *hit = json_array(), *missed = json_array();
	unsigned nhit = 0, nall = 0;
	coverage_lists(&ex, hit, missed, &nhit, &nall);
	if (cfg.strategy == XS_PCT && ex.kest)
		pct_bound = 1.0 / ((double)n * pow((double)ex.kest, (double)cfg.pct_d - 1));
	if (rc != 3) {
		printf("explored %llu schedules (%llu steps) in %.2f s: %.0f schedules/s%s\n", (unsigned long long)sched_no,
		       (unsigned long long)ex.steps, elapsed, rate, shrink_runs ? " (shrinking not counted)" : "");
		if (cfg.strategy == XS_PCT)
			printf("pct d=%u: each schedule finds a bug of depth <= %u with probability >= 1/(n*k^(d-1)) = "
			       "%.3g (n = %u workers, k = %u steps)\n", cfg.pct_d, cfg.pct_d, pct_bound, n, ex.kest);
		if (cfg.strategy == XS_DFS)
			printf("dfs preempt <= %u: bounded space %s after %llu schedules%s\n", cfg.preempt,
			       exhausted ? "exhausted" : "NOT exhausted", (unsigned long long)sched_no,
			       exhausted ? "" : rc == 1 && !cfg.all ? " (stopped at the first failure)"
			       : " (schedule or time budget spent)");
		if (dfsp->mismatch)
			printf("warning: %llu replays of a prefix saw other options (nondeterminism)\n",
			       (unsigned long long)dfsp->mismatch);
		if (bounded)
			printf("%llu schedules cut at the step bound (--max-steps %u)\n", (unsigned long long)bounded,
			       cfg.max_steps);
		printf("coverage: %u of %u points", nhit, nall);
		if (json_array_size(missed)) {
			printf(" (not hit:");
			for (size_t i = 0; i < json_array_size(missed) && i < 6; i++)
				printf(" %s", json_string_value(json_array_get(missed, i)));
			if (json_array_size(missed) > 6)
				printf(" ...");
			printf(")");
		}
		printf(", %zu ordered step pairs across workers\n", ex.npairs);
		printf("verdict: %s\n", rc == 1 ? "FAIL" : "pass (nothing found)");
	}
	if (cfg.json[0]) {
		json_t *fl = json_array();
		for (size_t i = 0; i < nfound; i++)
			json_array_append_new(fl, json_pack("{s:s,s:s,s:I}", "invariant",
							    check_inv_name((enum inv_id)found[i].inv), "file", found[i].file,
							    "story_steps", (json_int_t)found[i].story_steps));
		json_t *o = json_pack("{s:s,s:s,s:i,s:i,s:I,s:I,s:I,s:f,s:f,s:b,s:I,s:o,s:{s:i,s:i,s:o,s:o,s:I},s:s}",
				      "schema", "lockstorm-explore/1",
				      "strategy", cfg.strategy == XS_RANDOM ? "random" : cfg.strategy == XS_PCT ? "pct" : "dfs",
				      "workers", n, "ops", ops, "seed", (json_int_t)cfg.run.seed,
				      "schedules", (json_int_t)sched_no, "steps", (json_int_t)ex.steps,
				      "elapsed_s", elapsed, "schedules_per_s", rate, "exhausted", exhausted,
				      "failures", (json_int_t)failures, "distinct", fl,
				      "coverage", "points_hit", nhit, "points", nall, "hit", hit, "missed", missed,
				      "step_pairs", (json_int_t)ex.npairs,
				      "verdict", rc == 1 ? "fail" : rc == 0 ? "pass" : "error");
		hit = missed = NULL;
		if (cfg.strategy == XS_PCT)
			json_object_set_new(o, "pct_probability_bound", json_real(pct_bound));
		if (json_dump_file(o, cfg.json, JSON_INDENT(1)) != 0) {
			fprintf(stderr, "lockstorm: cannot write %s\n", cfg.json);
			if (rc == 0)
				rc = 3;
		}
		json_decref(o);
	}
	json_decref(hit);
	json_decref(missed);
	if (x_interrupted)
		fprintf(stderr, "lockstorm: interrupted\n");
	free(found);
	free(dfsp->node);
	xexec_free(&x);
	explorer_close(&ex);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	return rc;
}

/* ---- replay ---- */

static int cex_load(const char *path, struct xcfg *cfg, struct xchoice **dev, size_t *ndev, json_t **root,
		    char *why, size_t len)
{
	json_error_t jerr;
	json_t *o = json_load_file(path, 0, &jerr);
	if (!o)
		return runcfg_fail(why, len, "%s: %s (line %d)", path, jerr.text, jerr.line);
	*root = o;
	const char *schema = json_string_value(json_object_get(o, "schema"));
	if (!schema || strcmp(schema, "lockstorm-cex/1"))
		return runcfg_fail(why, len, "%s: not a lockstorm counterexample (schema lockstorm-cex/1)", path);
	json_t *protos = json_object_get(o, "protocols");
	if (!json_is_array(protos) || !json_array_size(protos))
		return runcfg_fail(why, len, "%s: no protocols", path);
	char list[512] = "";
	size_t ln = 0;
	for (size_t i = 0; i < json_array_size(protos); i++) {
		const char *p = json_string_value(json_array_get(protos, i));
		if (!p)
			return runcfg_fail(why, len, "%s: protocols: want names", path);
		ln += (size_t)snprintf(list + ln, ln < sizeof list ? sizeof list - ln : 0, "%s%s", i ? "," : "", p);
	}
	if (runcfg_set_protocols(&cfg->run, list, why, len) || builtin_only(&cfg->run, why, len))
		return -1;
	const char *wl = json_string_value(json_object_get(o, "workload"));
	if (!wl || runcfg_set_workload(&cfg->run, wl, why, len))
		return wl ? -1 : runcfg_fail(why, len, "%s: no workload", path);
	json_int_t n = json_integer_value(json_object_get(o, "workers"));
	json_t *jops = json_object_get(o, "ops");
	if (n < 1 || n > SCHED_MAX_WORKERS || !(json_is_integer(jops) || json_array_size(jops) == (size_t)n))
		return runcfg_fail(why, len, "%s: workers (1-%d) and ops (a number, or one per worker) are required", path,
			     SCHED_MAX_WORKERS);
	cfg->run.workers = (unsigned)n;
	cfg->replay_sh.n = (unsigned)n;
	for (json_int_t i = 0; i < n; i++) {
		json_int_t v = json_integer_value(json_is_integer(jops) ? jops : json_array_get(jops, (size_t)i));
		if (v < 0 || v > 1000)
			return runcfg_fail(why, len, "%s: ops: want 0 to 1000 per worker", path);
		cfg->replay_sh.ops[i] = (unsigned)v;
	}
	cfg->ops = cfg->replay_sh.ops[0];
	cfg->run.seed = (uint64_t)json_integer_value(json_object_get(o, "seed"));
	json_t *params = json_object_get(o, "params");
	static char kvbuf[CFG_MAX_KV][256];
	for (size_t i = 0; json_is_array(params) && i < json_array_size(params) && i < CFG_MAX_KV; i++) {
		const char *kv = json_string_value(json_array_get(params, i));
		if (!kv)
			return runcfg_fail(why, len, "%s: params: want K=V strings", path);
		snprintf(kvbuf[i], sizeof kvbuf[i], "%s", kv);
		cfg->run.kv[cfg->run.nkv++] = kvbuf[i];
	}
	cfg->pauses = json_is_true(json_object_get(o, "pauses"));
	cfg->points = json_is_true(json_object_get(o, "points"));
	json_t *jst = json_object_get(o, "stall");
	if (json_is_number(jst)) {
		cfg->stallv[0] = json_number_value(jst);
		cfg->nstallv = 1;
	} else if (json_is_array(jst) && json_array_size(jst) >= 1 && json_array_size(jst) <= X_MAX_STALLV) {
		cfg->nstallv = (unsigned)json_array_size(jst);
		for (unsigned i = 0; i < cfg->nstallv; i++)
			cfg->stallv[i] = json_number_value(json_array_get(jst, i));
	}
	if (json_is_integer(json_object_get(o, "max_stalls")))
		cfg->max_stalls = (unsigned)json_integer_value(json_object_get(o, "max_stalls"));
	if (json_is_integer(json_object_get(o, "max_crashes")))
		cfg->max_crashes = (unsigned)json_integer_value(json_object_get(o, "max_crashes"));
	if (json_is_integer(json_object_get(o, "max_steps")))
		cfg->max_steps = (unsigned)json_integer_value(json_object_get(o, "max_steps"));
	for (unsigned i = 0; i < cfg->nstallv; i++)
		if (!(cfg->stallv[i] > 0))
			return runcfg_fail(why, len, "%s: bad stall multiple", path);
	if (cfg->max_steps < 10)
		return runcfg_fail(why, len, "%s: bad max_steps", path);
	const char *inv = json_string_value(json_object_get(o, "invariant"));
	if (inv && inv[0] && parse_invariants(inv, &cfg->want, why, len))
		return -1;
	json_t *ch = json_object_get(o, "choices");
	if (!json_is_array(ch))
		return runcfg_fail(why, len, "%s: no choices", path);
	*ndev = json_array_size(ch);
	*dev = calloc(*ndev + 1, sizeof **dev);
	if (!*dev)
		return runcfg_fail(why, len, "out of memory");
	for (size_t i = 0; i < *ndev; i++) {
		json_t *c = json_array_get(ch, i);
		const char *k = json_string_value(json_object_get(c, "do"));
		json_int_t at = json_integer_value(json_object_get(c, "at"));
		json_int_t w = json_integer_value(json_object_get(c, "w"));
		int kind = -1;
		for (int j = 0; k && j < 4; j++)
			if (!strcmp(k, kind_names[j]))
				kind = j;
		if (kind < 0 || at < 0 || w < 0 || w >= n || (i && at <= (json_int_t)(*dev)[i - 1].at))
			return runcfg_fail(why, len, "%s: choice %zu: want {\"at\": increasing N, \"do\": run|stall|pause|crash, "
				     "\"w\": a worker}", path, i + 1);
		unsigned m = 0;
		if ((kind == XK_STALL || kind == XK_PAUSE) && json_is_number(json_object_get(c, "stall"))) {
			double v = json_number_value(json_object_get(c, "stall"));
			for (m = 0; m < cfg->nstallv && fabs(cfg->stallv[m] - v) > 1e-9; m++)
				;
			if (m == cfg->nstallv)
				return runcfg_fail(why, len, "%s: choice %zu stalls %g x stale, not one of the file's \"stall\"",
					     path, i + 1, v);
		}
		(*dev)[i] = (struct xchoice){ (uint32_t)at, (uint8_t)kind, (uint8_t)w, (uint8_t)m };
	}
	return runcfg_resolve(&cfg->run, why, len);
}

int replay_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "full", no_argument, NULL, OPT_FULL },
		{ "trace", no_argument, NULL, OPT_TRACE },
		{ "quiet", no_argument, NULL, 'q' },
		{ "dir", required_argument, NULL, OPT_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int full = 0, trace = 0, quiet = 0;
	static struct xcfg cfg;
	xcfg_defaults(&cfg);
	optind = 1;
	opterr = 0;
	int ch;
	while ((ch = getopt_long(argc, argv, ":qh", longopts, NULL)) != -1) {
		switch (ch) {
		case OPT_FULL:
			full = 1;
			break;
		case OPT_TRACE:
			trace = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case OPT_DIR:
			snprintf(cfg.dir, sizeof cfg.dir, "%s", optarg);
			break;
		case 'h':
			fputs(replay_usage, stdout);
			return 0;
		case ':':
			fprintf(stderr, "lockstorm: option %s needs a value\n", argv[optind - 1]);
			return 2;
		default:
			fprintf(stderr, "lockstorm: unknown option '%s' (see lockstorm replay --help)\n", argv[optind - 1]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "lockstorm: replay wants one counterexample file (see lockstorm replay --help)\n");
		return 2;
	}
	const char *path = argv[optind];
	char why[1024];
	struct stat dst;
	if (cfg.dir[0] && (stat(cfg.dir, &dst) != 0 || !S_ISDIR(dst.st_mode))) {
		fprintf(stderr, "lockstorm: --dir %s: not a directory\n", cfg.dir);
		return 2;
	}
	struct xchoice *dev = NULL;
	size_t ndev = 0;
	json_t *root = NULL;
	if (cex_load(path, &cfg, &dev, &ndev, &root, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		free(dev);
		json_decref(root);
		return 2;
	}
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, sizeof why) != 0) {
		fprintf(stderr, "lockstorm: %s\n", why);
		explorer_close(&ex);
		free(dev);
		json_decref(root);
		return 3;
	}
	struct xexec x = { 0 };
	int rc;
	if (x_replay(&ex, &cfg.replay_sh, dev, ndev, &x) != 0) {
		fprintf(stderr, "lockstorm: replay: %s\n", x.why);
		rc = 3;
		goto out;
	}
	if (trace)
		for (size_t k = 0; k < x.nstep; k++) {
			char words[512];
			step_words(&ex, &x.step[k], words, sizeof words);
			printf("  [%10.6f s] %4zu  %s%s%s\n", (double)x.step[k].now_ns / 1e9, k + 1, words,
			       x.step[k].point ? "   after " : "", x.step[k].point ? x.step[k].point : "");
		}
	/* the same steps as saved? */
	json_t *saved = json_object_get(root, "steps");
	json_t *now = steps_json(&ex, &x);
	size_t diverge = SIZE_MAX;
	if (json_is_array(saved)) {
		size_t a = json_array_size(saved), b = json_array_size(now);
		for (size_t k = 0; k < (a > b ? a : b) && diverge == SIZE_MAX; k++) {
			const char *s1 = k < a ? json_string_value(json_array_get(saved, k)) : NULL;
			const char *s2 = k < b ? json_string_value(json_array_get(now, k)) : NULL;
			if (!s1 || !s2 || strcmp(s1, s2))
				diverge = k;
		}
	}
	const char *want = json_string_value(json_object_get(root, "invariant"));
	int fails = x.outcome == XO_FAIL;
	if (!quiet || fails) {
		char ops[128];
		shape_ops(&cfg.replay_sh, ops, sizeof ops);
		printf("replay %s: %s / %s, %u workers x %s ops, %zu choices\n", path, cfg.run.proto[0]->name,
		       cfg.run.workload->name, cfg.run.workers, ops, ndev);
		if (fails) {
			story_print(stdout, &ex, &x, full, NULL);
			verdict_print(stdout, &x);
		}
	}
	if (!json_is_array(saved))
		printf("steps: the file has none to compare\n");
	else if (diverge == SIZE_MAX)
		printf("steps: the same %zu steps as saved\n", json_array_size(now));
	else
		printf("steps: differ from the saved ones at step %zu (saved: %s; now: %s)\n", diverge + 1,
		       diverge < json_array_size(saved) ? json_string_value(json_array_get(saved, diverge)) : "(end)",
		       diverge < json_array_size(now) ? json_string_value(json_array_get(now, diverge)) : "(end)");
	json_decref(now);
	if (fails) {
		const char *got = check_inv_name((enum inv_id)x.inv);
		printf("verdict: FAIL (%s)%s\n", got, want && strcmp(want, got) ? " - the file was saved with another "
		       "invariant" : "");
		rc = 1;
	} else {
		printf("verdict: pass - the violation (%s) no longer happens\n", want ? want : "?");
		rc = 0;
	}
out:
	xexec_free(&x);
	explorer_close(&ex);
	free(dev);
	json_decref(root);
	return rc;
}

/* ---- scripted executions (tests) ---- */

int explore_script(const struct explore_script *sc, char ***lines, size_t *n, char *why, size_t len)
{
	*lines = NULL;
	*n = 0;
	if (!sc->workers || sc->workers > SCHED_MAX_WORKERS || !sc->body)
		return runcfg_fail(why, len, "explore_script: 1 to %d workers and a body", SCHED_MAX_WORKERS);
	static struct xcfg cfg;
	xcfg_defaults(&cfg);
	char w[256];
	if (runcfg_set_protocols(&cfg.run, "none", w, sizeof w) || runcfg_resolve(&cfg.run, w, sizeof w))
		return runcfg_fail(why, len, "%s", w);
	cfg.run.workers = sc->workers;
	cfg.stallv[0] = sc->stall > 0 ? sc->stall : 1.5;
	cfg.nstallv = 1;
	cfg.pauses = 1;
	cfg.max_stalls = cfg.max_crashes = 16;
	static struct explorer ex;
	if (explorer_open(&ex, &cfg, why, len) != 0) {
		explorer_close(&ex);
		return -1;
	}
	ex.body = sc->body;
	ex.body_arg = sc->arg;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		ex.stall_base[i] = sc->stale_ms > 0 ? sc->stale_ms : 10000;
	struct xexec x = { 0 };
	const struct xshape sh = shape_even(sc->workers, 1);
	int rc = x_replay(&ex, &sh, sc->choices, sc->nchoices, &x);
	if (rc != 0) {
		snprintf(why, len, "%s", x.why);
	} else if (!(*lines = calloc(x.nstep + 1, sizeof **lines))) {
		rc = runcfg_fail(why, len, "out of memory");
	} else {
		for (size_t k = 0; k < x.nstep; k++) {
			char words[512];
			step_words(&ex, &x.step[k], words, sizeof words);
			(*lines)[k] = strdup(words);
		}
		*n = x.nstep;
	}
	xexec_free(&x);
	explorer_close(&ex);
	return rc;
}

void explore_lines_free(char **lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(lines);
}
