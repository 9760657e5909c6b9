/*
 * fsx_win.c - the seam's Windows-like path rules (see fsx_seam.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "../core/arena.h"
#include "../core/journal.h"
#include "../core/hot.h"
#include "../core/prng.h"
#include "fault.h"
#include "fsx.h"
#include "fsx_seam.h"

/* Windows-like paths: this process's own open descriptors by path slot, so
 * "another worker has it open" can be told from "we do". */

static uint32_t win_fd_slot[WIN_FDS]; /* slot+1, 0 = not tracked */

/* ---- Windows-like paths ----
 * With the windows profile, the seam plays two Windows rules every worker
 * shares through the arena: a directory removed moments ago is "delete
 * pending" (mkdir of its path fails EPERM or EACCES for WIN_PENDING_MS), and
 * a path another worker has open cannot be removed or renamed (EACCES,
 * EPERM or EBUSY). */
#define WIN_PENDING_MS 5

static uint32_t win_slot(const char *path)
{
	return (uint32_t)(point_hash(path) % ARENA_WIN_SLOTS);
}

/* fsx_bind sets it from the plan, fsx_unbind clears it: a call asks one
 * variable on the hot page, not the plan pages away */
LS_HOT_DATA int fsx_win_on;

static int win_on(void)
{
	return fsx_win_on;
}

void fsx_win_note_removed(const char *path)
{
	if (win_on())
		atomic_store(&fsx_cur.arena->win_removed_ns[win_slot(path)], fsx_mono_ns());
}

int fsx_win_delete_pending(const char *path)
{
	if (!win_on())
		return 0;
	int64_t at = atomic_load(&fsx_cur.arena->win_removed_ns[win_slot(path)]);
	if (!at || fsx_mono_ns() - at > WIN_PENDING_MS * 1000000LL)
		return 0;
	int err = prng_below(fsx_cur.rng, 2) ? EPERM : EACCES;
	fsx_log_event(EV_FAULT, err, FK_ERRNO, (int64_t)point_hash("fs/mkdir"), 0);
	return err;
}

void fsx_win_forget(void)
{
	memset(win_fd_slot, 0, sizeof win_fd_slot);
}

LS_HOT void fsx_win_note_open(int fd, const char *path)
{
	if (!win_on() || fd < 0 || fd >= WIN_FDS)
		return;
	uint32_t slot = win_slot(path);
	win_fd_slot[fd] = slot + 1;
	atomic_fetch_add(&fsx_cur.arena->win_open[slot], 1);
}

LS_HOT void fsx_win_note_close(int fd)
{
	if (!win_on() || fd < 0 || fd >= WIN_FDS || !win_fd_slot[fd])
		return;
	atomic_fetch_sub(&fsx_cur.arena->win_open[win_fd_slot[fd] - 1], 1);
	win_fd_slot[fd] = 0;
}

int fsx_win_sharing(const char *path)
{
	if (!win_on())
		return 0;
	uint32_t slot = win_slot(path);
	int32_t mine = 0;
	for (int fd = 0; fd < WIN_FDS; fd++)
		mine += win_fd_slot[fd] == slot + 1;
	if (atomic_load(&fsx_cur.arena->win_open[slot]) - mine <= 0)
		return 0;
	static const int errs[] = { EACCES, EPERM, EBUSY };
	int err = errs[prng_below(fsx_cur.rng, 3)];
	fsx_log_event(EV_FAULT, err, FK_ERRNO, (int64_t)point_hash("fs/unlink"), 0);
	return err;
}
