/*
 * fsx.c - the seam (see fsx.h).
 *
 * Every wrapper has the same shape:
 *
 *     fsx_enter(op)            count it, ask the fault plan at "fs/<op>"
 *     [obj lock]               only for paths that are lock objects
 *     the system call          errno saved at once
 *     [ownership bookkeeping]  create: note creator; remove: name whose it was
 *     [obj unlock]
 *     fsx_leave(op, r, err)    optional trace record
 *
 * The ownership bookkeeping and the system call run under one arena mutex so
 * the pair is a single atomic step with respect to other workers' pairs: the
 * file-system operations themselves are atomic, so this removes no
 * interleaving of protocol steps, it only makes "who created the object I
 * just removed" exact.
 */
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../harness/arena.h"
#include "../harness/journal.h"
#include "fault.h"

static struct fsx_binding bind;
static int bound;
static size_t lock_path_len;
static uint64_t counts[FSX_OP_COUNT];
static int64_t last_create_ns;

static const char *const op_points[FSX_OP_COUNT] = {
	[FSX_MKDIR] = "fs/mkdir",   [FSX_RMDIR] = "fs/rmdir",     [FSX_OPEN] = "fs/open",
	[FSX_CLOSE] = "fs/close",   [FSX_LINK] = "fs/link",       [FSX_UNLINK] = "fs/unlink",
	[FSX_RENAME] = "fs/rename", [FSX_STAT] = "fs/stat",       [FSX_LIST] = "fs/list",
	[FSX_READ] = "fs/read",     [FSX_WRITE] = "fs/write",     [FSX_FSYNC] = "fs/fsync",
	[FSX_UTIMENS] = "fs/utimens", [FSX_FLOCK] = "fs/flock",   [FSX_KILL] = "fs/kill",
	[FSX_SLEEP] = "fs/sleep",   [FSX_NOW] = "fs/now",         [FSX_POINT] = "point",
};

const char *fsx_op_point(enum fsx_op op)
{
	return (unsigned)op < FSX_OP_COUNT ? op_points[op] : "fs/?";
}

const char *fsx_op_name(enum fsx_op op)
{
	const char *p = fsx_op_point(op);
	const char *slash = strchr(p, '/');
	return slash ? slash + 1 : p;
}

uint64_t fsx_point_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		h ^= *s;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int64_t fsx_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void fsx_bind(const struct fsx_binding *b)
{
	bind = *b;
	bound = 1;
	lock_path_len = b->lock_path ? strlen(b->lock_path) : 0;
	memset(counts, 0, sizeof counts);
	last_create_ns = 0;
}

void fsx_unbind(void)
{
	bound = 0;
}

const uint64_t *fsx_counts(void)
{
	return counts;
}

int64_t fsx_last_create_ns(void)
{
	return last_create_ns;
}

void fsx_reset_create(void)
{
	last_create_ns = 0;
}

static uint64_t log_event(int type, int err, int64_t a, int64_t b, int64_t c)
{
	return journal_log(bind.journal, type, bind.op ? *bind.op : 0, err, a, b, c);
}

