/*
 * extworker.c - external workers: fork, exec the adapter, turn its event
 * lines into journal records, answer its `next`, fault it from outside
 * (see extworker.h and docs/external-workers.md).
 *
 * What the driver can and cannot know about an adapter:
 *   - it sees events only when their lines arrive, after the fact, stamped
 *     with the adapter's CLOCK_MONOTONIC time: the records keep that time and
 *     get their global order afterwards (ext_resequence), never from arrival;
 *   - it cannot pause the adapter at a step: stall, stop and crash rules act
 *     at the event lines (points ext/<op>/after-<event>) with SIGSTOP/SIGCONT
 *     or SIGKILL of the adapter's process group, a moment after the event;
 *   - inside the adapter, faults at file-system calls come from the preload
 *     shim (errno, short-write, stall, crash at fs/<call>), limited to the
 *     work directory unless a rule names its own path=.
 *
 * An adapter that breaks the protocol (a line that does not parse, silence
 * outside a lock call, an exit before `stop`) is killed and reported with the
 * tail of its stderr; the run then ends with exit 3 and no verdict.  A lock
 * call that does not return (silence between `attempt` and its outcome, or
 * between `release-begin` and `released`) is a liveness finding instead,
 * journalled as EV_LIVENESS like a built-in worker's.
 */
#include "hosts.h"
#include "extworker.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/fsutil.h"
#include "../faults/fault.h"
#include "../faults/fsx.h"
#include "../faults/preload/preload.h"
#include "../protocols/external.h"
#include "../workloads/workload.h"
#include "exec.h"
#include "extline.h"
#include "extrun.h"
#include "runcfg.h"

#define EXT_START_MS 30000   /* an adapter's start-up (a Node or Python runtime) until its first `next`, */
#define EXT_START_MIN_MS 10000 /* cut to the run's duration, but not below this; plus the watchdog's margin */
#define EXT_CLOCK_SLACK_NS 1000000000LL /* a line stamped later than now by more than this is not CLOCK_MONOTONIC */
#define EXT_TAIL_LINES 5

/* ---- set-up ---- */

/* Where the shipped adapters live: each directory on $LOCKSTORM_ADAPTERS (a
 * ':' list), then beside the binary (<exe>/../adapters: the source tree's
 * build/, or an install's share), then the source tree this binary was
 * built from. */
static int ext_find_adapter(const struct ext_adapter *a, char *out, size_t len, char *why, size_t wlen)
{
	char self[PATH_MAX], tried[1024] = "";
	const char *env = getenv("LOCKSTORM_ADAPTERS");
	const char *dirs[12];
	char d1[PATH_MAX + 32], d2[PATH_MAX + 32], d3[PATH_MAX + 32], list[4096];
	int nd = 0;
	snprintf(list, sizeof list, "%s", env ? env : "");
	for (char *save = NULL, *d = strtok_r(list, ":", &save); d && nd < 8; d = strtok_r(NULL, ":", &save))
		dirs[nd++] = d;
	{
		if (fsutil_exe_dir(self, sizeof self) == 0) {
			const char *dir = self;
			snprintf(d1, sizeof d1, "%s/../adapters", dir);
			snprintf(d2, sizeof d2, "%s/../../adapters", dir);
			snprintf(d3, sizeof d3, "%s/../share/lockstorm/adapters", dir);
			dirs[nd++] = d1;
			dirs[nd++] = d2;
			dirs[nd++] = d3;
		}
#ifdef LS_SOURCE_DIR
		const char *off = getenv("LOCKSTORM_NO_SOURCE_TREE"); /* core/fsutil.h */
		if (!(off && *off))
			dirs[nd++] = LS_SOURCE_DIR "/adapters";
#endif
	}
	size_t used = 0;
	for (int i = 0; i < nd; i++) {
		char p[PATH_MAX * 2];
		snprintf(p, sizeof p, "%s/%s", dirs[i], a->run);
		if (access(p, F_OK) == 0) {
			if (access(p, X_OK) != 0)
				return runcfg_fail(why, wlen, "ext:%s: adapter %s is not executable", a->name, p);
			if (!realpath(p, out))
				snprintf(out, len, "%s", p);
			return 0;
		}
		used += (size_t)snprintf(tried + used, used < sizeof tried ? sizeof tried - used : 0, "%s%s",
					 i ? ", " : "", p);
	}
	return runcfg_fail(why, wlen, "ext:%s: adapter not found (tried %s; LOCKSTORM_ADAPTERS names the adapters "
				"directory)", a->name, tried);
}

