/*
 * fsx_anchor.c - the real file system, with the calls on paths below one
 * folder made relative to a descriptor of it (see fsx_backend.h).
 *
 * A path the kernel resolves from the root walks every folder above the
 * store on each call, a mount point among them; the same call relative to a
 * descriptor of the store walks only what is below it.  On this machine
 * that is half a microsecond of the two or three a call costs, and an
 * execution of a search on the real file system makes some sixty of them.
 *
 * The two resolve to the same object while the folder the descriptor holds
 * is the one at the anchor's path.  So:
 *   - only a path strictly below the anchor, with no `..` in it, is made
 *     relative, and the anchor itself as "." for a call that only looks at
 *     it (a stat, a stamp); everything else goes as it is;
 *   - the descriptor is opened with O_NOFOLLOW: an anchor that is a
 *     symlink, or is gone, is not used (every call goes as it is);
 *   - a successful rmdir or rename of a path that is not below the anchor
 *     (the anchor, a folder above it) moves a shared generation, and every
 *     process opens the anchor again at its next call.  So does a mkdir of
 *     the anchor (a worker's mkdir -p after a sweep removed the store), and the
 *     explorer when it makes the store again (its reset, when it cannot
 *     empty it).
 * A symlink below the anchor that leads above it resolves the same both
 * ways; renaming through one could move the anchor unseen, but the seam
 * makes no symlinks and the workloads make none.
 *
 * The descriptor sits at a high number (ANCHOR_FD_MIN and up), so the
 * descriptors a protocol opens get the numbers they would get without it.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsx_backend.h"

#define ANCHOR_FD_MIN 900

static char anchor[PATH_MAX];
static size_t anchor_len;
static _Atomic uint32_t *anchor_gen; /* shared: moved when the anchor may have moved */
static uint32_t seen_gen;
static int anchor_fd = -1;
static unsigned long changes;        /* calls that may have made or changed something */

/* PATH below the anchor (no `..` in it): the rest; the anchor itself: "."
 * when SELF; else NULL */
static const char *below(const char *path, int self)
{
	if (!anchor_len || strncmp(path, anchor, anchor_len) != 0)
		return NULL;
	const char *rest = path + anchor_len;
	while (*rest == '/')
		rest++;
	if (rest == path + anchor_len && *rest) /* a name that goes on: another folder */
		return NULL;
	if (!*rest)
		return self && rest[-1] != '/' ? "." : NULL;
	return strstr(rest, "..") ? NULL : rest;
}

/* The anchor's descriptor, opened again when the generation moved; -1: none */
static int anchor_dfd(void)
{
	const uint32_t g = atomic_load(anchor_gen);
	if (g == seen_gen && anchor_fd != -2)
		return anchor_fd;
	if (anchor_fd >= 0)
		close(anchor_fd);
	anchor_fd = -1;
	seen_gen = g;
	int fd = open(anchor, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fd < ANCHOR_FD_MIN) {
		anchor_fd = fcntl(fd, F_DUPFD_CLOEXEC, ANCHOR_FD_MIN);
		close(fd);
	} else {
		anchor_fd = fd;
	}
	return anchor_fd;
}

/* The descriptor and the relative path for PATH, or AT_FDCWD and PATH.
 * SELF: a call that only looks (a stat, a stamp) may take the anchor itself
 * as "." */
static int at_(const char *path, const char **rel, int self)
{
	const char *rest = below(path, self);
	int dfd = rest ? anchor_dfd() : -1;
	*rel = dfd >= 0 ? rest : path;
	return dfd >= 0 ? dfd : AT_FDCWD;
}
#define at(path, rel) at_(path, rel, 0)
#define at_look(path, rel) at_(path, rel, 1)

/* after a successful rmdir or rename of PATH (and TO): one not below the
 * anchor may have moved it */
static void moved(const char *path, const char *to)
{
	if (!below(path, 0) || (to && !below(to, 0)))
		atomic_fetch_add(anchor_gen, 1);
}

static int a_mkdir(const char *path, mode_t mode)
{
	const char *rel;
	int dfd = at(path, &rel);
	changes++;
	int r = mkdirat(dfd, rel, mode);
	if (r == 0 && below(path, 1) && !below(path, 0)) /* the anchor made again (a sweep removed it) */
		atomic_fetch_add(anchor_gen, 1);
	return r;
}

