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
	char file[PATH_MAX];          /* the file the lock protects */
	char path[PATH_MAX];          /* the lock object: <file>.lock */
	int64_t param[LS_MAX_PARAMS]; /* resolved values, in ops->params order; PU_MS already scaled */
	unsigned worker;
	struct prng *rng;             /* the worker's stream (entry names, ...) */
	int last_error;               /* errno of the last failed step, for reports */
	union {
		unsigned char bytes[2048];
		max_align_t align;
	} state;                      /* protocol's per-run state; see each protocol's struct */
};

#define LOCK_HAS_HELD 0x1u /* held() really checks (update writes only while it says 1) */
#define LOCK_EXTERNAL 0x2u /* an adapter process runs the lock (protocols/external.h): hooks never called */
/* It claims to see a dead holder (asks whether the recorded pid lives) and
 * reclaims its lock at once; without it, a dead holder's lock is promised
 * only to be reclaimed once it is stale_ms old (the checker's liveness waits
 * that long before it blames a waiter's time-out on the dead holder). */
#define LOCK_DEAD_AT_ONCE 0x4u
/* Its state is per module instance (volter): two instances in one process
 * are two holders with one pid (--param instances=2, workloads/config.h). */
#define LOCK_PER_INSTANCE 0x8u

struct lock_ops {
	const char *name;    /* "mkdir-owner" */
	const char *origin;  /* "doflow 2.0.0, src/runtime/task-state.js" */
	const char *summary; /* one line */
	const char *claims;  /* what its comments claim, for `list protocols` */
	const struct param *params; /* terminated by a {NULL} entry */
	const char *const *points;  /* every fsx_point name it uses, NULL-terminated */
	unsigned flags;
	int (*init)(struct lock *lk);
	int (*acquire)(struct lock *lk);
	int (*held)(struct lock *lk);
	int (*release)(struct lock *lk);
	int64_t (*stale_ms)(const struct lock *lk);       /* age after which a holder may be reclaimed; LS_NEVER if none */
	int64_t (*wait_budget_ms)(const struct lock *lk); /* longest one acquire() may wait by design */
};

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

/* Fill lk for one worker: path = file + ".lock", params from vals, state zeroed. */
void lock_setup(struct lock *lk, const struct lock_ops *ops, const char *file,
		const int64_t *vals, unsigned worker, struct prng *rng);

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
