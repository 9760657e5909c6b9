/*
 * mkdir_owner.c - doflow 2.0.0's task-state lock (PROTOCOLS.md §2).
 *
 * L = <file>.lock is a directory; each participant puts one entry in it, an
 * empty directory "owner-<pid>-<12 lowercase hex>" (6 bytes from the
 * worker's PRNG).  The holder is the process whose entry is alone in L.
 *
 * OS facts it relies on:
 *   - mkdir(2) is atomic and exclusive (one winner, the rest EEXIST), both
 *     for L and for an entry inside it.
 *   - rmdir(2) removes only an empty directory.  No runtime renames L.  So a
 *     directory with an entry in it stays at L until that entry goes: a
 *     process whose entry is in L knows the directory at L is the one holding
 *     its entry ("pinned").
 *   - A directory's identity is (dev, ino, btime): sameDir() compares them,
 *     btime 0 meaning "not reported".  Inode numbers can be reused after a
 *     removal; btime, where the file system reports it, tells the two apart.
 *   - A directory's mtime changes whenever an entry is added or removed, so
 *     stat, list, stat with one identity and one mtime means the listing was
 *     the whole, unchanged content for that span.  Ages compare mtime with
 *     the wall clock: FS time and process time are assumed one clock.
 *   - readdir is not an atomic snapshot, but an entry present for the whole
 *     scan is listed.  Each process makes its entry before it lists, so of
 *     two processes with entries in one L the later lister sees both.
 *   - access(F_OK) never fails: any error reads as "absent" (Node existsSync).
 *
 * Outcomes of a step: HELD, QUEUED (our entry waits in L: it sorts first),
 * BUSY (give up for now), AGAIN (look again at once), and RAISE (an errno
 * out of ATTEMPT, which the drivers propagate).
 *
 *   ATTEMPT
 *     AT1 t0 := now
 *     AT2 mkdir L          ok: AT3 | EEXIST: RECLAIM | EPERM, EACCES on win32: RECLAIM
 *                          | other (ENOENT = folder swept, ENOSPC...): RAISE
 *     AT3 mkdir L/me       ok: AT4 | ENOENT: AGAIN | other: RAISE
 *     AT4 now-t0 >= stale/2    yes: WITHDRAW, AGAIN (the publish bound)
 *     AT5 ELECT(rejoin)
 *   RECLAIM (L was there)
 *     RC1 judged := stat L     ENOENT: AGAIN | other: BUSY
 *     RC2 now-mtime <= stale   yes: BUSY
 *     RC3 E := readdir L       ENOENT: AGAIN | other: BUSY
 *     RC4 listed := stat L     ENOENT: AGAIN | other: BUSY | moved (identity or mtime): AGAIN
 *     RC6 mkdir L/me           ENOENT: AGAIN | other (EEXIST too): BUSY   (pins L)
 *     RC7 stat L same as judged?   no, or any errno: WITHDRAW, AGAIN
 *     RC8 rmdir L/n, n in E    ok, ENOENT: next | other (ENOTDIR...): WITHDRAW, BUSY
 *     RC9 ELECT(rejoin)
 *   ELECT(rejoin)
 *     EL1 E := readdir L       error: EL4 | me not in E: AGAIN | |E| == 1: HELD
 *                              | rejoin and me sorts first: QUEUED
 *     EL2/EL3 PINNED   EL4 not pinned: WITHDRAW, AGAIN
 *     EL5 !rejoin: WITHDRAW, BUSY      EL6 LEAVE
 *   LEAVE(pinned)
 *     LV1 WITHDRAW   LV2 readdir L     ENOENT: AGAIN | other: BUSY | non-empty: BUSY
 *     LV3 fresh name LV4 mkdir L/me    ENOENT: AGAIN | other: BUSY
 *     LV5 stat L same as pinned?       no: WITHDRAW, AGAIN
 *     LV6 ELECT(no rejoin)
 *   GIVEUP      ELECT(rejoin); still QUEUED: PINNED, then LEAVE (not pinned: WITHDRAW, AGAIN)
 *   QUEUED_STEP ELECT(rejoin)
 *   WITHDRAW    WD1 rmdir L/me, errors ignored
 *   PINNED      PN1 stat L (error: null), PN2 exists L/me (false: null)
 *   RELEASE     RL0 only once   RL1/RL2 mine := PINNED   RL3 rmdir L/me (error: done)
 *               RL4 mine and stat L same as mine?   RL5 rmdir L (errors ignored)
 *   HELD        HC1 exists L/me
 *
 *   try:      3 rounds of ATTEMPT; a QUEUED entry is polled every
 *             contend_wait_ms until contend_ms, then GIVEUP.
 *   acquire:  up to `retries` ATTEMPT/QUEUED_STEP calls within retries x
 *             wait_ms, sleeping wait_ms after BUSY or QUEUED; GIVEUP at the end.
 *   bounded:  try, up to 1 + bounded_retries times, bounded_wait_ms apart.
 *
 * Not modelled: the custom `stale` rule and `entryName`/`removeEntry` options
 * (RC5, QUEUED_STEP's long form): the default form only.
 *
 * Points: "mkdir-owner/<op>/after-<label>" follows step <label> when it
 * succeeded (steps whose errors are ignored: always; decision steps: when
 * the decision goes on toward taking the lock).  WITHDRAW and PINNED are
 * named after their caller ("mkdir-owner/elect/after-withdraw",
 * "mkdir-owner/release/after-pin-exists").  Every name is listed in
 * mo_points[].
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "proto.h"

/* Indexes into lk->param, in mo_params order. */
enum {
	MO_STALE,        /* LOCK_STALE_MS; PUBLISH_BOUND_MS is half of it */
	MO_WAIT,         /* LOCK_WAIT_MS */
	MO_RETRIES,      /* LOCK_RETRIES */
	MO_CONTEND,      /* CONTEND_MS */
	MO_CONTEND_WAIT, /* CONTEND_WAIT_MS */
	MO_FORM,         /* enum lock_form */
	MO_PLATFORM,     /* 0 posix, 1 win32 */
	MO_BRETRIES,     /* boundedAcquire retries */
	MO_BWAIT,        /* boundedAcquire waitMs */
	MO_NPARAMS
};

