/*
 * lsexplore.c - liblockstorm_explore.so: the C side of `lockstorm explore
 * -p ext:NAME`, for adapters whose manifest says "seam": "preload" (a C
 * program such as adapters/liblockfile).  The explorer puts it on LD_PRELOAD
 * with LOCKSTORM_EXPLORE=1, and it speaks the protocol of the Python helper
 * (adapters/lib/pyexplore/sitecustomize.py) line for line:
 *
 *   adapter (fd 3)                        explorer (stdin)
 *     step K CALL PATH [PATH2]  --->        (the call waits to be granted)
 *     quiet -1                  --->  <---  go K T      make call K at virtual ms T
 *                                     <---  go K T ERRNO  fail it with ERRNO (not made)
 *     done K ENOSPC             --->  <---  go K T short-write  a write(2): its first 10
 *                                           bytes land, then it fails with ENOSPC
 *     done K part               --->  <---  go K T split-write  a write(2): its first 10
 *     step K2 write PATH rest   --->        bytes land; the rest is a call of its own
 *     done K ok|ERRNO           --->  <---  time T      the clock is T
 *     quiet T                   --->        (sleeping until virtual ms T)
 *     next, then quiet -1       --->  <---  op N T | stop
 *
 * A C adapter is synchronous as Python is: it is quiet whenever it waits, for
 * a grant, in a sleep (until the explorer's clock passes its end) or for its
 * next op (reading stdin).
 *
 * Steps: the libc calls below on a path inside the store (the folder of
 * LOCKSTORM_STATE), or on a descriptor opened there: open, open64, openat,
 * creat, fopen (the open only: stdio's reads and writes are libc's own),
 * close, read, pread, write, pwrite, fsync, fdatasync, ftruncate, link,
 * linkat, symlink, unlink, unlinkat, rename, renameat, renameat2, mkdir,
 * mkdirat, rmdir, access, faccessat, stat, lstat, fstat, fstatat (and their
 * 64 and __xstat forms: liblockfile was built against the old ones), statx,
 * utime, utimes, utimensat, futimens, flock (a blocking one polls LOCK_NB
 * every 10 ms of virtual time), and kill(PID, 0) of a virtual pid (the
 * explorer answers it: ESRCH once that worker is dead).  Time is virtual:
 * time, gettimeofday, clock_gettime; nanosleep, clock_nanosleep, sleep and
 * usleep wait for the explorer's clock.  getpid is 2000 + worker and
 * gethostname "lockstorm", so temp names are the same in every run.  Every
 * object a granted call creates or changes gets the virtual time as its
 * mtime, and a stat reports atime = ctime = mtime.  The control pipe (fd 0)
 * is read through fgets, getline, getdelim and read(0): an `op N T` line is
 * handed to the adapter as `op N`.
 *
 * Not steps: calls made by raw syscall(2) or inside libc (stdio's I/O,
 * opendir/readdir), other threads (the seam is single-threaded), children
 * after fork.  Nothing here runs without LOCKSTORM_EXPLORE=1: every wrapper
 * passes straight through.  The seam's own I/O is raw syscalls.
 */
#include "lsexplore.h"

struct se_state se;

static void se_init(void)
{
	if (se.init)
		return;
	se.init = 1;
	const char *on = getenv("LOCKSTORM_EXPLORE"), *st = getenv("LOCKSTORM_STATE");
	if (!on || strcmp(on, "1") || !st || !*st)
		return;
	const char *e = getenv("LOCKSTORM_EVENT_FD");
	se.ev = e && *e ? atoi(e) : 3;
	e = getenv("LOCKSTORM_EXPLORE_T0");
	se.t0 = e && *e ? strtoll(e, NULL, 10) : 1700000000000LL;
	se.now = se.last = se.t0;
	e = getenv("LOCKSTORM_WORKER");
	se.worker = e ? atoi(e) : 0;
	e = getenv("LOCKSTORM_WORKERS");
	se.workers = e ? atoi(e) : 1;
	char cwd[PATH_MAX];
	if (st[0] == '/' || !getcwd(cwd, sizeof cwd))
		snprintf(se.store, sizeof se.store, "%s", st);
	else
		snprintf(se.store, sizeof se.store, "%s/%s", cwd, st);
	char *sl = strrchr(se.store, '/');
	if (sl)
		*sl = '\0';
	se.storelen = strlen(se.store);
	se.on = 1;
}

int se_live(void)
{
	se_init();
	return se.on && !se.busy;
}

/* ---- the two pipes ---- */

