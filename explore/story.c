/*
 * story.c - the story: the steps the violation depends on, in words (see xint.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../faults/fsx.h"
#include "../workloads/workload.h"
#include "../core/arena.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/driver.h"
#include "../core/journal.h"
#include "../core/prng.h"
#include "../run/runcfg.h"
#include "../core/sched.h"
#include "xint.h"

static const char *errname(int err)
{
	const char *n = err ? strerrorname_np(err) : "ok";
	return n ? n : "error";
}

/* ---- the story ---- */

static const char *rel(const struct explorer *ex, const char *p)
{
	size_t l = strlen(ex->store);
	if (!strncmp(p, ex->store, l) && p[l] == '/')
		return p + l + 1;
	l = strlen(ex->xdir);
	if (!strncmp(p, ex->xdir, l) && p[l] == '/')
		return p + l + 1;
	return p;
}

static int same_path(const char *a, const char *b)
{
	return a[0] && b[0] && !strcmp(a, b);
}

static int in_dir(const char *dir, const char *p)
{
	size_t l = strlen(dir);
	return dir[0] && !strncmp(p, dir, l) && p[l] == '/' && !strchr(p + l + 1, '/');
}

/* Steps that only look: their order among themselves does not matter. */
static int looks_only(const struct xstep *a)
{
	return a->state == SS_SLEEP || a->fsop == FSX_STAT || a->fsop == FSX_LIST || a->fsop == FSX_READ ||
	       a->fsop == FSX_KILL || a->fsop == FSX_SLEEP || a->fsop == FSX_NOW || a->fsop == FSX_POINT;
}

/* Can the earlier step A (of another worker) have changed what the later
 * step B saw or did?  When A changes an object B touches (or a directory B
 * lists).  A read before a write is no such dependency. */
static int win_handles; /* windows=yes: a stat holds its directory open for a step */

static int affects(const struct xstep *a, const struct xstep *b)
{
	if (!x_ran(a->kind) || !x_ran(b->kind))
		return 0;
	/* windows: a stat keeps the folder open, so a removal of it is delete
	 * pending and a mkdir of its name meanwhile fails (K-ML-4) */
	if (win_handles && a->fsop == FSX_STAT && (b->fsop == FSX_MKDIR || b->fsop == FSX_RMDIR) &&
	    same_path(a->path, b->path))
		return 1;
	if (looks_only(a))
		return 0;
	if (same_path(a->path, b->path) || same_path(a->path, b->path2) || same_path(a->path2, b->path) ||
	    same_path(a->path2, b->path2))
		return 1;
	if (a->fsop == FSX_LIST && (in_dir(a->path, b->path) || in_dir(a->path, b->path2)))
		return 1;
	return b->fsop == FSX_LIST && (in_dir(b->path, a->path) || in_dir(b->path, a->path2));
}

static long step_of_seq(const struct explorer *ex, const struct xexec *x, uint64_t seq)
{
	const struct journal_mem *m = &ex->s->jmem;
	for (uint32_t r = 0; r < m->n; r++) {
		if (m->rec[r].seq != seq)
			continue;
		for (size_t k = 0; k < x->nstep; k++)
			if (x->step[k].rec_from <= r && r < x->step[k].rec_to)
				return (long)k;
		return -1;
	}
	return -1;
}

/* Mark the steps the violation depends on: the steps that wrote the records
 * its first example names, and everything before them in the same worker or
 * that changed what they touched (happens-before), and every stall and crash. */
