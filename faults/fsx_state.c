/*
 * fsx_state.c - the binding every piece of the seam reads (faults/fsx_seam.h):
 * this process's fsx_binding, the explore scheduler and its compound steps,
 * the seam's clock, and the two records every piece makes (a journal event, a
 * progress tick).
 *
 * It is the bottom of the seam's files: fsx.c (the wrappers) calls
 * fsx_fault.c, fsx_obj.c, fsx_win.c and fsx_vt.c, and all of them call here;
 * nothing here calls back up.
 */
#include "fsx.h"

#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "../core/arena.h"
#include "../core/hot.h"
#include "../core/journal.h"
#include "../core/sched.h"
#include "fsx_seam.h"

LS_HOT_DATA struct fsx_binding fsx_cur;
LS_HOT_DATA int fsx_bound;
size_t fsx_lock_path_len;
LS_HOT_DATA struct sched *fsx_sched;

/* Explore mode: how deep inside a compound call (read_file, write_file,
 * mkdir_p) we are: a compound call is one step. */
LS_HOT_DATA int fsx_compound;

int64_t fsx_mono_ns(void)
{
	if (fsx_sched) /* never 0: 0 means "none" in places */
		return 1000000000LL + sched_now_ns();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

uint64_t fsx_log_event(int type, int err, int64_t a, int64_t b, int64_t c)
{
	return journal_log(fsx_cur.journal, type, fsx_cur.op ? *fsx_cur.op : 0, err, a, b, c);
}

/* Tell the watchdog we moved: a tick, not a clock read (points are hot). */
void fsx_note_progress(const char *point)
{
	struct arena_worker *aw = &fsx_cur.arena->w[fsx_cur.worker];
	atomic_store_explicit(&aw->progress, atomic_load_explicit(&aw->progress, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&aw->last_point, (uint64_t)(uintptr_t)point, memory_order_relaxed);
}

/* Explore mode: a whole-file read or write is one step. */
int fsx_compound_begin(int op, const char *path)
{
	if (!fsx_sched || fsx_compound || !fsx_bound)
		return 0;
	sched_step(op, path, NULL);
	fsx_compound++;
	return 1;
}

void fsx_compound_end(int own, int r)
{
	if (!own)
		return;
	int err = errno;
	fsx_compound--;
	sched_result(r, err);
	errno = err;
}

int fsx_path_plain(const char *p)
{
	if (p[0] != '/')
		return 0;
	for (const char *c = p; c;) {
		const char *part = c + 1, *next = strchr(part, '/');
		size_t n = next ? (size_t)(next - part) : strlen(part);
		if (n == 0 || (part[0] == '.' && (n == 1 || (n == 2 && part[1] == '.'))))
			return 0;
		c = next;
	}
	return 1;
}
