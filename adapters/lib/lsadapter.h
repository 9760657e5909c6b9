/*
 * lsadapter.h - the worker side of lockstorm's external-worker protocol, for
 * C adapters (docs/external-workers.md).
 *
 * Calling sequence:
 *
 *	static int my_acquire(void) { ... }	// 0 held, LSA_BUSY, -1 errno
 *	static int my_release(void) { ... }	// 0 released, -1 errno
 *	int main(void) { return lsa_serve(my_acquire, my_release); }
 *
 * Errors: an acquire or release that returns anything but 0 (or LSA_BUSY) is
 * an `acquire-error`/`release-error` with errno's name (EIO when errno is 0),
 * and `error=rcN` for a return other than -1, or `error=NAME` when the hook
 * called lsa_error_type("NAME") first (a library's own error, e.g. L_TMPWRITE).
 * lsa_serve_update() takes the write step too (NULL: lsa_update_state): it
 * reports its own read/commit-begin/commit (or write-error) with lsa_emit.
 *
 * lsa_serve() writes `next` on the event fd, reads `op N` or `stop` from
 * stdin (EOF is stop) and runs one op per `op`: attempt, acquire, then the
 * update workload (read the state, revision+1 and own counter+1, write
 * <state>.<pid>.tmp, rename it over the state, exactly as workloads/update.c,
 * with the same parser and formatter) or hold (sleep LOCKSTORM_HOLD_MS), then
 * release-begin, release.  It returns 0 on `stop`.  Every event line is one
 * write(2) stamped with CLOCK_MONOTONIC.
 */
#ifndef LSADAPTER_H
#define LSADAPTER_H

#include <stdint.h>

#define LSA_BUSY 1

/* LOCKSTORM_LOCK (default <resource>.lock), LOCKSTORM_RESOURCE, LOCKSTORM_STATE */
const char *lsa_lock_path(void);
const char *lsa_resource(void);
/* LOCKSTORM_PARAM_<NAME> (NAME upper-cased here) as an integer, else DFLT */
int64_t lsa_param(const char *name, int64_t dflt);
/* one event line: "<mono_ns> EVENT[ FIELDS]\n" */
void lsa_emit(const char *event, const char *fields);
int lsa_serve(int (*acquire)(void), int (*release)(void));
int lsa_serve_update(int (*acquire)(void), int (*release)(void), void (*update)(void));
/* the update workload's write step, as workloads/update.c */
void lsa_update_state(void);
/* the library's name for the error the hook is about to return */
void lsa_error_type(const char *name);

#endif
