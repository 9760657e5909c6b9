/*
 * checker.h - derive the verdict from journals and final state alone.
 *
 * The same function serves the end of `lockstorm run` and `lockstorm check
 * OUTDIR`, so both print the same verdict.  Input records must be sorted by
 * seq (journal_read_dir does that).
 */
#ifndef LS_CHECKER_H
#define LS_CHECKER_H

#include <stddef.h>
#include <stdint.h>

#include "../core/journal.h"
#include "inv.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ck_step;

#define CHECK_MAX_EXAMPLES 4

struct check_example {
	char text[320];      /* plain words: "w3 acquired (op 12, seq 881) while w5 held since seq 870 (41 ms)" */
	int32_t worker[2];   /* -1 when not applicable */
	uint32_t op[2];
	uint64_t seq[2];
};

struct check_inv {
	const char *name;
	int applicable;      /* 0: this run's workload cannot exercise it (reported as "n/a") */
	uint64_t violations;
	unsigned nex;
	struct check_example ex[CHECK_MAX_EXAMPLES];
};

struct check_input {
	const struct jrec *rec;   /* sorted by seq */
	size_t n;
	/* Streaming instead of rec/n (when rec is NULL): one record at a time in
	 * seq order: 1 and *r (valid until the next call), 0 at the end, -1 an
	 * error with errno.  Nothing of the history is kept: the walk holds per
	 * worker state, open holds and lock objects.  torn_bytes and unjudgeable
	 * are read after the end, so a source may set them when it ends. */
	int (*next)(void *ctx, const struct jrec **r);
	/* Or (when set, instead of next) several records at a time: 1 and *n >= 1
	 * records at *r in seq order (valid until the next call), 0, -1 as next. */
	int (*next_run)(void *ctx, const struct jrec **r, size_t *n);
	void *next_ctx;
	unsigned workers;
	const int64_t *stale_ms;  /* per worker: the protocol's stale age (scaled), LS_NEVER if none */
	const int64_t *budget_ms; /* per worker: the protocol's wait budget (scaled) */
	const char *const *proto_of; /* per worker: protocol name (for examples and its declared
	                              * flags, see protocols/lock.h); may be NULL */
	const char *const *rev_of;   /* per worker: its revision for the figures by revision
	                              * ("flock rev=legacy", a --param list); NULL: proto_of */
	int64_t clock_jump_ms;    /* explore (virtual time): the execution's stalls, which move every
	                           * worker's clock; budgets above stay the protocol's own; 0 in run */
	int check_state;          /* the workload keeps a state file (update) */
	int check_seq;            /* journal-seq: EV_APPEND records, final_state is the JSONL journal (append) */
	int check_stale_read;     /* stale-read: EV_READ_BEGIN/EV_READ against EV_COMMIT versions (generation) */
	const char *final_state;  /* its bytes at the end; NULL if missing */
	size_t final_len;
	const char *final_snapshot; /* check_seq: the snapshot file's bytes at the end; NULL if missing */
	size_t final_snapshot_len;
	size_t torn_bytes;        /* from the journal reader */
	const struct ck_step *steps; /* no-livelock (check/livelock.h): the explorer's steps, NULL: n/a */
	size_t nsteps;
	unsigned livelock_steps;  /* its limit; 0: 200 */
	/* explore: an acquire error in an op where the explorer chose an errno or a
	 * torn write is the choice's doing, not "no attempt ever took the lock"
	 * (flock fails so too; whether the protocol should absorb it is
	 * no-escaped-error's to judge).  A run's --fault is the user's question:
	 * there such an error still counts (K-ML-4's scenario) */
	int excuse_injected;
	int strict;               /* --strict: judge strict-lease (a live holder taken over at all) */
	const char *unjudgeable;  /* why these records cannot be judged (a damaged journal, a run
				     that never ended), NULL if they can: the result is INCOMPLETE */
};

struct dist {
	double p50, p99, max; /* ms */
	uint64_t n;
};

#define CHECK_MAX_REVS 8

/* One protocol revision's share of a mixed-version fleet. */
struct check_rev {
	const char *name;
	unsigned workers;
	uint64_t attempts, acquired, committed, busy, errors, lost, crashes, stalls;
	uint64_t violations;   /* violations whose first worker runs this revision */
	double ops_per_s;      /* its commits (update) or releases (hold) over the run's elapsed time */
};

struct check_result {
	struct check_inv inv[INV__COUNT];
	struct check_rev rev[CHECK_MAX_REVS]; /* by revision, when proto_of was given */
	unsigned nrev;
	uint64_t attempts, acquired, committed, busy, errors, lost, crashes, stalls, reclaims, kills;
	uint64_t write_errors;
	uint64_t ops;          /* completed ops: commits (update) or releases (hold) */
	double elapsed_s;      /* first to last worker record */
	double ops_per_s;
	struct dist wait, hold;
	uint64_t final_revision; /* update */
	size_t torn_bytes;
	int pass;              /* 1 only when every applicable invariant held */
	char incomplete[160];  /* in->unjudgeable: no verdict on damaged data (figures only) */
};

/* 0 ok; -1 only on allocation failure. */
int check_run(const struct check_input *in, struct check_result *out);

#ifdef __cplusplus
}
#endif
#endif