/* The command of the run's external protocol slot (explore's adapters): 0, or 2 with why. */
int ext_command(const struct run_config *cfg, unsigned slot, char *out, size_t len, int *shell, char *why,
		size_t wlen)
{
	const struct ext_adapter *a = ext_of(cfg->proto[slot]);
	if (!a)
		return runcfg_fail(why, wlen, "%s is not an external adapter", cfg->proto[slot]->name), 2;
	*shell = a->run == NULL;
	if (!a->run) {
		if (!cfg->exec_cmd[0])
			return runcfg_fail(why, wlen, "-p exec needs --exec 'CMD'"), 2;
		snprintf(out, len, "%s", cfg->exec_cmd);
		return 0;
	}
	if (a->run[0] == '/') {
		snprintf(out, len, "%s", a->run);
		return access(out, X_OK) == 0 ? 0 : (runcfg_fail(why, wlen, "ext:%s: adapter %s is not executable",
								   a->name, out), 2);
	}
	return ext_find_adapter(a, out, len, why, wlen) ? 2 : 0;
}

int ext_prepare(struct ext_run **out, struct run_config *cfg, struct arena *arena,
		struct fault_state *fstates, const char *state_file,
		char *why, size_t len)
{
	*out = NULL;
	const char *cmd[CFG_MAX_PROTOS] = { NULL };
	static char paths[CFG_MAX_PROTOS][PATH_MAX];
	int any = 0;
	for (unsigned i = 0; i < cfg->nproto; i++) {
		const struct ext_adapter *a = ext_of(cfg->proto[i]);
		if (!a)
			continue;
		any = 1;
		if (a->workloads && !(a->workloads & (cfg->workload == &hold_workload ? 2u : 1u))) {
			runcfg_fail(why, len, "ext:%s: its manifest does not list the '%s' workload", a->name,
				    cfg->workload->name);
			return 2;
		}
		if (a->run && a->run[0] == '/') { /* a user's adapter: its manifest's directory */
			if (access(a->run, X_OK) != 0) {
				runcfg_fail(why, len, "ext:%s: adapter %s %s (its manifest's \"run\")", a->name, a->run,
					    access(a->run, F_OK) != 0 ? "not found" : "is not executable");
				return 2;
			}
			cmd[i] = a->run;
		} else if (!a->run) {
			if (!cfg->exec_cmd[0]) {
				runcfg_fail(why, len, "-p exec needs --exec 'CMD'");
				return 2;
			}
			cmd[i] = cfg->exec_cmd;
		} else {
			if (ext_find_adapter(a, paths[i], sizeof paths[i], why, len) != 0)
				return 2;
			cmd[i] = paths[i];
		}
	}
	if (!any)
		return 0;
	if (cfg->workload != &update_workload && cfg->workload != &hold_workload) {
		runcfg_fail(why, len, "external adapters run the update and hold workloads only (not '%s')",
				 cfg->workload->name);
		return 2;
	}
	struct ext_run *x = calloc(1, sizeof *x + cfg->workers * sizeof x->slot[0]);
	if (!x) {
		runcfg_fail(why, len, "out of memory");
		return 3;
	}
	x->cfg = cfg;
	x->arena = arena;
	x->fstates = fstates;
	x->state_file = state_file;
	x->n = cfg->workers;
	x->sigfd = -1;
	x->keeper_fd = -1;
	for (unsigned w = 0; w < cfg->workers; w++) {
		struct ext_slot *s = &x->slot[w];
		unsigned slot = cfg_proto_slot(cfg, w);
		s->ev_fd = s->ctl_fd = s->child_ev = s->child_ctl = -1;
		s->log_fd = s->child_log = s->log_out = -1;
		s->j.fd = -1;
		if (!cmd[slot])
			continue;
		s->ext = 1;
		s->cmd = cmd[slot];
		s->shell = ext_of(cfg->proto[slot])->run == NULL;
		s->ops = cfg->proto[slot];
		s->pvals = cfg->pvals[slot];
		int si = param_index(s->ops->params, "stale_ms");
		s->stale_ms = si >= 0 ? s->pvals[si] : 10000;
		if (s->stale_ms == LS_NEVER) /* stale_ms=never: nominal, to size for=1.5stale */
			s->stale_ms = 10000;
		s->budget_ms = runcfg_budget_ms(cfg, w);
	}
	if (cfg->workload == &hold_workload) {
		int hi = param_index(hold_workload.params, "hold_ms"), ji = param_index(hold_workload.params, "hold_jitter");
		x->hold_ms = cfg->wvals[hi] + cfg->wvals[hi] * cfg->wvals[ji] / 100;
	}
	int rc = 3;
	if (ext_plan(x, why, len) != 0)
		goto out_free;
	/* the state file's folder: adapters find it there */
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", state_file);
	if (mkdir(dirname(dir), 0777) != 0 && errno != EEXIST) {
		runcfg_fail(why, len, "cannot make %s: %s", dir, strerror(errno));
		goto out_free;
	}
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	x->sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	if (x->sigfd < 0) {
		runcfg_fail(why, len, "signalfd: %s", strerror(errno));
		goto out_free;
	}
	/* a write to the stdin of an adapter that died is EPIPE, not our death */
	struct sigaction ign;
	memset(&ign, 0, sizeof ign);
	ign.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &ign, &x->old_pipe);
	if (ext_keeper_start(x) != 0) {
		runcfg_fail(why, len, "cannot start the adapters' keeper: %s", strerror(errno));
		sigaction(SIGPIPE, &x->old_pipe, NULL);
		goto out_free;
	}
	*out = x;
	return 0;
