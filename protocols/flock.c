/*
 * flock.c - the control that is never caught: a kernel lock on a lock file.
 *
 * OS facts it relies on:
 *   - flock(2) locks belong to the open file description.  LOCK_EX blocks
 *     until no other description holds the lock, and the kernel drops the
 *     lock when the last descriptor of the description closes - including
 *     when the holder is SIGKILLed.  So there is no stale age, no reclaim and
 *     no way for one process to remove another's lock: exclusion holds by
 *     construction, and a crashed holder frees the lock at once.
 *   - A stall of the holder blocks everyone (no liveness bound but the
 *     holder's own progress); that is the price of never being caught.
 *   - The lock file itself is never removed: removing it would let a new
 *     opener lock a different inode (the classic unlink race).  O_CLOEXEC
 *     keeps the lock from leaking into exec'd children.
 *
 *   acquire:  open(<file>.lock, O_RDWR|O_CREAT|O_CLOEXEC)   "flock/acquire/after-open"
 *             flock(fd, LOCK_EX), EINTR retried             "flock/acquire/after-flock"
 *             -> HELD
 *   release:  "flock/release/before-unlock"  flock(fd, LOCK_UN); close(fd)
 *   held:     always 1 (a kernel lock cannot be lost while the fd is open)
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>

#include "../faults/fsx.h"
#include "lock.h"

enum { FL_STALE, FL_WAIT, FL_NPARAMS };

static const struct param fl_params[] = {
	[FL_STALE] = { "stale_ms", 10000, PU_MS, NULL,
		       "not a stale age (flock never goes stale): sizes faults such as for=1.5stale" },
	[FL_WAIT] = { "wait_ms", 10000, PU_MS, NULL,
		      "the wait budget the watchdog grants one acquire (LOCK_EX blocks)" },
	[FL_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(FL_NPARAMS <= LS_MAX_PARAMS, "too many flock params");

/* Point names are written once, in fl_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum fl_point {
	FL_PT_ACQUIRE_AFTER_OPEN,
	FL_PT_ACQUIRE_AFTER_FLOCK,
	FL_PT_RELEASE_BEFORE_UNLOCK,
	FL_NPOINTS
};

static const char *const fl_points[] = {
	[FL_PT_ACQUIRE_AFTER_OPEN] = "flock/acquire/after-open",
	[FL_PT_ACQUIRE_AFTER_FLOCK] = "flock/acquire/after-flock",
	[FL_PT_RELEASE_BEFORE_UNLOCK] = "flock/release/before-unlock",
	[FL_NPOINTS] = NULL,
};
#define PT(name) fl_points[FL_PT_##name]

/* Per-run state, in lk->state. */
struct fl_state {
	int fd;   /* the locked descriptor, when open */
	int open; /* fd is ours (a zeroed state must not mean fd 0) */
};
static_assert(sizeof(struct fl_state) <= sizeof(((struct lock *)0)->state),
	      "struct fl_state does not fit in struct lock's state");

static struct fl_state *fl_state(struct lock *lk)
{
	return (struct fl_state *)lk->state.bytes;
}

static int fl_init(struct lock *lk)
{
	fl_state(lk)->open = 0;
	fl_state(lk)->fd = -1;
	return 0;
}

static int fl_acquire(struct lock *lk)
{
	struct fl_state *st = fl_state(lk);
	int fd, r, err;

	lk->last_error = 0;
	fd = fsx_open(lk->path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
	if (fd < 0)
		goto out_err;
	fsx_point(PT(ACQUIRE_AFTER_OPEN));

	while ((r = fsx_flock(fd, LOCK_EX)) != 0 && errno == EINTR)
		;
	if (r != 0)
		goto out_close_fd;
	fsx_point(PT(ACQUIRE_AFTER_FLOCK));

	st->fd = fd;
	st->open = 1;
	return 0;

out_close_fd:
	err = errno;
	fsx_close(fd);
	errno = err;
out_err:
	lk->last_error = errno;
	return -1;
}

static int fl_held(struct lock *lk)
{
	(void)lk;
	return 1;
}

static int fl_release(struct lock *lk)
{
	struct fl_state *st = fl_state(lk);
	int r = 0, err = 0;

	if (!st->open)
		return 0;
	fsx_point(PT(RELEASE_BEFORE_UNLOCK));
	if (fsx_flock(st->fd, LOCK_UN) != 0) {
		r = -1;
		err = errno;
	}
	/* Closing drops the lock whatever LOCK_UN did. */
	if (fsx_close(st->fd) != 0 && r == 0) {
		r = -1;
		err = errno;
	}
	st->open = 0;
	st->fd = -1;
	if (r) {
		lk->last_error = err;
		errno = err;
	}
	return r;
}

static int64_t fl_stale_ms(const struct lock *lk)
{
	(void)lk;
	return LS_NEVER;
}

static int64_t fl_wait_budget_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[FL_WAIT]);
}

static const struct lock_absorb fl_absorbs[] = {
	{ LOCK_OP_ACQUIRE, FSX_FLOCK, FSX_PATH_UNKNOWN, EINTR, NULL, 0, "an interrupted LOCK_EX wait is retried" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops flock_ops = {
	.name = "flock",
	.origin = "control: flock(2) on <file>.lock",
	.summary = "kernel advisory lock on a lock file; freed by the kernel when the holder "
		   "dies; never stale",
	.claims = "Exclusion holds by construction: the kernel grants LOCK_EX to one open file "
		  "description at a time and drops it when the holder's last descriptor closes, "
		  "so no invariant should ever fail under it.",
	.params = fl_params,
	.points = fl_points,
	.flags = LOCK_BUSY_MEANS_HELD, /* it blocks in the kernel until the holder lets go */
	.absorbs = fl_absorbs,
	.init = fl_init,
	.acquire = fl_acquire,
	.held = fl_held,
	.release = fl_release,
	.stale_ms = fl_stale_ms,
	.wait_budget_ms = fl_wait_budget_ms,
};