size_t story_slice(const struct explorer *ex, const struct xexec *x, unsigned char *keep)
{
	memset(keep, 0, x->nstep);
	win_handles = ex->cfg->fs.model && ex->cfg->fs.windows;
	long cut = -1;
	if (x->outcome == XO_FAIL && x->inv >= 0 && x->res.inv[x->inv].nex) {
		const struct check_example *e = &x->res.inv[x->inv].ex[0];
		for (int i = 0; i < 2; i++) {
			long k = e->seq[i] ? step_of_seq(ex, x, e->seq[i]) : -1;
			if (k >= 0) {
				keep[k] = 1;
				if (k > cut)
					cut = k;
			}
		}
		/* judged on the final state: the last step that changed it is evidence too */
		if (x->inv == INV_NO_LOST_WRITES || x->inv == INV_STATE_INTACT || x->inv == INV_JOURNAL_SEQ)
			for (long k = (long)x->nstep - 1; k >= 0; k--) {
				const struct xstep *st = &x->step[k];
				if (x_ran(st->kind) && !looks_only(st) &&
				    (!strcmp(st->path, ex->state_file) || !strcmp(st->path2, ex->state_file))) {
					keep[k] = 1;
					if (k > cut)
						cut = k;
					break;
				}
			}
		/* a power loss is what the final state was judged after */
		if (cut >= 0 && x->nstep && x->step[x->nstep - 1].kind == XK_POWER) {
			cut = (long)x->nstep - 1;
			keep[cut] = 1;
		}
	}
	if (x->outcome == XO_FAIL && x->inv == INV_NO_LIVELOCK && x->res.inv[x->inv].nex) {
		/* the loop itself: the spinning worker's last period of steps */
		const struct check_example *e = &x->res.inv[x->inv].ex[0];
		size_t last = (size_t)e->seq[1] < x->nstep ? (size_t)e->seq[1] : x->nstep - 1;
		unsigned p = x_livelock_period(ex, x, (unsigned)e->worker[0], last);
		for (size_t k = last + 1, got = 0; k-- > 0 && got < p;)
			if (x->step[k].w == (unsigned)e->worker[0] && x_ran(x->step[k].kind)) {
				keep[k] = 1;
				got++;
			}
		return last + 1;
	}
	if (cut < 0) { /* nothing to anchor on: the whole execution */
		memset(keep, 1, x->nstep);
		return x->nstep;
	}
	for (long k = cut; k >= 0; k--) {
		if (x->step[k].kind != XK_RUN && !(x->step[k].kind == XK_SWEEP && !x->step[k].ms))
			keep[k] = 1; /* every fault, but a sweep that found nothing to remove */
		if (!keep[k])
			continue;
		for (long j = k - 1; j >= 0; j--)
			if (x->step[j].w == x->step[k].w || affects(&x->step[j], &x->step[k]))
				keep[j] = 1;
	}
	/* a decision that is no call (the moment after acquiring) says nothing by itself */
	for (long k = 0; k <= cut; k++)
		if (x->step[k].kind == XK_RUN && x->step[k].fsop == FSX_POINT && x->step[k].rec_from == x->step[k].rec_to)
			keep[k] = 0;
	return (size_t)cut + 1;
}

size_t story_len(const struct explorer *ex, const struct xexec *x)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	if (!keep)
		return x->nstep;
	size_t upto = story_slice(ex, x, keep), n = 0;
	for (size_t k = 0; k < upto; k++)
		n += keep[k];
	free(keep);
	return n;
}

static const char *op_verb(unsigned fsop)
{
	return fsop == FSX_LIST ? "readdir" : fsop == FSX_KILL ? "kill -0" : fsop == FSX_UTIMENS ? "touch"
		: fsx_op_name((enum fsx_op)fsop);
}

/* What a killed worker was about to do: "before its write P", "before its
 * fstat" (a call on a descriptor names no path), "at its next protocol point". */
static void kill_when(const struct explorer *ex, const struct xstep *st, char *buf, size_t len)
{
	if (st->state != SS_STEP || st->fsop >= FSX_OP_COUNT)
		snprintf(buf, len, "while it waits");
	else if (st->fsop == FSX_POINT)
		snprintf(buf, len, "at its next protocol point%s%s", st->point ? ", past " : "", st->point ? st->point : "");
	else if (!st->path[0])
		snprintf(buf, len, "before its %s%s", st->fsop == FSX_STAT ? "f" : "", op_verb(st->fsop));
	else
		snprintf(buf, len, "before its %s %s", op_verb(st->fsop), rel(ex, st->path));
}

