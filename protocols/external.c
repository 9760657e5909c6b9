/*
 * external.c - lock implementations lockstorm does not model but runs: an
 * adapter process drives the real library (proper-lockfile, py-filelock,
 * util-linux flock(1), ...) and reports its events on a pipe
 * (docs/external-workers.md; harness/extworker.c runs them).
 *
 * Each adapter is one `struct lock_ops` here, named "ext:NAME", so the run
 * configuration, run.json, the checker's stale ages and wait budgets and
 * `lockstorm list protocols` treat it like a built-in revision.  Its hooks
 * acquire/held/release are never called (the adapter process takes the lock);
 * they fail with ENOTSUP.  The table below says where the adapter lives and
 * whether its stale_ms is the implementation's real stale age (the checker
 * then allows a reclaim past it) or only a nominal one that sizes faults such
 * as for=1.5stale (the implementation never reclaims a held lock).
 *
 * Adding an adapter: its directory adapters/NAME/ with an executable `run`,
 * one ops table and one line in ext_adapters[] below.
 */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "external.h"
#include "proto.h"

static const char *const ext_points[] = {
	[PT_ATTEMPT] = "ext/acquire/after-attempt",
	[PT_ACQUIRED] = "ext/acquire/after-acquired",
	[PT_READ] = "ext/write/after-read",
	[PT_COMMIT_BEGIN] = "ext/write/after-commit-begin",
	[PT_COMMIT] = "ext/write/after-commit",
	[PT_RELEASE_BEGIN] = "ext/release/after-release-begin",
	[PT_RELEASED] = "ext/release/after-released",
	[PT__N] = NULL,
};

const char *const *const ext_point_names = ext_points;

