/*
 * lsexplore_fs.c - the C explore seam's file-system calls (see lsexplore.c):
 * each call on a path inside the store, or on a descriptor opened there, is
 * a step the explorer grants; what it creates or changes gets the virtual
 * time as its mtime.
 */
#include "lsexplore.h"

/* ---- opens ---- */

/* A descriptor opened outside the store: not ours, even if its number was
 * (closed behind the seam's back, by fclose or a raw syscall). */
static int se_fresh(int fd)
{
	if (se.on && fd >= 0)
		se_untrack(fd);
	return fd;
}

static int se_wants_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_MODE(flags)                                 \
	mode_t mode = 0;                                 \
	if (se_wants_mode(flags)) {                      \
		va_list ap;                              \
		va_start(ap, flags);                     \
		mode = (mode_t)va_arg(ap, unsigned int); \
		va_end(ap);                              \
	}

static int se_open(int dirfd, const char *p, int flags, mode_t mode)
{
	unsigned k;
	char word[32];
	if (se_begin("open", p, NULL, 0, &k, word, sizeof word) != 0)
		return -1;
	struct stat st;
	int existed = syscall(SYS_newfstatat, dirfd, p, &st, 0) == 0;
	se.busy = 1;
	int fd = (int)syscall(SYS_openat, dirfd, p, flags, mode);
	int err = fd < 0 ? errno : 0;
	se.busy = 0;
	if (fd >= 0) {
		se_track(fd, dirfd, p);
		if ((flags & O_TRUNC) || ((flags & O_CREAT) && !existed))
			se_stamp(dirfd, p, 1, !existed);
	}
	se_end(k, fd, err);
	return fd;
}

EXPORT int open(const char *p, int flags, ...)
{
	OPEN_MODE(flags);
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, flags, mode) : se_fresh(REAL(open)(p, flags, mode));
}

EXPORT int open64(const char *p, int flags, ...)
{
	OPEN_MODE(flags);
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, flags, mode) : se_fresh(REAL(open64)(p, flags, mode));
}

EXPORT int openat(int dirfd, const char *p, int flags, ...)
{
	OPEN_MODE(flags);
	return se_in_store(dirfd, p) ? se_open(dirfd, p, flags, mode) : se_fresh(REAL(openat)(dirfd, p, flags, mode));
}

EXPORT int openat64(int dirfd, const char *p, int flags, ...)
{
	OPEN_MODE(flags);
	return se_in_store(dirfd, p) ? se_open(dirfd, p, flags, mode) : se_fresh(REAL(openat64)(dirfd, p, flags, mode));
}

EXPORT int __open_2(const char *p, int flags);
EXPORT int __open_2(const char *p, int flags)
{
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, flags, 0) : se_fresh(REAL(__open_2)(p, flags));
}

EXPORT int __open64_2(const char *p, int flags);
EXPORT int __open64_2(const char *p, int flags)
{
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, flags, 0) : se_fresh(REAL(__open64_2)(p, flags));
}

EXPORT int creat(const char *p, mode_t mode)
{
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC, mode) : se_fresh(REAL(creat)(p, mode));
}

EXPORT int creat64(const char *p, mode_t mode)
{
	return se_in_store(AT_FDCWD, p) ? se_open(AT_FDCWD, p, O_WRONLY | O_CREAT | O_TRUNC, mode)
					: se_fresh(REAL(creat64)(p, mode));
}

/* stdio's open: a step; what stdio then reads and writes is libc's own I/O. */
static FILE *se_fopen(const char *p, const char *m, FILE *(*real)(const char *, const char *))
{
	unsigned k;
	char word[32];
	if (se_begin("open", p, NULL, 0, &k, word, sizeof word) != 0)
		return NULL;
	struct stat st;
	int existed = syscall(SYS_newfstatat, AT_FDCWD, p, &st, 0) == 0;
	se.busy = 1;
	FILE *f = real(p, m);
	int err = f ? 0 : errno;
	se.busy = 0;
	if (f && strpbrk(m, "wa"))
		se_stamp(AT_FDCWD, p, strchr(m, 'w') || !existed, !existed);
	se_end(k, f ? 0 : -1, err);
	return f;
}

EXPORT FILE *fopen(const char *p, const char *m)
{
	return se_in_store(AT_FDCWD, p) ? se_fopen(p, m, REAL(fopen)) : REAL(fopen)(p, m);
}