void se_out(const char *fmt, ...)
{
	char line[3 * PATH_MAX];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof line - 2)
		n = (int)sizeof line - 2;
	line[n++] = '\n';
	int err = errno;
	for (int off = 0; off < n;) {
		long w = syscall(SYS_write, se.ev, line + off, (size_t)(n - off));
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3); /* the explorer is gone: nobody to report to */
		off += (int)w;
	}
	errno = err;
}

/* One command's words (at most 6, in buf); end of file is "stop". */
static int se_cmd(char *buf, size_t len, char *w[6])
{
	char *nl;
	while (!(nl = memchr(se.in, '\n', se.inlen))) {
		if (se.inlen == sizeof se.in)
			se.inlen = 0; /* no command is that long */
		long r = syscall(SYS_read, 0, se.in + se.inlen, sizeof se.in - se.inlen);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snprintf(buf, len, "stop");
			w[0] = buf;
			return 1;
		}
		se.inlen += (size_t)r;
	}
	size_t k = (size_t)(nl - se.in);
	snprintf(buf, len, "%.*s", (int)k, se.in);
	se.inlen -= k + 1;
	memmove(se.in, nl + 1, se.inlen);
	int n = 0;
	for (char *save = NULL, *t = strtok_r(buf, " ", &save); t && n < 6; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	if (!n)
		w[n++] = buf;
	return n;
}

static void se_time(const char *t)
{
	int64_t v = strtoll(t, NULL, 10);
	if (v > se.now)
		se.now = v;
}

/* ---- virtual time ---- */

static int64_t se_mono_ns(void)
{
	if (se.now != se.last)
		se.last = se.now, se.sub = 0;
	se.sub++;
	return (se.now - se.t0) * 1000000 + (int64_t)se.sub * 1000;
}

/* Wait until the explorer's clock reaches now + ms. */
void se_sleep_ms(int64_t ms)
{
	if (se.busy)
		return;
	int64_t end = se.now + (ms < 1 ? 1 : ms);
	while (se.now < end) {
		char buf[256], *w[6];
		se_out("quiet %lld", (long long)end);
		int n = se_cmd(buf, sizeof buf, w);
		if (!strcmp(w[0], "stop"))
			_exit(0);
		if (!strcmp(w[0], "time") && n > 1)
			se_time(w[1]);
	}
}

static int64_t se_ts_ms(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000 + (ts->tv_nsec + 500000) / 1000000;
}

/* ---- steps ---- */

/* Inside the store: absolute, or relative to the working folder. */
int se_in_store(int dirfd, const char *p)
{
	if (!se_live() || !p)
		return 0;
	char full[PATH_MAX];
	if (p[0] != '/') {
		if (dirfd != AT_FDCWD) {
			if (dirfd < 0 || dirfd >= SE_FDS || !se.fdp[dirfd])
				return 0;
			snprintf(full, sizeof full, "%s/%s", se.fdp[dirfd], p);
		} else {
			char cwd[PATH_MAX];
			if (!getcwd(cwd, sizeof cwd))
				return 0;
			snprintf(full, sizeof full, "%s/%s", cwd, p);
		}
		p = full;
	}
	return !strncmp(p, se.store, se.storelen) && (p[se.storelen] == '/' || !p[se.storelen]);
}

int se_fd(int fd)
{
	return se_live() && fd >= 0 && fd < SE_FDS && se.fdp[fd];
}

/* A path as one word: blanks become '_'. */
static const char *se_show(const char *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s", p ? p : "?");
	for (char *c = buf; *c; c++)
		if (*c == ' ' || *c == '\n')
			*c = '_';
	return buf;
}

/* Announce a call and wait for its grant.  0: make it (word: "" or
 * short-write/split-write); -1: failed by the explorer with an errno (said
 * done, errno set). */
int se_begin(const char *call, const char *p1, const char *p2, int rest, unsigned *k, char *word, size_t wlen)
{
	char a[PATH_MAX], b[PATH_MAX], buf[256], *w[6];
	*k = ++se.step;
	se_out("step %u %s %s%s%s%s", *k, call, se_show(p1, a, sizeof a), p2 ? " " : "",
	       p2 ? se_show(p2, b, sizeof b) : "", rest ? " rest" : "");
	se_out("quiet -1");
	for (;;) {
		int n = se_cmd(buf, sizeof buf, w);
		if (!strcmp(w[0], "stop"))
			_exit(0);
		if (!strcmp(w[0], "time") && n > 1) {
			se_time(w[1]);
			se_out("quiet -1");
			continue;
		}
		if (!strcmp(w[0], "go") && n > 2 && strtoul(w[1], NULL, 10) == *k) {
			se.now = strtoll(w[2], NULL, 10);
			snprintf(word, wlen, "%s", n > 3 ? w[3] : "");
			break;
		}
	}
	if (!word[0] || !strcmp(word, "short-write") || !strcmp(word, "split-write"))
		return 0;
	/* go K T ERRNO: the call fails with it, not made (explore's errno choice) */
	int code = EIO;
	for (int e = 1; e < 200; e++) {
		const char *nm = strerrorname_np(e);
		if (nm && !strcmp(nm, word)) {
			code = e;
			break;
		}
	}
	se_out("done %u %s", *k, word);
	errno = code;
	return -1;
}

