/*
 * lockfile_recorded.c - volter world-core 3.0.157's world storage lock
 * (PROTOCOLS.md §5), host runtime.
 *
 * P = <file>.lock is a regular file made *with* its record in it:
 * {"pid":N,"hostname":"h","at":"<ISO>","token":"<uuid>","operation":"…",
 * "caller":"…"}\n.  The token (a v4 uuid from the worker's PRNG) names one
 * take; the token needle is the exact bytes "token":"<uuid>".  P.recovery
 * serializes reclaimers and is made the same way (record with its own token).
 * Aside names: P.stale.<pid>.<ms> (a reclaimed lock),
 * P.recovery.stale.<pid>.<uuid> (a reclaimed P.recovery), X.carried.<pid>.<uuid>
 * (the boot-time sweep); P.take.<pid>.<uuid> is a take's private file.
 *
 * OS facts it relies on:
 *   - link(2) is atomic and exclusive (EEXIST if the name is taken), so a
 *     file written in full under a private name and then linked to P is
 *     never seen at P without its record.  Some file systems refuse link
 *     (EPERM, ENOTSUP, EOPNOTSUPP, ENOSYS, EXDEV, EMLINK, EINVAL): the take
 *     then falls back to open(O_EXCL) + write + read-back, in which an empty
 *     P is visible between the two calls.
 *   - open(O_CREAT|O_EXCL) is atomic and exclusive.  rename(2) moves
 *     whatever file is at the name; of two renames one gets ENOENT.
 *   - kill(pid, 0) tells whether a pid on this host is alive (EPERM: alive).
 *     Ages compare `at` (else the mtime) with the wall clock: FS time and
 *     process time are assumed one clock.
 *
 * Steps (numbers and labels as in PROTOCOLS.md §5):
 *
 *   CREATE_RECORDED(path, text, token) -> TAKEN(fd) | EXISTS | RECLAIMED |
 *                                         UNRECORDED | raise
 *     take=link (b):
 *       CR1 tmp := path.take.<pid>.<uuid>
 *       CR2 write tmp (O_EXCL)         error: CR5, raise (ENOENT: withLock makes the dir)
 *       CR3 link tmp -> path           ok: CR5, CR6 | EEXIST: CR4, CR5, EXISTS
 *                                      | LINK_UNSUPPORTED: CR5, then (c) | other: CR5, raise
 *       CR4 SWEEP(path)                at most once per process per path
 *       CR5 unlink tmp                 ignored
 *       CR6 open(path, O_RDWR)         error: fd null (held; its record is not rewritten)
 *     take=twocall, or (b) refused (c):
 *       CT1 open(path, O_EXCL)         EEXIST: EXISTS | other: raise
 *       CT2 write the record           error: CT3 close, CT4 read path, CT5 unlink it
 *                                      if empty or it holds our needle; UNRECORDED
 *       CT6 read back: our token?      no (or unreadable): CT7 close, RECLAIMED
 *   SWEEP(path)      SW1 readdir dirname; SW2 stat each "<base>.take.*"; SW3 unlink
 *                    the ones older than grace_ms.  Errors ignored.
 *   STALE_R(P, retain)
 *     SR1 holder := parse(read P)      missing, empty, malformed: null
 *     SR2 this host, integer pid, kill says dead: stale
 *     SR3 this host, our pid, ownLocks[P] != holder.token: stale ("waiting on ourselves")
 *     SR4 no holder: stat P (error: not stale); size 0 and older than grace_ms: stale
 *     SR5 retain: not stale
 *     SR6 now - (parse(at) or mtime) > stale_ms
 *   RECOVERY_STALE(R)  RS1 stat (error: no); RS2 younger than grace_ms: no;
 *                      RS3 empty: yes; RS4 read: this host's dead integer pid: yes
 *   withLock (acquire)
 *     WN1 CREATE_RECORDED(P)           TAKEN: held | ENOENT (once): WN2 mkdir -p, WN1
 *                                      | RECLAIMED: WN1 | UNRECORDED: record_attempts-th
 *                                      raises EIO, else sleep poll_ms x n, WN1
 *                                      | EXISTS: WN3 | other: raise
 *     WN3 STALE_R(P)?                  no: WN4 past wait_ms: BUSY ("Timed out waiting",
 *                                      after a read of P), else sleep poll_ms, WN1
 *     WN5 CREATE_RECORDED(P.recovery)  RECLAIMED, UNRECORDED: WN1 | EXISTS: WN6
 *                                      | other: raise | TAKEN: WN7
 *     WN6 RECOVERY_STALE?              yes: WN6a rename it aside (ENOENT: WN1), WN6b
 *                                      unlink the aside, WN1 | no: past wait_ms: BUSY
 *                                      ("Lock recovery is active or interrupted"),
 *                                      else sleep poll_ms, WN1
 *     WN7 STALE_R(P)?                  yes: WN8 read P, WN9 rename P aside (ENOENT:
 *                                      skip), WN10 unlink the aside (ENOENT: skip);
 *                                      other errno: raise after WN11
 *     WN11 RELEASE_RECORDED(P.recovery) then WN1
 *   RELEASE_RECORDED(path, token, fd)  RR1 close fd; RR3 read; RR4 unlink if our token
 *   release  WR1 close fd (error: raise, the token release is skipped);
 *            WR3 read P; WR4 unlink only if it holds our token (errors ignored)
 *   held: always 1 (no such check in 3.0.157)
 *
 * removeCarriedLocks (§5.6), run by init() when carried_sweep=1, over
 * dirname(P) only (depth 1; the origin walks <root>/<stateDir>/world trees to
 * depth 8): `before` is the moment init runs.  Carried = a regular file named
 * *.lock or *.lock.recovery, at most 1024 bytes, mtime < before, whose
 * trimmed text is empty or starts with {"pid" but is not a record with an
 * integer pid.  Carried *.lock.recovery files are set aside first, directly;
 * then each carried *.lock under its .recovery:
 *     CL1 CREATE_RECORDED(X.recovery)  not taken: leave X (a reclaimer is at work)
 *     CL2 X still carried?  CL3 SET_ASIDE(X); then RELEASE_RECORDED(X.recovery)
 *   SET_ASIDE(X)  SA1 rename X -> X.carried.<pid>.<uuid> (error: done); SA2 read it;
 *                 SA3 it is a holder now: SA4 link it back (EEXIST: retaken),
 *                 SA5 unlink the aside | else SA6 unlink the aside
 * The harness calls init() after it binds the worker to fsx (workloads/worker.c),
 * so these steps are steps like any other: scheduled, faulted and traced.
 *
 *   WAIT (WN4, WN6 before the sleep), the first time in an acquire: REWRITE
 *            every other lock this module instance holds with "waitingFor":
 *            {"path": P, "since": <ISO of the acquire's start>}; when the
 *            acquire ends (taken, timed out, raised) REWRITE them again without
 *   REWRITE(reading)  fd null: nothing (changeHolding is the tab's); else the
 *            holder record again (its take's `at`, token, operation, caller),
 *            padded with spaces before "\n" up to the file's length, then
 *            RW1 pwrite(fd, text, 0)   error: logged (last_error), no RW2
 *            RW2 ftruncate(fd, len)    error: logged
 *            so a shorter record never leaves an old tail.  hold/after-pwrite is
 *            §5.7's hold/between-pwrite-and-ftruncate.
 *
 * A module instance is (process, worker id): the locks one worker id holds in
 * this process are its held readings.  A torture worker holds one lock and
 * waits on nothing while holding it, so REWRITE runs only when a process
 * holds one lock and waits on another (tests/unit_lockfile.cc).
 *
 * Not modelled: the kernel-step (tab) variant (a) of CREATE_RECORDED,
 * RELEASE_RECORDED's and release's changeHolding (RR2, WR2), the rewrites
 * withStorageLockOperation makes on enter/exit of an operation (the harness
 * has no hook inside the critical section) and a crash in the middle of
 * RW1's pwrite.  Decisions where the source is silent: the shape of
 * waitingFor ({"path","since"}) and its removal when the wait ends; a holder
 * record is a JSON object (any other value is null); `at` counts when it
 * parses as toISOString's form, else the mtime; two absent tokens are equal
 * in SR3 (a 3.0.155 record naming our own pid is not "ours"); take files use
 * a fresh uuid each, not the take's token; take=twocall goes straight to (c)
 * (a platform where link is always refused, minus the refused attempt).
 *
 * Points: "lockfile-recorded/<op>/after-<label>" follows step <label> when it
 * succeeded (steps whose errors are ignored: always; stale checks: when they
 * judged stale), plus the "before-" points §5.7 names.  CREATE_RECORDED's
 * points are "take/..." and "take2/..." for P, "recovery-take/..." and
 * "recovery-take2/..." for P.recovery.  Every name is in lr_points[].
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "lockfile_shared.h"
#include "proto.h"

static const char *const lr_take_choices[] = { "link", "twocall", NULL };

static const struct param lr_params[] = {
	[LR_STALE] = { "stale_ms", 60000, PU_MS, NULL,
		       "LOCK_STALE_MS: a record whose `at` (else mtime) is older than this is stale" },
	[LR_GRACE] = { "grace_ms", 5000, PU_MS, NULL,
		       "EMPTY_RECORD_GRACE_MS: an empty lock, .recovery or take file older than "
		       "this is a dead taker's" },
	[LR_WAIT] = { "wait_ms", 10000, PU_MS, NULL,
		      "withLock's timeout from its start (lock wait and recovery wait)" },
	[LR_POLL] = { "poll_ms", 25, PU_MS, NULL,
		      "sleep between tries; n x poll_ms after the n-th unrecorded take" },
	[LR_ATTEMPTS] = { "record_attempts", 3, PU_COUNT, NULL,
			  "RECORD_ATTEMPTS: the n-th take whose record was not written raises EIO" },
	[LR_RETAIN] = { "retain", 0, PU_COUNT, NULL,
			"1: retainLiveOwner (a non-empty record never ages out)" },
	[LR_TAKE] = { "take", LR_TAKE_LINK, PU_CHOICE, lr_take_choices,
		      "link: private file + link(2), two calls only when link is refused; "
		      "twocall: always open(O_EXCL) + write + read-back" },
	[LR_CARRIED] = { "carried_sweep", 0, PU_COUNT, NULL,
			 "1: init() runs removeCarriedLocks over the lock's directory (depth 1)" },
	[LR_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(LR_NPARAMS <= LS_MAX_PARAMS, "too many lockfile-recorded params");
static_assert(sizeof lr_params / sizeof lr_params[0] == LR_NPARAMS + 1, "lr_params out of step");

/* STALE_R(P, retain): 1 stale, 0 not. */
static int lr_stale(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);
	struct lr_holder h;
	struct fsx_stat st;
	int have_st = 0;

	/* [SR1 read] missing, empty, malformed: null */
	lr_read_holder(lk, lk->path, &h);
	fsx_point(PT(STALE_AFTER_READ));

	if (lr_this_host(&h)) {
		/* [SR2 kill] this host's dead pid */
		if (h.pid_int) {
			int dead = lr_pid_dead(h.pid);
			fsx_point(PT(STALE_AFTER_KILL));
			if (dead)
				return 1;
		}
		/* [SR3 own] "A lock recorded under THIS process that this process
		 * does not hold now is no holder's" */
		if (h.pid_int && h.pid == (long long)fsx_getpid()) {
			int same = s->own_set ? lr_token_is(&h, s->own) : !h.has_token;
			if (!same)
				return 1;
		}
	}

	/* [SR4 stat] "an empty one says no one", asked before the live-owner rule */
	if (!h.present) {
		if (fsx_stat(lk->path, &st) != 0) {
			ls_note_errno(lk);
			return 0;
		}
		fsx_point(PT(STALE_AFTER_STAT));
		have_st = 1;
		if (st.size == 0 && ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[LR_GRACE]))
			return 1;
	}

	/* [SR5] retainLiveOwner: a non-empty record never ages out */
	if (lk->param[LR_RETAIN])
		return 0;

	/* [SR6] the age rule: `at`, else the mtime */
	if (h.at_ok)
		return ls_ms_past_us(fsx_now_ms() - h.at_ms, lk->us[LR_STALE]);
	if (!have_st) {
		if (fsx_stat(lk->path, &st) != 0) {
			ls_note_errno(lk);
			return 0; /* elided in the origin: no stamp, no age */
		}
		fsx_point(PT(STALE_AFTER_AGE_STAT));
	}
	return ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[LR_STALE]);
}

