/*
 * lockfile_legacy.c - volter world-core 3.0.155's world storage lock
 * (PROTOCOLS.md §4).
 *
 * P = <file>.lock is a regular file.  Its holder record,
 * {"pid":N,"hostname":"h","at":"<ISO>"}\n, is written *after* the exclusive
 * create, in a second call whose errors are ignored.  P.recovery serializes
 * reclaimers; P.stale.<pid>.<ms> is the aside name of a reclaimed lock.
 *
 * OS facts it relies on:
 *   - open(O_CREAT|O_EXCL) is atomic and exclusive: one creator, the rest
 *     EEXIST.  It decides the holder, and separately the reclaimer.
 *   - rename(2) moves whatever file is at P at that moment; of two renames
 *     of one file only one succeeds (the other: ENOENT).
 *   - A descriptor keeps the file it opened: fstat(fd) and lstat(P) report
 *     the same (dev, ino) while that file is still at P, and release trusts
 *     that.  Inode numbers can be reused once the file is gone (the gap
 *     after VL14's close), and a file system whose descriptor and path
 *     identities differ (a tab's VFS) never matches (K-VL-3).
 *   - kill(pid, 0) tells whether a pid on this host is alive (EPERM: alive).
 *     Ages compare `at` (else the file's mtime) with the wall clock: FS time
 *     and process time are assumed one clock.
 *
 * What it gets wrong (§4.7): a taker killed between create and record leaves
 * an empty lock every waiter times out on until it is stale_ms old, and for
 * ever under retainLiveOwner (K-VL-1); a leftover P.recovery is never
 * removed, so every later reclaim of the lock times out (K-VL-2); release by
 * inode on a tab VFS (K-VL-3); a record that could not be written leaves a
 * live holder with an empty lock (K-VL-6).
 *
 * Steps (numbers and labels as in PROTOCOLS.md §4):
 *
 *   withLock (acquire)
 *     VL1  mkdir -p dirname(P)         error: raise
 *          started := now
 *     VL2  open(P, O_EXCL)             ok: VL12 | EEXIST: VL3 | other: raise
 *     VL3  STALE_L(P, retain)?         no: now-started > wait_ms: BUSY ("Timed out
 *                                      waiting", after a read of P for the message)
 *                                      | else sleep poll_ms, VL2
 *     VL4  open(P.recovery, O_EXCL)    EEXIST: now-started > wait_ms: BUSY ("Lock
 *                                      recovery is active or interrupted") | else
 *                                      sleep poll_ms, VL2 | other: raise
 *     VL5  write {"pid","hostname"}    error: raise (after VL10/VL11)
 *     VL6  STALE_L(P, retain)?         no: VL10
 *     VL7  read P (the log line)
 *     VL8  rename P -> P.stale.<pid>.<ms>   ENOENT: VL10 | other: raise (after VL10/VL11)
 *     VL9  unlink the aside            ENOENT: fine | other: raise (after VL10/VL11)
 *     VL10 close the recovery fd       (ignored)
 *     VL11 unlink P.recovery           by name, unconditionally; error: raise (it
 *                                      replaces an earlier raise, as a throw in a
 *                                      JS finally does); then VL2
 *     VL12 write the record            every error ignored ("best-effort")
 *   STALE_L(P, retain)
 *     SL1  holder := parse(read P)     missing, empty, malformed: null
 *     SL2  holder on this host with an integer pid that kill(pid,0) calls dead: stale
 *     SL3  retain: not stale           (an empty lock is never stale then: K-VL-1)
 *     SL4  stamp := parse(at) if it parses, else stat(P).mtime (stat error: not stale)
 *     SL5  now - stamp > stale_ms
 *   release
 *     VL13 fstat(fd)                   error: raise (fd closed anyway, see below)
 *     VL14 close(fd)                   error: raise
 *     VL15 lstat(P)                    error: return ("already reclaimed")
 *     VL16 same dev and ino: unlink(P) error ignored
 *   held: always 1 (no such check in 3.0.155)
 *
 * Decisions where the source is silent (§0.2 item 6): the age rule's tail is
 * elided; `at` counts when it parses as toISOString's form
 * (YYYY-MM-DDTHH:MM:SS[.fff]Z), anything else falls back to the mtime, and a
 * failing stat there reads as "not stale".  A holder record is a JSON object;
 * any other JSON value is "null".  pidAlive: EPERM counts as alive.  Only
 * withLock exists in the origin, so there is no `form` param (no try or
 * bounded entry point).  An fstat error at VL13 throws out of the origin's
 * finally without closing the descriptor; here it is closed anyway so a long
 * run does not leak descriptors.
 *
 * Points: "lockfile-legacy/<op>/after-<label>" follows step <label> when it
 * succeeded (steps whose errors are ignored: always; stale checks: when they
 * judged the lock stale), plus the "before-" points §4.5 names.  STALE_L's
 * steps are "lockfile-legacy/stale/...", whichever call site runs them.
 * Every name is listed in ll_points[].
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "proto.h"

/* Indexes into lk->param, in ll_params order. */
enum {
	LL_STALE,  /* LOCK_STALE_MS */
	LL_WAIT,   /* withLock's timeout */
	LL_POLL,   /* the sleep between tries */
	LL_RETAIN, /* retainLiveOwner */
	LL_NPARAMS
};

