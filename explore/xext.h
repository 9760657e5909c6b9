/*
 * xext.h - `lockstorm explore` and `lockstorm replay` for external workers
 * (-p ext:NAME, --exec): the real lock library under the step scheduler.
 * docs/external-workers.md ("Exploring your own library") is the user's page.
 *
 *   xext.c         one execution: the adapters (LOCKSTORM_EXPLORE=1), their
 *                  steps and virtual time, the journal, the checker
 *   xext_search.c  the search, shrink, story, counterexample file, replay
 *
 * The adapter's helper library (adapters/lib/lsexplore.js) announces every
 * file-system call the library makes (`step K CALL PATH`) and waits for
 * `go K T`; it runs its timers on the virtual clock the explorer moves
 * (`time T`).  A decision lists the options: run one pending call of a
 * worker, or stall a worker (the clock jumps N stale ages for everybody);
 * when asked for (--max-faults), crash it, fail its oldest call with an
 * errno (`go K T ERRNO`), or tear a write: only its first 10 bytes land,
 * then ENOSPC (`go K T short-write`), or they land and the writer pauses
 * while the others go on, then the rest is a call of its own
 * (`go K T split-write`; `done K part`, `step K2 CALL PATH rest`).
 * Option 0 is the default: the worker that ran last, its oldest call.  An
 * execution is its deviations from that default (struct xchoice, as for
 * the built-in models), so replay feeds them back and ddmin shrinks them.
 */
#ifndef LS_XEXT_H
#define LS_XEXT_H

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "xint.h"

#define XE_POOL 2                /* executions whose adapters start ahead (start-up is slow) */
#define XE_PEND 16               /* calls one adapter may have waiting */
#define XE_T0 1700000000000LL    /* the virtual clock's start, ms since the epoch */
#define XE_TEAR 10               /* short and split writes: the bytes that land first (as xfaults.c) */

struct xe_pend {
	uint32_t id;
	int sync;                /* a sync call: the adapter can do nothing else */
	int rest;                /* the rest of a split write (`step K CALL PATH rest`) */
	char call[16];
	char path[2][SCHED_PATH];
};

struct xe_worker {
	pid_t pid;
	int ev, ctl;             /* its fd 3 (we read), its stdin (we write) */
	char buf[8192];
	size_t len;
	struct xe_pend pend[XE_PEND];
	unsigned npend;
	int64_t next_timer;      /* virtual ms of its earliest timer, -1 none */
	int64_t pause_until;     /* a split write's pause: frozen till this virtual ms */
	int wants_op, stopped, exited;
	int holding;             /* between its acquired and release-begin */
	unsigned ops_given;
	uint32_t op;
	char done[16];           /* the result of the call just granted */
};

/* One line of an execution's story: a granted call, a stall, the clock moving. */
struct xe_line {
	uint8_t w;
	uint8_t kind;            /* XEL_* */
	uint8_t mutates;         /* a call that changed something, or one with events after it */
	uint8_t fault;           /* an errno, a torn or split write: never folded into a summary line */
	int64_t now_ms;          /* since the start */
	uint32_t rec_to;         /* records written up to here */
	char text[400];
};
enum { XEL_CALL, XEL_STALL, XEL_TIME };

struct xe_exec {
	struct xshape sh;
	struct xchoice *dev;
	size_t ndev, capdev;
	struct xe_line *line;
	size_t nline, capline;
	uint32_t decisions;
	int outcome;             /* XO_* */
	int inv;
	struct check_result res;
	int64_t stall_ms;
	char why[512];
};

struct xext {
	struct xcfg *cfg;
	char lib[64];            /* the library's name in stories: "proper-lockfile" */
	char cmd[PATH_MAX];
	int shell;
	char pylib[PATH_MAX + 32]; /* adapters/lib/pyexplore: Python's seam (sitecustomize) */
	char preload[PATH_MAX];    /* liblockstorm_explore.so: a C adapter's seam ("seam": "preload"), or "" */
	struct rundir xrd;       /* our work directory, marked and locked (run/rundir.h) */
	char xdir[PATH_MAX];     /* its path */
	char store[PATH_MAX + 16];
	char state[PATH_MAX + 32];
	char lockp[PATH_MAX + 40];
	unsigned n;
	struct xe_worker w[SCHED_MAX_WORKERS];
	struct xe_worker spare[XE_POOL][SCHED_MAX_WORKERS]; /* the next executions', starting up */
	int64_t now_ms;          /* virtual, since XE_T0 */
	struct jrec *rec;
	size_t nrec, caprec;
	uint64_t seq;
	int lock_creator;        /* who made the lock object at the lock path now; -1 none */
	int64_t lock_ino;
	uint64_t lock_ns;
	int64_t stale_ms[SCHED_MAX_WORKERS], budget_ms[SCHED_MAX_WORKERS];
	const char *proto_of[SCHED_MAX_WORKERS];
	uint64_t execs;
	uint32_t kest;
	uint64_t acquires;       /* acquired events this execution */
	uint32_t khold;          /* decisions made while somebody held, most in one execution */
	unsigned pool;           /* executions' adapters started ahead */
};

/* A fault kind's budget for an adapter: named by --max-faults (or all=), else
 * none, so that a plain search of a library draws as it always did. */
static inline unsigned xe_budget(const struct xcfg *cfg, int kind)
{
	return cfg->maxf_named & (1u << kind) ? cfg->maxf[kind] : 0;
}

/* xext.c */
int xext_open(struct xext *xe, struct xcfg *cfg, char *why, size_t len);
void xext_close(struct xext *xe);
int xext_exec(struct xext *xe, const struct xshape *sh, xchoose choose, void *ctx, struct xe_exec *x);
int xext_replay_dev(struct xext *xe, const struct xshape *sh, const struct xchoice *dev, size_t ndev,
		    struct xe_exec *x);
void xe_exec_free(struct xe_exec *x);

/* xext_search.c */
int xext_main(struct xcfg *cfg, int argc, char **argv); /* explore, after xcfg_parse */
int xext_is_cex(const char *path);          /* a counterexample of xext's */
int xext_replay_main(const char *path, int quiet, int full, const char *dir);

#endif