/* RECOVERY_STALE(R): no reclaimer is behind it. */
static int lr_recovery_stale(struct lock *lk, const char *rec_path)
{
	struct lr_holder h;
	struct fsx_stat st;
	int dead;

	/* [RS1 stat] */
	if (fsx_stat(rec_path, &st) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(RECOVERY_STALE_AFTER_STAT));
	/* [RS2] */
	if (!ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[LR_GRACE]))
		return 0;
	/* [RS3] */
	if (st.size == 0)
		return 1;
	/* [RS4 read+kill] unparseable or another host's: never stale */
	if (lr_read_holder(lk, rec_path, &h) != 0)
		return 0;
	fsx_point(PT(RECOVERY_STALE_AFTER_READ));
	if (!lr_this_host(&h) || !h.pid_int)
		return 0;
	dead = lr_pid_dead(h.pid);
	fsx_point(PT(RECOVERY_STALE_AFTER_KILL));
	return dead;
}

/* ---- held readings and REWRITE ---- */

/*
 * The locks this process holds now, in take order (the origin's stack of
 * readings); one module instance's are those of one worker id.  Kept by value
 * (what REWRITE needs), so a reading never points into a struct lock that is
 * gone: a lock that is never released keeps its descriptor open, and its
 * reading names that descriptor still.
 */
