/*
 * preload.c - liblockstorm_preload.so: lockstorm's fault plans for any
 * dynamically linked program, through LD_PRELOAD (see docs/preload.md).
 *
 * Every wrapped libc call asks libfiu's core at the same point name as
 * lockstorm's fsx seam (fiu_fail("fs/mkdir"), ...).  At load the shim reads
 * its plan from the environment (preload.h) and enables, for every point
 * some rule can match, one external callback that decides with fault_check()
 * drawing from the process's own PRNG (seed, fork lineage), never libfiu's.
 * The wrapper then acts: errno (fail without calling libc), short-write,
 * stall, stop, crash.  With LOCKSTORM_FIU_FIFO the points can also be
 * enabled from outside with fiu-ctrl (failnum = errno, failinfo = stall ms).
 *
 * Rules for this file:
 *  - no wrapper may recurse into the shim: everything the shim does itself
 *    (log, path lookup) goes through the real functions or raw syscalls;
 *  - with no plan and no fifo the shim is inert: one load and one test per
 *    call;
 *  - what runs per call is async-signal-safe where it can be (no malloc,
 *    no stdio); a call that arrives while this thread is already inside the
 *    shim (a signal handler, libfiu itself) passes straight through.
 */
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <fiu-control.h>
#include <fiu.h>

#include "../fault.h"
#include "preload.h"

#define EXPORT __attribute__((visibility("default")))
#define TLS __thread __attribute__((tls_model("initial-exec")))

enum op { OP_MKDIR, OP_RMDIR, OP_LINK, OP_UNLINK, OP_RENAME, OP_OPEN, OP_UTIMENS, OP_WRITE, OP_FSYNC, OP_CLOSE, OP__N };
_Static_assert(OP__N == PRELOAD_NPOINTS, "preload_points and enum op disagree");

#define PATHBUF (2 * PATH_MAX + 2)

/* ---- state, set once by the constructor ---- */

static unsigned g_mask;          /* bit per op: ask libfiu at this call */
static struct fault_plan g_plan;
static uint32_t g_op_rules[OP__N]; /* per op: the rules that can fire there (fault_point_mask) */
static unsigned g_path_ops;      /* bit per op: a rule with path=GLOB can fire there (resolve first) */
static int64_t g_stale_ms = 10000;
static unsigned g_worker;         /* LOCKSTORM_WORKER: whom workers= rules name (0 under exec) */
static char g_log[PATH_MAX];     /* "" = no inject log */

/* Decisions: guarded by g_lock (the program may be multi-threaded). */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct prng g_rng;
static struct fault_state g_state;
static uint64_t g_seed, g_lineage, g_forks;
static char *g_lineage_env;      /* the digits of LOCKSTORM_LINEAGE in environ, or NULL */

static pid_t g_pid;              /* this process, as the constructor or atfork_child saw it */

/* A lineage as LOCKSTORM_LINEAGE's 16 hex digits (no NUL). */
static void lineage_hex(char *out, uint64_t lineage)
{
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < PRELOAD_LINEAGE_DIGITS; i++)
		out[i] = hex[(lineage >> (4 * (PRELOAD_LINEAGE_DIGITS - 1 - i))) & 15];
}

/* The lineage of the nth child forked by a process of lineage `parent`. */
static uint64_t child_lineage(uint64_t parent, uint64_t nth)
{
	uint64_t x = parent ^ (nth * 0x9e3779b97f4a7c15ULL);
	return prng_splitmix(&x);
}

/* The call being decided on this thread: set by gate(), read by the libfiu
 * callback (which libfiu runs on the same thread, inside fiu_fail). */
struct call {
	int active;
	enum op op;
	int dirfd;
	const char *path;     /* as the program passed it; NULL for fd calls */
	int fd;               /* fd calls; -1 otherwise */
	int dirfd2;           /* link and rename: the other name */
	const char *path2;
	char *buf, *buf2;     /* PATHBUF bytes each on gate()'s stack */
	int resolved;
	const char *shown;    /* absolute path or fd target, once resolved */
	struct fault_action act;
};
static TLS struct call tl_call;

