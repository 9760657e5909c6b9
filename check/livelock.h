/*
 * livelock.h - no-livelock: a worker that takes more than N steps inside one
 * op without a sleep or a change of the lock directory spins without progress.
 *
 * In explore it is judged on a step history (the explorer's steps, one per
 * file-system call: check_input.steps).  On a real run the seam counts each
 * worker's calls since its last sleep and journals one EV_SPIN when an op
 * reaches FSX_SPIN_CALLS (faults/fsx.h); the checker blames it when no lock
 * object was made or removed, by anyone, since the half-way call (ck_spin).
 * It is not applicable ("n/a") to a run of adapters only (their calls are not
 * the seam's) and to a history without steps or workers' protocols.
 */
#ifndef LS_LIVELOCK_H
#define LS_LIVELOCK_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct check_inv;

struct ck_step {
	uint16_t w;          /* the worker that took it */
	uint32_t op;         /* its op number then */
	uint8_t sleeps;      /* the worker went to sleep after it (a wait is progress) */
	uint8_t changes;     /* it changed the lock directory (mkdir, rmdir, unlink, rename, link,
	                      * write that succeeded): every worker's count starts again */
};

/* Judge STEPS (in the order taken) into OUT: a violation for each worker and
 * op whose run of steps without a sleep or a change exceeded LIMIT; the
 * example names the worker, the op and the steps' indices (seq[0] = first,
 * seq[1] = last, 0-based).  LIMIT 0: 200. */
void check_livelock(const struct ck_step *steps, size_t n, unsigned limit, struct check_inv *out);

#ifdef __cplusplus
}
#endif
#endif
