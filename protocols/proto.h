/*
 * proto.h - small helpers every protocol file shares (internal to protocols/).
 */
#ifndef LS_PROTO_H
#define LS_PROTO_H

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "lock.h"

/* Misuse of an internal API: abort with file:line (git's BUG()). */
#define LS_BUG(msg)                                                                  \
	do {                                                                         \
		fprintf(stderr, "BUG: %s:%d: %s\n", __FILE__, __LINE__, msg);        \
		abort();                                                             \
	} while (0)

/* a + b and a * b for non-negative values, saturating at LS_NEVER. */
static inline int64_t ls_sat_add(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_add_overflow(a, b, &r) ? LS_NEVER : r;
}

static inline int64_t ls_sat_mul(int64_t a, int64_t b)
{
	int64_t r;
	return __builtin_mul_overflow(a, b, &r) ? LS_NEVER : r;
}

/*
 * now() - mtime > ms, exactly as JS compares Date.now() (whole ms) with the
 * fractional mtimeMs: done in integer ns.  A limit too large for ns never
 * runs out; an mtime absurdly far in the past is old.
 */
static inline int ls_older_than(int64_t now_ms, int64_t mtime_ns, int64_t ms)
{
	int64_t lim_ns, now_ns, age_ns;

	if (__builtin_mul_overflow(ms, 1000000, &lim_ns))
		return 0;
	if (__builtin_mul_overflow(now_ms, 1000000, &now_ns) ||
	    __builtin_sub_overflow(now_ns, mtime_ns, &age_ns))
		return mtime_ns < 0;
	return age_ns > lim_ns;
}

/* ls_older_than with the limit in us (lk->us: exact at any --time-scale);
 * now stays the protocol's whole-ms clock, as the origin's. */
static inline int ls_older_than_us(int64_t now_ms, int64_t mtime_ns, int64_t us)
{
	int64_t lim_ns, now_ns, age_ns;

	if (__builtin_mul_overflow(us, 1000, &lim_ns))
		return 0;
	if (__builtin_mul_overflow(now_ms, 1000000, &now_ns) ||
	    __builtin_sub_overflow(now_ns, mtime_ns, &age_ns))
		return mtime_ns < 0;
	return age_ns > lim_ns;
}

/* An age in whole ms (a record's `at`) past a limit in us. */
static inline int ls_ms_past_us(int64_t age_ms, int64_t us)
{
	int64_t a;
	if (__builtin_mul_overflow(age_ms, 1000, &a))
		return age_ms > 0;
	return a > us;
}

/* Note a failed step's errno in lk->last_error (for reports); returns it. */
static inline int ls_note_errno(struct lock *lk)
{
	lk->last_error = errno;
	return errno;
}

/* Raise e out of acquire or release: -1 with errno, noted for reports. */
static inline int ls_raise(struct lock *lk, int e)
{
	lk->last_error = e;
	errno = e;
	return -1;
}

/* base + suffix into buf[PATH_MAX]; -1 ENAMETOOLONG if it does not fit. */
static inline int ls_path_cat(char *buf, const char *base, const char *suffix)
{
	int n = snprintf(buf, PATH_MAX, "%s%s", base, suffix);
	if (n < 0 || n >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

/* The volter records' fields (proto.c). */
/* os.hostname() as the protocols see it (fsx_hostname); "" if unreadable. */
void ls_hostname(char *buf, size_t len);
/* new Date(ms).toISOString(): "2024-05-01T12:00:00.000Z". */
void ls_iso(int64_t ms, char *buf, size_t len);
/* Date.parse of toISOString's form; 0 ok, -1 anything else. */
int ls_parse_iso(const char *s, int64_t *ms);

#endif
