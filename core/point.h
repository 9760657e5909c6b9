/*
 * point.h - the point table: the seam's calls and how points are named.
 *
 * Every file-system call a protocol or workload makes goes through the seam
 * (faults/fsx.h), one enum fsx_op per call; each call is also the fault
 * point "fs/<call>", and each protocol step is a point of its own
 * ("<proto>/<operation>/<before|after>-<label>").  Journals, the step
 * scheduler and the arena's counters name calls and points by these values,
 * so they live here, below the seam, and the seam uses them from above.
 */
#ifndef LS_POINT_H
#define LS_POINT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum fsx_op {
	FSX_MKDIR, FSX_RMDIR, FSX_OPEN, FSX_CLOSE, FSX_LINK, FSX_UNLINK, FSX_RENAME,
	FSX_STAT, FSX_LIST, FSX_READ, FSX_WRITE, FSX_FSYNC, FSX_UTIMENS, FSX_FLOCK,
	FSX_KILL, FSX_SLEEP, FSX_NOW, FSX_POINT,
	FSX_OP_COUNT
};
/* Which call failed (fsx_failed_call, the journal's acquire and release
 * errors): a stat of a descriptor, apart from FSX_STAT's stat of a path. */
#define FSX_CALL_FSTAT FSX_OP_COUNT
/* Which path a call named, seen from the lock (fsx_failed_path, the
 * journal's acquire and release errors, a protocol's absorb claims): mkdir(L)
 * and mkdir(L/entry) are one op but not one step (mkdir-owner's AT2 and AT3).
 * UNKNOWN: no path (an unbound seam, a call that has none). */
enum fsx_path {
	FSX_PATH_UNKNOWN, /* in a claim: any path */
	FSX_PATH_LOCK,    /* the lock path itself (<file>.lock) */
	FSX_PATH_ENTRY,   /* a name directly inside it (mkdir-owner's owner-<pid>-<rand>) */
	FSX_PATH_OTHER,   /* anything else: the folder, a tmp file, a sibling like .recovery */
	FSX_PATH_COUNT
};
/* "the lock", "an entry inside the lock", "another path", "" for UNKNOWN. */
const char *fsx_path_name(enum fsx_path p);
/* "fs/mkdir", ... ("point" for FSX_POINT; "fs/?" out of range). */
const char *fsx_op_point(enum fsx_op op);
/* "mkdir", ...: the point without its "fs/". */
const char *fsx_op_name(enum fsx_op op);

/* FNV-1a 64 of a point name: how journals refer to points. */
uint64_t point_hash(const char *name);

#ifdef __cplusplus
}
#endif
#endif