/* ---- the real functions ---- */

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

#define REAL_DECL(name, type) static __typeof__(type) real_##name
#define REAL(name)                                                                        \
	({                                                                                \
		__typeof__(real_##name) f_ = __atomic_load_n(&real_##name, __ATOMIC_ACQUIRE); \
		if (!f_) {                                                                \
			f_ = (__typeof__(real_##name))next_sym(#name);                    \
			__atomic_store_n(&real_##name, f_, __ATOMIC_RELEASE);             \
		}                                                                         \
		f_;                                                                       \
	})
/* A real function that this libc may lack (renameat2 on old glibc). */
#define MISSING(name, ret)           \
	do {                         \
		if (!REAL(name)) {   \
			errno = ENOSYS; \
			return ret;  \
		}                    \
	} while (0)

REAL_DECL(mkdir, int (*)(const char *, mode_t));
REAL_DECL(mkdirat, int (*)(int, const char *, mode_t));
REAL_DECL(rmdir, int (*)(const char *));
REAL_DECL(link, int (*)(const char *, const char *));
REAL_DECL(linkat, int (*)(int, const char *, int, const char *, int));
REAL_DECL(symlink, int (*)(const char *, const char *));
REAL_DECL(symlinkat, int (*)(const char *, int, const char *));
REAL_DECL(unlink, int (*)(const char *));
REAL_DECL(unlinkat, int (*)(int, const char *, int));
REAL_DECL(rename, int (*)(const char *, const char *));
REAL_DECL(renameat, int (*)(int, const char *, int, const char *));
REAL_DECL(renameat2, int (*)(int, const char *, int, const char *, unsigned));
REAL_DECL(open, int (*)(const char *, int, ...));
REAL_DECL(open64, int (*)(const char *, int, ...));
REAL_DECL(openat, int (*)(int, const char *, int, ...));
REAL_DECL(openat64, int (*)(int, const char *, int, ...));
REAL_DECL(__open_2, int (*)(const char *, int));
REAL_DECL(__open64_2, int (*)(const char *, int));
REAL_DECL(__openat_2, int (*)(int, const char *, int));
REAL_DECL(__openat64_2, int (*)(int, const char *, int));
REAL_DECL(creat, int (*)(const char *, mode_t));
REAL_DECL(creat64, int (*)(const char *, mode_t));
REAL_DECL(fopen, FILE *(*)(const char *, const char *));
REAL_DECL(fopen64, FILE *(*)(const char *, const char *));
REAL_DECL(utimensat, int (*)(int, const char *, const struct timespec *, int));
REAL_DECL(futimens, int (*)(int, const struct timespec *));
REAL_DECL(utimes, int (*)(const char *, const struct timeval *));
REAL_DECL(write, ssize_t (*)(int, const void *, size_t));
REAL_DECL(pwrite, ssize_t (*)(int, const void *, size_t, off_t));
REAL_DECL(pwrite64, ssize_t (*)(int, const void *, size_t, off64_t));
REAL_DECL(fsync, int (*)(int));
REAL_DECL(close, int (*)(int));
REAL_DECL(execve, int (*)(const char *, char *const[], char *const[]));

/* ---- small async-signal-safe helpers ---- */

struct line {
	char b[PATHBUF + 160];
	size_t n;
};

static void line_str(struct line *l, const char *s)
{
	while (*s && l->n < sizeof l->b - 1)
		l->b[l->n++] = *s++;
}

static void line_u64(struct line *l, uint64_t v)
{
	char t[24];
	int i = 0;
	do
		t[i++] = (char)('0' + v % 10);
	while ((v /= 10) && i < (int)sizeof t);
	while (i > 0 && l->n < sizeof l->b - 1)
		l->b[l->n++] = t[--i];
}

/* A path as one space-free field: bytes <= ' ', DEL and '\' as \xHH. */
static void line_path(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	for (; *s && l->n < sizeof l->b - 5; s++) {
		unsigned char c = (unsigned char)*s;
		if (c <= ' ' || c == 0x7f || c == '\\') {
			l->b[l->n++] = '\\';
			l->b[l->n++] = 'x';
			l->b[l->n++] = hex[c >> 4];
			l->b[l->n++] = hex[c & 15];
		} else {
			l->b[l->n++] = (char)c;
		}
	}
}

static void line_errno(struct line *l, int e)
{
	const char *n = strerrorname_np(e);
	if (n)
		line_str(l, n);
	else
		line_u64(l, (uint64_t)e);
}

/* Target of /proc/self/fd/N into buf; length or -1. */
static ssize_t fd_target(int fd, char *buf, size_t cap)
{
	struct line p = { .n = 0 };
	line_str(&p, "/proc/self/fd/");
	line_u64(&p, (uint64_t)fd);
	p.b[p.n] = '\0';
	ssize_t n = readlink(p.b, buf, cap - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* A path as rules and the log see it: absolute for path calls (relative
 * ones joined to the cwd or dirfd), the fd's target for fd calls. */
static const char *resolve(int dirfd, const char *path, int fd, char *b)
{
	if (path) {
		if (path[0] == '/')
			return path;
		size_t n;
		if (dirfd == AT_FDCWD) {
			if (!getcwd(b, PATH_MAX))
				return path;
			n = strlen(b);
		} else {
			ssize_t r = fd_target(dirfd, b, PATH_MAX);
			if (r < 0)
				return path;
			n = (size_t)r;
		}
		size_t pl = strlen(path);
		if (n + 1 + pl + 1 > PATHBUF)
			return path;
		if (n == 0 || b[n - 1] != '/')
			b[n++] = '/';
		memcpy(b + n, path, pl + 1);
		return b;
	}
	if (fd >= 0 && fd_target(fd, b, PATHBUF) >= 0)
		return b;
	return NULL;
}

/* Does some rule that can fire at this call's point have a path glob that
 * matches p? */
static int path_rule_matches(const struct call *c, const char *p)
{
	uint32_t rules = g_op_rules[c->op];
	for (unsigned i = 0; i < g_plan.n; i++)
		if ((rules >> i & 1u) && g_plan.rule[i].path[0] && fnmatch(g_plan.rule[i].path, p, 0) == 0)
			return 1;
	return 0;
}

/* The path this call is judged by.  link and rename have two names: the
 * first one a path rule matches (the new name for link, the old one for
 * rename, then the other): a glob ending in /state.json catches both the
 * rename that publishes that file and the one that moves it away. */
static const char *call_path(struct call *c)
{
	if (c->resolved)
		return c->shown;
	c->resolved = 1;
	c->shown = resolve(c->dirfd, c->path, c->fd, c->buf);
	if (c->path2 && (g_path_ops >> c->op & 1u) && !(c->shown && path_rule_matches(c, c->shown))) {
		const char *other = resolve(c->dirfd2, c->path2, -1, c->buf2);
		if (other && path_rule_matches(c, other))
			c->shown = other;
	}
	return c->shown;
}

/* "pid 123 fs/mkdir /tmp/x1 errno EACCES": one write(2), O_APPEND, through
 * the real open/write/close (opened per line: the program may close or
 * reuse any descriptor the shim kept). */
static void log_injection(struct call *c, const struct fault_action *a, int outside)
{
	if (!g_log[0])
		return;
	struct line l = { .n = 0 };
	line_str(&l, "pid ");
	line_u64(&l, (uint64_t)getpid());
	line_str(&l, " ");
	line_str(&l, preload_points[c->op]);
	line_str(&l, " ");
	const char *p = call_path(c);
	if (p && *p) {
		line_path(&l, p);
	} else if (c->fd >= 0) {
		line_str(&l, "fd:");
		line_u64(&l, (uint64_t)c->fd);
	} else {
		line_str(&l, "-");
	}
	line_str(&l, " ");
	line_str(&l, fault_kind_name(a->kind));
	switch (a->kind) {
	case FK_ERRNO:
		line_str(&l, " ");
		line_errno(&l, a->err);
		break;
	case FK_SHORT_WRITE:
		line_str(&l, " ");
		line_u64(&l, (uint64_t)a->bytes);
		line_str(&l, " ");
		line_errno(&l, a->err);
		break;
	case FK_STALL:
	case FK_STOP:
		line_str(&l, " ");
		line_u64(&l, (uint64_t)a->stall_ms);
		line_str(&l, "ms");
		break;
	default:
		break;
	}
	if (outside)
		line_str(&l, " fiu-ctrl");
	l.b[l.n++] = '\n';
	int fd = REAL(open)(g_log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	ssize_t w = REAL(write)(fd, l.b, l.n);
	(void)w;
	REAL(close)(fd);
}

static void sleep_ms(int64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L }, rem;
	while (clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, &rem) == EINTR)
		ts = rem;
}

/* stop: the whole process is SIGSTOPped for ms, then SIGCONTed, as a
 * laptop lid or a debugger does.  A helper made by a raw clone with no exit
 * signal (so the program's wait()/SIGCHLD never see it; only __WCLONE
 * reaps it) sends both signals; this thread waits for it, so the call
 * proceeds only after the stop.  The helper touches nothing but syscalls. */
static void do_stop(int64_t ms)
{
	pid_t self = getpid();
	long child = syscall(SYS_clone, 0UL, NULL, NULL, NULL, NULL);
	if (child == 0) {
		struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L }, rem;
		syscall(SYS_kill, (long)self, (long)SIGSTOP);
		while (syscall(SYS_clock_nanosleep, (long)CLOCK_MONOTONIC, 0L, &ts, &rem) != 0 && errno == EINTR)
			ts = rem;
		syscall(SYS_kill, (long)self, (long)SIGCONT);
		syscall(SYS_exit_group, 0L);
		for (;;)
			;
	}
	if (child < 0) {
		sleep_ms(ms); /* no helper: a stall of this thread is the nearest thing */
		return;
	}
	while (waitpid((pid_t)child, NULL, __WCLONE) < 0 && errno == EINTR)
		;
}

/* ---- deciding ---- */

/* The external callback libfiu runs inside fiu_fail() for every enabled
 * point.  It answers only for the shim's own call on this thread (a program
 * that uses libfiu itself keeps its own points). */
static int shim_decide(const char *name, int *failnum, void **failinfo, unsigned int *flags)
{
	(void)failnum;
	(void)failinfo;
	(void)flags;
	struct call *c = &tl_call;
	if (!c->active || strcmp(name, preload_points[c->op]) != 0)
		return 0;
	const char *path = (g_path_ops >> c->op & 1u) ? call_path(c) : c->path;
	pthread_mutex_lock(&g_lock);
	c->act = fault_check_mask(&g_plan, &g_state, &g_rng, g_worker, name, g_op_rules[c->op], path, g_stale_ms);
	pthread_mutex_unlock(&g_lock);
	return c->act.kind != FK_NONE;
}

static inline int want(enum op op)
{
	return (__atomic_load_n(&g_mask, __ATOMIC_ACQUIRE) >> op) & 1u;
}

/* Ask libfiu about this call and act on stall, stop and crash here.  Returns
 * the action the wrapper must take instead of the call (errno, short-write),
 * or kind FK_NONE to make the real call. */
static __attribute__((noinline)) struct fault_action gate2(enum op op, int dirfd, const char *path, int fd,
							     int dirfd2, const char *path2)
{
	struct fault_action a = { FK_NONE, 0, 0, 0, -1 };
	struct call *c = &tl_call;
	if (c->active)
		return a; /* already inside the shim on this thread */
	int saved = errno;
	char buf[PATHBUF], buf2[PATHBUF];
	c->active = 1;
	c->op = op;
	c->dirfd = dirfd;
	c->path = path;
	c->fd = fd;
	c->dirfd2 = dirfd2;
	c->path2 = path2;
	c->buf = buf;
	c->buf2 = buf2;
	c->resolved = 0;
	c->shown = NULL;
	c->act = a;
	int failnum = fiu_fail(preload_points[op]);
	a = c->act;
	int outside = 0;
	if (failnum && a.kind == FK_NONE) {
		/* enabled from outside (fiu-ctrl): failinfo = stall ms, else failnum = errno */
		void *info = fiu_failinfo();
		outside = 1;
		if (info) {
			a.kind = FK_STALL;
			a.stall_ms = (int64_t)(uintptr_t)info;
		} else {
			a.kind = FK_ERRNO;
			a.err = failnum > 0 && failnum < 4096 ? failnum : EIO;
		}
	}
	if (a.kind == FK_SHORT_WRITE && op != OP_WRITE)
		a.kind = FK_ERRNO;
	if (a.kind != FK_NONE)
		log_injection(c, &a, outside);
	c->active = 0;
	errno = saved;
	switch (a.kind) {
	case FK_STALL:
		sleep_ms(a.stall_ms);
		a.kind = FK_NONE;
		break;
	case FK_STOP:
		do_stop(a.stall_ms);
		a.kind = FK_NONE;
		break;
	case FK_CRASH:
		raise(SIGKILL);
		kill(getpid(), SIGKILL);
		break;
	case FK_ERRNO:
	case FK_SHORT_WRITE:
		break;
	default:
		a.kind = FK_NONE;
		break;
	}
	return a;
}

static inline struct fault_action gate(enum op op, int dirfd, const char *path, int fd)
{
	return gate2(op, dirfd, path, fd, AT_FDCWD, NULL);
}

/* Path call: fail with the rule's errno, or fall through to the real call. */
#define GATE_PATH(op, dirfd, path, failret)                                   \
	do {                                                                  \
		if (want(op)) {                                               \
			struct fault_action a_ = gate(op, dirfd, path, -1);   \
			if (a_.kind != FK_NONE) {                             \
				errno = a_.err;                               \
				return failret;                               \
			}                                                     \
		}                                                             \
	} while (0)

#define GATE_PATH2(op, dirfd, path, dirfd2, path2)                                      \
	do {                                                                            \
		if (want(op)) {                                                         \
			struct fault_action a_ = gate2(op, dirfd, path, -1, dirfd2, path2); \
			if (a_.kind != FK_NONE) {                                       \
				errno = a_.err;                                         \
				return -1;                                              \
			}                                                               \
		}                                                                       \
	} while (0)

#define GATE_FD(op, fd, failret)                                             \
	do {                                                                  \
		if (want(op)) {                                               \
			struct fault_action a_ = gate(op, AT_FDCWD, NULL, fd); \
			if (a_.kind != FK_NONE) {                             \
				errno = a_.err;                               \
				return failret;                               \
			}                                                     \
		}                                                             \
	} while (0)

/* ---- the wrappers ---- */

EXPORT int mkdir(const char *path, mode_t mode)
{
	GATE_PATH(OP_MKDIR, AT_FDCWD, path, -1);
	return REAL(mkdir)(path, mode);
}

EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	GATE_PATH(OP_MKDIR, dirfd, path, -1);
	return REAL(mkdirat)(dirfd, path, mode);
}

EXPORT int rmdir(const char *path)
{
	GATE_PATH(OP_RMDIR, AT_FDCWD, path, -1);
	return REAL(rmdir)(path);
}

/* link-like calls: judged by the new name (what a lock protocol creates),
 * or the old one when only that matches a path rule (call_path). */
EXPORT int link(const char *old, const char *new)
{
	GATE_PATH2(OP_LINK, AT_FDCWD, new, AT_FDCWD, old);
	return REAL(link)(old, new);
}

EXPORT int linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags)
{
	GATE_PATH2(OP_LINK, newdirfd, new, olddirfd, old);
	return REAL(linkat)(olddirfd, old, newdirfd, new, flags);
}

EXPORT int symlink(const char *target, const char *new)
{
	GATE_PATH(OP_LINK, AT_FDCWD, new, -1);
	return REAL(symlink)(target, new);
}

EXPORT int symlinkat(const char *target, int newdirfd, const char *new)
{
	GATE_PATH(OP_LINK, newdirfd, new, -1);
	return REAL(symlinkat)(target, newdirfd, new);
}

EXPORT int unlink(const char *path)
{
	GATE_PATH(OP_UNLINK, AT_FDCWD, path, -1);
	return REAL(unlink)(path);
}

/* unlinkat(AT_REMOVEDIR) is rmdir by another name: judged at fs/rmdir. */
EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	GATE_PATH((flags & AT_REMOVEDIR) ? OP_RMDIR : OP_UNLINK, dirfd, path, -1);
	return REAL(unlinkat)(dirfd, path, flags);
}

/* rename-like calls: judged by the old name, or the new one when only that
 * matches a path rule (call_path). */
EXPORT int rename(const char *old, const char *new)
{
	GATE_PATH2(OP_RENAME, AT_FDCWD, old, AT_FDCWD, new);
	return REAL(rename)(old, new);
}

EXPORT int renameat(int olddirfd, const char *old, int newdirfd, const char *new)
{
	GATE_PATH2(OP_RENAME, olddirfd, old, newdirfd, new);
	return REAL(renameat)(olddirfd, old, newdirfd, new);
}

EXPORT int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned flags)
{
	MISSING(renameat2, -1);
	GATE_PATH2(OP_RENAME, olddirfd, old, newdirfd, new);
	return REAL(renameat2)(olddirfd, old, newdirfd, new, flags);
}

