/*
 * xfaults.c - the fault engine's kinds as the explorer's choices (see xint.h,
 * docs/explore.md "Faults").
 *
 * The controller offers them at a decision point, within their budgets
 * (--max-faults); the worker applies the chosen one through the seam's own
 * code (faults/fsx_fault.c): a fault at a step travels with its grant
 * (struct sched_xf), a fault from then on sits in the worker's slot (its
 * clock skew, coarse file times, other host), and a sweep is the
 * controller's own rmdir of the empty folders beside the lock, as run's
 * sweeper does.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/point.h"
#include "../core/prng.h"
#include "../core/sched.h"
#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../check/livelock.h"
#include "xint.h"
#define FSX_BACKEND_REDIRECT /* the sweep goes to the modelled file system when it is on */
#include "../faults/fsx_backend.h"

/* A record on a worker's behalf, or the driver's (w = JOURNAL_DRIVER). */
void x_log(struct explorer *ex, unsigned w, uint32_t op, int type, int64_t a, int64_t b, int64_t c)
{
	ex->ctl_j.worker = (uint16_t)w;
	ex->ctl_j.pid = w == JOURNAL_DRIVER ? (int32_t)getpid() : x_vpid(ex, w);
	journal_log(&ex->ctl_j, type, op, 0, a, b, c);
}

void x_log_fault(struct explorer *ex, unsigned w, uint32_t op, int kind, const char *point, int64_t c)
{
	x_log(ex, w, op, EV_FAULT, kind, (int64_t)point_hash(point), c);
}

const int x_errs[X_NERRS] = { EPERM, EACCES, ENOSPC, ENOENT, EBUSY, EXDEV, EIO };
const char *const x_err_names[X_NERRS] = { "EPERM", "EACCES", "ENOSPC", "ENOENT", "EBUSY", "EXDEV", "EIO" };

/* Per call: the built-in profiles' errnos (fault.c: ENOSPC at mkdir, EACCES
 * at open, EXDEV at rename, EBUSY at rmdir, EPERM at link, ENOSPC at a
 * write; windows: EBUSY/EACCES) and those PROTOCOLS.md documents (EPERM and
 * EACCES at mkdir: K-ML-4; ENOENT at mkdir: a swept folder, K-ML-3; ENOSPC
 * at a record write: K-VL-6). */
static const signed char errs_mkdir[] = { 0, 1, 2, 3, -1 }, errs_rmdir[] = { 4, 1, -1 },
			 errs_open[] = { 1, 2, -1 }, errs_rename[] = { 5, 1, -1 }, errs_link[] = { 0, -1 },
			 errs_unlink[] = { 1, 4, -1 }, errs_write[] = { 2, -1 }, errs_io[] = { 6, -1 },
			 errs_list[] = { 1, -1 }, errs_none[] = { -1 };

const signed char *x_op_errs(unsigned fsop)
{
	switch (fsop) {
	case FSX_MKDIR: return errs_mkdir;
	case FSX_RMDIR: return errs_rmdir;
	case FSX_OPEN: return errs_open;
	case FSX_RENAME: return errs_rename;
	case FSX_LINK: return errs_link;
	case FSX_UNLINK: return errs_unlink;
	case FSX_WRITE: return errs_write;
	case FSX_STAT: case FSX_READ: case FSX_FSYNC: return errs_io;
	case FSX_LIST: return errs_list;
	default: return errs_none;
	}
}

int64_t x_skew_ms(const struct explorer *ex, unsigned w, unsigned m)
{
	double k = ex->cfg->stallv[(m / 2) % ex->cfg->nstallv];
	int64_t ms = (int64_t)llround(k * (double)ex->stall_base[w]);
	return m & 1 ? -ms : ms;
}

#define X_WRITE_BYTES 10 /* short and split writes: the bytes that land first */

