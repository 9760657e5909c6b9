/*
 * fsutil.c - small file utilities (see fsutil.h).
 */
#include "fsutil.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

char *fsutil_slurp(const char *path, size_t *len)
{
	char *buf = NULL;
	size_t n = 0, cap = 0;
	FILE *f = fopen(path, "rb");

	*len = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (n == cap) {
			cap = cap ? cap * 2 : 65536;
			char *g = realloc(buf, cap + 1);
			if (!g)
				break;
			buf = g;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
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