/* The result of call k: rc < 0 failed with err. */
void se_end(unsigned k, long rc, int err)
{
	const char *nm = err ? strerrorname_np(err) : NULL;
	if (rc < 0)
		se_out("done %u %s", k, nm ? nm : "EIO");
	else
		se_out("done %u ok", k);
	errno = err;
}

void se_stamp_at(int dirfd, const char *p, int fd)
{
	struct timespec ts[2] = { { se.now / 1000, (se.now % 1000) * 1000000 } };
	ts[1] = ts[0];
	int err = errno;
	if (fd >= 0)
		syscall(SYS_utimensat, fd, NULL, ts, 0);
	else
		syscall(SYS_utimensat, dirfd, p, ts, 0);
	errno = err;
}

/* mtime = now for p, and (dir) for its folder. */
void se_stamp(int dirfd, const char *p, int file, int dir)
{
	if (file)
		se_stamp_at(dirfd, p, -1);
	if (dir) {
		char d[PATH_MAX];
		snprintf(d, sizeof d, "%s", p);
		char *sl = strrchr(d, '/');
		if (sl && sl != d)
			*sl = '\0';
		else
			snprintf(d, sizeof d, "%s", sl ? "/" : ".");
		se_stamp_at(dirfd, d, -1);
	}
}

void se_track(int fd, int dirfd, const char *p)
{
	if (fd < 0 || fd >= SE_FDS)
		return;
	char full[PATH_MAX];
	if (p[0] != '/' && dirfd != AT_FDCWD && dirfd >= 0 && dirfd < SE_FDS && se.fdp[dirfd])
		snprintf(full, sizeof full, "%s/%s", se.fdp[dirfd], p);
	else if (p[0] != '/') {
		char cwd[PATH_MAX];
		snprintf(full, sizeof full, "%s/%s", getcwd(cwd, sizeof cwd) ? cwd : ".", p);
	} else
		snprintf(full, sizeof full, "%s", p);
	free(se.fdp[fd]);
	se.fdp[fd] = strdup(full);
}

void se_untrack(int fd)
{
	if (fd >= 0 && fd < SE_FDS) {
		free(se.fdp[fd]);
		se.fdp[fd] = NULL;
	}
}

/* A stat's times as the virtual clock made them. */
void se_vstat(struct stat *st)
{
	st->st_atim = st->st_mtim;
	st->st_ctim = st->st_mtim;
}

/* The op line for the adapter: "op N\n" (at most len - 1 bytes), "stop\n", or 0 at end of file. */
size_t se_next_op(char *out, size_t len)
{
	char buf[256], *w[6];
	se_out("quiet -1");
	for (;;) {
		int n = se_cmd(buf, sizeof buf, w);
		char line[64];
		if (!strcmp(w[0], "time") && n > 1) {
			se_time(w[1]);
			se_out("quiet -1");
			continue;
		}
		if (!strcmp(w[0], "op") && n > 2) {
			se.now = strtoll(w[2], NULL, 10);
			snprintf(line, sizeof line, "op %s\n", w[1]);
		} else if (!strcmp(w[0], "stop"))
			snprintf(line, sizeof line, "stop\n");
		else
			return 0;
		size_t k = strlen(line);
		if (k > len - 1)
			k = len - 1;
		memcpy(out, line, k);
		out[k] = '\0';
		return k;
	}
}

/* ---- the control pipe through stdio ---- */

EXPORT char *fgets(char *s, int n, FILE *f)
{
	if (n > 1 && fileno(f) == 0 && se_live())
		return se_next_op(s, (size_t)n) ? s : NULL;
	return REAL(fgets)(s, n, f);
}

EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f);
EXPORT char *__fgets_chk(char *s, size_t size, int n, FILE *f)
{
	if ((size_t)n > size)
		abort();
	return fgets(s, n, f);
}