EXPORT FILE *fopen64(const char *p, const char *m)
{
	return se_in_store(AT_FDCWD, p) ? se_fopen(p, m, REAL(fopen64)) : REAL(fopen64)(p, m);
}

/* ---- descriptors ---- */

EXPORT int close(int fd)
{
	if (!se_fd(fd))
		return REAL(close)(fd);
	unsigned k;
	char word[32];
	if (se_begin("close", se.fdp[fd], NULL, 0, &k, word, sizeof word) != 0)
		return -1;
	int r = REAL(close)(fd);
	int err = r ? errno : 0;
	se_untrack(fd);
	se_end(k, r, err);
	return r;
}

static ssize_t se_fdcall(const char *call, int fd, ssize_t (*fn)(int, void *, size_t, off_t), void *buf, size_t n,
			 off_t off, int stamp)
{
	unsigned k;
	char word[32];
	if (se_begin(call, se.fdp[fd], NULL, 0, &k, word, sizeof word) != 0)
		return -1;
	se.busy = 1;
	ssize_t r = fn(fd, buf, n, off);
	int err = r < 0 ? errno : 0;
	se.busy = 0;
	if (r >= 0 && stamp)
		se_stamp_at(AT_FDCWD, NULL, fd);
	se_end(k, r, err);
	return r;
}

static ssize_t se_read_(int fd, void *b, size_t n, off_t off)
{
	(void)off;
	return REAL(read)(fd, b, n);
}

static ssize_t se_pread_(int fd, void *b, size_t n, off_t off)
{
	return REAL(pread)(fd, b, n, off);
}

static ssize_t se_pwrite_(int fd, void *b, size_t n, off_t off)
{
	return REAL(pwrite)(fd, b, n, off);
}

EXPORT ssize_t read(int fd, void *b, size_t n)
{
	if (fd == 0 && se_live() && n > 0) { /* the control pipe: the next op */
		char line[64];
		size_t k = se_next_op(line, sizeof line);
		if (k > n)
			k = n;
		memcpy(b, line, k);
		return (ssize_t)k;
	}
	if (!se_fd(fd))
		return REAL(read)(fd, b, n);
	return se_fdcall("read", fd, se_read_, b, n, 0, 0);
}

EXPORT ssize_t __read_chk(int fd, void *b, size_t n, size_t blen);
EXPORT ssize_t __read_chk(int fd, void *b, size_t n, size_t blen)
{
	if (n > blen)
		abort();
	return read(fd, b, n);
}

EXPORT ssize_t pread(int fd, void *b, size_t n, off_t off)
{
	if (!se_fd(fd))
		return REAL(pread)(fd, b, n, off);
	return se_fdcall("read", fd, se_pread_, b, n, off, 0);
}

EXPORT ssize_t pwrite(int fd, const void *b, size_t n, off_t off)
{
	if (!se_fd(fd))
		return REAL(pwrite)(fd, b, n, off);
	return se_fdcall("write", fd, se_pwrite_, (void *)b, n, off, 1);
}

/* write(2) as a step the explorer may tear: `short-write` (the first
 * SE_TEAR bytes land, then ENOSPC) or `split-write` (they land; the rest is
 * a step of its own, and the call returns once it is written). */
/* The real write of N bytes, stamped with the virtual time when it landed;
 * *ERR its errno (0: none). */
static ssize_t se_write_real(int fd, const char *b, size_t n, int *err)
{
	se.busy = 1;
	ssize_t r = REAL(write)(fd, b, n);
	*err = r < 0 ? errno : 0;
	se.busy = 0;
	if (r >= 0)
		se_stamp_at(AT_FDCWD, NULL, fd);
	return r;
}

static ssize_t se_write(int fd, const char *b, size_t n, int rest)
{
	unsigned k;
	char word[32];
	int err;
	if (se_begin("write", se.fdp[fd], NULL, rest, &k, word, sizeof word) != 0)
		return -1;
	if (word[0] && n > SE_TEAR) {
		ssize_t r = se_write_real(fd, b, SE_TEAR, &err);
		if (r < 0) {
			se_end(k, r, err);
			return -1;
		}
		if (!strcmp(word, "short-write")) { /* the disk is full: the write is torn */
			se_out("done %u ENOSPC", k);
			errno = ENOSPC;
			return -1;
		}
		se_out("done %u part", k);
		ssize_t more = se_write(fd, b + r, n - (size_t)r, 1);
		return more < 0 ? -1 : r + more;
	}
	ssize_t r = se_write_real(fd, b, n, &err);
	se_end(k, r, err);
	return r;
}

