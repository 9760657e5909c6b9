/*
 * mkdir_legacy.c - doflow 2.0.0-beta.5's task-state lock (PROTOCOLS.md §1).
 *
 * OS facts it relies on:
 *   - mkdir(2) is atomic and exclusive: of any number of concurrent mkdir(L),
 *     exactly one succeeds, the others get EEXIST.
 *   - rmdir(2) removes only an empty directory, and it removes *by name*:
 *     whatever directory sits at L at that moment, ours or not.  The lock
 *     carries no identity, so nothing here can tell "my lock" from "a lock".
 *   - A directory's mtime is set at its creation (and changes only when its
 *     entries change; this lock never has entries).  Staleness compares it
 *     with the wall clock, so file-system time and process time are assumed
 *     to be one clock.
 *
 * What it gets wrong (§1.5): two waiters that judged one stale lock both
 * take it, and each release deletes whatever lock is at L (K-ML-1); a holder
 * stalled past the stale age keeps writing (K-ML-2); a swept parent folder
 * looks like contention for the whole wait (K-ML-3).
 *
 * Steps (numbers and labels as in PROTOCOLS.md §1):
 *
 *   try (tryAcquireLock; never waits)
 *     ML1 mkdir L          ok: HELD | EEXIST: ML2 | other: raise (no win32 case, K-ML-4)
 *     ML2 stat L           ok: ML4 | ENOENT: ML3 | other: BUSY
 *     ML3 mkdir L          ok: HELD | EEXIST: BUSY | other: raise
 *     ML4 now-mtime>stale  no: BUSY (a live holder is never waited on) | yes: ML5
 *     ML5 rmdir L          ok, ENOENT: ML6 | other (ENOTEMPTY...): BUSY
 *     ML6 mkdir L          ok: HELD | EEXIST: BUSY | other: raise
 *
 *   acquire (acquireLock; up to `retries` attempts while now < start + retries x wait_ms)
 *     MA1 mkdir L          ok: HELD | any errno: MA2 (all of it is contention, K-ML-3)
 *     MA2 stat L           ok and now-mtime>stale: MA3 | otherwise: MA4
 *     MA3 rmdir L          ok: next attempt at once | error: MA4
 *     MA4 sleep wait_ms    next attempt
 *     out of attempts:     BUSY ("Could not lock '<file>' after 5s")
 *
 *   bounded (boundedAcquire): try, up to 1 + bounded_retries times, bounded_wait_ms apart
 *   release (RELEASE_L): MR1 rmdir L, every errno ignored ("released is released")
 *   held: always 1 (no such check in beta.5)
 *
 * Points: "mkdir-legacy/<op>/after-<label>" follows step <label> when it
 * succeeded (for the age check: when it judged the lock stale), i.e. on the
 * way toward taking the lock; release also has "before-rmdir".  Every name
 * is listed in ml_points[].
 */
#include <assert.h>
#include <errno.h>
#include <stdint.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "proto.h"

/* Indexes into lk->param, in ml_params order. */
enum {
	ML_STALE,    /* LOCK_STALE_MS */
	ML_WAIT,     /* LOCK_WAIT_MS */
	ML_RETRIES,  /* LOCK_RETRIES */
	ML_FORM,     /* enum lock_form */
	ML_BRETRIES, /* boundedAcquire retries */
	ML_BWAIT,    /* boundedAcquire waitMs */
	ML_NPARAMS
};

