/*
 * fsutil.c - small file utilities (see fsutil.h).
 */
#include "fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

int fsutil_rm_tree(const char *path)
{
	return nftw(path, rm_entry, 32, FTW_DEPTH | FTW_PHYS) == 0 || errno == ENOENT ? 0 : -1;
}

/* struct linux_dirent64, what getdents64 fills */
struct fsutil_dirent {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

int fsutil_each_entry(int dfd, int (*fn)(int dfd, const char *name, unsigned char type, void *arg), void *arg)
{
	union {
		char b[8192];
		uint64_t align;
	} buf;
	for (;;) {
		long k = syscall(SYS_getdents64, dfd, buf.b, sizeof buf.b);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -1 : 0;
		for (long at = 0; at < k;) {
			const struct fsutil_dirent *de = (const struct fsutil_dirent *)(const void *)(buf.b + at);
			at += de->reclen;
			const char *name = de->name;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			int r = fn(dfd, name, de->type, arg);
			if (r)
				return r;
		}
	}
}

/* fsutil_empty_fd's remover: ARG is the folder's path */
static int empty_entry(int dfd, const char *name, unsigned char type, void *arg)
{
	(void)type;
	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	/* a directory (EISDIR on Linux, EPERM elsewhere): the whole tree */
	char sub[PATH_MAX];
	if ((size_t)snprintf(sub, sizeof sub, "%s/%s", (const char *)arg, name) >= sizeof sub) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return fsutil_rm_tree(sub) == 0 ? 0 : -1;
}

int fsutil_empty_fd(int dfd, const char *path)
{
	/* one pass: removing an entry already given leaves the others to come
	 * (POSIX leaves only the removed and added ones open) */
	return fsutil_each_entry(dfd, empty_entry, (void *)path);
}

int fsutil_empty_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	int rc = fsutil_empty_fd(fd, path), saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

char *fsutil_slurp(const char *path, size_t *len)
{
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	struct stat st;
	/* room for the whole file and a byte more: a read that comes back
	 * short of it, having read the size, is the end (nothing writes it
	 * while we read), so a file is one read, not one and another that
	 * says "end" */
	size_t size = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
			      (uint64_t)st.st_size < SIZE_MAX / 2 ? (size_t)st.st_size : 0;
	size_t cap = size ? size + 1 : 65536, n = 0;
	char *buf = malloc(cap + 1);
	while (buf) {
		ssize_t got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
		if (size && n >= size && n < cap) /* short of the room, past the size: the end (not so for /proc) */
			break;
		if (n < cap)
			continue;
		char *g = realloc(buf, cap * 2 + 1);
		if (!g)
			break;
		buf = g;
		cap *= 2;
	}
	close(fd);
	if (buf)
		buf[n] = '\0';
	*len = n;
	return buf;
}

int fsutil_exe_dir(char *out, size_t len)
{
	if (len < 2) {
		errno = ENAMETOOLONG;
		return -1;
	}
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	if (n <= 0)
		return -1;
	out[n] = '\0';
	char *slash = strrchr(out, '/');
	if (!slash) {
		errno = ENOENT;
		return -1;
	}
	*slash = '\0';
	return 0;
}

static int is_type(const char *path, enum fsutil_type type)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return 0;
	return type == FSUTIL_ANY || (type == FSUTIL_FILE && S_ISREG(st.st_mode)) ||
	       (type == FSUTIL_DIR && S_ISDIR(st.st_mode));
}

int fsutil_find_beside(const char *beside, const char *source, enum fsutil_type type, char *out,
		       size_t len)
{
	char dir[4096];
	if (len)
		out[0] = '\0';
	if (fsutil_exe_dir(dir, sizeof dir) == 0) {
		/* a build tree (BUILD/lockstorm) or a copy with its files beside it */
		snprintf(out, len, "%s/%s", dir, beside);
		if (is_type(out, type))
			return 0;
		/* an install: PREFIX/bin/lockstorm and PREFIX/share/lockstorm/ */
		snprintf(out, len, "%s/../share/lockstorm/%s", dir, beside);
		if (is_type(out, type))
			return 0;
	}
#ifdef LS_SOURCE_DIR
	const char *off = getenv("LOCKSTORM_NO_SOURCE_TREE");
	if (source && !(off && *off)) {
		snprintf(out, len, "%s/%s", LS_SOURCE_DIR, source);
		if (is_type(out, type))
			return 0;
	}
#else
	(void)source;
#endif
	errno = ENOENT;
	return -1;
}