static int a_rmdir(const char *path)
{
	const char *rel;
	int dfd = at(path, &rel);
	changes++;
	int r = unlinkat(dfd, rel, AT_REMOVEDIR);
	if (r == 0)
		moved(path, NULL);
	return r;
}

static int a_open(const char *path, int flags, mode_t mode)
{
	const char *rel;
	int dfd = at(path, &rel);
	changes++;
	return openat(dfd, rel, flags, mode);
}

static int a_link(const char *from, const char *to)
{
	const char *rf, *rt;
	int df = at(from, &rf), dt = at(to, &rt);
	changes++;
	return linkat(df, rf, dt, rt, 0);
}

static int a_unlink(const char *path)
{
	const char *rel;
	int dfd = at(path, &rel);
	changes++;
	return unlinkat(dfd, rel, 0);
}

static int a_rename(const char *from, const char *to)
{
	const char *rf, *rt;
	int df = at(from, &rf), dt = at(to, &rt);
	changes++;
	int r = renameat(df, rf, dt, rt);
	if (r == 0)
		moved(from, to);
	return r;
}

static int a_stat(const char *path, struct stat *st)
{
	const char *rel;
	int dfd = at_look(path, &rel);
	return fstatat(dfd, rel, st, 0);
}

static int a_lstat(const char *path, struct stat *st)
{
	const char *rel;
	int dfd = at_look(path, &rel);
	return fstatat(dfd, rel, st, AT_SYMLINK_NOFOLLOW);
}

static int a_statx(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx)
{
	const char *rel = path;
	if (dirfd == AT_FDCWD && path)
		dirfd = at_look(path, &rel);
	return statx(dirfd, rel, flags, mask, sx);
}

static int a_access(const char *path, int mode)
{
	const char *rel;
	int dfd = at_look(path, &rel);
	return faccessat(dfd, rel, mode, 0);
}

static int a_utimensat(int dirfd, const char *path, const struct timespec ts[2], int flags)
{
	const char *rel = path;
	if (dirfd == AT_FDCWD && path)
		dirfd = at_look(path, &rel);
	changes++;
	return utimensat(dirfd, rel, ts, flags);
}

/* The anchor itself, while its descriptor is of the current generation:
 * nothing through the seam has removed or moved it (or a folder above it)
 * since it was opened as a folder, or the generation would have moved. */
static int a_folder_known(const char *path)
{
	const char *rest = below(path, 1);
	return rest && rest[0] == '.' && !rest[1] && anchor_dfd() >= 0;
}

static ssize_t a_write(int fd, const void *buf, size_t len)
{
	changes++;
	return write(fd, buf, len);
}

static ssize_t a_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	changes++;
	return pwrite(fd, buf, len, off);
}

static int a_ftruncate(int fd, off_t len)
{
	changes++;
	return ftruncate(fd, len);
}

static int a_futimens(int fd, const struct timespec ts[2])
{
	changes++;
	return futimens(fd, ts);
}

unsigned long fsx_anchor_changes(void)
{
	return changes;
}

static const struct fsx_backend backend = {
	.mkdir = a_mkdir,
	.rmdir = a_rmdir,
	.open = a_open,
	.close = close,
	.link = a_link,
	.unlink = a_unlink,
	.rename = a_rename,
	.stat = a_stat,
	.lstat = a_lstat,
	.statx = a_statx,
	.access = a_access,
	.opendir = opendir,
	.readdir = readdir,
	.closedir = closedir,
	.read = read,
	.write = a_write,
	.pwrite = a_pwrite,
	.fsync = fsync,
	.ftruncate = a_ftruncate,
	.utimensat = a_utimensat,
	.futimens = a_futimens,
	.flock = flock,
	.folder_known = a_folder_known,
};

const struct fsx_backend *fsx_anchor_backend(const char *dir, _Atomic uint32_t *gen)
{
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (n >= sizeof anchor || dir[0] != '/')
		return NULL;
	memcpy(anchor, dir, n);
	anchor[n] = '\0';
	anchor_len = n;
	anchor_gen = gen;
	seen_gen = atomic_load(gen);
	if (anchor_fd >= 0)
		close(anchor_fd);
	anchor_fd = -2; /* opened at its first call */
	return &backend;
}
