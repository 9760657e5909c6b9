/*
 * params.c - named protocol (and workload) constants: parsing, resolving
 * --param overrides and --time-scale, formatting, and lock_setup().
 *
 * A `struct param` table lists a module's constants with the origin's
 * defaults.  Resolving a table gives one int64 per entry, in table order:
 *
 *   defaults  ->  "K=V" overrides that name an entry  ->  PU_MS x time_scale
 *
 * Values:
 *   PU_COUNT   a non-negative decimal integer ("100")
 *   PU_MS      a non-negative duration of core/num.h: "250ms", "10s", "1.5s",
 *              "2m"; a bare number ("250") is ms, since the name says so
 *              (every PU_MS name ends in _ms); rounded to whole ms, <= 30 days
 *   PU_MS_NEVER  a PU_MS, or "never" (LS_NEVER)
 *   PU_CHOICE  a choice name ("try") or its index ("1")
 *
 * Errors: param_parse and param_resolve return -1 and write a one-line
 * reason (no trailing newline) into why; errno is not used.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/num.h"
#include "lock.h"

const char *const lock_form_choices[] = { "acquire", "try", "bounded", NULL };
const char *const lock_platform_choices[] = { "posix", "win32", NULL };

/* Misuse of this internal API: say where and stop (git's BUG()). */
#define PARAMS_BUG(msg)                                                              \
	do {                                                                         \
		fprintf(stderr, "BUG: %s:%d: %s\n", __FILE__, __LINE__, msg);        \
		abort();                                                             \
	} while (0)

int param_index(const struct param *params, const char *name)
{
	if (!params || !name)
		return -1;
	for (int i = 0; params[i].name; i++)
		if (strcmp(params[i].name, name) == 0)
			return i;
	return -1;
}

int param_count(const struct param *params)
{
	int n = 0;
	if (!params)
		return 0;
	while (params[n].name)
		n++;
	return n;
}

/* A count: core/num.h's whole number (decimal digits only), fits an int64. */
static int params_parse_uint(const char *s, int64_t *out, char *why, size_t whylen)
{
	uint64_t v;
	if (num_u64(s, 0, INT64_MAX, &v, why, whylen))
		return -1;
	*out = (int64_t)v;
	return 0;
}

/* Does the name say the unit (stale_ms)?  Then a bare number is ms. */
static int params_name_says_ms(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && strcmp(name + n - 3, "_ms") == 0;
}

