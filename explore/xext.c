/*
 * xext.c - one execution of external workers under the explorer (see
 * xext.h): spawn the adapters in explore mode, grant their calls one at a
 * time as the strategy picks, move the virtual clock when nobody can run,
 * journal their events (and the lock object's creator, from the calls), and
 * judge the journal with the checker.
 *
 * Every exchange is a command and the adapter's answer up to `quiet`, so
 * what an adapter does next is known before the next decision: nothing in
 * an execution depends on real time, only on the choices.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../check/checker.h"
#include "../faults/fault.h"
#include "../core/journal.h"
#include "../protocols/external.h"
#include "../protocols/lock.h"
#include "../run/extline.h"
#include "../run/extrun.h"
#include "../run/exec.h"
#include "../run/extworker.h"
#include "../run/runcfg.h"
#include "../workloads/workload.h"
#include "xext.h"

#define XE_REPLY_MS 20000        /* real time an adapter may take to answer one command */

static int xe_fail(struct xe_exec *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int xe_fail(struct xe_exec *x, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->why, sizeof x->why, fmt, ap);
	va_end(ap);
	x->outcome = XO_HARNESS;
	return -1;
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	return remove(p) == 0 || errno == ENOENT ? 0 : -1;
}

int xext_open(struct xext *xe, struct xcfg *cfg, char *why, size_t len)
{
	memset(xe, 0, sizeof *xe);
	rundir_init(&xe->xrd);
	xe->cfg = cfg;
	const struct run_config *r = &cfg->run;
	if (r->nproto != 1) {
		snprintf(why, len, "explore runs one external adapter at a time (not a mixed fleet)");
		return 2;
	}
	if (r->workload != &update_workload && r->workload != &hold_workload) {
		snprintf(why, len, "external adapters run the update and hold workloads only (not '%s')",
			 r->workload->name);
		return 2;
	}
	if (ext_command(r, 0, xe->cmd, sizeof xe->cmd, &xe->shell, why, len) != 0)
		return 2;
	/* Python's seam, beside the helpers: <adapters>/lib/pyexplore */
	{
		char d[PATH_MAX];
		snprintf(d, sizeof d, "%s", xe->cmd);
		char *sl = strrchr(d, '/');
		if (sl)
			*sl = '\0';
		sl = strrchr(d, '/');
		if (sl)
			*sl = '\0';
		snprintf(xe->pylib, sizeof xe->pylib, "%s/lib/pyexplore", d);
#ifdef LS_SOURCE_DIR
		if (access(xe->pylib, F_OK) != 0)
			snprintf(xe->pylib, sizeof xe->pylib, "%s", LS_SOURCE_DIR "/adapters/lib/pyexplore");
#endif
	}
	/* a C adapter's seam: liblockstorm_explore.so, preloaded (adapters/lib/lsexplore.c) */
	const struct ext_adapter *ea = ext_of(r->proto[0]);
	if (ea && ea->seam == EXT_SEAM_PRELOAD &&
	    exec_find_lib("LOCKSTORM_EXPLORE_PRELOAD", "liblockstorm_explore.so", xe->preload, sizeof xe->preload) != 0) {
		snprintf(why, len, "the C adapters' explore seam is not found: %s (%s; build the target lockstorm_explore)",
			 xe->preload, strerror(errno));
		return 3;
	}
	const char *name = r->proto[0]->name;
	snprintf(xe->lib, sizeof xe->lib, "%s", strncmp(name, "ext:", 4) ? name : name + 4);
	const char *base = cfg->dir[0] ? cfg->dir : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	rundir_sweep_stale_in(base); /* a SIGKILLed explorer's */
	if (rundir_temp_in(&xe->xrd, base, "lockstorm-xext", ".lockstorm-owned", why, len) != 0)
		return 3;
	snprintf(xe->xdir, sizeof xe->xdir, "%s", xe->xrd.path);
	snprintf(xe->store, sizeof xe->store, "%s/store", xe->xdir);
	snprintf(xe->state, sizeof xe->state, "%s/state.json", xe->store);
	snprintf(xe->lockp, sizeof xe->lockp, "%s.lock", xe->state);
	xe->n = r->workers;
	for (unsigned w = 0; w < xe->n; w++) {
		xe->stale_ms[w] = runcfg_stale_ms(r, w);
		xe->budget_ms[w] = runcfg_budget_ms(r, w);
		xe->proto_of[w] = name;
		xe->w[w].ev = xe->w[w].ctl = -1;
		for (unsigned p = 0; p < XE_POOL; p++)
			xe->spare[p][w].ev = xe->spare[p][w].ctl = -1;
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

void xext_close(struct xext *xe)
{
	for (unsigned p = 0; p < XE_POOL; p++)
		for (unsigned w = 0; w < xe->n; w++) {
			struct xe_worker *s = &xe->spare[p][w];
			if (s->pid > 0) {
				kill(-s->pid, SIGKILL);
				waitpid(s->pid, NULL, 0);
				s->pid = 0;
			}
			if (s->ev >= 0)
				close(s->ev);
			if (s->ctl >= 0)
				close(s->ctl);
			s->ev = s->ctl = -1;
		}
	rundir_release(&xe->xrd, 1);
	free(xe->rec);
	xe->rec = NULL;
}

void xe_exec_free(struct xe_exec *x)
{
	free(x->dev);
	free(x->line);
	memset(x, 0, sizeof *x);
}

/* ---- records ---- */

static void xe_record(struct xext *xe, unsigned w, int type, int err, int64_t a, int64_t b, int64_t c)
{
	if (xe->nrec == xe->caprec) {
		size_t cap = xe->caprec ? xe->caprec * 2 : 1024;
		struct jrec *g = realloc(xe->rec, cap * sizeof *g);
		if (!g)
			return;
		xe->rec = g;
		xe->caprec = cap;
	}
	struct jrec *r = &xe->rec[xe->nrec++];
	memset(r, 0, sizeof *r);
	r->type = (uint16_t)type;
	r->worker = (uint16_t)w;
	r->pid = 2000 + (int32_t)w;
	r->op = xe->w[w].op;
	r->err = err;
	r->seq = ++xe->seq;
	r->ns = (uint64_t)xe->now_ms * 1000000u + xe->seq * 1000u; /* a total order in virtual time */
	r->a = a;
	r->b = b;
	r->c = c;
}

static void xe_line_add(struct xext *xe, struct xe_exec *x, unsigned w, int kind, int mutates, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));
static void xe_line_add(struct xext *xe, struct xe_exec *x, unsigned w, int kind, int mutates, const char *fmt, ...)
{
	if (x->nline == x->capline) {
		size_t cap = x->capline ? x->capline * 2 : 256;
		struct xe_line *g = realloc(x->line, cap * sizeof *g);
		if (!g)
			return;
		x->line = g;
		x->capline = cap;
	}
	struct xe_line *l = &x->line[x->nline++];
	memset(l, 0, sizeof *l);
	l->w = (uint8_t)w;
	l->kind = (uint8_t)kind;
	l->mutates = (uint8_t)mutates;
	l->now_ms = xe->now_ms;
	l->rec_to = (uint32_t)xe->nrec;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->text, sizeof l->text, fmt, ap);
	va_end(ap);
}

