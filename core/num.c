/*
 * num.c - the one number and duration grammar (see num.h).
 *
 * Parsed by hand, not with strtol(s, 0)/strtod alone: base 0 reads "010" as
 * octal and refuses "08", and strtod takes "inf", "nan", hex and exponents,
 * none of which a user means by a worker count or a stall length.  The text
 * is checked against the grammar first; strtoull/strtod then convert only
 * what passed (decimal digits and one '.').
 */
#include "num.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NUM_TEXT_MAX 64 /* longer than any number a user means */

static int num_fail(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int num_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	if (!why || !len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

int num_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out, char *why, size_t len)
{
	const char *p = s;
	while (is_digit(*p))
		p++;
	int ok = p != s && !*p;
	unsigned long long v = 0;
	if (ok) {
		errno = 0;
		v = strtoull(s, NULL, 10);
		ok = errno == 0 && v >= lo && v <= hi;
	}
	if (ok) {
		*out = v;
		return 0;
	}
	if (lo == 0 && hi == UINT64_MAX)
		return num_fail(why, len, "bad number '%s': want a whole decimal number", s);
	if (hi == UINT64_MAX)
		return num_fail(why, len, "bad number '%s': want a whole number >= %llu", s, (unsigned long long)lo);
	return num_fail(why, len, "bad number '%s': want a whole number from %llu to %llu", s,
			(unsigned long long)lo, (unsigned long long)hi);
}

/*
 * [sign] digits [. digits] at the head of s (at least one digit).  The
 * value into *v, the rest of s into *rest.  -1 when s does not start so.
 */
static int num_head(const char *s, int allow_sign, double *v, const char **rest)
{
	const char *p = s;
	int digits = 0;
	if (allow_sign && (*p == '+' || *p == '-'))
		p++;
	for (; is_digit(*p); p++)
		digits++;
	if (*p == '.' && is_digit(p[1]))
		for (p++; is_digit(*p); p++)
			digits++;
	if (!digits || p - s >= NUM_TEXT_MAX)
		return -1;
	char buf[NUM_TEXT_MAX];
	memcpy(buf, s, (size_t)(p - s));
	buf[p - s] = '\0';
	*v = strtod(buf, NULL); /* only digits, '.' and a sign: finite */
	*rest = p;
	return 0;
}

int num_real(const char *s, double lo, double hi, unsigned flags, double *out, char *why, size_t len)
{
	double v;
	const char *rest;
	int ok = num_head(s, flags & NUM_SIGNED, &v, &rest) == 0 && !*rest;
	if (ok && v >= lo && v <= hi && !((flags & NUM_ABOVE) && v == lo)) {
		*out = v;
		return 0;
	}
	if (!ok)
		return num_fail(why, len, "bad number '%s': want a decimal number like 0.5%s", s,
				(flags & NUM_SIGNED) ? " or -1.5" : "");
	if (flags & NUM_ABOVE)
		return num_fail(why, len, "bad number '%s': want a number above %g, at most %g", s, lo, hi);
	return num_fail(why, len, "bad number '%s': want a number from %g to %g", s, lo, hi);
}

static const struct {
	const char *name;
	double ms;
} num_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60000 }, { "h", 3600000 }, { NULL, 0 },
};

int num_duration(const char *s, unsigned flags, struct num_dur *out, char *why, size_t len)
{
	const char *units = (flags & NUM_STALE) ? "ms, s, m, h, stale" : "ms, s, m, h";
	double v;
	const char *unit;
	if (!*s)
		return num_fail(why, len, "bad duration '': empty (give a number and a unit: %s)", units);
	if (!(flags & NUM_SIGNED) && (*s == '-' || *s == '+'))
		return num_fail(why, len, "bad duration '%s': no sign here (a length is >= 0)", s);
	if (num_head(s, flags & NUM_SIGNED, &v, &unit))
		return num_fail(why, len, "bad duration '%s': not a number (want e.g. 300ms, 2s, 1.5m)", s);
	if (!*unit && !(flags & NUM_BARE_MS))
		return num_fail(why, len, "bad duration '%s': give a unit (%s)", s, units);
	if ((flags & NUM_STALE) && !strcmp(unit, "stale")) {
		if (v < 0)
			return num_fail(why, len, "bad duration '%s': a multiple of the stale age is >= 0", s);
		if (v > NUM_MAX_STALE)
			return num_fail(why, len, "bad duration '%s': over %g x the stale age", s, NUM_MAX_STALE);
		out->ms = 0;
		out->stale = v;
		out->is_stale = 1;
		return 0;
	}
	double mult = 0;
	if (!*unit)
		mult = 1;
	for (int i = 0; !mult && num_units[i].name; i++)
		if (!strcmp(unit, num_units[i].name))
			mult = num_units[i].ms;
	if (!mult)
		return num_fail(why, len, "bad duration '%s': unknown unit '%s' (%s)", s, unit, units);
	double ms = v * mult; /* no libm: the preload shim links this too */
	if (ms > (double)NUM_MAX_MS || ms < -(double)NUM_MAX_MS)
		return num_fail(why, len, "bad duration '%s': over 30 days", s);
	out->ms = (int64_t)(ms < 0 ? ms - 0.5 : ms + 0.5); /* to the nearest ms */
	out->stale = 0;
	out->is_stale = 0;
	return 0;
}

int num_ms(const char *s, unsigned flags, int64_t *out, char *why, size_t len)
{
	struct num_dur d;
	if (num_duration(s, flags & ~(unsigned)NUM_STALE, &d, why, len))
		return -1;
	*out = d.ms;
	return 0;
}
