/*
 * fault.h - fault plans: the grammar of DESIGN.md "Fault plans".
 *
 *   --fault KIND[@POINT][:KEY=VAL,...]
 *   POINT  a point name; a glob ('*' matches a group); default '*' (for errno: 'fs/<all>')
 *   KEYS   p=PROB (default 1)  nth=N (fire on the Nth match only)  once (at most one firing per worker; both count across respawns)
 *          for=300ms|2s|1.5stale  err=EPERM (any errno by name)  path=GLOB (calls on matching paths only)
 *          workers=0,2,5-7  bytes=K (short-write)  every=DUR (sweep period)  by=+-DUR (skew)
 *          res=1s|2s (coarse-mtime)  host=N (skew: the workers on host N of --hosts, 0 first)
 *
 *   kind          where it acts                         what it does
 *   stall         any point                             the worker pauses `for` (default 1stale)
 *   stop          any point                             the driver SIGSTOPs the worker, SIGCONTs it after `for`
 *   crash         any point                             journal the fault, then SIGKILL itself
 *   errno         fs/<call>                             the call fails with `err` without acting
 *   short-write   fs/write                              `bytes` bytes are written, then the call fails with `err` (ENOSPC);
 *                                                       with for=DUR the write is split instead: `bytes` bytes land,
 *                                                       the worker pauses DUR, then the rest lands and the call succeeds
 *                                                       (a write loop whose second write(2) comes late: a reader
 *                                                       meanwhile sees a half-written line)
 *   sweep         the run (a sweeper process)           every `every` (default 5ms), remove empty folders in the work dir
 *   skew          the worker (at start)                 its clock (fsx_now_ms) runs `by` ahead (+) or behind (-)
 *   coarse-mtime  the worker (at start)                 file times seen through fsx_stat rounded down to `res` (1s, 2s)
 *   pid-reuse     the worker (at start)                 its records name the pid of a live unrelated process
 *   split-identity the worker (at start)                fstat(fd) and lstat(path) report different identities
 *                                                       for one file, as a browser tab's VFS does
 *   other-host    the worker (at start)                 it plays a second machine on a shared file system:
 *                                                       its hostname reads return "<hostname>-other"
 *
 * Decisions draw from the worker's own PRNG (seeded from run seed and worker
 * id), never a shared or clock-seeded one: the same seed gives the same draws.
 *
 * Calling sequence: fault_parse() each spec into a plan (driver, before
 * fork); in the worker, fault_check(plan, point, ...) at each point returns
 * what to do; fsx acts on it (journal EV_FAULT, then stall or SIGKILL).
 */
#ifndef LS_FAULT_H
#define LS_FAULT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../core/prng.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fault_kind {
	FK_NONE = 0, FK_STALL, FK_CRASH, FK_STOP, FK_ERRNO, FK_SHORT_WRITE,
	FK_SWEEP, FK_SKEW, FK_COARSE_MTIME, FK_PID_REUSE, FK_SPLIT_ID, FK_OTHER_HOST,
	FK__COUNT
};

#define FAULT_MAX_RULES 32
#define FAULT_POINT_MAX 128

struct fault_rule {
	enum fault_kind kind;
	char point[FAULT_POINT_MAX]; /* glob */
	double p;                    /* probability per matching pass */
	uint64_t nth;                /* 0: every match; else only the nth (1-based) */
	int once;                    /* at most one firing per worker (across respawns) */
	int64_t for_ms;              /* stall: fixed length, or -1 when for_stale is used */
	double for_stale;            /* stall: multiple of the protocol's stale age */
	uint64_t workers[16];        /* bitmap of worker ids it applies to; all when workers_all */
	int workers_all;
	int err;                     /* errno, short-write: the errno (default EIO / ENOSPC) */
	char path[FAULT_POINT_MAX];  /* glob on the call's path; "" = any */
	int64_t bytes;               /* short-write: bytes written before the error (or the pause) */
	int split;                   /* short-write with for=: pause for_ms/for_stale, then write the rest (err 0) */
	int64_t every_ms;            /* sweep: period */
	int64_t by_ms;               /* skew: offset (signed) */
	unsigned on_host;            /* skew host=N: N + 1 (the run narrows workers to that host's); 0 any */
	int64_t res_ms;              /* coarse-mtime: resolution */
	char spec[256];              /* as the user wrote it */
};

