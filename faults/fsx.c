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
 *     fsx_leave(op, r, err)    a failure's op and path (fsx_failed_call), optional trace record
 *
 * The ownership bookkeeping and the system call run under one arena mutex so
 * the pair is a single atomic step with respect to other workers' pairs: the
 * file-system operations themselves are atomic, so this removes no
 * interleaving of protocol steps, it only makes "who created the object I
 * just removed" exact.
 *
 * The pieces a wrapper calls live beside this file (faults/fsx_seam.h):
 * fault acting in fsx_fault.c, ownership in fsx_obj.c, the Windows-like path
 * rules in fsx_win.c, virtual file times in fsx_vt.c.
 */
#include "fsx.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <fiu-control.h>
#include <fiu.h>

#include "../core/arena.h"

#include "../core/journal.h"
#include "../core/hot.h"
#include "../core/sched.h"
#include "fault.h"
#include "fsx_seam.h"
#define FSX_BACKEND_REDIRECT /* the system calls below go to fsx_backend when set */
#include "fsx_backend.h"

LS_HOT_DATA static int faults_on;   /* a plan with point-level rules: ask libfiu at every call */
static int64_t skew_ms;             /* skew fault: this worker's clock offset */
static int64_t coarse_ns;           /* coarse-mtime fault: file time resolution */
static int split_id;                /* split-identity fault: fstat's inode is not lstat's */
LS_HOT_DATA static int path_rules;  /* some rule has path=GLOB: remember the paths of descriptors */

LS_HOT_DATA static const char *step_path2; /* rename/link: the second path, for the story */

/* With a fault plan, the path each descriptor was opened with, so rules with
 * path=GLOB also reach fd-based calls (write, fsync, close, flock). */
static char *fd_path[WIN_FDS];
LS_HOT_DATA static int fd_paths; /* some entry was set: without, no call reads the table's page */

static const char *path_of(int fd)
{
	return fd_paths && fd >= 0 && fd < WIN_FDS ? fd_path[fd] : NULL;
}
LS_HOT_DATA static uint64_t counts[FSX_OP_COUNT];

/*
 * The fast path.  fsx_fast[op] is 1 when this process is bound and nothing
 * but counting is asked of the seam at that call: no explore scheduler, no
 * trace, and no fault rule whose glob matches "fs/<op>" (for FSX_POINT: none
 * that can match a protocol step).  A wrapper then costs one predictable
 * branch and two counter bumps.  Worked out once in fsx_bind (the masks
 * from the plan at load), cleared by fsx_unbind: an armed plan that matches
 * nothing costs what no plan costs.
 */
LS_HOT_DATA static unsigned char fsx_fast[FSX_OP_COUNT];
LS_HOT_DATA static _Atomic uint64_t *fsx_calls; /* this worker's arena call counters */
LS_HOT_DATA static struct arena_worker *fsx_aw; /* this worker's arena slot */
static uint32_t op_mask[FSX_OP_COUNT];
LS_HOT_DATA static int step_rules;

static void fsx_set_fast(void)
{
	for (int op = 0; op < FSX_OP_COUNT; op++) {
		int armed = faults_on && (op == FSX_POINT ? step_rules : op_mask[op] != 0);
		fsx_fast[op] = fsx_calls && !fsx_sched && !fsx_cur.trace && !armed;
	}
}