/* The fault kinds' options at a decision, appended after run/stall/crash. */
unsigned x_fault_opts(const struct explorer *ex, struct xopt *opt, unsigned nopt, const int *enabled,
		      const int *live, const unsigned *used)
{
	const struct sched *s = ex->s;
	const unsigned *maxf = ex->cfg->maxf;
	const unsigned n = s->n;
#define ADD(k, i, m) (nopt < X_MAX_OPTS ? (void)(opt[nopt++] = (struct xopt){ (uint8_t)(k), (uint8_t)(i), (uint8_t)(m) }) : (void)0)
	for (unsigned i = 0; i < n; i++) {
		const struct sched_slot *sl = &s->w[i];
		if (!enabled[i] || atomic_load(&((struct sched_slot *)sl)->state) != SS_STEP)
			continue;
		if (used[XK_ERRNO] < maxf[XK_ERRNO])
			for (const signed char *e = x_op_errs(sl->fsop); *e >= 0; e++)
				ADD(XK_ERRNO, i, *e);
		if (sl->fsop == FSX_WRITE && used[XK_SHORT] < maxf[XK_SHORT])
			ADD(XK_SHORT, i, 0);
		if (sl->fsop == FSX_WRITE && used[XK_SPLIT] < maxf[XK_SPLIT] && strcmp(sl->path2, "the rest"))
			ADD(XK_SPLIT, i, 0);
		if (sl->fsop == FSX_KILL) {
			long pid = strtol(sl->path, NULL, 10);
			int alive = pid <= INT32_MAX && sched_vpid_alive(s, (pid_t)pid) == 1;
			if (alive && used[XK_PIDDEAD] < maxf[XK_PIDDEAD])
				ADD(XK_PIDDEAD, i, 0);
			if (!alive && used[XK_PIDREUSE] < maxf[XK_PIDREUSE])
				ADD(XK_PIDREUSE, i, 0);
		}
	}
	if (used[XK_SWEEP] < maxf[XK_SWEEP])
		ADD(XK_SWEEP, 0, 0);
	if (used[XK_POWER] < maxf[XK_POWER] && mfs_on())
		ADD(XK_POWER, 0, 0);
	for (unsigned i = 0; i < n; i++) {
		const struct sched_slot *sl = &s->w[i];
		if (!live[i])
			continue;
		if (used[XK_RESTART] < maxf[XK_RESTART] && sl->restarts + 1u < 256u)
			ADD(XK_RESTART, i, 0);
		if (used[XK_SKEW] < maxf[XK_SKEW] && !sl->skew_ms)
			for (unsigned m = 0; m < 2 * ex->cfg->nstallv; m++)
				ADD(XK_SKEW, i, m);
		if (used[XK_COARSE] < maxf[XK_COARSE] && !sl->coarse_ms)
			ADD(XK_COARSE, i, 0);
		/* a process is on one machine all its life: before its first step only
		 * (a flip later made a worker's own record foreign to it, a false alarm) */
		if (used[XK_OTHERHOST] < maxf[XK_OTHERHOST] && !sl->other_host && !sl->started)
			ADD(XK_OTHERHOST, i, 0);
	}
#undef ADD
	return nopt;
}

/* What the worker applies at its granted step. */
struct sched_xf x_step_fault(const struct explorer *ex, struct xstep *st, unsigned w)
{
	struct sched_xf f = { SXF_NONE, 0, 0 };
	switch (st->kind) {
	case XK_ERRNO:
		f.kind = SXF_ERRNO;
		f.err = x_errs[st->m % X_NERRS];
		break;
	case XK_SHORT:
		f.kind = SXF_SHORT;
		f.err = ENOSPC;
		f.bytes = X_WRITE_BYTES;
		break;
	case XK_SPLIT:
		f.kind = SXF_SPLIT;
		f.bytes = X_WRITE_BYTES;
		{
			double k = ex->cfg->stallv[0]; /* the shortest of the --stall multiples */
			for (unsigned i = 1; i < ex->cfg->nstallv; i++)
				k = ex->cfg->stallv[i] < k ? ex->cfg->stallv[i] : k;
			st->ms = (int64_t)llround(k * (double)ex->stall_base[w]);
		}
		break;
	case XK_PIDREUSE:
		f.kind = SXF_PID_ALIVE;
		break;
	case XK_PIDDEAD:
		f.kind = SXF_PID_DEAD;
		break;
	default:
		break;
	}
	return f;
}

/* ---- sweep: as run's sweeper (run/driver.c), once ---- */
/* Post-order under DIR (the store, itself included, as run's sweeper removes
 * its store/): rmdir every empty folder that is no lock object nor inside
 * one.  The calls go to fsx_backend: the modelled file system when it is on
 * (explorer_open set it in this process too), else the real one. */
