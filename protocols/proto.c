/*
 * proto.c - helpers the volter protocols share: hostname and the ISO
 * timestamps of their holder records (see proto.h).
 */
#include "proto.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../faults/fsx.h"

/* os.hostname(), read live; "" if it cannot be read (Node never throws). */
void ls_hostname(char *buf, size_t len)
{
	if (fsx_hostname(buf, len) != 0)
		buf[0] = '\0';
	buf[len - 1] = '\0';
}

/* new Date(ms).toISOString(): "2024-05-01T12:00:00.000Z". */
void ls_iso(int64_t ms, char *buf, size_t len)
{
	time_t s = (time_t)(ms / 1000);
	int frac = (int)(ms % 1000);
	struct tm tm;

	if (frac < 0) {
		frac += 1000;
		s--;
	}
	gmtime_r(&s, &tm);
	snprintf(buf, len, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
}

/* n digits at s into *out; 0, or -1 if any is not a digit. */
static int ls_digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

/* Date.parse of toISOString's form, YYYY-MM-DDTHH:MM:SS[.f+]Z; -1 on
 * anything else (the caller then uses the mtime). */
int ls_parse_iso(const char *s, int64_t *ms)
{
	int y, mo, d, h, mi, sec, frac = 0;
	struct tm tm;
	const char *p;

	if (strlen(s) < 20 || ls_digits(s, 4, &y) || s[4] != '-' || ls_digits(s + 5, 2, &mo) ||
	    s[7] != '-' || ls_digits(s + 8, 2, &d) || s[10] != 'T' || ls_digits(s + 11, 2, &h) ||
	    s[13] != ':' || ls_digits(s + 14, 2, &mi) || s[16] != ':' ||
	    ls_digits(s + 17, 2, &sec))
		return -1;
	p = s + 19;
	if (*p == '.') {
		int place = 100, nd = 0;
		for (p++; *p >= '0' && *p <= '9'; p++, nd++) {
			frac += (*p - '0') * place;
			place /= 10;
		}
		if (!nd)
			return -1;
	}
	if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    sec > 59)
		return -1;
	memset(&tm, 0, sizeof tm);
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*ms = (int64_t)timegm(&tm) * 1000 + frac;
	return 0;
}
