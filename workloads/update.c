/*
 * update.c - the `update` workload: doflow's updateTaskState (PROTOCOLS.md §3).
 *
 *   [AF1 folder-mkdir]  mkdir -p dirname(file)
 *   [AF2 acquire]       the run's protocol; ENOENT retried FOLDER_RACE_RETRIES times
 *                       (2.0.0 revision only: protocols with a held() check)
 *   [UM1 read]          read + parse the state; missing = revision -1
 *                       build: revision+1, own counter+1 (the merge: every other
 *                       worker's counter is carried over from disk)
 *   [UM2 tmp-write]     <file>.<pid>.tmp, O_TRUNC
 *   [UM3 held-check]    2.0.0 only: if !held(): [UM4] rm tmp; lost; retry the
 *                       whole update while attempt < lost_lock_retries
 *   [UM5 rename]        tmp -> file (the commit)
 *   [UM6 release]
 *
 * The state is {"version":1,"revision":N,"counts":{"<worker>":c}}: each commit
 * adds one to the committer's own counter, so the checker counts lost writes
 * exactly, per worker.  write=inplace replaces tmp+rename with an O_TRUNC
 * write of the file itself: a deliberately torn write, so `state-intact`
 * has a protocol-independent way to fail.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../faults/fsx.h"
#include "workload.h"

enum { UP_LOST_RETRIES, UP_FOLDER_RETRIES, UP_WRITE, UP_CARRIED };

static const char *const write_choices[] = { "rename", "inplace", NULL };
static const char *const carried_choices[] = { "none", "empty", "garbage", NULL };

static const struct param update_params[] = {
	{ "lost_lock_retries", 0, PU_COUNT, NULL, "update-merge lostLockRetries: redo the update after held() said no" },
	{ "folder_race_retries", 5, PU_COUNT, NULL, "update-merge FOLDER_RACE_RETRIES: acquires retried on ENOENT" },
	{ "write", 0, PU_CHOICE, write_choices, "rename: tmp + rename (the origin); inplace: O_TRUNC write of the file (torn on purpose)" },
	{ "carried", 0, PU_CHOICE, carried_choices, "start from a restored state dir: a lock FILE <state>.lock left "
	  "empty or with an unparseable record, its time set at the restore (PROTOCOLS.md K-VL-5)" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

/* Point names are written once, in update_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum update_point {
	UP_PT_FOLDER_AFTER_FOLDER_MKDIR,
	UP_PT_WRITE_AFTER_READ,
	UP_PT_WRITE_AFTER_TMP_WRITE,
	UP_PT_WRITE_AFTER_HELD_CHECK,
	UP_PT_WRITE_BEFORE_RENAME,
	UP_PT_WRITE_AFTER_RENAME,
	UP_NPOINTS
};

static const char *const update_points[] = {
	[UP_PT_FOLDER_AFTER_FOLDER_MKDIR] = "update/folder/after-folder-mkdir",
	[UP_PT_WRITE_AFTER_READ] = "update/write/after-read",
	[UP_PT_WRITE_AFTER_TMP_WRITE] = "update/write/after-tmp-write",
	[UP_PT_WRITE_AFTER_HELD_CHECK] = "update/write/after-held-check",
	[UP_PT_WRITE_BEFORE_RENAME] = "update/write/before-rename",
	[UP_PT_WRITE_AFTER_RENAME] = "update/write/after-rename",
	[UP_NPOINTS] = NULL,
};
#define PT(name) update_points[UP_PT_##name]

static int update_setup(const int64_t *wparam, const char *state_file)
{
	/* the first writer creates the state: a missing one reads as revision -1 */
	int carried = (int)wparam[UP_CARRIED];
	if (!carried)
		return 0;
	/* K-VL-5: a lock file carried over a restore, its mtime the restore's */
	char dir[PATH_MAX], lock[PATH_MAX + 8];
	snprintf(dir, sizeof dir, "%s", state_file);
	if (fsx_mkdir_p(dirname(dir)) != 0)
		return -1;
	snprintf(lock, sizeof lock, "%s.lock", state_file);
	static const char garbage[] = "{\"pid\":";
	if (fsx_write_file(lock, O_TRUNC, garbage, carried == 2 ? sizeof garbage - 1 : 0) != 0)
		return -1;
	/* restored a moment (100 ms) before this boot began */
	struct timespec now, ts[2];
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t ns = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec - 100000000LL;
	ts[0].tv_sec = ts[1].tv_sec = ns / 1000000000LL;
	ts[0].tv_nsec = ts[1].tv_nsec = ns % 1000000000LL;
	return fsx_utimens(lock, ts);
}

/* Read and parse; sets *rev to -1 when the file is missing. 0 ok, -1 errno
 * (EBADMSG: the file is there but does not parse). */