/* The fault kinds' steps in plain words; 0: an ordinary step's words. */
static int fault_words(const struct explorer *ex, const struct xstep *st, char *buf, size_t len)
{
	const char *p = rel(ex, st->path);
	const char *res = st->result < 0 ? errname(st->err) : "ok";
	switch (st->kind) {
	case XK_ERRNO:
		snprintf(buf, len, "w%u %s %s -> %s (injected: the call fails without acting)", st->w, op_verb(st->fsop),
			 p, res);
		return 1;
	case XK_SHORT:
		snprintf(buf, len, "w%u write %s -> %s: the disk fills mid-write, only its first 10 bytes land", st->w,
			 p, res);
		return 1;
	case XK_SPLIT:
		snprintf(buf, len, "w%u write %s: its first 10 bytes land, then w%u pauses %.3g s before the rest "
			 "(the others go on)", st->w, p, st->w, (double)st->ms / 1000.0);
		return 1;
	case XK_PIDREUSE:
		snprintf(buf, len, "w%u kill -0 %s -> ok: that pid's holder is dead, but another process has its pid "
			 "(pid reuse)", st->w, st->path);
		return 1;
	case XK_PIDDEAD:
		snprintf(buf, len, "w%u kill -0 %s -> ESRCH: that pid's holder is alive, but not in w%u's pid "
			 "namespace", st->w, st->path, st->w);
		return 1;
	case XK_SWEEP:
		if (st->ms)
			snprintf(buf, len, "a sweeper removes the empty folder %s%s", p,
				 st->ms > 1 ? " and others beside the lock" : "");
		else
			snprintf(buf, len, "a sweeper looks for empty folders beside the lock and finds none");
		return 1;
	case XK_SKEW:
		snprintf(buf, len, "w%u's clock runs %.3g s %s (%.3g x its stale age) from now on", st->w,
			 (double)(st->ms < 0 ? -st->ms : st->ms) / 1000.0, st->ms < 0 ? "behind" : "ahead",
			 ex->cfg->stallv[(st->m / 2) % ex->cfg->nstallv]);
		return 1;
	case XK_COARSE:
		snprintf(buf, len, "w%u's file system reports file times in whole 2 s steps from now on", st->w);
		return 1;
	case XK_OTHERHOST:
		snprintf(buf, len, "w%u plays a second machine from now on (its hostname reads \"<host>-other\")", st->w);
		return 1;
	case XK_RESTART: {
		char when[SCHED_PATH + 64];
		kill_when(ex, st, when, sizeof when);
		snprintf(buf, len, "w%u is killed (SIGKILL) %s, and starts again at once as a new process with the "
			 "same pid (a container or a tab numbers its processes alike at each start) for the rest "
			 "of its ops", st->w, when);
		return 1;
	}
	case XK_POWER: {
		char pers[160];
		mfs_pers_format(&ex->cfg->fs, pers, sizeof pers);
		snprintf(buf, len, "the power fails: every worker dies, and the disk keeps only what was fsync'd "
			 "(file data, and entries whose folder was fsync'd; %s); the machine comes back, and each "
			 "worker it killed starts again as a new process (a new pid) for the rest of its ops", pers);
		return 1;
	}
	default:
		return 0;
	}
}

/* "w1 rename state.json.2001.tmp -> state.json -> ok" */
void step_words(const struct explorer *ex, const struct xstep *st, char *buf, size_t len)
{
	if (st->kind >= XK_ERRNO && fault_words(ex, st, buf, len))
		return;
	if (st->kind == XK_STALL) {
		snprintf(buf, len, "w%u stalls %.3g s (%.3g x its stale age); the clock jumps to %.3f s", st->w,
			 (double)st->ms / 1000.0, ex->cfg->stallv[st->m], (double)(st->now_ns / 1000000 + st->ms) / 1000.0);
		return;
	}
	if (st->kind == XK_PAUSE) {
		snprintf(buf, len, "w%u pauses %.3g s (%.3g x its stale age) while the others go on, until %.3f s", st->w,
			 (double)st->ms / 1000.0, ex->cfg->stallv[st->m], (double)(st->now_ns / 1000000 + st->ms) / 1000.0);
		return;
	}
	if (st->kind == XK_CRASH) {
		char when[SCHED_PATH + 64];
		kill_when(ex, st, when, sizeof when);
		snprintf(buf, len, "w%u is killed (SIGKILL) %s", st->w, when);
		return;
	}
	if (st->state == SS_SLEEP) {
		snprintf(buf, len, "w%u wakes up at %.3f s", st->w, (double)st->now_ns / 1e9);
		return;
	}
	if (st->state == SS_BLOCKED) { /* fsx_flock: the grant out of the wait is the next try */
		snprintf(buf, len, "w%u tries its %s of %s again -> %s", st->w, op_verb(st->fsop), rel(ex, st->path),
			 st->result < 0 ? errname(st->err) : "ok");
		return;
	}
	if (st->fsop == FSX_POINT) {
		if (st->path[0])
			snprintf(buf, len, "w%u reaches %s", st->w, st->path);
		else
			snprintf(buf, len, "w%u goes on with the lock", st->w);
		return;
	}
	if (st->fsop == FSX_OP_COUNT) {
		snprintf(buf, len, "w%u starts", st->w);
		return;
	}
	const char *verb = op_verb(st->fsop);
	char res[48];
	snprintf(res, sizeof res, "%s", st->result < 0 ? errname(st->err) : "ok");
	if (st->fsop == FSX_WRITE && !strcmp(st->path2, "the rest"))
		snprintf(buf, len, "w%u writes the rest of %s -> %s", st->w, rel(ex, st->path), res);
	else if (st->fsop == FSX_RENAME)
		snprintf(buf, len, "w%u rename %s -> %s -> %s", st->w, rel(ex, st->path), rel(ex, st->path2), res);
	else if (st->fsop == FSX_LINK)
		snprintf(buf, len, "w%u link %s -> %s -> %s", st->w, rel(ex, st->path2), rel(ex, st->path), res);
	else if (st->path[0] && st->fsop != FSX_KILL) /* kill -0: the words of files made before it named its pid */
		snprintf(buf, len, "w%u %s %s -> %s", st->w, verb, rel(ex, st->path), res);
	else
		snprintf(buf, len, "w%u %s -> %s", st->w, verb, res);
}

