/*
 * claims.c - what a protocol's ops table claims beside its code: the
 * mutexes it takes (judged by exclusion, one by one) and the errors it
 * claims to absorb (judged by no-escaped-error).  See lock.h.
 */
#include <stdio.h>
#include <string.h>

#include "lock.h"

static const struct lock_mutex claims_lock_only[] = {
	{ "lock", "the lock object at <file>.lock" },
	{ NULL, NULL },
};

const struct lock_mutex *lock_mutexes(const struct lock_ops *ops, unsigned *n)
{
	const struct lock_mutex *m = ops && ops->mutexes ? ops->mutexes : claims_lock_only;
	unsigned k = 0;
	while (m[k].name && k < LOCK_MAX_MUTEXES)
		k++;
	if (n)
		*n = k;
	return m;
}

int lock_absorbs(const struct lock *lk, enum lock_op_kind op, int call, enum fsx_path path, int err)
{
	const struct lock_absorb *a = lk && lk->ops ? lk->ops->absorbs : NULL;

	for (; a && a->claim; a++) {
		if (a->op != op || (a->err && a->err != err))
			continue;
		if (a->call >= 0 && a->call != call)
			continue; /* another call, or the failing call is not known */
		if (a->path != FSX_PATH_UNKNOWN && a->path != path)
			continue; /* the same call on another path (AT3's entry, not AT2's lock), or not known */
		if (a->when_param) {
			int i = param_index(lk->ops->params, a->when_param);
			if (i < 0 || lk->param[i] != a->when_value)
				continue;
		}
		return 1;
	}
	return 0;
}

void lock_print_claims(FILE *f, const struct lock_ops *ops)
{
	unsigned n;
	const struct lock_mutex *m = lock_mutexes(ops, &n);

	fprintf(f, "  mutexes ");
	for (unsigned i = 0; i < n; i++)
		fprintf(f, "%s %s (%s)", i ? ";" : "", m[i].name, m[i].what);
	fprintf(f, "\n");
	for (const struct lock_absorb *a = ops->absorbs; a && a->claim; a++) {
		char when[96] = "";
		if (a->when_param) {
			int i = param_index(ops->params, a->when_param);
			char v[48];
			if (i >= 0)
				param_format(&ops->params[i], a->when_value, v, sizeof v);
			else
				snprintf(v, sizeof v, "%lld", (long long)a->when_value);
			snprintf(when, sizeof when, ", when %s=%s", a->when_param, v);
		}
		const char *en = a->err ? strerrorname_np(a->err) : NULL;
		char on[48] = "";
		if (a->path != FSX_PATH_UNKNOWN)
			snprintf(on, sizeof on, " of %s", fsx_path_name(a->path));
		fprintf(f, "  %s %s: %s at %s%s%s: %s\n", a == ops->absorbs ? "absorbs" : "       ",
			a->op == LOCK_OP_RELEASE ? "release" : "acquire", a->err ? (en ? en : "?") : "any errno",
			a->call >= 0 ? fsx_op_name((enum fsx_op)a->call) : "any call", on, when, a->claim);
	}
	if (ops->flags & LOCK_BUSY_MEANS_HELD)
		fprintf(f, "  busy     means a live holder holds: a busy while nobody held is no-escaped-error\n");
}
