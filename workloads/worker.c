/*
 * worker.c - journaling helpers every workload uses (see workload.h).
 *
 * worker_log is the one place a worker's events enter its journal; it also
 * keeps the arena's live view (progress for the watchdog, counters for the
 * status line, the online holder counter) in step with the journal.
 */
#include <errno.h>
#include <stdatomic.h>

#include "../faults/fsx.h"
#include "../harness/arena.h"
#include "workload.h"

uint64_t worker_log(struct worker *w, int type, int err, int64_t a, int64_t b, int64_t c)
{
	struct arena_worker *aw = &w->arena->w[w->id];
	if (type == EV_RELEASE_BEGIN)  /* leave the online count before the record: no false breach */
		arena_hold_leave(w->arena, w->id);
	uint64_t seq = journal_log(&w->journal, type, w->op, err, a, b, c);
	atomic_store_explicit(&aw->progress, atomic_load_explicit(&aw->progress, memory_order_relaxed) + 1,
			      memory_order_relaxed);
	switch (type) {
	case EV_ACQUIRED:
		atomic_fetch_add_explicit(&aw->acquired, 1, memory_order_relaxed);
		arena_hold_enter(w->arena, w->id, seq);
		break;
	case EV_COMMIT:
		atomic_fetch_add_explicit(&aw->committed, 1, memory_order_relaxed);
		break;
	case EV_BUSY:
		atomic_fetch_add_explicit(&aw->busy, 1, memory_order_relaxed);
		break;
	case EV_ACQUIRE_ERROR:
	case EV_WRITE_ERROR:
	case EV_RELEASE_ERROR:
		atomic_fetch_add_explicit(&aw->errors, 1, memory_order_relaxed);
		break;
	case EV_LOST:
		atomic_fetch_add_explicit(&aw->lost, 1, memory_order_relaxed);
		break;
	case EV_RELEASED:
		atomic_fetch_add_explicit(&aw->ops, 1, memory_order_relaxed);
		break;
	default:
		break;
	}
	return seq;
}

int worker_acquire(struct worker *w, int64_t attempt)
{
	fsx_reset_create();
	worker_log(w, EV_ATTEMPT, 0, attempt, 0, 0);
	int r = w->lock.ops->acquire(&w->lock);
	int err = errno;
	if (r == 0) {
		/* The hold began when its lock object was made (a little before now). */
		worker_log(w, EV_ACQUIRED, 0, fsx_last_create_ns(), 0, 0);
	} else if (r == LS_BUSY) {
		worker_log(w, EV_BUSY, 0, 0, 0, 0);
	} else {
		w->lock.last_error = err;
		worker_log(w, EV_ACQUIRE_ERROR, err, 0, 0, 0);
	}
	errno = err;
	return r;
}

int worker_release(struct worker *w)
{
	worker_log(w, EV_RELEASE_BEGIN, 0, 0, 0, 0);
	int r = w->lock.ops->release(&w->lock);
	int err = errno;
	if (r == 0)
		worker_log(w, EV_RELEASED, 0, 0, 0, 0);
	else
		worker_log(w, EV_RELEASE_ERROR, err, 0, 0, 0);
	errno = err;
	return r;
}
