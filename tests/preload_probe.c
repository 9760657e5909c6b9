/*
 * preload_probe.c - one libc call per argument group, for the preload shim's
 * tests (integ_exec.cc):
 *
 *   preload_probe mkdir D  rmdir D  link A B  rename A B  openat F ...
 *
 * prints "<call> ok" or "<call> <ERRNO name>" per call and exits 0 (2 on a
 * usage error).  Every call goes through the PLT, so a preloaded shim sees
 * it exactly as it would see a real program's.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

static void report(const char *call, int rc)
{
	if (rc >= 0) {
		printf("%s ok\n", call);
	} else {
		const char *n = strerrorname_np(errno);
		if (n)
			printf("%s %s\n", call, n);
		else
			printf("%s errno%d\n", call, errno);
	}
}

/* close without disturbing the errno being reported */
static void quiet_close(int fd)
{
	int e = errno;
	close(fd);
	errno = e;
}

static int open_dir(const char *d)
{
	return open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* write/pwrite of n bytes to F (created); "ok", the errno, or "short K". */
static void do_write(const char *call, const char *f, long n, int positional)
{
	int fd = open(f, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		report(call, -1);
		return;
	}
	char *buf = malloc((size_t)n + 1);
	memset(buf, 'a', (size_t)n);
	ssize_t w = positional ? pwrite(fd, buf, (size_t)n, 0) : write(fd, buf, (size_t)n);
	if (w >= 0 && w < n)
		printf("%s short %zd\n", call, w);
	else
		report(call, w < 0 ? -1 : 0);
	free(buf);
	close(fd);
}

static int with_fd(const char *f, int flags)
{
	return open(f, flags | O_CLOEXEC, 0644);
}

int main(int argc, char **argv)
{
	int i = 1;
#define NEED(k)                                                                      \
	do {                                                                         \
		if (i + (k) >= argc) {                                               \
			fprintf(stderr, "preload_probe: %s needs %d argument(s)\n", c, k); \
			return 2;                                                    \
		}                                                                    \
	} while (0)
	while (i < argc) {
		const char *c = argv[i];
		int rc;
		if (!strcmp(c, "mkdir")) {
			NEED(1);
			rc = mkdir(argv[i + 1], 0755);
			i += 2;
		} else if (!strcmp(c, "mkdirat")) {
			NEED(1);
			rc = mkdirat(AT_FDCWD, argv[i + 1], 0755);
			i += 2;
		} else if (!strcmp(c, "mkdirat-in")) { /* DIR D: D relative to an fd on DIR */
			NEED(2);
			int d = open_dir(argv[i + 1]);
			rc = d < 0 ? -1 : mkdirat(d, argv[i + 2], 0755);
			if (d >= 0)
				quiet_close(d);
			i += 3;
		} else if (!strcmp(c, "rmdir")) {
			NEED(1);
			rc = rmdir(argv[i + 1]);
			i += 2;
		} else if (!strcmp(c, "unlink")) {
			NEED(1);
			rc = unlink(argv[i + 1]);
			i += 2;
		} else if (!strcmp(c, "unlinkat")) {
			NEED(1);
			rc = unlinkat(AT_FDCWD, argv[i + 1], 0);
			i += 2;
		} else if (!strcmp(c, "unlinkat-dir")) {
			NEED(1);
			rc = unlinkat(AT_FDCWD, argv[i + 1], AT_REMOVEDIR);
			i += 2;
		} else if (!strcmp(c, "link")) {
			NEED(2);
			rc = link(argv[i + 1], argv[i + 2]);
			i += 3;
		} else if (!strcmp(c, "linkat")) {
			NEED(2);
			rc = linkat(AT_FDCWD, argv[i + 1], AT_FDCWD, argv[i + 2], 0);
			i += 3;
		} else if (!strcmp(c, "symlink")) {
			NEED(2);
			rc = symlink(argv[i + 1], argv[i + 2]);
			i += 3;
		} else if (!strcmp(c, "rename")) {
			NEED(2);
			rc = rename(argv[i + 1], argv[i + 2]);
			i += 3;
		} else if (!strcmp(c, "renameat")) {
			NEED(2);
			rc = renameat(AT_FDCWD, argv[i + 1], AT_FDCWD, argv[i + 2]);
			i += 3;
		} else if (!strcmp(c, "renameat2")) {
			NEED(2);
			rc = renameat2(AT_FDCWD, argv[i + 1], AT_FDCWD, argv[i + 2], 0);
			i += 3;
		} else if (!strcmp(c, "open")) { /* F: create or open for writing */
			NEED(1);
			rc = open(argv[i + 1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (rc >= 0)
				quiet_close(rc);
			i += 2;
		} else if (!strcmp(c, "openat")) {
			NEED(1);
			rc = openat(AT_FDCWD, argv[i + 1], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (rc >= 0)
				quiet_close(rc);
			i += 2;
		} else if (!strcmp(c, "openat-in")) { /* DIR F: F relative to an fd on DIR */
			NEED(2);
			int d = open_dir(argv[i + 1]);
			rc = d < 0 ? -1 : openat(d, argv[i + 2], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
			if (rc >= 0)
				quiet_close(rc);
			if (d >= 0)
				quiet_close(d);
			i += 3;
		} else if (!strcmp(c, "creat")) {
			NEED(1);
			rc = creat(argv[i + 1], 0644);
			if (rc >= 0)
				quiet_close(rc);
			i += 2;
		} else if (!strcmp(c, "fopen")) {
			NEED(1);
			FILE *f = fopen(argv[i + 1], "w");
			rc = f ? 0 : -1;
			if (f)
				fclose(f);
			i += 2;
		} else if (!strcmp(c, "utimensat")) {
			NEED(1);
			rc = utimensat(AT_FDCWD, argv[i + 1], NULL, 0);
			i += 2;
		} else if (!strcmp(c, "utimes")) {
			NEED(1);
			rc = utimes(argv[i + 1], NULL);
			i += 2;
		} else if (!strcmp(c, "futimens")) {
			NEED(1);
			int fd = with_fd(argv[i + 1], O_WRONLY | O_CREAT);
			rc = fd < 0 ? -1 : futimens(fd, NULL);
			if (fd >= 0)
				quiet_close(fd);
			i += 2;
		} else if (!strcmp(c, "write") || !strcmp(c, "pwrite")) { /* F N */
			NEED(2);
			do_write(c, argv[i + 1], atol(argv[i + 2]), c[0] == 'p');
			i += 3;
			continue;
		} else if (!strcmp(c, "fsync")) {
			NEED(1);
			int fd = with_fd(argv[i + 1], O_WRONLY | O_CREAT);
			rc = fd < 0 ? -1 : fsync(fd);
			if (fd >= 0)
				quiet_close(fd);
			i += 2;
		} else if (!strcmp(c, "close")) {
			NEED(1);
			int fd = with_fd(argv[i + 1], O_WRONLY | O_CREAT);
			rc = fd < 0 ? -1 : close(fd);
			i += 2;
		} else {
			fprintf(stderr, "preload_probe: unknown call '%s'\n", c);
			return 2;
		}
		report(c, rc);
	}
	return 0;
}
