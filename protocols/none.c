/*
 * none.c - the busted control: acquire "succeeds" having taken nothing.
 *
 * Like locktorture's lock_busted, it exists so that a run can prove the
 * checker has teeth: with two or more workers the exclusion and lost-write
 * invariants must fail.  Kept in the registry so `-p none` works, and so the
 * conformance test covers it.
 *
 * OS facts it relies on: none.  It makes no file-system call at all (unless
 * spin is set: then stats of <file>.lock), so it never creates anything at
 * <file>.lock.
 *
 *   acquire:  [spin] stat(<file>.lock) `spin` times, no sleep: no-livelock's control
 *             "none/acquire/after-take"  -> HELD (nothing taken)
 *   release:  "none/release/after-give" (nothing given back)
 *   held:     always 1
 */
#include <assert.h>

#include "../faults/fsx.h"
#include "lock.h"

enum { NO_STALE, NO_SPIN, NO_NPARAMS };

static const struct param no_params[] = {
	[NO_STALE] = { "stale_ms", 10000, PU_MS, NULL,
		       "not a stale age (nothing is held): sizes faults such as for=1.5stale" },
	[NO_SPIN] = { "spin", 0, PU_COUNT, NULL,
		      "acquire first stats <file>.lock this many times without a sleep (a retry loop "
		      "that lost its wait: no-livelock must catch 10000 and more)" },
	[NO_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(NO_NPARAMS <= LS_MAX_PARAMS, "too many none params");

/* Point names are written once, in no_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum no_point {
	NO_PT_ACQUIRE_AFTER_TAKE,
	NO_PT_RELEASE_AFTER_GIVE,
	NO_NPOINTS
};

static const char *const no_points[] = {
	[NO_PT_ACQUIRE_AFTER_TAKE] = "none/acquire/after-take",
	[NO_PT_RELEASE_AFTER_GIVE] = "none/release/after-give",
	[NO_NPOINTS] = NULL,
};
#define PT(name) no_points[NO_PT_##name]

static int no_init(struct lock *lk)
{
	(void)lk;
	return 0;
}

static int no_acquire(struct lock *lk)
{
	for (int64_t i = 0; i < lk->param[NO_SPIN]; i++) {
		struct fsx_stat st;
		(void)fsx_stat(lk->path, &st);
	}
	lk->last_error = 0;
	fsx_point(PT(ACQUIRE_AFTER_TAKE));
	return 0;
}

static int no_held(struct lock *lk)
{
	(void)lk;
	return 1;
}

static int no_release(struct lock *lk)
{
	(void)lk;
	fsx_point(PT(RELEASE_AFTER_GIVE));
	return 0;
}

static int64_t no_stale_ms(const struct lock *lk)
{
	(void)lk;
	return LS_NEVER;
}

static int64_t no_wait_budget_ms(const struct lock *lk)
{
	(void)lk;
	return 0; /* never waits */
}

const struct lock_ops none_ops = {
	.name = "none",
	.origin = "control: takes nothing",
	.summary = "busted control: acquire succeeds without taking anything; the checker must "
		   "catch it",
	.claims = "None: any run with two or more workers should fail exclusion (and, with the "
		  "update workload, no-lost-writes). A pass means the checker has no teeth.",
	.params = no_params,
	.points = no_points,
	.flags = 0,
	.init = no_init,
	.acquire = no_acquire,
	.held = no_held,
	.release = no_release,
	.stale_ms = no_stale_ms,
	.wait_budget_ms = no_wait_budget_ms,
};