void fsx_bind(const struct fsx_binding *b)
{
	fsx_cur = *b;
	fsx_bound = 1;
	fsx_win_on = b->faults && b->faults->windows;
	fsx_sched = b->sched;
	if (fsx_sched)
		sched_leaving = fsx_vt_flush_fds; /* the folders' may wait in the mapping */
	memset(fsx_fast, 0, sizeof fsx_fast);
	fsx_aw = b->arena ? &b->arena->w[b->worker] : NULL;
	fsx_calls = fsx_aw ? fsx_aw->calls : NULL;
	memset(op_mask, 0, sizeof op_mask);
	step_rules = 0;
	fsx_compound = 0;
	step_path2 = NULL;
	if (fsx_sched)
		sched_attach(fsx_sched, b->worker);
	fsx_spin_rearm();
	fsx_lock_path_len = b->lock_path ? strlen(b->lock_path) : 0;
	memset(counts, 0, sizeof counts);
	fsx_reset_create();
	skew_ms = 0;
	coarse_ns = 0;
	split_id = 0;
	faults_on = 0;
	fsx_rule_mask = 0;
	fsx_fault_forget();
	if (!b->faults) {
		fsx_set_fast();
		return;
	}
	const struct fault_rule *r;
	if ((r = fault_process_rule(b->faults, FK_SKEW, b->worker)))
		skew_ms = r->by_ms;
	if ((r = fault_process_rule(b->faults, FK_COARSE_MTIME, b->worker)))
		coarse_ns = r->res_ms * 1000000LL;
	split_id = fault_process_rule(b->faults, FK_SPLIT_ID, b->worker) != NULL;
	path_rules = 0;
	for (unsigned i = 0; i < b->faults->n; i++)
		path_rules |= b->faults->rule[i].path[0] != '\0';
	if (!fsx_cur.hostname && fault_process_rule(b->faults, FK_OTHER_HOST, b->worker)) {
		/* a second machine sharing the file system: one name for all such workers */
		static char other[300];
		char real[256] = "";
		gethostname(real, sizeof real - 1);
		snprintf(other, sizeof other, "%s-other", real);
		fsx_cur.hostname = other;
	}
	for (unsigned i = 0; i < b->faults->n; i++) {
		enum fault_kind k = b->faults->rule[i].kind;
		if (k == FK_STALL || k == FK_CRASH || k == FK_STOP || k == FK_ERRNO || k == FK_SHORT_WRITE)
			faults_on = 1;
	}
	if (faults_on) {
		/* rules aimed at other workers never act here: left out of every mask */
		fsx_rule_mask = fault_worker_mask(b->faults, b->worker);
		for (int op = 0; op < FSX_OP_COUNT; op++)
			op_mask[op] = fault_point_mask(b->faults, fsx_op_point((enum fsx_op)op)) & fsx_rule_mask;
		step_rules = fault_plan_steps_mask(b->faults, fsx_rule_mask);
		fiu_init(0);
		fiu_enable_external("*", 1, NULL, 0, fsx_fault_decide);
	}
	fsx_set_fast();
}

void fsx_unbind(void)
{
	fsx_bound = 0;
	fsx_win_on = 0;
	memset(fsx_fast, 0, sizeof fsx_fast);
	fsx_sched = NULL;
	fsx_spin_rearm();
}

void fsx_forget_process(void)
{
	fsx_vt_flush_fds(); /* (none: they went out before it waited) */
	const int real = !fsx_modelled(); /* (the model's are the model's: mfs_proc_gone) */
	fsx_unbind();
	for (int fd = 0; fd < WIN_FDS; fd++) {
		if (fd_path[fd] && real) /* as at a death: its flocks and record locks go too */
			close(fd);
		free(fd_path[fd]);
		fd_path[fd] = NULL;
	}
	fd_paths = 0;
	fsx_win_forget();
}

const uint64_t *fsx_counts(void)
{
	return counts;
}