static int state_read(struct worker *w, struct update_state *st)
{
	char *buf;
	size_t len;
	st->nworkers = w->workers;
	st->revision = -1;
	st->counts = NULL;
	if (fsx_read_file(w->state_file, &buf, &len) != 0) {
		if (errno != ENOENT)
			return -1;
		st->counts = calloc(st->nworkers, sizeof *st->counts);
		return st->counts ? 0 : -1;
	}
	int r = update_state_parse(buf, len, st); /* allocates st->counts */
	int err = errno;
	free(buf);
	errno = err;
	return r;
}

/* One write of the new state: 0 committed, 1 lost (held() said no), -1 errno. */
static int state_write(struct worker *w, const struct update_state *st, int64_t own)
{
	size_t len;
	char *text = update_state_format(st, &len);
	if (!text)
		return -1;
	int rc = -1;
	if (w->wparam[UP_WRITE] == 1) {
		worker_log(w, EV_COMMIT_BEGIN, 0, st->revision, own, 0);
		fsx_point(PT(WRITE_BEFORE_RENAME));
		if (fsx_write_file(w->state_file, O_TRUNC, text, len) == 0)
			rc = 0;
		goto out_free;
	}
	char tmp[PATH_MAX + 32];
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", w->state_file, (int)fsx_getpid());
	if (fsx_write_file(tmp, O_TRUNC, text, len) != 0)
		goto out_free;
	fsx_point(PT(WRITE_AFTER_TMP_WRITE));
	if (w->lock.ops->flags & LOCK_HAS_HELD) {
		int held = w->lock.ops->held(&w->lock);
		fsx_point(PT(WRITE_AFTER_HELD_CHECK));
		if (!held) {
			fsx_unlink(tmp); /* errors ignored: "stale-temp pruning removes it later" */
			rc = 1;
			goto out_free;
		}
	}
	worker_log(w, EV_COMMIT_BEGIN, 0, st->revision, own, 0);
	fsx_point(PT(WRITE_BEFORE_RENAME));
	if (fsx_rename(tmp, w->state_file) == 0)
		rc = 0;
out_free: {
	int err = errno;
	free(text);
	errno = err;
	}
	return rc;
}

static int update_op(struct worker *w)
{
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", w->state_file);
	dirname(dir);
	int new_rev = (w->lock.ops->flags & LOCK_HAS_HELD) != 0; /* update-merge vs update-merge-legacy */

	for (int64_t attempt = 0;; attempt++) {
		int r;
		for (int64_t tries = 0;; tries++) {
			if (fsx_mkdir_p(dir) != 0) {
				worker_log(w, EV_ACQUIRE_ERROR, errno, attempt, 0, 0);
				return 0;
			}
			fsx_point(PT(FOLDER_AFTER_FOLDER_MKDIR));
			r = worker_acquire(w, attempt);
			if (r == -1 && errno == ENOENT && new_rev && tries < w->wparam[UP_FOLDER_RETRIES])
				continue;
			break;
		}
		if (r != 0)
			return 0;

		struct update_state st = { 0, NULL, 0 };
		if (state_read(w, &st) != 0) {
			int err = errno;
			worker_log(w, EV_READ, err, -1, 0, 0);
			free(st.counts);
			worker_release(w); /* readTaskState threw: the finally still releases */
			return 0;
		}
		int64_t read_rev = st.revision;
		int64_t own = w->id < st.nworkers ? st.counts[w->id] : 0;
		worker_log(w, EV_READ, 0, read_rev, own, 0);
		fsx_point(PT(WRITE_AFTER_READ));

		st.revision = (read_rev < 0 ? 0 : read_rev) + 1;
		st.counts[w->id] = own + 1;
		int wr = state_write(w, &st, own + 1);
		int err = errno;
		free(st.counts);
		if (wr == 0) {
			worker_log(w, EV_COMMIT, 0, read_rev < 0 ? 1 : read_rev + 1, own + 1, 0);
			fsx_point(PT(WRITE_AFTER_RENAME));
		} else if (wr == 1) {
			worker_log(w, EV_LOST, 0, attempt, 0, 0);
		} else {
			worker_log(w, EV_WRITE_ERROR, err, 0, 0, 0);
		}
		worker_release(w);
		if (wr == 1 && attempt < w->wparam[UP_LOST_RETRIES])
			continue;
		return 0;
	}
}

const struct workload_ops update_workload = {
	.name = "update",
	.summary = "doflow updateTaskState: lock, re-read, merge, revision+1, tmp + rename, release",
	.params = update_params,
	.points = update_points,
	.flags = WL_CHECK_STATE,
	.setup = update_setup,
	.op = update_op,
};
