/*
 * pidlock.c - quiver 1.0.0's source lock, source-lock.mjs (PROTOCOLS.md §7).
 *
 * L = <file>.lock is a regular file holding one JSON line, the record
 * {"owner":..,"token":"<uuid>","pid":N,"at":<ms>,"file":"<path>"}, written
 * into the file AFTER the exclusive create.  The token is made once per
 * acquire (reused across its retries) and lets release tell this acquire's
 * lock from a replacement.
 *
 * OS facts it relies on:
 *   - open(O_CREAT|O_EXCL) is atomic and exclusive: one creator, the rest
 *     EEXIST.  It is not atomic with the record: between the create and the
 *     write the file is empty, and a crash there leaves it empty (or, mid
 *     write, torn).
 *   - kill(pid, 0) tells whether a pid names a live process: ESRCH = no
 *     such process, EPERM = alive but not ours (counted alive, as is any
 *     errno but ESRCH).  A pid can be reused by an unrelated process, and in
 *     another pid namespace a live holder answers ESRCH.
 *   - unlink(2) removes by name whatever file is at L at that moment; the
 *     read before it is not atomic with it.
 *   - Ages compare the file's mtime with the wall clock: FS time and process
 *     time are assumed one clock.
 *
 * "A lock is stale when its owner is gone, not when it is old": a readable
 * record is removed only when its pid is dead; only an unreadable one (empty,
 * torn, not JSON, JSON null/false/0/"") is removed by age.
 *
 * Steps (numbers and labels as in PROTOCOLS.md §7.2):
 *
 *   acquire (withSourceLock up to fn())
 *     PL0 dir-mkdir      mkdir -p dirname(L) (a non-directory there: EEXIST)   error: RAISE
 *         deadline := now + wait_ms; token := uuid (from the worker's stream)
 *     loop:
 *       CLEAR
 *       PA1 create       open(L, O_WRONLY|O_CREAT|O_EXCL)   ok: PA2 | EEXIST: PA4 | other: RAISE
 *       PA2 record-write write(fd, JSON(record)+"\n")       error: close, RAISE (L left empty/torn)
 *       PA3 close        errors ignored -> HELD
 *       PA4 T deadline-check   now >= deadline: BUSY (SOURCE_LOCKED)
 *                        sleep max(1, min(retry_ms, deadline - now)); loop
 *   CLEAR
 *     CS1 read           parse(readFile(L)); any error -> null
 *     unreadable (JS-falsy: null, false, 0, ""):
 *       CS2 stat         error: return
 *       T age-check      now - mtime > stale_ms?  no: return
 *       CS3 unreadable-unlink   errors ignored; return
 *     CS4 kill           numeric pid and alive(pid): return
 *                        (a pid that is not an int32 makes Node's process.kill
 *                        throw a non-ESRCH error: alive)
 *     CS5 dead-unlink    errors ignored (also for a record without a numeric pid)
 *   release (releaseOwnLock; only the first call after an acquire acts)
 *     RO1 read           held := parse or null; truthy and held.token !== token: return
 *     RO2 unlink         errors ignored (also when held is null: missing, empty, torn)
 *   held: always 1 (no such check in the origin)
 *
 * Deviation: the origin's lock path is <liveDir>/locks/<sha256(file)[0:24]>.lock;
 * here it is the harness's <file>.lock, which changes nothing the protocol
 * decides.  PL0 makes the same folder (dirname of L).
 *
 * Points: "pidlock/<op>/after-<label>" follows step <label> when it
 * succeeded (steps whose errors are ignored: always; decision steps: when the
 * decision goes on toward taking, clearing or removing the lock).  Every
 * name is listed in pl_points[].
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "proto.h"

/* Indexes into lk->param, in pl_params order. */
enum {
	PL_STALE, /* UNREADABLE_LOCK_STALE_MS */
	PL_WAIT,  /* waitMs */
	PL_RETRY, /* retryMs */
	PL_NPARAMS
};

#define PL_RETRY_FALLBACK_MS 5 /* `Number(retryMs) || 5`: a retry of 0 means 5 */