static void xe_line_append(struct xe_exec *x, const char *s)
{
	if (!x->nline)
		return;
	struct xe_line *l = &x->line[x->nline - 1];
	size_t k = strlen(l->text);
	snprintf(l->text + k, sizeof l->text - k, "%s", s);
}

/* ---- talking to one adapter ---- */

static int xe_send(struct xext *xe, unsigned w, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int xe_send(struct xext *xe, unsigned w, const char *fmt, ...)
{
	char buf[128];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (k < 0 || (size_t)k >= sizeof buf - 1)
		return -1;
	buf[k++] = '\n';
	return write(xe->w[w].ctl, buf, (size_t)k) == k ? 0 : -1;
}

/* A path under the store as the story says it: "state.json.lock". */
static const char *xe_rel(const struct xext *xe, const char *p)
{
	size_t k = strlen(xe->store);
	if (!strncmp(p, xe->store, k) && p[k] == '/')
		return p + k + 1;
	return p;
}

static void xe_event(struct xext *xe, struct xe_exec *x, unsigned w, const char *line)
{
	struct ext_event ev;
	char why[256];
	struct xe_worker *s = &xe->w[w];
	if (ext_parse_line(line, &ev, why, sizeof why) != 0) {
		xe_fail(x, "w%u: adapter sent a bad line: \"%.200s\" (%s)", w, line, why);
		return;
	}
	if (ev.next) {
		s->wants_op = 1;
		return;
	}
	if (ev.log || ev.type == EV_NONE)
		return;
	int64_t a = ev.a;
	if (ev.type == EV_ACQUIRED)
		a = (int64_t)(xe->lock_creator == (int)w ? xe->lock_ns : (uint64_t)xe->now_ms * 1000000u);
	xe_record(xe, w, ev.type, ev.err, a, ev.b, 0);
	if (ev.type == EV_ACQUIRED) {
		s->holding = 1;
		xe->acquires++;
	}
	else if (ev.type == EV_RELEASE_BEGIN || ev.type == EV_LOST)
		s->holding = 0;
	if (x->nline && x->line[x->nline - 1].w == w && x->line[x->nline - 1].kind == XEL_CALL) {
		const char *sp = strchr(line, ' ');
		char t[160];
		snprintf(t, sizeof t, "%s%s", x->line[x->nline - 1].text[0] && strstr(x->line[x->nline - 1].text, " -> ")
			 ? ", " : " -> ", sp ? sp + 1 : line);
		xe_line_append(x, t);
		x->line[x->nline - 1].mutates = 1;
		x->line[x->nline - 1].rec_to = (uint32_t)xe->nrec;
	}
}

/* Lines up to `quiet`. */
static int xe_pump(struct xext *xe, struct xe_exec *x, unsigned w)
{
	struct xe_worker *s = &xe->w[w];
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		if (!nl) {
			if (s->len == sizeof s->buf)
				return xe_fail(x, "w%u: adapter sent a line longer than %zu bytes", w, sizeof s->buf);
			struct pollfd p = { s->ev, POLLIN, 0 };
			int pr = poll(&p, 1, XE_REPLY_MS);
			if (pr == 0)
				return xe_fail(x, "w%u: adapter hung: no answer within %d ms (see %s/adapter-w%u.log)%s", w,
					       XE_REPLY_MS, xe->xdir, w, xe->preload[0] ? "" :
					       "; a C adapter explores only with \"seam\": \"preload\" in its manifest");
			if (pr < 0) {
				if (errno == EINTR)
					continue;
				return xe_fail(x, "poll: %s", strerror(errno));
			}
			ssize_t k = read(s->ev, s->buf + s->len, sizeof s->buf - s->len);
			if (k <= 0)
				return xe_fail(x, "w%u: adapter exited before it was told to stop (see %s/adapter-w%u.log)",
					       w, xe->xdir, w);
			s->len += (size_t)k;
			continue;
		}
		*nl = '\0';
		char line[sizeof s->buf];
		memcpy(line, s->buf, (size_t)(nl - s->buf) + 1);
		s->len -= (size_t)(nl - s->buf) + 1;
		memmove(s->buf, nl + 1, s->len);
		if (!strncmp(line, "quiet ", 6)) {
			s->next_timer = strtoll(line + 6, NULL, 10);
			if (s->next_timer >= 0)
				s->next_timer -= XE_T0;
			return 0;
		}
		if (!strncmp(line, "step ", 5)) {
			if (s->npend == XE_PEND)
				return xe_fail(x, "w%u: more than %d calls waiting at once", w, XE_PEND);
			struct xe_pend *p = &s->pend[s->npend];
			memset(p, 0, sizeof *p);
			char p1[SCHED_PATH] = "", p2[SCHED_PATH] = "", fl[8] = "";
			char fmt[64];
			snprintf(fmt, sizeof fmt, "step %%u %%15s %%%ds %%%ds %%7s", SCHED_PATH - 1, SCHED_PATH - 1);
			int got = sscanf(line, fmt, &p->id, p->call, p1, p2, fl);
			if (got < 3)
				return xe_fail(x, "w%u: bad step line \"%.200s\"", w, line);
			if (!strcmp(p2, "sync") || !strcmp(p2, "rest")) { /* flags after a call's one path */
				p->sync = !strcmp(p2, "sync");
				p->rest = !strcmp(p2, "rest");
				p2[0] = '\0';
			}
			p->sync |= !strcmp(fl, "sync");
			snprintf(p->path[0], sizeof p->path[0], "%s", p1);
			snprintf(p->path[1], sizeof p->path[1], "%s", p2);
			s->npend++;
			continue;
		}
		if (!strncmp(line, "done ", 5)) {
			char *sp = strchr(line + 5, ' ');
			snprintf(s->done, sizeof s->done, "%s", sp ? sp + 1 : "?");
			continue;
		}
		xe_event(xe, x, w, line);
		if (x->outcome == XO_HARNESS)
			return -1;
	}
}

