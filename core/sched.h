/*
 * sched.h - the explorer's step scheduler across worker processes.
 *
 * In explore mode every fsx call of a worker is a yield point: the worker
 * announces the step it is about to take (call, path, the last protocol
 * point it passed) in its slot of a shared mapping and waits on a futex for
 * a grant.  The controller (the explorer process) waits until no worker is
 * running, picks one, grants it, and waits again: exactly one worker takes
 * one step at a time, so the order of file-system steps across workers is
 * the controller's choice and nothing else's.
 *
 * Time is virtual.  sched_now_ns is a shared clock the controller moves:
 * +1 us per granted step, to the next wake-up when every worker sleeps, and
 * by a chosen multiple of the stale age when it stalls a worker.  A worker's
 * sleep is a step it cannot take before the clock reaches its wake time.
 *
 * Worker side (called by fsx once fsx_bind saw a binding with .sched):
 *   sched_step(op, path, path2)  announce and wait for the grant
 *   sched_result(r, err)         what the granted step returned (story)
 *   sched_sleep(ms)              wait until the virtual clock passes now+ms
 *   sched_block()                a step found its object busy (flock): wait
 *                                until another worker's step may have let it
 *                                go (an unlock, a close, a kill, an end, a death)
 *   sched_may_release()          this step may let a lock go (a flock unlock
 *                                or shared lock; sched_step counts a close)
 *   sched_point(name)            coverage; the label of the next step
 *   sched_finish()               this execution's work is done: wait until
 *                                the controller starts the next one
 * Controller side: sched_create, sched_reset, sched_wait_quiet, sched_grant.
 *
 * Worker processes outlive an execution: one that finished its operations
 * waits in sched_finish (SS_DONE) and is started again for the next one (a
 * fork and an exit cost more than a whole execution); one that was killed
 * is replaced by a fresh fork.  Everything an execution needs is set up
 * again at its start, so a reused process and a fresh one behave the same.
 */
#ifndef LS_SCHED_H
#define LS_SCHED_H

#include <setjmp.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
#define _Atomic
#else
#include <stdatomic.h>
#endif

#include "journal.h"
#include "prng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SCHED_MAX_WORKERS 16
#define SCHED_PATH 160
#define SCHED_POINTS 1024      /* coverage: distinct points one exploration can tell apart */
#define SCHED_VPID_BASE 2000   /* worker i is pid SCHED_VPID_BASE + i to the protocols */
#define SCHED_EPOCH_MS 1767225600000LL /* virtual 0 is 2026-01-01T00:00:00Z */

enum sched_state {
	SS_IDLE,      /* not started, or between grant and its first yield: running */
	SS_RUNNING,   /* granted: runs until its next yield */
	SS_STEP,      /* announced a step, waits for the grant */
	SS_SLEEP,     /* waits for the clock to reach wake_ns */
	SS_BLOCKED,   /* waits for any other worker's step or the clock */
	SS_DONE,      /* finished this execution (or was killed: pid 0); waits for the next */
};

/* A fault the controller chose for a granted step (explore's fault choices,
 * explore/engine.c): the worker applies it through the seam's own code
 * (faults/fsx_fault.c, fsx_xf_apply). */
enum sched_xf_kind {
	SXF_NONE,
	SXF_ERRNO,     /* the call fails with err without acting */
	SXF_SHORT,     /* a write: `bytes` bytes land, then err (ENOSPC) */
	SXF_SPLIT,     /* a write: `bytes` bytes land, then the rest as a step of its own */
	SXF_PID_ALIVE, /* kill -0 of a dead pid says alive (pid reuse) */
	SXF_PID_DEAD,  /* kill -0 of a live pid says ESRCH (another pid namespace) */
};
struct sched_xf {
	uint8_t kind;                /* enum sched_xf_kind */
	int32_t err;
	int64_t bytes;
};

