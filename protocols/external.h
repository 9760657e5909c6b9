/*
 * external.h - external adapters: real lock implementations run as separate
 * processes that speak the worker protocol (docs/external-workers.md).
 *
 *   -p ext:NAME      a shipped adapter: <adapters dir>/NAME/run
 *   --exec 'CMD'     any other program, run as /bin/sh -c CMD (protocol "exec")
 *
 * lock_find() finds these names too; lock_registry[] does not list them
 * (their hooks are never called in-process, so the conformance suite skips
 * them).  ops->flags has LOCK_EXTERNAL.
 */
#ifndef LS_EXTERNAL_H
#define LS_EXTERNAL_H

#include "lock.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ext_adapter {
	const char *name;           /* "flock1": run as -p ext:flock1 */
	const char *run;            /* relative to the adapters dir; NULL for --exec */
	const struct lock_ops *ops;
	int stale;                  /* 1: stale_ms is the implementation's stale age; 0: nominal only */
	unsigned workloads;         /* 1 update, 2 hold; 0: both (the built-in table) */
	int seam;                   /* explore's seam: EXT_SEAM_HELPER (the language's helper puts
	                               itself in) or EXT_SEAM_PRELOAD (liblockstorm_explore.so) */
};
enum { EXT_SEAM_HELPER, EXT_SEAM_PRELOAD };

extern const struct ext_adapter ext_adapters[]; /* terminated by a {NULL} entry */
extern const struct lock_ops ext_exec_ops;
/* The points the driver decides stall, stop and crash at (after each event
 * line): ext_point_names[PT_*], NULL-terminated (the adapters' .points). */
enum ext_point { PT_ATTEMPT, PT_ACQUIRED, PT_READ, PT_COMMIT_BEGIN, PT_COMMIT, PT_RELEASE_BEGIN, PT_RELEASED, PT__N };
extern const char *const *const ext_point_names;

/* NULL for a built-in protocol. */
const struct ext_adapter *ext_of(const struct lock_ops *ops);
/* "ext:flock1" or "exec"; NULL if unknown. */
const struct lock_ops *ext_find(const char *name);
/* "ext:flock1, ext:proper-lockfile, ..." (and every user adapter on $LOCKSTORM_ADAPTERS) */
void ext_names(char *buf, size_t len);
/* Every adapter, built-in then the user's (scanned from $LOCKSTORM_ADAPTERS): i = 0, 1, .. until NULL. */
const struct ext_adapter *ext_adapter_at(unsigned i);

/* A user's adapter (NAME/adapter.json on $LOCKSTORM_ADAPTERS), loaded by external.c. */
const struct ext_adapter *ext_user_find(const char *name); /* loaded already, or NULL */
const struct ext_adapter *ext_user_load(const char *name); /* found and loaded, or NULL */
void ext_user_scan(void);                                  /* load every one */
const struct ext_adapter *ext_user_at(unsigned i);

/* extmanifest.c: one manifest read into plain fields (strings and params malloc'd). */
struct ext_manifest {
	char *name, *origin, *summary;
	char *run;                  /* the executable's absolute path */
	struct param *params;       /* terminated by a {NULL} entry */
	int stale;                  /* "stale": "stale_ms" */
	unsigned workloads;         /* 1 update, 2 hold */
	int seam;                   /* "seam": "preload" (EXT_SEAM_PRELOAD), else EXT_SEAM_HELPER */
};
/* DIR/NAME/adapter.json: 0, or -1 (absent, or refused: ext_manifest_error() says why). */
int ext_manifest_read(const char *dir, const char *name, struct ext_manifest *m);
/* The manifest at PATH, as if it were DIR/NAME/adapter.json (the fuzz target's way in). */
int ext_manifest_parse(const char *path, const char *dir, const char *name, struct ext_manifest *m);
void ext_manifest_free(struct ext_manifest *m); /* what a read gave, for a caller that keeps none of it */
const char *ext_manifest_error(void); /* why the last manifest was refused, or "" */
int ext_name_ok(const char *s);       /* [a-z0-9-]{1,40} */

#ifdef __cplusplus
}
#endif
#endif