/* One writer per slot: a plain relaxed load and store, no locked add. */
static inline void count_call(enum fsx_op op)
{
	_Atomic uint64_t *c = &fsx_calls[op];
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

static void fsx_leave_slow(enum fsx_op op, int r, int err);
static int fsx_enter_slow(enum fsx_op op, const char *path);

LS_HOT_DATA static const char *call_path; /* the path of the call under way (fsx_enter to fsx_leave) */

/* Count the call and ask the plan; returns an errno to inject (0: go on). */
static inline int fsx_enter(enum fsx_op op, const char *path)
{
	counts[op]++;
	call_path = path;
	if (__builtin_expect(++fsx_spin_calls >= fsx_spin_mark, 0))
		fsx_spin_mark_reached();
	if (__builtin_expect(fsx_fast[op], 1)) {
		count_call(op);
		return 0;
	}
	return fsx_enter_slow(op, path);
}

static int fsx_enter_slow(enum fsx_op op, const char *path)
{
	if (!fsx_bound)
		return 0;
	if (fsx_calls)
		count_call(op);
	if (fsx_sched && !fsx_compound) {
		fsx_short_write_left = -1; /* a short write chosen for a pwrite is not the next step's */
		sched_step(op, path, step_path2);
	}
	step_path2 = NULL;
	if (fsx_sched && sched_xf.kind) /* a fault the explorer chose for this step */
		return fsx_xf_apply(op);
	return faults_on && op_mask[op] ? fsx_fault_act(fsx_op_point(op), path) : 0;
}

LS_HOT_DATA static int last_fail_op = -1, last_fail_err; /* the last call that failed (no-escaped-error) */
LS_HOT_DATA static enum fsx_path last_fail_path;         /* and which path it named */

static inline void fsx_leave(enum fsx_op op, int r, int err)
{
	if (__builtin_expect(r < 0, 0)) {
		last_fail_op = (int)op;
		last_fail_err = err;
		last_fail_path = fsx_path_role(call_path);
	}
	if (__builtin_expect(!fsx_fast[op], 0))
		fsx_leave_slow(op, r, err);
}

/* The call fails with err without acting. */
static int fsx_injected(enum fsx_op op, int err)
{
	fsx_leave(op, -1, err);
	errno = err;
	return -1;
}

int fsx_failed_call(int err)
{
	return last_fail_err == err ? last_fail_op : -1;
}

enum fsx_path fsx_failed_path(int err)
{
	return last_fail_err == err && last_fail_op >= 0 ? last_fail_path : FSX_PATH_UNKNOWN;
}

LS_HOT void fsx_failure_clear(void)
{
	last_fail_op = -1;
	last_fail_err = 0;
	last_fail_path = FSX_PATH_UNKNOWN;
}

void fsx_mutex(unsigned index, int taken, int64_t stale_us)
{
	if (!fsx_bound)
		return;
	fsx_log_event(taken ? EV_MUTEX_TAKE : EV_MUTEX_DROP, 0, (int64_t)index, taken ? stale_us : 0, 0);
}

static void fsx_leave_slow(enum fsx_op op, int r, int err)
{
	if (fsx_sched && !fsx_compound)
		sched_result(r, err);
	if (fsx_bound && fsx_cur.trace)
		fsx_log_event(EV_STEP, r < 0 ? err : 0, (int64_t)point_hash(fsx_op_point(op)), op, r);
}

LS_HOT_DATA void (*fsx_point_observer)(const char *name);

LS_HOT void fsx_point(const char *name)
{
	if (fsx_point_observer)
		fsx_point_observer(name);
	counts[FSX_POINT]++;
	if (__builtin_expect(fsx_fast[FSX_POINT], 1)) {
		count_call(FSX_POINT);
		/* fsx_note_progress, inline: a tick and the point, for the watchdog */
		atomic_store_explicit(&fsx_aw->progress,
				      atomic_load_explicit(&fsx_aw->progress, memory_order_relaxed) + 1,
				      memory_order_relaxed);
		atomic_store_explicit(&fsx_aw->last_point, (uint64_t)(uintptr_t)name, memory_order_relaxed);
		return;
	}
	if (!fsx_bound)
		return;
	if (fsx_calls)
		count_call(FSX_POINT);
	fsx_note_progress(name);
	if (fsx_sched) {
		sched_point(name);
		if (fsx_sched->yield_points && !fsx_compound) { /* a stall or crash may land between a step and what it leads to */
			sched_step(FSX_POINT, name, NULL);
			sched_result(0, 0);
		}
	}
	if (faults_on && step_rules)
		fsx_fault_act(name, NULL);
	if (fsx_cur.trace)
		fsx_log_event(EV_STEP, 0, (int64_t)point_hash(name), FSX_POINT, 0);
}

LS_HOT void fsx_yield(void)
{
	if (!fsx_bound || !fsx_sched || fsx_compound)
		return;
	sched_step(FSX_POINT, NULL, NULL);
	sched_result(0, 0);
}

/* errno-preserving: called after the system call, before errno is restored */
#define VT(stmt) do { if (fsx_sched) { int vt_saved_ = errno; stmt; errno = vt_saved_; } } while (0)

/* ---- wrappers ---- */

int fsx_mkdir(const char *path, unsigned mode)
{
	int inj = fsx_enter(FSX_MKDIR, path);
	if (!inj)
		inj = fsx_win_delete_pending(path);
	if (inj)
		return fsx_injected(FSX_MKDIR, inj);
	int track = fsx_obj_tracked(path);
	if (track)
		arena_obj_lock(fsx_cur.arena);
	int r = mkdir(path, mode);
	int err = fsx_errno_of(r);
	if (r == 0) {
		fsx_obj_renamed(path);
		VT((fsx_vt_stamp(path), fsx_vt_stamp_parent(path)));
	}
	if (track) {
		if (r == 0)
			fsx_obj_created(path);
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_MKDIR, r, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_rmdir(const char *path)
{
	int inj = fsx_enter(FSX_RMDIR, path);
	if (!inj)
		inj = fsx_win_sharing(path);
	if (inj)
		return fsx_injected(FSX_RMDIR, inj);
	int track = fsx_obj_tracked(path);
	struct fsx_obj_id id = { 0, 0, 0 };
	if (track) {
		arena_obj_lock(fsx_cur.arena);
		id = fsx_obj_identify(path);
	}
	VT(fsx_vt_flush_before_rmdir(path));
	int r = rmdir(path);
	int err = fsx_errno_of(r);
	if (r == 0) {
		fsx_obj_renamed(path);
		VT(fsx_vt_rmdir_done(path)); /* its own stamp goes with it */
	}
	if (r == 0)
		fsx_win_note_removed(path);
	if (track) {
		if (r == 0)
			fsx_obj_removed(id);
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_RMDIR, r, err);
	fsx_errno_set(r, err);
	return r;
}

LS_HOT int fsx_open(const char *path, int flags, unsigned mode)
{
	int inj = fsx_enter(FSX_OPEN, path);
	if (inj)
		return fsx_injected(FSX_OPEN, inj);
	int track = (flags & O_CREAT) && (flags & O_EXCL) && fsx_obj_tracked(path);
	if (track)
		arena_obj_lock(fsx_cur.arena);
	int existed = 1, r = -1, tried = 0;
	if (fsx_sched && (flags & O_CREAT) && (fsx_modelled() || (flags & O_EXCL))) {
		struct stat before; /* the model: a stat costs no call; O_EXCL: made if it opens */
		existed = fsx_modelled() && lstat(path, &before) == 0;
	} else if (fsx_sched && (flags & O_CREAT)) {
		/* whether it made the file (its times are then the virtual clock's):
		 * an exclusive try first is one system call where a new file is
		 * made, a stat before the open one more */
		r = open(path, flags | O_EXCL | O_CLOEXEC, mode);
		existed = r < 0 && errno == EEXIST;
		tried = !existed;
	}
	if (!tried)
		r = open(path, flags | O_CLOEXEC, mode);
	int err = fsx_errno_of(r);
	if (r >= 0 && (flags & O_CREAT))
		fsx_obj_renamed(path);
	if (r >= 0 && !existed)
		VT((fsx_vt_stamp_fd(r), fsx_vt_stamp_parent(path)));
	else if (r >= 0 && (flags & O_TRUNC))
		VT(fsx_vt_stamp_fd(r));
	if (r >= 0) {
		fsx_win_note_open(r, path);
		if ((path_rules || fsx_sched) && r < WIN_FDS) { /* explore: the story names what a write touched */
			free(fd_path[r]);
			fd_path[r] = strdup(path);
			fd_paths = 1;
		} else if (fsx_sched && !fsx_modelled()) {
			sched_fd_untracked(); /* a crash cannot close it: a real death then */
		}
	}
	if (track) {
		if (r >= 0)
			fsx_obj_created(path);
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_OPEN, r, err);
	fsx_errno_set(r, err);
	return r;
}

LS_HOT int fsx_close(int fd)
{
	char *path = (char *)path_of(fd); /* the step's path until fsx_leave: freed after it */
	int inj = fsx_enter(FSX_CLOSE, path);
	VT(fsx_vt_flush_fd(fd)); /* its stamp, while it can be made */
	fsx_win_note_close(fd);
	if (path)
		fd_path[fd] = NULL;
	int r = close(fd); /* (injected: the descriptor is gone either way, as close(2) says) */
	int err = inj ? inj : fsx_errno_of(r);
	if (inj)
		r = fsx_injected(FSX_CLOSE, inj);
	else
		fsx_leave(FSX_CLOSE, r, err);
	if (path) /* (a run without path rules keeps none: no call into libc after the close) */
		free(path);
	fsx_errno_set(r, err);
	return r;
}

int fsx_link(const char *from, const char *to)
{
	step_path2 = from; /* the story prints "link FROM -> TO" from (path2, path) */
	int inj = fsx_enter(FSX_LINK, to);
	if (inj)
		return fsx_injected(FSX_LINK, inj);
	int track = fsx_obj_tracked(to);
	if (track)
		arena_obj_lock(fsx_cur.arena);
	int r = link(from, to);
	int err = fsx_errno_of(r);
	if (r == 0) {
		fsx_obj_renamed(to);
		VT(fsx_vt_stamp_parent(to));
	}
	if (track) {
		if (r == 0)
			fsx_obj_created(to);
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_LINK, r, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_unlink(const char *path)
{
	int inj = fsx_enter(FSX_UNLINK, path);
	if (!inj)
		inj = fsx_win_sharing(path);
	if (inj)
		return fsx_injected(FSX_UNLINK, inj);
	int track = fsx_obj_tracked(path);
	struct fsx_obj_id id = { 0, 0, 0 };
	if (track) {
		arena_obj_lock(fsx_cur.arena);
		id = fsx_obj_identify(path);
	}
	VT(fsx_vt_flush_touching(path, NULL));
	int r = unlink(path);
	int err = fsx_errno_of(r);
	if (r == 0) {
		fsx_obj_renamed(path);
		VT(fsx_vt_stamp_parent(path));
	}
	if (track) {
		if (r == 0)
			fsx_obj_removed(id);
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_UNLINK, r, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_rename(const char *from, const char *to)
{
	step_path2 = to;
	int inj = fsx_enter(FSX_RENAME, from);
	if (!inj)
		inj = fsx_win_sharing(from);
	if (!inj)
		inj = fsx_win_sharing(to);
	if (inj)
		return fsx_injected(FSX_RENAME, inj);
	int track_from = fsx_obj_tracked(from), track_to = fsx_obj_tracked(to);
	struct fsx_obj_id gone = { 0, 0, 0 }, replaced = { 0, 0, 0 };
	if (track_from || track_to) {
		arena_obj_lock(fsx_cur.arena);
		if (track_from && !track_to)
			gone = fsx_obj_identify(from);
		if (track_to)
			replaced = fsx_obj_identify(to);
	}
	VT(fsx_vt_flush_touching(from, to));
	int r = rename(from, to);
	int err = fsx_errno_of(r);
	if (r == 0) {
		fsx_obj_renamed(from);
		fsx_obj_renamed(to);
		VT(fsx_vt_stamp_parents(from, to));
	}
	if (track_from || track_to) {
		if (r == 0) {
			fsx_obj_removed(gone);
			fsx_obj_removed(replaced);
			if (track_to && !track_from)
				fsx_obj_created(to);
		}
		arena_obj_unlock(fsx_cur.arena);
	}
	fsx_leave(FSX_RENAME, r, err);
	fsx_errno_set(r, err);
	return r;
}

static void fill_stat(struct fsx_stat *st, const struct statx *sx)
{
	st->dev = ((uint64_t)sx->stx_dev_major << 32) | sx->stx_dev_minor;
	st->ino = sx->stx_ino;
	st->mode = sx->stx_mode;
	st->size = (int64_t)sx->stx_size;
	st->mtime_ns = (int64_t)sx->stx_mtime.tv_sec * 1000000000LL + sx->stx_mtime.tv_nsec;
	st->ctime_ns = (int64_t)sx->stx_ctime.tv_sec * 1000000000LL + sx->stx_ctime.tv_nsec;
	if (fsx_sched) /* explore: no one can stamp a ctime; the virtual mtime stands in (real ones would make replays differ) */
		st->ctime_ns = st->mtime_ns;
	int64_t cns = coarse_ns ? coarse_ns : fsx_sched ? sched_coarse_ms() * 1000000LL : 0;
	if (cns) { /* FAT/SMB/HFS+ report times in whole 1 s or 2 s steps */
		st->mtime_ns -= st->mtime_ns % cns;
		st->ctime_ns -= st->ctime_ns % cns;
	}
	st->btime_ns = (sx->stx_mask & STATX_BTIME)
		? (int64_t)sx->stx_btime.tv_sec * 1000000000LL + sx->stx_btime.tv_nsec : 0;
}

static int do_statx(int dirfd, const char *path, int flags, struct fsx_stat *st)
{
	struct statx sx;
	int inj = fsx_enter(FSX_STAT, *path ? path : NULL);
	int r, err;
	if (inj) {
		r = fsx_injected(FSX_STAT, inj);
		err = inj;
	} else {
		VT(fsx_vt_flush()); /* what it sees is stamped */
		r = statx(dirfd, path, flags, STATX_BASIC_STATS | STATX_BTIME, &sx);
		err = fsx_errno_of(r);
		if (r == 0)
			fill_stat(st, &sx);
		fsx_leave(FSX_STAT, r, err);
	}
	if (r < 0 && !*path)
		last_fail_op = FSX_CALL_FSTAT; /* the descriptor's, not a path's */
	fsx_errno_set(r, err);
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
	int r = do_statx(fd, "", AT_EMPTY_PATH, st);
	if (r == 0 && split_id) /* the descriptor's identity is not the path's (a tab VFS) */
		st->ino ^= 0x4000000000000000ULL;
	return r;
}

int fsx_exists(const char *path)
{
	if (fsx_enter(FSX_STAT, path)) {
		fsx_leave(FSX_STAT, -1, EACCES);
		return 0; /* existsSync never fails: any error is "no" */
	}
	int r = access(path, F_OK);
	int err = fsx_errno_of(r);
	fsx_leave(FSX_STAT, r, err);
	fsx_errno_set(r, err);
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
	int inj = fsx_enter(FSX_LIST, dir);
	if (inj)
		return fsx_injected(FSX_LIST, inj);
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

static int read_file(const char *path, char **buf, size_t *len);

int fsx_read_file(const char *path, char **buf, size_t *len)
{
	int own = fsx_compound_begin(FSX_READ, path);
	int r = read_file(path, buf, len);
	fsx_compound_end(own, r);
	return r;
}

static int read_file(const char *path, char **buf, size_t *len)
{
	*buf = NULL;
	*len = 0;
	int fd = fsx_open(path, O_RDONLY, 0);
	if (fd < 0)
		return -1;
	int err = fsx_enter(FSX_READ, path);
	size_t cap = 4096, n = 0;
	char *b = err ? NULL : malloc(cap + 1);
	if (!err && !b)
		err = ENOMEM;
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
	fsx_close(fd);
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
	int err = fsx_enter(FSX_WRITE, path_of(fd));
	if (err)
		return fsx_injected(FSX_WRITE, err); /* fails without writing a byte */
	const char *p = buf;
	size_t rest = 0; /* split: written after the pause */
	if (fsx_short_write_left >= 0) {
		/* short-write: k bytes land, then the error (split: the pause, then the rest) */
		if ((int64_t)len > fsx_short_write_left) {
			rest = len - (size_t)fsx_short_write_left;
			len = (size_t)fsx_short_write_left;
			err = fsx_short_write_err;
			if (err)
				rest = 0;
		}
		fsx_short_write_left = -1;
	}
	int fail = err;
again:
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
	if (rest && !err && fsx_sched) { /* explore: the rest is a step of its own */
		fsx_xf_rest(fd, path_of(fd));
		len = rest;
		rest = 0;
		goto again;
	}
	if (rest && !err) {
		/* the write loop's second write(2), late: a stall the watchdog excuses */
		struct arena_worker *aw = &fsx_cur.arena->w[fsx_cur.worker];
		struct timespec ts = { fsx_short_write_pause_ms / 1000, (fsx_short_write_pause_ms % 1000) * 1000000L };
		fsx_fault_excuse(aw, fsx_mono_ns() + fsx_short_write_pause_ms * 1000000LL);
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
		fsx_note_progress("fs/write");
		len = rest;
		rest = 0;
		goto again;
	}
	if (!err)
		err = fail;
	VT(fsx_vt_stamp_fd(fd));
	fsx_leave(FSX_WRITE, err ? -1 : 0, err);
	errno = err;
	return err ? -1 : 0;
}

int fsx_fsync(int fd)
{
	int inj = fsx_enter(FSX_FSYNC, path_of(fd));
	if (inj)
		return fsx_injected(FSX_FSYNC, inj);
	int r = fsync(fd);
	int err = fsx_errno_of(r);
	fsx_leave(FSX_FSYNC, r, err);
	fsx_errno_set(r, err);
	return r;
}

ssize_t fsx_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	int inj = fsx_enter(FSX_WRITE, path_of(fd));
	if (inj)
		return fsx_injected(FSX_WRITE, inj);
	ssize_t r;
	while ((r = pwrite(fd, buf, len, off)) == -1 && errno == EINTR)
		;
	int err = fsx_errno_of(r);
	if (r >= 0)
		VT(fsx_vt_stamp_fd(fd));
	fsx_leave(FSX_WRITE, r < 0 ? -1 : 0, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_ftruncate(int fd, off_t len)
{
	int inj = fsx_enter(FSX_WRITE, path_of(fd));
	if (inj)
		return fsx_injected(FSX_WRITE, inj);
	int r = ftruncate(fd, len);
	int err = fsx_errno_of(r);
	if (r == 0)
		VT(fsx_vt_stamp_fd(fd));
	fsx_leave(FSX_WRITE, r, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_hostname(char *buf, size_t len)
{
	if (fsx_bound && fsx_sched && sched_other_host())
		return fsx_xf_other_host(buf, len);
	if (fsx_bound && fsx_cur.hostname) {
		if (strlen(fsx_cur.hostname) >= len) {
			errno = ENAMETOOLONG;
			return -1;
		}
		strcpy(buf, fsx_cur.hostname);
		return 0;
	}
	return gethostname(buf, len);
}

pid_t fsx_getpid(void)
{
	return fsx_bound && fsx_cur.pid ? fsx_cur.pid : getpid();
}

int fsx_utimens(const char *path, const struct timespec ts[2])
{
	int inj = fsx_enter(FSX_UTIMENS, path);
	if (inj)
		return fsx_injected(FSX_UTIMENS, inj);
	struct timespec vts[2];
	if (fsx_sched) { /* "now" is the virtual clock */
		struct timespec now[2];
		fsx_vt_times(now);
		for (int i = 0; i < 2; i++)
			vts[i] = !ts || ts[i].tv_nsec == UTIME_NOW ? now[i] : ts[i];
		ts = vts;
		VT(fsx_vt_flush()); /* a stamp kept for later must not land over these */
	}
	int r = utimensat(AT_FDCWD, path, ts, 0);
	int err = fsx_errno_of(r);
	fsx_leave(FSX_UTIMENS, r, err);
	fsx_errno_set(r, err);
	return r;
}

LS_HOT int fsx_flock(int fd, int op)
{
	if (fsx_sched && !fsx_compound && !(op & LOCK_NB) && (op & (LOCK_EX | LOCK_SH))) {
		/* a blocking flock would stop the whole execution in the kernel:
		 * try, and while it is taken wait until a step of another may
		 * have let it go; the grant out of the wait is the next try's
		 * step (one decision, as the kernel's wake-up is one event) */
		int r = fsx_flock(fd, op | LOCK_NB);
		while (r != 0 && errno == EWOULDBLOCK) {
			sched_block();
			sched_xf.kind = SXF_NONE; /* the first try's: a fault is chosen for an announced call only */
			fsx_compound++;
			r = fsx_flock(fd, op | LOCK_NB);
			int err = errno;
			fsx_compound--;
			sched_result(r, err);
			errno = err;
		}
		return r;
	}
	int inj = fsx_enter(FSX_FLOCK, path_of(fd));
	if (inj)
		return fsx_injected(FSX_FLOCK, inj);
	if (fsx_sched && (op & (LOCK_UN | LOCK_SH))) /* an unlock, or an exclusive one made shared */
		sched_may_release();
	int r;
	while ((r = flock(fd, op)) == -1 && errno == EINTR)
		;
	int err = fsx_errno_of(r);
	fsx_leave(FSX_FLOCK, r, err);
	fsx_errno_set(r, err);
	return r;
}

int fsx_pid_alive(pid_t pid)
{
	int inj = fsx_enter(FSX_KILL, fsx_sched ? fsx_xf_pid_name(pid) : NULL);
	int r, err;
	if (inj) {
		r = -1;
		err = inj;
	} else if (fsx_sched) { /* pids are the workers' virtual ones; any other is gone */
		r = fsx_xf_pid_answer(sched_pid_alive(pid) == 1 ? 0 : -1);
		err = r ? ESRCH : 0;
	} else {
		r = kill(pid, 0);
		err = errno;
	}
	fsx_leave(FSX_KILL, r, err);
	errno = err;
	return r == 0 || err == EPERM;
}

void fsx_sleep_ms(int64_t ms)
{
	int saved = errno;
	if (fsx_sched && !fsx_compound) { /* a sleep is a wait for the virtual clock */
		counts[FSX_SLEEP]++;
		if (fsx_calls)
			count_call(FSX_SLEEP);
		sched_sleep(ms);
		errno = saved;
		return;
	}
	(void)fsx_enter(FSX_SLEEP, NULL); /* a sleep cannot fail: stalls and crashes only */
	fsx_spin_rearm();
	if (ms > 0) {
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	errno = saved;
}

void fsx_sleep_us(int64_t us)
{
	int saved = errno;
	if (fsx_sched && !fsx_compound) { /* the virtual clock moves in whole ms here */
		counts[FSX_SLEEP]++;
		count_call(FSX_SLEEP);
		sched_sleep(us > 0 ? (us + 999) / 1000 : 0);
		errno = saved;
		return;
	}
	(void)fsx_enter(FSX_SLEEP, NULL);
	fsx_spin_rearm();
	if (us > 0) {
		struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
		while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
			;
	}
	errno = saved;
}

int64_t fsx_now_us(void)
{
	counts[FSX_NOW]++;
	if (fsx_sched) /* the skew too, as fsx_now_ms: one clock, read in two units */
		return (sched_now_ms() + sched_skew_ms()) * 1000;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 + skew_ms * 1000;
}

int64_t fsx_now_ms(void)
{
	counts[FSX_NOW]++;
	if (fsx_sched)
		return sched_now_ms() + sched_skew_ms();
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + skew_ms;
}
