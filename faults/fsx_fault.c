/*
 * fsx_fault.c - the seam acting on fault decisions (see fsx_seam.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <fiu.h>

#include "../core/arena.h"
#include "../core/journal.h"
#include "../core/sched.h"
#include "fault.h"
#include "fsx.h"
#include "fsx_seam.h"

static const char *cur_path;          /* the path of the call being decided (for path=GLOB) */
static const char *cur_point;         /* the point being decided (libfiu hands the callback the
				       * name it was enabled under, "*", not the point's own) */
static struct fault_action pending;   /* what the libfiu callback decided */

/* Which rules' point globs match a point, cached by the name's address
 * (point names are string literals, and so are the fs/<call> names). */
#define MASK_SLOTS 1024
static struct {
	const char *name;
	uint32_t mask;
} mask_cache[MASK_SLOTS];

uint32_t fsx_rule_mask;

/* Only the rules that apply to this worker (fsx_rule_mask): the others
 * would be skipped by fault_check_mask before they count or draw. */
static uint32_t point_mask(const char *name)
{
	size_t i = ((uintptr_t)name >> 3) % MASK_SLOTS;
	for (size_t k = 0; k < MASK_SLOTS; k++, i = (i + 1) % MASK_SLOTS) {
		if (mask_cache[i].name == name)
			return mask_cache[i].mask;
		if (!mask_cache[i].name) {
			mask_cache[i].name = name;
			mask_cache[i].mask = fault_point_mask(fsx_cur.faults, name) & fsx_rule_mask;
			return mask_cache[i].mask;
		}
	}
	return fault_point_mask(fsx_cur.faults, name) & fsx_rule_mask; /* full: no caching */
}

static int xf_pid = -1; /* explore: a pid choice's answer for this step's kill -0: 1 alive, 0 dead, -1 none */

void fsx_fault_forget(void)
{
	memset(mask_cache, 0, sizeof mask_cache);
	xf_pid = -1;
}

/* The one external callback every point goes through: libfiu asks, the
 * worker's own PRNG answers (never libfiu's, which re-seeds from the clock
 * after fork). */
int fsx_fault_decide(const char *name, int *failnum, void **failinfo, unsigned int *flags)
{
	(void)name;
	(void)failnum;
	(void)failinfo;
	(void)flags;
	pending = fault_check_mask(fsx_cur.faults, fsx_cur.fstate, fsx_cur.rng, fsx_cur.worker, cur_point,
				   point_mask(cur_point), cur_path, fsx_cur.stale_ms);
	return pending.kind != FK_NONE;
}

int64_t fsx_short_write_left = -1; /* short-write: bytes still allowed, then pending.err */
int fsx_short_write_err;           /* 0: a split write (the rest after the pause) */
int64_t fsx_short_write_pause_ms;  /* split: the pause between the two parts */

void fsx_fault_excuse(struct arena_worker *aw, int64_t until)
{
	atomic_store(&aw->excuse_ns, until);
	int64_t cur = atomic_load(&fsx_cur.arena->stall_until_ns);
	while (cur < until && !atomic_compare_exchange_weak(&fsx_cur.arena->stall_until_ns, &cur, until))
		;
}

/* Act on a fault decision at a point: journal it first, so the record
 * survives the SIGKILL that follows or the stall that may outlive the run.
 * Returns the errno to inject into the call (0: go on). */