/* Append "a|b|c" (the choice names) to buf. */
static void params_list_choices(const struct param *p, char *buf, size_t len)
{
	size_t used = strlen(buf);
	for (int i = 0; p->choices && p->choices[i]; i++) {
		int n = snprintf(buf + used, len - used, "%s%s", i ? "|" : "", p->choices[i]);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
}

int param_parse(const struct param *p, const char *value, int64_t *out, char *why, size_t whylen)
{
	int64_t v;

	switch (p->unit) {
	case PU_COUNT: {
		char msg[160];
		if (params_parse_uint(value, &v, msg, sizeof msg) == 0)
			break;
		snprintf(why, whylen, "%s: %s (a count)", p->name, msg);
		return -1;
	}

	case PU_MS_NEVER:
		if (strcmp(value, "never") == 0) {
			v = LS_NEVER;
			break;
		}
		/* fall through */
	case PU_MS: {
		char msg[160];
		if (num_ms(value, params_name_says_ms(p->name) ? NUM_BARE_MS : 0, &v, msg, sizeof msg) == 0)
			break;
		snprintf(why, whylen, "%s: %s", p->name, msg);
		return -1;
	}

	case PU_CHOICE: {
		int n = 0;
		if (!p->choices)
			PARAMS_BUG("PU_CHOICE param without choices");
		while (p->choices[n])
			n++;
		for (int i = 0; i < n; i++) {
			if (strcmp(p->choices[i], value) == 0) {
				*out = i;
				return 0;
			}
		}
		if (params_parse_uint(value, &v, NULL, 0) == 0 && v < n)
			break;
		int k = snprintf(why, whylen, "%s: '%s' is not one of ", p->name, value);
		if (k >= 0 && (size_t)k < whylen)
			params_list_choices(p, why, whylen);
		return -1;
	}

	default:
		PARAMS_BUG("unknown param unit");
	}
	*out = v;
	return 0;
}

/* v x scale in ms, rounded to the nearest whole ms; a positive constant
 * never scales down to 0.  *EXACT_US gets v x scale in us (rounded), so a
 * caller can tell when the ms value is not the scaled constant. */
static int64_t params_scale(int64_t v, double scale, double *exact_ms)
{
	*exact_ms = (double)v;
	if (scale == 1.0 || v == LS_NEVER)
		return v; /* exact; LS_NEVER stays "never" */
	double us = nearbyint((double)v * scale * 1000.0);
	*exact_ms = us / 1000.0;
	double s = nearbyint(us / 1000.0);
	if (!(s < 9.2e18))
		return LS_NEVER;
	int64_t r = (int64_t)s;
	if (r < 1 && v > 0)
		r = 1;
	return r;
}

/* Protocols keep their constants in whole ms: a constant whose scaled value
 * is not a whole ms changes its ratio to the others (at 0.01 mkdir-owner's
 * 50 ms wait would be 0.5 ms, kept as 1 ms, as long as 1/100 of its stale
 * age).  Say so on stderr, once per constant and scale. */
static void params_warn_rounded(const struct param *p, int64_t v, double exact_ms, int64_t kept,
				double scale)
{
	static const struct param *seen[64];
	static double seen_scale[64];
	static unsigned nseen;

	if (v == LS_NEVER || fabs(exact_ms - (double)kept) < 1e-9)
		return;
	for (unsigned i = 0; i < nseen; i++)
		if (seen[i] == p && seen_scale[i] == scale)
			return;
	if (nseen < 64) {
		seen[nseen] = p;
		seen_scale[nseen++] = scale;
	}
	fprintf(stderr,
		"lockstorm: --time-scale %g: %s = %lld ms scales to %.3f ms, kept as %lld ms "
		"(constants are whole ms): its ratio to the other constants is not the origin's\n",
		scale, p->name, (long long)v, exact_ms, (long long)kept);
}

int param_resolve(const struct param *params, int64_t *vals, const char *const *kv, unsigned nkv,
		  double time_scale, unsigned char *used, char *why, size_t whylen)
{
	int n = param_count(params);

	if (n > LS_MAX_PARAMS)
		PARAMS_BUG("more params than LS_MAX_PARAMS");
	if (!(time_scale > 0) || isinf(time_scale)) {
		snprintf(why, whylen, "time scale %g: must be a positive number", time_scale);
		return -1;
	}

	for (int i = 0; i < n; i++)
		vals[i] = params[i].def;

	for (unsigned j = 0; j < nkv; j++) {
		const char *eq = strchr(kv[j], '=');
		if (!eq || eq == kv[j]) {
			snprintf(why, whylen, "--param '%s': expected KEY=VALUE", kv[j]);
			return -1;
		}
		size_t klen = (size_t)(eq - kv[j]);
		for (int i = 0; i < n; i++) {
			if (strlen(params[i].name) != klen || strncmp(params[i].name, kv[j], klen) != 0)
				continue;
			if (param_parse(&params[i], eq + 1, &vals[i], why, whylen) != 0)
				return -1;
			if (used)
				used[j] = 1;
			break;
		}
	}

	for (int i = 0; i < n; i++) {
		if (params[i].unit != PU_MS && params[i].unit != PU_MS_NEVER)
			continue;
		double exact;
		int64_t kept = params_scale(vals[i], time_scale, &exact);
		params_warn_rounded(&params[i], vals[i], exact, kept, time_scale);
		vals[i] = kept;
	}
	return 0;
}

void param_format(const struct param *p, int64_t v, char *buf, size_t len)
{
	if (p->unit == PU_CHOICE && p->choices && v >= 0) {
		for (int64_t i = 0; p->choices[i]; i++) {
			if (i == v) {
				snprintf(buf, len, "%s", p->choices[i]);
				return;
			}
		}
	}
	if ((p->unit == PU_MS || p->unit == PU_MS_NEVER) && v == LS_NEVER) {
		snprintf(buf, len, "never");
		return;
	}
	snprintf(buf, len, "%lld", (long long)v);
}

void lock_setup(struct lock *lk, const struct lock_ops *ops, const char *file,
		const int64_t *vals, unsigned worker, struct prng *rng)
{
	size_t flen = strlen(file);

	if (flen + sizeof ".lock" > sizeof lk->path)
		PARAMS_BUG("lock file path too long");

	memset(lk, 0, sizeof *lk);
	lk->ops = ops;
	memcpy(lk->file, file, flen + 1);
	memcpy(lk->path, file, flen);
	memcpy(lk->path + flen, ".lock", sizeof ".lock");

	/* vals == NULL: the unscaled defaults (handy for tests and `list`). */
	int n = param_count(ops->params);
	for (int i = 0; i < n; i++)
		lk->param[i] = vals ? vals[i] : ops->params[i].def;

	lk->worker = worker;
	lk->rng = rng;
}

/* ---- value lists: --param K=A,B,.. alternates across workers ---- */

unsigned param_list_len(const char *kv)
{
	const char *eq = kv ? strchr(kv, '=') : NULL;
	unsigned n = 1;
	for (const char *p = eq ? eq + 1 : ""; *p; p++)
		n += *p == ',';
	return n;
}

static unsigned params_gcd(unsigned a, unsigned b)
{
	while (b) {
		unsigned t = a % b;
		a = b;
		b = t;
	}
	return a;
}

unsigned param_lcm(unsigned a, unsigned b)
{
	if (!a || !b)
		return 0;
	uint64_t l = (uint64_t)a / params_gcd(a, b) * b;
	return l > 65536 ? 0 : (unsigned)l;
}

unsigned param_variants(const char *const *kv, unsigned nkv)
{
	unsigned v = 1;
	for (unsigned j = 0; j < nkv && v; j++)
		v = param_lcm(v, param_list_len(kv[j]));
	return v;
}

int param_kv_pick(const char *kv, unsigned v, char *buf, size_t len, char *why, size_t whylen)
{
	const char *eq = strchr(kv, '=');
	unsigned n = param_list_len(kv);
	if (!eq || eq == kv) {
		snprintf(why, whylen, "--param '%s': expected KEY=VALUE", kv);
		return -1;
	}
	const char *p = eq + 1;
	for (unsigned k = v % n; k; k--)
		p = strchr(p, ',') + 1;
	const char *end = strchr(p, ',');
	size_t vlen = end ? (size_t)(end - p) : strlen(p);
	size_t klen = (size_t)(eq - kv);
	if (n > 1 && !vlen) {
		snprintf(why, whylen, "--param '%s': an empty value in the list", kv);
		return -1;
	}
	if (klen + 1 + vlen + 1 > len) {
		snprintf(why, whylen, "--param '%s': too long", kv);
		return -1;
	}
	memcpy(buf, kv, klen + 1);
	memcpy(buf + klen + 1, p, vlen);
	buf[klen + 1 + vlen] = '\0';
	return 0;
}
