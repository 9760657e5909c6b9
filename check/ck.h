/*
 * ck.h - the checker's shared internals (private to check/; checker.h is the
 * public interface).  One walk over the records (checker.c) keeps the state
 * below; each invariant family's file judges its part of it:
 *
 *   checker.c   the walk, the record dispatch, results and bookkeeping
 *   ckbase.c    what every family reads and does (stale age, budget, occupied,
 *               the violation record); it calls no family
 *   inv.c       the invariants' names (inv.h: their ids)
 *   holds.c     exclusion, zombie-write, own-release
 *   liveness.c  liveness (and the lock objects on disk it judges against)
 *   writes.c    no-lost-writes, serial-updates, state-intact
 *   seq.c       journal-seq
 *   reads.c     stale-read
 *   claims.c    exclusion on a protocol's other mutexes, no-escaped-error, strict-lease
 */
#ifndef LS_CK_H
#define LS_CK_H

#include <stddef.h>
#include <stdint.h>

#include "../core/journal.h"
#include "hist.h"
#include "../protocols/lock.h"
#include "inv.h"

struct check_input;
struct check_result;

#define NS_PER_MS 1000000LL
#define CK_MAX_MS (INT64_MAX / NS_PER_MS) /* sums of journal durations stop here (ck_add_ms) */
#define LIVENESS_GRACE_MS 2000LL /* slack for scheduling noise on a loaded CI machine */
/* How late a waiter may notice that a dead holder's lock has become
 * reclaimable: one coarse file-time tick (4 ms at HZ=250) plus scheduling
 * delay.  Measured on the shared 2-core machine running 7 builds: attempts of
 * mkdir-owner at --time-scale 0.02 (8 workers, crashes) ended busy up to
 * 18 ms past their 100 ms budget (p99 12.8 ms, 219 waits); 50 ms is that
 * with room (docs/findings.md, "the oracle"). */
#define CK_JITTER_MS 50LL

struct ck_worker {
	/* the current hold */
	int holding;
	int reclaimed;          /* a legal reclaim took it over: no longer counts as a holder */
	int overlapped;         /* another worker acquired during it (reclaim or not) */
	uint64_t hold_start_ns; /* stale clock: lock object creation, else acquired.ns */
	uint64_t hold_acq_ns;   /* EV_ACQUIRED's own time (hold distribution) */
	uint64_t hold_seq;
	uint32_t hold_op;
	/* after release-begin: its lock object is still on disk, so it still
	 * occupies the lock for liveness until a step removes or replaces it,
	 * its release ends (released / release-error) or it dies */
	int releasing;
	size_t hslot;           /* index in ck.holders */
	int32_t over_by;        /* first worker that acquired during the hold */
	uint32_t over_op;
	uint64_t over_seq;
	int over_legal;
	uint64_t over_age_ns;
	/* the current attempt */
	int attempting;
	int att_reported;       /* the watchdog already reported it */
	uint64_t att_ns, att_seq;
	uint32_t att_op;
	uint32_t injected_op;     /* the op in which an injected errno or short write failed a call */
	uint8_t injected;
	/* the last call the file system failed only because a directory removed
	 * by someone was still open (EV_DELETE_PENDING, windows) */
	uint8_t pending;
	uint32_t pending_op;
	int pending_err, pending_call;
	int32_t pending_by;       /* a worker that had it open, -1 unknown */
	uint64_t pending_seq;
	int64_t att_stall_ms;   /* own announced stalls since the attempt began */
	int64_t att_jump_ms;    /* virtual time: other workers' stalls since it began (they move its clock) */
	uint64_t att_epoch;     /* acquisitions counted when the attempt began */
	int att_held;           /* some worker held the lock when it began */
	int att_clear;          /* nobody held or occupied it and no lock object was there when it began */
	uint64_t att_obj_epoch; /* lock objects made when it began */
	/* secondary mutexes (EV_MUTEX_TAKE .. EV_MUTEX_DROP), by index */
	uint8_t mx_held[LOCK_MAX_MUTEXES];
	uint64_t mx_ns[LOCK_MAX_MUTEXES], mx_seq[LOCK_MAX_MUTEXES];
	uint32_t mx_op[LOCK_MAX_MUTEXES];
	int64_t mx_stale_us[LOCK_MAX_MUTEXES]; /* -1: never taken over */
	/* update workload */
	int has_read;
	int64_t read_rev;
	uint64_t commits;
	/* no-phantom-result: the commit begun in the current op (own count it
	 * writes, 0: none), the highest reported success, the highest reported
	 * failure, and the highest begun commit whose outcome died with it */
	int64_t pend_own;
	int64_t ok_max, unknown_max;
	int64_t fail_own;
	uint32_t fail_op;
	uint64_t fail_seq;
	/* a crash fault was journaled by this incarnation: the driver's
	 * EV_KILLED for the same death is not a second crash */
	int crash_announced;
	/* stale-read: the read begun and the newest write finished before it */
	int rb_pending;
	uint64_t rb_seq;
	int64_t rb_floor;       /* -1: no write had finished */
	int32_t rb_floor_w;
	uint32_t rb_floor_op;
	uint64_t rb_floor_seq;
};

