/*
 * sched.c - the explorer's step scheduler (see sched.h).
 *
 * Hand-off is two futex words: a worker bumps `ctl` and wakes the controller
 * when it yields, then waits on its own `grant`; the controller bumps that
 * worker's `grant` and wakes it.  A wake-up is a system call only when the
 * other side really sleeps.  The explorer pins itself and its workers to
 * one CPU (explore.c): one process runs at a time anyway, and a hand-off on
 * one CPU is a plain context switch, not a wake-up across CPUs (which on a
 * virtual machine costs an inter-processor interrupt).  So nobody spins.
 * Nobody sleeps on a timer either, except the controller's wait, which has a
 * real-time timeout only to notice a worker that died or hangs outside the
 * seam.
 */
#include "sched.h"

#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "point.h"

/* A waiter first gives its CPU away a few times before it sleeps: on one
 * CPU the one it handed to runs at once, and when that one hands back, the
 * waiter sees its word changed without a futex round trip (a wake-up and a
 * wait are two system calls, and this machine's are dear).  A waiter still
 * waiting after SPIN_YIELDS sleeps as before, so a long wait costs no CPU. */
#define SPIN_YIELDS 3

static long futex(_Atomic uint32_t *word, int op, uint32_t val, const struct timespec *ts)
{
	return syscall(SYS_futex, (uint32_t *)word, op, val, ts, NULL, 0);
}

/* Wait until *word != old, asleep with *asleep set so the other side knows
 * to wake us.  (asleep is set before the last look: either we see the change
 * or the changer sees asleep.) */
static void wait_change(_Atomic uint32_t *word, uint32_t old, _Atomic uint32_t *asleep)
{
	for (int k = 0; k < SPIN_YIELDS && atomic_load(word) == old; k++)
		sched_yield();
	while (atomic_load(word) == old) {
		atomic_store(asleep, 1);
		if (atomic_load(word) == old)
			futex(word, FUTEX_WAIT, old, NULL);
		atomic_store(asleep, 0);
	}
}

static void bump_and_wake(_Atomic uint32_t *word, _Atomic uint32_t *asleep)
{
	atomic_fetch_add(word, 1);
	if (atomic_load(asleep))
		futex(word, FUTEX_WAKE, INT_MAX, NULL);
}

/* ---- controller ---- */

static size_t sched_size(uint32_t rec_cap)
{
	return sizeof(struct sched) + (size_t)rec_cap * sizeof(struct jrec);
}

struct sched *sched_create(unsigned n, uint32_t rec_cap)
{
	if (n == 0 || n > SCHED_MAX_WORKERS) {
		errno = EINVAL;
		return NULL;
	}
	struct sched *s = mmap(NULL, sched_size(rec_cap), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			       -1, 0);
	if (s == MAP_FAILED)
		return NULL;
	s->jmem.cap = rec_cap;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		atomic_store(&s->w[i].state, SS_DONE);
	unsigned one[SCHED_MAX_WORKERS];
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		one[i] = 1;
	sched_reset(s, n, one);
	return s;
}

void sched_destroy(struct sched *s)
{
	if (s)
		munmap(s, sched_size(s->jmem.cap));
}

void sched_reset(struct sched *s, unsigned n, const unsigned *ops)
{
	s->n = n;
	for (unsigned i = 0; i < n && i < SCHED_MAX_WORKERS; i++)
		s->ops[i] = ops[i];
	atomic_store(&s->now_ns, 0);
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++) {
		struct sched_slot *w = &s->w[i];
		w->op_no = 0;
		w->fsop = 0;
		w->started = 0;
		w->result = 0;
		w->err = 0;
		w->wake_ns = 0;
		w->point = NULL;
		w->path[0] = w->path2[0] = '\0';
		memset(&w->xf, 0, sizeof w->xf);
		w->skew_ms = w->coarse_ms = 0;
		w->other_host = 0;
		w->boot = 0;
		w->restarts = 0;
		w->op_base = 0;
	}
	s->jmem.n = 0;
	s->jmem.dropped = 0;
	s->vt.n = 0; /* the last execution's store is gone */
	s->ids.n = 0;
	s->starting = -1;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS; i++)
		s->w[i].die = 0;
	sched_ahead_off(s);
	memset(s->ahead.pause_until, 0, sizeof s->ahead.pause_until);
	memset(s->ahead.blocked_at, 0, sizeof s->ahead.blocked_at);
	memset(s->ahead.acted, 0, sizeof s->ahead.acted);
	s->ahead.release_epoch = 0;
}