static int xe_spawn(struct xext *xe, unsigned w, struct xe_worker *s, struct xe_exec *x)
{
	int ev[2], ctl[2];
	if (pipe2(ev, O_CLOEXEC) != 0)
		return xe_fail(x, "pipe: %s", strerror(errno));
	if (pipe2(ctl, O_CLOEXEC) != 0) {
		close(ev[0]);
		close(ev[1]);
		return xe_fail(x, "pipe: %s", strerror(errno));
	}
	char logp[PATH_MAX + 32];
	snprintf(logp, sizeof logp, "%s/adapter-w%u.log", xe->xdir, w);
	const struct run_config *r = &xe->cfg->run;
	pid_t pid = fork();
	if (pid < 0)
		return xe_fail(x, "fork: %s", strerror(errno));
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		int lg = open(logp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (dup2(ctl[0], 0) < 0 || (lg >= 0 && (dup2(lg, 1) < 0 || dup2(lg, 2) < 0)))
			_exit(127);
		if (ev[1] == 3)
			fcntl(3, F_SETFD, 0);
		else if (dup2(ev[1], 3) < 0)
			_exit(127);
		char num[64];
		setenv("LOCKSTORM_EXPLORE", "1", 1);
		snprintf(num, sizeof num, "%lld", (long long)XE_T0);
		setenv("LOCKSTORM_EXPLORE_T0", num, 1);
		setenv("LOCKSTORM_RESOURCE", xe->state, 1);
		setenv("LOCKSTORM_LOCK", xe->lockp, 1);
		setenv("LOCKSTORM_STATE", xe->state, 1);
		snprintf(num, sizeof num, "%u", w);
		setenv("LOCKSTORM_WORKER", num, 1);
		snprintf(num, sizeof num, "%u", r->workers);
		setenv("LOCKSTORM_WORKERS", num, 1);
		setenv("LOCKSTORM_INCARNATION", "0", 1);
		snprintf(num, sizeof num, "%llu", (unsigned long long)r->seed);
		setenv("LOCKSTORM_SEED", num, 1);
		setenv("LOCKSTORM_WORKLOAD", r->workload->name, 1);
		setenv("LOCKSTORM_TIME_SCALE", "1", 1);
		snprintf(num, sizeof num, "%lld", (long long)(r->workload == &hold_workload ?
				      r->wvals[param_index(hold_workload.params, "hold_ms")] : 0));
		setenv("LOCKSTORM_HOLD_MS", num, 1);
		setenv("LOCKSTORM_EVENT_FD", "3", 1);
		setenv("UV_USE_IO_URING", "0", 1);
		setenv("PYTHONHASHSEED", "0", 1);
		setenv("PYTHONPATH", xe->pylib, 1);
		setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
		const struct lock_ops *ops = r->proto[0];
		for (int i = 0; ops->params[i].name; i++) {
			char name[96];
			int k = snprintf(name, sizeof name, "LOCKSTORM_PARAM_");
			for (const char *c = ops->params[i].name; *c && k < (int)sizeof name - 1; c++)
				name[k++] = (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c == '-' ? '_' : *c;
			name[k] = '\0';
			snprintf(num, sizeof num, "%lld", (long long)(r->pvals[0][i] == LS_NEVER ? -1 : r->pvals[0][i]));
			setenv(name, num, 1);
		}
		if (xe->preload[0])
			setenv("LD_PRELOAD", xe->preload, 1);
		else
			unsetenv("LD_PRELOAD");
		ext_exec_cmd(xe->cmd, xe->shell);
		_exit(127);
	}
	setpgid(pid, pid);
	close(ev[1]);
	close(ctl[0]);
	memset(s, 0, sizeof *s);
	s->pid = pid;
	s->ev = ev[0];
	s->ctl = ctl[1];
	s->next_timer = -1;
	return 0;
}

static void xe_reap(struct xext *xe)
{
	for (unsigned w = 0; w < xe->n; w++) {
		struct xe_worker *s = &xe->w[w];
		if (s->ctl >= 0)
			close(s->ctl);
		s->ctl = -1;
	}
	for (unsigned w = 0; w < xe->n; w++) {
		struct xe_worker *s = &xe->w[w];
		if (s->pid > 0) {
			/* told stop (or its stdin closed): it exits at once; else it is killed */
			int st;
			struct timespec t0, t;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			for (;;) {
				pid_t r = waitpid(s->pid, &st, WNOHANG);
				if (r == s->pid || (r < 0 && errno != EINTR))
					break;
				clock_gettime(CLOCK_MONOTONIC, &t);
				if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 > 2000) {
					kill(-s->pid, SIGKILL);
					waitpid(s->pid, &st, 0);
					break;
				}
				struct pollfd p = { s->ev, POLLIN, 0 };
				char junk[4096];
				if (poll(&p, 1, 10) > 0 && read(s->ev, junk, sizeof junk) <= 0)
					p.fd = -1;
			}
			kill(-s->pid, SIGKILL); /* what it started */
			s->pid = 0;
		}
		if (s->ev >= 0)
			close(s->ev);
		s->ev = -1;
	}
}

