/*
 * fsutil.h - small file utilities the harness (not the protocols: they go
 * through faults/fsx.h) needs in several places: remove a tree, read a whole
 * file, find a file shipped beside the binary.
 *
 * None of these goes through the seam: they are the harness's own
 * bookkeeping (work and output directories, scripts, scenarios, adapters).
 *
 * Errors: -1 (or NULL) with errno meaningful.
 */
#ifndef LS_FSUTIL_H
#define LS_FSUTIL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Remove PATH and everything under it (no symlink is followed).  0, also
 * when PATH does not exist; -1 with errno. */
int fsutil_rm_tree(const char *path);

/* Remove everything under the directory PATH and keep PATH itself (no
 * symlink is followed, PATH included).  0; -1 with errno (ENOTDIR, ELOOP:
 * PATH is not a directory; ENOENT: it is missing). */
int fsutil_empty_dir(const char *path);
/* The same for the folder open on DFD (from its offset on), whose path is
 * PATH (a folder inside is removed by path). */
int fsutil_empty_fd(int dfd, const char *path);

/* FN(dfd, name, d_type, arg) for each entry of the folder open on DFD, from
 * its offset on (. and .. left out): one getdents64 a buffer, nothing else.
 * A nonzero return of FN stops there and is returned; else 0, or -1 with
 * errno. */
int fsutil_each_entry(int dfd, int (*fn)(int dfd, const char *name, unsigned char type, void *arg), void *arg);

/* The whole file, NUL-terminated, in a malloc'd buffer (free it), its length
 * in *len (the NUL not counted).  NULL (and *len 0) when it is missing or
 * unreadable. */
char *fsutil_slurp(const char *path, size_t *len);

/* The directory of /proc/self/exe into out: 0, or -1 with errno. */
int fsutil_exe_dir(char *out, size_t len);

/* What a file type must be for fsutil_find_beside. */
enum fsutil_type { FSUTIL_ANY, FSUTIL_FILE, FSUTIL_DIR };

/* The first of these that exists and is of TYPE is in out, 0:
 *   <dir of /proc/self/exe>/BESIDE                  a build tree, or a copy
 *   <dir of /proc/self/exe>/../share/lockstorm/BESIDE   an install (PREFIX/bin)
 *   LS_SOURCE_DIR/SOURCE    the source tree the binary was built from; skipped
 *                           when SOURCE is NULL, the build has none, or
 *                           $LOCKSTORM_NO_SOURCE_TREE is set and not empty
 *                           (so a test proves an install stands on its own)
 * Else -1 (ENOENT) with out the last path tried. */
int fsutil_find_beside(const char *beside, const char *source, enum fsutil_type type, char *out,
		       size_t len);

#ifdef __cplusplus
}
#endif
#endif