int fsx_fault_act(const char *point, const char *path)
{
	/* A point no rule's glob matches cannot fire: no need to ask (the
	 * answer, and the PRNG stream, would be the same) */
	if (!point_mask(point))
		return 0;
	cur_path = path;
	cur_point = point;
	int fire = fiu_fail(point);
	cur_path = NULL;
	if (!fire)
		return 0;
	struct fault_action act = pending;
	if (act.kind == FK_NONE)
		return 0;
	int saved = errno;
	uint64_t h = point_hash(point);
	struct arena_worker *aw = &fsx_cur.arena->w[fsx_cur.worker];
	if (act.kind == FK_STALL) {
		int64_t until = fsx_mono_ns() + act.stall_ms * 1000000LL;
		fsx_fault_excuse(aw, until);
		atomic_fetch_add_explicit(&aw->stalls, 1, memory_order_relaxed);
		fsx_log_event(EV_FAULT, 0, FK_STALL, (int64_t)h, act.stall_ms);
		struct timespec ts = { act.stall_ms / 1000, (act.stall_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		fsx_note_progress(point);
	} else if (act.kind == FK_STOP) {
		int64_t until = fsx_mono_ns() + act.stall_ms * 1000000LL;
		fsx_fault_excuse(aw, until);
		atomic_fetch_add_explicit(&aw->stalls, 1, memory_order_relaxed);
		fsx_log_event(EV_FAULT, 0, FK_STOP, (int64_t)h, act.stall_ms);
		atomic_store(&aw->stop_until_ns, until); /* the driver SIGCONTs us then */
		raise(SIGSTOP);
		fsx_note_progress(point);
	} else if (act.kind == FK_ERRNO) {
		fsx_log_event(EV_FAULT, act.err, FK_ERRNO, (int64_t)h, 0);
		errno = saved;
		return act.err;
	} else if (act.kind == FK_SHORT_WRITE) {
		fsx_log_event(EV_FAULT, act.err, FK_SHORT_WRITE, (int64_t)h, act.bytes);
		fsx_short_write_left = act.bytes;
		fsx_short_write_err = act.err;
		fsx_short_write_pause_ms = act.err ? 0 : act.stall_ms;
	} else if (act.kind == FK_CRASH) {
		atomic_fetch_add_explicit(&aw->crashes, 1, memory_order_relaxed);
		fsx_log_event(EV_FAULT, 0, FK_CRASH, (int64_t)h, 0);
		kill(getpid(), SIGKILL);
		for (;;)
			pause();
	}
	errno = saved;
	return 0;
}

/* ---- explore: the fault the controller chose for a step ----
 * The explorer decides at a decision point (explore/engine.c) and hands the
 * choice over with the grant (sched_xf); it is applied here, through the same
 * journal records and short-write counters as a fault plan's. */

int fsx_xf_apply(int op)
{
	struct sched_xf *f = &sched_xf;
	int saved = errno, inj = 0;
	uint64_t h = point_hash(fsx_op_point((enum fsx_op)op));
	switch (f->kind) {
	case SXF_ERRNO: /* a compound step (read_file, write_file): its first call */
		fsx_log_event(EV_FAULT, f->err, FK_ERRNO, (int64_t)h, 0);
		inj = f->err;
		break;
	case SXF_SHORT:
	case SXF_SPLIT:
		if (op != FSX_WRITE)
			return 0; /* write_file: the write after its open */
		fsx_log_event(EV_FAULT, f->kind == SXF_SHORT ? f->err : 0, FK_SHORT_WRITE, (int64_t)h, f->bytes);
		fsx_short_write_left = f->bytes;
		fsx_short_write_err = f->kind == SXF_SHORT ? f->err : 0;
		fsx_short_write_pause_ms = 0;
		break;
	case SXF_PID_ALIVE:
	case SXF_PID_DEAD:
		if (op != FSX_KILL)
			return 0;
		xf_pid = f->kind == SXF_PID_ALIVE;
		fsx_log_event(EV_FAULT, xf_pid ? 0 : ESRCH, FK_PID_REUSE, (int64_t)h, xf_pid);
		break;
	default:
		break;
	}
	f->kind = SXF_NONE;
	errno = saved;
	return inj;
}

void fsx_xf_rest(int fd, const char *path)
{
	fsx_vt_stamp_fd(fd); /* the first part landed: a reader sees it now */
	sched_result(0, 0);
	sched_step(FSX_WRITE, path, "the rest");
}

const char *fsx_xf_pid_name(pid_t pid)
{
	static char buf[24];
	snprintf(buf, sizeof buf, "%d", (int)pid);
	return buf;
}

int fsx_xf_pid_answer(int r)
{
	if (xf_pid < 0)
		return r;
	r = xf_pid ? 0 : -1;
	xf_pid = -1;
	return r;
}

int fsx_xf_other_host(char *buf, size_t len)
{
	char real[256] = "";
	gethostname(real, sizeof real - 1);
	if ((size_t)snprintf(buf, len, "%s-other", real) >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}