static const struct param ll_params[] = {
	[LL_STALE] = { "stale_ms", 60000, PU_MS, NULL,
		       "LOCK_STALE_MS: a lock whose `at` (else mtime) is older than this is stale" },
	[LL_WAIT] = { "wait_ms", 10000, PU_MS, NULL,
		      "withLock's timeout from its start: 'Timed out waiting' / 'Lock recovery "
		      "is active or interrupted'" },
	[LL_POLL] = { "poll_ms", 25, PU_MS, NULL, "sleep between tries" },
	[LL_RETAIN] = { "retain", 0, PU_COUNT, NULL,
			"1: retainLiveOwner (only a dead pid on this host makes a lock stale)" },
	[LL_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(LL_NPARAMS <= LS_MAX_PARAMS, "too many lockfile-legacy params");
static_assert(sizeof ll_params / sizeof ll_params[0] == LL_NPARAMS + 1, "ll_params out of step");

/* Point names are written once, in ll_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum ll_point {
	LL_PT_TAKE_AFTER_DIR_MKDIR,
	LL_PT_TAKE_AFTER_CREATE,
	LL_PT_TAKE_AFTER_TIMEOUT_READ,
	LL_PT_TAKE_AFTER_SLEEP,
	LL_PT_TAKE_BEFORE_RECORD_WRITE,
	LL_PT_TAKE_AFTER_RECORD_WRITE,
	LL_PT_STALE_AFTER_READ,
	LL_PT_STALE_AFTER_KILL,
	LL_PT_STALE_AFTER_STAT,
	LL_PT_RECLAIM_AFTER_STALE_CHECK,
	LL_PT_RECLAIM_AFTER_RECOVERY_CREATE,
	LL_PT_RECLAIM_AFTER_RECOVERY_WRITE,
	LL_PT_RECLAIM_AFTER_RECHECK,
	LL_PT_RECLAIM_AFTER_READ_HOLDER,
	LL_PT_RECLAIM_BEFORE_RENAME_ASIDE,
	LL_PT_RECLAIM_AFTER_RENAME_ASIDE,
	LL_PT_RECLAIM_AFTER_UNLINK_SALVAGE,
	LL_PT_RECLAIM_AFTER_RECOVERY_CLOSE,
	LL_PT_RECLAIM_BEFORE_RECOVERY_UNLINK,
	LL_PT_RECLAIM_AFTER_RECOVERY_UNLINK,
	LL_PT_RELEASE_AFTER_FSTAT,
	LL_PT_RELEASE_AFTER_CLOSE,
	LL_PT_RELEASE_AFTER_LSTAT,
	LL_PT_RELEASE_AFTER_UNLINK,
	LL_NPOINTS
};

static const char *const ll_points[] = {
	[LL_PT_TAKE_AFTER_DIR_MKDIR] = "lockfile-legacy/take/after-dir-mkdir",
	[LL_PT_TAKE_AFTER_CREATE] = "lockfile-legacy/take/after-create",
	[LL_PT_TAKE_AFTER_TIMEOUT_READ] = "lockfile-legacy/take/after-timeout-read",
	[LL_PT_TAKE_AFTER_SLEEP] = "lockfile-legacy/take/after-sleep",
	[LL_PT_TAKE_BEFORE_RECORD_WRITE] = "lockfile-legacy/take/before-record-write",
	[LL_PT_TAKE_AFTER_RECORD_WRITE] = "lockfile-legacy/take/after-record-write",
	[LL_PT_STALE_AFTER_READ] = "lockfile-legacy/stale/after-read",
	[LL_PT_STALE_AFTER_KILL] = "lockfile-legacy/stale/after-kill",
	[LL_PT_STALE_AFTER_STAT] = "lockfile-legacy/stale/after-stat",
	[LL_PT_RECLAIM_AFTER_STALE_CHECK] = "lockfile-legacy/reclaim/after-stale-check",
	[LL_PT_RECLAIM_AFTER_RECOVERY_CREATE] = "lockfile-legacy/reclaim/after-recovery-create",
	[LL_PT_RECLAIM_AFTER_RECOVERY_WRITE] = "lockfile-legacy/reclaim/after-recovery-write",
	[LL_PT_RECLAIM_AFTER_RECHECK] = "lockfile-legacy/reclaim/after-recheck",
	[LL_PT_RECLAIM_AFTER_READ_HOLDER] = "lockfile-legacy/reclaim/after-read-holder",
	[LL_PT_RECLAIM_BEFORE_RENAME_ASIDE] = "lockfile-legacy/reclaim/before-rename-aside",
	[LL_PT_RECLAIM_AFTER_RENAME_ASIDE] = "lockfile-legacy/reclaim/after-rename-aside",
	[LL_PT_RECLAIM_AFTER_UNLINK_SALVAGE] = "lockfile-legacy/reclaim/after-unlink-salvage",
	[LL_PT_RECLAIM_AFTER_RECOVERY_CLOSE] = "lockfile-legacy/reclaim/after-recovery-close",
	[LL_PT_RECLAIM_BEFORE_RECOVERY_UNLINK] = "lockfile-legacy/reclaim/before-recovery-unlink",
	[LL_PT_RECLAIM_AFTER_RECOVERY_UNLINK] = "lockfile-legacy/reclaim/after-recovery-unlink",
	[LL_PT_RELEASE_AFTER_FSTAT] = "lockfile-legacy/release/after-fstat",
	[LL_PT_RELEASE_AFTER_CLOSE] = "lockfile-legacy/release/after-close",
	[LL_PT_RELEASE_AFTER_LSTAT] = "lockfile-legacy/release/after-lstat",
	[LL_PT_RELEASE_AFTER_UNLINK] = "lockfile-legacy/release/after-unlink",
	[LL_NPOINTS] = NULL,
};
#define PT(name) ll_points[LL_PT_##name]

/* Per-run state, in lk->state. */
struct ll_state {
	int taken; /* acquire returned 0 and release has not run */
	int fd;    /* the held lock's descriptor (from VL2); -1 when none */
};
static_assert(sizeof(struct ll_state) <= sizeof(((struct lock *)0)->state),
	      "struct ll_state does not fit in struct lock's state");

#define LL_HOST_MAX 256

/* What SL1 read: parse(readFile(P)), reduced to the fields STALE_L uses. */
struct ll_holder {
	int present;             /* a JSON object: the JS `holder` is truthy */
	int pid_int;             /* isInteger(holder.pid) */
	long long pid;
	int has_host;            /* holder.hostname is a string */
	char host[LL_HOST_MAX];
	int at_ok;               /* holder.at is a string in toISOString's form */
	int64_t at_ms;
};

static struct ll_state *ll_state(struct lock *lk)
{
	return (struct ll_state *)lk->state.bytes;
}

/* parse(text) into *h; a non-object, or text that does not parse, is null. */
static void ll_parse_holder(const char *text, size_t len, struct ll_holder *h)
{
	json_error_t err;
	json_t *root, *v;

	memset(h, 0, sizeof *h);
	root = json_loadb(text, len, 0, &err);
	if (!root)
		return;
	if (!json_is_object(root))
		goto out;
	h->present = 1;
	v = json_object_get(root, "pid");
	if (json_is_integer(v)) {
		h->pid_int = 1;
		h->pid = json_integer_value(v);
	}
	v = json_object_get(root, "hostname");
	if (json_is_string(v)) {
		h->has_host = 1;
		snprintf(h->host, sizeof h->host, "%s", json_string_value(v));
	}
	v = json_object_get(root, "at");
	if (json_is_string(v) && ls_parse_iso(json_string_value(v), &h->at_ms) == 0)
		h->at_ok = 1;
out:
	json_decref(root);
}

/* !alive(pid); a pid no kill(2) can name is dead. */
static int ll_pid_dead(long long pid)
{
	if (pid < INT_MIN || pid > INT_MAX)
		return 1;
	return !fsx_pid_alive((pid_t)pid);
}

/* The record as JSON (malloc'd); with `at` for the lock, without for
 * P.recovery.  NULL on ENOMEM. */
static char *ll_record(int with_at, size_t *len)
{
	char host[LL_HOST_MAX], at[40];
	json_t *o;
	char *text;

	ls_hostname(host, sizeof host);
	o = json_object();
	if (!o)
		goto out_nomem;
	if (json_object_set_new(o, "pid", json_integer((json_int_t)fsx_getpid())) ||
	    json_object_set_new(o, "hostname", json_string(host)))
		goto out_free;
	if (with_at) {
		ls_iso(fsx_now_ms(), at, sizeof at);
		if (json_object_set_new(o, "at", json_string(at)))
			goto out_free;
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		goto out_nomem;
	*len = strlen(text);
	if (with_at) {
		char *nl = realloc(text, *len + 2); /* the lock's record ends in "\n" */
		if (!nl) {
			free(text);
			goto out_nomem;
		}
		text = nl;
		text[(*len)++] = '\n';
		text[*len] = '\0';
	}
	return text;

out_free:
	json_decref(o);
out_nomem:
	errno = ENOMEM;
	return NULL;
}

/* STALE_L(P, retain): 1 stale, 0 not. */
static int ll_stale(struct lock *lk)
{
	struct ll_holder h;
	struct fsx_stat st;
	char *text;
	size_t len;
	int64_t now;

	/* [SL1 read] missing, empty, malformed: null */
	if (fsx_read_file(lk->path, &text, &len) == 0) {
		ll_parse_holder(text, len, &h);
		free(text);
	} else {
		ls_note_errno(lk);
		memset(&h, 0, sizeof h);
	}
	fsx_point(PT(STALE_AFTER_READ));

	/* [SL2 kill] this host's dead pid */
	if (h.present && h.has_host && h.pid_int) {
		char host[LL_HOST_MAX];

		ls_hostname(host, sizeof host);
		if (strcmp(h.host, host) == 0) {
			int dead = ll_pid_dead(h.pid);
			fsx_point(PT(STALE_AFTER_KILL));
			if (dead)
				return 1;
		}
	}

	/* [SL3] retainLiveOwner: an empty lock is never stale (K-VL-1 step 3) */
	if (lk->param[LL_RETAIN])
		return 0;

	/* [SL4 stat] the age from `at`, else from the file's mtime */
	if (h.at_ok) {
		now = fsx_now_ms();
		return ls_ms_past_us(now - h.at_ms, lk->us[LL_STALE]); /* [SL5 T] */
	}
	if (fsx_stat(lk->path, &st) != 0) {
		ls_note_errno(lk);
		return 0; /* elided in the origin: no stamp, no age */
	}
	fsx_point(PT(STALE_AFTER_STAT));

	/* [SL5 T] */
	return ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[LL_STALE]);
}

/*
 * One reclaim under P.recovery (VL4-VL11): 0 take again (after a sleep when
 * P.recovery was there), LS_BUSY the recovery timeout, -1 raised (errno).
 */
enum { LL_MUTEX_LOCK, LL_MUTEX_RECOVERY }; /* ll_mutexes[] */

static int ll_reclaim(struct lock *lk, int64_t started)
{
	char rec_path[PATH_MAX], aside[PATH_MAX], suffix[64];
	char *text;
	size_t len;
	int rfd, raise = 0;

	if (ls_path_cat(rec_path, lk->path, ".recovery") != 0)
		return ls_raise(lk, errno);

	/* [VL4 recovery-create] */
	rfd = fsx_open(rec_path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (rfd < 0) {
		if (ls_note_errno(lk) != EEXIST)
			return -1;
		/* "Lock recovery is active or interrupted": nothing ever removes a
		 * leftover P.recovery in this revision (K-VL-2) */
		if (fsx_now_us() - started > lk->us[LL_WAIT])
			return LS_BUSY;
		fsx_sleep_us(lk->us[LL_POLL]);
		fsx_point(PT(TAKE_AFTER_SLEEP));
		return 0;
	}
	fsx_mutex(LL_MUTEX_RECOVERY, 1, -1); /* nothing in 3.0.155 takes a P.recovery over */
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_CREATE));

	/* [VL5 recovery-write] */
	text = ll_record(0, &len);
	if (!text || fsx_write_all(rfd, text, len) != 0) {
		raise = ls_note_errno(lk);
		free(text);
		goto out_recovery;
	}
	free(text);
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_WRITE));

	/* [VL6 recheck] "Serialize reclaimers, then re-read" */
	if (!ll_stale(lk))
		goto out_recovery;
	fsx_point(PT(RECLAIM_AFTER_RECHECK));

	/* [VL7 read-holder] for the log line only */
	if (fsx_read_file(lk->path, &text, &len) == 0)
		free(text);
	else
		ls_note_errno(lk);
	fsx_point(PT(RECLAIM_AFTER_READ_HOLDER));

	/* [VL8 rename-aside] */
	snprintf(suffix, sizeof suffix, ".stale.%ld.%lld", (long)fsx_getpid(),
		 (long long)fsx_now_ms());
	if (ls_path_cat(aside, lk->path, suffix) != 0) {
		raise = ls_note_errno(lk);
		goto out_recovery;
	}
	fsx_point(PT(RECLAIM_BEFORE_RENAME_ASIDE));
	if (fsx_rename(lk->path, aside) != 0) {
		if (ls_note_errno(lk) != ENOENT)
			raise = errno;
		goto out_recovery;
	}
	fsx_point(PT(RECLAIM_AFTER_RENAME_ASIDE));

	/* [VL9 unlink-salvage] */
	if (fsx_unlink(aside) != 0 && ls_note_errno(lk) != ENOENT) {
		raise = errno;
		goto out_recovery;
	}
	fsx_point(PT(RECLAIM_AFTER_UNLINK_SALVAGE));