#define LR_MAX_READINGS 16
struct lr_reading {
	unsigned worker;
	int fd;                      /* -1: none (CR6 failed): REWRITE does nothing */
	size_t rec_len;              /* the record file's length now */
	char token[LR_UUID_LEN + 1];
	char at[40];
};
static struct lr_reading lr_readings[LR_MAX_READINGS];
static unsigned lr_nreadings;

/* lock.h: the only process-wide memory of a protocol is this one's */
void lock_forget_process(void)
{
	lr_nreadings = 0;
}

static void lr_reading_push(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);
	struct lr_reading *r;

	if (lr_nreadings == LR_MAX_READINGS)
		LS_BUG("lockfile-recorded: more than 16 locks held in one process");
	r = &lr_readings[lr_nreadings++];
	r->worker = lk->worker;
	r->fd = s->fd;
	r->rec_len = s->rec_len;
	memcpy(r->token, s->token, sizeof r->token);
	memcpy(r->at, s->at, sizeof r->at);
}

static void lr_reading_pop(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);

	for (unsigned i = lr_nreadings; i-- > 0;) {
		if (lr_readings[i].worker != lk->worker || strcmp(lr_readings[i].token, s->token) != 0)
			continue;
		memmove(&lr_readings[i], &lr_readings[i + 1],
			(lr_nreadings - i - 1) * sizeof lr_readings[0]);
		lr_nreadings--;
		return;
	}
}

