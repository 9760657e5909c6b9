/*
 * fault.h - fault plans (minimal form: stall and crash at named points).
 *
 *   --fault KIND[@POINT][:KEY=VAL,...]
 *   KIND   stall | crash          (the rest of DESIGN.md's grammar comes with the fault engine)
 *   POINT  a point name; a trailing '*' (or any glob) matches a group; default '*'
 *   KEYS   p=PROB (default 1)  nth=N (fire on the Nth match only)  once (at most one firing per worker)
 *          for=300ms|2s|1.5stale (stall length; default 1stale)  workers=0,2,5-7
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

#include "../harness/prng.h"

#ifdef __cplusplus
extern "C" {
#endif

enum fault_kind { FK_NONE = 0, FK_STALL, FK_CRASH, FK__COUNT };

#define FAULT_MAX_RULES 32
#define FAULT_POINT_MAX 128

struct fault_rule {
	enum fault_kind kind;
	char point[FAULT_POINT_MAX]; /* glob */
	double p;                    /* probability per matching pass */
	uint64_t nth;                /* 0: every match; else only the nth (1-based) */
	int once;                    /* at most one firing per worker incarnation */
	int64_t for_ms;              /* stall: fixed length, or -1 when for_stale is used */
	double for_stale;            /* stall: multiple of the protocol's stale age */
	uint64_t workers[16];        /* bitmap of worker ids it applies to; all when workers_all */
	int workers_all;
	char spec[256];              /* as the user wrote it */
};

struct fault_plan {
	struct fault_rule rule[FAULT_MAX_RULES];
	unsigned n;
};

/* Per-worker counters of matches/firings, indexed like plan->rule. */
struct fault_state {
	uint64_t matches[FAULT_MAX_RULES];
	uint64_t fired[FAULT_MAX_RULES];
};

struct fault_action {
	enum fault_kind kind;  /* FK_NONE: nothing to do */
	int64_t stall_ms;      /* resolved length for FK_STALL */
	int rule;              /* index of the rule that fired */
};

const char *fault_kind_name(enum fault_kind k);

/* Parse one spec and append it to plan.  -1 with why = "bad fault spec 'x': <token>: reason". */
int fault_parse(struct fault_plan *plan, const char *spec, char *why, size_t whylen);
/* Does a rule's point glob match this point name? */
int fault_point_match(const char *glob, const char *point);
/* Decide at a point.  stale_ms resolves for=Nstale. */
struct fault_action fault_check(const struct fault_plan *plan, struct fault_state *st,
				struct prng *rng, unsigned worker, const char *point,
				int64_t stale_ms);

#ifdef __cplusplus
}
#endif
#endif