/* journal-seq: one EV_APPEND, or one line of the final journal */
struct ck_app {
	int64_t seq;
	int32_t worker;         /* -1: a final line without a worker (seeded) */
	int64_t op;
	uint64_t rseq;          /* EV_APPEND's record seq; final lines: 0 */
	size_t line;            /* final lines: 1-based line number; appends: 0 */
	int final;              /* 0 appended (EV_APPEND), 1 a line of the final journal */
	int matched;
};

/* journal-seq: a getSnapshot that wrote its replay of the journal's first
 * `bytes` bytes to the snapshot file (EV_READ c = bytes + 1) */
struct ck_snapread {
	int32_t worker;
	uint32_t op;
	uint64_t rseq;
	uint64_t bytes;
};

struct ck_commit {
	int64_t rev;
	uint64_t seq;
	uint32_t op;
	uint32_t worker;
	int64_t read_rev;       /* -2: no read seen */
	int bad_read;           /* rev != read + 1 */
	int dup;                /* an earlier commit wrote the same revision */
	size_t first;           /* if dup: index of that earlier commit */
};

/* A lock object on disk now (fed by obj-create / obj-remove): whose it is,
 * and whether its creator has died (an orphan nobody alive will release). */
struct ck_obj {
	int64_t ino;
	int32_t creator;
	int orphan;
	uint64_t seq;
	uint64_t ns;            /* when it was made */
	uint64_t left_ns;       /* when its maker died or its release returned leaving it; 0: not yet */
	int reported;           /* no-orphan-lock already counted it */
};

/* wait and hold durations (ns): a histogram, fixed memory (hist.h) */
struct ck_samples {
	struct hist h;
};

struct ck {
	const struct check_input *in;
	struct check_result *out;
	struct ck_worker *w;
	unsigned *holders;
	size_t nholders;
	size_t live;            /* holders whose hold was not reclaimed */
	size_t releasing;       /* workers inside a release whose lock object is still there */
	/* liveness (3): a stretch with no live holder */
	int stuck_on;           /* check (3) at all: some stale age is finite */
	int64_t stuck_bound_ms;
	int stretch_open;
	int stretch_started;    /* start_ns is set */
	uint64_t stretch_ns, stretch_seq;
	int32_t stretch_after;  /* the worker whose hold ended it, -1 */
	uint64_t stretch_busy;
	uint64_t last_busy_ns, last_busy_seq;
	uint32_t last_busy_op;
	int32_t last_busy_w;
	/* liveness (5): waiting on a dead worker's lock object until giving up */
	struct ck_obj *objs;
	size_t nobjs, capobjs;
	size_t orphans;
	uint64_t orphan_since_seq;
	uint64_t acq_epoch;
	uint64_t obj_epoch;     /* lock objects made so far (no-escaped-error's busy rule) */
	uint64_t held_ns;       /* the last time anyone held the lock: a take, a release's return, a holder's death */
	uint64_t obj_change_ns; /* the last lock object made or removed, by anyone */
	uint64_t *viol_by;      /* per worker: violations it is the first worker of */
	/* throughput */
	struct ck_samples wait, hold;
	struct ck_commit *commits;
	size_t ncommits, capcommits;
	uint64_t released;
	uint64_t first_ns, last_ns;
	int seen_worker_rec;
	/* journal-seq */
	struct ck_app *apps;
	size_t napps, capapps;
	uint64_t appended;
	struct ck_snapread *snapreads;
	size_t nsnapreads, capsnapreads;
	/* stale-read: the newest version any finished write wrote */
	int64_t max_ver;        /* -1: none yet */
	int32_t max_w;
	uint32_t max_op;
	uint64_t max_seq;
	uint64_t reads;
	/* the first worker record of an acquire error (ck_never_acquired) */
	int has_acq_error;
	int swept;              /* explore: a sweep choice removed a folder (its ENOENTs are its doing) */
	struct jrec first_acq_error;
	int seen_op;            /* a worker record other than worker-start: first_ns is set */
};

/* LATER - EARLIER, 0 when LATER is not later. */
static inline uint64_t ck_since(uint64_t later, uint64_t earlier)
{
	return later > earlier ? later - earlier : 0;
}