static int quiet(struct sched *s)
{
	if (atomic_load(&s->ahead.handed))
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		uint32_t st = atomic_load(&s->w[i].state);
		if (st == SS_RUNNING || (st == SS_IDLE && s->w[i].pid))
			return 0;
	}
	return 1;
}

/* Has PID died?  A child of ours is collected; a worker another process
 * forked for us (explore's zygote, which reaps its own) is gone once no
 * signal reaches it. */
static int pid_gone(pid_t pid)
{
	pid_t r = waitpid(pid, NULL, WNOHANG);
	if (r == pid)
		return 1;
	return r < 0 && errno == ECHILD && kill(pid, 0) != 0 && errno == ESRCH;
}

int sched_wait_quiet(struct sched *s, int timeout_ms, int *dead)
{
	*dead = -1;
	int waited = 0;
	for (;;) {
		uint32_t c = atomic_load(&s->ctl);
		if (quiet(s))
			return 0;
		atomic_store(&s->ctl_asleep, 1);
		if (quiet(s)) {
			atomic_store(&s->ctl_asleep, 0);
			return 0;
		}
		struct timespec ts = { 0, 100 * 1000000L };
		long fr = futex(&s->ctl, FUTEX_WAIT, c, &ts);
		int ferr = errno;
		atomic_store(&s->ctl_asleep, 0);
		if (fr == -1 && ferr == ETIMEDOUT) {
			waited += 100;
			/* a worker that died outside a yield never bumps ctl */
			for (unsigned i = 0; i < s->n; i++) {
				uint32_t st = atomic_load(&s->w[i].state);
				if ((st == SS_RUNNING || st == SS_IDLE) && s->w[i].pid && pid_gone(s->w[i].pid)) {
					s->w[i].pid = 0;
					atomic_store(&s->w[i].state, SS_DONE);
					*dead = (int)i;
					errno = ECHILD;
					return -1;
				}
			}
			if (waited >= timeout_ms) {
				errno = ETIMEDOUT;
				return -1;
			}
		}
	}
}

void sched_grant(struct sched *s, unsigned w)
{
	struct sched_slot *sl = &s->w[w];
	atomic_store(&sl->state, SS_RUNNING);
	bump_and_wake(&sl->grant, &sl->asleep);
}

void sched_kill(struct sched *s, unsigned w)
{
	s->w[w].die = 1;
	sched_grant(s, w);
}

void sched_start_all(struct sched *s)
{
	s->starting = 0;
	s->start_from[0] = s->jmem.n;
	atomic_store(&s->ahead.handed, 1); /* not quiet until the last one has started */
	sched_grant(s, 0);
}

void sched_ahead_grant(struct sched *s, unsigned w)
{
	s->ahead.n = 0;
	atomic_store(&s->ahead.handed, s->ahead.mode != SA_OFF);
	sched_grant(s, w);
}

void sched_ahead_off(struct sched *s)
{
	s->ahead.mode = SA_OFF;
	s->ahead.n = 0;
	atomic_store(&s->ahead.handed, 0);
}

unsigned sched_enabled(const struct sched *s, int *enabled, int *live, unsigned *nlive,
		       unsigned *nblocked, int64_t *next_wake)
{
	const int64_t now = atomic_load((_Atomic int64_t *)&s->now_ns);
	unsigned nen = 0;
	*nlive = *nblocked = 0;
	*next_wake = INT64_MAX;
	for (unsigned i = 0; i < s->n; i++) {
		uint32_t st = atomic_load((_Atomic uint32_t *)&s->w[i].state);
		enabled[i] = live[i] = 0;
		if (st == SS_DONE)
			continue;
		live[i] = 1;
		(*nlive)++;
		int64_t at = s->ahead.pause_until[i]; /* when it may go on */
		if (st == SS_SLEEP && s->w[i].wake_ns > at)
			at = s->w[i].wake_ns;
		if (at > now) {
			if (at < *next_wake)
				*next_wake = at;
		} else if (st == SS_STEP || st == SS_SLEEP) {
			enabled[i] = 1;
		} else if (st == SS_BLOCKED) {
			(*nblocked)++;
			enabled[i] = s->ahead.release_epoch > s->ahead.blocked_at[i];
		}
		nen += (unsigned)enabled[i];
	}
	return nen;
}