enum { MO_POSIX = 0, MO_WIN32 = 1 };

#define MO_TRY_ROUNDS 3 /* tryAcquireLock's attempts */

static const struct param mo_params[] = {
	[MO_STALE] = { "stale_ms", 10000, PU_MS, NULL,
		       "LOCK_STALE_MS: age after which a lock is reclaimed (inferred 10 s)" },
	[MO_WAIT] = { "wait_ms", 50, PU_MS, NULL,
		      "LOCK_WAIT_MS: acquire's sleep after BUSY/QUEUED (retries x wait_ms = 5 s)" },
	[MO_RETRIES] = { "retries", 100, PU_COUNT, NULL,
			 "LOCK_RETRIES: acquire's attempts (split of the 5 s budget not given)" },
	[MO_CONTEND] = { "contend_ms", 40, PU_MS, NULL,
			 "CONTEND_MS: try's total wait for a simultaneous arrival" },
	[MO_CONTEND_WAIT] = { "contend_wait_ms", 2, PU_MS, NULL,
			      "CONTEND_WAIT_MS: try's poll interval while queued" },
	[MO_FORM] = { "form", FORM_ACQUIRE, PU_CHOICE, lock_form_choices,
		      "which entry point: acquireLock, tryAcquireLock, boundedAcquire" },
	[MO_PLATFORM] = { "platform", MO_POSIX, PU_CHOICE, lock_platform_choices,
			  "win32: EPERM/EACCES from mkdir(L) means 'being deleted' (reclaim)" },
	[MO_BRETRIES] = { "bounded_retries", 3, PU_COUNT, NULL,
			  "boundedAcquire: tries after the first" },
	[MO_BWAIT] = { "bounded_wait_ms", 5, PU_MS, NULL, "boundedAcquire: wait between tries" },
	[MO_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(MO_NPARAMS <= LS_MAX_PARAMS, "too many mkdir-owner params");
static_assert(sizeof mo_params / sizeof mo_params[0] == MO_NPARAMS + 1, "mo_params out of step");

/* Point names are written once, in mo_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum mo_point {
	MO_PT_ATTEMPT_AFTER_START,
	MO_PT_ATTEMPT_AFTER_LOCK_MKDIR,
	MO_PT_ATTEMPT_AFTER_ENTRY_MKDIR,
	MO_PT_ATTEMPT_AFTER_PUBLISH_CHECK,
	MO_PT_ATTEMPT_AFTER_WITHDRAW,
	MO_PT_RECLAIM_AFTER_STAT_JUDGED,
	MO_PT_RECLAIM_AFTER_AGE_CHECK,
	MO_PT_RECLAIM_AFTER_READDIR,
	MO_PT_RECLAIM_AFTER_STAT_LISTED,
	MO_PT_RECLAIM_AFTER_ENTRY_MKDIR,
	MO_PT_RECLAIM_AFTER_STAT_PIN,
	MO_PT_RECLAIM_AFTER_REMOVE_JUDGED,
	MO_PT_RECLAIM_AFTER_WITHDRAW,
	MO_PT_ELECT_AFTER_READDIR,
	MO_PT_ELECT_AFTER_PIN_STAT,
	MO_PT_ELECT_AFTER_PIN_EXISTS,
	MO_PT_ELECT_AFTER_WITHDRAW,
	MO_PT_LEAVE_AFTER_WITHDRAW,
	MO_PT_LEAVE_AFTER_READDIR,
	MO_PT_LEAVE_AFTER_REENTER_MKDIR,
	MO_PT_LEAVE_AFTER_STAT_PIN,
	MO_PT_GIVEUP_AFTER_PIN_STAT,
	MO_PT_GIVEUP_AFTER_PIN_EXISTS,
	MO_PT_GIVEUP_AFTER_WITHDRAW,
	MO_PT_TRY_AFTER_SLEEP,
	MO_PT_ACQUIRE_AFTER_SLEEP,
	MO_PT_ACQUIRE_AFTER_STRAY_READDIR,
	MO_PT_BOUNDED_AFTER_SLEEP,
	MO_PT_RELEASE_AFTER_PIN_STAT,
	MO_PT_RELEASE_AFTER_PIN_EXISTS,
	MO_PT_RELEASE_AFTER_ENTRY_RMDIR,
	MO_PT_RELEASE_AFTER_STAT_SAME,
	MO_PT_RELEASE_BEFORE_LOCK_RMDIR,
	MO_PT_RELEASE_AFTER_LOCK_RMDIR,
	MO_PT_HELD_AFTER_EXISTS,
	MO_NPOINTS
};

static const char *const mo_points[] = {
	[MO_PT_ATTEMPT_AFTER_START] = "mkdir-owner/attempt/after-start",
	[MO_PT_ATTEMPT_AFTER_LOCK_MKDIR] = "mkdir-owner/attempt/after-lock-mkdir",
	[MO_PT_ATTEMPT_AFTER_ENTRY_MKDIR] = "mkdir-owner/attempt/after-entry-mkdir",
	[MO_PT_ATTEMPT_AFTER_PUBLISH_CHECK] = "mkdir-owner/attempt/after-publish-check",
	[MO_PT_ATTEMPT_AFTER_WITHDRAW] = "mkdir-owner/attempt/after-withdraw",
	[MO_PT_RECLAIM_AFTER_STAT_JUDGED] = "mkdir-owner/reclaim/after-stat-judged",
	[MO_PT_RECLAIM_AFTER_AGE_CHECK] = "mkdir-owner/reclaim/after-age-check",
	[MO_PT_RECLAIM_AFTER_READDIR] = "mkdir-owner/reclaim/after-readdir",
	[MO_PT_RECLAIM_AFTER_STAT_LISTED] = "mkdir-owner/reclaim/after-stat-listed",
	[MO_PT_RECLAIM_AFTER_ENTRY_MKDIR] = "mkdir-owner/reclaim/after-entry-mkdir",
	[MO_PT_RECLAIM_AFTER_STAT_PIN] = "mkdir-owner/reclaim/after-stat-pin",
	[MO_PT_RECLAIM_AFTER_REMOVE_JUDGED] = "mkdir-owner/reclaim/after-remove-judged",
	[MO_PT_RECLAIM_AFTER_WITHDRAW] = "mkdir-owner/reclaim/after-withdraw",
	[MO_PT_ELECT_AFTER_READDIR] = "mkdir-owner/elect/after-readdir",
	[MO_PT_ELECT_AFTER_PIN_STAT] = "mkdir-owner/elect/after-pin-stat",
	[MO_PT_ELECT_AFTER_PIN_EXISTS] = "mkdir-owner/elect/after-pin-exists",
	[MO_PT_ELECT_AFTER_WITHDRAW] = "mkdir-owner/elect/after-withdraw",
	[MO_PT_LEAVE_AFTER_WITHDRAW] = "mkdir-owner/leave/after-withdraw",
	[MO_PT_LEAVE_AFTER_READDIR] = "mkdir-owner/leave/after-readdir",
	[MO_PT_LEAVE_AFTER_REENTER_MKDIR] = "mkdir-owner/leave/after-reenter-mkdir",
	[MO_PT_LEAVE_AFTER_STAT_PIN] = "mkdir-owner/leave/after-stat-pin",
	[MO_PT_GIVEUP_AFTER_PIN_STAT] = "mkdir-owner/giveup/after-pin-stat",
	[MO_PT_GIVEUP_AFTER_PIN_EXISTS] = "mkdir-owner/giveup/after-pin-exists",
	[MO_PT_GIVEUP_AFTER_WITHDRAW] = "mkdir-owner/giveup/after-withdraw",
	[MO_PT_TRY_AFTER_SLEEP] = "mkdir-owner/try/after-sleep",
	[MO_PT_ACQUIRE_AFTER_SLEEP] = "mkdir-owner/acquire/after-sleep",
	[MO_PT_ACQUIRE_AFTER_STRAY_READDIR] = "mkdir-owner/acquire/after-stray-readdir",
	[MO_PT_BOUNDED_AFTER_SLEEP] = "mkdir-owner/bounded/after-sleep",
	[MO_PT_RELEASE_AFTER_PIN_STAT] = "mkdir-owner/release/after-pin-stat",
	[MO_PT_RELEASE_AFTER_PIN_EXISTS] = "mkdir-owner/release/after-pin-exists",
	[MO_PT_RELEASE_AFTER_ENTRY_RMDIR] = "mkdir-owner/release/after-entry-rmdir",
	[MO_PT_RELEASE_AFTER_STAT_SAME] = "mkdir-owner/release/after-stat-same",
	[MO_PT_RELEASE_BEFORE_LOCK_RMDIR] = "mkdir-owner/release/before-lock-rmdir",
	[MO_PT_RELEASE_AFTER_LOCK_RMDIR] = "mkdir-owner/release/after-lock-rmdir",
	[MO_PT_HELD_AFTER_EXISTS] = "mkdir-owner/held/after-exists",
	[MO_NPOINTS] = NULL,
};
#define PT(name) mo_points[MO_PT_##name]

enum mo_outcome { MO_HELD, MO_QUEUED, MO_BUSY, MO_AGAIN, MO_RAISE };

/* "owner-" + pid (at most 10 digits) + "-" + 12 hex + NUL fits with room. */
#define MO_NAME_MAX 40

/* Per-run state, in lk->state. */
struct mo_state {
	char name[MO_NAME_MAX]; /* me.name: the current attempt's entry */
	int taken;              /* an acquire returned 0 and its release has not run (!released) */
	int pin_valid;          /* pin holds the last non-null PINNED() answer */
	struct fsx_stat pin;    /* stat of L taken while our entry was in it */
};
static_assert(sizeof(struct mo_state) <= sizeof(((struct lock *)0)->state),
	      "struct mo_state does not fit in struct lock's state");

static struct mo_state *mo_state(struct lock *lk)
{
	return (struct mo_state *)lk->state.bytes;
}

/* §2.1 sameDir: dev, ino, and btime when both report one.  Not the mtime. */
static int mo_same_dir(const struct fsx_stat *a, const struct fsx_stat *b)
{
	return a->dev == b->dev && a->ino == b->ino &&
	       (a->btime_ns == 0 || b->btime_ns == 0 || a->btime_ns == b->btime_ns);
}

/* The stat-pin steps (RC7, LV5): is the directory at L still `ref`?  Any
 * errno reads as "changed". */
static int mo_still_at_l(struct lock *lk, const struct fsx_stat *ref)
{
	struct fsx_stat now;

	if (fsx_stat(lk->path, &now) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	return mo_same_dir(ref, &now);
}

/* dir + "/" + name into buf[PATH_MAX]; -1 ENAMETOOLONG if it does not fit. */
static int mo_join(char *buf, const char *dir, const char *name)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", dir, name);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* L/me.name; acquire checked that it fits. */
static void mo_entry(struct lock *lk, char *buf)
{
	if (mo_join(buf, lk->path, mo_state(lk)->name) != 0)
		LS_BUG("entry path does not fit");
}

/* fresh(): a new name for every attempt and re-entry, never reused. */
static void mo_fresh(struct lock *lk)
{
	struct mo_state *st = mo_state(lk);
	unsigned long long rnd = prng_next(lk->rng) & 0xffffffffffffULL; /* 6 bytes */

	snprintf(st->name, sizeof st->name, "owner-%ld-%012llx", (long)fsx_getpid(), rnd);
}

/* WITHDRAW: [WD1 entry-rmdir] every errno ignored ("gone already is fine").
 * point: "<caller>/after-withdraw". */
static void mo_withdraw(struct lock *lk, const char *point)
{
	char entry[PATH_MAX];

	mo_entry(lk, entry);
	if (fsx_rmdir(entry) != 0)
		ls_note_errno(lk);
	fsx_point(point);
}

/*
 * PINNED: the stat of L taken while our entry is in it, into *out.
 * Returns 1, or 0 for "null".  Points are named after the caller.
 */
static int mo_pinned(struct lock *lk, struct fsx_stat *out, const char *pt_stat,
		     const char *pt_exists)
{
	struct mo_state *st = mo_state(lk);
	char entry[PATH_MAX];
	int in;

	/* [PN1 pin-stat] */
	if (fsx_stat(lk->path, out) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(pt_stat);

	/* [PN2 pin-exists] never fails: false on any error */
	mo_entry(lk, entry);
	in = fsx_exists(entry);
	fsx_point(pt_exists);
	if (!in)
		return 0;

	st->pin = *out;
	st->pin_valid = 1;
	return 1;
}

static enum mo_outcome mo_elect(struct lock *lk, int rejoin);

/*
 * LEAVE: remove our entry; if that emptied the lock, enter it again once
 * under a fresh name, "instead of leaving an empty lock everyone would wait
 * 10 s on".
 */
static enum mo_outcome mo_leave(struct lock *lk, const struct fsx_stat *pinned)
{
	struct fsx_list e;
	char entry[PATH_MAX];
	size_t n;

	/* [LV1 withdraw] */
	mo_withdraw(lk, PT(LEAVE_AFTER_WITHDRAW));

	/* [LV2 readdir] */
	if (fsx_list(lk->path, &e) != 0)
		return ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY;
	n = e.n;
	fsx_list_free(&e);
	fsx_point(PT(LEAVE_AFTER_READDIR));
	if (n > 0)
		return MO_BUSY; /* someone else is in it: they hold or wait */

	/* [LV3] never reuse a name */
	mo_fresh(lk);

	/* [LV4 reenter-mkdir] */
	mo_entry(lk, entry);
	if (fsx_mkdir(entry, 0777) != 0)
		return ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY;
	fsx_point(PT(LEAVE_AFTER_REENTER_MKDIR));

	/* [LV5 stat-pin] */
	if (!mo_still_at_l(lk, pinned)) {
		mo_withdraw(lk, PT(LEAVE_AFTER_WITHDRAW));
		return MO_AGAIN;
	}
	fsx_point(PT(LEAVE_AFTER_STAT_PIN));

	/* [LV6] never queues, never comes back */
	return mo_elect(lk, 0);
}

/* ELECT: decide from a listing of L whether our entry holds, waits or leaves. */
static enum mo_outcome mo_elect(struct lock *lk, int rejoin)
{
	struct mo_state *st = mo_state(lk);
	struct fsx_stat pin;
	struct fsx_list e;
	int pinned = 0;

	/* [EL1 readdir] on error: pinned = null, go EL4 */
	if (fsx_list(lk->path, &e) == 0) {
		int mine = 0, first = 1;
		size_t n = e.n;

		fsx_point(PT(ELECT_AFTER_READDIR));
		for (size_t i = 0; i < e.n; i++) {
			int c = strcmp(st->name, e.names[i]);
			if (c == 0)
				mine = 1;
			else if (c > 0)
				first = 0; /* another name sorts before ours */
		}
		fsx_list_free(&e);
		if (!mine)
			return MO_AGAIN; /* reclaimed: nothing to withdraw */
		if (n == 1)
			return MO_HELD; /* alone */
		if (rejoin && first)
			return MO_QUEUED; /* the first name waits and holds next */

		/* [EL2/EL3] */
		pinned = mo_pinned(lk, &pin, PT(ELECT_AFTER_PIN_STAT),
				   PT(ELECT_AFTER_PIN_EXISTS));
	} else {
		ls_note_errno(lk);
	}

	/* [EL4] */
	if (!pinned) {
		mo_withdraw(lk, PT(ELECT_AFTER_WITHDRAW));
		return MO_AGAIN;
	}
	/* [EL5] */
	if (!rejoin) {
		mo_withdraw(lk, PT(ELECT_AFTER_WITHDRAW));
		return MO_BUSY;
	}
	/* [EL6] */
	return mo_leave(lk, &pin);
}

/* GIVEUP: a queued attempt that stops waiting. */
static enum mo_outcome mo_giveup(struct lock *lk)
{
	struct fsx_stat pin;
	enum mo_outcome s = mo_elect(lk, 1);

	if (s != MO_QUEUED)
		return s;
	if (!mo_pinned(lk, &pin, PT(GIVEUP_AFTER_PIN_STAT),
		       PT(GIVEUP_AFTER_PIN_EXISTS))) {
		mo_withdraw(lk, PT(GIVEUP_AFTER_WITHDRAW));
		return MO_AGAIN;
	}
	return mo_leave(lk, &pin);
}

/* QUEUED_STEP, default form (no custom stale rule): ELECT(me, true). */
static enum mo_outcome mo_queued_step(struct lock *lk)
{
	return mo_elect(lk, 1);
}

/* RECLAIM: called only after mkdir(L) found L present.  Reclaims in place. */
static enum mo_outcome mo_reclaim(struct lock *lk)
{
	struct fsx_stat judged, listed;
	struct fsx_list e;
	char entry[PATH_MAX], judged_entry[PATH_MAX];
	enum mo_outcome out;

	/* [RC1 stat-judged] */
	if (fsx_stat(lk->path, &judged) != 0)
		return ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY;
	fsx_point(PT(RECLAIM_AFTER_STAT_JUDGED));

	/* [RC2 T age-check] */
	if (!ls_older_than_us(fsx_now_ms(), judged.mtime_ns, lk->us[MO_STALE]))
		return MO_BUSY;
	fsx_point(PT(RECLAIM_AFTER_AGE_CHECK));

	/* [RC3 readdir] */
	if (fsx_list(lk->path, &e) != 0)
		return ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY;
	fsx_point(PT(RECLAIM_AFTER_READDIR));

	/* [RC4 stat-listed] same directory, same mtime: every listed entry has
	 * been there at least the stale age */
	if (fsx_stat(lk->path, &listed) != 0) {
		out = ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY;
		goto out_free_list;
	}
	fsx_point(PT(RECLAIM_AFTER_STAT_LISTED));
	if (!mo_same_dir(&judged, &listed) || listed.mtime_ns != judged.mtime_ns) {
		out = MO_AGAIN;
		goto out_free_list;
	}

	/* [RC5 stale-rule] custom rule only: not modelled */

	/* [RC6 entry-mkdir] our entry pins the directory */
	mo_entry(lk, entry);
	if (fsx_mkdir(entry, 0777) != 0) {
		out = ls_note_errno(lk) == ENOENT ? MO_AGAIN : MO_BUSY; /* EEXIST included */
		goto out_free_list;
	}
	fsx_point(PT(RECLAIM_AFTER_ENTRY_MKDIR));

	/* [RC7 stat-pin] */
	if (!mo_still_at_l(lk, &judged)) {
		mo_withdraw(lk, PT(RECLAIM_AFTER_WITHDRAW));
		out = MO_AGAIN;
		goto out_free_list;
	}
	fsx_point(PT(RECLAIM_AFTER_STAT_PIN));

	/* [RC8 remove-judged] only listed names: names are unique, so a later
	 * holder's entry is never among them; ours keeps L from emptying */
	for (size_t i = 0; i < e.n; i++) {
		if (mo_join(judged_entry, lk->path, e.names[i]) != 0 ||
		    (fsx_rmdir(judged_entry) != 0 && errno != ENOENT)) {
			ls_note_errno(lk); /* ENOTDIR = stray file, ENOTEMPTY, EACCES ... */
			mo_withdraw(lk, PT(RECLAIM_AFTER_WITHDRAW));
			out = MO_BUSY;
			goto out_free_list;
		}
		fsx_point(PT(RECLAIM_AFTER_REMOVE_JUDGED));
	}
	fsx_list_free(&e);

	/* [RC9] */
	return mo_elect(lk, 1);

out_free_list:
	fsx_list_free(&e);
	return out;
}

/* ATTEMPT: one try from scratch with the current me.name. */
static enum mo_outcome mo_attempt(struct lock *lk)
{
	char entry[PATH_MAX];
	int64_t t0;
	int e;

	/* [AT1 T start] */
	t0 = fsx_now_us(); /* us: exact at any --time-scale */
	fsx_point(PT(ATTEMPT_AFTER_START));

	/* [AT2 lock-mkdir] */
	if (fsx_mkdir(lk->path, 0777) != 0) {
		e = ls_note_errno(lk);
		if (e == EEXIST)
			return mo_reclaim(lk);
		/* "Windows reports EPERM/EACCES for a lock folder another process
		 * is deleting at this moment" */
		if ((e == EPERM || e == EACCES) && lk->param[MO_PLATFORM] == MO_WIN32)
			return mo_reclaim(lk);
		return MO_RAISE; /* ENOENT (parent swept), EACCES on POSIX, ENOSPC ... */
	}
	fsx_point(PT(ATTEMPT_AFTER_LOCK_MKDIR));

	/* [AT3 entry-mkdir] */
	mo_entry(lk, entry);
	if (fsx_mkdir(entry, 0777) != 0) {
		e = ls_note_errno(lk);
		/* "removed before it was marked: an older runtime's release or
		 * stale break" */
		return e == ENOENT ? MO_AGAIN : MO_RAISE;
	}
	fsx_point(PT(ATTEMPT_AFTER_ENTRY_MKDIR));

	/* [AT4 T publish-check] past the bound, someone may have judged our
	 * empty L stale: the entry may sit in another's lock.  L is left as found. */
	if (fsx_now_us() - t0 >= lk->us[MO_STALE] / 2) {
		mo_withdraw(lk, PT(ATTEMPT_AFTER_WITHDRAW));
		return MO_AGAIN;
	}
	fsx_point(PT(ATTEMPT_AFTER_PUBLISH_CHECK));

	/* [AT5] */
	return mo_elect(lk, 1);
}

/* handle(me): the caller holds until release. */
static int mo_handle(struct lock *lk)
{
	mo_state(lk)->taken = 1;
	return 0;
}

/* A raise out of ATTEMPT: -1 with the errno its failing step noted. */
static int mo_raise(struct lock *lk)
{
	errno = lk->last_error;
	return -1;
}

/* §2.5 TRY_ACQUIRE: 0 held, LS_BUSY (null), -1 raised. */
static int mo_try_acquire(struct lock *lk)
{
	const int64_t deadline = ls_sat_add(fsx_now_us(), lk->us[MO_CONTEND]); /* us */

	for (int round = 0; round < MO_TRY_ROUNDS; round++) {
		enum mo_outcome s;

		mo_fresh(lk);
		s = mo_attempt(lk);
		while (s == MO_QUEUED && fsx_now_us() < deadline) {
			/* [TQ sleep] */
			fsx_sleep_us(lk->us[MO_CONTEND_WAIT]);
			fsx_point(PT(TRY_AFTER_SLEEP));
			s = mo_queued_step(lk);
		}
		if (s == MO_QUEUED)
			s = mo_giveup(lk);

		switch (s) {
		case MO_HELD:
			return mo_handle(lk);
		case MO_BUSY:
			return LS_BUSY;
		case MO_RAISE:
			return mo_raise(lk);
		default:
			break; /* AGAIN: next round */
		}
	}
	return LS_BUSY;
}

/*
 * The "Could not lock" message's STRAY part: one readdir of L (with types,
 * which readdir itself reports), listing non-directories as blocking.  It
 * changes nothing, but it is a file-system step the origin takes.
 */
static void mo_stray(struct lock *lk)
{
	struct fsx_list e;

	if (fsx_list(lk->path, &e) != 0) {
		ls_note_errno(lk);
		return;
	}
	fsx_list_free(&e);
	fsx_point(PT(ACQUIRE_AFTER_STRAY_READDIR));
}

/* §2.5 ACQUIRE: 0 held, LS_BUSY ("Could not lock ..."), -1 raised. */
static int mo_acquire_wait(struct lock *lk)
{
	const int64_t wait = lk->us[MO_WAIT]; /* us: exact at any --time-scale */
	const int64_t retries = lk->param[MO_RETRIES];
	const int64_t deadline = ls_sat_add(fsx_now_us(), ls_sat_mul(retries, wait));
	enum mo_outcome s = MO_AGAIN;

	for (int64_t attempt = 0; attempt < retries && (attempt == 0 || fsx_now_us() < deadline);
	     attempt++) {
		if (s == MO_QUEUED) {
			s = mo_queued_step(lk);
		} else {
			mo_fresh(lk);
			s = mo_attempt(lk);
		}
		if (s == MO_RAISE)
			return mo_raise(lk);
		if (s == MO_HELD)
			return mo_handle(lk);
		if (s == MO_BUSY || s == MO_QUEUED) {
			fsx_sleep_us(wait); /* AGAIN: no sleep */
			fsx_point(PT(ACQUIRE_AFTER_SLEEP));
		}
	}
	if (s == MO_QUEUED && mo_giveup(lk) == MO_HELD)
		return mo_handle(lk);
	mo_stray(lk);
	return LS_BUSY;
}

/* boundedAcquire: TRY_ACQUIRE up to 1 + retries times; BUSY = 'store-locked'. */
static int mo_acquire_bounded(struct lock *lk)
{
	for (int64_t i = 0;; i++) {
		int r = mo_try_acquire(lk);
		if (r != LS_BUSY || i >= lk->param[MO_BRETRIES])
			return r;
		fsx_sleep_us(lk->us[MO_BWAIT]);
		fsx_point(PT(BOUNDED_AFTER_SLEEP));
	}
}

static int mo_init(struct lock *lk)
{
	memset(mo_state(lk), 0, sizeof(struct mo_state));
	return 0;
}

static int mo_acquire(struct lock *lk)
{
	/* Every entry path L/<name> must fit: checked once, here. */
	if (strlen(lk->path) + 1 + MO_NAME_MAX > PATH_MAX) {
		errno = ENAMETOOLONG;
		lk->last_error = errno;
		return -1;
	}
	if (mo_state(lk)->taken)
		LS_BUG("mkdir-owner: acquire while held (release first)");
	if (!lk->rng)
		LS_BUG("mkdir-owner: no rng for entry names");
	lk->last_error = 0;

	switch (lk->param[MO_FORM]) {
	case FORM_TRY:
		return mo_try_acquire(lk);
	case FORM_BOUNDED:
		return mo_acquire_bounded(lk);
	default:
		return mo_acquire_wait(lk);
	}
}

/* HELD: [HC1 exists] "a holder that was paused past LOCK_STALE_MS and
 * reclaimed writes nothing".  Any error reads as lost. */
static int mo_held(struct lock *lk)
{
	char entry[PATH_MAX];
	int r;

	if (!mo_state(lk)->taken)
		return 0; /* released, or never acquired */
	mo_entry(lk, entry);
	r = fsx_exists(entry);
	fsx_point(PT(HELD_AFTER_EXISTS));
	return r;
}

/* RELEASE: never removes another's lock.  Always 0: the origin ignores
 * every error here. */
static int mo_release(struct lock *lk)
{
	struct mo_state *st = mo_state(lk);
	struct fsx_stat mine, now;
	char entry[PATH_MAX];
	int pinned;

	/* [RL0] only the first call acts */
	if (!st->taken)
		return 0;
	st->taken = 0;

	/* [RL1/RL2] mine := PINNED(me) */
	pinned = mo_pinned(lk, &mine, PT(RELEASE_AFTER_PIN_STAT),
			   PT(RELEASE_AFTER_PIN_EXISTS));

	/* [RL3 entry-rmdir] */
	mo_entry(lk, entry);
	if (fsx_rmdir(entry) != 0) {
		ls_note_errno(lk); /* "reclaimed: the lock is not ours to remove" */
		return 0;
	}
	fsx_point(PT(RELEASE_AFTER_ENTRY_RMDIR));

	/* [RL4 stat-same] remove L only if it is still the directory noted
	 * while our entry was in it; the gap from here to RL5 is bound 3 */
	if (!pinned)
		return 0;
	if (fsx_stat(lk->path, &now) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(RELEASE_AFTER_STAT_SAME));
	if (!mo_same_dir(&mine, &now))
		return 0;

	/* [RL5 lock-rmdir] ENOTEMPTY: "a waiting process's entry is in it; that
	 * process holds next" */
	fsx_point(PT(RELEASE_BEFORE_LOCK_RMDIR));
	if (fsx_rmdir(lk->path) != 0)
		ls_note_errno(lk);
	fsx_point(PT(RELEASE_AFTER_LOCK_RMDIR));
	return 0;
}

static int64_t mo_stale_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[MO_STALE]);
}

/* One TRY_ACQUIRE: it polls a queued entry until contend_ms, plus one poll. */
static int64_t mo_try_budget(const int64_t *p)
{
	return ls_sat_add(p[MO_CONTEND], p[MO_CONTEND_WAIT]);
}

static int64_t mo_wait_budget_ms(const struct lock *lk)
{
	const int64_t *p = lk->us; /* times in exact us; counts as given */

	switch (p[MO_FORM]) {
	case FORM_TRY:
		return param_us_to_ms(mo_try_budget(p));
	case FORM_BOUNDED:
		return param_us_to_ms(ls_sat_add(ls_sat_mul(ls_sat_add(p[MO_BRETRIES], 1), mo_try_budget(p)),
						 ls_sat_mul(p[MO_BRETRIES], p[MO_BWAIT])));
	default:
		/* retries x wait (5 s), plus the one sleep an attempt begun just
		 * before the deadline still takes. */
		return param_us_to_ms(ls_sat_add(ls_sat_mul(p[MO_RETRIES], p[MO_WAIT]), p[MO_WAIT]));
	}
}

static const struct lock_absorb mo_absorbs[] = {
	/* mkdir(L) only: AT3's mkdir(L/entry) raises every errno but ENOENT
	 * (PROTOCOLS.md §2.4, "→ *: raise"; the origin has no Windows case there) */
	{ LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, EPERM, "platform", MO_WIN32,
	  "[AT2 lock-mkdir] Windows reports EPERM/EACCES for a lock folder another process is deleting: contention" },
	{ LOCK_OP_ACQUIRE, FSX_MKDIR, FSX_PATH_LOCK, EACCES, "platform", MO_WIN32,
	  "[AT2 lock-mkdir] Windows reports EPERM/EACCES for a lock folder another process is deleting: contention" },
	{ LOCK_OP_RELEASE, -1, FSX_PATH_UNKNOWN, 0, NULL, 0, "RELEASE: the origin ignores every error here" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops mkdir_owner_ops = {
	.name = "mkdir-owner",
	.origin = "doflow 2.0.0, src/runtime/task-state.js",
	.summary = "<file>.lock directory plus an owner-<pid>-<rand> entry; holder = sole entry; "
		   "reclaim in place; release removes its entry, then L only if still the same",
	.claims = "Pinned: a directory with an entry in it stays at L until empty. Alone: two "
		  "processes whose entries are in one directory cannot both have been alone in "
		  "it. Publish bound: an entry landing within stale/2 of its own mkdir(L) is in "
		  "that process's own directory. Reclaim: stat, list, stat unchanged means every "
		  "listed entry is stale; only listed names are removed and the directory never "
		  "empties on the way. Release never removes another's lock. held(): a holder "
		  "paused past LOCK_STALE_MS and reclaimed writes nothing. Liveness: whatever a "
		  "dead process leaves is reclaimed once LOCK_STALE_MS old.",
	.params = mo_params,
	.points = mo_points,
	.flags = LOCK_HAS_HELD | LOCK_BUSY_MEANS_HELD | LOCK_AGE_BY_DIR, /* "Could not lock ...": another writer holds; L's mtime is its age */
	.absorbs = mo_absorbs,
	.init = mo_init,
	.acquire = mo_acquire,
	.held = mo_held,
	.release = mo_release,
	.stale_ms = mo_stale_ms,
	.wait_budget_ms = mo_wait_budget_ms,
};
