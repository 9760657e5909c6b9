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
#include "../core/arena.h"
#include "workload.h"

/* The live counters have one writer each (this worker): a relaxed load and
 * store, no locked add. */
static inline void bump(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

uint64_t worker_log(struct worker *w, int type, int err, int64_t a, int64_t b, int64_t c)
{
	struct arena_worker *aw = &w->arena->w[w->id];
	if (type == EV_RELEASE_BEGIN)  /* leave the online count before the record: no false breach */
		arena_hold_leave(w->arena, w->id);
	uint64_t seq = journal_log(&w->journal, type, w->op, err, a, b, c);
	bump(&aw->progress);
	switch (type) {
	case EV_ACQUIRED:
		bump(&aw->acquired);
		arena_hold_enter(w->arena, w->id, seq);
		break;
	case EV_COMMIT:
		bump(&aw->committed);
		break;
	case EV_BUSY:
		bump(&aw->busy);
		break;
	case EV_ACQUIRE_ERROR:
	case EV_WRITE_ERROR:
	case EV_RELEASE_ERROR:
		bump(&aw->errors);
		break;
	case EV_LOST:
		bump(&aw->lost);
		break;
	case EV_RELEASED:
		bump(&aw->ops);
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
		fsx_yield(); /* explore: another worker may go first now */
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
