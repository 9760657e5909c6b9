/*
 * worker.c - the one worker body (worker_run) and the journaling helpers
 * every workload uses (see workload.h).
 *
 * worker_log is the one place a worker's events enter its journal; it also
 * keeps the arena's live view (progress for the watchdog, counters for the
 * status line, the online holder counter) in step with the journal.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "../faults/fsx.h"
#include "../core/arena.h"
#include "../core/hot.h"
#include "../core/sched.h"
#include "workload.h"

/* The live counters have one writer each (this worker): a relaxed load and
 * store, no locked add. */
static inline void bump(_Atomic uint64_t *c)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + 1, memory_order_relaxed);
}

/* The counters of the rarer records (a switch: its jump table is in .rodata,
 * a page the records of every op would touch). */
static void count_other(struct arena_worker *aw, int type)
{
	switch (type) {
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
	default:
		break;
	}
}

/* worker_log's body, inlined where the record's type is a constant (the
 * four records of every acquire and release): the tests on it fold away. */
static inline __attribute__((always_inline)) uint64_t log_event(struct worker *w, int type, int err,
								  int64_t a, int64_t b, int64_t c)
{
	struct arena_worker *aw = &w->arena->w[w->id];
	if (type == EV_RELEASE_BEGIN)  /* leave the online count before the record: no false breach */
		arena_hold_leave(w->arena, w->id);
	uint64_t seq = journal_log(&w->journal, type, w->op, err, a, b, c);
	bump(&aw->progress);
	if (type == EV_ACQUIRED) {
		bump(&aw->acquired);
		arena_hold_enter(w->arena, w->id, seq);
	} else if (type == EV_RELEASED) {
		bump(&aw->ops);
	} else if (type != EV_ATTEMPT && type != EV_RELEASE_BEGIN) {
		count_other(aw, type);
	}
	return seq;
}

LS_HOT uint64_t worker_log(struct worker *w, int type, int err, int64_t a, int64_t b, int64_t c)
{
	return log_event(w, type, err, a, b, c);
}

LS_HOT int worker_acquire(struct worker *w, int64_t attempt)
{
	fsx_reset_create();
	fsx_failure_clear();
	log_event(w, EV_ATTEMPT, 0, attempt, 0, 0);
	int r = w->acquire(&w->lock);
	int err = r != 0 ? errno : 0; /* a success touches no errno (see fsx_errno_of) */
	if (r == 0) {
		/* The hold began when its lock object was made (a little before now). */
		log_event(w, EV_ACQUIRED, 0, fsx_last_create_ns(), 0, 0);
		fsx_yield(); /* explore: another worker may go first now */
	} else if (r == LS_BUSY) {
		worker_log(w, EV_BUSY, 0, 0, 0, 0);
	} else {
		w->lock.last_error = err;
		/* which call failed, and whether the protocol claims to absorb
		 * that (no-escaped-error) */
		int call = fsx_failed_call(err);
		enum fsx_path path = fsx_failed_path(err);
		worker_log(w, EV_ACQUIRE_ERROR, err, call + 1,
			   lock_absorbs(&w->lock, LOCK_OP_ACQUIRE, call, path, err), path);
	}
	if (r != 0)
		errno = err;
	return r;
}

LS_HOT int worker_release(struct worker *w)
{
	log_event(w, EV_RELEASE_BEGIN, 0, 0, 0, 0);
	fsx_failure_clear();
	int r = w->release(&w->lock);
	int err = r != 0 ? errno : 0;
	if (r == 0) {
		log_event(w, EV_RELEASED, 0, 0, 0, 0);
	} else {
		int call = fsx_failed_call(err);
		enum fsx_path path = fsx_failed_path(err);
		worker_log(w, EV_RELEASE_ERROR, err, call + 1,
			   lock_absorbs(&w->lock, LOCK_OP_RELEASE, call, path, err), path);
	}
	if (r != 0)
		errno = err;
	return r;
}

int64_t worker_stale_ms(const struct lock *lk)
{
	int64_t st = lk->ops->stale_ms(lk);
	if (st != LS_NEVER)
		return st;
	int i = param_index(lk->ops->params, "stale_ms");
	return i >= 0 ? lk->param[i] : 10000;
}

/* The next op's number into w->op: 0 when there is none. */
static int worker_next_op(struct worker *w, const struct worker_spec *sp, long done)
{
	if (sp->ops == WORKER_CLAIM_OPS) {
		if (!arena_claim_op(sp->arena))
			return 0;
		w->op = atomic_fetch_add(&sp->arena->w[sp->id].next_op, 1);
		return 1;
	}
	if (done >= sp->ops)
		return 0;
	w->op = sp->op_base + (uint32_t)done;
	if (sp->fsx.sched)
		sp->fsx.sched->w[sp->id].op_no = w->op;
	return 1;
}

LS_HOT int worker_run(const struct worker_spec *sp)
{
	/* big (struct lock): off the stack; its head, which every op reads, on one page */
	static struct worker w __attribute__((aligned(4096)));
	memset(&w, 0, sizeof w);
	w.id = sp->id;
	w.incarnation = sp->incarnation;
	w.pid = sp->pid;
	w.arena = sp->arena;
	w.workers = sp->workers;
	/* copies beside the rest an op reads (the run's config is pages away) */
	memcpy(w.wparam_own, sp->wparam, sizeof w.wparam_own);
	w.wparam = w.wparam_own;
	if (sp->wparam_us) {
		memcpy(w.wparam_us_own, sp->wparam_us, sizeof w.wparam_us_own);
		w.wparam_us = w.wparam_us_own;
	}
	snprintf(w.state_file, sizeof w.state_file, "%s", sp->state_file);
	prng_seed(&w.rng, sp->seed, sp->id, sp->incarnation);
	if (sp->journal_path) {
		if ((sp->journal_ring ? journal_open_ring(&w.journal, sp->journal_path, sp->id, sp->journal_ring)
				      : journal_open_mapped(&w.journal, sp->journal_path, sp->id)) != 0)
			return -1;
	} else {
		journal_open_mem(&w.journal, sp->jmem, sp->id, w.pid);
	}
	if (sp->workload->reset) /* a fresh process has nothing to forget; explore's goes on */
		sp->workload->reset();
	lock_setup(&w.lock, sp->proto, w.state_file, sp->pvals, sp->id, &w.rng);
	lock_setup_exact(&w.lock, sp->pvals_us);
	w.acquire = w.lock.ops->acquire;
	w.release = w.lock.ops->release;

	struct fsx_binding b = sp->fsx;
	b.worker = sp->id;
	b.journal = &w.journal;
	b.arena = sp->arena;
	b.rng = &w.rng;
	b.lock_path = w.lock.path;
	b.stale_ms = worker_stale_ms(&w.lock);
	b.op = &w.op;
	fsx_bind(&b);
	/* init after the binding: what it does on disk (a carried-lock sweep)
	 * meets faults, the trace and the ownership table like any step */
	if (w.lock.ops->init(&w.lock) != 0)
		return -1;
	worker_log(&w, EV_WORKER_START, 0, sp->incarnation, sp->host, 0);
	if (sp->wait_go)
		arena_wait_go(sp->arena);
	int (*op)(struct worker *) = sp->workload->op;
	for (long done = 0; worker_next_op(&w, sp, done); done++)
		if (op(&w) != 0)
			break;
	worker_log(&w, EV_WORKER_EXIT, 0, 0, 0, 0);
	fsx_unbind();
	if (w.journal.ring) /* its last records to the file (else the driver's settle does it) */
		journal_close(&w.journal);
	return 0;
}