EXPORT ssize_t write(int fd, const void *b, size_t n)
{
	if (!se_fd(fd))
		return REAL(write)(fd, b, n);
	return se_write(fd, b, n, 0);
}

static ssize_t se_fsync_(int fd, void *b, size_t n, off_t off)
{
	(void)b, (void)n, (void)off;
	return REAL(fsync)(fd);
}

static ssize_t se_fdatasync_(int fd, void *b, size_t n, off_t off)
{
	(void)b, (void)n, (void)off;
	return REAL(fdatasync)(fd);
}

static ssize_t se_ftruncate_(int fd, void *b, size_t n, off_t off)
{
	(void)b, (void)n;
	return REAL(ftruncate)(fd, off);
}

EXPORT int fsync(int fd)
{
	return se_fd(fd) ? (int)se_fdcall("fsync", fd, se_fsync_, NULL, 0, 0, 0) : REAL(fsync)(fd);
}

EXPORT int fdatasync(int fd)
{
	return se_fd(fd) ? (int)se_fdcall("fdatasync", fd, se_fdatasync_, NULL, 0, 0, 0) : REAL(fdatasync)(fd);
}

EXPORT int ftruncate(int fd, off_t len)
{
	return se_fd(fd) ? (int)se_fdcall("ftruncate", fd, se_ftruncate_, NULL, 0, len, 1) : REAL(ftruncate)(fd, len);
}

/* ---- paths ---- */

EXPORT int mkdir(const char *p, mode_t mode)
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(mkdir)(p, mode);
	SE_PATHCALL("mkdir", p, NULL, REAL(mkdir)(p, mode), se_stamp(AT_FDCWD, p, 1, 1));
}

EXPORT int mkdirat(int dirfd, const char *p, mode_t mode)
{
	if (!se_in_store(dirfd, p))
		return REAL(mkdirat)(dirfd, p, mode);
	SE_PATHCALL("mkdir", p, NULL, REAL(mkdirat)(dirfd, p, mode), se_stamp(dirfd, p, 1, 1));
}

EXPORT int rmdir(const char *p)
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(rmdir)(p);
	SE_PATHCALL("rmdir", p, NULL, REAL(rmdir)(p), se_stamp(AT_FDCWD, p, 0, 1));
}

EXPORT int unlink(const char *p)
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(unlink)(p);
	SE_PATHCALL("unlink", p, NULL, REAL(unlink)(p), se_stamp(AT_FDCWD, p, 0, 1));
}

EXPORT int unlinkat(int dirfd, const char *p, int flags)
{
	if (!se_in_store(dirfd, p))
		return REAL(unlinkat)(dirfd, p, flags);
	SE_PATHCALL(flags & AT_REMOVEDIR ? "rmdir" : "unlink", p, NULL, REAL(unlinkat)(dirfd, p, flags),
		    se_stamp(dirfd, p, 0, 1));
}

EXPORT int link(const char *old, const char *new)
{
	if (!se_in_store(AT_FDCWD, old) && !se_in_store(AT_FDCWD, new))
		return REAL(link)(old, new);
	SE_PATHCALL("link", old, new, REAL(link)(old, new), se_stamp(AT_FDCWD, new, 0, 1));
}

EXPORT int linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags)
{
	if (!se_in_store(olddirfd, old) && !se_in_store(newdirfd, new))
		return REAL(linkat)(olddirfd, old, newdirfd, new, flags);
	SE_PATHCALL("link", old, new, REAL(linkat)(olddirfd, old, newdirfd, new, flags), se_stamp(newdirfd, new, 0, 1));
}

EXPORT int symlink(const char *target, const char *new)
{
	if (!se_in_store(AT_FDCWD, new))
		return REAL(symlink)(target, new);
	SE_PATHCALL("symlink", new, NULL, REAL(symlink)(target, new), se_stamp(AT_FDCWD, new, 0, 1));
}

EXPORT int rename(const char *old, const char *new)
{
	if (!se_in_store(AT_FDCWD, old) && !se_in_store(AT_FDCWD, new))
		return REAL(rename)(old, new);
	SE_PATHCALL("rename", old, new, REAL(rename)(old, new), se_stamp(AT_FDCWD, new, 0, 1));
}

EXPORT int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	if (!se_in_store(olddirfd, old) && !se_in_store(newdirfd, new))
		return REAL(renameat)(olddirfd, old, newdirfd, new);
	SE_PATHCALL("rename", old, new, REAL(renameat)(olddirfd, old, newdirfd, new), se_stamp(newdirfd, new, 0, 1));
}

