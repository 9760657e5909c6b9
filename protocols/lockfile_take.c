/*
 * lockfile_take.c - lockfile-recorded's point table and its take and
 * release of one recorded file (TAKE / CT1-CT7 / RELEASE_RECORDED of
 * PROTOCOLS.md), shared by the lock (lockfile_recorded.c), its recovery lock
 * and the leftover sweep (lockfile_sweep.c).  The bottom of the revision's
 * files with lockfile_record.c: it calls neither of the other two.
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

const char *const lr_points[] = {
	[LR_PT_TAKE_AFTER_TMP_WRITE] = "lockfile-recorded/take/after-tmp-write",
	[LR_PT_TAKE_BEFORE_LINK] = "lockfile-recorded/take/before-link",
	[LR_PT_TAKE_AFTER_LINK] = "lockfile-recorded/take/after-link",
	[LR_PT_TAKE_AFTER_SWEEP] = "lockfile-recorded/take/after-sweep",
	[LR_PT_TAKE_AFTER_TMP_UNLINK] = "lockfile-recorded/take/after-tmp-unlink",
	[LR_PT_TAKE_AFTER_OPEN_RW] = "lockfile-recorded/take/after-open-rw",
	[LR_PT_TAKE2_AFTER_CREATE] = "lockfile-recorded/take2/after-create",
	[LR_PT_TAKE2_AFTER_RECORD_WRITE] = "lockfile-recorded/take2/after-record-write",
	[LR_PT_TAKE2_AFTER_FAIL_READ] = "lockfile-recorded/take2/after-fail-read",
	[LR_PT_TAKE2_AFTER_FAIL_UNLINK] = "lockfile-recorded/take2/after-fail-unlink",
	[LR_PT_TAKE2_AFTER_READBACK] = "lockfile-recorded/take2/after-readback",
	[LR_PT_TAKE_AFTER_DIR_MKDIR] = "lockfile-recorded/take/after-dir-mkdir",
	[LR_PT_TAKE_AFTER_BACKOFF] = "lockfile-recorded/take/after-backoff",
	[LR_PT_TAKE_AFTER_TIMEOUT_READ] = "lockfile-recorded/take/after-timeout-read",
	[LR_PT_TAKE_AFTER_SLEEP] = "lockfile-recorded/take/after-sleep",
	[LR_PT_SWEEP_AFTER_READDIR] = "lockfile-recorded/sweep/after-readdir",
	[LR_PT_SWEEP_AFTER_STAT] = "lockfile-recorded/sweep/after-stat",
	[LR_PT_SWEEP_AFTER_UNLINK] = "lockfile-recorded/sweep/after-unlink",
	[LR_PT_STALE_AFTER_READ] = "lockfile-recorded/stale/after-read",
	[LR_PT_STALE_AFTER_KILL] = "lockfile-recorded/stale/after-kill",
	[LR_PT_STALE_AFTER_STAT] = "lockfile-recorded/stale/after-stat",
	[LR_PT_STALE_AFTER_AGE_STAT] = "lockfile-recorded/stale/after-age-stat",
	[LR_PT_RECOVERY_STALE_AFTER_STAT] = "lockfile-recorded/recovery-stale/after-stat",
	[LR_PT_RECOVERY_STALE_AFTER_READ] = "lockfile-recorded/recovery-stale/after-read",
	[LR_PT_RECOVERY_STALE_AFTER_KILL] = "lockfile-recorded/recovery-stale/after-kill",
	[LR_PT_RECLAIM_AFTER_STALE_CHECK] = "lockfile-recorded/reclaim/after-stale-check",
	[LR_PT_RECOVERY_TAKE_AFTER_TMP_WRITE] = "lockfile-recorded/recovery-take/after-tmp-write",
	[LR_PT_RECOVERY_TAKE_BEFORE_LINK] = "lockfile-recorded/recovery-take/before-link",
	[LR_PT_RECOVERY_TAKE_AFTER_LINK] = "lockfile-recorded/recovery-take/after-link",
	[LR_PT_RECOVERY_TAKE_AFTER_SWEEP] = "lockfile-recorded/recovery-take/after-sweep",
	[LR_PT_RECOVERY_TAKE_AFTER_TMP_UNLINK] = "lockfile-recorded/recovery-take/after-tmp-unlink",
	[LR_PT_RECOVERY_TAKE_AFTER_OPEN_RW] = "lockfile-recorded/recovery-take/after-open-rw",
	[LR_PT_RECOVERY_TAKE2_AFTER_CREATE] = "lockfile-recorded/recovery-take2/after-create",
	[LR_PT_RECOVERY_TAKE2_AFTER_RECORD_WRITE] = "lockfile-recorded/recovery-take2/after-record-write",
	[LR_PT_RECOVERY_TAKE2_AFTER_FAIL_READ] = "lockfile-recorded/recovery-take2/after-fail-read",
	[LR_PT_RECOVERY_TAKE2_AFTER_FAIL_UNLINK] = "lockfile-recorded/recovery-take2/after-fail-unlink",
	[LR_PT_RECOVERY_TAKE2_AFTER_READBACK] = "lockfile-recorded/recovery-take2/after-readback",
	[LR_PT_RECLAIM_AFTER_RECOVERY_TAKE] = "lockfile-recorded/reclaim/after-recovery-take",
	[LR_PT_RECLAIM_AFTER_RECOVERY_STALE_CHECK] = "lockfile-recorded/reclaim/after-recovery-stale-check",
	[LR_PT_RECLAIM_BEFORE_RECOVERY_RENAME_ASIDE] = "lockfile-recorded/reclaim/before-recovery-rename-aside",
	[LR_PT_RECLAIM_AFTER_RECOVERY_RENAME_ASIDE] = "lockfile-recorded/reclaim/after-recovery-rename-aside",
	[LR_PT_RECLAIM_AFTER_RECOVERY_UNLINK_ASIDE] = "lockfile-recorded/reclaim/after-recovery-unlink-aside",
	[LR_PT_RECLAIM_AFTER_RECHECK] = "lockfile-recorded/reclaim/after-recheck",
	[LR_PT_RECLAIM_AFTER_READ_HOLDER] = "lockfile-recorded/reclaim/after-read-holder",
	[LR_PT_RECLAIM_BEFORE_RENAME_ASIDE] = "lockfile-recorded/reclaim/before-rename-aside",
	[LR_PT_RECLAIM_AFTER_RENAME_ASIDE] = "lockfile-recorded/reclaim/after-rename-aside",
	[LR_PT_RECLAIM_AFTER_UNLINK_SALVAGE] = "lockfile-recorded/reclaim/after-unlink-salvage",
	[LR_PT_RECLAIM_BEFORE_RECOVERY_RELEASE] = "lockfile-recorded/reclaim/before-recovery-release",
	[LR_PT_RECOVERY_RELEASE_AFTER_CLOSE] = "lockfile-recorded/recovery-release/after-close",
	[LR_PT_RECOVERY_RELEASE_AFTER_READ] = "lockfile-recorded/recovery-release/after-read",
	[LR_PT_RECOVERY_RELEASE_AFTER_UNLINK] = "lockfile-recorded/recovery-release/after-unlink",
	[LR_PT_HOLD_AFTER_PWRITE] = "lockfile-recorded/hold/after-pwrite",
	[LR_PT_HOLD_AFTER_FTRUNCATE] = "lockfile-recorded/hold/after-ftruncate",
	[LR_PT_RELEASE_AFTER_CLOSE] = "lockfile-recorded/release/after-close",
	[LR_PT_RELEASE_AFTER_READ] = "lockfile-recorded/release/after-read",
	[LR_PT_RELEASE_AFTER_UNLINK] = "lockfile-recorded/release/after-unlink",
	[LR_PT_CARRIED_AFTER_READDIR] = "lockfile-recorded/carried/after-readdir",
	[LR_PT_CARRIED_AFTER_STAT] = "lockfile-recorded/carried/after-stat",
	[LR_PT_CARRIED_AFTER_READ] = "lockfile-recorded/carried/after-read",
	[LR_PT_CARRIED_AFTER_RECOVERY_TAKE] = "lockfile-recorded/carried/after-recovery-take",
	[LR_PT_CARRIED_BEFORE_RENAME] = "lockfile-recorded/carried/before-rename",
	[LR_PT_CARRIED_AFTER_RENAME] = "lockfile-recorded/carried/after-rename",
	[LR_PT_CARRIED_AFTER_ASIDE_READ] = "lockfile-recorded/carried/after-aside-read",
	[LR_PT_CARRIED_AFTER_LINK_BACK] = "lockfile-recorded/carried/after-link-back",
	[LR_PT_CARRIED_AFTER_ASIDE_UNLINK] = "lockfile-recorded/carried/after-aside-unlink",
	[LR_NPOINTS] = NULL,
};

const struct lr_take_points lr_lock_take = {
	.tmp_write = LR_PT_TAKE_AFTER_TMP_WRITE,
	.before_link = LR_PT_TAKE_BEFORE_LINK,
	.link = LR_PT_TAKE_AFTER_LINK,
	.sweep = LR_PT_TAKE_AFTER_SWEEP,
	.tmp_unlink = LR_PT_TAKE_AFTER_TMP_UNLINK,
	.open_rw = LR_PT_TAKE_AFTER_OPEN_RW,
	.create = LR_PT_TAKE2_AFTER_CREATE,
	.record_write = LR_PT_TAKE2_AFTER_RECORD_WRITE,
	.fail_read = LR_PT_TAKE2_AFTER_FAIL_READ,
	.fail_unlink = LR_PT_TAKE2_AFTER_FAIL_UNLINK,
	.readback = LR_PT_TAKE2_AFTER_READBACK,
};

const struct lr_take_points lr_recovery_take = {
	.tmp_write = LR_PT_RECOVERY_TAKE_AFTER_TMP_WRITE,
	.before_link = LR_PT_RECOVERY_TAKE_BEFORE_LINK,
	.link = LR_PT_RECOVERY_TAKE_AFTER_LINK,
	.sweep = LR_PT_RECOVERY_TAKE_AFTER_SWEEP,
	.tmp_unlink = LR_PT_RECOVERY_TAKE_AFTER_TMP_UNLINK,
	.open_rw = LR_PT_RECOVERY_TAKE_AFTER_OPEN_RW,
	.create = LR_PT_RECOVERY_TAKE2_AFTER_CREATE,
	.record_write = LR_PT_RECOVERY_TAKE2_AFTER_RECORD_WRITE,
	.fail_read = LR_PT_RECOVERY_TAKE2_AFTER_FAIL_READ,
	.fail_unlink = LR_PT_RECOVERY_TAKE2_AFTER_FAIL_UNLINK,
	.readback = LR_PT_RECOVERY_TAKE2_AFTER_READBACK,
};

/* (c) the two-call take: CT1-CT7. */
static enum lr_outcome lr_take_twocall(struct lock *lk, const char *path, const char *text,
				       size_t len, const char *token,
				       const struct lr_take_points *pt, int *fd_out)
{
	struct lr_holder h;
	char *held;
	size_t hlen;
	int fd;

	/* [CT1 create] */
	fd = fsx_open(path, O_WRONLY | O_CREAT | O_EXCL, 0666);
	if (fd < 0)
		return ls_note_errno(lk) == EEXIST ? LR_EXISTS : LR_RAISE;
	fsx_point(lr_points[pt->create]); /* the empty-file window */

	/* [CT2 record-write] */
	if (fsx_write_all(fd, text, len) != 0) {
		ls_note_errno(lk);
		/* [CT3] */
		if (fsx_close(fd) != 0)
			ls_note_errno(lk);
		/* [CT4 fail-read] '' if empty, "gone" on error */
		if (fsx_read_file(path, &held, &hlen) == 0) {
			fsx_point(lr_points[pt->fail_read]);
			/* [CT5 fail-unlink] only while still empty or this take's */
			if (hlen == 0 || lr_has_needle(held, hlen, token)) {
				if (fsx_unlink(path) != 0)
					ls_note_errno(lk);
				fsx_point(lr_points[pt->fail_unlink]);
			}
			free(held);
		} else {
			ls_note_errno(lk);
		}
		return LR_UNRECORDED;
	}
	fsx_point(lr_points[pt->record_write]);

	/* [CT6 readback] held only if the path reads back this take's token */
	if (lr_read_holder(lk, path, &h) != 0 || !lr_token_is(&h, token)) {
		/* [CT7] */
		if (fsx_close(fd) != 0)
			ls_note_errno(lk);
		return LR_RECLAIMED;
	}
	fsx_point(lr_points[pt->readback]);
	*fd_out = fd;
	return LR_TAKEN;
}