static const struct param ml_params[] = {
	[ML_STALE] = { "stale_ms", 10000, PU_MS, NULL,
		       "LOCK_STALE_MS: a lock older than this is broken (inferred 10 s)" },
	[ML_WAIT] = { "wait_ms", 50, PU_MS, NULL,
		      "LOCK_WAIT_MS: acquire's sleep between attempts (retries x wait_ms = 5 s)" },
	[ML_RETRIES] = { "retries", 100, PU_COUNT, NULL,
			 "LOCK_RETRIES: acquire's attempts (split of the 5 s budget not given)" },
	[ML_FORM] = { "form", FORM_ACQUIRE, PU_CHOICE, lock_form_choices,
		      "which entry point: acquireLock, tryAcquireLock, boundedAcquire" },
	[ML_BRETRIES] = { "bounded_retries", 3, PU_COUNT, NULL,
			  "boundedAcquire: tries after the first" },
	[ML_BWAIT] = { "bounded_wait_ms", 5, PU_MS, NULL, "boundedAcquire: wait between tries" },
	[ML_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(ML_NPARAMS <= LS_MAX_PARAMS, "too many mkdir-legacy params");
static_assert(sizeof ml_params / sizeof ml_params[0] == ML_NPARAMS + 1, "ml_params out of step");

/* Point names are written once, in ml_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum ml_point {
	ML_PT_TRY_AFTER_LOCK_MKDIR,
	ML_PT_TRY_AFTER_STAT,
	ML_PT_TRY_AFTER_REMKDIR,
	ML_PT_TRY_AFTER_AGE_CHECK,
	ML_PT_TRY_AFTER_STALE_RMDIR,
	ML_PT_TRY_AFTER_STALE_REMKDIR,
	ML_PT_ACQUIRE_AFTER_LOCK_MKDIR,
	ML_PT_ACQUIRE_AFTER_STAT,
	ML_PT_ACQUIRE_AFTER_AGE_CHECK,
	ML_PT_ACQUIRE_AFTER_STALE_RMDIR,
	ML_PT_ACQUIRE_AFTER_SLEEP,
	ML_PT_BOUNDED_AFTER_SLEEP,
	ML_PT_RELEASE_BEFORE_RMDIR,
	ML_PT_RELEASE_AFTER_RMDIR,
	ML_NPOINTS
};

static const char *const ml_points[] = {
	[ML_PT_TRY_AFTER_LOCK_MKDIR] = "mkdir-legacy/try/after-lock-mkdir",
	[ML_PT_TRY_AFTER_STAT] = "mkdir-legacy/try/after-stat",
	[ML_PT_TRY_AFTER_REMKDIR] = "mkdir-legacy/try/after-remkdir",
	[ML_PT_TRY_AFTER_AGE_CHECK] = "mkdir-legacy/try/after-age-check",
	[ML_PT_TRY_AFTER_STALE_RMDIR] = "mkdir-legacy/try/after-stale-rmdir",
	[ML_PT_TRY_AFTER_STALE_REMKDIR] = "mkdir-legacy/try/after-stale-remkdir",
	[ML_PT_ACQUIRE_AFTER_LOCK_MKDIR] = "mkdir-legacy/acquire/after-lock-mkdir",
	[ML_PT_ACQUIRE_AFTER_STAT] = "mkdir-legacy/acquire/after-stat",
	[ML_PT_ACQUIRE_AFTER_AGE_CHECK] = "mkdir-legacy/acquire/after-age-check",
	[ML_PT_ACQUIRE_AFTER_STALE_RMDIR] = "mkdir-legacy/acquire/after-stale-rmdir",
	[ML_PT_ACQUIRE_AFTER_SLEEP] = "mkdir-legacy/acquire/after-sleep",
	[ML_PT_BOUNDED_AFTER_SLEEP] = "mkdir-legacy/bounded/after-sleep",
	[ML_PT_RELEASE_BEFORE_RMDIR] = "mkdir-legacy/release/before-rmdir",
	[ML_PT_RELEASE_AFTER_RMDIR] = "mkdir-legacy/release/after-rmdir",
	[ML_NPOINTS] = NULL,
};
#define PT(name) ml_points[ML_PT_##name]

/* Raise e out of acquire: -1 with errno. */
static int ml_raise(int e)
{
	errno = e;
	return -1;
}

/* §1.1 tryAcquireLock-legacy: 0 held, LS_BUSY (null), -1 raised. */
static int ml_try(struct lock *lk)
{
	struct fsx_stat st;
	int e;

	/* [ML1 lock-mkdir] */
	if (fsx_mkdir(lk->path, 0777) == 0) {
		fsx_point(PT(TRY_AFTER_LOCK_MKDIR));
		return 0;
	}
	e = ls_note_errno(lk);
	if (e != EEXIST)
		return ml_raise(e); /* no Windows special case in this revision (K-ML-4) */

	/* [ML2 stat] */
	if (fsx_stat(lk->path, &st) != 0) {
		if (ls_note_errno(lk) != ENOENT)
			return LS_BUSY;
		/* [ML3 remkdir] the holder released meanwhile */
		if (fsx_mkdir(lk->path, 0777) == 0) {
			fsx_point(PT(TRY_AFTER_REMKDIR));
			return 0;
		}
		e = ls_note_errno(lk);
		return e == EEXIST ? LS_BUSY : ml_raise(e);
	}
	fsx_point(PT(TRY_AFTER_STAT));

	/* [ML4 T age-check] a live holder is never waited on */
	if (!ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[ML_STALE]))
		return LS_BUSY;
	fsx_point(PT(TRY_AFTER_AGE_CHECK));

	/* [ML5 stale-rmdir] by name: whatever directory is at L now goes (K-ML-1) */
	if (fsx_rmdir(lk->path) != 0 && ls_note_errno(lk) != ENOENT)
		return LS_BUSY; /* ENOTEMPTY, EBUSY, ... */
	fsx_point(PT(TRY_AFTER_STALE_RMDIR));

	/* [ML6 stale-remkdir] */
	if (fsx_mkdir(lk->path, 0777) == 0) {
		fsx_point(PT(TRY_AFTER_STALE_REMKDIR));
		return 0;
	}
	e = ls_note_errno(lk);
	return e == EEXIST ? LS_BUSY : ml_raise(e);
}

/* §1.2 acquireLock-legacy: 0 held, LS_BUSY ("Could not lock ... after 5s"). */
static int ml_acquire_wait(struct lock *lk)
{
	/* times in us (lk->us): exact at any --time-scale */
	const int64_t stale = lk->us[ML_STALE];
	const int64_t wait = lk->us[ML_WAIT];
	const int64_t retries = lk->param[ML_RETRIES];
	/* Wall clock, so that counting attempts alone cannot outlive a live
	 * holder's staleness window (§1.4). */
	const int64_t deadline = ls_sat_add(fsx_now_us(), ls_sat_mul(retries, wait));

	for (int64_t attempt = 0; attempt < retries && (attempt == 0 || fsx_now_us() < deadline);
	     attempt++) {
		struct fsx_stat st;

		/* [MA1 lock-mkdir] any errno (EEXIST, ENOENT, EACCES, ...) is contention */
		if (fsx_mkdir(lk->path, 0777) == 0) {
			fsx_point(PT(ACQUIRE_AFTER_LOCK_MKDIR));
			return 0;
		}
		ls_note_errno(lk);

		/* [MA2 stat] on error: sleep (the comment says "retry immediately") */
		if (fsx_stat(lk->path, &st) == 0) {
			fsx_point(PT(ACQUIRE_AFTER_STAT));
			if (ls_older_than_us(fsx_now_ms(), st.mtime_ns, stale)) {
				fsx_point(PT(ACQUIRE_AFTER_AGE_CHECK));
				/* [MA3 stale-rmdir] by name, as ML5 */
				if (fsx_rmdir(lk->path) == 0) {
					fsx_point(PT(ACQUIRE_AFTER_STALE_RMDIR));
					continue; /* next attempt at once, no sleep */
				}
				ls_note_errno(lk);
			}
		} else {
			ls_note_errno(lk);
		}

		/* [MA4 sleep] */
		fsx_sleep_us(wait);
		fsx_point(PT(ACQUIRE_AFTER_SLEEP));
	}
	return LS_BUSY;
}

/* §0.2 item 2 boundedAcquire: 1 + retries tries, wait apart; BUSY = 'store-locked'. */
static int ml_acquire_bounded(struct lock *lk)
{
	for (int64_t i = 0;; i++) {
		int r = ml_try(lk);
		if (r != LS_BUSY || i >= lk->param[ML_BRETRIES])
			return r;
		fsx_sleep_us(lk->us[ML_BWAIT]);
		fsx_point(PT(BOUNDED_AFTER_SLEEP));
	}
}

static int ml_init(struct lock *lk)
{
	(void)lk; /* no per-run state: the lock carries no identity */
	return 0;
}

static int ml_acquire(struct lock *lk)
{
	lk->last_error = 0;
	switch (lk->param[ML_FORM]) {
	case FORM_TRY:
		return ml_try(lk);
	case FORM_BOUNDED:
		return ml_acquire_bounded(lk);
	default:
		return ml_acquire_wait(lk);
	}
}

static int ml_held(struct lock *lk)
{
	(void)lk; /* beta.5 has no held() check */
	return 1;
}

/* RELEASE_L: [MR1 rmdir] by name, every errno ignored.  It removes whatever
 * lock is at L, ours or a reclaimer's (K-ML-1 step 5). */
static int ml_release(struct lock *lk)
{
	fsx_point(PT(RELEASE_BEFORE_RMDIR));
	if (fsx_rmdir(lk->path) != 0)
		ls_note_errno(lk); /* "released is released" */
	fsx_point(PT(RELEASE_AFTER_RMDIR));
	return 0;
}

static int64_t ml_stale_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[ML_STALE]);
}

