/*
 * fault.c - parse fault specs and decide at points (see fault.h).
 */
#include "fault.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[FK__COUNT] = {
	[FK_NONE] = "none", [FK_STALL] = "stall", [FK_CRASH] = "crash",
};

const char *fault_kind_name(enum fault_kind k)
{
	return (unsigned)k < FK__COUNT ? kind_names[k] : "?";
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

static int parse_double(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s)
		return -1;
	*out = v;
	return (int)(end - s);
}

/* for=300ms | 2s | 1500 (ms) | 1.5stale */
static int parse_for(struct fault_rule *r, const char *v)
{
	double x;
	int used = parse_double(v, &x);
	if (used < 0 || x < 0)
		return -1;
	const char *unit = v + used;
	if (!strcmp(unit, "stale")) {
		r->for_ms = -1;
		r->for_stale = x;
	} else if (!strcmp(unit, "ms") || !*unit) {
		r->for_ms = (int64_t)(x + 0.5);
	} else if (!strcmp(unit, "s")) {
		r->for_ms = (int64_t)(x * 1000 + 0.5);
	} else {
		return -1;
	}
	return 0;
}

static int parse_u64(const char *s, uint64_t *out)
{
	if (!isdigit((unsigned char)*s))
		return -1;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* workers=0,2,5-7: the key list is split on commas first, so the ids after
 * the first arrive as bare tokens (see fault_parse); '+' also joins them. */
static int parse_workers(struct fault_rule *r, const char *v)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", v);
	r->workers_all = 0;
	for (char *tok = strtok(buf, "+"); tok; tok = strtok(NULL, "+")) {
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
	snprintf(r.spec, sizeof r.spec, "%s", spec);
	snprintf(r.point, sizeof r.point, "*");

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
		return bad(why, whylen, spec, "unknown kind '%s' (known: stall, crash)", buf);
	if (at) {
		if (!*at)
			return bad(why, whylen, spec, "empty point after '@'");
		if (strlen(at) >= sizeof r.point)
			return bad(why, whylen, spec, "point '%s' too long", at);
		snprintf(r.point, sizeof r.point, "%s", at);
	}

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
				double p = -1;
				if (parse_double(val, &p) != (int)strlen(val) || p < 0 || p > 1)
					return bad(why, whylen, spec, "p=%s: want a probability in [0,1]", val);
				r.p = p;
			} else if (!strcmp(kv, "nth")) {
				if (parse_u64(val, &r.nth) || r.nth == 0)
					return bad(why, whylen, spec, "nth=%s: want a whole number >= 1", val);
			} else if (!strcmp(kv, "for")) {
				if (r.kind != FK_STALL)
					return bad(why, whylen, spec, "for= applies to stall only");
				if (parse_for(&r, val))
					return bad(why, whylen, spec, "for=%s: want 300ms, 2s or 1.5stale", val);
			} else if (!strcmp(kv, "workers")) {
				if (parse_workers(&r, val))
					return bad(why, whylen, spec, "workers=%s: want ids like 0,2,5-7 (below 1024)", val);
				in_workers = 1;
			} else {
				return bad(why, whylen, spec, "unknown key '%s' (known: p, nth, once, for, workers)", kv);
			}
		}
	}
	plan->rule[plan->n++] = r;
	return 0;
}

int fault_point_match(const char *glob, const char *point)
{
	return fnmatch(glob, point, 0) == 0;
}

struct fault_action fault_check(const struct fault_plan *plan, struct fault_state *st,
				struct prng *rng, unsigned worker, const char *point,
				int64_t stale_ms)
{
	struct fault_action act = { FK_NONE, 0, -1 };
	for (unsigned i = 0; i < plan->n; i++) {
		const struct fault_rule *r = &plan->rule[i];
		if (!r->workers_all && (worker >= 16 * 64 || !(r->workers[worker / 64] >> (worker % 64) & 1)))
			continue;
		if (!fault_point_match(r->point, point))
			continue;
		uint64_t m = ++st->matches[i];
		if (r->once && st->fired[i])
			continue;
		if (r->nth && m != r->nth)
			continue;
		/* Always draw, so one rule's decisions do not shift another's stream. */
		double u = prng_unit(rng);
		if (u >= r->p)
			continue;
		st->fired[i]++;
		act.kind = r->kind;
		act.rule = (int)i;
		if (r->kind == FK_STALL) {
			if (r->for_ms >= 0)
				act.stall_ms = r->for_ms;
			else
				act.stall_ms = stale_ms == INT64_MAX ? 10000 : (int64_t)(r->for_stale * (double)stale_ms + 0.5);
		}
		return act;
	}
	return act;
}