out_recovery:
	/* [VL10 recovery-close] ignored */
	if (fsx_close(rfd) != 0)
		ls_note_errno(lk);
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_CLOSE));

	/* [VL11 recovery-unlink] by name: a raise here replaces the earlier one */
	fsx_point(PT(RECLAIM_BEFORE_RECOVERY_UNLINK));
	fsx_mutex(LL_MUTEX_RECOVERY, 0, 0);
	if (fsx_unlink(rec_path) != 0)
		return ls_raise(lk, ls_note_errno(lk));
	fsx_point(PT(RECLAIM_AFTER_RECOVERY_UNLINK));
	return raise ? ls_raise(lk, raise) : 0;
}

/* The timeout's message reads P ("held by pid ... for ...ms"): a step. */
static int ll_timed_out(struct lock *lk)
{
	char *text;
	size_t len;

	if (fsx_read_file(lk->path, &text, &len) == 0)
		free(text);
	else
		ls_note_errno(lk);
	fsx_point(PT(TAKE_AFTER_TIMEOUT_READ));
	return LS_BUSY;
}

static int ll_init(struct lock *lk)
{
	struct ll_state *st = ll_state(lk);

	memset(st, 0, sizeof *st);
	st->fd = -1;
	return 0;
}

/* withLock's take: 0 held, LS_BUSY timed out, -1 raised. */
static int ll_acquire(struct lock *lk)
{
	struct ll_state *st = ll_state(lk);
	char dir[PATH_MAX], *slash, *text;
	int64_t started;
	size_t len;
	int fd;

	if (st->taken)
		LS_BUG("lockfile-legacy: acquire while held (release first)");
	lk->last_error = 0;

	/* [VL1 dir-mkdir] */
	snprintf(dir, sizeof dir, "%s", lk->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (fsx_mkdir_p(dir) != 0)
			return ls_raise(lk, errno);
	}
	fsx_point(PT(TAKE_AFTER_DIR_MKDIR));

	started = fsx_now_us(); /* us: the wait is compared in exact us */
	for (;;) {
		int r;

		/* [VL2 create] */
		fd = fsx_open(lk->path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0)
			break;
		if (ls_note_errno(lk) != EEXIST)
			return -1;

		/* [VL3 stale-check] */
		if (!ll_stale(lk)) {
			if (fsx_now_us() - started > lk->us[LL_WAIT])
				return ll_timed_out(lk);
			fsx_sleep_us(lk->us[LL_POLL]);
			fsx_point(PT(TAKE_AFTER_SLEEP));
			continue;
		}
		fsx_point(PT(RECLAIM_AFTER_STALE_CHECK));

		/* [VL4-VL11] then take again */
		r = ll_reclaim(lk, started);
		if (r != 0)
			return r;
	}
	/* The empty-lock window: a crash here leaves a 0-byte P (K-VL-1). */
	fsx_point(PT(TAKE_AFTER_CREATE));

	/* [VL12 record-write] "best-effort: doesn't weaken exclusivity" */
	fsx_point(PT(TAKE_BEFORE_RECORD_WRITE));
	text = ll_record(1, &len);
	if (!text || fsx_write_all(fd, text, len) != 0)
		ls_note_errno(lk); /* ignored (K-VL-6) */
	free(text);
	fsx_point(PT(TAKE_AFTER_RECORD_WRITE));

	st->fd = fd;
	st->taken = 1;
	return 0;
}

