/*
 * fsx.h - the seam: every file-system call, sleep and clock read that a
 * protocol or workload makes goes through here.
 *
 * One seam gives five things: fault decisions (a point per call, `fs/mkdir`,
 * ..., and each protocol step marked with fsx_point), an optional step trace
 * (EV_STEP journal records), counts of every call, the ground-truth table of
 * which worker created each lock object (objects at the lock path or directly
 * inside it), and in explore mode the scheduler's yield points and virtual
 * time (core/sched.h).  Outside a worker (fsx_bind not called) every call passes straight
 * through, so unit tests can drive protocols directly.
 *
 * Errors: every call returns what the system call returns (-1 and errno) and
 * preserves errno across the bookkeeping it does.
 */
#ifndef LS_FSX_H
#define LS_FSX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "../core/point.h"

#ifdef __cplusplus
extern "C" {
#endif


struct fsx_stat {
	uint64_t dev;
	uint64_t ino;
	uint32_t mode;
	int64_t size;
	int64_t mtime_ns; /* wall clock ns */
	int64_t ctime_ns; /* wall clock ns (status change) */
	int64_t btime_ns; /* birth time, 0 when the file system does not report one */
};

struct fsx_list {
	char **names; /* sorted (strcmp), without "." and ".." */
	size_t n;
};

int fsx_mkdir(const char *path, unsigned mode);
int fsx_mkdir_p(const char *path);            /* EEXIST ignored, parents made */
int fsx_rmdir(const char *path);
int fsx_open(const char *path, int flags, unsigned mode);
int fsx_close(int fd);
int fsx_link(const char *from, const char *to);
int fsx_unlink(const char *path);
int fsx_rename(const char *from, const char *to);
int fsx_stat(const char *path, struct fsx_stat *st);
int fsx_lstat(const char *path, struct fsx_stat *st);
int fsx_fstat(int fd, struct fsx_stat *st);
int fsx_exists(const char *path);             /* access(F_OK): 1 or 0, never fails (as Node's existsSync) */
int fsx_list(const char *dir, struct fsx_list *out);
void fsx_list_free(struct fsx_list *l);
/* Whole file into a malloc'd NUL-terminated buffer. */
int fsx_read_file(const char *path, char **buf, size_t *len);
int fsx_write_all(int fd, const void *buf, size_t len);
/* open(path, flags|O_WRONLY|O_CREAT) + write loop + close (Node writeFileSync). */
int fsx_write_file(const char *path, int flags, const void *buf, size_t len);
/* An append made durable: open(O_APPEND, O_CREAT when missing) + write loop
 * + fsync + close; with DIR_TOO, the folder fsync'd too when the append made
 * the file (its entry is on disk only then).  0, or -1 errno. */
int fsx_append_synced(const char *path, const void *buf, size_t len, int dir_too);
int fsx_fsync(int fd);
ssize_t fsx_pwrite(int fd, const void *buf, size_t len, off_t off); /* one pwrite(2), as Node's writeSync(fd,s,0) */
int fsx_ftruncate(int fd, off_t len);
/* Identity as the protocols see it: the harness may override both (a worker
 * playing a second machine, or "an earlier process numbered as this one"). */
int fsx_hostname(char *buf, size_t len);     /* 0, or -1 errno */
pid_t fsx_getpid(void);
int fsx_utimens(const char *path, const struct timespec ts[2]);
int fsx_flock(int fd, int op);
int fsx_pid_alive(pid_t pid);                 /* kill(pid, 0): EPERM counts as alive */
void fsx_sleep_ms(int64_t ms);
/* no-livelock on a real run: a worker that makes this many seam calls inside
 * one op without a sleep journals one EV_SPIN (check/livelock.c judges it) */
#define FSX_SPIN_CALLS 10000u
int64_t fsx_now_ms(void);                     /* wall clock ms, comparable with file times */
/* The same in us, for constants scaled below a whole ms (--time-scale): a
 * sleep of US us (explore: rounded up to the virtual clock's whole ms) and
 * fsx_now_ms's clock in us. */
void fsx_sleep_us(int64_t us);
int64_t fsx_now_us(void);
/* A protocol took (TAKEN 1: just after the step that took it) or lets go of
 * (0: just before the step that removes it) its secondary mutex INDEX (its
 * ops table's mutexes[]); STALE_US: after how long another may take it over
 * (-1: never).  Journaled as EV_MUTEX_TAKE / EV_MUTEX_DROP; unbound: nothing. */
void fsx_mutex(unsigned index, int taken, int64_t stale_us);
/* The fsx op of the last call that failed with ERR since fsx_failure_clear
 * (-1: none did): which call an error a protocol raised came from.  A stat
 * of a descriptor (fsx_fstat) is FSX_CALL_FSTAT: a protocol's claim about
 * its lstat of the path is not one about its fstat (lockfile-legacy VL13 vs
 * VL15). */
int fsx_failed_call(int err);
/* And the path it named, seen from the bound lock path (core/point.h): the
 * lock itself, an entry directly inside it, or another; UNKNOWN when no call
 * failed with ERR, the call had no path (a descriptor's) or the seam is not
 * bound.  mkdir-owner's mkdir(L) (AT2) and mkdir(L/entry) (AT3) are one op
 * but not one claim. */
enum fsx_path fsx_failed_path(int err);
void fsx_failure_clear(void);
int64_t fsx_mono_ns(void);                    /* CLOCK_MONOTONIC ns (harness bookkeeping) */
/* A protocol step.  Name: "<proto>/<operation>/<before|after>-<label>".
 * The name must be static (a string literal or a static table entry): the
 * seam keys its per-point caches by the name's address. */
void fsx_point(const char *name);
/* Tests only: when set, called first with every fsx_point name, bound or not
 * (tests/unit_points.cc checks each fired name is in a points table).  NULL
 * by default: one predictable branch. */
extern void (*fsx_point_observer)(const char *name);

/* Explore mode only: a decision point that is no file-system call (the
 * moment a worker holds the lock, so a protocol whose acquire makes no call,
 * like none, still overlaps).  Elsewhere it does nothing. */
void fsx_yield(void);

/* ---- binding a worker process (harness side) ---- */
struct journal;
struct arena;
struct fault_plan;
struct fault_state;
struct prng;
struct sched;

struct fsx_binding {
	unsigned worker;
	struct journal *journal;
	struct arena *arena;
	const struct fault_plan *faults;
	struct fault_state *fstate;  /* the worker's per-rule counters */
	struct prng *rng;
	const char *lock_path;   /* objects at this path or directly in it are tracked */
	int64_t stale_ms;        /* the worker's protocol stale age (scaled), for for=Nstale */
	uint32_t *op;            /* the worker's current op number, for journal records */
	int trace;               /* journal an EV_STEP per call */
	const char *hostname;    /* NULL: the real one */
	pid_t pid;               /* 0: the real one */
	uint64_t dev;            /* nonzero: the lock objects' device, as one name for what each host's
				    network mount shows as a device of its own (--netfs) */
	struct sched *sched;     /* explore: every call is a scheduler step, time is virtual */
};
void fsx_bind(const struct fsx_binding *b);
void fsx_unbind(void);
/* What a new process would not have, forgotten (explore: a worker whose
 * process lived through its crash): the paths and Windows-rule slots of
 * its descriptors, and the binding. */
void fsx_forget_process(void);
/* Explore on the real file system: the folders' time stamps the workers
 * kept for later in S (core/sched.h's struct sched_vt) sent out now, before
 * the explorer itself changes the store (a sweep). */
void fsx_vt_flush_shared(struct sched *s);
/* ... and the store's stamp at the start of an execution (the virtual
 * clock's now, 0) kept there too: 0, or -1 when it cannot wait (stamps are
 * made at once, or the path is too long): then the caller makes it. */
int fsx_vt_stamp_shared(struct sched *s, const char *path);
/* Calls counted in this process so far (FSX_OP_COUNT entries). */
const uint64_t *fsx_counts(void);
/* ns when this worker's last created lock object was made (0: none since reset). */
int64_t fsx_last_create_ns(void);
void fsx_reset_create(void);

#ifdef __cplusplus
}
#endif
#endif