struct fault_plan {
	struct fault_rule rule[FAULT_MAX_RULES];
	unsigned n;
	int windows;                 /* Windows-like paths: delete-pending mkdir, sharing rules (in the seam) */
	char profile[32];            /* --faults NAME, as given ("" if none) */
};

/* Per-worker counters of matches/firings, indexed like plan->rule. */
struct fault_state {
	uint64_t matches[FAULT_MAX_RULES];
	uint64_t fired[FAULT_MAX_RULES];
};

/* One run's counters, one per worker, in a shared anonymous mapping made
 * before fork: nth= and once count across a worker's respawns, and the
 * driver sees what external workers' rules matched.  NULL and errno on
 * failure.  fault_states_destroy(NULL, n) does nothing. */
struct fault_state *fault_states_create(unsigned nworkers);
void fault_states_destroy(struct fault_state *st, unsigned nworkers);

struct fault_action {
	enum fault_kind kind;  /* FK_NONE: nothing to do */
	int64_t stall_ms;      /* resolved length for FK_STALL and FK_STOP, and a split FK_SHORT_WRITE's pause */
	int err;               /* FK_ERRNO, FK_SHORT_WRITE (0: split, not failed) */
	int64_t bytes;         /* FK_SHORT_WRITE */
	int rule;              /* index of the rule that fired */
};

const char *fault_kind_name(enum fault_kind k);

/* Parse one spec and append it to plan.  -1 with why = "bad fault spec 'x': <token>: reason". */
int fault_parse(struct fault_plan *plan, const char *spec, char *why, size_t whylen);
/* Does a rule's point glob match this point name? */
int fault_point_match(const char *glob, const char *point);
/* Decide at a point (point-level kinds: stall, stop, crash; at fs/<call> points
 * also errno and short-write, matched against path when the rule has one).
 * path may be NULL (protocol points).  stale_ms resolves for=Nstale.
 * Process- and run-level kinds (sweep, skew, coarse-mtime, pid-reuse) never
 * fire here: ask fault_process_rule for them. */
/* 1 when some point-level rule can match a protocol step (a point that is
 * not "fs/<call>"): a glob not starting with a literal "fs/".  The seam works
 * this out once per plan, so steps cost nothing when only calls are armed. */
int fault_plan_steps(const struct fault_plan *plan);
/* The rules that apply to WORKER (workers=, host=): bit i for rule i.  A
 * rule outside it never counts, draws or fires for that worker
 * (fault_check_mask skips it first), so the seam leaves it out of the masks
 * it works out at bind: a plan aimed at other workers costs a mask test. */
uint32_t fault_worker_mask(const struct fault_plan *plan, unsigned worker);
/* fault_plan_steps over the rules in MASK only. */
int fault_plan_steps_mask(const struct fault_plan *plan, uint32_t mask);
struct fault_action fault_check(const struct fault_plan *plan, struct fault_state *st,
				struct prng *rng, unsigned worker, const char *point,
				const char *path, int64_t stale_ms);
/* The same decision with the point-glob matching done ahead: mask has bit i
 * set when rule i's point glob matches this point (fault_point_mask).  The
 * seam caches masks per point name, so a point costs no fnmatch. */
uint32_t fault_point_mask(const struct fault_plan *plan, const char *point);
struct fault_action fault_check_mask(const struct fault_plan *plan, struct fault_state *st,
				     struct prng *rng, unsigned worker, const char *point, uint32_t mask,
				     const char *path, int64_t stale_ms);
/* The first rule of KIND that applies to this worker, or NULL. */
const struct fault_rule *fault_process_rule(const struct fault_plan *plan, enum fault_kind kind,
					    unsigned worker);
/* errno by name ("EPERM") or number; -1 if unknown. */
int fault_errno_parse(const char *name);
/* Expand a profile (standard, stalls, crashes, errnos, windows, none) into
 * rules appended to plan: generic globs over every point of the run's
 * protocols ("*" and "fs/<call>"), never tuned to one protocol.  -1 with why. */
int fault_profile(struct fault_plan *plan, const char *name, char *why, size_t whylen);
/* One paragraph per profile: exactly what it enables (for `lockstorm list faults`). */
void fault_profiles_describe(FILE *f);

#ifdef __cplusplus
}
#endif
#endif