static int ll_held(struct lock *lk)
{
	(void)lk; /* 3.0.155 has no held() check */
	return 1;
}

/* withLock's finally: remove P only while it is the file our fd opened. */
static int ll_release(struct lock *lk)
{
	struct ll_state *st = ll_state(lk);
	struct fsx_stat held, cur;
	int fd = st->fd;

	if (!st->taken)
		return 0;
	st->taken = 0;
	st->fd = -1;

	/* [VL13 fstat] */
	if (fsx_fstat(fd, &held) != 0) {
		int e = ls_note_errno(lk);
		fsx_close(fd); /* the origin leaks it; a worker must not */
		return ls_raise(lk, e);
	}
	fsx_point(PT(RELEASE_AFTER_FSTAT));

	/* [VL14 close] from here the inode number can be reused */
	if (fsx_close(fd) != 0)
		return ls_raise(lk, ls_note_errno(lk));
	fsx_point(PT(RELEASE_AFTER_CLOSE));

	/* [VL15 lstat] "already reclaimed by a stale-lock sweep" */
	if (fsx_lstat(lk->path, &cur) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(RELEASE_AFTER_LSTAT));

	/* [VL16 unlink] errors ignored */
	if (held.dev == cur.dev && held.ino == cur.ino) {
		if (fsx_unlink(lk->path) != 0)
			ls_note_errno(lk);
		fsx_point(PT(RELEASE_AFTER_UNLINK));
	}
	return 0;
}