unsigned sched_run_order(const struct sched *s, const int *enabled, int current, uint8_t *order)
{
	int first = current >= 0 && enabled[current] ? current : -1;
	for (unsigned i = 0; first < 0 && i < s->n; i++)
		if (enabled[i])
			first = (int)i;
	unsigned k = 0;
	if (first < 0)
		return 0;
	order[k++] = (uint8_t)first;
	for (unsigned i = 0; i < s->n; i++)
		if (enabled[i] && (int)i != first)
			order[k++] = (uint8_t)i;
	return k;
}

/* ---- worker ---- */

static struct sched *me_s;
static struct sched_slot *me;
static uint32_t ran_fsop = FSX_OP_COUNT; /* the call of the step this worker was granted last */
static sigjmp_buf *die_to;                /* sched_kill's way out */

void sched_die_to(sigjmp_buf *b)
{
	die_to = b;
}

/* After a wait: a grant that is this worker's death (sched_kill) leaves
 * everything it was doing; what a new process would not have is reset. */
static void granted(void)
{
	if (__builtin_expect(!me->die, 1))
		return;
	me->die = 0;
	ran_fsop = FSX_OP_COUNT;
	memset(&sched_xf, 0, sizeof sched_xf);
	if (die_to)
		siglongjmp(*die_to, 1);
	_exit(0); /* (nobody to go back to: die for real) */
}

void sched_attach(struct sched *s, unsigned id)
{
	me_s = s;
	me = &s->w[id];
}

void sched_fd_untracked(void)
{
	if (me)
		me->fds_untracked = 1;
}

struct sched_vt *sched_vt_shared(void)
{
	return &me_s->vt;
}

static void copy_path(char *dst, const char *src)
{
	if (!src) {
		dst[0] = '\0';
		return;
	}
	size_t len = strlen(src);
	if (len >= SCHED_PATH) /* keep the tail: it names the object */
		src += len - (SCHED_PATH - 1);
	memcpy(dst, src, strlen(src) + 1);
}

unsigned sched_pct_pick(int32_t *prio, const uint32_t *change, unsigned d, uint32_t run_steps, const uint8_t *order,
			unsigned nrun)
{
	for (;;) {
		unsigned best = 0;
		for (unsigned i = 1; i < nrun; i++)
			if (prio[order[i]] > prio[order[best]])
				best = i;
		int changed = 0;
		for (unsigned i = 1; i < d && i < 16; i++)
			if (change[i] == run_steps && prio[order[best]] >= (int32_t)d) {
				prio[order[best]] = (int32_t)i;
				changed = 1;
				break;
			}
		if (!changed)
			return best;
	}
}

/* The hand-off (sched.h): this worker, at its yield in STATE, takes the next
 * decision itself when the controller said it may.  Returns the worker
 * granted (this one: go on), or -1: the controller's to take. */
