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
};

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
/* "ext:flock1, ext:proper-lockfile, ..." */
void ext_names(char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
