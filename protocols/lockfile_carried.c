/*
 * lockfile_carried.c - lockfile-recorded's removeCarriedLocks (§5.6 of
 * PROTOCOLS.md): at init, over the lock's directory (depth 1), every carried
 * lock left by an earlier boot is set aside under its .recovery lock and
 * removed.  Above the take (lockfile_take.c) it uses; called by init in
 * lockfile_recorded.c.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../faults/fsx.h"
#include "lock.h"
#include "lockfile_shared.h"
#include "proto.h"

/* ---- removeCarriedLocks (§5.6) ---- */

/* Does NAME end in SUFFIX? */
static int lr_ends_with(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);
	return n > k && strcmp(name + n - k, suffix) == 0;
}

/* carriedNow(X): stat + read + the carried test. */
static int lr_carried_now(struct lock *lk, const char *path, int64_t before_ms)
{
	struct lr_holder h;
	struct fsx_stat st;
	char *text, *p, *end;
	size_t len;
	int carried = 0;

	if (fsx_stat(path, &st) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(CARRIED_AFTER_STAT));
	if (!S_ISREG(st.mode) || st.size > LR_CARRIED_MAX || before_ms > INT64_MAX / 1000000 ||
	    st.mtime_ns >= before_ms * 1000000)
		return 0;
	if (fsx_read_file(path, &text, &len) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(CARRIED_AFTER_READ));
	p = text;
	end = text + len;
	while (p < end && *p && strchr(" \t\r\n\v\f", *p))
		p++;
	while (end > p && end[-1] && strchr(" \t\r\n\v\f", end[-1]))
		end--;
	if (p == end) {
		carried = 1; /* empty: no one */
	} else if ((size_t)(end - p) >= 6 && memcmp(p, "{\"pid\"", 6) == 0) {
		lr_parse_holder(p, (size_t)(end - p), &h);
		carried = !(h.present && h.pid_int); /* a torn record */
	}
	free(text);
	return carried;
}

/* SET_ASIDE(X): 1 removed, 0 left (or put back). */
static int lr_set_aside(struct lock *lk, const char *path)
{
	char aside[PATH_MAX], suffix[80], uuid[LR_UUID_LEN + 1];
	struct lr_holder h;

	lr_uuid(lk, uuid);
	snprintf(suffix, sizeof suffix, ".carried.%ld.%s", (long)fsx_getpid(), uuid);
	if (ls_path_cat(aside, path, suffix) != 0)
		return 0;

	/* [SA1 rename] */
	fsx_point(PT(CARRIED_BEFORE_RENAME));
	if (fsx_rename(path, aside) != 0) {
		ls_note_errno(lk);
		return 0;
	}
	fsx_point(PT(CARRIED_AFTER_RENAME));

	/* [SA2 read] */
	lr_read_holder(lk, aside, &h);
	fsx_point(PT(CARRIED_AFTER_ASIDE_READ));

	/* [SA3] a taker recorded itself meanwhile: put it back */
	if (h.present && h.pid_int) {
		/* [SA4 link-back] EEXIST: "carried-retaken" */
		if (fsx_link(aside, path) != 0)
			ls_note_errno(lk);
		fsx_point(PT(CARRIED_AFTER_LINK_BACK));
		/* [SA5] */
		if (fsx_unlink(aside) != 0)
			ls_note_errno(lk);
		fsx_point(PT(CARRIED_AFTER_ASIDE_UNLINK));
		return 0;
	}
	/* [SA6] */
	if (fsx_unlink(aside) != 0)
		ls_note_errno(lk);
	fsx_point(PT(CARRIED_AFTER_ASIDE_UNLINK));
	return 1;
}

/* removeLock(X): CL1-CL3 under X.recovery. */
static void lr_remove_lock(struct lock *lk, const char *path, int64_t before_ms)
{
	char rec_path[PATH_MAX], rtoken[LR_UUID_LEN + 1], *text;
	enum lr_outcome o;
	size_t len;
	int rfd;

	if (ls_path_cat(rec_path, path, ".recovery") != 0)
		return;
	lr_uuid(lk, rtoken);
	text = lr_record(lk, rtoken, NULL, NULL, NULL, NULL, &len);
	if (!text)
		return;
	/* [CL1] any failure: a reclaimer is at work */
	o = lr_create_recorded(lk, rec_path, text, len, rtoken, &lr_recovery_take, 0, &rfd);
	free(text);
	if (o != LR_TAKEN)
		return;
	fsx_point(PT(CARRIED_AFTER_RECOVERY_TAKE));

	/* [CL2] [CL3] */
	if (lr_carried_now(lk, path, before_ms))
		lr_set_aside(lk, path);
	lr_release_recorded(lk, rec_path, rtoken, rfd);
}

/* removeCarriedLocks over DIR (depth 1): .lock.recovery files first. */
void lr_remove_carried(struct lock *lk, const char *dir, int64_t before_ms)
{
	char path[PATH_MAX];
	struct fsx_list e;

	if (fsx_list(dir, &e) != 0) {
		ls_note_errno(lk);
		return;
	}
	fsx_point(PT(CARRIED_AFTER_READDIR));
	for (size_t i = 0; i < e.n; i++) {
		if (!lr_ends_with(e.names[i], ".lock.recovery") ||
		    snprintf(path, sizeof path, "%s/%s", dir, e.names[i]) >= (int)sizeof path)
			continue;
		if (lr_carried_now(lk, path, before_ms))
			lr_set_aside(lk, path); /* directly, without serialization */
	}
	for (size_t i = 0; i < e.n; i++) {
		if (!lr_ends_with(e.names[i], ".lock") ||
		    snprintf(path, sizeof path, "%s/%s", dir, e.names[i]) >= (int)sizeof path)
			continue;
		lr_remove_lock(lk, path, before_ms);
	}
	fsx_list_free(&e);
}