static unsigned sweep_dir(const char *dir, char *first, size_t flen)
{
	size_t l = strlen(dir);
	if (strstr(dir, ".lock/") || (l >= 5 && !strcmp(dir + l - 5, ".lock")))
		return 0; /* never a lock object or anything inside one */
	unsigned n = 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	char (*sub)[SCHED_PATH] = NULL;
	size_t nsub = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		char p[SCHED_PATH];
		struct stat st;
		if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p ||
		    lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
			continue;
		char(*grown)[SCHED_PATH] = realloc(sub, (nsub + 1) * sizeof *sub);
		if (!grown)
			break;
		sub = grown;
		memcpy(sub[nsub++], p, sizeof p);
	}
	closedir(d);
	for (size_t i = 0; i < nsub; i++)
		n += sweep_dir(sub[i], first, flen);
	free(sub);
	if (rmdir(dir) == 0 && n++ == 0)
		snprintf(first, flen, "%s", dir);
	return n;
}

/* A choice from then on (skew, coarse-mtime, other-host) or a sweep: no
 * step is granted; journaled as the fault engine's record of the kind. */
void x_sticky(struct explorer *ex, struct xstep *st, unsigned w)
{
	struct sched_slot *sl = &ex->s->w[w];
	uint32_t op = sl->op_no;
	switch (st->kind) {
	case XK_SKEW:
		st->ms = x_skew_ms(ex, w, st->m);
		sl->skew_ms = st->ms;
		x_log_fault(ex, w, op, FK_SKEW, "explore/skew", st->ms);
		break;
	case XK_COARSE:
		sl->coarse_ms = 2000;
		st->ms = 2000;
		x_log_fault(ex, w, op, FK_COARSE_MTIME, "explore/coarse-mtime", 2000);
		break;
	case XK_OTHERHOST:
		sl->other_host = 1;
		x_log_fault(ex, w, op, FK_OTHER_HOST, "explore/other-host", 0);
		break;
	case XK_SWEEP:
		fsx_vt_flush_shared(ex->s); /* its rmdirs move their folders' times: after the stamps, as they were */
		ex->s->ids.n = 0;           /* and may remove what the identity table knows */
		st->path[0] = '\0';
		st->ms = sweep_dir(ex->store, st->path, sizeof st->path);
		x_log_fault(ex, JOURNAL_DRIVER, 0, FK_SWEEP, "explore/sweep", st->ms);
		break;
	default:
		break;
	}
	st->state = SS_STEP;
	st->fsop = FSX_OP_COUNT;
}

/* ---- cut schedules ---- */

/* The invariants a prefix of an execution can break (a cut schedule is
 * judged by these): what has happened cannot unhappen. */
int x_prefix_inv(int inv)
{
	return inv == INV_EXCLUSION || inv == INV_OWN_RELEASE || inv == INV_ZOMBIE_WRITE || inv == INV_NO_LIVELOCK;
}

static int changes(const struct xstep *st)
{
	if (!x_ran(st->kind) || st->result < 0)
		return 0;
	switch (st->fsop) {
	case FSX_MKDIR: case FSX_RMDIR: case FSX_UNLINK: case FSX_RENAME: case FSX_LINK: case FSX_WRITE:
		return 1;
	default:
		return 0;
	}
}

/* The execution's steps as no-livelock reads them (malloc'd, *n of them). */
struct ck_step *x_livelock_steps(const struct explorer *ex, const struct xexec *x, size_t *n)
{
	(void)ex;
	*n = 0;
	struct ck_step *v = malloc((x->nstep + 1) * sizeof *v);
	if (!v)
		return NULL;
	for (size_t k = 0; k < x->nstep; k++) { /* one per step, so its indices are the steps' */
		const struct xstep *st = &x->step[k];
		if (!x_ran(st->kind))
			v[k] = (struct ck_step){ UINT16_MAX, 0, 0, 0 }; /* no worker's step: skipped */
		else
			/* a wait is progress: a sleep, and a blocking call that found the
			 * lock taken (a flock(LOCK_EX) waits in the kernel; here it tries
			 * again whenever it is granted, and is no spinning loop) */
			v[k] = (struct ck_step){ st->w, st->op_no,
						 (uint8_t)(st->then_sleeps || st->state == SS_SLEEP ||
							   st->state == SS_BLOCKED),
						 (uint8_t)changes(st) };
	}
	*n = x->nstep;
	return v;
}

/* ---- random and PCT's faults (guided's fresh schedules draw them too) ---- */

