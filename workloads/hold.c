/*
 * hold.c - the `hold` workload: acquire, hold for a chosen time, release.
 *
 * The lightest workload: it measures what a protocol costs per hand-over and
 * exercises exclusion, own-release and liveness without a state file.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdatomic.h>

#include "../faults/fsx.h"
#include "../core/arena.h"
#include "../core/hot.h"
#include "workload.h"

enum { HOLD_MS, HOLD_JITTER };

static const struct param hold_params[] = {
	{ "hold_ms", 0, PU_MS, NULL, "how long each holder keeps the lock (scaled by --time-scale)" },
	{ "hold_jitter", 0, PU_COUNT, NULL, "add 0..hold_jitter percent of hold_ms at random" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

/* Point names are written once, in hold_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum hold_point {
	HOLD_PT_HOLD_AFTER_ACQUIRE,
	HOLD_PT_HOLD_BEFORE_RELEASE,
	HOLD_NPOINTS
};

static const char *const hold_points[] = {
	[HOLD_PT_HOLD_AFTER_ACQUIRE] = "hold/hold/after-acquire",
	[HOLD_PT_HOLD_BEFORE_RELEASE] = "hold/hold/before-release",
	[HOLD_NPOINTS] = NULL,
};
#define PT(name) hold_points[HOLD_PT_##name]

/* The lock lives beside the (never written) state file: make its folder. */
static int hold_setup(const int64_t *wparam, const char *state_file)
{
	(void)wparam;
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", state_file);
	return fsx_mkdir_p(dirname(dir));
}

LS_HOT static int hold_op(struct worker *w)
{
	if (worker_acquire(w, 0) != 0)
		return 0;
	fsx_point(PT(HOLD_AFTER_ACQUIRE));
	/* in us: exact at any --time-scale */
	int64_t us = w->wparam_us ? w->wparam_us[HOLD_MS] : w->wparam[HOLD_MS] * 1000;
	if (us > 0 && w->wparam[HOLD_JITTER] > 0)
		us += (int64_t)prng_below(&w->rng, (uint64_t)(us * w->wparam[HOLD_JITTER] / 100 + 1));
	if (us > 0) {
		/* the watchdog must not count a chosen hold as lost progress */
		atomic_store(&w->arena->w[w->id].excuse_ns, fsx_mono_ns() + us * 1000LL);
		fsx_sleep_us(us);
	}
	fsx_point(PT(HOLD_BEFORE_RELEASE));
	worker_release(w);
	return 0;
}

const struct workload_ops hold_workload = {
	.name = "hold",
	.summary = "acquire, hold for hold_ms, release (no state file)",
	.params = hold_params,
	.points = hold_points,
	.flags = 0,
	.setup = hold_setup,
	.op = hold_op,
};