static const struct param pl_params[] = {
	[PL_STALE] = { "stale_ms", 60000, PU_MS, NULL,
		       "UNREADABLE_LOCK_STALE_MS: an unreadable (empty, torn) lock file older than this "
		       "is removed; a readable one never ages out" },
	[PL_WAIT] = { "wait_ms", 0, PU_MS, NULL,
		      "waitMs: how long acquire retries a lock that exists (0: a single try)" },
	[PL_RETRY] = { "retry_ms", 5, PU_MS, NULL, "retryMs: sleep between tries (0 means 5)" },
	[PL_NPARAMS] = { NULL, 0, PU_COUNT, NULL, NULL },
};
static_assert(PL_NPARAMS <= LS_MAX_PARAMS, "too many pidlock params");
static_assert(sizeof pl_params / sizeof pl_params[0] == PL_NPARAMS + 1, "pl_params out of step");

/* Point names are written once, in pl_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum pl_point {
	PL_PT_ACQUIRE_AFTER_DIR_MKDIR,
	PL_PT_CLEAR_AFTER_READ,
	PL_PT_CLEAR_AFTER_STAT,
	PL_PT_CLEAR_AFTER_AGE_CHECK,
	PL_PT_CLEAR_AFTER_UNREADABLE_UNLINK,
	PL_PT_CLEAR_AFTER_KILL,
	PL_PT_CLEAR_AFTER_DEAD_UNLINK,
	PL_PT_ACQUIRE_AFTER_CREATE,
	PL_PT_ACQUIRE_AFTER_RECORD_WRITE,
	PL_PT_ACQUIRE_AFTER_CLOSE,
	PL_PT_ACQUIRE_AFTER_DEADLINE_CHECK,
	PL_PT_ACQUIRE_AFTER_SLEEP,
	PL_PT_RELEASE_AFTER_READ,
	PL_PT_RELEASE_AFTER_UNLINK,
	PL_NPOINTS
};

static const char *const pl_points[] = {
	[PL_PT_ACQUIRE_AFTER_DIR_MKDIR] = "pidlock/acquire/after-dir-mkdir",
	[PL_PT_CLEAR_AFTER_READ] = "pidlock/clear/after-read",
	[PL_PT_CLEAR_AFTER_STAT] = "pidlock/clear/after-stat",
	[PL_PT_CLEAR_AFTER_AGE_CHECK] = "pidlock/clear/after-age-check",
	[PL_PT_CLEAR_AFTER_UNREADABLE_UNLINK] = "pidlock/clear/after-unreadable-unlink",
	[PL_PT_CLEAR_AFTER_KILL] = "pidlock/clear/after-kill",
	[PL_PT_CLEAR_AFTER_DEAD_UNLINK] = "pidlock/clear/after-dead-unlink",
	[PL_PT_ACQUIRE_AFTER_CREATE] = "pidlock/acquire/after-create",
	[PL_PT_ACQUIRE_AFTER_RECORD_WRITE] = "pidlock/acquire/after-record-write",
	[PL_PT_ACQUIRE_AFTER_CLOSE] = "pidlock/acquire/after-close",
	[PL_PT_ACQUIRE_AFTER_DEADLINE_CHECK] = "pidlock/acquire/after-deadline-check",
	[PL_PT_ACQUIRE_AFTER_SLEEP] = "pidlock/acquire/after-sleep",
	[PL_PT_RELEASE_AFTER_READ] = "pidlock/release/after-read",
	[PL_PT_RELEASE_AFTER_UNLINK] = "pidlock/release/after-unlink",
	[PL_NPOINTS] = NULL,
};
#define PT(name) pl_points[PL_PT_##name]

#define PL_TOKEN_LEN 36 /* a uuid: 8-4-4-4-12 hex */

/* Per-run state, in lk->state. */
struct pl_state {
	char token[PL_TOKEN_LEN + 1]; /* this acquire's token */
	int taken;                    /* an acquire returned 0 and its release has not run */
};
static_assert(sizeof(struct pl_state) <= sizeof(((struct lock *)0)->state),
	      "struct pl_state does not fit in struct lock's state");

static struct pl_state *pl_state(struct lock *lk)
{
	return (struct pl_state *)lk->state.bytes;
}