EXPORT ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
	if (!(fileno(f) == 0 && se_live() && line && cap))
		return REAL(getdelim)(line, cap, delim, f);
	if (!*line || *cap < 64) {
		char *g = realloc(*line, 64);
		if (!g)
			return -1;
		*line = g, *cap = 64;
	}
	size_t k = se_next_op(*line, *cap);
	return k ? (ssize_t)k : -1;
}

EXPORT ssize_t getline(char **line, size_t *cap, FILE *f)
{
	return getdelim(line, cap, '\n', f);
}

/* ---- processes: virtual pids ---- */

EXPORT pid_t getpid(void)
{
	se_init();
	return se.on ? 2000 + se.worker : REAL(getpid)();
}

EXPORT int gethostname(char *name, size_t len)
{
	se_init();
	if (!se.on)
		return REAL(gethostname)(name, len);
	if (len < sizeof "lockstorm") {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(name, "lockstorm", sizeof "lockstorm");
	return 0;
}

/* kill(PID, 0) of a worker's virtual pid is a step the explorer answers
 * (ESRCH once that worker is dead); a signal to the adapter's own virtual pid
 * is sent to itself; to another's, refused (EPERM): no real process of that
 * number is touched. */
EXPORT int kill(pid_t pid, int sig)
{
	se_init();
	if (!se.on || pid < 2000 || pid >= 2000 + se.workers)
		return REAL(kill)(pid, sig);
	if (sig != 0) {
		if (pid == 2000 + se.worker)
			return REAL(kill)(REAL(getpid)(), sig);
		errno = EPERM;
		return -1;
	}
	if (se.busy)
		return 0;
	char num[16];
	snprintf(num, sizeof num, "%d", (int)pid);
	SE_PATHCALL("kill", num, NULL, 0, (void)0);
}

/* ---- time ---- */

EXPORT time_t time(time_t *t)
{
	se_init();
	if (!se.on)
		return REAL(time)(t);
	time_t v = (time_t)(se.now / 1000);
	if (t)
		*t = v;
	return v;
}

EXPORT int gettimeofday(struct timeval *tv, void *tz)
{
	se_init();
	if (!se.on)
		return REAL(gettimeofday)(tv, tz);
	struct timeval *q = tv;
	__asm__("" : "+r"(q)); /* declared nonnull; the kernel takes NULL */
	if (q)
		*tv = (struct timeval){ (time_t)(se.now / 1000), (suseconds_t)(se.now % 1000) * 1000 };
	return 0;
}

EXPORT int clock_gettime(clockid_t clk, struct timespec *ts)
{
	se_init();
	if (!se.on || clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID || clk < 0)
		return REAL(clock_gettime)(clk, ts);
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI) {
		*ts = (struct timespec){ (time_t)(se.now / 1000), (long)(se.now % 1000) * 1000000 };
		return 0;
	}
	int64_t ns = se_mono_ns();
	*ts = (struct timespec){ (time_t)(ns / 1000000000), (long)(ns % 1000000000) };
	return 0;
}

EXPORT int nanosleep(const struct timespec *req, struct timespec *rem)
{
	se_init();
	if (!se.on)
		return REAL(nanosleep)(req, rem);
	se_sleep_ms(se_ts_ms(req));
	if (rem)
		*rem = (struct timespec){ 0, 0 };
	return 0;
}

EXPORT int clock_nanosleep(clockid_t clk, int flags, const struct timespec *req, struct timespec *rem)
{
	se_init();
	if (!se.on || clk == CLOCK_PROCESS_CPUTIME_ID || clk == CLOCK_THREAD_CPUTIME_ID)
		return REAL(clock_nanosleep)(clk, flags, req, rem);
	int64_t ms = se_ts_ms(req);
	if (flags & TIMER_ABSTIME) /* the clock's own origin, as clock_gettime gives it */
		ms -= clk == CLOCK_REALTIME || clk == CLOCK_TAI ? se.now : se.now - se.t0;
	if (ms > 0)
		se_sleep_ms(ms);
	if (rem)
		*rem = (struct timespec){ 0, 0 };
	return 0;
}

EXPORT unsigned int sleep(unsigned int s)
{
	se_init();
	if (!se.on)
		return REAL(sleep)(s);
	se_sleep_ms((int64_t)s * 1000);
	return 0;
}

EXPORT int usleep(useconds_t us)
{
	se_init();
	if (!se.on)
		return REAL(usleep)(us);
	se_sleep_ms(((int64_t)us + 500) / 1000);
	return 0;
}
