/*
 * workload.h - what a worker does with the lock.
 *
 * A workload is one const `struct workload_ops` in its own file, listed in
 * workloads/registry.c.  setup() runs once in the driver before any worker
 * forks; op() runs in a worker, once per operation, and journals every event
 * of the operation (attempt, acquired/busy/acquire-error, reads, commits,
 * release-begin, released) through worker_log().
 */
#ifndef LS_WORKLOAD_H
#define LS_WORKLOAD_H

#include <limits.h>
#include <stdint.h>

#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../protocols/lock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct arena;

struct worker {
	unsigned id;
	unsigned incarnation;  /* 0 first; +1 for each --respawn */
	int pid;
	uint32_t op;           /* current op number (continues across incarnations) */
	struct prng rng;
	struct journal journal;
	struct arena *arena;
	unsigned workers;      /* the fleet's size */
	const int64_t *wparam; /* resolved workload params */
	const int64_t *wparam_us; /* the same, PU_MS in exact us; NULL: wparam x 1000 */
	int64_t wparam_own[LS_MAX_PARAMS], wparam_us_own[LS_MAX_PARAMS]; /* what they point to */
	int (*acquire)(struct lock *lk); /* the lock's ops every op calls, copied here (their */
	int (*release)(struct lock *lk); /* table is pages away: core/hot.h) */
	/* last, as the paths end it: what every op reads (above, and the lock's
	 * head) then shares one page (see core/hot.h) */
	struct lock lock;
	char state_file[PATH_MAX];
};

#define WL_CHECK_STATE 0x1u /* the checker reads the final state and commits */
#define WL_CHECK_SEQ 0x2u   /* journal-seq: appends' sequence numbers and the final journal (append) */
#define WL_CHECK_STALE_READ 0x4u /* stale-read: reads against finished writes (generation) */

struct workload_ops {
	const char *name;
	const char *summary;
	const struct param *params; /* terminated by {NULL} */
	const char *const *points;  /* NULL-terminated */
	unsigned flags;
	/* Driver, before fork: make the initial state from the resolved
	 * workload params (as w->wparam). 0 or -1 errno. */
	int (*setup)(const int64_t *wparam, const char *state_file);
	/* Worker: one operation. 0 done (whatever the lock said), -1 the harness failed (errno). */
	int (*op)(struct worker *w);
	/* Optional, worker: forget per-process caches (explore runs many
	 * executions in one worker process). */
	void (*reset)(void);
};

extern const struct workload_ops *const workload_registry[];
const struct workload_ops *workload_find(const char *name);
void workload_names(char *buf, size_t len);
/* Any known point (fs ops, every protocol's and workload's) by its point_hash; NULL if none. */
const char *point_name(uint64_t hash);

extern const struct workload_ops update_workload;
extern const struct workload_ops hold_workload;
extern const struct workload_ops append_workload;
extern const struct workload_ops generation_workload;

/* Journal an event for this worker (also feeds the arena's live stats and
 * online holder counter).  Returns the record's seq. */
uint64_t worker_log(struct worker *w, int type, int err, int64_t a, int64_t b, int64_t c);

/* Shared acquire/release wrappers that journal attempt/acquired/busy/error
 * and release-begin/released/release-error.  acquire returns as ops->acquire. */
int worker_acquire(struct worker *w, int64_t attempt);
int worker_release(struct worker *w);

/* The one worker body, for `lockstorm run` (run/driver.c) and `lockstorm
 * explore` (explore/engine.c); what differs between the two is here.
 *
 * Calling sequence, in the worker process after fork: fill a worker_spec,
 * call worker_run.  It seeds the worker's prng from (seed, id, incarnation),
 * opens its journal, forgets the workload's per-process caches, sets up the
 * lock, binds fsx (the mode's part of the binding plus the worker's own),
 * runs the protocol's init, journals worker-start, waits at the arena's
 * barrier if asked, runs the ops, journals worker-exit and unbinds.
 *
 * Errors: -1 when the journal cannot be opened or the protocol's init
 * fails (the caller exits 3); else 0, whatever the ops did. */
#define WORKER_CLAIM_OPS (-1L)