static int wants_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

#define OPEN_MODE(flags)                                 \
	mode_t mode = 0;                                 \
	if (wants_mode(flags)) {                         \
		va_list ap;                              \
		va_start(ap, flags);                     \
		mode = (mode_t)va_arg(ap, unsigned int); \
		va_end(ap);                              \
	}

EXPORT int open(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(open)(path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(open64)(path, flags, mode);
}

EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	GATE_PATH(OP_OPEN, dirfd, path, -1);
	return REAL(openat)(dirfd, path, flags, mode);
}

EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_MODE(flags);
	GATE_PATH(OP_OPEN, dirfd, path, -1);
	return REAL(openat64)(dirfd, path, flags, mode);
}

/* What _FORTIFY_SOURCE builds call for open(path, flags) without a mode. */
EXPORT int __open_2(const char *path, int flags);
EXPORT int __open_2(const char *path, int flags)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(__open_2)(path, flags);
}

EXPORT int __open64_2(const char *path, int flags);
EXPORT int __open64_2(const char *path, int flags)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(__open64_2)(path, flags);
}

EXPORT int __openat_2(int dirfd, const char *path, int flags);
EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
	GATE_PATH(OP_OPEN, dirfd, path, -1);
	return REAL(__openat_2)(dirfd, path, flags);
}

