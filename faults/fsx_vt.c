/*
 * fsx_vt.c - explore mode's virtual file times (see fsx_seam.h).
 */
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../core/sched.h"
#include "fsx_seam.h"
#define FSX_BACKEND_REDIRECT /* the system calls below go to fsx_backend when set */
#include "fsx_backend.h"

/* ---- explore: virtual file times ----
 * Every object a step creates or changes, and the directory it sits in, is
 * stamped with the virtual clock, so a protocol's stat() sees virtual ages. */

void fsx_vt_times(struct timespec ts[2])
{
	int64_t ms = sched_now_ms();
	int64_t sub = sched_now_ns() % 1000000; /* keep the clock's ns: ages order steps */
	ts[0].tv_sec = ts[1].tv_sec = ms / 1000;
	ts[0].tv_nsec = ts[1].tv_nsec = (ms % 1000) * 1000000L + sub;
}

void fsx_vt_stamp(const char *path)
{
	struct timespec ts[2];
	fsx_vt_times(ts);
	utimensat(AT_FDCWD, path, ts, AT_SYMLINK_NOFOLLOW);
}

void fsx_vt_stamp_parent(const char *path)
{
	char dir[4096];
	size_t len = strlen(path);
	if (len >= sizeof dir)
		return;
	memcpy(dir, path, len + 1);
	char *slash = strrchr(dir, '/');
	if (!slash)
		fsx_vt_stamp(".");
	else if (slash == dir)
		fsx_vt_stamp("/");
	else {
		*slash = '\0';
		fsx_vt_stamp(dir);
	}
}

void fsx_vt_stamp_fd(int fd)
{
	struct timespec ts[2];
	fsx_vt_times(ts);
	futimens(fd, ts);
}