/* REWRITE(reading): its record again, with WAITING_PATH's waitingFor or
 * without, padded to the file's length; RW1 pwrite, RW2 ftruncate.  Errors
 * are logged only: the origin's log line, which the harness does not keep. */
static void lr_rewrite(struct lock *waiter, struct lr_reading *r, const char *waiting_path,
		       const char *waiting_since)
{
	size_t len;
	char *text, *g;

	if (r->fd < 0)
		return; /* changeHolding: a tab's; on a host nothing happens */
	/* the caller field names the worker, the same for every lock it holds */
	text = lr_record(waiter, r->token, "withLock", r->at, waiting_path, waiting_since, &len);
	if (!text)
		return;
	if (len < r->rec_len) {
		/* spaces before the "\n": never a shorter file with an old tail */
		g = realloc(text, r->rec_len + 1);
		if (!g)
			goto out;
		text = g;
		memset(text + len - 1, ' ', r->rec_len - len);
		text[r->rec_len - 1] = '\n';
		text[r->rec_len] = '\0';
		len = r->rec_len;
	}
	/* [RW1 pwrite] */
	if (fsx_pwrite(r->fd, text, len, 0) != (ssize_t)len)
		goto out;
	fsx_point(PT(HOLD_AFTER_PWRITE));
	/* [RW2 ftruncate] */
	if (fsx_ftruncate(r->fd, (off_t)len) != 0)
		goto out;
	r->rec_len = len;
	fsx_point(PT(HOLD_AFTER_FTRUNCATE));
out:
	free(text);
}