/* Tell the watchdog we moved: a tick, not a clock read (points are hot). */
static void note_progress(const char *point)
{
	struct arena_worker *aw = &bind.arena->w[bind.worker];
	atomic_store_explicit(&aw->progress, atomic_load_explicit(&aw->progress, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	atomic_store_explicit(&aw->last_point, (uint64_t)(uintptr_t)point, memory_order_relaxed);
}

/* Act on a fault decision at a point: journal it first, so the record
 * survives the SIGKILL that follows or the stall that may outlive the run. */
static void fault_act(const char *point)
{
	struct fault_action act = fault_check(bind.faults, bind.fstate, bind.rng, bind.worker,
					      point, bind.stale_ms);
	if (act.kind == FK_NONE)
		return;
	int saved = errno;
	uint64_t h = fsx_point_hash(point);
	struct arena_worker *aw = &bind.arena->w[bind.worker];
	if (act.kind == FK_STALL) {
		int64_t until = fsx_mono_ns() + act.stall_ms * 1000000LL;
		atomic_store(&aw->excuse_ns, until);
		int64_t cur = atomic_load(&bind.arena->stall_until_ns);
		while (cur < until && !atomic_compare_exchange_weak(&bind.arena->stall_until_ns, &cur, until))
			;
		atomic_fetch_add_explicit(&aw->stalls, 1, memory_order_relaxed);
		log_event(EV_FAULT, 0, FK_STALL, (int64_t)h, act.stall_ms);
		struct timespec ts = { act.stall_ms / 1000, (act.stall_ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		note_progress(point);
	} else if (act.kind == FK_CRASH) {
		atomic_fetch_add_explicit(&aw->crashes, 1, memory_order_relaxed);
		log_event(EV_FAULT, 0, FK_CRASH, (int64_t)h, 0);
		kill(getpid(), SIGKILL);
		for (;;)
			pause();
	}
	errno = saved;
}

/* One writer per slot: a plain relaxed load and store, no locked add. */
static void count_call(enum fsx_op op)
{
	_Atomic uint64_t *c = &bind.arena->w[bind.worker].calls[op];
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static void fsx_enter(enum fsx_op op)
{
	counts[op]++;
	if (!bound)
		return;
	count_call(op);
	if (bind.faults && bind.faults->n)
		fault_act(op_points[op]);
}

static void fsx_leave(enum fsx_op op, int r, int err)
{
	if (bound && bind.trace)
		log_event(EV_STEP, r < 0 ? err : 0, (int64_t)fsx_point_hash(op_points[op]), op, r);
}

void fsx_point(const char *name)
{
	counts[FSX_POINT]++;
	if (!bound)
		return;
	count_call(FSX_POINT);
	note_progress(name);
	if (bind.faults && bind.faults->n)
		fault_act(name);
	if (bind.trace)
		log_event(EV_STEP, 0, (int64_t)fsx_point_hash(name), FSX_POINT, 0);
}

/* ---- lock-object ownership ---- */

/* The lock object itself, or an entry directly inside it. */
static int tracked(const char *path)
{
	if (!bound || !lock_path_len || strncmp(path, bind.lock_path, lock_path_len) != 0)
		return 0;
	const char *rest = path + lock_path_len;
	if (*rest == '\0')
		return 1;
	return *rest == '/' && rest[1] && !strchr(rest + 1, '/');
}

static void obj_created(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	uint64_t seq = log_event(EV_OBJ_CREATE, 0, (int64_t)st.st_ino, (int64_t)st.st_dev, 0);
	arena_obj_add(bind.arena, st.st_dev, st.st_ino, bind.worker, seq);
	last_create_ns = fsx_mono_ns();
}

struct obj_id {
	int known;
	uint64_t dev, ino;
};

static struct obj_id obj_identify(const char *path)
{
	struct obj_id id = { 0, 0, 0 };
	struct stat st;
	if (lstat(path, &st) == 0) {
		id.known = 1;
		id.dev = st.st_dev;
		id.ino = st.st_ino;
	}
	return id;
}

static void obj_removed(struct obj_id id)
{
	if (!id.known)
		return;
	uint64_t cseq = 0;
	int creator = arena_obj_take(bind.arena, id.dev, id.ino, &cseq);
	log_event(EV_OBJ_REMOVE, 0, (int64_t)id.ino, creator, (int64_t)cseq);
}

/* ---- wrappers ---- */

int fsx_mkdir(const char *path, unsigned mode)
{
	fsx_enter(FSX_MKDIR);
	int track = tracked(path);
	if (track)
		arena_obj_lock(bind.arena);
	int r = mkdir(path, mode);
	int err = errno;
	if (track) {
		if (r == 0)
			obj_created(path);
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_MKDIR, r, err);
	errno = err;
	return r;
}

int fsx_mkdir_p(const char *path)
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

int fsx_rmdir(const char *path)
{
	fsx_enter(FSX_RMDIR);
	int track = tracked(path);
	struct obj_id id = { 0, 0, 0 };
	if (track) {
		arena_obj_lock(bind.arena);
		id = obj_identify(path);
	}
	int r = rmdir(path);
	int err = errno;
	if (track) {
		if (r == 0)
			obj_removed(id);
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_RMDIR, r, err);
	errno = err;
	return r;
}

int fsx_open(const char *path, int flags, unsigned mode)
{
	fsx_enter(FSX_OPEN);
	int track = (flags & O_CREAT) && (flags & O_EXCL) && tracked(path);
	if (track)
		arena_obj_lock(bind.arena);
	int r = open(path, flags | O_CLOEXEC, mode);
	int err = errno;
	if (track) {
		if (r >= 0)
			obj_created(path);
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_OPEN, r, err);
	errno = err;
	return r;
}

int fsx_close(int fd)
{
	fsx_enter(FSX_CLOSE);
	int r = close(fd);
	int err = errno;
	fsx_leave(FSX_CLOSE, r, err);
	errno = err;
	return r;
}

int fsx_link(const char *from, const char *to)
{
	fsx_enter(FSX_LINK);
	int track = tracked(to);
	if (track)
		arena_obj_lock(bind.arena);
	int r = link(from, to);
	int err = errno;
	if (track) {
		if (r == 0)
			obj_created(to);
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_LINK, r, err);
	errno = err;
	return r;
}

int fsx_unlink(const char *path)
{
	fsx_enter(FSX_UNLINK);
	int track = tracked(path);
	struct obj_id id = { 0, 0, 0 };
	if (track) {
		arena_obj_lock(bind.arena);
		id = obj_identify(path);
	}
	int r = unlink(path);
	int err = errno;
	if (track) {
		if (r == 0)
			obj_removed(id);
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_UNLINK, r, err);
	errno = err;
	return r;
}

int fsx_rename(const char *from, const char *to)
{
	fsx_enter(FSX_RENAME);
	int track_from = tracked(from), track_to = tracked(to);
	struct obj_id gone = { 0, 0, 0 }, replaced = { 0, 0, 0 };
	if (track_from || track_to) {
		arena_obj_lock(bind.arena);
		if (track_from && !track_to)
			gone = obj_identify(from);
		if (track_to)
			replaced = obj_identify(to);
	}
	int r = rename(from, to);
	int err = errno;
	if (track_from || track_to) {
		if (r == 0) {
			obj_removed(gone);
			obj_removed(replaced);
			if (track_to && !track_from)
				obj_created(to);
		}
		arena_obj_unlock(bind.arena);
	}
	fsx_leave(FSX_RENAME, r, err);
	errno = err;
	return r;
}

static void fill_stat(struct fsx_stat *st, const struct statx *sx)
{
	st->dev = ((uint64_t)sx->stx_dev_major << 32) | sx->stx_dev_minor;
	st->ino = sx->stx_ino;
	st->mode = sx->stx_mode;
	st->size = (int64_t)sx->stx_size;
	st->mtime_ns = (int64_t)sx->stx_mtime.tv_sec * 1000000000LL + sx->stx_mtime.tv_nsec;
	st->btime_ns = (sx->stx_mask & STATX_BTIME)
		? (int64_t)sx->stx_btime.tv_sec * 1000000000LL + sx->stx_btime.tv_nsec : 0;
}

static int do_statx(int dirfd, const char *path, int flags, struct fsx_stat *st)
{
	struct statx sx;
	fsx_enter(FSX_STAT);
	int r = statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_BTIME, &sx);
	int err = errno;
	if (r == 0)
		fill_stat(st, &sx);
	fsx_leave(FSX_STAT, r, err);
	errno = err;
	return r;
}

int fsx_stat(const char *path, struct fsx_stat *st)
{
	return do_statx(AT_FDCWD, path, 0, st);
}

int fsx_lstat(const char *path, struct fsx_stat *st)
{
	return do_statx(AT_FDCWD, path, AT_SYMLINK_NOFOLLOW, st);
}

int fsx_fstat(int fd, struct fsx_stat *st)
{
	return do_statx(fd, "", AT_EMPTY_PATH, st);
}

int fsx_exists(const char *path)
{
	fsx_enter(FSX_STAT);
	int r = access(path, F_OK);
	int err = errno;
	fsx_leave(FSX_STAT, r, err);
	errno = err;
	return r == 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int fsx_list(const char *dir, struct fsx_list *out)
{
	out->names = NULL;
	out->n = 0;
	fsx_enter(FSX_LIST);
	DIR *d = opendir(dir);
	if (!d) {
		int err = errno;
		fsx_leave(FSX_LIST, -1, err);
		errno = err;
		return -1;
	}
	size_t cap = 0;
	struct dirent *de;
	int err = 0;
	while ((errno = 0, de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (out->n == cap) {
			cap = cap ? cap * 2 : 8;
			char **grown = realloc(out->names, cap * sizeof *grown);
			if (!grown) {
				err = ENOMEM;
				break;
			}
			out->names = grown;
		}
		if (!(out->names[out->n] = strdup(de->d_name))) {
			err = ENOMEM;
			break;
		}
		out->n++;
	}
	if (!err && errno)
		err = errno;
	closedir(d);
	if (err) {
		fsx_list_free(out);
		fsx_leave(FSX_LIST, -1, err);
		errno = err;
		return -1;
	}
	if (out->n)
		qsort(out->names, out->n, sizeof *out->names, name_cmp);
	fsx_leave(FSX_LIST, 0, 0);
	return 0;
}

void fsx_list_free(struct fsx_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	free(l->names);
	l->names = NULL;
	l->n = 0;
}

int fsx_read_file(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = fsx_open(path, O_RDONLY, 0);
	if (fd < 0)
		return -1;
	fsx_enter(FSX_READ);
	size_t cap = 4096, n = 0;
	char *b = malloc(cap + 1);
	int err = b ? 0 : ENOMEM;
	while (!err) {
		if (n == cap) {
			char *grown = realloc(b, cap * 2 + 1);
			if (!grown) {
				err = ENOMEM;
				break;
			}
			b = grown;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
		} else if (r == 0) {
			break;
		} else {
			n += (size_t)r;
		}
	}
	fsx_leave(FSX_READ, err ? -1 : 0, err);
	close(fd);
	if (err) {
		free(b);
		errno = err;
		return -1;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

int fsx_write_all(int fd, const void *buf, size_t len)
{
	fsx_enter(FSX_WRITE);
	const char *p = buf;
	int err = 0;
	while (len) {
		ssize_t r = write(fd, p, len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			err = errno;
			break;
		}
		p += r;
		len -= (size_t)r;
	}
	fsx_leave(FSX_WRITE, err ? -1 : 0, err);
	errno = err;
	return err ? -1 : 0;
}

int fsx_write_file(const char *path, int flags, const void *buf, size_t len)
{
	int fd = fsx_open(path, flags | O_WRONLY | O_CREAT, 0666);
	if (fd < 0)
		return -1;
	int r = fsx_write_all(fd, buf, len);
	int err = errno;
	if (fsx_close(fd) != 0 && r == 0) {
		r = -1;
		err = errno;
	}
	errno = err;
	return r;
}

int fsx_fsync(int fd)
{
	fsx_enter(FSX_FSYNC);
	int r = fsync(fd);
	int err = errno;
	fsx_leave(FSX_FSYNC, r, err);
	errno = err;
	return r;
}

ssize_t fsx_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	fsx_enter(FSX_WRITE);
	ssize_t r;
	while ((r = pwrite(fd, buf, len, off)) == -1 && errno == EINTR)
		;
	int err = errno;
	fsx_leave(FSX_WRITE, r < 0 ? -1 : 0, err);
	errno = err;
	return r;
}

int fsx_ftruncate(int fd, off_t len)
{
	fsx_enter(FSX_WRITE);
	int r = ftruncate(fd, len);
	int err = errno;
	fsx_leave(FSX_WRITE, r, err);
	errno = err;
	return r;
}

int fsx_hostname(char *buf, size_t len)
{
	if (bound && bind.hostname) {
		if (strlen(bind.hostname) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		strcpy(buf, bind.hostname);
		return 0;
	}
	return gethostname(buf, len);
}

pid_t fsx_getpid(void)
{
	return bound && bind.pid ? bind.pid : getpid();
}

int fsx_utimens(const char *path, const struct timespec ts[2])
{
	fsx_enter(FSX_UTIMENS);
	int r = utimensat(AT_FDCWD, path, ts, 0);
	int err = errno;
	fsx_leave(FSX_UTIMENS, r, err);
	errno = err;
	return r;
}

int fsx_flock(int fd, int op)
{
	fsx_enter(FSX_FLOCK);
	int r;
	while ((r = flock(fd, op)) == -1 && errno == EINTR)
		;
	int err = errno;
	fsx_leave(FSX_FLOCK, r, err);
	errno = err;
	return r;
}

int fsx_pid_alive(pid_t pid)
{
	fsx_enter(FSX_KILL);
	int r = kill(pid, 0);
	int err = errno;
	fsx_leave(FSX_KILL, r, err);
	errno = err;
	return r == 0 || err == EPERM;
}

void fsx_sleep_ms(int64_t ms)
{
	fsx_enter(FSX_SLEEP);
	int saved = errno;
	if (ms > 0) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	errno = saved;
}

int64_t fsx_now_ms(void)
{
	counts[FSX_NOW]++;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