/* What the step's journal records say, in words ("w1 holds the lock"). */
void step_events(const struct explorer *ex, const struct xstep *st, int *holding, char *buf, size_t len)
{
	const struct journal_mem *m = &ex->s->jmem;
	size_t n = 0;
	buf[0] = '\0';
#define SAY(...) (n += (size_t)snprintf(buf + n, n < len ? len - n : 0, __VA_ARGS__))
	for (uint32_t r = st->rec_from; r < st->rec_to && r < m->n; r++) {
		const struct jrec *j = &m->rec[r];
		const char *sep = n ? "; " : ": ";
		unsigned w = j->worker;
		switch (j->type) {
		case EV_ACQUIRED:
			if (w < SCHED_MAX_WORKERS)
				holding[w] = 1;
			SAY("%sw%u holds the lock", sep, w);
			break;
		case EV_BUSY:
			SAY("%sgives up (busy)", sep);
			break;
		case EV_ACQUIRE_ERROR:
			SAY("%sacquire fails (%s)", sep, errname(j->err));
			break;
		case EV_READ:
			if (j->err)
				SAY("%sthe read fails (%s)", sep, errname(j->err));
			else if (j->a < 0)
				SAY("%sfinds no state yet", sep);
			else
				SAY("%sreads revision %lld", sep, (long long)j->a);
			break;
		case EV_COMMIT:
			SAY("%scommits revision %lld", sep, (long long)j->a);
			break;
		case EV_LOST:
			SAY("%ssees the lock lost and writes nothing", sep);
			break;
		case EV_WRITE_ERROR:
			SAY("%sthe write fails (%s)", sep, errname(j->err));
			break;
		case EV_RELEASE_BEGIN:
			if (w < SCHED_MAX_WORKERS)
				holding[w] = 0;
			break;
		case EV_RELEASED:
			SAY("%sreleased", sep);
			break;
		case EV_RELEASE_ERROR:
			SAY("%sthe release fails (%s)", sep, errname(j->err));
			break;
		case EV_APPEND:
			SAY("%sappends seq %lld", sep, (long long)j->a);
			break;
		case EV_OBJ_CREATE: /* an inode number handed out again (the file system's reuse rule) */
			for (uint32_t q = r; q-- > 0;)
				if (m->rec[q].type == EV_OBJ_REMOVE && m->rec[q].a == j->a) {
					SAY("%sits inode %lld is the number of the lock object w%u removed, handed out again%s", sep,
					    (long long)j->a, (unsigned)m->rec[q].worker,
					    ex->cfg->fs.model ? " (reuse=immediate)" : "");
					break;
				}
			break;
		case EV_OBJ_REMOVE: {
			long c = (long)j->b;
			if (c >= 0 && c < SCHED_MAX_WORKERS && (unsigned)c != w) {
				if (holding[c])
					SAY("%sremoves the lock object w%ld made, which w%ld still holds", sep, c, c);
				else
					SAY("%sremoves the lock object w%ld made", sep, c);
			}
			break;
		}
		case EV_DELETE_PENDING:
			if (j->b >= 0)
				SAY("%sthe folder was removed but w%lld still has it open: delete pending", sep,
				    (long long)j->b);
			else
				SAY("%sthe folder was removed but is still open: delete pending", sep);
			break;
		case EV_KILLED:
			if (j->op < SCHED_MAX_WORKERS)
				holding[j->op] = 0;
			break;
		default:
			break;
		}
	}
#undef SAY
}

/* A stall is a jump of every clock: told as the pause of whoever holds the
 * lock then, when that is not the worker it was drawn on (the holder is the
 * one whose hold it stretches). */
