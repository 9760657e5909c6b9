/*
 * lockfile_record.c - lockfile-recorded's holder record: its format (the
 * JSON a take writes), reading and parsing it, the token (see
 * lockfile_shared.h and PROTOCOLS.md §5).
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "lockfile_shared.h"
#include "proto.h"

/* randomUUID(): a v4 uuid from the worker's stream. */
void lr_uuid(struct lock *lk, char out[LR_UUID_LEN + 1])
{
	uint64_t a = prng_next(lk->rng), b = prng_next(lk->rng);

	a = (a & ~0xf000ULL) | 0x4000ULL;                  /* version 4 */
	b = (b & 0x3fffffffffffffffULL) | 0x8000000000000000ULL; /* variant 10 */
	snprintf(out, LR_UUID_LEN + 1, "%08llx-%04llx-%04llx-%04llx-%012llx",
		 (unsigned long long)(a >> 32), (unsigned long long)((a >> 16) & 0xffff),
		 (unsigned long long)(a & 0xffff), (unsigned long long)(b >> 48),
		 (unsigned long long)(b & 0xffffffffffffULL));
}

/* parse(text) into *h; a non-object, or text that does not parse, is null. */
void lr_parse_holder(const char *text, size_t len, struct lr_holder *h)
{
	json_error_t err;
	json_t *root, *v;

	memset(h, 0, sizeof *h);
	root = json_loadb(text, len, 0, &err);
	if (!root)
		return;
	if (!json_is_object(root))
		goto out;
	h->present = 1;
	v = json_object_get(root, "pid");
	if (json_is_integer(v)) {
		h->pid_int = 1;
		h->pid = json_integer_value(v);
	}
	v = json_object_get(root, "hostname");
	if (json_is_string(v)) {
		h->has_host = 1;
		snprintf(h->host, sizeof h->host, "%s", json_string_value(v));
	}
	v = json_object_get(root, "at");
	if (json_is_string(v) && ls_parse_iso(json_string_value(v), &h->at_ms) == 0)
		h->at_ok = 1;
	v = json_object_get(root, "token");
	if (json_is_string(v)) {
		h->has_token = 1;
		h->token_long = json_string_length(v) > LR_UUID_LEN;
		snprintf(h->token, sizeof h->token, "%s", json_string_value(v));
	}
out:
	json_decref(root);
}

/* Read PATH and parse it as a record: 0, or -1 (errno) when it cannot be read. */
int lr_read_holder(struct lock *lk, const char *path, struct lr_holder *h)
{
	char *text;
	size_t len;

	memset(h, 0, sizeof *h);
	if (fsx_read_file(path, &text, &len) != 0) {
		ls_note_errno(lk);
		return -1;
	}
	lr_parse_holder(text, len, h);
	free(text);
	return 0;
}

/* holder?.token == token */
int lr_token_is(const struct lr_holder *h, const char *token)
{
	return h->present && h->has_token && !h->token_long && strcmp(h->token, token) == 0;
}

/* A record naming this host. */
int lr_this_host(const struct lr_holder *h)
{
	char host[LR_HOST_MAX];

	if (!h->present || !h->has_host)
		return 0;
	ls_hostname(host, sizeof host);
	return strcmp(h->host, host) == 0;
}

int lr_pid_dead(long long pid)
{
	if (pid < INT_MIN || pid > INT_MAX)
		return 1; /* no kill(2) can name it */
	return !fsx_pid_alive((pid_t)pid);
}

/*
 * A record (malloc'd, ending in "\n"): the lock's
 * {"pid","hostname","at","token","operation","caller"}, or with
 * operation == NULL the .recovery's {"pid","hostname","at","token"}.  `at`
 * is AT_SET when given (a rewrite keeps its take's), else now; WAITING_PATH
 * adds "waitingFor":{"path","since"}.
 */
char *lr_record(struct lock *lk, const char *token, const char *operation, const char *at_set,
		       const char *waiting_path, const char *waiting_since, size_t *len)
{
	char host[LR_HOST_MAX], at[40], caller[32];
	json_t *o = json_object();
	char *text, *nl;
	int bad;

	if (!o)
		goto out_nomem;
	ls_hostname(host, sizeof host);
	if (at_set)
		snprintf(at, sizeof at, "%s", at_set);
	else
		ls_iso(fsx_now_ms(), at, sizeof at);
	bad = json_object_set_new(o, "pid", json_integer((json_int_t)fsx_getpid())) ||
	      json_object_set_new(o, "hostname", json_string(host)) ||
	      json_object_set_new(o, "at", json_string(at)) ||
	      json_object_set_new(o, "token", json_string(token));
	if (!bad && operation) {
		snprintf(caller, sizeof caller, "lockstorm/w%u", lk->worker);
		bad = json_object_set_new(o, "operation", json_string(operation)) ||
		      json_object_set_new(o, "caller", json_string(caller));
	}
	if (!bad && waiting_path)
		bad = json_object_set_new(o, "waitingFor",
					  json_pack("{s:s, s:s}", "path", waiting_path, "since",
						    waiting_since)) != 0;
	if (bad) {
		json_decref(o);
		goto out_nomem;
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		goto out_nomem;
	*len = strlen(text);
	nl = realloc(text, *len + 2);
	if (!nl) {
		free(text);
		goto out_nomem;
	}
	nl[(*len)++] = '\n';
	nl[*len] = '\0';
	return nl;

out_nomem:
	errno = ENOMEM;
	return NULL;
}

/* Does text[0..len) contain "token":"<token>"? */
int lr_has_needle(const char *text, size_t len, const char *token)
{
	char needle[LR_UUID_LEN + 16];
	int n = snprintf(needle, sizeof needle, "\"token\":\"%s\"", token);

	return n > 0 && memmem(text, len, needle, (size_t)n) != NULL;
}