/* The class of a call whose errnos are choices (x_op_errs), 0..8; 9 none. */
unsigned x_errno_class(unsigned fsop)
{
	switch (fsop) {
	case FSX_MKDIR: return 0;
	case FSX_RMDIR: return 1;
	case FSX_OPEN: return 2;
	case FSX_RENAME: return 3;
	case FSX_LINK: return 4;
	case FSX_UNLINK: return 5;
	case FSX_WRITE: return 6;
	case FSX_STAT: case FSX_READ: case FSX_FSYNC: return 7;
	case FSX_LIST: return 8;
	default: return 9;
	}
}

int x_step_acted(const struct xstep *st)
{
	return x_ran(st->kind) && st->result >= 0 && st->fsop < 32 && (X_ACT_FSOPS >> st->fsop & 1u);
}

static unsigned atom_of(const struct xdec *d, const struct xopt *o)
{
	switch (o->kind) {
	case XK_STALL: case XK_PAUSE: return X_ATOM_STALL;
	case XK_CRASH: return X_ATOM_CRASH;
	case XK_ERRNO: {
		unsigned c = x_errno_class(d->fsop[o->w]);
		return c < 9 ? X_ATOM_ERRNO + c : X_ATOM__COUNT;
	}
	default: return o->kind >= XK_SHORT && o->kind < XK__COUNT ? X_ATOM_KIND + o->kind - XK_SHORT : X_ATOM__COUNT;
	}
}

uint64_t x_atoms_offered(const struct xdec *d)
{
	uint64_t m = 0;
	for (unsigned i = d->nrun; i < d->nopt; i++) {
		unsigned a = atom_of(d, &d->opt[i]);
		if (a < X_ATOM__COUNT)
			m |= 1ull << a;
	}
	return m;
}

/* A position in [0, k): uniform, or in one draw of two log-uniform (early
 * decisions weigh more: an execution's length is skewed by waiters' long
 * polls, and most of what a plan aims at happens near its start). */
static uint32_t draw_at(struct prng *r, uint32_t k)
{
	if (prng_unit(r) < 0.5)
		return (uint32_t)prng_below(r, k);
	uint32_t at = (uint32_t)floor(exp(prng_unit(r) * log((double)k + 1.0))) - 1u;
	return at < k ? at : k - 1;
}

/* One atom into slot I of a focused plan; THEN: after slot I-1 fired. */
static void focus_slot(struct xfaults *f, struct prng *r, unsigned i, unsigned atom, uint32_t k, int then)
{
	f->f_aim[i] = 0;
	if (atom == X_ATOM_STALL) {
		f->f_kind[i] = XK_STALL;
	} else if (atom == X_ATOM_CRASH) {
		f->f_kind[i] = XK_CRASH;
		f->f_aim[i] = prng_unit(r) < 0.5; /* of a worker that just acted: it made, opened, wrote */
	} else if (atom < X_ATOM_KIND) {
		f->f_kind[i] = XK_ERRNO;
		f->f_aim[i] = (uint8_t)(1 + atom - X_ATOM_ERRNO);
	} else {
		f->f_kind[i] = (uint8_t)(XK_SHORT + atom - X_ATOM_KIND);
	}
	f->f_then[i] = (uint8_t)then;
	f->f_same[i] = then && prng_unit(r) < 0.75; /* the worker the first one hit, when it can be */
	/* the second soon after the first: in one draw of three at the next
	 * decision that offers it, in one within 8 decisions, in one anywhere */
	double u = prng_unit(r);
	f->f_at[i] = !then ? draw_at(r, k) : u < 1.0 / 3 ? 0 : u < 2.0 / 3 ? (uint32_t)prng_below(r, 8) : draw_at(r, k);
}

/* A focused plan, or none (a mix), for schedule SCHED.  From X_CALIBRATE
 * on, three schedules of four are focused, and of every six of those: a
 * single atom; a pair of timing atoms (a stall then a crash, two crashes,
 * ...); four times an atom of another kind, then a stall or a crash (an
 * errno, a torn write, a pid answer ... is a needle that wants a stall of
 * the same worker soon after).  Each list is walked in turn, so every single
 * atom and every pair has its turn within a few hundred schedules. */
