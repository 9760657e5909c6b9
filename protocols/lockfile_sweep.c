/*
 * lockfile_sweep.c - lockfile-recorded's SWEEP of old take files (CR4), which
 * the take runs after each link (see lockfile_shared.h and PROTOCOLS.md §5).
 * It calls nothing of the revision's other files.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../faults/fsx.h"
#include "lock.h"
#include "lockfile_shared.h"
#include "proto.h"

/* path's directory and base name; 0, or -1 ENAMETOOLONG. */
int lr_split(const char *path, char *dir, char *base)
{
	const char *slash = strrchr(path, '/');

	if (!slash) {
		strcpy(dir, ".");
		snprintf(base, PATH_MAX, "%s", path);
		return 0;
	}
	if ((size_t)(slash - path) >= PATH_MAX) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (slash == path) {
		strcpy(dir, "/");
	} else {
		memcpy(dir, path, (size_t)(slash - path));
		dir[slash - path] = '\0';
	}
	snprintf(base, PATH_MAX, "%s", slash + 1);
	return 0;
}

/* SWEEP(path): remove take files older than the grace.  All errors ignored. */
static void lr_sweep(struct lock *lk, const char *path)
{
	char dir[PATH_MAX], base[PATH_MAX], prefix[PATH_MAX], full[PATH_MAX];
	struct fsx_list e;
	size_t plen;

	if (lr_split(path, dir, base) != 0 || ls_path_cat(prefix, base, ".take.") != 0)
		return;
	plen = strlen(prefix);

	/* [SW1 readdir] */
	if (fsx_list(dir, &e) != 0) {
		ls_note_errno(lk);
		return;
	}
	fsx_point(PT(SWEEP_AFTER_READDIR));
	for (size_t i = 0; i < e.n; i++) {
		struct fsx_stat st;

		if (strncmp(e.names[i], prefix, plen) != 0)
			continue;
		if (snprintf(full, sizeof full, "%s/%s", dir, e.names[i]) >= (int)sizeof full)
			continue;
		/* [SW2 stat] */
		if (fsx_stat(full, &st) != 0) {
			ls_note_errno(lk);
			continue;
		}
		fsx_point(PT(SWEEP_AFTER_STAT));
		/* [SW3 unlink] "`.take.` leftovers hold nothing" */
		if (!ls_older_than_us(fsx_now_ms(), st.mtime_ns, lk->us[LR_GRACE]))
			continue;
		if (fsx_unlink(full) != 0)
			ls_note_errno(lk);
		fsx_point(PT(SWEEP_AFTER_UNLINK));
	}
	fsx_list_free(&e);
}

/* CR4: SWEEP once per process per path (bit 0: no memo, sweep every time). */
void lr_sweep_once(struct lock *lk, const char *path, unsigned bit)
{
	struct lr_state *st = lr_state(lk);

	if (bit && (st->swept & bit))
		return;
	st->swept |= bit;
	lr_sweep(lk, path);
}