EXPORT int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned flags)
{
	if (!se_in_store(olddirfd, old) && !se_in_store(newdirfd, new))
		return REAL(renameat2)(olddirfd, old, newdirfd, new, flags);
	SE_PATHCALL("rename", old, new, REAL(renameat2)(olddirfd, old, newdirfd, new, flags),
		    se_stamp(newdirfd, new, 0, 1));
}

EXPORT int access(const char *p, int mode)
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(access)(p, mode);
	SE_PATHCALL("access", p, NULL, REAL(access)(p, mode), (void)0);
}

EXPORT int faccessat(int dirfd, const char *p, int mode, int flags)
{
	if (!se_in_store(dirfd, p))
		return REAL(faccessat)(dirfd, p, mode, flags);
	SE_PATHCALL("access", p, NULL, REAL(faccessat)(dirfd, p, mode, flags), (void)0);
}

/* utime(p, NULL) and UTIME_NOW are the virtual now. */
static int se_utimens(int dirfd, const char *p, int fd, const struct timespec t[2], int flags)
{
	struct timespec now = { se.now / 1000, (se.now % 1000) * 1000000 }, v[2];
	for (int i = 0; i < 2; i++)
		v[i] = !t || t[i].tv_nsec == UTIME_NOW ? now : t[i];
	return (int)syscall(SYS_utimensat, fd >= 0 ? fd : dirfd, fd >= 0 ? NULL : p, v, flags);
}

EXPORT int utimensat(int dirfd, const char *p, const struct timespec t[2], int flags)
{
	const char *q = p;
	__asm__("" : "+r"(q)); /* glibc declares it nonnull; the kernel takes NULL (futimens) */
	if (!q)
		return futimens(dirfd, t);
	if (!se_in_store(dirfd, p))
		return REAL(utimensat)(dirfd, p, t, flags);
	SE_PATHCALL("utime", p, NULL, se_utimens(dirfd, p, -1, t, flags), (void)0);
}

EXPORT int futimens(int fd, const struct timespec t[2])
{
	if (!se_fd(fd))
		return REAL(futimens)(fd, t);
	SE_PATHCALL("utime", se.fdp[fd], NULL, se_utimens(AT_FDCWD, NULL, fd, t, 0), (void)0);
}

EXPORT int utimes(const char *p, const struct timeval tv[2])
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(utimes)(p, tv);
	struct timespec t[2];
	for (int i = 0; tv && i < 2; i++)
		t[i] = (struct timespec){ tv[i].tv_sec, tv[i].tv_usec * 1000 };
	SE_PATHCALL("utime", p, NULL, se_utimens(AT_FDCWD, p, -1, tv ? t : NULL, 0), (void)0);
}

EXPORT int utime(const char *p, const struct utimbuf *u)
{
	if (!se_in_store(AT_FDCWD, p))
		return REAL(utime)(p, u);
	struct timespec t[2] = { { u ? u->actime : 0, 0 }, { u ? u->modtime : 0, 0 } };
	SE_PATHCALL("utime", p, NULL, se_utimens(AT_FDCWD, p, -1, u ? t : NULL, 0), (void)0);
}

/* ---- stat: every form glibc 2.36 exports (the __xstat ones for programs
 * built before 2.33, as liblockfile1 is), made as newfstatat ---- */

static int se_rawstat(int dirfd, const char *p, struct stat *st, int flags)
{
	return (int)syscall(SYS_newfstatat, dirfd, p, st, flags);
}

static int se_stat(const char *call, int dirfd, const char *p, int fd, struct stat *st, int flags)
{
	int step = fd >= 0 ? se_fd(fd) : se_in_store(dirfd, p);
	if (!step)
		return fd >= 0 ? se_rawstat(fd, "", st, AT_EMPTY_PATH) : se_rawstat(dirfd, p, st, flags);
	SE_PATHCALL(call, fd >= 0 ? se.fdp[fd] : p, NULL,
		    fd >= 0 ? se_rawstat(fd, "", st, AT_EMPTY_PATH) : se_rawstat(dirfd, p, st, flags), se_vstat(st));
}

#define SE_LSTAT(flags) ((flags) & AT_SYMLINK_NOFOLLOW ? "lstat" : "stat")