EXPORT int __openat64_2(int dirfd, const char *path, int flags);
EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
	GATE_PATH(OP_OPEN, dirfd, path, -1);
	return REAL(__openat64_2)(dirfd, path, flags);
}

EXPORT int creat(const char *path, mode_t mode)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(creat)(path, mode);
}

EXPORT int creat64(const char *path, mode_t mode)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, -1);
	return REAL(creat64)(path, mode);
}

/* stdio opens through libc's internal open, which no preload sees. */
EXPORT FILE *fopen(const char *path, const char *mode)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, NULL);
	return REAL(fopen)(path, mode);
}

EXPORT FILE *fopen64(const char *path, const char *mode)
{
	GATE_PATH(OP_OPEN, AT_FDCWD, path, NULL);
	return REAL(fopen64)(path, mode);
}

/* utimensat(fd, NULL, ...) is futimens by another name. */
EXPORT int utimensat(int dirfd, const char *path, const struct timespec times[2], int flags)
{
	if (want(OP_UTIMENS)) {
		/* glibc declares path nonnull, the kernel takes NULL: hide the test from the compiler */
		const char *p = path;
		__asm__("" : "+r"(p));
		struct fault_action a = p ? gate(OP_UTIMENS, dirfd, path, -1) : gate(OP_UTIMENS, AT_FDCWD, NULL, dirfd);
		if (a.kind != FK_NONE) {
			errno = a.err;
			return -1;
		}
	}
	return REAL(utimensat)(dirfd, path, times, flags);
}