/* ---- the lock object, from the calls ---- */

static int xe_is_lock(const struct xext *xe, const char *p)
{
	return !strcmp(p, xe->lockp);
}

static void xe_objects(struct xext *xe, unsigned w, const struct xe_pend *p, int ok, const char *flags)
{
	if (!ok)
		return;
	const char *c = p->call;
	int creates = (!strcmp(c, "mkdir") || !strcmp(c, "open") || !strcmp(c, "writeFile") || !strcmp(c, "symlink"))
		      && xe_is_lock(xe, p->path[0]);
	if (!strcmp(c, "open") && flags && !strchr(flags, 'x'))
		creates = 0;
	int removes = (!strcmp(c, "rmdir") || !strcmp(c, "unlink") || !strcmp(c, "rm")) && xe_is_lock(xe, p->path[0]);
	if (!strcmp(c, "rename") || !strcmp(c, "link")) {
		if (xe_is_lock(xe, p->path[1]))
			creates = 1;
		if (!strcmp(c, "rename") && xe_is_lock(xe, p->path[0]))
			removes = 1;
	}
	if ((removes || creates) && xe->lock_creator >= 0 && (removes || !strcmp(c, "rename"))) {
		xe_record(xe, w, EV_OBJ_REMOVE, 0, xe->lock_ino, xe->lock_creator, 0);
		xe->lock_creator = -1;
	}
	if (creates && xe->lock_creator < 0) {
		xe->lock_creator = (int)w;
		xe->lock_ino++;
		xe->lock_ns = (uint64_t)xe->now_ms * 1000000u + (xe->seq + 1) * 1000u;
		xe_record(xe, w, EV_OBJ_CREATE, 0, xe->lock_ino, 0, 0);
	}
}

/* ---- an execution ---- */

static int xe_dev_add(struct xe_exec *x, uint32_t at, const struct xopt *o)
{
	if (x->ndev == x->capdev) {
		size_t cap = x->capdev ? x->capdev * 2 : 16;
		struct xchoice *g = realloc(x->dev, cap * sizeof *g);
		if (!g)
			return -1;
		x->dev = g;
		x->capdev = cap;
	}
	x->dev[x->ndev++] = (struct xchoice){ at, o->kind, o->w, o->m };
	return 0;
}

/* Tell every worker whose timers are due that the clock moved. */
static int xe_tick(struct xext *xe, struct xe_exec *x)
{
	for (unsigned w = 0; w < xe->n; w++) {
		struct xe_worker *s = &xe->w[w];
		if (s->stopped || s->next_timer < 0 || s->next_timer > xe->now_ms || s->pause_until > xe->now_ms)
			continue; /* a paused worker is frozen: its timers wait for its pause to end */
		if (s->npend && s->pend[0].sync)
			continue;
		if (xe_send(xe, w, "time %lld", (long long)(xe->now_ms + XE_T0)) != 0 || xe_pump(xe, x, w) != 0)
			return x->outcome == XO_HARNESS ? -1 : xe_fail(x, "w%u: cannot write to the adapter", w);
	}
	return 0;
}

static const char *xe_pend_words(const struct xext *xe, const struct xe_pend *p, char *buf, size_t len)
{
	if (p->rest)
		snprintf(buf, len, "%s, the rest of %s", p->call, xe_rel(xe, p->path[0]));
	else if (p->path[1][0])
		snprintf(buf, len, "%s %s %s", p->call, xe_rel(xe, p->path[0]), xe_rel(xe, p->path[1]));
	else
		snprintf(buf, len, "%s %s", p->call, xe_rel(xe, p->path[0]));
	return buf;
}

