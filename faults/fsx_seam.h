/*
 * fsx_seam.h - what the seam's own files share (faults/fsx*.c only: users
 * include fsx.h).
 *
 *     fsx.c        binding, points, the wrappers (calls the pieces below)
 *     fsx_fault.c  acting on fault decisions (libfiu asks, the worker's PRNG answers)
 *     fsx_obj.c    the ground-truth table of who created each lock object
 *     fsx_win.c    the Windows-like path rules of the windows profile
 *     fsx_vt.c     explore mode's virtual file times
 *     fsx_spin.c   no-livelock's count of calls since the last sleep (real runs)
 *     fsx_state.c  the binding, the scheduler, the clock, events: what all of them read
 *                  (the bottom: it calls none of the others)
 */
#ifndef LS_FSX_SEAM_H
#define LS_FSX_SEAM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

struct arena_worker;
struct fsx_binding;
struct sched;

/* fsx_state.c */
extern struct fsx_binding fsx_cur;    /* this process's binding (fsx_bind) */
extern int fsx_bound;                 /* fsx_bind called, fsx_unbind not since */
extern size_t fsx_lock_path_len;      /* strlen(fsx_cur.lock_path), 0: none */
extern struct sched *fsx_sched;       /* explore: the step scheduler (fsx_cur.sched), else NULL */
uint64_t fsx_log_event(int type, int err, int64_t a, int64_t b, int64_t c);
/* Inside a compound call (fsx_file.c): its inner calls are no steps of their own. */
extern int fsx_compound;
int fsx_compound_begin(int op, const char *path); /* explore: the call is one step; 1 if it began one */
void fsx_compound_end(int own, int r);
void fsx_note_progress(const char *point);
/* An absolute path without an empty, "." or ".." part: two such paths name
 * one entry when they are equal (up to case, where a folder folds it). */
int fsx_path_plain(const char *p);

/* Descriptors the seam remembers something about (paths, Windows slots). */
#define WIN_FDS 1024

/* fsx_fault.c */
extern uint32_t fsx_rule_mask;          /* the plan's rules that apply to this worker (fsx_bind) */
extern int64_t fsx_short_write_left;    /* short-write: bytes still allowed, then the errno */
extern int fsx_short_write_err;         /* 0: a split write (the rest after the pause) */
extern int64_t fsx_short_write_pause_ms; /* split: the pause between the two parts */
void fsx_fault_forget(void);
int fsx_fault_decide(const char *name, int *failnum, void **failinfo, unsigned int *flags);
void fsx_fault_excuse(struct arena_worker *aw, int64_t until);
int fsx_fault_act(const char *point, const char *path);

/* fsx_fault.c: explore's fault choices (core/sched.h, struct sched_xf) */
int fsx_xf_apply(int op);                      /* the errno to inject into this call, 0: go on */
void fsx_xf_rest(int fd, const char *path);     /* a split write: announce its rest as a step */
const char *fsx_xf_pid_name(pid_t pid);         /* "2001": what a kill -0 step names */
int fsx_xf_pid_answer(int r);                   /* kill -0's result, as a pid choice says */
int fsx_xf_other_host(char *buf, size_t len);   /* "<hostname>-other" */

/* fsx_obj.c */
struct fsx_obj_id {
	int known;
	uint64_t dev, ino;
};
enum fsx_path fsx_path_role(const char *path); /* UNKNOWN when unbound or PATH is NULL */
int fsx_obj_tracked(const char *path);
void fsx_obj_created(const char *path);
struct fsx_obj_id fsx_obj_identify(const char *path);
void fsx_obj_removed(struct fsx_obj_id id);
/* A name change at PATH succeeded (made, removed, moved from or to, linked
 * to): what fsx_obj_identify knew at or below it is forgotten.  Only explore
 * keeps anything: a run's opens (every op's, with O_CREAT) make no call. */
void fsx_obj_forget(const char *path);
static inline void fsx_obj_renamed(const char *path)
{
	if (fsx_sched)
		fsx_obj_forget(path);
}

/* fsx_win.c */
extern int fsx_win_on; /* bound with the windows profile: the rules below play */
void fsx_win_note_removed(const char *path);
int fsx_win_delete_pending(const char *path);
void fsx_win_note_open(int fd, const char *path);
void fsx_win_forget(void);
void fsx_win_note_close(int fd);
int fsx_win_sharing(const char *path);

/* fsx_spin.c: calls since the last sleep against a mark (fsx_enter's fast path) */
#define FSX_SPIN_NEVER UINT64_MAX
extern uint64_t fsx_spin_calls, fsx_spin_mark;
void fsx_spin_rearm(void);          /* a sleep, a bind: count from 0 */
void fsx_spin_mark_reached(void);   /* the slow part: the op, the clock, EV_SPIN */

/* fsx_vt.c */
void fsx_vt_times(struct timespec ts[2]);      /* now, on the virtual clock */
void fsx_vt_stamp(const char *path);
void fsx_vt_stamp_parent(const char *path);
void fsx_vt_stamp_parents(const char *from, const char *to); /* both folders of a rename, each once */
void fsx_vt_stamp_fd(int fd);
/* The stamps kept for later (fsx_vt.c says when they must go out): all of
 * them; the descriptors' when FD has one; all unless each stamped path is a
 * folder above A (and B, when not NULL) or another entry of A's folder,
 * which a rename, unlink or rmdir of A leaves be. */
void fsx_vt_flush(void);
void fsx_vt_flush_fds(void);                      /* the descriptors' alone (a hand-off) */
void fsx_vt_flush_fd(int fd);
void fsx_vt_flush_touching(const char *a, const char *b);
void fsx_vt_flush_before_rmdir(const char *path); /* an rmdir of PATH: its own stamp may wait */
void fsx_vt_rmdir_done(const char *path);         /* it succeeded: its stamp goes, its folder's is taken */

/* A wrapper's errno after the call that returned r: read only when the call
 * failed (0 otherwise), and set back only then.  A call that succeeds then
 * touches neither errno nor libc's __errno_location: right after a system
 * call both are TLB misses on machines that empty the TLB at every call (page
 * table isolation without PCID).  POSIX leaves errno unspecified after a
 * success, and what follows (fsx_leave, the trace) reads err only on failure. */
static inline int fsx_errno_of(long r)
{
	return __builtin_expect(r < 0, 0) ? errno : 0;
}

static inline void fsx_errno_set(long r, int err)
{
	if (__builtin_expect(r < 0, 0))
		errno = err;
}

#endif
