/*
 * extline.c - an adapter's event lines, parsed (see extline.h).
 */
#include "extline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/journal.h"
#include "../faults/fault.h"
#include "runcfg.h"

/* ---- event lines ---- */

enum { K_N = 1, K_REV = 2, K_OWN = 4, K_ERRNO = 8 };

static const struct {
	const char *name;
	int type;
	unsigned need;  /* keys that must be there (rev/own of read: unless errno is) */
	int point;      /* PT_*, -1: none */
} ext_events[] = {
	{ "attempt", EV_ATTEMPT, 0, PT_ATTEMPT },
	{ "acquired", EV_ACQUIRED, 0, PT_ACQUIRED },
	{ "busy", EV_BUSY, 0, -1 },
	{ "acquire-error", EV_ACQUIRE_ERROR, K_ERRNO, -1 },
	{ "read", EV_READ, K_REV | K_OWN, PT_READ },
	{ "commit-begin", EV_COMMIT_BEGIN, K_REV | K_OWN, PT_COMMIT_BEGIN },
	{ "commit", EV_COMMIT, K_REV | K_OWN, PT_COMMIT },
	{ "lost", EV_LOST, 0, -1 },
	{ "write-error", EV_WRITE_ERROR, K_ERRNO, -1 },
	{ "release-begin", EV_RELEASE_BEGIN, 0, PT_RELEASE_BEGIN },
	{ "released", EV_RELEASED, 0, PT_RELEASED },
	{ "release-error", EV_RELEASE_ERROR, K_ERRNO, -1 },
};
#define EXT_NEVENTS (sizeof ext_events / sizeof ext_events[0])

/* "-12" / "34" into *out; -1 on anything else. */
static int ext_int(const char *s, size_t n, int64_t *out)
{
	char tmp[32];
	if (!n || n >= sizeof tmp)
		return -1;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	const char *p = tmp[0] == '-' ? tmp + 1 : tmp;
	if (!*p || strspn(p, "0123456789") != strlen(p))
		return -1;
	errno = 0;
	char *end;
	long long v = strtoll(tmp, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int ext_parse_line(const char *line, struct ext_event *ev, char *why, size_t len)
{
	memset(ev, 0, sizeof *ev);
	ev->type = EV_NONE;
	for (const char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return runcfg_fail(why, len, "control character 0x%02x", (unsigned char)*c);
	const char *p = line;
	while (*p == ' ')
		p++;
	size_t k = strcspn(p, " ");
	if (k && strspn(p, "0123456789") == k) {
		int64_t ns;
		if (k > 19 || ext_int(p, k, &ns) || ns <= 0)
			return runcfg_fail(why, len, "timestamp '%.*s' is not CLOCK_MONOTONIC nanoseconds", (int)k, p);
		ev->ns = (uint64_t)ns;
		p += k;
		while (*p == ' ')
			p++;
		k = strcspn(p, " ");
	}
	if (k == 4 && !strncmp(p, "next", 4)) {
		for (const char *q = p + 4; *q; q++)
			if (*q != ' ')
				return runcfg_fail(why, len, "`next` takes nothing after it");
		ev->next = 1;
		return 0;
	}
	if (!ev->ns)
		return runcfg_fail(why, len, k ? "no timestamp before the event" : "empty line");
	if (k == 3 && !strncmp(p, "log", 3)) {
		ev->log = 1;
		p += 3;
		while (*p == ' ')
			p++;
		ev->text = p;
		return 0;
	}
	unsigned i;
	for (i = 0; i < EXT_NEVENTS; i++)
		if (strlen(ext_events[i].name) == k && !strncmp(p, ext_events[i].name, k))
			break;
	if (i == EXT_NEVENTS)
		return runcfg_fail(why, len, "unknown event '%.*s'", (int)(k < 40 ? k : 40), p);
	ev->type = ext_events[i].type;
	unsigned have = 0;
	p += k;
	for (;;) {
		while (*p == ' ')
			p++;
		if (!*p)
			break;
		k = strcspn(p, " ");
		const char *eq = memchr(p, '=', k);
		if (!eq || eq == p)
			return runcfg_fail(why, len, "'%.*s' is not key=value", (int)(k < 40 ? k : 40), p);
		size_t kl = (size_t)(eq - p), vl = k - kl - 1;
		const char *v = eq + 1;
		int64_t x;
		if (kl == 1 && *p == 'n') {
			if (ext_int(v, vl, &x) || x < 0)
				return runcfg_fail(why, len, "n=%.*s: want a count", (int)vl, v);
			ev->a = ev->type == EV_ATTEMPT ? x : ev->a;
			have |= K_N;
		} else if (kl == 3 && !strncmp(p, "rev", 3)) {
			if (ext_int(v, vl, &x) || x < -1)
				return runcfg_fail(why, len, "rev=%.*s: want a revision (-1: missing)", (int)vl, v);
			ev->a = x;
			have |= K_REV;
		} else if (kl == 3 && !strncmp(p, "own", 3)) {
			if (ext_int(v, vl, &x) || x < 0)
				return runcfg_fail(why, len, "own=%.*s: want a count", (int)vl, v);
			ev->b = x;
			have |= K_OWN;
		} else if (kl == 5 && !strncmp(p, "errno", 5)) {
			char name[32];
			snprintf(name, sizeof name, "%.*s", (int)(vl < 31 ? vl : 31), v);
			if (!vl || vl > 31 || (ev->err = fault_errno_parse(name)) < 0)
				return runcfg_fail(why, len, "errno=%.*s: not an errno name or number", (int)(vl < 40 ? vl : 40), v);
			have |= K_ERRNO;
		}
		/* other keys: ignored (room for adapters to say more) */
		p += k;
	}
	unsigned need = ext_events[i].need;
	if (ev->type == EV_READ && (have & K_ERRNO)) {
		need = 0;
		if (!(have & K_REV))
			ev->a = -1;
	}
	if ((need & ~have) & K_ERRNO)
		return runcfg_fail(why, len, "%s needs errno=NAME", ext_events[i].name);
	if ((need & ~have) & (K_REV | K_OWN))
		return runcfg_fail(why, len, "%s needs rev=R own=C", ext_events[i].name);
	return 0;
}

int ext_point_of(int type)
{
	for (unsigned i = 0; i < EXT_NEVENTS; i++)
		if (ext_events[i].type == type)
			return ext_events[i].point;
	return -1;
}