/* A library's call (Node's and Python's names) as the seam's kind of call:
 * which errnos a choice may fail it with (x_op_errs). */
static unsigned xe_call_fsop(const char *call)
{
	static const struct {
		const char *name;
		unsigned op;
	} map[] = {
		{ "mkdir", FSX_MKDIR }, { "mkdtemp", FSX_MKDIR }, { "rmdir", FSX_RMDIR }, { "rm", FSX_RMDIR },
		{ "open", FSX_OPEN }, { "writeFile", FSX_OPEN }, { "appendFile", FSX_OPEN },
		{ "rename", FSX_RENAME }, { "replace", FSX_RENAME }, { "link", FSX_LINK }, { "symlink", FSX_LINK },
		{ "unlink", FSX_UNLINK }, { "remove", FSX_UNLINK }, { "write", FSX_WRITE },
		{ "stat", FSX_STAT }, { "lstat", FSX_STAT }, { "fstat", FSX_STAT }, { "access", FSX_STAT },
		{ "readFile", FSX_READ }, { "read", FSX_READ }, { "fsync", FSX_FSYNC }, { "fdatasync", FSX_FSYNC },
		{ "readdir", FSX_LIST },
	};
	for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
		if (!strcmp(call, map[i].name))
			return map[i].op;
	return FSX_OP_COUNT; /* close, utimes, flock ...: no errno choice */
}

/* A pending call as the seam's kind: the rest of a split write is a write. */
static unsigned xe_pend_fsop(const struct xe_pend *p)
{
	return p->rest ? FSX_WRITE : xe_call_fsop(p->call);
}

/* A write call the helpers can tear (short-write, split-write): Node's
 * write, writeFile and appendFile, Python's os.write. */
static int xe_pend_writes(const struct xe_pend *p)
{
	return p->rest || !strcmp(p->call, "write") || !strcmp(p->call, "writeFile") || !strcmp(p->call, "appendFile");
}

/* A split write's pause: the shortest --stall multiple of the writer's stale
 * age (explore/xfaults.c), the others going on meanwhile. */
static int64_t xe_split_ms(const struct xext *xe, unsigned w)
{
	const struct xcfg *cfg = xe->cfg;
	double k = cfg->stallv[0];
	for (unsigned i = 1; i < cfg->nstallv; i++)
		k = cfg->stallv[i] < k ? cfg->stallv[i] : k;
	return (int64_t)(k * (double)(xe->stale_ms[w] == LS_NEVER ? 10000 : xe->stale_ms[w]));
}