/* WAIT's rewrite: every other lock this instance holds says what it waits
 * for, once per acquire.  SET 0: the wait is over, rewrite them without. */
static void lr_waiting(struct lock *lk, int set, int64_t started)
{
	struct lr_state *s = lr_state(lk);
	char since[40];

	if (set == s->waiting)
		return;
	s->waiting = set;
	ls_iso(started / 1000, since, sizeof since); /* started: us */
	for (unsigned i = 0; i < lr_nreadings; i++) {
		struct lr_reading *r = &lr_readings[i];

		if (r->worker == lk->worker && !(s->taken && strcmp(r->token, s->token) == 0))
			lr_rewrite(lk, r, set ? lk->path : NULL, since);
	}
}

/* A timeout's message reads the file it names: a step. */
static int lr_timed_out(struct lock *lk, const char *path)
{
	char *text;
	size_t len;

	if (fsx_read_file(path, &text, &len) == 0)
		free(text);
	else
		ls_note_errno(lk);
	fsx_point(PT(TAKE_AFTER_TIMEOUT_READ));
	return LS_BUSY;
}

static void lr_wait(int64_t us, const char *point)
{
	fsx_sleep_us(us);
	fsx_point(point);
}

/* WN6a/WN6b: set a .recovery no reclaimer is behind aside.  0, or -1 raised. */
static int lr_recovery_aside(struct lock *lk, const char *rec_path)
{
	char aside[PATH_MAX], suffix[80], uuid[LR_UUID_LEN + 1];

	lr_uuid(lk, uuid);
	snprintf(suffix, sizeof suffix, ".stale.%ld.%s", (long)fsx_getpid(), uuid);
	if (ls_path_cat(aside, rec_path, suffix) != 0)
		return ls_raise(lk, errno);

	/* [WN6a recovery-rename-aside] */
	fsx_point(PT(RECLAIM_BEFORE_RECOVERY_RENAME_ASIDE));
	if (fsx_rename(rec_path, aside) != 0)
		return ls_note_errno(lk) == ENOENT ? 0 : -1;
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_RENAME_ASIDE));

	/* [WN6b recovery-unlink-aside] */
	if (fsx_unlink(aside) != 0 && ls_note_errno(lk) != ENOENT)
		return -1;
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_UNLINK_ASIDE));
	return 0;
}