struct sched_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t grant;      /* futex the worker waits on: +1 per grant */
	_Atomic uint32_t asleep;     /* the worker sleeps on grant: the grant must wake it */
	int32_t pid;                 /* real pid */
	uint32_t op_no;              /* the worker's op number at its yield */
	uint16_t fsop;               /* enum fsx_op of the announced step */
	uint16_t started;            /* explore: it has been granted a step in this execution */
	int32_t result, err;         /* the last granted step's outcome */
	int64_t wake_ns;             /* SS_SLEEP */
	const char *point;           /* last fsx_point passed (a literal: same address everywhere) */
	char path[SCHED_PATH];
	char path2[SCHED_PATH];
	struct sched_xf xf;          /* set before a grant: the fault the granted step suffers */
	int64_t skew_ms;             /* from a skew choice on: the worker's clock reads this far off */
	int64_t coarse_ms;           /* from a coarse-mtime choice on: its stat's times in these steps */
	uint8_t other_host;          /* from an other-host choice on: it plays a second machine */
	uint8_t restarts;            /* its restarts (power loss, a restart choice): a new process each */
	uint8_t boot;                /* power losses so far: a restarted worker is a new process, */
	uint32_t op_base;            /* with new pids (sched_vpid) and op numbers from op_base on */
	uint8_t die;                 /* the next grant is its death (sched_kill) */
	uint8_t fds_untracked;       /* its process opened a descriptor the seam does not keep
				      * (sched_fd_untracked): a crash must end that process */
} __attribute__((aligned(64)));

/*
 * The hand-off at the floor: decisions a worker takes itself.
 *
 * When the strategy's next decisions up to `limit` are a function of what
 * every worker's slot shows (the default: keep running the worker that ran
 * last; random: a worker uniformly among those that can run, from the
 * strategy's own PRNG stream; guided's tail), the controller hands them to
 * the workers (sched_ahead_set before its grant).  A worker that reaches its
 * next yield then decides as the controller would, from the same slots, the
 * same enabled rule and the same PRNG draws: it goes on at once when it is
 * the one picked (no switch) or grants the one picked and sleeps (one
 * switch), and writes each decision in `step` for the controller to take in
 * (sched_ahead_take) when it wakes: at `limit`, at the step bound, when
 * nobody can ever run again, when the journal or the log is full.  When
 * every live worker waits for the clock (sleeps, pauses), the worker moves
 * it to the earliest wake-up, as the controller would, and decides then:
 * a worker polling a crashed holder's lock costs no switch per poll.  The controller sees
 * the same decisions, steps and deviations it would have made itself, so a
 * seed gives the same schedules and a counterexample the same steps either
 * way (LOCKSTORM_NO_HANDOFF=1 turns it off, for the test that proves it).
 */
#define SCHED_AHEAD 1024 /* decisions workers take between two wake-ups of the controller */
enum sched_ahead_mode {
	SA_OFF,     /* every decision is the controller's */
	SA_DEFAULT, /* the default: the worker that ran last, else the lowest that can run */
	SA_RANDOM,  /* prng_below(runnable) */
	SA_TAIL,    /* with `permille` chance (when more than one can run) prng_below(runnable), else the default */
	SA_PCT,     /* PCT: the highest `prio` that can run; at change point i (run_steps) it drops to i */
};
/* One decision a worker took, and how the step before it ended. */
struct sched_ahead_step {
	uint32_t at;                 /* decision number */
	uint8_t w, dev, state;       /* granted worker, a deviation from the default, its state then */
	uint8_t prev_state;          /* how the step before ended: SS_STEP, SS_SLEEP, SS_BLOCKED, SS_DONE */
	uint16_t fsop;
	uint32_t op_no;
	int32_t prev_result, prev_err;
	uint32_t prev_rec_to;
	int64_t prev_wake_ns;        /* prev_state SS_SLEEP: when it wakes */
	int64_t prev_now_ns;         /* the clock when the step before ended */
	int64_t now_ns;              /* the clock when granted (later: it moved to the next wake-up) */
	uint32_t rec_from;
	const char *point;
	char path[SCHED_PATH], path2[SCHED_PATH];
};
struct sched_ahead {
	_Atomic uint32_t handed;     /* a worker holds the decisions: the controller is not to wake yet */
	uint32_t mode;               /* enum sched_ahead_mode */
	uint32_t limit;              /* decisions from this number on are the controller's */
	uint32_t watch_from;         /* from this decision on, the controller's too when a fault of */
	uint32_t fsop_watch;         /* the strategy's may be offered: at a runnable worker's announced */
	uint8_t watch_unstarted;     /* call in this mask (1 << FSX_*), or while a live one has not started */
	uint32_t act_fsops;          /* the calls that act when they succeed (1 << FSX_*) ... */
	uint8_t acted[SCHED_MAX_WORKERS]; /* ... and whether each worker's last step did (x_step_acted) */
	uint32_t acted_watch_from;   /* from this decision on, the controller's while a live worker has
				      * acted (a crash the strategy aimed at one waits for it) */
	uint32_t kinds_out;          /* the explorer's fault kinds (1 << kind) it offers no more in this
				      * execution (budget used up): one planned of these is no reason
				      * to hand a decision back */
	uint32_t decisions;          /* the next decision's number */
	uint32_t nstep, max_steps;   /* steps so far in the execution, its bound */
	uint32_t permille;           /* SA_TAIL */
	int32_t current;             /* the worker that ran last */
	int64_t step_ns;             /* the clock's move per granted step */
	struct prng rng;             /* SA_RANDOM, SA_TAIL: the strategy's stream (copied back after) */
	uint32_t run_steps;          /* SA_PCT: steps granted so far; its priorities and change points */
	uint32_t pct_d;              /* (prio copied back after) */
	uint32_t change[16];
	int32_t prio[SCHED_MAX_WORKERS];
	int64_t pause_until[SCHED_MAX_WORKERS]; /* a pause or split write: not before this clock */
	uint32_t blocked_at[SCHED_MAX_WORKERS]; /* SS_BLOCKED: runnable once release_epoch passes this */
	uint32_t release_epoch;      /* moves at each step that may let a lock go: an unlock, a close,
				      * a kill, a worker's end or death (what a blocked flock waits for) */
	uint32_t n;                  /* decisions in step[] */
	struct sched_ahead_step step[SCHED_AHEAD];
};