static void focus_draw(struct xfaults *f, const struct xcfg *cfg, uint32_t k, uint64_t sched, uint64_t atoms)
{
	if (sched < X_CALIBRATE || (sched - X_CALIBRATE) % 4 == 0)
		return;
	unsigned a[X_ATOM__COUNT], na = 0, t[2], nt = 0, o[X_ATOM__COUNT], no = 0;
	for (unsigned i = 0; i < X_ATOM__COUNT; i++)
		if (atoms >> i & 1) {
			a[na++] = i;
			if (i == X_ATOM_STALL || i == X_ATOM_CRASH)
				t[nt++] = i;
			else
				o[no++] = i;
		}
	if (!na)
		return;
	const uint64_t q = (sched - X_CALIBRATE) / 4, i6 = 3 * q + (sched - X_CALIBRATE) % 4 - 1;
	unsigned form = (unsigned)(i6 % 6);
	uint64_t turn = form < 2 ? i6 / 6 : i6 / 6 * 4 + form - 2;
	form = form < 2 ? form : 2;
	if (form == 2 && (!no || !nt)) {
		form = 1;
		turn = i6;
	}
	if (form == 1 && !nt) {
		form = 0;
		turn = i6;
	}
	unsigned first, second = X_ATOM__COUNT;
	if (form == 0) {
		first = a[turn % na];
	} else if (form == 1) {
		first = t[turn % nt];
		second = t[turn / nt % nt];
	} else {
		first = o[turn % no];
		second = t[turn / no % nt];
	}
	struct prng r;
	prng_seed(&r, cfg->run.seed, 0xf0c5, sched);
	for (unsigned i = 0; i < 4; i++) {
		f->stall_at[i] = f->crash_at[i] = f->f_at[i] = UINT32_MAX;
		f->f_mult[i] = 0;
	}
	focus_slot(f, &r, 0, first, k, 0);
	f->focus = 1 + (int)first;
	if (second < X_ATOM__COUNT) {
		focus_slot(f, &r, 1, second, k, 1);
		f->focus += 64 * (1 + (int)second);
		/* an errno at a write, then a stall: in three draws of four the
		 * shortest multiple below the stale age.  The write that failed is
		 * most often a record (K-VL-6: a take whose record is not written
		 * holds an empty lock), and what a stall then shows is a protocol's
		 * shorter grace crossed while the stalled writer lives; a stall past
		 * the stale age makes any reclaim legal. */
		int below = -1;
		for (unsigned m = 0; m < cfg->nstallv; m++)
			if (cfg->stallv[m] < 1.0 && (below < 0 || cfg->stallv[m] < cfg->stallv[below]))
				below = (int)m;
		if (first == X_ATOM_ERRNO + 6 && second == X_ATOM_STALL && below >= 0 && prng_unit(&r) < 0.75)
			f->f_mult[1] = (uint8_t)(1 + below);
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The median decisions of the calibration schedules: a focused plan's
 * scale (the mean is skewed by the few that wait out a long budget, and
 * most draws over it would land past the end of a typical execution). */
static uint32_t cal_median(const struct explorer *ex)
{
	uint32_t v[X_CALIBRATE];
	size_t n = ex->cal_execs < X_CALIBRATE ? (size_t)ex->cal_execs : X_CALIBRATE;
	memcpy(v, ex->cal_dec, n * sizeof *v);
	qsort(v, n, sizeof *v, cmp_u32);
	return v[n / 2] ? v[n / 2] : 1;
}

/* The first stall and the crash are drawn first, so that a run with one
 * stall draws what it always drew; further stalls (--max-stalls 2..4)
 * after them, further crashes from a stream of their own. */
void x_faults_draw(struct xfaults *f, struct prng *r, uint32_t kest, const struct xcfg *cfg, uint64_t sched,
		   const struct explorer *ex)
{
	uint32_t k = kest ? kest : 32;
	unsigned max_stalls = cfg->max_stalls;
	f->stall_at[0] = prng_unit(r) < 0.75 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
	f->crash_at[0] = prng_unit(r) < 0.25 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
	for (unsigned i = 1; i < 4; i++)
		f->stall_at[i] = i < max_stalls && prng_unit(r) < 0.75 ? (uint32_t)prng_below(r, k) : UINT32_MAX;
	/* more crashes as the budget allows (K-VL-2 needs a holder and its
	 * reclaimer dead), from a stream of their own: the main one's draws
	 * (who runs) stay what a budget of one crash makes them */
	struct prng cr;
	prng_seed(&cr, cfg->run.seed, 0xc2a5, sched);
	for (unsigned i = 1; i < 4; i++)
		f->crash_at[i] = i < cfg->max_crashes && prng_unit(&cr) < 0.25 ? (uint32_t)prng_below(&cr, k) : UINT32_MAX;
	/* the other kinds, from a stream of their own: in one execution of two a
	 * kind drawn uniformly among those with a budget, at a decision drawn as
	 * a stall's; more draws as the budgets allow (at most 4) */
	prng_seed(&f->frng, cfg->run.seed, 0xfa17, sched);
	unsigned kinds[XK__COUNT], nk = 0, total = 0;
	for (int j = XK_ERRNO; j < XK__COUNT; j++)
		if (cfg->maxf[j]) {
			kinds[nk++] = (unsigned)j;
			total += cfg->maxf[j];
		}
	for (unsigned i = 0; i < 4; i++) {
		f->f_at[i] = UINT32_MAX;
		f->f_aim[i] = f->f_then[i] = f->f_same[i] = f->f_mult[i] = 0;
		if (i < total && nk && prng_unit(&f->frng) < 0.5) {
			f->f_kind[i] = (uint8_t)kinds[prng_below(&f->frng, nk)];
			f->f_at[i] = (uint32_t)prng_below(&f->frng, k);
		}
	}
	f->f_prev_w = -1;
	f->hold_w = -1;
	f->hold_until = 0;
	f->focus = 0;
	if (ex->cal_execs) /* the median and the atoms are known */
		focus_draw(f, cfg, cal_median(ex), sched, ex->cal_atoms);
}

/* Option O matches slot I of F (its kind, its aim). */
static int slot_match(const struct xfaults *f, unsigned i, const struct xdec *d, const struct xopt *o)
{
	unsigned k = f->f_kind[i];
	if (k == XK_STALL ? o->kind != XK_STALL && o->kind != XK_PAUSE : o->kind != k)
		return 0;
	if (k == XK_STALL && f->f_mult[i] && o->m != f->f_mult[i] - 1)
		return 0;
	if (!f->f_aim[i])
		return 1;
	if (k == XK_CRASH)
		return d->acted[o->w];
	if (k == XK_ERRNO)
		return x_errno_class(d->fsop[o->w]) + 1 == f->f_aim[i];
	return 1;
}

unsigned x_faults_run(const struct xfaults *f, struct prng *r, const struct xdec *d)
{
	if (f->hold_w >= 0 && d->at < f->hold_until) {
		unsigned idx[X_MAX_OPTS], n = 0;
		for (unsigned j = 0; j < d->nrun; j++)
			if ((int)d->opt[j].w != f->hold_w)
				idx[n++] = j;
		if (n)
			return idx[prng_below(r, n)];
	}
	return (unsigned)prng_below(r, d->nrun);
}

void x_faults_ahead(const struct xfaults *f, uint32_t at, struct sched_ahead *a)
{
	uint32_t lim = UINT32_MAX, watch = UINT32_MAX, mask = 0, acted_from = UINT32_MAX;
	int unstarted = 0;
	for (unsigned i = 0; i < 4; i++) {
		if (!(a->kinds_out >> XK_STALL & 1u) && f->stall_at[i] >= at && f->stall_at[i] < lim)
			lim = f->stall_at[i];
		if (!(a->kinds_out >> XK_CRASH & 1u) && f->crash_at[i] >= at && f->crash_at[i] < lim)
			lim = f->crash_at[i];
		if (f->f_at[i] == UINT32_MAX || f->f_then[i]) /* (the second of a pair: after the first fired) */
			continue;
		if (a->kinds_out >> f->f_kind[i] & 1u) /* never offered again: it cannot fire (x_faults_pick) */
			continue;
		/* pending: picked at the first decision from f_at that offers it
		 * (x_fault_opts); those offered at a call, or at a worker's start,
		 * are watched for, the others offered at any decision */
		uint32_t from = f->f_at[i] < at ? at : f->f_at[i], m = 0;
		switch (f->f_kind[i]) {
		case XK_ERRNO: /* (aimed: at a call of its class only, slot_match) */
			for (unsigned op = 0; op < FSX_OP_COUNT; op++)
				m |= (x_op_errs(op)[0] >= 0 && (!f->f_aim[i] || x_errno_class(op) + 1 == f->f_aim[i])) << op;
			break;
		case XK_CRASH:
			if (f->f_aim[i]) { /* at a worker whose last step acted (slot_match) */
				acted_from = from < acted_from ? from : acted_from;
				continue;
			}
			lim = from < lim ? from : lim;
			continue;
		case XK_SHORT: case XK_SPLIT: m = 1u << FSX_WRITE; break;
		case XK_PIDREUSE: case XK_PIDDEAD: m = 1u << FSX_KILL; break;
		case XK_OTHERHOST: unstarted = 1; break;
		default:
			lim = from < lim ? from : lim;
			continue;
		}
		mask |= m;
		watch = from < watch ? from : watch;
	}
	a->limit = lim;
	a->acted_watch_from = acted_from;
	a->watch_from = watch;
	a->fsop_watch = mask;
	a->watch_unstarted = (uint8_t)unstarted;
}

int x_faults_pick(struct xfaults *f, struct prng *r, const struct xdec *d, unsigned *pick)
{
	unsigned nst = 0, ncr = 0, st0 = 0, cr0 = 0;
	for (unsigned i = d->nrun; i < d->nopt; i++) {
		unsigned k = d->opt[i].kind;
		if ((k == XK_STALL || k == XK_PAUSE) && !nst++)
			st0 = i;
		if (k == XK_CRASH && !ncr++)
			cr0 = i;
	}
	for (unsigned i = 0; i < 4 && nst; i++)
		if (d->at == f->stall_at[i]) {
			*pick = st0 + (unsigned)prng_below(r, nst);
			return 1;
		}
	for (unsigned i = 0; i < 4 && ncr; i++)
		if (d->at == f->crash_at[i]) {
			*pick = cr0 + (unsigned)prng_below(r, ncr);
			return 1;
		}
	/* the other kinds (and a focused plan's every atom): at the first
	 * decision from f_at that offers one of the kind, among those of the
	 * worker the slot before hit when it asks for it and there are some */
	for (unsigned i = 0; i < 4; i++) {
		if (f->f_at[i] == UINT32_MAX || f->f_then[i] || d->at < f->f_at[i])
			continue;
		unsigned nk = 0, ns = 0, idx[X_MAX_OPTS], same[X_MAX_OPTS];
		for (unsigned j = d->nrun; j < d->nopt; j++)
			if (slot_match(f, i, d, &d->opt[j])) {
				idx[nk++] = j;
				if (f->f_same[i] && (int)d->opt[j].w == f->f_prev_w)
					same[ns++] = j;
			}
		if (!nk)
			continue;
		f->f_at[i] = UINT32_MAX;
		*pick = ns ? same[prng_below(&f->frng, ns)] : idx[prng_below(&f->frng, nk)];
		f->f_prev_w = d->opt[*pick].w;
		if (f->f_kind[i] == XK_STALL && f->f_mult[i]) { /* the others go on in its window */
			f->hold_w = d->opt[*pick].w;
			f->hold_until = d->at + 1 + X_HOLD_DECISIONS;
		}
		if (i + 1 < 4 && f->f_then[i + 1]) { /* the next counts from here */
			uint64_t at = (uint64_t)d->at + 1 + f->f_at[i + 1];
			f->f_at[i + 1] = at < UINT32_MAX ? (uint32_t)at : UINT32_MAX - 1;
			f->f_then[i + 1] = 0;
		}
		return 1;
	}
	return 0;
}

static const char *atom_name(unsigned a, char *buf, size_t len)
{
	static const char *const cls[] = { "mkdir", "rmdir", "open", "rename", "link", "unlink", "write", "stat/read",
					   "readdir" };
	if (a == X_ATOM_STALL)
		return "stall";
	if (a == X_ATOM_CRASH)
		return "crash";
	if (a < X_ATOM_KIND)
		snprintf(buf, len, "errno at %s", cls[a - X_ATOM_ERRNO]);
	else
		snprintf(buf, len, "%s", kind_names[XK_SHORT + a - X_ATOM_KIND]);
	return buf;
}

const char *x_plan_words(const struct xfaults *f, int strategy)
{
	static char out[128];
	char a[48], b[48];
	if ((strategy != XS_RANDOM && strategy != XS_PCT) || !f->focus)
		return "";
	unsigned first = (unsigned)(f->focus % 64) - 1, second = (unsigned)(f->focus / 64);
	if (second)
		snprintf(out, sizeof out, " (focused: %s, then %s)", atom_name(first, a, sizeof a),
			 atom_name(second - 1, b, sizeof b));
	else
		snprintf(out, sizeof out, " (focused: %s)", atom_name(first, a, sizeof a));
	return out;
}
