/*
 * arena.c - the shared anonymous mapping (see arena.h).
 */
#include "arena.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "journal.h"
#include "hot.h"

static struct arena *seq_arena; /* the arena journal_next_seq draws from */
static uint64_t (*seq_before)(void); /* the source it replaced, put back by arena_destroy */

static size_t arena_size(unsigned nworkers)
{
	return sizeof(struct arena) + (size_t)nworkers * sizeof(struct arena_worker);
}

struct arena *arena_create(unsigned nworkers)
{
	size_t size = arena_size(nworkers);
	struct arena *a = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return NULL;
	/* the mapping comes zeroed: every counter starts at 0 */
	a->nworkers = nworkers;
	pthread_mutexattr_t attr;
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
	int r = pthread_mutex_init(&a->obj_mutex, &attr);
	pthread_mutexattr_destroy(&attr);
	if (r != 0) {
		munmap(a, size);
		errno = r;
		return NULL;
	}
	seq_arena = a;
	if (journal_next_seq != journal_seq_from_counter)
		seq_before = journal_next_seq;
	/* journal_log adds to the shared counter in line */
	journal_seq_counter = &a->seq;
	journal_next_seq = journal_seq_from_counter;
	return a;
}

void arena_destroy(struct arena *a)
{
	if (!a)
		return;
	if (seq_arena == a) {
		seq_arena = NULL;
		journal_next_seq = seq_before;
		journal_seq_counter = NULL;
	}
	pthread_mutex_destroy(&a->obj_mutex);
	munmap(a, arena_size(a->nworkers));
}

void arena_reset(struct arena *a)
{
	atomic_store(&a->seq, 0);
	atomic_store(&a->ready, 0);
	atomic_store(&a->go, 0);
	atomic_store(&a->stop, 0);
	atomic_store(&a->ops_claimed, 0);
	atomic_store(&a->holders, 0);
	atomic_store(&a->breaches, 0);
	atomic_store(&a->stall_until_ns, 0);
	if (a->obj_dirty_n > ARENA_OBJ_DIRTY) /* explore's executions write a few slots, not 256 KiB */
		memset(a->obj, 0, sizeof a->obj);
	else
		for (uint32_t k = 0; k < a->obj_dirty_n; k++)
			memset(&a->obj[a->obj_dirty[k]], 0, sizeof a->obj[0]);
	a->obj_dirty_n = 0;
	memset(a->w, 0, (size_t)a->nworkers * sizeof *a->w);
}

uint64_t arena_next_seq(struct arena *a)
{
	return atomic_fetch_add(&a->seq, 1) + 1;
}

static long futex(_Atomic uint32_t *addr, int op, uint32_t val)
{
	return syscall(SYS_futex, (uint32_t *)addr, op, val, NULL, NULL, 0);
}

void arena_wait_go(struct arena *a)
{
	atomic_fetch_add(&a->ready, 1);
	futex(&a->ready, FUTEX_WAKE, 1);
	while (atomic_load(&a->go) == 0)
		futex(&a->go, FUTEX_WAIT, 0);
}

void arena_go(struct arena *a)
{
	atomic_store(&a->go, 1);
	futex(&a->go, FUTEX_WAKE, INT32_MAX);
}

LS_HOT int arena_claim_op(struct arena *a)
{
	if (atomic_load_explicit(&a->stop, memory_order_relaxed))
		return 0;
	if (!a->ops_limit)
		return 1;
	uint64_t n = atomic_fetch_add(&a->ops_claimed, 1);
	if (n >= a->ops_limit) {
		atomic_store(&a->stop, 1);
		return 0;
	}
	return 1;
}