static int ahead_decide(uint32_t state)
{
	struct sched_ahead *a = &me_s->ahead;
	if (a->mode == SA_OFF || a->decisions >= a->limit || a->n >= SCHED_AHEAD || a->nstep >= a->max_steps ||
	    me_s->jmem.dropped)
		return -1;
	const unsigned self = (unsigned)(me - me_s->w);
	const int64_t ended = atomic_load(&me_s->now_ns);
	int64_t now = ended;
	/* how the step that ends here ended: the controller's bookkeeping */
	if (state == SS_BLOCKED)
		a->blocked_at[self] = a->release_epoch;
	a->acted[self] = me->result >= 0 && ran_fsop < 32 && (a->act_fsops >> ran_fsop & 1u); /* as x_step_end */
	atomic_store(&me->state, state); /* (still ours: nobody else runs) */
	int enabled[SCHED_MAX_WORKERS], live[SCHED_MAX_WORKERS];
	unsigned nlive, nblocked;
	int64_t next_wake;
	uint8_t order[SCHED_MAX_WORKERS];
	unsigned nen = sched_enabled(me_s, enabled, live, &nlive, &nblocked, &next_wake);
	if (!nen && next_wake != INT64_MAX) { /* everyone waits for the clock: move it (as x_exec does) */
		now = next_wake;
		atomic_store(&me_s->now_ns, now);
		nen = sched_enabled(me_s, enabled, live, &nlive, &nblocked, &next_wake);
	}
	if (!nen) /* nobody ever runs again (a deadlock): the controller's */
		return -1;
	if (a->decisions >= a->watch_from) /* a fault drawn for a call, or a start, may be offered */
		for (unsigned i = 0; i < me_s->n; i++) {
			const struct sched_slot *o = &me_s->w[i];
			if (enabled[i] && atomic_load((_Atomic uint32_t *)&o->state) == SS_STEP &&
			    (a->fsop_watch >> o->fsop & 1u))
				return -1;
			if (a->watch_unstarted && live[i] && !o->started)
				return -1;
		}
	if (a->decisions >= a->acted_watch_from)
		for (unsigned i = 0; i < me_s->n; i++)
			if (live[i] && a->acted[i])
				return -1;
	unsigned nrun = sched_run_order(me_s, enabled, a->current, order);
	unsigned pick = 0;
	if (a->mode == SA_RANDOM)
		pick = (unsigned)prng_below(&a->rng, nrun);
	else if (a->mode == SA_TAIL && nrun > 1 && prng_below(&a->rng, 1000) < a->permille)
		pick = (unsigned)prng_below(&a->rng, nrun);
	else if (a->mode == SA_PCT)
		pick = sched_pct_pick(a->prio, a->change, a->pct_d, a->run_steps, order, nrun);
	const unsigned w = order[pick];
	struct sched_slot *sl = &me_s->w[w];
	struct sched_ahead_step *e = &a->step[a->n++];
	e->at = a->decisions++;
	e->w = (uint8_t)w;
	e->dev = pick != 0;
	e->state = (uint8_t)atomic_load(&sl->state);
	e->prev_state = (uint8_t)state;
	e->prev_result = me->result;
	e->prev_err = me->err;
	e->prev_rec_to = me_s->jmem.n;
	e->prev_wake_ns = me->wake_ns;
	e->prev_now_ns = ended;
	e->fsop = sl->fsop;
	e->op_no = sl->op_no;
	e->point = sl->point;
	e->now_ns = now;
	e->rec_from = me_s->jmem.n;
	memcpy(e->path, sl->path, strlen(sl->path) + 1);
	memcpy(e->path2, sl->path2, strlen(sl->path2) + 1);
	a->nstep++;
	a->run_steps++;
	a->current = (int32_t)w;
	atomic_store(&me_s->now_ns, now + a->step_ns);
	sl->started = 1;
	return (int)w;
}

/* Sleep until the grant counter moves past G; the step granted is the one
 * announced (or this worker's death). */
static void wait_for_grant(uint32_t g)
{
	wait_change(&me->grant, g, &me->asleep);
	granted();
	ran_fsop = me->fsop;
}

void (*sched_leaving)(void);

/* Grant TO (it runs at once: nobody else does) and wait for our own grant. */
static void hand_to(struct sched_slot *to, uint32_t g)
{
	if (sched_leaving)
		sched_leaving();
	atomic_store(&to->state, SS_RUNNING);
	bump_and_wake(&to->grant, &to->asleep);
	wait_for_grant(g);
}

/* Announce STATE and sleep until granted (or, handed the decision, go on at
 * once or grant the one picked: sched.h's hand-off). */