EXPORT int futimens(int fd, const struct timespec times[2])
{
	GATE_FD(OP_UTIMENS, fd, -1);
	return REAL(futimens)(fd, times);
}

EXPORT int utimes(const char *path, const struct timeval times[2])
{
	GATE_PATH(OP_UTIMENS, AT_FDCWD, path, -1);
	return REAL(utimes)(path, times);
}

/* write-like: short-write puts `bytes` bytes down with the real call, then
 * fails with the rule's errno. */
#define GATE_WRITE(fd, count, short_call)                                             \
	do {                                                                          \
		if (want(OP_WRITE)) {                                                 \
			struct fault_action a_ = gate(OP_WRITE, AT_FDCWD, NULL, fd);  \
			if (a_.kind == FK_SHORT_WRITE) {                              \
				size_t k_ = (size_t)a_.bytes < (count) ? (size_t)a_.bytes : (count); \
				if (k_ > 0 && (short_call) < 0)                       \
					return -1;                                    \
				errno = a_.err;                                       \
				return -1;                                            \
			}                                                             \
			if (a_.kind != FK_NONE) {                                     \
				errno = a_.err;                                       \
				return -1;                                            \
			}                                                             \
		}                                                                     \
	} while (0)

EXPORT ssize_t write(int fd, const void *buf, size_t count)
{
	GATE_WRITE(fd, count, REAL(write)(fd, buf, k_));
	return REAL(write)(fd, buf, count);
}

