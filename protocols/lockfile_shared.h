/*
 * lockfile_shared.h - what lockfile-recorded's files share (protocols/
 * lockfile_{recorded,carried,take,sweep,record}.c only; its one ops table,
 * lockfile_recorded_ops, is in lock.h's registry).  Each file calls only
 * those listed below it:
 *
 *     lockfile_recorded.c  the protocol: staleness, reclaim, the wait loop, hooks, ops table
 *     lockfile_carried.c   removeCarriedLocks at init (§5.6)
 *     lockfile_take.c      the point table; TAKE / CT1-CT7 and RELEASE_RECORDED of one recorded file
 *     lockfile_sweep.c     SWEEP of old take files (CR4)
 *     lockfile_record.c    the holder record: format, read, parse, token
 */
#ifndef LS_LOCKFILE_SHARED_H
#define LS_LOCKFILE_SHARED_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "lock.h"


/* Indexes into lk->param, in lr_params order. */
enum {
	LR_STALE,    /* LOCK_STALE_MS */
	LR_GRACE,    /* EMPTY_RECORD_GRACE_MS */
	LR_WAIT,     /* withLock's timeout (lock and recovery waits) */
	LR_POLL,     /* the sleep between tries */
	LR_ATTEMPTS, /* RECORD_ATTEMPTS */
	LR_RETAIN,   /* retainLiveOwner */
	LR_TAKE,     /* enum lr_take_form */
	LR_CARRIED,  /* removeCarriedLocks at init */
	LR_NPARAMS
};
enum lr_take_form { LR_TAKE_LINK = 0, LR_TAKE_TWOCALL = 1 };

/* Point names are written once, in lr_points[] (order = `lockstorm list points`);
 * a step fires PT(NAME), the table's own entry: the seam keys by address. */
enum lr_point {
	LR_PT_TAKE_AFTER_TMP_WRITE,
	LR_PT_TAKE_BEFORE_LINK,
	LR_PT_TAKE_AFTER_LINK,
	LR_PT_TAKE_AFTER_SWEEP,
	LR_PT_TAKE_AFTER_TMP_UNLINK,
	LR_PT_TAKE_AFTER_OPEN_RW,
	LR_PT_TAKE2_AFTER_CREATE,
	LR_PT_TAKE2_AFTER_RECORD_WRITE,
	LR_PT_TAKE2_AFTER_FAIL_READ,
	LR_PT_TAKE2_AFTER_FAIL_UNLINK,
	LR_PT_TAKE2_AFTER_READBACK,
	LR_PT_TAKE_AFTER_DIR_MKDIR,
	LR_PT_TAKE_AFTER_BACKOFF,
	LR_PT_TAKE_AFTER_TIMEOUT_READ,
	LR_PT_TAKE_AFTER_SLEEP,
	LR_PT_SWEEP_AFTER_READDIR,
	LR_PT_SWEEP_AFTER_STAT,
	LR_PT_SWEEP_AFTER_UNLINK,
	LR_PT_STALE_AFTER_READ,
	LR_PT_STALE_AFTER_KILL,
	LR_PT_STALE_AFTER_STAT,
	LR_PT_STALE_AFTER_AGE_STAT,
	LR_PT_RECOVERY_STALE_AFTER_STAT,
	LR_PT_RECOVERY_STALE_AFTER_READ,
	LR_PT_RECOVERY_STALE_AFTER_KILL,
	LR_PT_RECLAIM_AFTER_STALE_CHECK,
	LR_PT_RECOVERY_TAKE_AFTER_TMP_WRITE,
	LR_PT_RECOVERY_TAKE_BEFORE_LINK,
	LR_PT_RECOVERY_TAKE_AFTER_LINK,
	LR_PT_RECOVERY_TAKE_AFTER_SWEEP,
	LR_PT_RECOVERY_TAKE_AFTER_TMP_UNLINK,
	LR_PT_RECOVERY_TAKE_AFTER_OPEN_RW,
	LR_PT_RECOVERY_TAKE2_AFTER_CREATE,
	LR_PT_RECOVERY_TAKE2_AFTER_RECORD_WRITE,
	LR_PT_RECOVERY_TAKE2_AFTER_FAIL_READ,
	LR_PT_RECOVERY_TAKE2_AFTER_FAIL_UNLINK,
	LR_PT_RECOVERY_TAKE2_AFTER_READBACK,
	LR_PT_RECLAIM_AFTER_RECOVERY_TAKE,
	LR_PT_RECLAIM_AFTER_RECOVERY_STALE_CHECK,
	LR_PT_RECLAIM_BEFORE_RECOVERY_RENAME_ASIDE,
	LR_PT_RECLAIM_AFTER_RECOVERY_RENAME_ASIDE,
	LR_PT_RECLAIM_AFTER_RECOVERY_UNLINK_ASIDE,
	LR_PT_RECLAIM_AFTER_RECHECK,
	LR_PT_RECLAIM_AFTER_READ_HOLDER,
	LR_PT_RECLAIM_BEFORE_RENAME_ASIDE,
	LR_PT_RECLAIM_AFTER_RENAME_ASIDE,
	LR_PT_RECLAIM_AFTER_UNLINK_SALVAGE,
	LR_PT_RECLAIM_BEFORE_RECOVERY_RELEASE,
	LR_PT_RECOVERY_RELEASE_AFTER_CLOSE,
	LR_PT_RECOVERY_RELEASE_AFTER_READ,
	LR_PT_RECOVERY_RELEASE_AFTER_UNLINK,
	LR_PT_HOLD_AFTER_PWRITE,
	LR_PT_HOLD_AFTER_FTRUNCATE,
	LR_PT_RELEASE_AFTER_CLOSE,
	LR_PT_RELEASE_AFTER_READ,
	LR_PT_RELEASE_AFTER_UNLINK,
	LR_PT_CARRIED_AFTER_READDIR,
	LR_PT_CARRIED_AFTER_STAT,
	LR_PT_CARRIED_AFTER_READ,
	LR_PT_CARRIED_AFTER_RECOVERY_TAKE,
	LR_PT_CARRIED_BEFORE_RENAME,
	LR_PT_CARRIED_AFTER_RENAME,
	LR_PT_CARRIED_AFTER_ASIDE_READ,
	LR_PT_CARRIED_AFTER_LINK_BACK,
	LR_PT_CARRIED_AFTER_ASIDE_UNLINK,
	LR_NPOINTS
};
extern const char *const lr_points[]; /* by enum lr_point, NULL-terminated: the ops table's .points */
#define PT(name) lr_points[LR_PT_##name]