/* randomUUID(): a version 4 uuid from the worker's stream. */
static void pl_fresh_token(struct lock *lk)
{
	uint64_t hi = prng_next(lk->rng), lo = prng_next(lk->rng);

	hi = (hi & ~0xf000ULL) | 0x4000ULL;                        /* version 4 */
	lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; /* variant 10 */
	snprintf(pl_state(lk)->token, sizeof pl_state(lk)->token,
		 "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(hi >> 32),
		 (unsigned long long)((hi >> 16) & 0xffff), (unsigned long long)(hi & 0xffff),
		 (unsigned long long)(lo >> 48), (unsigned long long)(lo & 0xffffffffffffULL));
}

/*
 * readLock: JSON.parse(readFileSync(L)), any error -> NULL.  Numbers are
 * decoded as doubles and any JSON value is accepted, as JSON.parse does; the
 * caller owns the reference.  JSON null comes back as NULL too.
 */
static json_t *pl_read_lock(struct lock *lk)
{
	json_error_t jerr;
	json_t *v;
	char *buf;
	size_t len;

	if (fsx_read_file(lk->path, &buf, &len) != 0) {
		ls_note_errno(lk);
		return NULL;
	}
	v = json_loadb(buf, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL, &jerr);
	free(buf);
	if (v && json_is_null(v)) {
		json_decref(v);
		return NULL;
	}
	return v;
}

/* JS truthiness of a parsed value (NULL = null). */
static int pl_truthy(const json_t *v)
{
	if (!v || json_is_false(v))
		return 0;
	if (json_is_number(v))
		return json_number_value(v) != 0;
	if (json_is_string(v))
		return json_string_length(v) != 0;
	return 1; /* true, objects and arrays */
}

/*
 * [CS4 kill] isLiveServerPidReachable(held.pid), for a numeric pid.
 * process.kill() throws ERR_INVALID_ARG_TYPE for a pid that is not an int32,
 * and any error but ESRCH counts as alive.
 */
static int pl_pid_alive(double pid)
{
	if (pid != floor(pid) || pid < INT32_MIN || pid > INT32_MAX)
		return 1;
	return fsx_pid_alive((pid_t)pid);
}

/* CLEAR(L): remove the lock at L if its owner is dead, or if it is
 * unreadable and old.  Every error is swallowed. */
static void pl_clear(struct lock *lk)
{
	struct fsx_stat st;
	json_t *held, *pid;
	int alive;

	/* [CS1 read] the judgement is made here */
	held = pl_read_lock(lk);
	fsx_point(PT(CLEAR_AFTER_READ));

	if (!pl_truthy(held)) {
		json_decref(held);
		/* "either a crash truncated it, or we caught the brief window
		 * between create and write in a live acquisition. mtime
		 * distinguishes them." */
		/* [CS2 stat] */
		if (fsx_stat(lk->path, &st) != 0) {
			ls_note_errno(lk);
			return;
		}
		fsx_point(PT(CLEAR_AFTER_STAT));
		/* [T age-check] */
		if (!ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[PL_STALE]))
			return;
		fsx_point(PT(CLEAR_AFTER_AGE_CHECK));
		/* [CS3 unreadable-unlink] */
		if (fsx_unlink(lk->path) != 0)
			ls_note_errno(lk);
		fsx_point(PT(CLEAR_AFTER_UNREADABLE_UNLINK));
		return;
	}

	/* [CS4 kill] only for a numeric pid; anything else goes to CS5 */
	pid = json_is_object(held) ? json_object_get(held, "pid") : NULL;
	if (json_is_number(pid)) {
		alive = pl_pid_alive(json_number_value(pid));
		if (alive) {
			json_decref(held);
			return;
		}
		fsx_point(PT(CLEAR_AFTER_KILL));
	}
	json_decref(held);

	/* [CS5 dead-unlink] */
	if (fsx_unlink(lk->path) != 0)
		ls_note_errno(lk);
	fsx_point(PT(CLEAR_AFTER_DEAD_UNLINK));
}