/* Explore on the real file system: file time stamps kept for later
 * (faults/fsx_vt.c), the latest last.  The folders' (by path) are here, in
 * the mapping, so that they wait across a hand-off: whichever process next
 * takes a step that could see or move one sends them out.  A process keeps
 * its descriptors' in a list of its own. */
#define SCHED_VT_PENDING 8
#define SCHED_VT_PATH 1024     /* a longer path is stamped at once */
struct sched_vt_stamp {
	int32_t fd;                  /* -1: by path */
	struct timespec ts[2];
	char path[SCHED_VT_PATH];
};
struct sched_vt {
	uint32_t n;
	uint8_t order[SCHED_VT_PENDING]; /* the slots, the latest stamp last */
	struct sched_vt_stamp e[SCHED_VT_PENDING];
};

/* Explore on the real file system: the lock objects the workers made
 * through the seam, by the path they were made at, with the identity (dev,
 * inode) their lstat read then (faults/fsx_obj.c): a removal of one asks
 * here before it asks the kernel.  Any name change at or above an entry's
 * path drops it; sched_reset drops them all. */
#define SCHED_IDS 8
struct sched_ids {
	uint32_t n;
	struct {
		uint64_t dev, ino;
		char path[SCHED_VT_PATH];
	} e[SCHED_IDS];
};

struct sched {
	_Atomic uint32_t ctl;        /* futex the controller waits on: bumped at each yield */
	_Atomic uint32_t ctl_asleep; /* the controller sleeps on ctl */
	_Atomic int64_t now_ns;      /* the virtual clock */
	int yield_points;            /* every fsx_point is a decision too (explore --points) */
	_Atomic uint32_t store_gen;  /* moves when the store may not be the folder at its path any
				      * more (made again, moved): what a process holds open of it is
				      * opened again (faults/fsx_anchor.c) */
	unsigned n;                  /* workers in this execution */
	unsigned ops[SCHED_MAX_WORKERS]; /* operations of each worker in this execution */
	_Atomic uint32_t npoints;
	uint64_t points[SCHED_POINTS]; /* point hashes seen (coverage), open addressing */
	struct sched_slot w[SCHED_MAX_WORKERS];
	struct sched_ahead ahead;    /* the hand-off (above); controller and workers */
	/* sched_start_all: the worker starting now (-1: none), each one's
	 * records from its grant up to its first yield */
	int32_t starting;
	uint64_t start_silent;       /* record types (1 << EV_*) a start may journal and still hand over */
	uint32_t start_from[SCHED_MAX_WORKERS], start_to[SCHED_MAX_WORKERS];
	struct sched_vt vt;          /* the folders' stamps kept for later (sched_reset drops them) */
	struct sched_ids ids;        /* lock objects' identities by path (sched_reset drops them) */
	struct journal_mem jmem;     /* must be last: its records follow */
};

/* ---- controller ---- */
struct sched *sched_create(unsigned n, uint32_t rec_cap);
void sched_destroy(struct sched *s);
/* Before each execution: clock at 0, journal empty, the slots' step
 * fields cleared (live worker processes and coverage are kept). */
void sched_reset(struct sched *s, unsigned n, const unsigned *ops);
/* Wait until no worker runs.  Returns 0, or -1 (errno ETIMEDOUT) when some
 * worker ran longer than timeout_ms of real time, or one that was not done
 * died (*dead gets its index then, else -1). */