/* WN7-WN10, under P.recovery: 0, or an errno to raise. */
static int lr_reclaim_under_recovery(struct lock *lk)
{
	char aside[PATH_MAX], suffix[64], *text;
	size_t len;

	/* [WN7 recheck] */
	if (!lr_stale(lk))
		return 0;
	fsx_point(PT(RECLAIM_AFTER_RECHECK));

	/* [WN8 read-holder] for the log line only */
	if (fsx_read_file(lk->path, &text, &len) == 0)
		free(text);
	else
		ls_note_errno(lk);
	fsx_point(PT(RECLAIM_AFTER_READ_HOLDER));

	/* [WN9 rename-aside] the key TOCTOU: the re-check was true a moment ago */
	snprintf(suffix, sizeof suffix, ".stale.%ld.%lld", (long)fsx_getpid(),
		 (long long)fsx_now_ms());
	if (ls_path_cat(aside, lk->path, suffix) != 0)
		return ls_note_errno(lk);
	fsx_point(PT(RECLAIM_BEFORE_RENAME_ASIDE));
	if (fsx_rename(lk->path, aside) != 0)
		return ls_note_errno(lk) == ENOENT ? 0 : errno;
	fsx_point(PT(RECLAIM_AFTER_RENAME_ASIDE));

	/* [WN10 unlink-salvage] */
	if (fsx_unlink(aside) != 0 && ls_note_errno(lk) != ENOENT)
		return errno;
	fsx_point(PT(RECLAIM_AFTER_UNLINK_SALVAGE));
	return 0;
}

enum { LR_MUTEX_LOCK, LR_MUTEX_RECOVERY }; /* lr_mutexes[] */

/* WN5-WN11: 0 take again, LS_BUSY the recovery timeout, -1 raised. */
static int lr_reclaim(struct lock *lk, int64_t started)
{
	char rec_path[PATH_MAX], rtoken[LR_UUID_LEN + 1], *text;
	enum lr_outcome o;
	size_t len;
	int rfd, raise;

	if (ls_path_cat(rec_path, lk->path, ".recovery") != 0)
		return ls_raise(lk, errno);

	/* [WN5 recovery-take] */
	lr_uuid(lk, rtoken);
	text = lr_record(lk, rtoken, NULL, NULL, NULL, NULL, &len);
	if (!text)
		return ls_raise(lk, errno);
	o = lr_create_recorded(lk, rec_path, text, len, rtoken, &lr_recovery_take,
			       LR_SWEPT_RECOVERY, &rfd);
	free(text);
	switch (o) {
	case LR_RECLAIMED:
	case LR_UNRECORDED:
		return 0;
	case LR_RAISE:
		return -1;
	case LR_EXISTS:
		/* [WN6 recovery-stale-check] */
		if (lr_recovery_stale(lk, rec_path)) {
			fsx_point(PT(RECLAIM_AFTER_RECOVERY_STALE_CHECK));
			return lr_recovery_aside(lk, rec_path);
		}
		if (fsx_now_us() - started > lk->us[LR_WAIT])
			return lr_timed_out(lk, rec_path); /* "Lock recovery is active or interrupted" */
		lr_waiting(lk, 1, started); /* WAIT(P.recovery) */
		lr_wait(lk->us[LR_POLL], PT(TAKE_AFTER_SLEEP));
		return 0;
	case LR_TAKEN:
		break;
	}
	fsx_mutex(LR_MUTEX_RECOVERY, 1, lk->us[LR_GRACE]); /* WN6: set aside after the grace */
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_TAKE));

	raise = lr_reclaim_under_recovery(lk);

	/* [WN11] finally */
	fsx_point(PT(RECLAIM_BEFORE_RECOVERY_RELEASE));
	fsx_mutex(LR_MUTEX_RECOVERY, 0, 0);
	lr_release_recorded(lk, rec_path, rtoken, rfd);
	return raise ? ls_raise(lk, raise) : 0;
}

/* mkdir -p dirname(P). */
static int lr_make_dir(struct lock *lk)
{
	char dir[PATH_MAX], base[PATH_MAX];

	if (lr_split(lk->path, dir, base) != 0 || fsx_mkdir_p(dir) != 0)
		return ls_raise(lk, errno);
	return 0;
}

