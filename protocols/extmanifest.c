/*
 * extmanifest.c - adapters users add themselves: a directory NAME/ with an
 * executable and a manifest NAME/adapter.json (read with jansson), found on
 * $LOCKSTORM_ADAPTERS (a ':'-separated path list).  Each becomes -p ext:NAME
 * like a built-in adapter of external.c.  The manifest:
 *
 *   { "name": "my-lock",                      the directory's name: [a-z0-9-]+
 *     "origin": "my-lock 1.2 (npm)",  "summary": "one line",
 *     "run": "run",                           the executable, inside the directory
 *     "stale": "stale_ms" | "never",          the library's stale age, or none
 *     "workloads": ["update", "hold"],
 *     "seam": "preload",                      optional: how explore sees the library's
 *                                             calls: "helper" (the default: the Node or
 *                                             Python helper), "preload" (a C program:
 *                                             liblockstorm_explore.so on LD_PRELOAD)
 *     "params": [ { "name": "stale_ms", "unit": "ms", "default": 10000, "help": "..." },
 *                 { "name": "wait_ms", "unit": "ms", "default": 10000, "help": "..." },
 *                 { "name": "retries", "unit": "count", "default": 5, "help": "..." },
 *                 { "name": "kind", "unit": "choice", "choices": ["a", "b"], "default": 0 } ] }
 *
 * stale_ms and wait_ms (unit ms) must be there, as every adapter has them.
 * Errors: a manifest that breaks a rule is refused, and ext_manifest_error()
 * says why (one line) for the unknown-protocol message.
 *
 * This file only reads a manifest into plain fields (struct ext_manifest);
 * external.c makes the adapter of them and keeps the list.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "external.h"

static char ext_err[512];

const char *ext_manifest_error(void)
{
	return ext_err;
}

static const char *ext_str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static int ext_bad(const char *path, const char *what)
{
	snprintf(ext_err, sizeof ext_err, "%s: %s", path, what);
	for (char *c = ext_err; *c; c++) /* one line: jansson quotes the text near the error as is */
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return -1;
}

int ext_name_ok(const char *s)
{
	if (!s || !*s || strlen(s) > 40)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

static void ext_params_free(struct param *pt)
{
	for (struct param *p = pt; p && p->name; p++) {
		for (const char *const *c = p->choices; c && *c; c++)
			free((void *)*c);
		free((void *)p->choices);
		free((void *)p->name);
		free((void *)p->help);
	}
	free(pt);
}

void ext_manifest_free(struct ext_manifest *m)
{
	free(m->name);
	free(m->origin);
	free(m->summary);
	free(m->run);
	ext_params_free(m->params);
	memset(m, 0, sizeof *m);
}

int ext_manifest_read(const char *dir, const char *name, struct ext_manifest *m)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s/adapter.json", dir, name);
	memset(m, 0, sizeof *m);
	if (access(path, R_OK) != 0)
		return -1;
	return ext_manifest_parse(path, dir, name, m);
}

