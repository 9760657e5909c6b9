/*
 * arena.h - the shared anonymous mapping every worker and the driver see.
 *
 * It holds: the global event sequence (a total order consistent with real
 * time), the start barrier and stop flag (futex words), the op budget, the
 * online holder counter (a second holder is recorded the instant it
 * happens, with both workers), the ground-truth table of which worker created
 * each lock object now on disk (fed by fsx), and live per-worker statistics
 * the driver's watchdog and status line read.
 *
 * Created by the driver before fork (arena_create), inherited by workers,
 * unmapped by the driver at the end (arena_destroy).  Nothing here is
 * written by a process other than the one a slot belongs to, except the
 * counters, which are atomics, and the object table, under a robust
 * process-shared mutex (a worker killed while holding it does not wedge it).
 */
#ifndef LS_ARENA_H
#define LS_ARENA_H

#include <pthread.h>
#ifdef __cplusplus
/* C++ (the tests) only reads the layout: the same types without the qualifier */
#define _Atomic
#else
#include <stdatomic.h>
#endif
#include <stdint.h>
#include <sys/types.h>

#include "point.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ARENA_OBJ_SLOTS 8192
#define ARENA_OBJ_DIRTY 256  /* slots a reset clears one by one; more: the whole table */
#define ARENA_MAX_BREACH 16

struct arena_obj {
	uint64_t dev, ino;   /* 0/0: free slot */
	int32_t creator;     /* worker id */
	uint64_t seq;        /* seq of the creation record */
};

struct arena_breach {
	uint32_t first, second; /* worker already holding, worker that just acquired */
	uint64_t seq;
};

struct arena_worker {  /* one per worker, on its own cache lines */
	_Atomic int32_t pid;
	_Atomic int32_t holding;      /* between acquired and release-begin */
	_Atomic uint64_t progress;    /* ticks: +1 per journal record or point passed (no clock read) */
	_Atomic int64_t excuse_ns;    /* the watchdog must not fire before this (announced stalls, holds) */
	_Atomic uint64_t last_point;  /* the last point's name (a string literal: same address in the driver) */
	_Atomic uint32_t incarnation;
	_Atomic uint32_t next_op;     /* op numbers continue across incarnations */
	_Atomic uint64_t ops, acquired, committed, busy, errors, lost, crashes, stalls;
	_Atomic uint64_t calls[FSX_OP_COUNT];
	_Atomic int64_t stop_until_ns; /* stop fault: the driver SIGCONTs the worker at this time */
} __attribute__((aligned(64)));

#define ARENA_WIN_SLOTS 65536 /* Windows-like paths: by path hash */

struct arena {
	/* what every worker changes at each acquire and release, on one line:
	 * the records' sequence and the online holder count (an acquire takes
	 * one after the other, a release the other way round: with two workers
	 * on two CPUs the line moves across once, not twice) */
	_Atomic uint64_t seq __attribute__((aligned(64)));
	_Atomic int32_t holders;      /* online holder count */
	_Atomic uint32_t ready __attribute__((aligned(64))); /* workers at the barrier */
	_Atomic uint32_t go;          /* futex: 0 wait, 1 run */
	_Atomic uint32_t stop;        /* 1: finish the current op and leave */
	uint64_t ops_limit;           /* 0: no limit */
	/* off the line of stop and ops_limit, which every worker reads each op:
	 * ops_claimed changes each op under --ops, breaches when one is seen, and
	 * each change there would cost the other CPUs a miss */
	_Atomic uint64_t ops_claimed __attribute__((aligned(64)));
	_Atomic uint64_t breaches __attribute__((aligned(64))); /* online breaches seen */
	struct arena_breach breach[ARENA_MAX_BREACH];
	_Atomic int64_t stall_until_ns; /* latest end of any announced stall */
	_Atomic uint64_t sweeps;      /* folders the sweep fault removed */
	_Atomic int64_t win_removed_ns[ARENA_WIN_SLOTS]; /* when a directory at this path was last removed */
	_Atomic int32_t win_open[ARENA_WIN_SLOTS];       /* descriptors open on this path, all workers */
	pthread_mutex_t obj_mutex;
	struct arena_obj obj[ARENA_OBJ_SLOTS];
	uint32_t obj_dirty_n;         /* slots written since the last reset (past ARENA_OBJ_DIRTY: */
	uint16_t obj_dirty[ARENA_OBJ_DIRTY]; /* too many to list), and which */
	unsigned nworkers;
	struct arena_worker w[];
};

struct arena *arena_create(unsigned nworkers);
void arena_destroy(struct arena *a);
/* Back to the state arena_create left it in (explore: before each execution). */
void arena_reset(struct arena *a);
uint64_t arena_next_seq(struct arena *a);

/* Barrier: workers call arena_wait_go; the driver waits for ready == n and calls arena_go. */
void arena_wait_go(struct arena *a);
void arena_go(struct arena *a);
/* Claim one op under --ops; 0 when the budget is spent or stop is set. */
int arena_claim_op(struct arena *a);

/* Online holder counter. */
void arena_hold_enter(struct arena *a, unsigned worker, uint64_t seq);
void arena_hold_leave(struct arena *a, unsigned worker);

/* Object table.  obj_lock/unlock bracket the system call and the update so
 * the pair is one atomic step with respect to other workers' pairs. */
void arena_obj_lock(struct arena *a);
void arena_obj_unlock(struct arena *a);
void arena_obj_add(struct arena *a, uint64_t dev, uint64_t ino, unsigned creator, uint64_t seq);
/* Removes the entry; returns the creator (or -1) and its seq. */
int arena_obj_take(struct arena *a, uint64_t dev, uint64_t ino, uint64_t *seq);

#ifdef __cplusplus
}
#endif
#endif