/* withLock's take loop: 0 held, LS_BUSY timed out, -1 raised. */
static int lr_take_loop(struct lock *lk, int64_t started)
{
	struct lr_state *s = lr_state(lk);
	int64_t unrecorded = 0;
	int made = 0;

	for (;;) {
		enum lr_outcome o;
		size_t len;
		char *text;
		int fd, r;

		/* [WN1 take] */
		ls_iso(fsx_now_ms(), s->at, sizeof s->at);
		text = lr_record(lk, s->token, "withLock", s->at, NULL, NULL, &len);
		if (!text)
			return ls_raise(lk, errno);
		o = lr_create_recorded(lk, lk->path, text, len, s->token, &lr_lock_take,
				       LR_SWEPT_LOCK, &fd);
		free(text);
		switch (o) {
		case LR_TAKEN:
			s->fd = fd;
			s->rec_len = len;
			s->taken = 1;
			s->own_set = 1; /* ownLocks[P] := token */
			memcpy(s->own, s->token, sizeof s->own);
			lr_reading_push(lk); /* push reading(P, fd, record, bytes) */
			return 0;
		case LR_RAISE:
			if (errno != ENOENT || made)
				return ls_raise(lk, errno);
			/* [WN2 dir-mkdir] once */
			made = 1;
			if (lr_make_dir(lk) != 0)
				return -1;
			fsx_point(PT(TAKE_AFTER_DIR_MKDIR));
			continue;
		case LR_RECLAIMED:
			continue; /* no sleep, no deadline check */
		case LR_UNRECORDED:
			if (++unrecorded >= lk->param[LR_ATTEMPTS])
				return ls_raise(lk, EIO);
			lr_wait(lk->us[LR_POLL] * unrecorded, PT(TAKE_AFTER_BACKOFF));
			continue;
		case LR_EXISTS:
			break;
		}

		/* [WN3 stale-check] */
		if (!lr_stale(lk)) {
			/* [WN4] */
			if (fsx_now_us() - started > lk->us[LR_WAIT])
				return lr_timed_out(lk, lk->path);
			lr_waiting(lk, 1, started); /* WAIT(P) */
			lr_wait(lk->us[LR_POLL], PT(TAKE_AFTER_SLEEP));
			continue;
		}
		fsx_point(PT(RECLAIM_AFTER_STALE_CHECK));

		/* [WN5-WN11] then take again */
		r = lr_reclaim(lk, started);
		if (r != 0)
			return r;
	}
}

/* withLock's take: 0 held, LS_BUSY timed out, -1 raised. */
static int lr_acquire(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);
	int64_t started;
	int r, err;

	if (s->taken)
		LS_BUG("lockfile-recorded: acquire while held (release first)");
	if (!lk->rng)
		LS_BUG("lockfile-recorded: no rng for tokens");
	lk->last_error = 0;

	started = fsx_now_us(); /* us: the wait is compared in exact us */
	lr_uuid(lk, s->token);
	s->waiting = 0;
	r = lr_take_loop(lk, started);
	err = errno;
	lr_waiting(lk, 0, started); /* the wait is over: the held records say so */
	errno = err;
	return r;
}

static int lr_held(struct lock *lk)
{
	(void)lk; /* 3.0.157 has no held() check */
	return 1;
}

/* withLock's finally: remove P only while it holds this take's token. */
static int lr_release(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);
	struct lr_holder h;
	int fd = s->fd;

	if (!s->taken)
		return 0;
	s->taken = 0;
	s->own_set = 0; /* delete ownLocks[P] */
	s->fd = -1;
	lr_reading_pop(lk); /* pop reading */

	/* [WR1 close] an error raises, and the token release is skipped */
	if (fd >= 0) {
		if (fsx_close(fd) != 0)
			return ls_raise(lk, ls_note_errno(lk));
		fsx_point(PT(RELEASE_AFTER_CLOSE));
	}
	/* [WR3 read] errors logged only */
	if (lr_read_holder(lk, lk->path, &h) != 0)
		return 0;
	fsx_point(PT(RELEASE_AFTER_READ));
	/* [WR4 unlink] else "release-token-mismatch" */
	if (!lr_token_is(&h, s->token))
		return 0;
	if (fsx_unlink(lk->path) != 0)
		ls_note_errno(lk);
	fsx_point(PT(RELEASE_AFTER_UNLINK));
	return 0;
}