static int64_t ml_wait_budget_ms(const struct lock *lk)
{
	const int64_t *p = lk->us; /* times in exact us; counts as given */

	switch (p[ML_FORM]) {
	case FORM_TRY:
		return 0; /* never sleeps */
	case FORM_BOUNDED:
		return param_us_to_ms(ls_sat_mul(p[ML_BRETRIES], p[ML_BWAIT]));
	default:
		/* retries x wait (5 s), plus the one sleep an attempt begun just
		 * before the deadline still takes. */
		return param_us_to_ms(ls_sat_add(ls_sat_mul(p[ML_RETRIES], p[ML_WAIT]), p[ML_WAIT]));
	}
}

static const struct lock_absorb ml_absorbs[] = {
	{ LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, 0, "form", FORM_ACQUIRE,
	  "[MA1 lock-mkdir] any errno (EEXIST, ENOENT, EACCES, ...) is contention" },
	{ LOCK_OP_ACQUIRE, FSX_STAT, FSX_PATH_LOCK, 0, "form", FORM_ACQUIRE, "[MA2 stat] on error: sleep" },
	{ LOCK_OP_RELEASE, FSX_RMDIR, FSX_PATH_LOCK, 0, NULL, 0, "[MR1 rmdir] released is released: every errno ignored" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops mkdir_legacy_ops = {
	.name = "mkdir-legacy",
	.origin = "doflow 2.0.0-beta.5, src/runtime/task-state.js",
	.summary = "<file>.lock directory; stale (mtime > stale_ms) is rmdir'd by name; "
		   "release rmdir's by name",
	.claims = "A lock older than LOCK_STALE_MS may be broken; a live holder is never waited "
		  "on (try). A stale lock is broken because its holder died mid-write; the "
		  "rename-based write keeps the file whole (acquire). The wait is wall-clock so "
		  "that counting attempts alone cannot outlive a live holder's staleness window "
		  "and then break (and later release) its lock.",
	.params = ml_params,
	.points = ml_points,
	/* "Could not lock ...": another writer holds; L's mtime is its age, and
	 * a lock that old is broken whoever left it (ML4, MA2) */
	.flags = LOCK_BUSY_MEANS_HELD | LOCK_AGE_BY_DIR,
	.absorbs = ml_absorbs,
	.init = ml_init,
	.acquire = ml_acquire,
	.held = ml_held,
	.release = ml_release,
	.stale_ms = ml_stale_ms,
	.wait_budget_ms = ml_wait_budget_ms,
};