int ext_manifest_parse(const char *path, const char *dir, const char *name, struct ext_manifest *m)
{
	char run[4096];
	memset(m, 0, sizeof *m);
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return ext_bad(path, je.text);
	int rc = -1;
	const char *nm = ext_str(root, "name"), *origin = ext_str(root, "origin"), *summary = ext_str(root, "summary");
	const char *rn = ext_str(root, "run"), *stale = ext_str(root, "stale");
	json_t *seam = json_object_get(root, "seam");
	json_t *params = json_object_get(root, "params"), *wl = json_object_get(root, "workloads");
	if (!json_is_object(root) || !nm || strcmp(nm, name) || !ext_name_ok(nm)) {
		ext_bad(path, "\"name\" must be the directory's name ([a-z0-9-]+)");
		goto out;
	}
	if (!rn || !*rn || rn[0] == '/' || strstr(rn, "..")) {
		ext_bad(path, "\"run\" must name the executable inside the adapter's directory");
		goto out;
	}
	if (!stale || (strcmp(stale, "never") && strcmp(stale, "stale_ms"))) {
		ext_bad(path, "\"stale\" must be \"stale_ms\" or \"never\"");
		goto out;
	}
	if (seam && (!json_is_string(seam) || (strcmp(json_string_value(seam), "helper") &&
						  strcmp(json_string_value(seam), "preload")))) {
		ext_bad(path, "\"seam\" must be \"helper\" or \"preload\"");
		goto out;
	}
	size_t np = json_array_size(params);
	if (!json_is_array(params) || np + 1 > LS_MAX_PARAMS) {
		ext_bad(path, "\"params\" must be a list of at most 15 parameters");
		goto out;
	}
	unsigned wmask = 0;
	for (size_t i = 0; i < json_array_size(wl); i++) {
		const char *w = json_string_value(json_array_get(wl, i));
		if (w && !strcmp(w, "update"))
			wmask |= 1;
		else if (w && !strcmp(w, "hold"))
			wmask |= 2;
		else {
			ext_bad(path, "\"workloads\" lists update and hold only");
			goto out;
		}
	}
	if (!wmask) {
		ext_bad(path, "\"workloads\" must list update, hold or both");
		goto out;
	}
	struct param *pt = calloc(np + 1, sizeof *pt);
	if (!pt) {
		ext_bad(path, "out of memory");
		goto out;
	}
	int have = 0;
	for (size_t i = 0; i < np; i++) {
		json_t *p = json_array_get(params, i), *def = json_object_get(p, "default");
		const char *pn = ext_str(p, "name"), *unit = ext_str(p, "unit"), *help = ext_str(p, "help");
		json_t *ch = json_object_get(p, "choices");
		int choice = unit && !strcmp(unit, "choice");
		if (!pn || !unit || !json_is_integer(def) || json_integer_value(def) < 0 ||
		    (strcmp(unit, "ms") && strcmp(unit, "count") && !choice) ||
		    (choice && (!json_is_array(ch) || json_integer_value(def) >= (json_int_t)json_array_size(ch)))) {
			ext_params_free(pt);
			ext_bad(path, "each parameter needs \"name\", \"unit\" (ms, count, or choice with \"choices\") "
				      "and a whole \"default\" >= 0");
			goto out;
		}
		pt[i].name = strdup(pn);
		pt[i].def = json_integer_value(def);
		pt[i].unit = choice ? PU_CHOICE : !strcmp(unit, "count") ? PU_COUNT :
			     !strcmp(pn, "stale_ms") ? PU_MS_NEVER : PU_MS;
		if (choice) {
			const char **names = calloc(json_array_size(ch) + 1, sizeof *names);
			for (size_t k = 0; names && k < json_array_size(ch); k++)
				names[k] = strdup(json_string_value(json_array_get(ch, k)) ?
							  json_string_value(json_array_get(ch, k)) : "?");
			pt[i].choices = names;
		}
		pt[i].help = strdup(help ? help : "");
		have |= (!strcmp(pn, "stale_ms") && pt[i].unit != PU_COUNT) | (!strcmp(pn, "wait_ms") && pt[i].unit == PU_MS) << 1;
	}
	if (have != 3) {
		ext_params_free(pt);
		ext_bad(path, "\"params\" must have stale_ms and wait_ms (unit ms)");
		goto out;
	}
	snprintf(run, sizeof run, "%s/%s/%s", dir, name, rn);
	char full[4096];
	if (!realpath(run, full))
		snprintf(full, sizeof full, "%s", run);
	m->name = strdup(nm);
	m->origin = strdup(origin ? origin : nm);
	m->summary = strdup(summary ? summary : "a user's adapter");
	m->run = strdup(full);
	m->params = pt;
	m->stale = !strcmp(stale, "stale_ms");
	m->workloads = wmask;
	m->seam = seam && !strcmp(json_string_value(seam), "preload") ? EXT_SEAM_PRELOAD : EXT_SEAM_HELPER;
	rc = 0;
out:
	json_decref(root);
	return rc;
}