/* The record line: JSON + "\n", malloc'd; NULL (errno ENOMEM) on failure. */
static char *pl_record(struct lock *lk, size_t *len)
{
	char owner[32];
	json_t *rec;
	char *text, *line;
	size_t n;

	snprintf(owner, sizeof owner, "lockstorm-w%u", lk->worker);
	rec = json_pack("{s:s, s:s, s:I, s:I, s:s}", "owner", owner, "token",
			pl_state(lk)->token, "pid", (json_int_t)fsx_getpid(), "at",
			(json_int_t)fsx_now_ms(), "file", lk->file);
	text = rec ? json_dumps(rec, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
	json_decref(rec);
	if (!text) {
		errno = ENOMEM;
		return NULL;
	}
	n = strlen(text);
	line = realloc(text, n + 2);
	if (!line) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	line[n] = '\n';
	line[n + 1] = '\0';
	*len = n + 1;
	return line;
}

/* [PA2 record-write] then [PA3 close].  0, or -1 with errno (fd closed). */
static int pl_write_record(struct lock *lk, int fd)
{
	size_t len;
	char *line;
	int err;

	line = pl_record(lk, &len);
	if (!line || fsx_write_all(fd, line, len) != 0)
		goto out_close_fd;
	free(line);
	fsx_point(PT(ACQUIRE_AFTER_RECORD_WRITE));

	/* [PA3 close] in the origin's finally: errors ignored */
	if (fsx_close(fd) != 0)
		ls_note_errno(lk);
	fsx_point(PT(ACQUIRE_AFTER_CLOSE));
	return 0;

out_close_fd:
	/* the lock file stays, empty or torn: CLEAR retires it after stale_ms */
	err = ls_note_errno(lk);
	free(line);
	fsx_close(fd);
	errno = err;
	return -1;
}

/* Node's fs.mkdirSync(dir, {recursive: true}): the folder first, its
 * parents only when it is missing one; a non-directory there is EEXIST. */
static int pl_mkdir_p(const char *dir)
{
	struct fsx_stat st;

	if (fsx_mkdir(dir, 0777) == 0)
		return 0;
	if (errno == EEXIST) {
		if (fsx_stat(dir, &st) == 0 && !S_ISDIR(st.mode)) {
			errno = EEXIST;
			return -1;
		}
		return 0;
	}
	if (errno != ENOENT)
		return -1;
	return fsx_mkdir_p(dir);
}

static int pl_init(struct lock *lk)
{
	memset(pl_state(lk), 0, sizeof(struct pl_state));
	return 0;
}

/* withSourceLock up to fn(): 0 held, LS_BUSY (SOURCE_LOCKED), -1 raised. */
static int pl_acquire(struct lock *lk)
{
	struct pl_state *st = pl_state(lk);
	char dir[PATH_MAX];
	char *slash;
	int64_t deadline, now, nap, retry;
	int fd;

	if (st->taken)
		LS_BUG("pidlock: acquire while held (release first)");
	if (!lk->rng)
		LS_BUG("pidlock: no rng for tokens");
	lk->last_error = 0;

	/* [PL0 dir-mkdir] */
	snprintf(dir, sizeof dir, "%s", lk->path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (pl_mkdir_p(dir) != 0) {
			ls_note_errno(lk);
			return -1;
		}
	}
	fsx_point(PT(ACQUIRE_AFTER_DIR_MKDIR));

	deadline = ls_sat_add(fsx_now_us(), lk->us[PL_WAIT]); /* us: exact at any --time-scale */
	pl_fresh_token(lk); /* once per call, reused across retries */

	for (;;) {
		pl_clear(lk);

		/* [PA1 create] */
		fd = fsx_open(lk->path, O_WRONLY | O_CREAT | O_EXCL, 0666);
		if (fd >= 0) {
			fsx_point(PT(ACQUIRE_AFTER_CREATE));
			if (pl_write_record(lk, fd) != 0)
				return -1; /* PA2 raised; errno set */
			st->taken = 1;
			return 0;
		}
		if (ls_note_errno(lk) != EEXIST)
			return -1;

		/* [PA4 T deadline-check] */
		now = fsx_now_us();
		if (now >= deadline)
			return LS_BUSY; /* SOURCE_LOCKED */
		fsx_point(PT(ACQUIRE_AFTER_DEADLINE_CHECK));
		retry = lk->param[PL_RETRY] ? lk->us[PL_RETRY] : PL_RETRY_FALLBACK_MS * 1000;
		nap = deadline - now < retry ? deadline - now : retry;
		fsx_sleep_us(nap > 1 ? nap : 1);
		fsx_point(PT(ACQUIRE_AFTER_SLEEP));
	}
}

static int pl_held(struct lock *lk)
{
	(void)lk;
	return 1;
}

/* releaseOwnLock: never removes a lock another acquire made, as far as one
 * read can tell.  Always 0: the origin ignores every error here. */
static int pl_release(struct lock *lk)
{
	struct pl_state *st = pl_state(lk);
	json_t *held, *tok;
	int mine;

	if (!st->taken)
		return 0;
	st->taken = 0;

	/* [RO1 read] "Remove the lock only if it is still the one this call
	 * created" - or if it cannot be read at all */
	held = pl_read_lock(lk);
	if (pl_truthy(held)) {
		tok = json_is_object(held) ? json_object_get(held, "token") : NULL;
		mine = json_is_string(tok) && strcmp(json_string_value(tok), st->token) == 0;
		json_decref(held);
		if (!mine)
			return 0;
	} else {
		json_decref(held);
	}
	fsx_point(PT(RELEASE_AFTER_READ));

	/* [RO2 unlink] */
	if (fsx_unlink(lk->path) != 0)
		ls_note_errno(lk);
	fsx_point(PT(RELEASE_AFTER_UNLINK));
	return 0;
}

/* Only an unreadable lock ages out; a readable one is never reclaimed by
 * age.  The unreadable age is still the longest a dead process's leftover
 * can block others, so it is what the checker's liveness bound needs. */
static int64_t pl_stale_ms(const struct lock *lk)
{
	return param_us_to_ms(lk->us[PL_STALE]);
}

/* Retries until the deadline; the last sleep ends at it (at least 1 ms). */
static int64_t pl_wait_budget_ms(const struct lock *lk)
{
	if (lk->us[PL_WAIT] == 0)
		return 0; /* a single try */
	return param_us_to_ms(ls_sat_add(lk->us[PL_WAIT], 1000));
}

static const struct lock_absorb pl_absorbs[] = {
	{ LOCK_OP_ACQUIRE, FSX_READ, FSX_PATH_UNKNOWN, 0, NULL, 0, "[CS1 read] any error -> null" },
	{ LOCK_OP_ACQUIRE, FSX_STAT, FSX_PATH_UNKNOWN, 0, NULL, 0, "[CS2 stat] error: return" },
	{ LOCK_OP_ACQUIRE, FSX_UNLINK, FSX_PATH_UNKNOWN, 0, NULL, 0, "[CS3/CS5 unlink] errors ignored" },
	{ LOCK_OP_ACQUIRE, FSX_CLOSE, FSX_PATH_UNKNOWN, 0, NULL, 0, "[PA3 close] errors ignored" },
	{ LOCK_OP_RELEASE, FSX_READ, FSX_PATH_UNKNOWN, 0, NULL, 0, "[RO1 read] an unreadable lock is removed" },
	{ LOCK_OP_RELEASE, FSX_UNLINK, FSX_PATH_UNKNOWN, 0, NULL, 0, "[RO2 unlink] errors ignored" },
	{ 0, 0, FSX_PATH_UNKNOWN, 0, NULL, 0, NULL },
};

const struct lock_ops pidlock_ops = {
	.name = "pidlock",
	.origin = "quiver-cli 1.0.0, scripts/live/source-lock.mjs",
	.summary = "open(O_EXCL) + a record with pid and token written after it; stale when the "
		   "recorded pid is dead, or unreadable and older than 60 s; release only when the "
		   "token matches or the file cannot be read",
	.claims = "A lock is stale when its owner is gone, not when it is old: a dead owner "
		  "releases at once and a live owner keeps its lock however long it needs, so a slow "
		  "critical section is never swept. An unreadable lock is crash-truncated or in the "
		  "brief window between create and write; mtime tells them apart (retired after 60 "
		  "s). Release removes the lock only if it is still the one this call created.",
	.params = pl_params,
	.points = pl_points,
	.flags = LOCK_BUSY_MEANS_HELD, /* SOURCE_LOCKED: another process holds */
	.absorbs = pl_absorbs,
	.init = pl_init,
	.acquire = pl_acquire,
	.held = pl_held,
	.release = pl_release,
	.stale_ms = pl_stale_ms,
	.wait_budget_ms = pl_wait_budget_ms,
};