static int lr_init(struct lock *lk)
{
	struct lr_state *s = lr_state(lk);
	char dir[PATH_MAX], base[PATH_MAX];

	memset(s, 0, sizeof *s);
	s->fd = -1;
	if (!lk->param[LR_CARRIED])
		return 0;
	if (!lk->rng)
		LS_BUG("lockfile-recorded: no rng for tokens");
	/* `before`: the start of this process's claim, i.e. now */
	if (lr_split(lk->path, dir, base) == 0)
		lr_remove_carried(lk, dir, fsx_now_ms());
	return 0;
}

static int64_t lr_stale_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[LR_STALE]);
}

/* The timeout (as lockfile-legacy's: the give-up comes within one poll after it). */
static int64_t lr_wait_budget_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[LR_WAIT]);
}

static const struct lock_mutex lr_mutexes[] = {
	{ "lock", "<file>.lock: the lock file (WN2 take .. WR4 unlink)" },
	{ "recovery", "<file>.lock.recovery: serialises reclaimers (WN5 take .. WN11 release); "
		      "a dead reclaimer's is set aside after grace_ms (WN6)" },
	{ NULL, NULL },
};

static const struct lock_absorb lr_absorbs[] = {
	{ LOCK_OP_ACQUIRE, FSX_RENAME, FSX_PATH_UNKNOWN, ENOENT, NULL, 0,
	  "[WN6a recovery-rename-aside] ENOENT: another reclaimer set it aside first" },
	{ LOCK_OP_RELEASE, FSX_READ, FSX_PATH_UNKNOWN, 0, NULL, 0, "[WR3 read] errors logged only" },
	{ LOCK_OP_RELEASE, FSX_UNLINK, FSX_PATH_UNKNOWN, 0, NULL, 0, "[WR4 unlink] errors logged only" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops lockfile_recorded_ops = {
	.name = "lockfile-recorded",
	.origin = "volter world-core 3.0.157, src/world-store.ts",
	.summary = "<file>.lock file made with its record (link(2) of a private file, or two "
		   "calls with read-back); token; empty-record grace; own-pid rule; .recovery "
		   "recorded and reclaimable; release by token; boot-time carried-lock removal",
	.claims = "A lock or a lock's reclaim record is never seen empty while its taker lives, "
		  "so an empty one is always a dead taker's. Where two calls are needed, the take "
		  "is held only if the path reads back this take's token. Release removes the "
		  "file only while it still holds this token. A lock recorded with our own pid "
		  "that we do not hold is stale. A .recovery no reclaimer is behind (empty, or "
		  "this host's dead pid, > 5 s) is reclaimed. The exclusive create (or link "
		  "EEXIST) decides the winner; reclaimers are serialized by .recovery with a "
		  "re-check. Carried locks are removed at open only when empty or a torn "
		  "{\"pid\" prefix older than the boot's claim.",
	.params = lr_params,
	.points = lr_points,
	.mutexes = lr_mutexes,
	.absorbs = lr_absorbs,
	.flags = LOCK_PER_INSTANCE | LOCK_BUSY_MEANS_HELD, /* a dead holder may wait out EMPTY_RECORD_GRACE_MS (a dead reclaimer's .recovery): by age */
	.init = lr_init,
	.acquire = lr_acquire,
	.held = lr_held,
	.release = lr_release,
	.stale_ms = lr_stale_ms,
	.wait_budget_ms = lr_wait_budget_ms,
};