LS_HOT void arena_hold_enter(struct arena *a, unsigned worker, uint64_t seq)
{
	/* relaxed: the add below is a full barrier, so a worker whose own add
	 * sees this one's also sees holding set */
	atomic_store_explicit(&a->w[worker].holding, 1, memory_order_relaxed);
	int before = atomic_fetch_add(&a->holders, 1);
	if (before == 0)
		return;
	/* A second holder, the instant it happens: find one of the others. */
	uint32_t other = worker;
	for (unsigned i = 0; i < a->nworkers; i++) {
		if (i != worker && atomic_load(&a->w[i].holding)) {
			other = i;
			break;
		}
	}
	uint64_t k = atomic_fetch_add(&a->breaches, 1);
	if (k < ARENA_MAX_BREACH) {
		a->breach[k].first = other;
		a->breach[k].second = worker;
		a->breach[k].seq = seq;
	}
}

LS_HOT void arena_hold_leave(struct arena *a, unsigned worker)
{
	/* one writer: the worker, or the driver once it is reaped (no exchange needed) */
	if (atomic_load_explicit(&a->w[worker].holding, memory_order_relaxed)) {
		atomic_store_explicit(&a->w[worker].holding, 0, memory_order_relaxed);
		atomic_fetch_sub(&a->holders, 1);
	}
}

void arena_obj_lock(struct arena *a)
{
	int r = pthread_mutex_lock(&a->obj_mutex);
	if (r == EOWNERDEAD) /* a worker died inside: the table is still consistent enough */
		pthread_mutex_consistent(&a->obj_mutex);
}

void arena_obj_unlock(struct arena *a)
{
	pthread_mutex_unlock(&a->obj_mutex);
}

static size_t obj_hash(uint64_t dev, uint64_t ino)
{
	uint64_t h = (ino * 0x9e3779b97f4a7c15ULL) ^ (dev * 0xc2b2ae3d27d4eb4fULL);
	return (size_t)(h >> 17) % ARENA_OBJ_SLOTS;
}

void arena_obj_add(struct arena *a, uint64_t dev, uint64_t ino, unsigned creator, uint64_t seq)
{
	size_t i = obj_hash(dev, ino);
	for (size_t k = 0; k < ARENA_OBJ_SLOTS; k++, i = (i + 1) % ARENA_OBJ_SLOTS) {
		struct arena_obj *o = &a->obj[i];
		if ((o->dev == 0 && o->ino == 0) || (o->dev == dev && o->ino == ino)) {
			if (a->obj_dirty_n < ARENA_OBJ_DIRTY) /* (arena_obj_take only moves entries */
				a->obj_dirty[a->obj_dirty_n] = (uint16_t)i; /* into slots written before) */
			if (a->obj_dirty_n <= ARENA_OBJ_DIRTY)
				a->obj_dirty_n++;
			o->dev = dev;
			o->ino = ino;
			o->creator = (int32_t)creator;
			o->seq = seq;
			return;
		}
	}
	/* table full: the object simply goes untracked (its removal reports creator -1) */
}

int arena_obj_take(struct arena *a, uint64_t dev, uint64_t ino, uint64_t *seq)
{
	size_t i = obj_hash(dev, ino);
	for (size_t k = 0; k < ARENA_OBJ_SLOTS; k++, i = (i + 1) % ARENA_OBJ_SLOTS) {
		struct arena_obj *o = &a->obj[i];
		if (o->dev == 0 && o->ino == 0)
			return -1;
		if (o->dev == dev && o->ino == ino) {
			int creator = o->creator;
			*seq = o->seq;
			/* backward-shift deletion keeps linear probing correct */
			size_t hole = i;
			for (size_t j = (i + 1) % ARENA_OBJ_SLOTS;; j = (j + 1) % ARENA_OBJ_SLOTS) {
				struct arena_obj *n = &a->obj[j];
				if (n->dev == 0 && n->ino == 0)
					break;
				size_t home = obj_hash(n->dev, n->ino);
				int movable = (hole <= j) ? (home <= hole || home > j) : (home <= hole && home > j);
				if (movable) {
					a->obj[hole] = *n;
					hole = j;
				}
			}
			memset(&a->obj[hole], 0, sizeof a->obj[hole]);
			return creator;
		}
	}
	return -1;
}