static void holder_words(const struct explorer *ex, const struct xstep *st, const int *holding, char *buf,
			 size_t len)
{
	if (st->kind != XK_STALL && st->kind != XK_PAUSE)
		return;
	int h = -1;
	for (unsigned i = 0; i < SCHED_MAX_WORKERS && h < 0; i++)
		if (holding[i])
			h = (int)i;
	if (h < 0)
		return;
	double s = (double)st->ms / 1000.0, k = ex->cfg->stallv[st->m];
	double until = (double)(st->now_ns / 1000000 + st->ms) / 1000.0;
	if (st->kind == XK_PAUSE && holding[st->w])
		snprintf(buf, len, "w%u, holding the lock, pauses %.3g s (%.3g x its stale age) while the others go "
			 "on, until %.3f s", st->w, s, k, until);
	else if (st->kind == XK_STALL && holding[st->w])
		snprintf(buf, len, "w%u, holding the lock, stalls %.3g s (%.3g x its stale age); the clock jumps to "
			 "%.3f s", st->w, s, k, until);
	else if (st->kind == XK_STALL)
		snprintf(buf, len, "w%d, holding the lock, is frozen %.3g s (%.3g x the stale age): the clock jumps to "
			 "%.3f s for everyone (a stall drawn on w%u, who waits meanwhile)", h, s, k, until, st->w);
}

/* Print the story of X: the steps the violation depends on, numbered. */
void story_print(FILE *out, const struct explorer *ex, const struct xexec *x, int full, json_t *lines)
{
	unsigned char *keep = calloc(x->nstep + 1, 1);
	if (!keep)
		return;
	size_t upto = full ? x->nstep : story_slice(ex, x, keep);
	if (full)
		memset(keep, 1, x->nstep);
	size_t shown = 0;
	for (size_t k = 0; k < upto; k++)
		shown += keep[k];
	int holding[SCHED_MAX_WORKERS] = { 0 };
	if (out) {
		if (shown < x->nstep)
			fprintf(out, "  story: %zu of its %zu steps (the rest do not touch what the violation involves; "
				     "`lockstorm replay FILE --full` shows all):\n", shown, x->nstep);
		else
			fprintf(out, "  story (%zu steps):\n", shown);
	}
	unsigned num = 0;
	for (size_t k = 0; k < upto; k++) {
		char words[512], ev[512];
		step_events(ex, &x->step[k], holding, ev, sizeof ev);
		if (!keep[k])
			continue;
		step_words(ex, &x->step[k], words, sizeof words);
		holder_words(ex, &x->step[k], holding, words, sizeof words);
		if (x->step[k].then_sleeps && x->step[k].ms > 0) {
			size_t l = strlen(ev);
			snprintf(ev + l, sizeof ev - l, "%ssleeps %lld ms", l ? "; " : ": ", (long long)x->step[k].ms);
		}
		num++;
		if (out)
			fprintf(out, "  %3u. %s%s\n", num, words, ev);
		if (lines) {
			char line[1100];
			snprintf(line, sizeof line, "%s%s", words, ev);
			json_array_append_new(lines, json_string(line));
		}
	}
	free(keep);
}

void violation_print(FILE *out, const struct xexec *x)
{
	if (x->why[0] && x->inv == INV_LIVENESS && !x->res.inv[INV_LIVENESS].violations) {
		fprintf(out, "  violated: liveness - %s\n", x->why);
		return;
	}
	const struct check_inv *ci = &x->res.inv[x->inv];
	fprintf(out, "  violated: %s (%llu)\n", ci->name, (unsigned long long)ci->violations);
	for (unsigned e = 0; e < ci->nex && e < 2; e++)
		fprintf(out, "    - %s\n", ci->ex[e].text);
}

/* All steps, one plain line each: what replay compares. */
json_t *steps_json(const struct explorer *ex, const struct xexec *x)
{
	json_t *a = json_array();
	for (size_t k = 0; k < x->nstep; k++) {
		char words[512];
		step_words(ex, &x->step[k], words, sizeof words);
		json_array_append_new(a, json_string(words));
	}
	return a;
}

/* A spinning worker's loop: the smallest period P (at most 16) with which
 * its last 2P steps up to LAST repeat word for word; 8 when none does. */
unsigned x_livelock_period(const struct explorer *ex, const struct xexec *x, unsigned w, size_t last)
{
	enum { NW = 32 };
	static char words[NW][256];
	unsigned n = 0;
	for (size_t k = last + 1; k-- > 0 && n < NW;)
		if (x->step[k].w == w && x_ran(x->step[k].kind))
			step_words(ex, &x->step[k], words[n++], sizeof words[0]);
	for (unsigned p = 1; 2 * p <= n; p++) {
		unsigned i = 0;
		while (i < p && !strcmp(words[i], words[i + p]))
			i++;
		if (i == p)
			return p;
	}
	return n < 8 ? n : 8;
}