int sched_wait_quiet(struct sched *s, int timeout_ms, int *dead);
void sched_grant(struct sched *s, unsigned w);
/* W's crash without the cost of a process: granted, it gives up whatever
 * it was doing and goes back to where sched_die_to's buffer was set (it
 * waits there in sched_finish, as a new process would).  Wait for it with
 * sched_wait_quiet. */
void sched_kill(struct sched *s, unsigned w);
/* Worker side: where sched_kill sends this process (siglongjmp). */
void sched_die_to(sigjmp_buf *b);
/* Start workers 0..n-1 one after another, each running up to its first
 * yield: each grants the next itself, the last wakes the controller
 * (start_from/start_to: what each wrote), or, with the decisions handed
 * over (ahead set up before) and the starts' records all of the types in
 * start_silent, takes the first decisions itself.  Wait with sched_wait_quiet. */
void sched_start_all(struct sched *s);
/* Which workers can run now (enabled[i]), by the explorer's rule: announced
 * a step or a sleep that is over, not paused (ahead.pause_until); a blocked
 * one once ahead.release_epoch is past its ahead.blocked_at.  Returns how many;
 * live[i] and *nlive those not done, *nblocked the blocked ones, *next_wake
 * the earliest time one waits for (INT64_MAX: none). */
unsigned sched_enabled(const struct sched *s, int *enabled, int *live, unsigned *nlive,
		       unsigned *nblocked, int64_t *next_wake);
/* PCT's pick (Burckhardt et al.) among ORDER[0..NRUN) (the runnable workers,
 * the default first): the highest priority; at change point i (CHANGE[i] ==
 * RUN_STEPS, i < D) the one about to run drops to priority i.  The
 * explorer's chooser and the hand-off both pick by it. */
unsigned sched_pct_pick(int32_t *prio, const uint32_t *change, unsigned d, uint32_t run_steps, const uint8_t *order,
			unsigned nrun);
/* The hand-off: grant W with the decisions handed over (ahead's mode, limit,
 * ... set), and, once quiet again, take them back (mode off). */
void sched_ahead_grant(struct sched *s, unsigned w);
void sched_ahead_off(struct sched *s);
/* The option list's runnable part: the default first (CURRENT if it can
 * run, else the lowest that can), then the others in order. */
unsigned sched_run_order(const struct sched *s, const int *enabled, int current, uint8_t *order);

/* ---- worker ---- */
void sched_attach(struct sched *s, unsigned id);
/* This worker's process holds a descriptor the seam does not keep: its
 * crash cannot close it, so it must be a real death (slot's fds_untracked). */
void sched_fd_untracked(void);
/* The shared stamps (struct sched_vt) of the mapping this process attached to. */
struct sched_vt *sched_vt_shared(void);
void sched_step(int fsop, const char *path, const char *path2);
void sched_result(int r, int err);
void sched_sleep(int64_t ms);
void sched_block(void);
void sched_may_release(void);
void sched_point(const char *name);
void sched_finish(void);
/* Called in the worker before it lets another run (a worker it grants, the
 * controller it wakes): what it kept for later must be done by then (the
 * seam's file time stamps).  NULL: nothing. */
extern void (*sched_leaving)(void);
int64_t sched_now_ns(void);
int64_t sched_now_ms(void);   /* wall-clock ms: SCHED_EPOCH_MS + now */
/* The fault the last granted step suffers (a copy taken at the grant; kind
 * SXF_NONE mostly); the seam clears it once applied. */
extern struct sched_xf sched_xf;
/* This worker's sticky choices (0: none): clock skew, coarse file times, other host. */
int64_t sched_skew_ms(void);
int64_t sched_coarse_ms(void);
int sched_other_host(void);
/* Is pid one of this execution's workers, and alive?  -1: not a worker's pid. */
int sched_pid_alive(pid_t pid);
/* Virtual pids: worker K's (its pid index, cfg_pid_worker) in boot B, and
 * whether one is a live worker's (1), a dead one's (0) or none of ours (-1).
 * A restart after a power loss is boot 1: new processes, new numbers. */
#define SCHED_BOOTS 4
static inline pid_t sched_vpid(unsigned boot, unsigned k)
{
	return SCHED_VPID_BASE + (pid_t)(boot * SCHED_MAX_WORKERS + k);
}
int sched_vpid_alive(const struct sched *s, pid_t pid);

#ifdef __cplusplus
}
#endif
#endif