struct worker_spec {
	unsigned id;
	unsigned incarnation;             /* 0 first; +1 for each --respawn */
	int pid;                          /* the pid its journal and lock records carry */
	unsigned workers;                 /* the fleet's size */
	unsigned host;                    /* --hosts: the host it runs on (its EV_WORKER_START b), else 0 */
	uint64_t seed;
	const struct lock_ops *proto;     /* its protocol slot's revision ... */
	const int64_t *pvals;             /* ... and that slot's resolved params */
	const int64_t *pvals_us;          /* ... PU_MS in exact us (lock_setup_exact); may be NULL */
	const struct workload_ops *workload;
	const int64_t *wparam;            /* resolved workload params (LS_MAX_PARAMS of them) */
	const int64_t *wparam_us;         /* ... PU_MS in exact us; may be NULL */
	const char *state_file;
	struct arena *arena;
	const char *journal_path;         /* run: its journal file; NULL: ... */
	struct journal_ring *journal_ring; /* run: the ring the driver shares (NULL: mapped mode) */
	struct journal_mem *jmem;         /* ... explore: the shared in-memory journal */
	long ops;                         /* explore: this many; WORKER_CLAIM_OPS: claim each from the arena (run) */
	uint32_t op_base;                 /* explore: its first op's number (a restart after a power loss) */
	int wait_go;                      /* wait at the arena's start barrier after init */
	struct fsx_binding fsx;           /* the mode's part: faults, fstate, trace, pid, sched.
					     worker_run sets worker, journal, arena, rng, lock_path,
					     stale_ms and op */
};
int worker_run(const struct worker_spec *sp);

/* What for=Nstale (and an explore stall) means for this worker: its
 * protocol's stale age, or for the controls that never reclaim (flock,
 * none) their nominal stale_ms param. */
int64_t worker_stale_ms(const struct lock *lk);

/* update workload's state file: {"version":1,"revision":N,"counts":{"<w>":c,...}} */
struct update_state {
	int64_t revision;  /* -1: missing */
	int64_t *counts;   /* nworkers entries, 0 if absent */
	unsigned nworkers;
};
/* 0 parsed; -1 with errno EBADMSG (unparseable).  Set st->nworkers first:
 * parse allocates st->counts (nworkers entries); free with update_state_free. */
int update_state_parse(const char *buf, size_t len, struct update_state *st);
/* malloc'd JSON text */
char *update_state_format(const struct update_state *st, size_t *len);
/* Free st->counts (as allocated by update_state_parse); safe to call twice. */
void update_state_free(struct update_state *st);

/* append workload's journal (JSONL, quiver's session journal): one entry per
 * non-blank line, split on "\n" as the replay splits it (so an unterminated
 * tail is a line too). */
struct append_line {
	int parsed;     /* 0: not JSON (a torn or foreign line) */
	int64_t seq;    /* -1: the line does not parse or has no integer "seq" */
	int32_t worker; /* event.w: the appending worker, -1 if absent (seeded lines) */
	int64_t op;     /* event.op, -1 if absent */
	size_t line;    /* 1-based line number */
};
/* Scan BUF: *out gets a malloc'd array (free it), *n its length.  0, or -1
 * with errno ENOMEM. */
int append_journal_scan(const char *buf, size_t len, struct append_line **out, size_t *n);

/* REBUILD's replay of a journal's bytes: every parsed line is an event, every
 * other non-blank line a journal_parse_failed diagnostic; next = max(1, max
 * seq + 1).  0, or -1 with errno ENOMEM. */
struct append_replay {
	int64_t events;
	int64_t last_seq;    /* seq of the last parsed line that has one; 0 if none */
	int64_t diagnostics;
	int64_t next_seq;
};
int append_replay(const char *buf, size_t len, struct append_replay *out);

/* The snapshot file beside the journal STATE_FILE (<stem>.snapshot.json). */
void append_snapshot_path(const char *state_file, char *out, size_t len);

/* A snapshot file as a reader sees it.  0 when it parses as an object, else
 * -1 (torn, empty, not JSON). */
struct append_snapshot {
	int id_ok;              /* "id" is the session's */
	int64_t events, last_seq, diagnostics; /* 0 when absent, as baseSnapshot's */
	int has_meta;           /* "__journalBytes" present: 1.0.0's format */
	int64_t journal_bytes;  /* -1: absent or not an integer */
	int64_t next_seq;       /* __nextSeq; -1: absent or not an integer */
	int32_t worker;         /* "by": who wrote it; -1 unknown */
	int64_t op;
	char call[16];          /* "appendEvent" | "getSnapshot" | "" */
};
int append_snapshot_parse(const char *buf, size_t len, struct append_snapshot *out);

#ifdef __cplusplus
}
#endif
#endif