EXPORT ssize_t pwrite(int fd, const void *buf, size_t count, off_t off)
{
	GATE_WRITE(fd, count, REAL(pwrite)(fd, buf, k_, off));
	return REAL(pwrite)(fd, buf, count, off);
}

EXPORT ssize_t pwrite64(int fd, const void *buf, size_t count, off64_t off)
{
	GATE_WRITE(fd, count, REAL(pwrite64)(fd, buf, k_, off));
	return REAL(pwrite64)(fd, buf, count, off);
}

EXPORT int fsync(int fd)
{
	GATE_FD(OP_FSYNC, fd, -1);
	return REAL(fsync)(fd);
}

/* close failing with errno leaves the descriptor open (the call did not act). */
EXPORT int close(int fd)
{
	GATE_FD(OP_CLOSE, fd, -1);
	return REAL(close)(fd);
}

/* Not a fault point: hands this process's lineage to the program it execs
 * when the caller passes its own environment (shells do: they keep their own
 * copy of the variables, which the in-place rewrite in atfork_child cannot
 * reach).  No allocation: after fork only async-signal-safe calls are allowed. */
EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	static char *env[4096];
	static char entry[sizeof PRELOAD_ENV_LINEAGE + PRELOAD_LINEAGE_DIGITS + 1];
	static const char key[] = PRELOAD_ENV_LINEAGE "=";
	if (!g_lineage_env || !envp)
		return REAL(execve)(path, argv, envp);
	uint64_t lineage = g_lineage;
	if (getpid() != g_pid) {
		/* a vfork child (dash runs simple commands so): no atfork handler
		 * ran, and this memory is the parent's, so its fork count moves on */
		lineage = child_lineage(g_lineage, __atomic_add_fetch(&g_forks, 1, __ATOMIC_RELAXED));
	}
	size_t n = 0;
	int found = 0;
	for (; envp[n]; n++)
		if (n < sizeof env / sizeof env[0] - 1) {
			if (!strncmp(envp[n], key, sizeof key - 1)) {
				memcpy(entry, key, sizeof key - 1);
				lineage_hex(entry + sizeof key - 1, lineage);
				entry[sizeof entry - 1] = '\0';
				env[n] = entry;
				found = 1;
			} else {
				env[n] = envp[n];
			}
		}
	if (!found || n >= sizeof env / sizeof env[0] - 1)
		return REAL(execve)(path, argv, envp);
	env[n] = NULL;
	return REAL(execve)(path, argv, env);
}