/* link(2) refused by this file system: LINK_UNSUPPORTED. */
static int lr_link_unsupported(int e)
{
	return e == EPERM || e == ENOTSUP || e == EOPNOTSUPP || e == ENOSYS || e == EXDEV ||
	       e == EMLINK || e == EINVAL;
}

/* CREATE_RECORDED(path, text, token), host runtime: (b), falling to (c). */
enum lr_outcome lr_create_recorded(struct lock *lk, const char *path, const char *text,
					  size_t len, const char *token,
					  const struct lr_take_points *pt, unsigned sweep_bit,
					  int *fd_out)
{
	char tmp[PATH_MAX], suffix[80], uuid[LR_UUID_LEN + 1];
	int e, linked;

	*fd_out = -1;
	if (lk->param[LR_TAKE] == LR_TAKE_TWOCALL)
		return lr_take_twocall(lk, path, text, len, token, pt, fd_out);

	/* [CR1] the take's private file */
	lr_uuid(lk, uuid);
	snprintf(suffix, sizeof suffix, ".take.%ld.%s", (long)fsx_getpid(), uuid);
	if (ls_path_cat(tmp, path, suffix) != 0) {
		ls_note_errno(lk);
		return LR_RAISE;
	}

	/* [CR2 tmp-write] */
	if (fsx_write_file(tmp, O_EXCL, text, len) != 0) {
		e = ls_note_errno(lk);
		fsx_unlink(tmp); /* [CR5] ignored */
		errno = e;
		return LR_RAISE;
	}
	fsx_point(lr_points[pt->tmp_write]);

	/* [CR3 link] */
	fsx_point(lr_points[pt->before_link]);
	if (fsx_link(tmp, path) == 0) {
		linked = 1;
		fsx_point(lr_points[pt->link]);
	} else {
		e = ls_note_errno(lk);
		if (e == EEXIST) {
			/* [CR4 sweep] */
			lr_sweep_once(lk, path, sweep_bit);
			fsx_point(lr_points[pt->sweep]);
		}
		if (e == EEXIST || !lr_link_unsupported(e)) {
			fsx_unlink(tmp); /* [CR5] ignored */
			errno = e;
			return e == EEXIST ? LR_EXISTS : LR_RAISE;
		}
		linked = 0; /* refused: two calls */
	}

	/* [CR5 tmp-unlink] ignored */
	if (fsx_unlink(tmp) != 0)
		ls_note_errno(lk);
	fsx_point(lr_points[pt->tmp_unlink]);
	if (!linked)
		return lr_take_twocall(lk, path, text, len, token, pt, fd_out);

	/* [CR6 open-rw] error: held, but its record is then not rewritten */
	*fd_out = fsx_open(path, O_RDWR, 0);
	if (*fd_out < 0)
		ls_note_errno(lk);
	fsx_point(lr_points[pt->open_rw]);
	return LR_TAKEN;
}

/* RELEASE_RECORDED(path, token, fd) on a host: RR1, RR3, RR4.  Errors are
 * logged only. */
void lr_release_recorded(struct lock *lk, const char *path, const char *token, int fd)
{
	struct lr_holder h;

	/* [RR1 close] */
	if (fd >= 0) {
		if (fsx_close(fd) != 0)
			ls_note_errno(lk);
		fsx_point(PT(RECOVERY_RELEASE_AFTER_CLOSE));
	}
	/* [RR3 read] */
	if (lr_read_holder(lk, path, &h) != 0)
		return;
	fsx_point(PT(RECOVERY_RELEASE_AFTER_READ));
	/* [RR4 unlink] only while it holds our token */
	if (!lr_token_is(&h, token))
		return;
	if (fsx_unlink(path) != 0)
		ls_note_errno(lk);
	fsx_point(PT(RECOVERY_RELEASE_AFTER_UNLINK));
}

