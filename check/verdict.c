/*
 * verdict.c - the verdict line and its JSON value (see verdict.h).
 */
#include "verdict.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "checker.h"

void verdict_init(struct verdict *v)
{
	memset(v, 0, sizeof *v);
}

void verdict_from_check(struct verdict *v, const struct check_result *res)
{
	verdict_init(v);
	if (res->incomplete[0]) { /* records that cannot be judged: no violation built on them */
		verdict_incomplete(v, res->incomplete);
		return;
	}
	for (int i = 0; i < INV__COUNT; i++)
		if (res->inv[i].applicable && res->inv[i].violations)
			verdict_fail(v, NULL, res->inv[i].name);
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

void verdict_fail(struct verdict *v, const char *scope, const char *name)
{
	if (!name) {
		fprintf(stderr, "BUG: %s:%d: verdict_fail without a name\n", __FILE__, __LINE__);
		abort();
	}
	for (unsigned i = 0; i < v->nfail; i++)
		if (same(v->fail[i].scope, scope) && same(v->fail[i].name, name))
			return;
	if (v->nfail == VERDICT_MAX_FAILS) {
		v->more++;
		return;
	}
	v->fail[v->nfail].scope = scope;
	v->fail[v->nfail].name = name;
	v->nfail++;
}

void verdict_incomplete(struct verdict *v, const char *why)
{
	if (v->incomplete)
		return;
	v->incomplete = 1;
	snprintf(v->why, sizeof v->why, "%s", why && why[0] ? why : "the run did not finish");
}

enum verdict_kind verdict_kind(const struct verdict *v)
{
	if (v->nfail || v->more)
		return VERDICT_FAIL;
	if (v->incomplete)
		return VERDICT_INCOMPLETE;
	return VERDICT_PASS;
}

/* snprintf onto the end of what is there; *n counts what the whole needs. */
__attribute__((format(printf, 4, 5)))
static void put(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	size_t room = *n < len ? len - *n : 0;

	va_start(ap, fmt);
	int k = vsnprintf(room ? buf + *n : NULL, room, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n += (size_t)k;
}

size_t verdict_format(const struct verdict *v, char *buf, size_t len)
{
	size_t n = 0;

	if (len)
		buf[0] = '\0';
	switch (verdict_kind(v)) {
	case VERDICT_PASS:
		put(buf, len, &n, "verdict: PASS");
		break;
	case VERDICT_INCOMPLETE:
		put(buf, len, &n, "verdict: INCOMPLETE (%s)", v->why);
		break;
	case VERDICT_FAIL:
		put(buf, len, &n, "verdict: FAIL (");
		for (unsigned i = 0; i < v->nfail; i++) {
			const char *scope = v->fail[i].scope;
			/* one group per scope in a row: "a: x, y; b: z" */
			int new_group = i == 0 || !same(scope, v->fail[i - 1].scope);

			if (i)
				put(buf, len, &n, new_group ? "; " : ", ");
			if (new_group && scope)
				put(buf, len, &n, "%s: ", scope);
			put(buf, len, &n, "%s", v->fail[i].name);
		}
		if (v->more)
			put(buf, len, &n, "%s%u more", v->nfail ? "; " : "", v->more);
		put(buf, len, &n, ")");
		break;
	}
	return n;
}

void verdict_print(FILE *f, const struct verdict *v)
{
	char line[1024];
	size_t n = verdict_format(v, line, sizeof line);

	if (n < sizeof line) {
		fprintf(f, "%s\n", line);
		return;
	}
	char *big = malloc(n + 1);
	if (big) {
		verdict_format(v, big, n + 1);
		fprintf(f, "%s\n", big);
		free(big);
	} else {
		fprintf(f, "%s\n", line); /* cut short, but still the line */
	}
}

const char *verdict_json(const struct verdict *v)
{
	switch (verdict_kind(v)) {
	case VERDICT_FAIL:
		return "fail";
	case VERDICT_INCOMPLETE:
		return "incomplete";
	case VERDICT_PASS:
		break;
	}
	return "pass";
}

int verdict_exit(const struct verdict *v)
{
	switch (verdict_kind(v)) {
	case VERDICT_FAIL:
		return 1;
	case VERDICT_INCOMPLETE:
		return VERDICT_EXIT_INCOMPLETE;
	case VERDICT_PASS:
		break;
	}
	return 0;
}