static int xe_loop(struct xext *xe, xchoose choose, void *ctx, struct xe_exec *x)
{
	const struct xcfg *cfg = xe->cfg;
	int current = -1;
	uint32_t run_steps = 0;
	unsigned stalls = 0, crashes = 0;
	/* an adapter's crash: only when asked for (--max-crashes N), so that a
	 * plain search of a library stays the stall search it was */
	const unsigned max_crashes = cfg->crashes_named ? cfg->max_crashes : 0;
	/* an errno the library's call gets instead of running: also only when
	 * asked for (--max-faults errno=N; before, any --max-faults gave them) */
	const unsigned max_errnos = xe_budget(cfg, XK_ERRNO);
	unsigned errnos = 0;
	/* a torn write (short-write) and a split one: only when asked for too */
	const unsigned max_shorts = xe_budget(cfg, XK_SHORT), max_splits = xe_budget(cfg, XK_SPLIT);
	unsigned shorts = 0, splits = 0;
	struct xopt opt[X_MAX_OPTS];
	for (;;) {
		/* ops first: they are no decision */
		int again = 1;
		while (again) {
			again = 0;
			for (unsigned w = 0; w < xe->n; w++) {
				struct xe_worker *s = &xe->w[w];
				if (!s->wants_op || s->stopped)
					continue;
				s->wants_op = 0;
				again = 1;
				if (s->ops_given < x->sh.ops[w]) {
					s->op = s->ops_given++;
					if (xe_send(xe, w, "op %u %lld", s->op, (long long)(xe->now_ms + XE_T0)) != 0)
						return xe_fail(x, "w%u: cannot write to the adapter", w);
					if (xe_pump(xe, x, w) != 0)
						return -1;
				} else {
					s->stopped = 1;
					if (xe_send(xe, w, "stop") != 0)
						s->exited = 1;
				}
			}
		}
		unsigned nopt = 0, live = 0;
		int def = -1;
		for (unsigned w = 0; w < xe->n; w++) {
			struct xe_worker *s = &xe->w[w];
			if (s->stopped)
				continue;
			live++;
			if (s->pause_until > xe->now_ms)
				continue; /* a split write's writer, paused */
			for (unsigned k = 0; k < s->npend && nopt < X_MAX_OPTS && k < 256; k++) {
				if (def < 0 && (int)w == current)
					def = (int)nopt;
				opt[nopt++] = (struct xopt){ XK_RUN, (uint8_t)w, (uint8_t)k };
				if (s->pend[k].sync)
					break;
			}
		}
		if (!live)
			return 0;
		if (!nopt) {
			int64_t t = -1;
			for (unsigned w = 0; w < xe->n; w++) {
				const struct xe_worker *s = &xe->w[w];
				int64_t at = s->pause_until > xe->now_ms ? s->pause_until : s->next_timer;
				if (!s->stopped && at >= 0 && (t < 0 || at < t))
					t = at;
			}
			if (t < 0)
				return xe_fail(x, "no worker can move: none has a call waiting or a timer set (a lock call that "
					       "waits on something outside the file system?)");
			if (t > xe->now_ms) {
				xe_line_add(xe, x, 0, XEL_TIME, 0, "the clock moves %+lld ms to %.3f s",
					    (long long)(t - xe->now_ms), (double)t / 1000);
				xe->now_ms = t;
			}
			if (xe_tick(xe, x) != 0)
				return -1;
			continue;
		}
		/* the default first */
		if (def > 0) {
			struct xopt t = opt[0];
			opt[0] = opt[def];
			opt[def] = t;
		}
		const unsigned nrun = nopt;
		if (stalls < cfg->max_stalls)
			for (unsigned w = 0; w < xe->n; w++) {
				if (xe->w[w].stopped || !xe->w[w].npend || xe->w[w].pend[0].sync)
					continue;
				for (unsigned m = 0; m < cfg->nstallv && nopt < X_MAX_OPTS; m++)
					opt[nopt++] = (struct xopt){ XK_STALL, (uint8_t)w, (uint8_t)m };
			}
		if (crashes < max_crashes)
			for (unsigned w = 0; w < xe->n && nopt < X_MAX_OPTS; w++)
				if (!xe->w[w].stopped && xe->w[w].npend && !xe->w[w].pend[0].sync)
					opt[nopt++] = (struct xopt){ XK_CRASH, (uint8_t)w, 0 };
		if (errnos < max_errnos) /* at a worker's oldest call, the errnos of its kind */
			for (unsigned w = 0; w < xe->n; w++)
				if (!xe->w[w].stopped && xe->w[w].npend && xe->w[w].pause_until <= xe->now_ms)
					for (const signed char *e = x_op_errs(xe_pend_fsop(&xe->w[w].pend[0]));
					     *e >= 0 && nopt < X_MAX_OPTS; e++)
						opt[nopt++] = (struct xopt){ XK_ERRNO, (uint8_t)w, (uint8_t)*e };
		/* at any waiting write of a worker (m: which), as the runs: a torn one,
		 * a split one (not at the rest of one) */
		for (unsigned w = 0; w < xe->n && (shorts < max_shorts || splits < max_splits); w++) {
			const struct xe_worker *s = &xe->w[w];
			if (s->stopped || s->pause_until > xe->now_ms)
				continue;
			for (unsigned k = 0; k < s->npend && nopt + 2 <= X_MAX_OPTS; k++) {
				if (xe_pend_writes(&s->pend[k]) && shorts < max_shorts)
					opt[nopt++] = (struct xopt){ XK_SHORT, (uint8_t)w, (uint8_t)k };
				if (xe_pend_writes(&s->pend[k]) && splits < max_splits && !s->pend[k].rest)
					opt[nopt++] = (struct xopt){ XK_SPLIT, (uint8_t)w, (uint8_t)k };
				if (s->pend[k].sync)
					break;
			}
		}
		struct xdec d = { x->decisions, opt, nopt, nrun, current,
				  current >= 0 && !xe->w[current].stopped && xe->w[current].npend, run_steps, { 0 }, { 0 } };
		unsigned pick = choose(ctx, &d);
		if (pick >= nopt)
			pick = 0;
		if (pick != 0 && xe_dev_add(x, x->decisions, &opt[pick]) != 0)
			return xe_fail(x, "out of memory");
		x->decisions++;
		const struct xopt *o = &opt[pick];
		struct xe_worker *s = &xe->w[o->w];
		if (o->kind == XK_CRASH) {
			/* SIGKILL of the adapter's process group before its next call:
			 * its hold ends at its last event, its lock stays on disk */
			char pw[2 * SCHED_PATH + 32];
			xe_record(xe, o->w, EV_FAULT, 0, FK_CRASH, 0, 0);
			xe_line_add(xe, x, o->w, XEL_STALL, 1, "w%u is killed (SIGKILL) before %s %s", o->w, xe->lib,
				    xe_pend_words(xe, &s->pend[0], pw, sizeof pw));
			if (s->pid > 0) {
				kill(-s->pid, SIGKILL);
				while (waitpid(s->pid, NULL, 0) < 0 && errno == EINTR)
					;
				s->pid = 0;
			}
			xe_record(xe, o->w, EV_KILLED, 0, SIGKILL, 2000 + (int64_t)o->w, 0);
			struct jrec *k = &xe->rec[xe->nrec - 1];
			k->worker = JOURNAL_DRIVER; /* the driver's record of the kill, as engine.c's */
			k->op = o->w;
			s->stopped = s->exited = 1;
			s->npend = 0;
			s->next_timer = -1;
			s->holding = 0;
			crashes++;
			current = -1;
			continue;
		}
		if (o->kind == XK_STALL) {
			int64_t ms = (int64_t)(cfg->stallv[o->m] * (double)(xe->stale_ms[o->w] == LS_NEVER ? 10000
									 : xe->stale_ms[o->w]));
			char pw[2 * SCHED_PATH + 32];
			xe_record(xe, o->w, EV_FAULT, 0, FK_STALL, 0, ms);
			xe_line_add(xe, x, o->w, XEL_STALL, 1, "w%u is frozen %lld ms (%.3g stale) before %s %s", o->w,
				    (long long)ms, cfg->stallv[o->m], xe->lib, xe_pend_words(xe, &s->pend[0], pw, sizeof pw));
			xe->now_ms += ms;
			x->stall_ms += ms;
			stalls++;
			current = o->w;
			if (xe_tick(xe, x) != 0)
				return -1;
			continue;
		}
		/* run a call, or fail the oldest one with an errno (the adapter's
		 * helper throws it as the call's own error, and nothing is done), or
		 * tear a write (the helper writes its first 10 bytes, then fails it
		 * with ENOSPC or leaves the rest for a call of its own) */
		const unsigned k = o->kind == XK_ERRNO ? 0 : o->m;
		const char *inj = o->kind == XK_ERRNO ? x_err_names[o->m % X_NERRS]
				  : o->kind == XK_SHORT || o->kind == XK_SPLIT ? kind_names[o->kind] : NULL;
		struct xe_pend p = s->pend[k];
		memmove(&s->pend[k], &s->pend[k + 1], (s->npend - k - 1) * sizeof p);
		s->npend--;
		s->done[0] = '\0';
		char pw[2 * SCHED_PATH + 32];
		const unsigned op = xe_pend_fsop(&p);
		const int64_t at_op = op < FSX_OP_COUNT ? (int64_t)point_hash(fsx_op_point((enum fsx_op)op)) : 0;
		if (o->kind == XK_ERRNO) {
			xe_record(xe, o->w, EV_FAULT, x_errs[o->m % X_NERRS], FK_ERRNO, at_op, 0);
			xe_line_add(xe, x, o->w, XEL_CALL, 1, "w%u %s %s, failed by lockstorm with %s", o->w, xe->lib,
				    xe_pend_words(xe, &p, pw, sizeof pw), inj);
			errnos++;
		} else if (o->kind == XK_SHORT) { /* the fault engine's record of a short write */
			xe_record(xe, o->w, EV_FAULT, ENOSPC, FK_SHORT_WRITE, at_op, XE_TEAR);
			xe_line_add(xe, x, o->w, XEL_CALL, 1, "w%u %s %s (the disk fills mid-write, only its first %d bytes "
				    "land)", o->w, xe->lib, xe_pend_words(xe, &p, pw, sizeof pw), XE_TEAR);
			shorts++;
		} else if (o->kind == XK_SPLIT) { /* ... of a split one, and its pause (excused as a stall is) */
			const int64_t ms = xe_split_ms(xe, o->w);
			xe_record(xe, o->w, EV_FAULT, 0, FK_SHORT_WRITE, at_op, XE_TEAR);
			xe_record(xe, o->w, EV_FAULT, 0, FK_STALL, (int64_t)point_hash("explore/pause"), ms);
			xe_line_add(xe, x, o->w, XEL_CALL, 1, "w%u %s %s: its first %d bytes land, then w%u pauses %.3g s "
				    "before the rest (the others go on)", o->w, xe->lib, xe_pend_words(xe, &p, pw, sizeof pw),
				    XE_TEAR, o->w, (double)ms / 1000.0);
			s->pause_until = xe->now_ms + ms;
			x->stall_ms += ms;
			splits++;
		} else {
			xe_line_add(xe, x, o->w, XEL_CALL, 0, "w%u %s %s", o->w, xe->lib, xe_pend_words(xe, &p, pw, sizeof pw));
		}
		size_t li = x->nline - 1;
		if (li < x->nline)
			x->line[li].fault = inj != NULL;
		const long long at = (long long)(xe->now_ms + XE_T0);
		/* kill(PID, 0) of a virtual pid (the C seam): ESRCH once that worker is dead */
		const char *ans = inj;
		if (!ans && !strcmp(p.call, "kill")) {
			long v = strtol(p.path[0], NULL, 10) - 2000;
			if (v >= 0 && v < (long)xe->n && xe->w[v].stopped)
				ans = "ESRCH";
		}
		if ((ans ? xe_send(xe, o->w, "go %u %lld %s", p.id, at, ans) : xe_send(xe, o->w, "go %u %lld", p.id, at)) != 0)
			return xe_fail(x, "w%u: cannot write to the adapter", o->w);
		/* the result comes first, then its events */
		struct xe_worker *sw = s;
		size_t rec_before = xe->nrec;
		if (xe_pump(xe, x, o->w) != 0)
			return -1;
		int ok = !strcmp(sw->done, "ok");
		if (li < x->nline) {
			struct xe_line *l = &x->line[li];
			char res[80];
			snprintf(res, sizeof res, ": %s", sw->done[0] ? sw->done : "?");
			if (inj && o->kind != XK_ERRNO && ok) /* nothing to tear */
				snprintf(res, sizeof res, " (%d bytes or fewer: it landed whole): ok", XE_TEAR);
			else if (!strcmp(sw->done, "part")) /* told in words already */
				res[0] = '\0';
			/* the result goes before the events */
			char tail[400];
			char *arrow = strstr(l->text, " -> ");
			snprintf(tail, sizeof tail, "%s", arrow ? arrow : "");
			if (arrow)
				*arrow = '\0';
			size_t k = strlen(l->text);
			snprintf(l->text + k, sizeof l->text - k, "%s%s", res, tail);
			int mut = ok && strcmp(p.call, "stat") && strcmp(p.call, "lstat") && strcmp(p.call, "fstat") &&
				  strcmp(p.call, "readFile") && strcmp(p.call, "access") && strcmp(p.call, "readdir") &&
				  strcmp(p.call, "realpath") && strcmp(p.call, "read") && strcmp(p.call, "close") &&
				  strcmp(p.call, "kill");
			l->mutates |= (uint8_t)mut;
			/* a dead holder's pid: the staleness the library then acts on */
			l->mutates |= (uint8_t)(!strcmp(p.call, "kill") && !strcmp(sw->done, "ESRCH"));
		}
		/* a torn write made its file all the same */
		xe_objects(xe, o->w, &p, ok || (o->kind == XK_SHORT && !strcmp(sw->done, "ENOSPC")) ||
					 (o->kind == XK_SPLIT && !strcmp(sw->done, "part")), NULL);
		if (xe->nrec > rec_before && li < x->nline)
			x->line[li].rec_to = (uint32_t)xe->nrec;
		current = o->w;
		run_steps++;
		if (x->decisions >= cfg->max_steps) {
			x->outcome = XO_BOUND;
			return 0;
		}
	}
}

