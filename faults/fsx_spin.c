/*
 * fsx_spin.c - no-livelock on a real run (see fsx_seam.h): each worker's
 * seam calls since its last sleep, counted on the wrappers' fast path
 * against a mark (fsx_enter: one add and one compare).  At half the limit
 * the op is looked at (a new op starts the count again) and the clock read;
 * at FSX_SPIN_CALLS one EV_SPIN, once per op.  Explore judges its steps
 * instead (check/livelock.c): never armed there.
 */
#include <stdint.h>
#include <time.h>

#include "../core/journal.h"
#include "../core/hot.h"
#include "fsx.h"
#include "fsx_seam.h"

LS_HOT_DATA uint64_t fsx_spin_calls, fsx_spin_mark = FSX_SPIN_NEVER;
static uint64_t half_ns;
static uint32_t spin_op;
static int told; /* this op's EV_SPIN is written */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void fsx_spin_rearm(void)
{
	fsx_spin_calls = 0;
	fsx_spin_mark = fsx_bound && !fsx_sched && fsx_cur.journal ? FSX_SPIN_CALLS / 2 : FSX_SPIN_NEVER;
	spin_op = fsx_cur.op ? *fsx_cur.op : 0;
	told = 0;
}

void fsx_spin_mark_reached(void)
{
	uint32_t op = fsx_cur.op ? *fsx_cur.op : 0;
	if (op != spin_op) { /* another op since: count it from here */
		fsx_spin_rearm();
		return;
	}
	if (told) { /* told: look again at the op in half a limit */
		fsx_spin_mark = fsx_spin_calls + FSX_SPIN_CALLS / 2;
		return;
	}
	if (fsx_spin_calls < FSX_SPIN_CALLS) {
		half_ns = now_ns();
		fsx_spin_mark = FSX_SPIN_CALLS;
		return;
	}
	told = 1;
	fsx_spin_mark = fsx_spin_calls + FSX_SPIN_CALLS / 2;
	fsx_log_event(EV_SPIN, 0, (int64_t)half_ns, (int64_t)fsx_spin_calls, 0);
}