out_free:
	ext_keeper_stop(x);
	if (x->sigfd >= 0)
		close(x->sigfd);
	free(x->specs);
	free(x);
	return rc;
}

int ext_is(const struct ext_run *x, unsigned id)
{
	return x && id < x->n && x->slot[id].ext;
}

pid_t ext_group(const struct ext_run *x, unsigned id)
{
	return x->slot[id].pgid;
}

int ext_failed(const struct ext_run *x)
{
	return x ? x->fail_rc : 0;
}

/* ---- records ---- */

static void ext_record(struct ext_run *x, unsigned id, int type, int err, int64_t a, int64_t b, int64_t c,
		       uint64_t ns)
{
	struct ext_slot *s = &x->slot[id];
	struct jrec r;
	memset(&r, 0, sizeof r);
	r.type = (uint16_t)type;
	r.worker = (uint16_t)id;
	r.pid = s->rec_pid;
	r.op = s->op;
	r.err = err;
	r.seq = journal_next_seq(); /* arrival order; ext_resequence orders by time */
	r.ns = ns;
	r.a = a;
	r.b = b;
	r.c = c;
	if (journal_write(&s->j, &r) != 0)
		fprintf(stderr, "lockstorm: w%u: cannot journal: %s\n", id, strerror(errno));
	struct arena_worker *aw = &x->arena->w[id];
	atomic_fetch_add(&aw->progress, 1);
	switch (type) {
	case EV_ACQUIRED:
		atomic_fetch_add(&aw->acquired, 1);
		break;
	case EV_COMMIT:
		atomic_fetch_add(&aw->committed, 1);
		break;
	case EV_BUSY:
		atomic_fetch_add(&aw->busy, 1);
		break;
	case EV_ACQUIRE_ERROR:
	case EV_WRITE_ERROR:
	case EV_RELEASE_ERROR:
		atomic_fetch_add(&aw->errors, 1);
		break;
	case EV_LOST:
		atomic_fetch_add(&aw->lost, 1);
		break;
	case EV_RELEASED:
		atomic_fetch_add(&aw->ops, 1);
		break;
	default:
		break;
	}
}

/* The last lines of the adapter's stderr, indented, to stderr. */
static void ext_log_tail(const struct ext_run *x, unsigned id)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/adapter-w%u.log", x->cfg->outdir, id);
	FILE *f = fopen(p, "r");
	if (!f)
		return;
	static char ring[EXT_TAIL_LINES][512];
	unsigned n = 0;
	char line[512];
	int cont = 0; /* inside a line longer than line[]: its first part is shown */
	while (fgets(line, sizeof line, f)) {
		size_t k = strcspn(line, "\n");
		int whole = line[k] == '\n';
		line[k] = '\0';
		if (!cont) {
			snprintf(ring[n % EXT_TAIL_LINES], sizeof ring[0], "%s%s", line, whole ? "" : "...");
			n++;
		}
		cont = !whole;
	}
	fclose(f);
	if (!n) {
		fprintf(stderr, "  (its stdout and stderr, %s, are empty)\n", p);
		return;
	}
	fprintf(stderr, "  last lines of its stdout and stderr (%s):\n", p);
	for (unsigned i = n > EXT_TAIL_LINES ? n - EXT_TAIL_LINES : 0; i < n; i++)
		fprintf(stderr, "    | %s\n", ring[i % EXT_TAIL_LINES]);
}

static int ext_pump_log(struct ext_run *x, unsigned id);