static int xe_judge(struct xext *xe, struct xe_exec *x)
{
	const struct run_config *r = &xe->cfg->run;
	char *final = NULL;
	size_t flen = 0;
	FILE *f = fopen(xe->state, "rb");
	if (f) {
		char buf[65536];
		flen = fread(buf, 1, sizeof buf, f);
		fclose(f);
		final = malloc(flen + 1);
		if (final) {
			memcpy(final, buf, flen);
			final[flen] = '\0';
		}
	}
	struct check_input in = {
		.rec = xe->rec, .n = xe->nrec, .workers = xe->n, .stale_ms = xe->stale_ms,
		.budget_ms = xe->budget_ms, .proto_of = xe->proto_of, .clock_jump_ms = x->stall_ms,
		.excuse_injected = 1, /* an explorer's choice, like engine.c's */
		.check_state = r->workload == &update_workload, .final_state = final, .final_len = flen,
	};
	int rc = check_run(&in, &x->res);
	free(final);
	if (rc != 0)
		return xe_fail(x, "the checker ran out of memory");
	if (x->outcome == XO_BOUND)
		return 0;
	x->outcome = XO_PASS;
	/* the takeover race first: its removal by name is the story to tell */
	static const int pref[] = { INV_OWN_RELEASE, INV_EXCLUSION, INV_ZOMBIE_WRITE };
	x->inv = -1;
	for (unsigned i = 0; i < sizeof pref / sizeof pref[0] && x->inv < 0; i++)
		if (x->res.inv[pref[i]].applicable && x->res.inv[pref[i]].violations &&
		    (!xe->cfg->want || (xe->cfg->want & (1u << pref[i]))))
			x->inv = pref[i];
	for (int i = 0; i < INV__COUNT && x->inv < 0; i++)
		if (x->res.inv[i].applicable && x->res.inv[i].violations && (!xe->cfg->want || (xe->cfg->want & (1u << i))))
			x->inv = i;
	if (x->inv >= 0)
		x->outcome = XO_FAIL;
	return 0;
}

