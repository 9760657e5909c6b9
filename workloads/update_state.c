/*
 * update_state.c - the update workload's state file, parsed and formatted.
 *
 *   {"version":1,"revision":N,"counts":{"0":c0,"3":c3,...}}
 *
 * revision is the number of commits that built this file; counts has one
 * counter per worker (key: worker id in decimal), each commit adding one to
 * its committer's own.  A worker absent from counts has 0.
 *
 * Memory: update_state_parse() allocates st->counts itself, calloc'd with
 * st->nworkers entries -- the caller sets st->nworkers before the call and
 * releases the array with update_state_free().  On failure st->counts is
 * NULL and there is nothing to free.
 *
 * Shape rules (anything else is EBADMSG, "unparseable"): a JSON object;
 * "revision" an integer >= 0; "counts" an object whose keys are decimal
 * worker ids and whose values are integers >= 0; "version", when present,
 * an integer.  Counts for worker ids >= nworkers are accepted and dropped:
 * they are well-formed, just not this run's workers.  Other members are
 * ignored (the origin's payload carries more than the harness needs).
 */
#include "workload.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* A decimal worker id, no sign, no leading junk; -1 if KEY is not one. */
static long update_state_key(const char *key)
{
	long v = 0;

	if (!*key || strlen(key) > 9)
		return -1;
	for (const char *p = key; *p; p++) {
		if (*p < '0' || *p > '9')
			return -1;
		v = v * 10 + (*p - '0');
	}
	return v;
}

int update_state_parse(const char *buf, size_t len, struct update_state *st)
{
	json_error_t jerr;
	json_t *root, *rev, *ver, *counts, *val;
	const char *key;

	st->counts = calloc(st->nworkers ? st->nworkers : 1, sizeof *st->counts);
	if (!st->counts)
		return -1;
	st->revision = -1;
	root = buf ? json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr) : NULL;
	if (!root || !json_is_object(root))
		goto out_bad;
	rev = json_object_get(root, "revision");
	ver = json_object_get(root, "version");
	counts = json_object_get(root, "counts");
	if (!json_is_integer(rev) || json_integer_value(rev) < 0)
		goto out_bad;
	if (ver && !json_is_integer(ver))
		goto out_bad;
	if (!json_is_object(counts))
		goto out_bad;
	json_object_foreach(counts, key, val) {
		long w = update_state_key(key);

		if (w < 0 || !json_is_integer(val) || json_integer_value(val) < 0)
			goto out_bad;
		if ((unsigned long)w < st->nworkers)
			st->counts[w] = json_integer_value(val);
	}
	st->revision = json_integer_value(rev);
	json_decref(root);
	return 0;

out_bad:
	json_decref(root);
	free(st->counts);
	st->counts = NULL;
	st->revision = -1;
	errno = EBADMSG;
	return -1;
}

/* Compact JSON plus a newline; only non-zero counts are written (absent = 0).
 * NULL with errno ENOMEM on failure. */
char *update_state_format(const struct update_state *st, size_t *len)
{
	json_t *root = json_object(), *counts = json_object();
	char *s = NULL;

	if (!root || !counts)
		goto out_decref;
	for (unsigned w = 0; st->counts && w < st->nworkers; w++) {
		char key[16];

		if (st->counts[w] == 0)
			continue;
		snprintf(key, sizeof key, "%u", w);
		if (json_object_set_new(counts, key, json_integer(st->counts[w])) < 0)
			goto out_decref;
	}
	if (json_object_set_new(root, "version", json_integer(1)) < 0 ||
	    json_object_set_new(root, "revision", json_integer(st->revision)) < 0)
		goto out_decref;
	/* set_new takes the reference even when it fails */
	if (json_object_set_new(root, "counts", counts) < 0) {
		counts = NULL;
		goto out_decref;
	}
	counts = NULL;
	s = json_dumps(root, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (s) {
		size_t l = strlen(s);
		char *t = realloc(s, l + 2);

		if (!t) {
			free(s);
			s = NULL;
			goto out_decref;
		}
		s = t;
		s[l] = '\n';
		s[l + 1] = '\0';
		if (len)
			*len = l + 1;
	}
out_decref:
	json_decref(counts);
	json_decref(root);
	if (!s)
		errno = ENOMEM;
	return s;
}

void update_state_free(struct update_state *st)
{
	free(st->counts);
	st->counts = NULL;
}
