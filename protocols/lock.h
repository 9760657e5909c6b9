/*
 * lock.h - the lock protocol interface: one const `struct lock_ops` per
 * protocol revision, one file each, listed in registry.c.
 *
 * Calling sequence (one worker, one lock):
 *   lock_setup(&lk, ops, file, values, worker, rng)   fills path and params
 *   ops->init(&lk)                                    per-run state (no-op for most)
 *   loop: r = ops->acquire(&lk)
 *           0        held: the caller is in its critical section
 *           LS_BUSY  gave up within the protocol's own wait budget
 *           -1       error raised by the protocol; errno says which
 *         while held: ops->held(&lk) -> 1 still ours, 0 lost (always 1 without LOCK_HAS_HELD)
 *         ops->release(&lk)        0, or -1 with errno (errors the origin ignores are not reported)
 *
 * Protocols never touch the file system directly: every call goes through
 * fsx (faults/fsx.h) and every numbered step of PROTOCOLS.md is marked with
 * fsx_point("<proto>/<operation>/<before|after>-<label>").
 * Run state lives in lk->state, never in the ops table.
 */
#ifndef LS_LOCK_H
#define LS_LOCK_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/point.h"
#include "../core/prng.h"

#ifdef __cplusplus
extern "C" {
#endif

#define LS_BUSY 1
#define LS_MAX_PARAMS 16
#define LS_NEVER INT64_MAX /* a stale age or budget that never runs out */

enum param_unit {
	PU_COUNT,  /* a plain number */
	PU_MS,     /* a time constant in ms: multiplied by --time-scale */
	PU_CHOICE, /* an index into choices[] (given by name on the command line) */
	PU_MS_NEVER, /* PU_MS, or "never" (LS_NEVER): a stale age that may not exist */
};

struct param {
	const char *name;
	int64_t def;
	enum param_unit unit;
	const char *const *choices; /* PU_CHOICE only, NULL-terminated */
	const char *help;
};

enum lock_form { FORM_ACQUIRE = 0, FORM_TRY = 1, FORM_BOUNDED = 2 };
extern const char *const lock_form_choices[];    /* "acquire", "try", "bounded" */
extern const char *const lock_platform_choices[]; /* "posix", "win32" */

struct lock_ops;

struct lock {
	const struct lock_ops *ops;
	int64_t param[LS_MAX_PARAMS]; /* resolved values, in ops->params order; PU_MS already scaled,
	                               * in whole ms (what reports, hooks and adapters see) */
	int64_t us[LS_MAX_PARAMS];    /* the same, PU_MS in us: exact at any --time-scale, so the
	                               * ratios are the origin's; the protocols sleep and compare
	                               * with these (other units: as param[]) */
	unsigned worker;
	struct prng *rng;             /* the worker's stream (entry names, ...) */
	int last_error;               /* errno of the last failed step, for reports */
	union {
		unsigned char bytes[2048];
		max_align_t align;
	} state;                      /* protocol's per-run state; see each protocol's struct */
	/* the paths last: what a step reads above shares a page (core/hot.h) */
	char file[PATH_MAX];          /* the file the lock protects */
	char path[PATH_MAX];          /* the lock object: <file>.lock */
};

#define LOCK_HAS_HELD 0x1u /* held() really checks (update writes only while it says 1); strict-lease
                           * does not judge it: a reclaimed live holder is told */
#define LOCK_EXTERNAL 0x2u /* an adapter process runs the lock (protocols/external.h): hooks never called */
/* It claims to see a dead holder (asks whether the recorded pid lives) and
 * reclaims its lock at once; without it, a dead holder's lock is promised
 * only to be reclaimed once it is stale_ms old (the checker's liveness waits
 * that long before it blames a waiter's time-out on the dead holder). */
#define LOCK_DEAD_AT_ONCE 0x4u
/* Its state is per module instance (volter): two instances in one process
 * are two holders with one pid (--param instances=2, workloads/config.h). */
#define LOCK_PER_INSTANCE 0x8u
/* It claims to wait only for a live holder: an acquire that ends busy says
 * another process holds ("Could not lock", "Timed out waiting", EAGAIN).  A
 * busy after a whole attempt in which nobody held, occupied or made any lock
 * object is a broken claim (no-escaped-error; K-ML-3). */
#define LOCK_BUSY_MEANS_HELD 0x10u
/* Its lock is a directory aged by its mtime (the stale judgment): every
 * entry anyone makes or removes inside it moves that, so the lock is as old
 * as its last lock object made or removed, whoever made it (mkdir-owner: a
 * reclaimer that dies after removing the dead holder's entry leaves a lock
 * that is young again).  The checker's stale judgments count from there.
 * Adapters whose library has a stale age carry it too: proper-lockfile ages
 * its directory by mtime, npm's lockfile its file by ctime, liblockfile its
 * file by age besides the pid; each reclaims a lock left by anyone, a live
 * maker included, once it is that old (a file has no entries inside). */
#define LOCK_AGE_BY_DIR 0x20u

/* A mutex the protocol takes.  Entry 0 is the lock itself (acquire to
 * release: EV_ACQUIRED .. EV_RELEASE_BEGIN); every other one is taken inside
 * acquire or release and journaled by the protocol (fsx_mutex:
 * EV_MUTEX_TAKE just after the step that took it, EV_MUTEX_DROP just before
 * the step that lets it go), so the checker judges exclusion on each. */
struct lock_mutex {
	const char *name; /* "lock", "recovery" */
	const char *what; /* one line: the object and what it serialises */
};
#define LOCK_MAX_MUTEXES 4

/* An error the protocol claims to absorb: ERR (0: any) failing CALL (an
 * fsx op; -1: any call) on PATH (core/point.h: FSX_PATH_LOCK the lock path
 * itself, FSX_PATH_ENTRY a name directly inside it, FSX_PATH_OTHER any other;
 * FSX_PATH_UNKNOWN: any path) inside OP never reaches the caller.  PATH tells
 * steps of one call apart: mkdir-owner absorbs EACCES from mkdir(L) (AT2) on
 * win32 and raises it from mkdir(L/entry) (AT3).  WHEN_PARAM (NULL: always)
 * limits the claim to runs where that param is WHEN_VALUE (form=acquire,
 * platform=win32). */
enum lock_op_kind { LOCK_OP_ACQUIRE, LOCK_OP_RELEASE };
struct lock_absorb {
	enum lock_op_kind op;
	int call;
	enum fsx_path path;
	int err;
	const char *when_param;
	int64_t when_value;
	const char *claim; /* the origin's words */
};

struct lock_ops {
	const char *name;    /* "mkdir-owner" */
	const char *origin;  /* "doflow 2.0.0, src/runtime/task-state.js" */
	const char *summary; /* one line */
	const char *claims;  /* what its comments claim, for `list protocols` */
	const struct param *params; /* terminated by a {NULL} entry */
	const char *const *points;  /* every fsx_point name it uses, NULL-terminated */
	unsigned flags;
	const struct lock_mutex *mutexes;  /* {NULL}-terminated; entry 0 the lock; NULL: the lock only */
	const struct lock_absorb *absorbs; /* {.claim = NULL}-terminated; NULL: no claim */
	int (*init)(struct lock *lk);
	int (*acquire)(struct lock *lk);
	int (*held)(struct lock *lk);
	int (*release)(struct lock *lk);
	int64_t (*stale_ms)(const struct lock *lk);       /* age after which a holder may be reclaimed; LS_NEVER if none */
	int64_t (*wait_budget_ms)(const struct lock *lk); /* longest one acquire() may wait by design */
};

/* claims.c: does LK's protocol claim to absorb ERR failing CALL (-1: not
 * known) on PATH (FSX_PATH_UNKNOWN: not known) in OP with LK's params?  1
 * yes, 0 no.  A claim keyed by call or path never covers an unknown one. */
int lock_absorbs(const struct lock *lk, enum lock_op_kind op, int call, enum fsx_path path, int err);
/* Its mutexes (at least the lock itself) and their count. */
const struct lock_mutex *lock_mutexes(const struct lock_ops *ops, unsigned *n);
/* `list protocols`: its mutexes, absorbed errors and busy claim, one line each. */
void lock_print_claims(FILE *f, const struct lock_ops *ops);

/* registry.c */
extern const struct lock_ops *const lock_registry[]; /* NULL-terminated */
const struct lock_ops *lock_find(const char *name);
/* Writes "a, b, c" (every known name) into buf. */
void lock_names(char *buf, size_t len);

/* params.c: shared by protocols and workloads. */
int param_index(const struct param *params, const char *name);
int param_count(const struct param *params);
/* Parse VALUE for P: numbers, ms with optional s/ms suffix, choice names.
 * Returns 0 or -1 (why filled). */
int param_parse(const struct param *p, const char *value, int64_t *out, char *why, size_t whylen);
/* Defaults, then overrides "K=V" that name one of these params (others are
 * left for the caller to match elsewhere), then PU_MS scaled by time_scale. */
int param_resolve(const struct param *params, int64_t *vals, const char *const *kv, unsigned nkv,
		  double time_scale, unsigned char *used, char *why, size_t whylen);
void param_format(const struct param *p, int64_t v, char *buf, size_t len);
/* A value list, --param K=A,B,..: worker w takes value w mod the list's length,
 * as `-p A,B` alternates protocols.  param_list_len: how many values KV holds
 * (1: a plain value); param_variants: the lcm of KV's list lengths (0 when
 * above 65536); param_lcm(a, b) likewise; param_kv_pick: variant V's "K=X"
 * into buf (-1 with why on a malformed or empty element). */
unsigned param_list_len(const char *kv);
unsigned param_variants(const char *const *kv, unsigned nkv);
unsigned param_lcm(unsigned a, unsigned b);
int param_kv_pick(const char *kv, unsigned v, char *buf, size_t len, char *why, size_t whylen);
/* param_resolve's values with PU_MS in us (x time_scale, rounded to the
 * nearest us; LS_NEVER stays): what lock_setup_exact takes.  A constant that
 * still rounds (a scaled value below or between whole us) says so on stderr,
 * once per constant and scale.  Same errors as param_resolve. */
int param_resolve_us(const struct param *params, int64_t *us, const char *const *kv, unsigned nkv,
		     double time_scale, char *why, size_t whylen);
/* ceil(us / 1000): a us constant as the whole ms hooks report; LS_NEVER stays. */
int64_t param_us_to_ms(int64_t us);

/* Fill lk for one worker: path = file + ".lock", params from vals, state
 * zeroed; lk->us from vals (PU_MS x 1000: exact when the scale kept whole ms). */
void lock_setup(struct lock *lk, const struct lock_ops *ops, const char *file,
		const int64_t *vals, unsigned worker, struct prng *rng);
/* After lock_setup: the exact scaled values (param_resolve_us) into lk->us;
 * NULL keeps lock_setup's. */
void lock_setup_exact(struct lock *lk, const int64_t *us);
/* Set param I to V (unscaled, as given): lk->param[I] and lk->us[I]. */
void lock_param_set(struct lock *lk, int i, int64_t v);

/* What a new process would not have, forgotten (explore: a worker whose
 * process lived through its crash): the protocols' process-wide memory
 * (lockfile-recorded's readings of the locks its module instances hold). */
void lock_forget_process(void);

/* The protocols. */
extern const struct lock_ops mkdir_legacy_ops;
extern const struct lock_ops mkdir_owner_ops;
extern const struct lock_ops lockfile_legacy_ops, lockfile_recorded_ops;
extern const struct lock_ops pidlock_ops;
extern const struct lock_ops flock_ops;
extern const struct lock_ops none_ops;

#ifdef __cplusplus
}
#endif
#endif