/* CREATE_RECORDED's points, for P or for a .recovery: indexes into lr_points. */
struct lr_take_points {
	enum lr_point tmp_write, before_link, link, sweep, tmp_unlink, open_rw;
	enum lr_point create, record_write, fail_read, fail_unlink, readback;
};

/* CREATE_RECORDED's outcomes; LR_RAISE carries errno. */
enum lr_outcome { LR_TAKEN, LR_EXISTS, LR_RECLAIMED, LR_UNRECORDED, LR_RAISE };

#define LR_UUID_LEN 36
#define LR_HOST_MAX 256
#define LR_CARRIED_MAX 1024 /* carried-lock sweep: files up to this size */

/* SWEEP memo bits: at most once per process per path. */
enum { LR_SWEPT_LOCK = 1u, LR_SWEPT_RECOVERY = 2u };

/* Per-run state, in lk->state: one module instance's memory. */
struct lr_state {
	int taken;                   /* acquire returned 0 and release has not run */
	int fd;                      /* the held lock's descriptor; -1: none (CR6 failed) */
	size_t rec_len;              /* bytes of the record file now (REWRITE pads up to it) */
	char at[40];                 /* the record's `at`, kept by REWRITE */
	int waiting;                 /* this acquire rewrote the held records with waitingFor */
	char token[LR_UUID_LEN + 1]; /* this take's token */
	int own_set;                 /* ownLocks[P] is set ... */
	char own[LR_UUID_LEN + 1];   /* ... to this token */
	unsigned swept;              /* LR_SWEPT_* */
};
static_assert(sizeof(struct lr_state) <= sizeof(((struct lock *)0)->state),
	      "struct lr_state does not fit in struct lock's state");

/* What a read of a record gives, reduced to the fields the rules use. */
struct lr_holder {
	int present;                 /* a JSON object: the JS `holder` is truthy */
	int pid_int;                 /* isInteger(holder.pid) */
	long long pid;
	int has_host;
	char host[LR_HOST_MAX];
	int at_ok;                   /* `at` parses as toISOString's form */
	int64_t at_ms;
	int has_token;
	char token[LR_UUID_LEN + 1]; /* a longer token never equals ours: cut, marked */
	int token_long;
};

static inline struct lr_state *lr_state(struct lock *lk)
{
	return (struct lr_state *)lk->state.bytes;
}

extern const struct lr_take_points lr_lock_take;     /* the lock's take (lockfile_take.c) */
extern const struct lr_take_points lr_recovery_take;

/* lockfile_record.c: the holder record */
void lr_uuid(struct lock *lk, char out[LR_UUID_LEN + 1]);
void lr_parse_holder(const char *text, size_t len, struct lr_holder *h);
int lr_read_holder(struct lock *lk, const char *path, struct lr_holder *h);
int lr_token_is(const struct lr_holder *h, const char *token);
int lr_this_host(const struct lr_holder *h);
int lr_pid_dead(long long pid);
char *lr_record(struct lock *lk, const char *token, const char *operation, const char *at_set,
		const char *waiting_path, const char *waiting_since, size_t *len);
int lr_has_needle(const char *text, size_t len, const char *token);

/* lockfile_sweep.c: SWEEP of take files */
int lr_split(const char *path, char *dir, char *base);
void lr_sweep_once(struct lock *lk, const char *path, unsigned bit);

/* lockfile_carried.c: removeCarriedLocks */
void lr_remove_carried(struct lock *lk, const char *dir, int64_t before_ms);

/* lockfile_take.c: the take and release of one recorded file */
enum lr_outcome lr_create_recorded(struct lock *lk, const char *path, const char *text,
				   size_t len, const char *token,
				   const struct lr_take_points *pt, unsigned sweep_bit,
				   int *fd_out);
void lr_release_recorded(struct lock *lk, const char *path, const char *token, int fd);

#endif