EXPORT int stat(const char *p, struct stat *st) { return se_stat("stat", AT_FDCWD, p, -1, st, 0); }
EXPORT int stat64(const char *p, struct stat64 *st) { return se_stat("stat", AT_FDCWD, p, -1, (struct stat *)st, 0); }
EXPORT int lstat(const char *p, struct stat *st) { return se_stat("lstat", AT_FDCWD, p, -1, st, AT_SYMLINK_NOFOLLOW); }
EXPORT int lstat64(const char *p, struct stat64 *st)
{
	return se_stat("lstat", AT_FDCWD, p, -1, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}
EXPORT int fstat(int fd, struct stat *st) { return se_stat("fstat", AT_FDCWD, NULL, fd, st, 0); }
EXPORT int fstat64(int fd, struct stat64 *st) { return se_stat("fstat", AT_FDCWD, NULL, fd, (struct stat *)st, 0); }
EXPORT int fstatat(int dirfd, const char *p, struct stat *st, int flags)
{
	return se_stat(SE_LSTAT(flags), dirfd, p, -1, st, flags);
}
EXPORT int fstatat64(int dirfd, const char *p, struct stat64 *st, int flags)
{
	return se_stat(SE_LSTAT(flags), dirfd, p, -1, (struct stat *)st, flags);
}

EXPORT int __xstat(int ver, const char *p, struct stat *st);
EXPORT int __xstat(int ver, const char *p, struct stat *st) { (void)ver; return stat(p, st); }
EXPORT int __xstat64(int ver, const char *p, struct stat64 *st);
EXPORT int __xstat64(int ver, const char *p, struct stat64 *st) { (void)ver; return stat64(p, st); }
EXPORT int __lxstat(int ver, const char *p, struct stat *st);
EXPORT int __lxstat(int ver, const char *p, struct stat *st) { (void)ver; return lstat(p, st); }
EXPORT int __lxstat64(int ver, const char *p, struct stat64 *st);
EXPORT int __lxstat64(int ver, const char *p, struct stat64 *st) { (void)ver; return lstat64(p, st); }
EXPORT int __fxstat(int ver, int fd, struct stat *st);
EXPORT int __fxstat(int ver, int fd, struct stat *st) { (void)ver; return fstat(fd, st); }
EXPORT int __fxstat64(int ver, int fd, struct stat64 *st);
EXPORT int __fxstat64(int ver, int fd, struct stat64 *st) { (void)ver; return fstat64(fd, st); }
EXPORT int __fxstatat(int ver, int dirfd, const char *p, struct stat *st, int flags);
EXPORT int __fxstatat(int ver, int dirfd, const char *p, struct stat *st, int flags)
{
	(void)ver;
	return fstatat(dirfd, p, st, flags);
}
EXPORT int __fxstatat64(int ver, int dirfd, const char *p, struct stat64 *st, int flags);
EXPORT int __fxstatat64(int ver, int dirfd, const char *p, struct stat64 *st, int flags)
{
	(void)ver;
	return fstatat64(dirfd, p, st, flags);
}

EXPORT int statx(int dirfd, const char *p, int flags, unsigned mask, struct statx *sx)
{
	const char *q = p;
	__asm__("" : "+r"(q)); /* declared nonnull; the kernel takes NULL */
	int fdcall = (!q || !q[0]) && (flags & AT_EMPTY_PATH);
	int step = fdcall ? se_fd(dirfd) : se_in_store(dirfd, p);
	if (!step)
		return REAL(statx)(dirfd, p, flags, mask, sx);
	SE_PATHCALL(fdcall ? "fstat" : SE_LSTAT(flags), fdcall ? se.fdp[dirfd] : p, NULL,
		    REAL(statx)(dirfd, p, flags, mask, sx), (sx->stx_atime = sx->stx_mtime, sx->stx_ctime = sx->stx_mtime));
}

/* ---- flock: a blocking one polls every 10 ms of virtual time ---- */

EXPORT int flock(int fd, int op)
{
	if (!se_fd(fd))
		return REAL(flock)(fd, op);
	for (;;) {
		unsigned k;
		char word[32];
		int nb = (op & LOCK_UN) || (op & LOCK_NB);
		if (se_begin("flock", se.fdp[fd], NULL, 0, &k, word, sizeof word) != 0)
			return -1;
		int r = REAL(flock)(fd, nb ? op : op | LOCK_NB);
		int err = r ? errno : 0;
		se_end(k, r, err);
		if (r == 0 || nb || err != EWOULDBLOCK)
			return r;
		se_sleep_ms(10);
	}
}