static void yield(uint32_t state)
{
	uint32_t g = atomic_load(&me->grant);
	const int32_t self = (int32_t)(me - me_s->w);
	if (me_s->starting == self) { /* sched_start_all: started; the next one starts */
		ran_fsop = FSX_OP_COUNT; /* a start is no step: it acted in nothing */
		me_s->start_to[self] = me_s->jmem.n;
		if ((unsigned)self + 1 < me_s->n) {
			struct sched_slot *to = &me_s->w[self + 1];
			me_s->starting = self + 1;
			me_s->start_from[self + 1] = me_s->jmem.n;
			atomic_store(&me->state, state); /* (not quiet yet: sched_start_all's handed) */
			hand_to(to, g);
			return;
		}
		me_s->starting = -1;
		for (uint32_t r = me_s->start_from[0]; r < me_s->jmem.n; r++)
			if (me_s->jmem.rec[r].type >= 64 || !(me_s->start_silent >> me_s->jmem.rec[r].type & 1u))
				me_s->ahead.mode = SA_OFF; /* a start that is a line of the story: that first */
	}
	int next = ahead_decide(state);
	if (next >= 0) {
		struct sched_slot *to = &me_s->w[next];
		if (to == me) {
			atomic_store(&me->state, SS_RUNNING);
			ran_fsop = me->fsop;
			return;
		}
		hand_to(to, g);
		return;
	}
	if (sched_leaving)
		sched_leaving();
	atomic_store(&me->state, state);
	atomic_store(&me_s->ahead.handed, 0); /* the controller's turn (quiet() waits for it) */
	bump_and_wake(&me_s->ctl, &me_s->ctl_asleep);
	wait_for_grant(g);
}

void sched_step(int fsop, const char *path, const char *path2)
{
	me->fsop = (uint16_t)fsop;
	copy_path(me->path, path);
	copy_path(me->path2, path2);
	yield(SS_STEP);
	if (fsop == FSX_CLOSE || fsop == FSX_KILL) /* granted: it runs now (a flock: sched_may_release) */
		me_s->ahead.release_epoch++;
	sched_xf = me->xf;
	me->xf.kind = SXF_NONE;
}

struct sched_xf sched_xf;

int64_t sched_skew_ms(void)
{
	return me ? me->skew_ms : 0;
}

int64_t sched_coarse_ms(void)
{
	return me ? me->coarse_ms : 0;
}

int sched_other_host(void)
{
	return me && me->other_host;
}

void sched_result(int r, int err)
{
	me->result = r;
	me->err = r < 0 ? err : 0;
}

void sched_sleep(int64_t ms)
{
	int64_t now = atomic_load(&me_s->now_ns);
	me->fsop = FSX_SLEEP;
	me->path[0] = me->path2[0] = '\0';
	me->wake_ns = now + (ms > 0 ? ms : 0) * 1000000LL;
	yield(SS_SLEEP); /* the step before the sleep keeps its call's result */
	me->result = 0;
	me->err = 0;
}

void sched_may_release(void)
{
	me_s->ahead.release_epoch++;
}

void sched_block(void)
{
	yield(SS_BLOCKED);
}

void sched_point(const char *name)
{
	me->point = name;
	uint64_t h = point_hash(name);
	size_t i = h % SCHED_POINTS;
	for (size_t k = 0; k < SCHED_POINTS; k++, i = (i + 1) % SCHED_POINTS) {
		if (me_s->points[i] == h)
			return;
		if (!me_s->points[i]) {
			me_s->points[i] = h;
			atomic_fetch_add(&me_s->npoints, 1);
			return;
		}
	}
}

void sched_finish(void)
{
	me_s->ahead.release_epoch++; /* what it held goes with it */
	yield(SS_DONE);
}

int64_t sched_now_ns(void)
{
	return atomic_load(&me_s->now_ns);
}

int64_t sched_now_ms(void)
{
	return SCHED_EPOCH_MS + atomic_load(&me_s->now_ns) / 1000000;
}

int sched_vpid_alive(const struct sched *s, pid_t pid)
{
	if (pid < SCHED_VPID_BASE || pid >= sched_vpid(SCHED_BOOTS, 0))
		return -1;
	unsigned k = (unsigned)(pid - SCHED_VPID_BASE) % SCHED_MAX_WORKERS;
	unsigned boot = (unsigned)(pid - SCHED_VPID_BASE) / SCHED_MAX_WORKERS;
	if (k >= s->n)
		return -1;
	const struct sched_slot *w = &s->w[k];
	return w->boot == boot && atomic_load((_Atomic uint32_t *)&w->state) != SS_DONE;
}

int sched_pid_alive(pid_t pid)
{
	return sched_vpid_alive(me_s, pid);
}