static inline double ck_ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* ckbase.c */
int64_t ck_stale(const struct ck *c, unsigned w);
int64_t ck_budget(const struct ck *c, unsigned w);
unsigned ck_flags(const struct ck *c, unsigned w);
int64_t ck_jump(const struct ck *c);
size_t ck_occupied(const struct ck *c);
int ck_past_stale(int64_t stale_ms, uint64_t age_ns);
int ck_taker_inside(const struct ck *c, unsigned w);
uint64_t ck_lock_since(const struct ck *c, unsigned w, uint64_t since_ns);
uint64_t ck_waited_budget(const struct ck *c, unsigned w, const struct jrec *r);
int ck_stalls_ate_budget(const struct ck *c, unsigned w, const struct jrec *r);
uint64_t ck_waited_budget_from(const struct ck *c, unsigned w, const struct jrec *r, uint64_t from_ns);
void ck_stale_text(int64_t stale_ms, char *buf, size_t len);
__attribute__((format(printf, 9, 10)))
void ck_violation(struct ck *c, enum inv_id inv, int32_t w0, uint32_t op0, uint64_t seq0,
		  int32_t w1, uint32_t op1, uint64_t seq1, const char *fmt, ...);
int ck_push(struct ck_samples *s, uint64_t v);
int64_t ck_add_ms(int64_t sum, int64_t ms);

/* holds.c */
void ck_hold_end(struct ck *c, unsigned w, const struct jrec *r);
void ck_release_begin(struct ck *c, unsigned w, const struct jrec *r);
void ck_release_end(struct ck *c, unsigned w, const struct jrec *r);
void ck_vacated(struct ck *c, const struct jrec *r);
int ck_acquired(struct ck *c, unsigned w, const struct jrec *r);
void ck_commit_begin(struct ck *c, unsigned w, const struct jrec *r);
void ck_obj_remove(struct ck *c, unsigned y, const struct jrec *r);

/* liveness.c */
void ck_stretch_judge(struct ck *c);
void ck_stretch_begin(struct ck *c, const struct jrec *r, int32_t after);
void ck_attempt_end(struct ck *c, unsigned w, const struct jrec *r, const char *how);
int ck_obj_create(struct ck *c, unsigned w, const struct jrec *r);
void ck_obj_gone(struct ck *c, const struct jrec *r);
void ck_dead_wait(struct ck *c, unsigned w, const struct jrec *r);
void ck_orphan(struct ck *c, unsigned w, const struct jrec *r); /* W is gone: its lock objects are orphans */
void ck_never_acquired(struct ck *c);

/* orphan.c */
void ck_objs_left(struct ck *c, unsigned w, const struct jrec *r);
void ck_orphan_wait(struct ck *c, unsigned w, const struct jrec *r);
void ck_livelock(const struct check_input *in, struct check_result *out); /* livelock.c */
void ck_spin(struct ck *c, unsigned w, const struct jrec *r);              /* livelock.c: EV_SPIN */

/* claims.c: what a protocol's ops table claims (lock.h) */
const char *ck_mutex_name(const struct ck *c, unsigned w, unsigned index, char *buf, size_t len);
void ck_attempt_begin_claims(struct ck *c, unsigned w);
void ck_mutex_take(struct ck *c, unsigned w, const struct jrec *r);
void ck_mutex_drop(struct ck *c, unsigned w, const struct jrec *r);
void ck_mutex_gone(struct ck *c, unsigned w);
void ck_escaped(struct ck *c, unsigned w, const struct jrec *r);
void ck_delete_pending(struct ck *c, unsigned w, const struct jrec *r);
void ck_busy_nobody(struct ck *c, unsigned w, const struct jrec *r);
void ck_strict_lease(struct ck *c, unsigned w, const struct jrec *r, unsigned h, uint64_t age);
void ck_claims_applicable(struct ck *c);

/* writes.c */
int ck_commit(struct ck *c, unsigned w, const struct jrec *r);
int ck_serial(struct ck *c);
int ck_final_state(struct ck *c);
void ck_phantom_record(struct ck *c, unsigned w, const struct jrec *r);

/* seq.c */
int ck_append(struct ck *c, unsigned w, const struct jrec *r);
int ck_snapread(struct ck *c, unsigned w, const struct jrec *r);
int ck_journal_seq(struct ck *c);

/* reads.c */
void ck_stale_commit(struct ck *c, unsigned w, const struct jrec *r);
void ck_read_begin(struct ck *c, unsigned w, const struct jrec *r);
void ck_read_end(struct ck *c, unsigned w, const struct jrec *r);

#endif
