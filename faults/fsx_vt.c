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

/* The folder PATH's entry sits in, into DIR (DIR_LEN bytes); 0, or -1 when
 * the path is too long to tell. */
static int parent_of(const char *path, char *dir, size_t dir_len)
{
	size_t len = strlen(path);
	if (len >= dir_len)
		return -1;
	memcpy(dir, path, len + 1);
	char *slash = strrchr(dir, '/');
	if (!slash)
		memcpy(dir, ".", 2);
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	return 0;
}

void fsx_vt_stamp_parent(const char *path)
{
	char dir[4096];
	if (parent_of(path, dir, sizeof dir) == 0)
		fsx_vt_stamp(dir);
}

void fsx_vt_stamp_parents(const char *from, const char *to)
{
	char a[4096], b[4096];
	a[0] = '\0';
	if (parent_of(from, a, sizeof a) == 0)
		fsx_vt_stamp(a);
	if (parent_of(to, b, sizeof b) == 0 && strcmp(a, b) != 0) /* a rename inside one folder: once */
		fsx_vt_stamp(b);
}

void fsx_vt_stamp_fd(int fd)
{
	struct timespec ts[2];
	fsx_vt_times(ts);
	futimens(fd, ts);
}