int xext_exec(struct xext *xe, const struct xshape *sh, xchoose choose, void *ctx, struct xe_exec *x)
{
	x->sh = *sh;
	x->ndev = x->nline = 0;
	x->decisions = 0;
	x->outcome = XO_PASS;
	x->inv = -1;
	x->stall_ms = 0;
	x->why[0] = '\0';
	memset(&x->res, 0, sizeof x->res);
	xe->nrec = 0;
	xe->seq = 0;
	xe->now_ms = 0;
	xe->lock_creator = -1;
	xe->lock_ino = 0;
	xe->acquires = 0;
	nftw(xe->store, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (mkdir(xe->store, 0755) != 0)
		return xe_fail(x, "mkdir %s: %s", xe->store, strerror(errno));
	int rc = 0;
	/* the adapters started during the last execution (a runtime's start-up is
	 * most of an execution's time), else new ones; then the next ones */
	for (unsigned w = 0; w < xe->n; w++) {
		if (xe->spare[0][w].pid > 0) {
			xe->w[w] = xe->spare[0][w];
			xe->spare[0][w].pid = 0;
		} else if (xe_spawn(xe, w, &xe->w[w], x) != 0) {
			rc = -1;
			goto out;
		}
	}
	for (unsigned p = 0; p + 1 < XE_POOL; p++)
		memcpy(xe->spare[p], xe->spare[p + 1], sizeof xe->spare[p]);
	for (unsigned p = 0; p < XE_POOL; p++)
		for (unsigned w = 0; w < xe->n; w++)
			if ((p == XE_POOL - 1 || xe->spare[p][w].pid <= 0) && xe_spawn(xe, w, &xe->spare[p][w], x) != 0) {
				rc = -1;
				goto out;
			}
	for (unsigned w = 0; w < xe->n; w++) {
		xe_record(xe, w, EV_WORKER_START, 0, 0, 0, 0);
		if (xe_pump(xe, x, w) != 0) {
			rc = -1;
			goto out;
		}
	}
	if (xe_loop(xe, choose, ctx, x) != 0) {
		rc = -1;
		goto out;
	}
	for (unsigned w = 0; w < xe->n; w++)
		xe_record(xe, w, EV_WORKER_EXIT, 0, 0, 0, 0);
out:
	xe_reap(xe);
	xe->execs++;
	if (x->decisions > xe->kest)
		xe->kest = x->decisions;
	if (rc != 0)
		return -1;
	return xe_judge(xe, x);
}

int xext_replay_dev(struct xext *xe, const struct xshape *sh, const struct xchoice *dev, size_t ndev,
		    struct xe_exec *x)
{
	struct xreplay r = { dev, ndev, 0 };
	struct xshape copy = *sh;
	return xext_exec(xe, &copy, choose_replay, &r, x);
}