/* An adapter broke the protocol: say so, kill it, end the run. */
static void ext_fail(struct ext_run *x, unsigned id, int rc, int tail, const char *fmt, ...)
{
	struct ext_slot *s = &x->slot[id];
	if (s->failed)
		return;
	s->failed = 1;
	ext_kill_group(x, id);
	char msg[EXT_LINE_MAX + 256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (isatty(STDERR_FILENO) && !x->cfg->quiet)
		fprintf(stderr, "\r%80s\r", ""); /* the status line */
	fprintf(stderr, "lockstorm: w%u: %s\n", id, msg);
	if (tail) {
		if (s->log_fd >= 0 && s->log_bytes < EXT_LOG_MAX)
			ext_pump_log(x, id); /* what it wrote before it was killed */
		ext_log_tail(x, id);
	}
	if (!x->fail_rc)
		x->fail_rc = rc;
	atomic_store(&x->arena->stop, 1);
}

/* ---- the control pipe ---- */

static void ext_say(struct ext_run *x, unsigned id, const char *text)
{
	struct ext_slot *s = &x->slot[id];
	size_t n = strlen(text);
	ssize_t k;
	do
		k = write(s->ctl_fd, text, n);
	while (k < 0 && errno == EINTR);
	if (k < 0 && errno == EAGAIN)
		ext_fail(x, id, 3, 1, "adapter does not read its stdin (the control pipe is full)");
	/* EPIPE: it is gone; the reaper says why */
}

static void ext_answer(struct ext_run *x, unsigned id)
{
	struct ext_slot *s = &x->slot[id];
	s->waiting = 0;
	if (s->told_stop || !arena_claim_op(x->arena)) {
		s->told_stop = 1;
		ext_say(x, id, "stop\n");
		return;
	}
	s->op = atomic_fetch_add(&x->arena->w[id].next_op, 1);
	s->has_op = 1;
	s->phase = PH_IDLE;
	char line[32];
	snprintf(line, sizeof line, "op %u\n", s->op);
	ext_say(x, id, line);
}

void ext_go(struct ext_run *x)
{
	x->go = 1;
	for (unsigned i = 0; i < x->n; i++)
		if (x->slot[i].ext && x->slot[i].waiting && x->slot[i].pid && !x->slot[i].failed)
			ext_answer(x, i);
}

/* ---- faults from outside ---- */

static void ext_fault(struct ext_run *x, unsigned id, int pt)
{
	struct ext_slot *s = &x->slot[id];
	if (pt < 0 || !x->mask[pt] || s->crash_ns || s->failed || !s->pid)
		return;
	struct fault_action act = fault_check_mask(&x->cfg->faults, &x->fstates[id], &s->rng, id,
						   ext_point_names[pt], x->mask[pt], NULL, s->stale_ms);
	int64_t now = fsx_mono_ns();
	if (act.kind == FK_STALL || act.kind == FK_STOP) {
		ext_record(x, id, EV_FAULT, 0, act.kind, (int64_t)x->hash[pt], act.stall_ms, (uint64_t)now);
		kill(-s->pid, SIGSTOP);
		int64_t until = now + act.stall_ms * 1000000LL;
		if (until > s->stop_until)
			s->stop_until = until;
		if (until > atomic_load(&x->arena->stall_until_ns))
			atomic_store(&x->arena->stall_until_ns, until);
		atomic_fetch_add(&x->arena->w[id].stalls, 1);
	} else if (act.kind == FK_CRASH) {
		/* stamped before the kill: lines stamped after it are dropped, so the
		 * journal never shows the worker acting after its crash */
		ext_record(x, id, EV_FAULT, 0, FK_CRASH, (int64_t)x->hash[pt], 0, (uint64_t)now);
		kill(-s->pid, SIGKILL);
		s->crash_ns = now;
		atomic_fetch_add(&x->arena->w[id].crashes, 1);
	}
}

/* ---- lines ---- */

static void ext_line(struct ext_run *x, unsigned id, char *line)
{
	struct ext_slot *s = &x->slot[id];
	if (s->failed)
		return;
	size_t n = strlen(line);
	if (n && line[n - 1] == '\r')
		line[--n] = '\0';
	char shown[120];
	snprintf(shown, sizeof shown, "%.100s%s", line, n > 100 ? "..." : "");
	struct ext_event ev;
	char why[256];
	if (ext_parse_line(line, &ev, why, sizeof why) != 0) {
		if (!s->crash_ns)
			ext_fail(x, id, 3, 0, "adapter sent a bad line: \"%s\" (%s)", shown, why);
		return;
	}
	int64_t now = fsx_mono_ns();
	s->last_ns = now;
	s->lines++;
	if (ev.log) {
		if (x->cfg->verbose)
			fprintf(stderr, "w%u: %s\n", id, ev.text);
		return;
	}
	if (s->crash_ns && (!ev.ns || (int64_t)ev.ns > s->crash_ns))
		return; /* after its crash: it is dead as far as the journal goes */
	if (ev.next) {
		if (!s->started) {
			s->started = 1;
			if (!x->go) {
				s->waiting = 1;
				atomic_fetch_add(&x->arena->ready, 1);
				return;
			}
		}
		ext_answer(x, id);
		return;
	}
	snprintf(s->last_line, sizeof s->last_line, "%s", shown);
	if ((int64_t)ev.ns > now + EXT_CLOCK_SLACK_NS || (int64_t)ev.ns < s->spawn_ns) {
		ext_fail(x, id, 3, 0, "adapter sent a bad line: \"%s\" (timestamp %s the adapter's start: not "
			 "CLOCK_MONOTONIC nanoseconds)", shown, (int64_t)ev.ns < s->spawn_ns ? "before" : "far after");
		return;
	}
	if (ev.ns < s->last_ev_ns) {
		ext_fail(x, id, 3, 0, "adapter sent a bad line: \"%s\" (timestamp earlier than its previous line's)",
			 shown);
		return;
	}
	if (!s->has_op || s->told_stop) {
		ext_fail(x, id, 3, 0, "adapter sent a bad line: \"%s\" (an event %s)", shown,
			 s->told_stop ? "after it was told to stop" : "before it was given an op");
		return;
	}
	s->last_ev_ns = ev.ns;
	ext_record(x, id, ev.type, ev.err, ev.a, ev.b, 0, ev.ns);
	switch (ev.type) {
	case EV_ATTEMPT:
		s->phase = PH_ATTEMPT;
		break;
	case EV_ACQUIRED:
		s->phase = PH_HOLD;
		break;
	case EV_BUSY:
	case EV_ACQUIRE_ERROR:
	case EV_RELEASED:
	case EV_RELEASE_ERROR:
		s->phase = PH_IDLE;
		break;
	case EV_RELEASE_BEGIN:
		s->phase = PH_RELEASE;
		break;
	default:
		break;
	}
	ext_fault(x, id, ext_point_of(ev.type));
}

/* Read what the pipe has; 1 at EOF. */
static int ext_pump(struct ext_run *x, unsigned id)
{
	struct ext_slot *s = &x->slot[id];
	for (size_t got = 0; got < EXT_PUMP_MAX; ) { /* then the others' turn: poll comes back */
		ssize_t k = read(s->ev_fd, s->buf + s->len, EXT_LINE_MAX - s->len);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return 0; /* EAGAIN: all read */
		if (k == 0)
			return 1;
		got += (size_t)k;
		s->len += (size_t)k;
		char *start = s->buf, *nl;
		while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf)))) {
			*nl = '\0';
			ext_line(x, id, start);
			start = nl + 1;
		}
		s->len -= (size_t)(start - s->buf);
		memmove(s->buf, start, s->len);
		if (s->len == EXT_LINE_MAX) {
			s->buf[60] = '\0';
			ext_fail(x, id, 3, 0, "adapter sent a bad line: \"%s...\" (longer than %d bytes)", s->buf,
				 EXT_LINE_MAX);
			s->len = 0;
		}
	}
	return 0;
}

