/*
 * fsx_file.c - the seam's calls made of several (see fsx.h), built on its
 * own: mkdir -p and a whole-file write are one explore step each; a synced
 * append is a step per call, so a power loss can land between its write and
 * its fsync.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "../core/sched.h"
#include "fsx.h"
#include "fsx_seam.h"
#define FSX_BACKEND_REDIRECT /* the system calls below go to fsx_backend when set */
#include "fsx_backend.h"

static int mkdir_p(const char *path);

/* In explore mode one step; a folder that is already there is no step at
 * all (the look and the return are inside this worker's step, which a
 * sweep cannot split). */
int fsx_mkdir_p(const char *path)
{
	if (!fsx_sched || fsx_compound)
		return mkdir_p(path);
	struct stat st;
	if ((fsx_backend && fsx_backend->folder_known && fsx_backend->folder_known(path)) ||
	    (stat(path, &st) == 0 && S_ISDIR(st.st_mode)))
		return 0;
	sched_step(FSX_MKDIR, path, NULL);
	fsx_compound++;
	int r = mkdir_p(path);
	int err = errno;
	fsx_compound--;
	sched_result(r, err);
	errno = err;
	return r;
}

static int mkdir_p(const char *path)
{
	char buf[4096];
	size_t len = strlen(path);
	if (len == 0 || len >= sizeof buf) {
		errno = len ? ENAMETOOLONG : ENOENT;
		return -1;
	}
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (fsx_mkdir(buf, 0777) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (fsx_mkdir(buf, 0777) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

int fsx_write_file(const char *path, int flags, const void *buf, size_t len)
{
	int own = fsx_compound_begin(FSX_WRITE, path);
	int fd = fsx_open(path, flags | O_WRONLY | O_CREAT, 0666);
	int r = -1;
	if (fd >= 0) {
		r = fsx_write_all(fd, buf, len);
		int err = errno;
		if (fsx_close(fd) != 0 && r == 0) {
			r = -1;
			err = errno;
		}
		errno = err;
	}
	fsx_compound_end(own, r);
	return r;
}

int fsx_append_synced(const char *path, const void *buf, size_t len, int dir_too)
{
	int made = 0;
	int fd = fsx_open(path, O_WRONLY | O_APPEND, 0666);
	if (fd < 0 && errno == ENOENT) {
		fd = fsx_open(path, O_WRONLY | O_APPEND | O_CREAT, 0666);
		made = 1;
	}
	if (fd < 0)
		return -1;
	int r = fsx_write_all(fd, buf, len);
	if (r == 0)
		r = fsx_fsync(fd);
	int err = errno;
	if (fsx_close(fd) != 0 && r == 0) {
		r = -1;
		err = errno;
	}
	if (r == 0 && made && dir_too) {
		char dir[PATH_MAX];
		snprintf(dir, sizeof dir, "%s", path);
		char *slash = strrchr(dir, '/');
		if (slash == dir)
			dir[1] = '\0'; /* a file in / */
		else if (slash)
			*slash = '\0';
		int dfd = fsx_open(slash ? dir : ".", O_RDONLY | O_DIRECTORY, 0);
		r = dfd < 0 ? -1 : fsx_fsync(dfd);
		err = errno;
		if (dfd >= 0)
			fsx_close(dfd);
	}
	errno = err;
	return r;
}