/* ---- set-up ---- */

static void say(const char *a, const char *b)
{
	struct line l = { .n = 0 };
	line_str(&l, "lockstorm preload: ");
	line_str(&l, a);
	line_str(&l, b);
	l.b[l.n++] = '\n';
	ssize_t w = REAL(write)(2, l.b, l.n);
	(void)w;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_lock);
	__atomic_add_fetch(&g_forks, 1, __ATOMIC_RELAXED);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g_lock);
}

/* A forked child draws its own stream: (seed, lineage), where the lineage
 * folds in which fork of its parent it is, and hands the lineage on to
 * what it execs through LOCKSTORM_LINEAGE (rewritten in place).  The same
 * program doing the same forks gets the same streams; counters (nth,
 * once) are per process. */
static void atfork_child(void)
{
	g_lineage = child_lineage(g_lineage, g_forks);
	g_forks = 0;
	g_pid = getpid();
	if (g_lineage_env)
		lineage_hex(g_lineage_env, g_lineage);
	prng_seed(&g_rng, g_seed, g_lineage, 0);
	memset(&g_state, 0, sizeof g_state);
	pthread_mutex_unlock(&g_lock);
}

__attribute__((constructor)) static void shim_init(void)
{
	const char *faults = getenv(PRELOAD_ENV_FAULTS);
	const char *fifo = getenv(PRELOAD_ENV_FIFO);
	if ((!faults || !*faults) && (!fifo || !*fifo))
		return; /* inert */

	const char *s = getenv(PRELOAD_ENV_SEED);
	g_seed = s && *s ? strtoull(s, NULL, 10) : 1;
	s = getenv(PRELOAD_ENV_STALE);
	if (s && *s && strtoll(s, NULL, 10) > 0)
		g_stale_ms = strtoll(s, NULL, 10);
	s = getenv(PRELOAD_ENV_WORKER);
	if (s && *s)
		g_worker = (unsigned)strtoul(s, NULL, 10);
	s = getenv(PRELOAD_ENV_LOG);
	if (s && strlen(s) < sizeof g_log)
		memcpy(g_log, s, strlen(s) + 1);

	unsigned mask = 0;
	if (faults) {
		static char buf[FAULT_MAX_RULES * 520];
		char why[512];
		size_t n = strlen(faults);
		if (n >= sizeof buf) {
			say("fault plan too long; ignored", "");
			n = 0;
		}
		memcpy(buf, faults, n);
		buf[n] = '\0';
		for (char *save = NULL, *spec = strtok_r(buf, "\n", &save); spec; spec = strtok_r(NULL, "\n", &save)) {
			if (!*spec)
				continue;
			if (fault_parse(&g_plan, spec, why, sizeof why) != 0)
				say(why, "; rule ignored");
		}
		for (int op = 0; op < OP__N; op++) {
			g_op_rules[op] = fault_point_mask(&g_plan, preload_points[op]);
			if (g_op_rules[op])
				mask |= 1u << op;
			for (unsigned i = 0; i < g_plan.n; i++)
				if ((g_op_rules[op] >> i & 1u) && g_plan.rule[i].path[0])
					g_path_ops |= 1u << op;
		}
	}
	char *lin = getenv(PRELOAD_ENV_LINEAGE);
	if (lin && strlen(lin) == PRELOAD_LINEAGE_DIGITS && strspn(lin, "0123456789abcdef") == PRELOAD_LINEAGE_DIGITS) {
		g_lineage = strtoull(lin, NULL, 16);
		g_lineage_env = lin;
	}
	g_pid = getpid();
	prng_seed(&g_rng, g_seed, g_lineage, 0);
	fiu_init(0);
	for (int op = 0; op < OP__N; op++)
		if (mask & (1u << op))
			fiu_enable_external(preload_points[op], 1, NULL, 0, shim_decide);
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (fifo && *fifo) {
		if (fiu_rc_fifo(fifo) == 0)
			mask = (1u << OP__N) - 1; /* fiu-ctrl may enable any point later */
		else
			say("cannot set up the fiu-ctrl fifo at ", fifo);
	}
	__atomic_store_n(&g_mask, mask, __ATOMIC_RELEASE);
}