static const struct param flock1_params[] = {
	{ "stale_ms", 10000, PU_MS, NULL, "nominal (flock never goes stale): sizes faults such as for=1.5stale" },
	{ "wait_ms", 10000, PU_MS, NULL, "flock -w: how long one acquire waits before it ends busy" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static const struct param proper_lockfile_params[] = {
	{ "stale_ms", 10000, PU_MS, NULL, "lock(): stale - a lock whose mtime is older is taken over" },
	{ "update_ms", 5000, PU_MS, NULL, "lock(): update - how often the holder refreshes the lock's mtime" },
	{ "wait_ms", 10000, PU_MS, NULL, "how long one acquire retries (retries: maxRetryTime) before it ends busy" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static const struct param npm_lockfile_params[] = {
	{ "stale_ms", 10000, PU_MS, NULL, "lock(): stale - an older lock file is removed and retaken" },
	{ "wait_ms", 10000, PU_MS, NULL, "lock(): wait - how long one acquire polls before it ends busy" },
	{ "poll_ms", 100, PU_MS, NULL, "lock(): pollPeriod - how often a waiting acquire looks again" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static const char *const py_filelock_kinds[] = { "filelock", "softfilelock", NULL };

static const struct param py_filelock_params[] = {
	{ "stale_ms", 10000, PU_MS, NULL, "nominal (neither kind reclaims a held lock): sizes faults such as for=1.5stale" },
	{ "wait_ms", 10000, PU_MS, NULL, "acquire(timeout=): how long one acquire waits before it ends busy" },
	{ "kind", 0, PU_CHOICE, py_filelock_kinds, "filelock: FileLock (fcntl); softfilelock: SoftFileLock (O_EXCL file)" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static const struct param liblockfile_params[] = {
	{ "stale_ms", 300000, PU_MS, NULL, "lockfile_create: a lock file older than this (5 min, in the library) is removed" },
	{ "wait_ms", 75000, PU_MS, NULL, "the wait budget the watchdog grants one lockfile_create (5 retries sleep 5+10+15+20+25 s)" },
	{ "retries", 5, PU_COUNT, NULL, "lockfile_create(retries)" },
	{ "pid", 1, PU_COUNT, NULL, "1: L_PID (the lock records the holder's pid; a dead holder's lock is removed)" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static const struct param exec_params[] = {
	{ "stale_ms", 10000, PU_MS_NEVER, NULL,
	  "the command's stale age: a holder older than this may be reclaimed; never: it never reclaims" },
	{ "wait_ms", 10000, PU_MS, NULL, "how long one acquire of the command may wait" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

static int ext_init(struct lock *lk)
{
	(void)lk;
	return 0;
}

/* The adapter process takes the lock: these are never called in a run. */
static int ext_unsupported(struct lock *lk)
{
	lk->last_error = ENOTSUP;
	errno = ENOTSUP;
	return -1;
}

static int ext_held(struct lock *lk)
{
	(void)lk;
	return 1;
}

static int64_t ext_param(const struct lock *lk, const char *name, int64_t fallback)
{
	int i = param_index(lk->ops->params, name);
	return i >= 0 ? lk->param[i] : fallback;
}

static int64_t ext_stale_ms(const struct lock *lk)
{
	const struct ext_adapter *a = ext_of(lk->ops);
	if (!a || !a->stale)
		return LS_NEVER;
	return ext_param(lk, "stale_ms", LS_NEVER);
}

static int64_t ext_wait_budget_ms(const struct lock *lk)
{
	return ext_param(lk, "wait_ms", 10000);
}

#define EXT_OPS(var, NAME, ORIGIN, SUMMARY, PARAMS, FLAGS)                        \
	const struct lock_ops var = {                                             \
		.name = NAME,                                                     \
		.origin = ORIGIN,                                                 \
		.summary = SUMMARY,                                               \
		.claims = "",                                                     \
		.params = PARAMS,                                                 \
		.points = ext_points,                                             \
		.flags = LOCK_EXTERNAL | (FLAGS),                                 \
		.init = ext_init,                                                 \
		.acquire = ext_unsupported,                                       \
		.held = ext_held,                                                 \
		.release = ext_unsupported,                                       \
		.stale_ms = ext_stale_ms,                                         \
		.wait_budget_ms = ext_wait_budget_ms,                             \
	}

EXT_OPS(ext_flock1_ops, "ext:flock1", "util-linux flock(1): flock -w SECONDS FD",
	"external: a kernel flock taken by the flock(1) tool; freed when the holder dies; never stale",
	flock1_params, 0);
EXT_OPS(ext_proper_lockfile_ops, "ext:proper-lockfile", "proper-lockfile (npm): lock() / release()",
	"external: mkdir <file>.lock, mtime refreshed every update_ms, taken over when older than stale_ms",
	proper_lockfile_params, LOCK_AGE_BY_DIR);
EXT_OPS(ext_npm_lockfile_ops, "ext:npm-lockfile", "lockfile (npm): lock() / unlock()",
	"external: O_EXCL lock file, removed and retaken when older than stale_ms", npm_lockfile_params,
	LOCK_AGE_BY_DIR);
EXT_OPS(ext_py_filelock_ops, "ext:py-filelock", "filelock (Debian python3-filelock): FileLock / SoftFileLock",
	"external: fcntl lock (FileLock) or O_EXCL file (SoftFileLock); neither reclaims", py_filelock_params, 0);
EXT_OPS(ext_liblockfile_ops, "ext:liblockfile", "liblockfile (Debian): lockfile_create / lockfile_remove",
	"external: link(2)-made lock file with the holder's pid; removed when the holder is dead or it is old",
	liblockfile_params, LOCK_AGE_BY_DIR);
EXT_OPS(ext_exec_ops, "exec", "--exec CMD: any program that speaks the worker protocol",
	"external: the command given with --exec (exec'd itself when it is plain words, else by /bin/sh -c)",
	exec_params, LOCK_AGE_BY_DIR);

const struct ext_adapter ext_adapters[] = {
	{ "flock1", "flock1/run", &ext_flock1_ops, 0, 0, EXT_SEAM_HELPER },
	{ "proper-lockfile", "proper-lockfile/run", &ext_proper_lockfile_ops, 1, 0, EXT_SEAM_HELPER },
	{ "npm-lockfile", "npm-lockfile/run", &ext_npm_lockfile_ops, 1, 0, EXT_SEAM_HELPER },
	{ "py-filelock", "py-filelock/run", &ext_py_filelock_ops, 0, 0, EXT_SEAM_HELPER },
	{ "liblockfile", "liblockfile/run", &ext_liblockfile_ops, 1, 0, EXT_SEAM_PRELOAD },
	{ "exec", NULL, &ext_exec_ops, 1, 0, EXT_SEAM_HELPER },
	{ NULL, NULL, NULL, 0, 0, 0 },
};

/* Fill ops as the tables above are filled. */
static void ext_external_ops(struct lock_ops *ops, const char *name, const char *origin, const char *summary,
			     const struct param *params, unsigned flags)
{
	const struct lock_ops tmpl = { .name = name, .origin = origin, .summary = summary, .claims = "",
				       .params = params, .points = ext_points, .flags = LOCK_EXTERNAL | flags,
				       .init = ext_init, .acquire = ext_unsupported, .held = ext_held,
				       .release = ext_unsupported, .stale_ms = ext_stale_ms,
				       .wait_budget_ms = ext_wait_budget_ms };
	*ops = tmpl;
}

/* The user's adapters, made of their manifests as they are asked for. */
#define EXT_USER_MAX 32
static struct ext_adapter ext_user[EXT_USER_MAX];
static struct lock_ops ext_user_ops[EXT_USER_MAX];
static unsigned ext_nuser;

/* DIR/NAME/adapter.json into the next free entry: 0, or -1. */
static int ext_user_add(const char *dir, const char *name)
{
	struct ext_manifest m;
	if (ext_nuser == EXT_USER_MAX || ext_manifest_read(dir, name, &m) != 0)
		return -1;
	char pname[64];
	snprintf(pname, sizeof pname, "ext:%s", m.name);
	struct lock_ops *ops = &ext_user_ops[ext_nuser];
	ext_external_ops(ops, strdup(pname), m.origin, m.summary, m.params, m.stale ? LOCK_AGE_BY_DIR : 0);
	struct ext_adapter *a = &ext_user[ext_nuser];
	a->name = ops->name + 4;
	a->run = m.run;
	a->ops = ops;
	a->stale = m.stale;
	a->workloads = m.workloads;
	a->seam = m.seam;
	free(m.name);
	ext_nuser++;
	return 0;
}

/* A shipped adapter's name: its table above wins over its manifest. */
static int ext_builtin(const char *name)
{
	for (const struct ext_adapter *a = ext_adapters; a->name; a++)
		if (!strcmp(a->name, name))
			return 1;
	return 0;
}

/* Load NAME from the first directory on $LOCKSTORM_ADAPTERS that has it, or
 * (NAME NULL) every adapter of every directory.  The loaded one, or NULL. */
static const struct ext_adapter *ext_each_dir(const char *name)
{
	const char *env = getenv("LOCKSTORM_ADAPTERS");
	if (!env || !*env)
		return NULL;
	char list[8192];
	snprintf(list, sizeof list, "%s", env);
	for (char *save = NULL, *d = strtok_r(list, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (name) {
			if (ext_user_add(d, name) == 0)
				return &ext_user[ext_nuser - 1];
			continue;
		}
		DIR *dp = opendir(d);
		if (!dp)
			continue;
		struct dirent *e;
		while ((e = readdir(dp)))
			if (ext_name_ok(e->d_name) && !ext_builtin(e->d_name) && !ext_user_find(e->d_name))
				ext_user_add(d, e->d_name);
		closedir(dp);
	}
	return NULL;
}

const struct ext_adapter *ext_user_find(const char *name)
{
	for (unsigned i = 0; i < ext_nuser; i++)
		if (!strcmp(ext_user[i].name, name))
			return &ext_user[i];
	return NULL;
}

const struct ext_adapter *ext_user_load(const char *name)
{
	const struct ext_adapter *a = ext_user_find(name);
	if (a || !ext_name_ok(name))
		return a;
	return ext_each_dir(name);
}

void ext_user_scan(void)
{
	ext_each_dir(NULL);
}

const struct ext_adapter *ext_user_at(unsigned i)
{
	return i < ext_nuser ? &ext_user[i] : NULL;
}

const struct ext_adapter *ext_of(const struct lock_ops *ops)
{
	for (const struct ext_adapter *a = ext_adapters; a->name; a++)
		if (a->ops == ops)
			return a;
	const struct ext_adapter *u;
	for (unsigned i = 0; (u = ext_user_at(i)); i++)
		if (u->ops == ops)
			return u;
	return NULL;
}

const struct ext_adapter *ext_adapter_at(unsigned i)
{
	unsigned nb = 0;
	while (ext_adapters[nb].name)
		nb++;
	if (i < nb)
		return &ext_adapters[i];
	if (i == nb)
		ext_user_scan();
	return ext_user_at(i - nb);
}

const struct lock_ops *ext_find(const char *name)
{
	if (!strcmp(name, "exec"))
		return &ext_exec_ops;
	if (strncmp(name, "ext:", 4))
		return NULL;
	for (const struct ext_adapter *a = ext_adapters; a->name; a++)
		if (a->run && !strcmp(a->name, name + 4))
			return a->ops;
	const struct ext_adapter *u = ext_user_load(name + 4);
	return u ? u->ops : NULL;
}

void ext_names(char *buf, size_t len)
{
	size_t used = 0;
	if (!len)
		return;
	buf[0] = '\0';
	const struct ext_adapter *a;
	for (unsigned i = 0; (a = ext_adapter_at(i)); i++) {
		if (!a->run)
			continue;
		int n = snprintf(buf + used, len - used, "%sext:%s", used ? ", " : "", a->name);
		if (n < 0 || (size_t)n >= len - used)
			return;
		used += (size_t)n;
	}
	if (ext_manifest_error()[0])
		snprintf(buf + used, len - used, " (skipped %s)", ext_manifest_error());
}