/* Copy what its stdout/stderr pipe has into its log, within EXT_LOG_MAX bytes
 * and lines of EXT_LOG_LINE_MAX; past either the adapter is failed.  1 at EOF. */
static int ext_pump_log(struct ext_run *x, unsigned id)
{
	struct ext_slot *s = &x->slot[id];
	char buf[16384];
	for (size_t got = 0; got < EXT_PUMP_MAX; ) {
		ssize_t k = read(s->log_fd, buf, sizeof buf);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return 0;
		if (k == 0)
			return 1;
		got += (size_t)k;
		if (s->failed && s->log_bytes >= EXT_LOG_MAX)
			continue; /* drained, not kept */
		size_t keep = (size_t)k;
		if (s->log_bytes + keep > EXT_LOG_MAX)
			keep = EXT_LOG_MAX - s->log_bytes;
		size_t line = s->log_line, longest = 0;
		for (size_t i = 0; i < (size_t)k; i++) {
			line = buf[i] == '\n' ? 0 : line + 1;
			if (line > longest)
				longest = line;
		}
		s->log_line = line;
		if (s->log_out >= 0 && keep && write(s->log_out, buf, keep) < 0)
			fprintf(stderr, "lockstorm: w%u: cannot write its log: %s\n", id, strerror(errno));
		s->log_bytes += keep;
		if (keep < (size_t)k)
			ext_fail(x, id, 3, 1, "adapter wrote more than %u MB to its stdout and stderr (the log's bound)",
				 EXT_LOG_MAX >> 20);
		else if (longest > EXT_LOG_LINE_MAX)
			ext_fail(x, id, 3, 1, "adapter wrote a line longer than %d bytes to its stdout or stderr "
				 "(the log's bound)", EXT_LOG_LINE_MAX);
	}
	return 0;
}

void ext_wait(struct ext_run *x, int64_t ms)
{
	struct pollfd *pf = calloc(2 * x->n + 1, sizeof *pf);
	unsigned *who = calloc(2 * x->n + 1, sizeof *who);
	if (!pf || !who) {
		free(pf);
		free(who);
		return;
	}
	nfds_t n = 0;
	pf[n].fd = x->sigfd;
	pf[n++].events = POLLIN;
	for (unsigned i = 0; i < x->n; i++) {
		if (x->slot[i].ext && x->slot[i].ev_fd >= 0) {
			who[n] = i;
			pf[n].fd = x->slot[i].ev_fd;
			pf[n++].events = POLLIN;
		}
		if (x->slot[i].ext && x->slot[i].log_fd >= 0) {
			who[n] = i;
			pf[n].fd = x->slot[i].log_fd;
			pf[n++].events = POLLIN;
		}
	}
	if (poll(pf, n, (int)ms) > 0) {
		for (nfds_t k = 1; k < n; k++) {
			if (!pf[k].revents)
				continue;
			struct ext_slot *s = &x->slot[who[k]];
			if (pf[k].fd == s->log_fd) {
				if (ext_pump_log(x, who[k])) {
					close(s->log_fd);
					s->log_fd = -1;
				}
			} else if (ext_pump(x, who[k])) { /* EOF: it closed fd 3 or is gone */
				close(s->ev_fd);
				s->ev_fd = -1;
			}
		}
		if (pf[0].revents) {
			struct signalfd_siginfo si;
			while (read(x->sigfd, &si, sizeof si) > 0)
				;
		}
	}
	free(who);
	free(pf);
}

int ext_watchdog(struct ext_run *x, unsigned id, int64_t extra_ms, struct journal *dj)
{
	struct ext_slot *s = &x->slot[id];
	if (!s->pid || s->failed || s->crash_ns || s->wd_killed)
		return 0;
	int64_t now = fsx_mono_ns();
	if (s->stop_until) {
		if (now < s->stop_until)
			return 0;
		kill(-s->pid, SIGCONT);
		s->stop_until = 0;
		s->last_ns = now;
		return 0;
	}
	if (s->waiting)
		return 0; /* held at the barrier: our doing */
	int64_t since = s->last_ns, global = atomic_load(&x->arena->stall_until_ns);
	if (global > since)
		since = global;
	int64_t quiet_ms = (now - since) / 1000000, limit;
	if (!s->started) {
		/* bounded by the run: a start-up longer than the run itself is not one */
		int64_t start = EXT_START_MS;
		if (x->cfg->duration_ms && (int64_t)x->cfg->duration_ms < start)
			start = (int64_t)x->cfg->duration_ms > EXT_START_MIN_MS ? (int64_t)x->cfg->duration_ms :
										  EXT_START_MIN_MS;
		/* the start-up allowance and the watchdog's margin: not the lock-wait budget as well
		 * (a hung adapter on a 2 s run ended after 22 s, now after 12 s) */
		limit = start + extra_ms;
	}
	else if (s->told_stop)
		limit = s->budget_ms + extra_ms;
	else
		limit = s->budget_ms + extra_ms + x->shim_stall_ms + (s->phase == PH_HOLD ? x->hold_ms : 0);
	if (quiet_ms <= limit)
		return 0;
	if (s->started && !s->told_stop && (s->phase == PH_ATTEMPT || s->phase == PH_RELEASE)) {
		/* the lock call does not return: the lock's liveness, not the adapter's fault */
		int pt = s->phase == PH_ATTEMPT ? PT_ATTEMPT : PT_RELEASE_BEGIN;
		journal_log(dj, EV_LIVENESS, id, 0, (int64_t)x->hash[pt], quiet_ms, s->budget_ms);
		s->wd_killed = 1;
		kill(-s->pid, SIGKILL);
		return 1;
	}
	if (!s->started)
		ext_fail(x, id, 3, 1, "adapter hung: no `next` within %lld ms of its start (limit %lld ms)",
			 (long long)quiet_ms, (long long)limit);
	else if (s->told_stop)
		ext_fail(x, id, 3, 1, "adapter hung: it did not exit within %lld ms of being told to stop",
			 (long long)quiet_ms);
	else
		ext_fail(x, id, 3, 1, "adapter hung: no line for %lld ms (limit %lld ms) outside a lock call, after \"%s\"",
			 (long long)quiet_ms, (long long)limit, s->last_line[0] ? s->last_line : "next");
	return 0;
}

/* ---- processes ---- */

int ext_before_fork(struct ext_run *x, unsigned id)
{
	struct ext_slot *s = &x->slot[id];
	int ev[2], ctl[2];
	if (pipe2(ev, O_CLOEXEC) != 0)
		return -1;
	if (pipe2(ctl, O_CLOEXEC) != 0) {
		int e = errno;
		close(ev[0]);
		close(ev[1]);
		errno = e;
		return -1;
	}
	int lg[2];
	if (pipe2(lg, O_CLOEXEC) != 0) {
		int e = errno;
		close(ev[0]);
		close(ev[1]);
		close(ctl[0]);
		close(ctl[1]);
		errno = e;
		return -1;
	}
	if (s->log_out < 0) { /* one log for every incarnation */
		char p[PATH_MAX + 64];
		snprintf(p, sizeof p, "%s/adapter-w%u.log", x->cfg->outdir, id);
		s->log_out = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	}
	fcntl(ev[0], F_SETFL, O_NONBLOCK);
	fcntl(ctl[1], F_SETFL, O_NONBLOCK);
	fcntl(lg[0], F_SETFL, O_NONBLOCK);
	if (s->log_fd >= 0) /* the last incarnation's: a child of it may still hold it */
		close(s->log_fd);
	s->log_fd = lg[0];
	s->child_log = lg[1];
	s->log_line = 0;
	s->ev_fd = ev[0];
	s->child_ev = ev[1];
	s->ctl_fd = ctl[1];
	s->child_ctl = ctl[0];
	s->spawn_ns = fsx_mono_ns();
	return 0;
}

static void ext_setenv_num(const char *name, long long v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", v);
	setenv(name, buf, 1);
}

_Noreturn void ext_child_exec(struct ext_run *x, unsigned id, unsigned incarnation, const sigset_t *mask)
{
	struct ext_slot *s = &x->slot[id];
	const struct run_config *cfg = x->cfg;
	sigprocmask(SIG_SETMASK, mask, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);

	char p[PATH_MAX + 64];
	/* its group, where the keeper finds it should the driver die before
	 * ext_spawned records it */
	if (x->groups)
		atomic_store(&x->groups[id], getpid());
	/* stdin: the control pipe; stdout, stderr: the log pipe; fd 3: the events */
	if (dup2(s->child_ctl, 0) < 0 || dup2(s->child_log, 1) < 0 || dup2(s->child_log, 2) < 0)
		_exit(127);
	if (s->child_ev == 3)
		fcntl(3, F_SETFD, 0);
	else if (dup2(s->child_ev, 3) < 0)
		_exit(127);

	char lock[PATH_MAX + 8];
	snprintf(lock, sizeof lock, "%s.lock", x->state_file);
	setenv("LOCKSTORM_RESOURCE", x->state_file, 1);
	setenv("LOCKSTORM_LOCK", lock, 1);
	setenv("LOCKSTORM_STATE", x->state_file, 1);
	ext_setenv_num("LOCKSTORM_WORKER", id);
	ext_setenv_num("LOCKSTORM_WORKERS", cfg->workers);
	ext_setenv_num("LOCKSTORM_INCARNATION", incarnation);
	char seed[32];
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)cfg->seed);
	setenv("LOCKSTORM_SEED", seed, 1);
	setenv("LOCKSTORM_WORKLOAD", cfg->workload->name, 1);
	char scale[32];
	snprintf(scale, sizeof scale, "%g", cfg->time_scale);
	setenv("LOCKSTORM_TIME_SCALE", scale, 1);
	ext_setenv_num("LOCKSTORM_HOLD_MS", cfg->workload == &hold_workload ?
			       cfg->wvals[param_index(hold_workload.params, "hold_ms")] : 0);
	setenv("LOCKSTORM_EVENT_FD", "3", 1);
	for (int i = 0; s->ops->params[i].name; i++) {
		char name[96];
		int k = snprintf(name, sizeof name, "LOCKSTORM_PARAM_");
		for (const char *c = s->ops->params[i].name; *c && k < (int)sizeof name - 1; c++)
			name[k++] = (*c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c == '-' ? '_' : *c;
		name[k] = '\0';
		ext_setenv_num(name, s->pvals[i] == LS_NEVER ? -1 : s->pvals[i]);
	}
	/* the preload shim, when the plan has rules for the adapter's calls */
	if (x->specs) {
		const char *old = getenv("LD_PRELOAD");
		char pre[PATH_MAX * 2];
		snprintf(pre, sizeof pre, "%s%s%s", x->shim, old && *old ? ":" : "", old && *old ? old : "");
		setenv("LD_PRELOAD", pre, 1);
		setenv(PRELOAD_ENV_FAULTS, x->specs, 1);
		ext_setenv_num(PRELOAD_ENV_STALE, s->stale_ms);
		char lin[32];
		snprintf(lin, sizeof lin, "%08x%08x", id + 1, incarnation);
		setenv(PRELOAD_ENV_LINEAGE, lin, 1);
		snprintf(p, sizeof p, "%s/adapter-w%u.inject", cfg->outdir, id);
		setenv(PRELOAD_ENV_LOG, p, 1);
	} else {
		unsetenv(PRELOAD_ENV_FAULTS);
	}
	ext_exec_cmd(s->cmd, s->shell);
	int e = errno;
	fprintf(stderr, "lockstorm: cannot run %s: %s\n", s->cmd, strerror(e));
	_exit(e == ENOENT ? 127 : 126);
}

void ext_spawned(struct ext_run *x, unsigned id, unsigned incarnation, pid_t pid)
{
	struct ext_slot *s = &x->slot[id];
	close(s->child_ev);
	close(s->child_ctl);
	close(s->child_log);
	s->child_ev = s->child_ctl = s->child_log = -1;
	s->pid = s->pgid = pid;
	s->rec_pid = x->cfg->hosts ? hosts_ns_pid(pid) : pid; /* on a host: its pid there (run/hosts.h) */
	if (x->groups)
		atomic_store(&x->groups[id], pid);
	s->incarnation = incarnation;
	s->len = 0;
	s->started = s->waiting = s->has_op = s->told_stop = s->wd_killed = 0;
	s->phase = PH_IDLE;
	s->lines = 0;
	s->last_ns = fsx_mono_ns();
	s->last_ev_ns = 0;
	s->stop_until = s->crash_ns = 0;
	s->last_line[0] = '\0';
	s->op = atomic_load(&x->arena->w[id].next_op);
	prng_seed(&s->rng, x->cfg->seed, id, incarnation);
	char p[PATH_MAX + 64];
	snprintf(p, sizeof p, "%s/journal/w%04u.bin", x->cfg->outdir, id);
	if (journal_open(&s->j, p, id) != 0)
		ext_fail(x, id, 3, 0, "cannot open %s: %s", p, strerror(errno));
	else
		ext_record(x, id, EV_WORKER_START, 0, incarnation, cfg_host_of(x->cfg, id), 0, (uint64_t)s->spawn_ns);
}

static void ext_close(struct ext_slot *s)
{
	if (s->ev_fd >= 0)
		close(s->ev_fd);
	if (s->ctl_fd >= 0)
		close(s->ctl_fd);
	if (s->log_fd >= 0)
		close(s->log_fd);
	s->ev_fd = s->ctl_fd = s->log_fd = -1;
	journal_close(&s->j);
	s->j.fd = -1;
}

int ext_reaped(struct ext_run *x, unsigned id, int status)
{
	struct ext_slot *s = &x->slot[id];
	s->pid = 0; /* reaped; its group is killed below */
	if (s->log_fd >= 0)
		ext_pump_log(x, id);
	if (s->ev_fd >= 0)
		ext_pump(x, id); /* its last lines */
	if (s->len && !s->failed && !s->crash_ns) {
		s->buf[s->len < 60 ? s->len : 60] = '\0';
		ext_fail(x, id, 3, 1, "adapter sent a bad line: \"%s\" (no newline at its end)", s->buf);
	}
	int64_t now = fsx_mono_ns();
	int generic = 0;
	if (s->failed || s->crash_ns || s->wd_killed) {
		generic = !s->failed;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGKILL && s->shell && x->shim_crash &&
		   !x->killing && ext_needs_shell(s->cmd)) {
		/* the shell of an --exec command reports its adapter's SIGKILL by
		 * the shim: a crash, as below (the group dies with it) */
		ext_record(x, id, EV_FAULT, 0, FK_CRASH, (int64_t)point_hash("fs/*"), 0,
			   (s->last_ev_ns ? s->last_ev_ns : (uint64_t)s->spawn_ns) + 1);
		generic = 1;
	} else if (WIFEXITED(status)) {
		int code = WEXITSTATUS(status);
		ext_record(x, id, EV_WORKER_EXIT, 0, code, 0, 0, (uint64_t)now);
		if (code != 0 || !s->told_stop) {
			pid_t pid = s->rec_pid;
			if ((code == 126 || code == 127) && !s->lines)
				ext_fail(x, id, 2, 1, "adapter command could not be run (exit %d): %s", code, s->cmd);
			else
				ext_fail(x, id, 3, 1, "adapter (pid %d) exited with status %d %s", (int)pid, code,
					 s->told_stop ? "after it was told to stop" :
					 s->lines ? "before it was told to stop" : "before its first line");
		}
	} else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) {
		/* the shim's crash (or the driver's kill at the end, or the OOM
		 * killer): the hold is judged to end at its last reported event,
		 * the latest moment it is known to have been alive */
		if (x->shim_crash && !x->killing)
			ext_record(x, id, EV_FAULT, 0, FK_CRASH, (int64_t)point_hash("fs/*"), 0,
				   (s->last_ev_ns ? s->last_ev_ns : (uint64_t)s->spawn_ns) + 1);
		generic = 1;
	} else if (WIFSIGNALED(status)) {
		ext_fail(x, id, 3, 1, "adapter killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
	}
	s->pid = 0;
	ext_kill_group(x, id); /* what it left behind (`sleep 777 &`) ends with it */
	ext_close(s);
	return generic;
}

void ext_kill_all(struct ext_run *x)
{
	x->killing = 1;
	for (unsigned i = 0; i < x->n; i++)
		if (x->slot[i].ext && x->slot[i].pid && x->slot[i].pgid)
			kill(-x->slot[i].pgid, SIGKILL); /* ext_reaped forgets the group */
}

void ext_free(struct ext_run *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->n; i++)
		if (x->slot[i].ext) {
			ext_kill_group(x, i);
			ext_close(&x->slot[i]);
			if (x->slot[i].log_out >= 0)
				close(x->slot[i].log_out);
		}
	ext_keeper_stop(x);
	sigaction(SIGPIPE, &x->old_pipe, NULL);
	if (x->sigfd >= 0)
		close(x->sigfd);
	free(x->specs);
	free(x);
}