static int64_t ll_stale_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[LL_STALE]);
}

/* The timeout: a waiter gives up at its first look past it, so within one
 * poll after it (the checker's bounds allow that much and more).  Not the
 * timeout plus a poll: in virtual time a waiter gives up exactly one step
 * past the timeout, and "waited its whole budget" must hold then (K-VL-3). */
static int64_t ll_wait_budget_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[LL_WAIT]);
}

static const struct lock_mutex ll_mutexes[] = {
	{ "lock", "<file>.lock: the lock file (VL2 create .. VL16 unlink)" },
	{ "recovery", "<file>.lock.recovery: serialises reclaimers (VL4 create .. VL11 unlink)" },
	{ NULL, NULL },
};

static const struct lock_absorb ll_absorbs[] = {
	{ LOCK_OP_ACQUIRE, FSX_RENAME, FSX_PATH_UNKNOWN, ENOENT, NULL, 0, "[VL8 rename-aside] ENOENT: another reclaimer won, VL10" },
	{ LOCK_OP_RELEASE, FSX_STAT, FSX_PATH_UNKNOWN, 0, NULL, 0, "[VL15 lstat] error: return (\"already reclaimed\")" },
	{ LOCK_OP_RELEASE, FSX_UNLINK, FSX_PATH_UNKNOWN, 0, NULL, 0, "[VL16 unlink] errors ignored" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops lockfile_legacy_ops = {
	.name = "lockfile-legacy",
	.origin = "volter world-core 3.0.155, src/world-store.ts",
	.summary = "<file>.lock file: open(O_EXCL), then the holder record in a second call; "
		   "reclaim under .recovery, rename-aside; release by fstat/lstat inode compare",
	.claims = "Reclaim is race-safe: only the process that wins the rename clears the stale "
		  "inode, and the exclusive wx create still decides the winner. An earlier stale "
		  "observation never renames a newly acquired live lock: reclaimers are "
		  "serialized by .recovery and re-check under it. Stale means this host's dead "
		  "pid, or age > 60 s (by `at`, else mtime). A freshly created empty lock is left "
		  "alone. The record write is best-effort and doesn't weaken exclusivity.",
	.params = ll_params,
	.points = ll_points,
	.flags = LOCK_DEAD_AT_ONCE | LOCK_PER_INSTANCE | LOCK_BUSY_MEANS_HELD, /* SL2: same host and a dead pid is stale */
	.mutexes = ll_mutexes,
	.absorbs = ll_absorbs,
	.init = ll_init,
	.acquire = ll_acquire,
	.held = ll_held,
	.release = ll_release,
	.stale_ms = ll_stale_ms,
	.wait_budget_ms = ll_wait_budget_ms,
};
