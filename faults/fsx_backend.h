/*
 * fsx_backend.h - where the seam's system calls go: the kernel, a modelled
 * file system (explore/mfs_core.c) that the explorer installs, or the
 * kernel with the calls below the explorer's store made relative to it
 * (fsx_anchor.c, explore --fs real).
 *
 * fsx_backend is NULL by default: every call is the system call.  When set,
 * the seam's files (fsx.c, fsx_obj.c, fsx_vt.c) call the table's function
 * instead, with the system call's arguments, and expect its contract: the
 * result, -1 and errno.  Those files define FSX_BACKEND_REDIRECT and include
 * this header after the system headers; the macros below then turn each
 * `mkdir(path, mode)` there into `(fsx_backend ? fsx_backend->mkdir(path,
 * mode) : mkdir(path, mode))`, so the wrappers keep their shape and the hot
 * path gains one predictable branch.
 *
 * Directory streams: opendir returns the backend's own handle (never
 * dereferenced by the seam), readdir a struct dirent the backend owns.
 */
#ifndef LS_FSX_BACKEND_H
#define LS_FSX_BACKEND_H

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <stdint.h>
#include <time.h>
#ifdef __cplusplus
#define _Atomic
#else
#include <stdatomic.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

struct fsx_backend {
	int (*mkdir)(const char *path, mode_t mode);
	int (*rmdir)(const char *path);
	int (*open)(const char *path, int flags, mode_t mode);
	int (*close)(int fd);
	int (*link)(const char *from, const char *to);
	int (*unlink)(const char *path);
	int (*rename)(const char *from, const char *to);
	int (*stat)(const char *path, struct stat *st);
	int (*lstat)(const char *path, struct stat *st);
	int (*statx)(int dirfd, const char *path, int flags, unsigned mask, struct statx *sx);
	int (*access)(const char *path, int mode);
	DIR *(*opendir)(const char *path);
	struct dirent *(*readdir)(DIR *d);
	int (*closedir)(DIR *d);
	ssize_t (*read)(int fd, void *buf, size_t len);
	ssize_t (*write)(int fd, const void *buf, size_t len);
	ssize_t (*pwrite)(int fd, const void *buf, size_t len, off_t off);
	int (*fsync)(int fd);
	int (*ftruncate)(int fd, off_t len);
	int (*utimensat)(int dirfd, const char *path, const struct timespec ts[2], int flags);
	int (*futimens)(int fd, const struct timespec ts[2]);
	int (*flock)(int fd, int op);
	/* Is PATH a folder there now, known without a call?  1: yes; 0: ask
	 * (stat).  NULL: always ask. */
	int (*folder_known)(const char *path);
	int modelled;                /* a modelled file system: a stat costs no system call, and */
				     /* file times are its own (no stamps to defer) */
};

/* NULL: the real file system.  Set before the workers fork (they inherit it). */
extern const struct fsx_backend *fsx_backend;

/* Is the backend a modelled file system (not the kernel's, whatever the path)? */
static inline int fsx_modelled(void)
{
	return fsx_backend && fsx_backend->modelled;
}

/* The real file system, with the calls on paths below DIR (absolute) made
 * relative to a descriptor of it, which every process opens again when
 * *GEN moves (fsx_anchor.c says when; shared by the processes that use it).
 * NULL: DIR is not an absolute path that fits. */
const struct fsx_backend *fsx_anchor_backend(const char *dir, _Atomic uint32_t *gen);
/* The calls this process made through it that may have made or changed
 * something (an open, a mkdir, a stamp ...): one that made none between two
 * looks left the file system as it was, as far as the seam goes. */
unsigned long fsx_anchor_changes(void);

#ifdef FSX_BACKEND_REDIRECT
#include "../core/sys.h"
#define FSX_BE_(name, ...) (fsx_backend ? fsx_backend->name(__VA_ARGS__) : name(__VA_ARGS__))
/* the calls of every op of a run: straight to the kernel (core/sys.h) */
#define FSX_BE_SYS_(name, ...) (fsx_backend ? fsx_backend->name(__VA_ARGS__) : ls_##name(__VA_ARGS__))
#define mkdir(...) FSX_BE_(mkdir, __VA_ARGS__)
#define rmdir(...) FSX_BE_(rmdir, __VA_ARGS__)
#define open(...) FSX_BE_SYS_(open, __VA_ARGS__)
#define close(...) FSX_BE_SYS_(close, __VA_ARGS__)
#define link(...) FSX_BE_(link, __VA_ARGS__)
#define unlink(...) FSX_BE_(unlink, __VA_ARGS__)
#define rename(...) FSX_BE_(rename, __VA_ARGS__)
#define stat(...) FSX_BE_(stat, __VA_ARGS__)
#define lstat(...) FSX_BE_(lstat, __VA_ARGS__)
#define statx(...) FSX_BE_(statx, __VA_ARGS__)
#define access(...) FSX_BE_(access, __VA_ARGS__)
#define opendir(...) FSX_BE_(opendir, __VA_ARGS__)
#define readdir(...) FSX_BE_(readdir, __VA_ARGS__)
#define closedir(...) FSX_BE_(closedir, __VA_ARGS__)
#define read(...) FSX_BE_(read, __VA_ARGS__)
#define write(...) FSX_BE_(write, __VA_ARGS__)
#define pwrite(...) FSX_BE_(pwrite, __VA_ARGS__)
#define fsync(...) FSX_BE_(fsync, __VA_ARGS__)
#define ftruncate(...) FSX_BE_(ftruncate, __VA_ARGS__)
#define utimensat(...) FSX_BE_(utimensat, __VA_ARGS__)
#define futimens(...) FSX_BE_(futimens, __VA_ARGS__)
#define flock(...) FSX_BE_SYS_(flock, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif
