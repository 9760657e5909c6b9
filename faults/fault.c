/*
 * fault.c - parse fault specs, expand profiles, decide at points (see fault.h).
 *
 * Every decision is a draw from the worker's own PRNG, made only when a rule
 * matches (point, path, worker): the same seed and the same sequence of
 * points give the same decisions, whatever else runs on the machine.
 */
#include "fault.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../core/num.h"

static const char *const kind_names[FK__COUNT] = {
	[FK_NONE] = "none",
	[FK_STALL] = "stall",
	[FK_CRASH] = "crash",
	[FK_STOP] = "stop",
	[FK_ERRNO] = "errno",
	[FK_SHORT_WRITE] = "short-write",
	[FK_SWEEP] = "sweep",
	[FK_SKEW] = "skew",
	[FK_COARSE_MTIME] = "coarse-mtime",
	[FK_PID_REUSE] = "pid-reuse",
	[FK_SPLIT_ID] = "split-identity",
	[FK_OTHER_HOST] = "other-host",
};

/* Which keys each kind takes (beyond p, nth, once, workers). */
enum { K_FOR = 1, K_ERR = 2, K_PATH = 4, K_BYTES = 8, K_EVERY = 16, K_BY = 32, K_RES = 64, K_HOST = 128 };
static const unsigned kind_keys[FK__COUNT] = {
	[FK_STALL] = K_FOR | K_PATH,
	[FK_CRASH] = K_PATH,
	[FK_STOP] = K_FOR | K_PATH,
	[FK_ERRNO] = K_ERR | K_PATH,
	[FK_SHORT_WRITE] = K_FOR | K_ERR | K_PATH | K_BYTES,
	[FK_SWEEP] = K_EVERY | K_PATH,
	[FK_SKEW] = K_BY | K_HOST,
	[FK_COARSE_MTIME] = K_RES,
	[FK_PID_REUSE] = 0,
	[FK_SPLIT_ID] = 0,
	[FK_OTHER_HOST] = 0,
};

const char *fault_kind_name(enum fault_kind k)
{
	return (unsigned)k < FK__COUNT ? kind_names[k] : "?";
}

static int point_level(enum fault_kind k)
{
	return k == FK_STALL || k == FK_CRASH || k == FK_STOP || k == FK_ERRNO || k == FK_SHORT_WRITE;
}

static int bad(char *why, size_t len, const char *spec, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	snprintf(why, len, "bad fault spec '%s': %s", spec, msg);
	errno = EINVAL;
	return -1;
}

/* for=300ms | 2s | 1.5stale (core/num.h) */
static int parse_for(struct fault_rule *r, const char *v, char *why, size_t len)
{
	struct num_dur d;
	if (num_duration(v, NUM_STALE, &d, why, len))
		return -1;
	r->for_ms = d.is_stale ? -1 : d.ms;
	r->for_stale = d.is_stale ? d.stale : r->for_stale;
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	return num_u64(s, 0, UINT64_MAX, out, NULL, 0);
}

/* workers=0,2,5-7: the key list is split on commas first, so the ids after
 * the first arrive as bare tokens (see fault_parse); '+' also joins them. */
static int parse_workers(struct fault_rule *r, const char *v)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	r->workers_all = 0;
	for (char *save = NULL, *tok = strtok_r(buf, "+", &save); tok; tok = strtok_r(NULL, "+", &save)) {
		char *dash = strchr(tok, '-');
		uint64_t lo, hi;
		if (dash) {
			*dash = '\0';
			if (parse_u64(tok, &lo) || parse_u64(dash + 1, &hi) || hi < lo)
				return -1;
		} else {
			if (parse_u64(tok, &lo))
				return -1;
			hi = lo;
		}
		if (hi >= 16 * 64)
			return -1;
		for (uint64_t w = lo; w <= hi; w++)
			r->workers[w / 64] |= 1ULL << (w % 64);
	}
	return 0;
}

int fault_errno_parse(const char *name)
{
	if (isdigit((unsigned char)*name)) {
		uint64_t v;
		if (parse_u64(name, &v) || v == 0 || v > 4095)
			return -1;
		return (int)v;
	}
	for (int e = 1; e < 4096; e++) {
		const char *n = strerrorname_np(e);
		if (n && !strcmp(n, name))
			return e;
	}
	return -1;
}

static const char *key_name(unsigned k)
{
	switch (k) {
	case K_FOR: return "for";
	case K_ERR: return "err";
	case K_PATH: return "path";
	case K_BYTES: return "bytes";
	case K_EVERY: return "every";
	case K_BY: return "by";
	case K_RES: return "res";
	case K_HOST: return "host";
	default: return "?";
	}
}

static int key_allowed(const struct fault_rule *r, unsigned key, const char *spec, char *why, size_t whylen)
{
	if (kind_keys[r->kind] & key)
		return 0;
	return bad(why, whylen, spec, "%s= does not apply to %s", key_name(key), kind_names[r->kind]);
}

int fault_parse(struct fault_plan *plan, const char *spec, char *why, size_t whylen)
{
	if (plan->n >= FAULT_MAX_RULES)
		return bad(why, whylen, spec, "too many fault rules (at most %d)", FAULT_MAX_RULES);
	struct fault_rule r;
	memset(&r, 0, sizeof r);
	r.p = 1.0;
	r.for_ms = -1;
	r.for_stale = 1.0;
	r.workers_all = 1;
	r.every_ms = 5;
	r.res_ms = 1000;
	r.bytes = 1;
	snprintf(r.spec, sizeof r.spec, "%s", spec);

	char buf[512];
	if (strlen(spec) >= sizeof buf)
		return bad(why, whylen, spec, "too long");
	snprintf(buf, sizeof buf, "%s", spec);

	char *keys = strchr(buf, ':');
	if (keys)
		*keys++ = '\0';
	char *at = strchr(buf, '@');
	if (at)
		*at++ = '\0';

	for (int k = FK_NONE + 1; k < FK__COUNT; k++)
		if (!strcmp(buf, kind_names[k]))
			r.kind = (enum fault_kind)k;
	if (r.kind == FK_NONE)
		return bad(why, whylen, spec, "unknown kind '%s' (known: stall, stop, crash, errno, short-write, "
			   "sweep, skew, coarse-mtime, pid-reuse, split-identity, other-host)", buf);
	r.err = r.kind == FK_SHORT_WRITE ? ENOSPC : EIO;
	snprintf(r.point, sizeof r.point, "%s",
		 r.kind == FK_ERRNO ? "fs/*" : r.kind == FK_SHORT_WRITE ? "fs/write" : "*");
	if (at) {
		if (!point_level(r.kind))
			return bad(why, whylen, spec, "%s acts on the whole worker or run: it takes no @POINT",
				   kind_names[r.kind]);
		if (!*at)
			return bad(why, whylen, spec, "empty point after '@'");
		if (strlen(at) >= sizeof r.point)
			return bad(why, whylen, spec, "point '%s' too long", at);
		if ((r.kind == FK_ERRNO || r.kind == FK_SHORT_WRITE) && strncmp(at, "fs/", 3) && strcmp(at, "*"))
			return bad(why, whylen, spec, "%s acts on a call: its point is fs/<call>, not '%s'",
				   kind_names[r.kind], at);
		snprintf(r.point, sizeof r.point, "%s", at);
	}

	int saw_by = 0, saw_for = 0, saw_err = 0;
	if (keys) {
		if (!*keys)
			return bad(why, whylen, spec, "empty key list after ':'");
		int in_workers = 0;
		for (char *save = NULL, *kv = strtok_r(keys, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(kv, '=');
			char *val = eq ? eq + 1 : NULL;
			if (eq)
				*eq = '\0';
			if (in_workers && !val && isdigit((unsigned char)*kv)) {
				if (parse_workers(&r, kv))
					return bad(why, whylen, spec, "workers: '%s' is not an id or range", kv);
				continue;
			}
			in_workers = 0;
			if (!strcmp(kv, "once") && !val) {
				r.once = 1;
			} else if (!val || !*val) {
				return bad(why, whylen, spec, "key '%s' needs a value (%s=...)", kv, kv);
			} else if (!strcmp(kv, "p")) {
				char msg[160];
				if (num_real(val, 0, 1, 0, &r.p, msg, sizeof msg))
					return bad(why, whylen, spec, "p=%s: %s (a probability)", val, msg);
			} else if (!strcmp(kv, "nth")) {
				char msg[160];
				if (num_u64(val, 1, UINT64_MAX, &r.nth, msg, sizeof msg))
					return bad(why, whylen, spec, "nth=%s: %s", val, msg);
			} else if (!strcmp(kv, "for")) {
				char msg[160];
				if (key_allowed(&r, K_FOR, spec, why, whylen))
					return -1;
				if (parse_for(&r, val, msg, sizeof msg))
					return bad(why, whylen, spec, "for=%s: %s", val, msg);
				saw_for = 1;
			} else if (!strcmp(kv, "err")) {
				if (key_allowed(&r, K_ERR, spec, why, whylen))
					return -1;
				if ((r.err = fault_errno_parse(val)) < 0)
					return bad(why, whylen, spec, "err=%s: not an errno name (EPERM, EACCES, ENOSPC, ...)", val);
				saw_err = 1;
			} else if (!strcmp(kv, "path")) {
				if (key_allowed(&r, K_PATH, spec, why, whylen))
					return -1;
				if (strlen(val) >= sizeof r.path)
					return bad(why, whylen, spec, "path=%s: too long", val);
				snprintf(r.path, sizeof r.path, "%s", val);
			} else if (!strcmp(kv, "bytes")) {
				uint64_t b;
				char msg[160];
				if (key_allowed(&r, K_BYTES, spec, why, whylen))
					return -1;
				if (num_u64(val, 0, 1u << 30, &b, msg, sizeof msg))
					return bad(why, whylen, spec, "bytes=%s: %s (a byte count)", val, msg);
				r.bytes = (int64_t)b;
			} else if (!strcmp(kv, "every")) {
				char msg[160];
				if (key_allowed(&r, K_EVERY, spec, why, whylen))
					return -1;
				if (num_ms(val, 0, &r.every_ms, msg, sizeof msg))
					return bad(why, whylen, spec, "every=%s: %s", val, msg);
				if (r.every_ms < 1)
					return bad(why, whylen, spec, "every=%s: want a period of 1ms or more", val);
			} else if (!strcmp(kv, "by")) {
				char msg[160];
				if (key_allowed(&r, K_BY, spec, why, whylen))
					return -1;
				if (num_ms(val, NUM_SIGNED, &r.by_ms, msg, sizeof msg))
					return bad(why, whylen, spec, "by=%s: %s (an offset like +500ms or -2s)", val, msg);
				saw_by = 1;
			} else if (!strcmp(kv, "res")) {
				char msg[160];
				if (key_allowed(&r, K_RES, spec, why, whylen))
					return -1;
				if (num_ms(val, 0, &r.res_ms, msg, sizeof msg))
					return bad(why, whylen, spec, "res=%s: %s", val, msg);
				if (r.res_ms < 1)
					return bad(why, whylen, spec, "res=%s: want a resolution like 1s or 2s", val);
			} else if (!strcmp(kv, "host")) {
				uint64_t h;
				char msg[160];
				if (key_allowed(&r, K_HOST, spec, why, whylen))
					return -1;
				if (num_u64(val, 0, 63, &h, msg, sizeof msg))
					return bad(why, whylen, spec, "host=%s: %s (a host number, 0 first)", val, msg);
				r.on_host = (unsigned)h + 1;
			} else if (!strcmp(kv, "workers")) {
				if (parse_workers(&r, val))
					return bad(why, whylen, spec, "workers=%s: want ids like 0,2,5-7 (below 1024)", val);
				in_workers = 1;
			} else {
				return bad(why, whylen, spec, "unknown key '%s' (known: p, nth, once, for, err, path, "
					   "workers, bytes, every, by, res, host)", kv);
			}
		}
	}
	if (r.kind == FK_SKEW && !saw_by)
		return bad(why, whylen, spec, "skew needs by=+-DUR (e.g. by=+2s)");
	/* short-write with for=: the write is split, not failed */
	if (r.kind == FK_SHORT_WRITE && saw_for) {
		if (saw_err)
			return bad(why, whylen, spec, "for= splits the write (the rest lands after the pause): "
				   "it takes no err=");
		r.split = 1;
		r.err = 0;
	}
	plan->rule[plan->n++] = r;
	return 0;
}

int fault_point_match(const char *glob, const char *point)
{
	return fnmatch(glob, point, 0) == 0;
}

static int applies_to(const struct fault_rule *r, unsigned worker)
{
	return r->workers_all || (worker < 16 * 64 && (r->workers[worker / 64] >> (worker % 64) & 1));
}

uint32_t fault_point_mask(const struct fault_plan *plan, const char *point)
{
	uint32_t mask = 0;
	int fs_call = !strncmp(point, "fs/", 3);
	for (unsigned i = 0; i < plan->n; i++) {
		const struct fault_rule *r = &plan->rule[i];
		if (!point_level(r->kind))
			continue;
		if ((r->kind == FK_ERRNO || r->kind == FK_SHORT_WRITE) && !fs_call)
			continue;
		if (r->kind == FK_SHORT_WRITE && strcmp(point, "fs/write"))
			continue;
		if (fault_point_match(r->point, point))
			mask |= 1u << i;
	}
	return mask;
}

uint32_t fault_worker_mask(const struct fault_plan *plan, unsigned worker)
{
	uint32_t mask = 0;
	for (unsigned i = 0; i < plan->n && i < 32; i++)
		if (applies_to(&plan->rule[i], worker))
			mask |= 1u << i;
	return mask;
}

int fault_plan_steps(const struct fault_plan *plan)
{
	return fault_plan_steps_mask(plan, UINT32_MAX);
}

int fault_plan_steps_mask(const struct fault_plan *plan, uint32_t mask)
{
	for (unsigned i = 0; i < plan->n; i++) {
		const struct fault_rule *r = &plan->rule[i];
		if (i < 32 && !(mask >> i & 1))
			continue;
		if (!point_level(r->kind) || r->kind == FK_ERRNO || r->kind == FK_SHORT_WRITE)
			continue; /* errno and short-write rules act at fs/<call> points only */
		if (strncmp(r->point, "fs/", 3) != 0)
			return 1;
	}
	return 0;
}

struct fault_action fault_check(const struct fault_plan *plan, struct fault_state *st,
				struct prng *rng, unsigned worker, const char *point,
				const char *path, int64_t stale_ms)
{
	return fault_check_mask(plan, st, rng, worker, point, fault_point_mask(plan, point), path, stale_ms);
}

struct fault_action fault_check_mask(const struct fault_plan *plan, struct fault_state *st,
				     struct prng *rng, unsigned worker, const char *point, uint32_t mask,
				     const char *path, int64_t stale_ms)
{
	struct fault_action act = { FK_NONE, 0, 0, 0, -1 };
	(void)point;
	for (unsigned i = 0; mask && i < plan->n; i++) {
		const struct fault_rule *r = &plan->rule[i];
		if (!(mask >> i & 1))
			continue;
		if (!applies_to(r, worker))
			continue;
		if (r->path[0] && (!path || fnmatch(r->path, path, 0) != 0))
			continue;
		/* every matching rule counts the call (nth=N is the Nth matching
		 * call, whatever fired before); only the first to fire acts */
		uint64_t m = ++st->matches[i];
		if (act.kind != FK_NONE)
			continue;
		if (r->once && st->fired[i])
			continue;
		if (r->nth && m != r->nth)
			continue;
		if (r->p < 1.0 && prng_unit(rng) >= r->p)
			continue;
		st->fired[i]++;
		act.kind = r->kind;
		act.rule = (int)i;
		act.err = r->err;
		act.bytes = r->bytes;
		if (r->kind == FK_STALL || r->kind == FK_STOP || (r->kind == FK_SHORT_WRITE && r->split)) {
			if (r->for_ms >= 0)
				act.stall_ms = r->for_ms;
			else
				act.stall_ms = stale_ms == INT64_MAX ? 10000 : (int64_t)(r->for_stale * (double)stale_ms + 0.5);
		}
	}
	return act;
}

const struct fault_rule *fault_process_rule(const struct fault_plan *plan, enum fault_kind kind,
					    unsigned worker)
{
	for (unsigned i = 0; i < plan->n; i++)
		if (plan->rule[i].kind == kind && applies_to(&plan->rule[i], worker))
			return &plan->rule[i];
	return NULL;
}

/* ---- profiles ---- */

struct profile {
	const char *name;
	const char *what;
	const char *const *specs;
};

static const char *const prof_stalls[] = {
	"stall@*/*/after-*:p=0.005,for=1.5stale",
	"stall@fs/*:p=0.0005,for=0.5stale",
	NULL,
};
static const char *const prof_crashes[] = {
	"crash@*/*/after-*:p=0.001",
	"crash@fs/*:p=0.0002",
	NULL,
};
static const char *const prof_errnos[] = {
	"errno@fs/mkdir:p=0.002,err=ENOSPC",
	"errno@fs/open:p=0.002,err=EACCES",
	"errno@fs/rename:p=0.002,err=EXDEV",
	"errno@fs/rmdir:p=0.002,err=EBUSY",
	"errno@fs/link:p=0.002,err=EPERM",
	"short-write@fs/write:p=0.002,bytes=1,err=ENOSPC",
	NULL,
};
static const char *const prof_standard[] = {
	"stall@*/*/after-*:p=0.003,for=1.5stale",
	"crash@*/*/after-*:p=0.0005",
	"errno@fs/mkdir:p=0.001,err=ENOSPC",
	"errno@fs/open:p=0.001,err=EACCES",
	"errno@fs/rename:p=0.001,err=EXDEV",
	"short-write@fs/write:p=0.001,bytes=1,err=ENOSPC",
	NULL,
};
static const char *const prof_windows[] = {
	/* the delete-pending and sharing rules live in the seam (fault_plan.windows);
	 * these add the errno rules Windows programs see at random besides */
	"errno@fs/rmdir:p=0.002,err=EBUSY",
	"errno@fs/rename:p=0.002,err=EACCES",
	NULL,
};
static const char *const prof_none[] = { NULL };

static const struct profile profiles[] = {
	{ "standard", "the nightly default: stalls past the stale age, crashes, and errnos at every step of "
		      "every protocol and workload of the run, at low rates", prof_standard },
	{ "stalls", "stalls only: 1.5x the stale age after any protocol/workload step, 0.5x at any call", prof_stalls },
	{ "crashes", "crashes only (SIGKILL after any step or before any call); use --respawn", prof_crashes },
	{ "errnos", "errno only: ENOSPC on mkdir, EACCES on open, EXDEV on rename, EBUSY on rmdir, EPERM on "
		    "link, short writes with ENOSPC", prof_errnos },
	{ "windows", "Windows-like paths: mkdir of a directory removed in the last 5 ms fails EPERM or EACCES "
		     "(delete pending); rmdir/rename/unlink of a path another worker has open fails "
		     "EACCES/EPERM/EBUSY (sharing rules); plus rare EBUSY on rmdir and EACCES on rename. "
		     "Protocols with platform=win32 need --param platform=win32 to switch their branch on", prof_windows },
	{ "none", "no faults", prof_none },
};

int fault_profile(struct fault_plan *plan, const char *name, char *why, size_t whylen)
{
	for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
		if (strcmp(profiles[i].name, name))
			continue;
		for (const char *const *s = profiles[i].specs; *s; s++)
			if (fault_parse(plan, *s, why, whylen))
				return -1;
		if (!strcmp(name, "windows"))
			plan->windows = 1;
		return 0;
	}
	snprintf(why, whylen, "unknown fault profile '%s' (known: standard, stalls, crashes, errnos, windows, none)",
		 name);
	errno = EINVAL;
	return -1;
}

void fault_profiles_describe(FILE *f)
{
	for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++) {
		fprintf(f, "  %-9s %s\n", profiles[i].name, profiles[i].what);
		for (const char *const *s = profiles[i].specs; *s; s++)
			fprintf(f, "            --fault '%s'\n", *s);
	}
}

struct fault_state *fault_states_create(unsigned nworkers)
{
	size_t size = (nworkers ? nworkers : 1) * sizeof(struct fault_state);
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p; /* the mapping comes zeroed */
}

void fault_states_destroy(struct fault_state *st, unsigned nworkers)
{
	if (st)
		munmap(st, (nworkers ? nworkers : 1) * sizeof(struct fault_state));
}
