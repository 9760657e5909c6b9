/*
 * fsx_obj.c - the seam's lock-object ownership table (see fsx_seam.h).
 */
#include <string.h>
#include <sys/stat.h>

#include "../core/arena.h"
#include "../core/journal.h"
#include "../core/hot.h"
#include "fsx.h"
#include "fsx_seam.h"
#define FSX_BACKEND_REDIRECT /* the system calls below go to fsx_backend when set */
#include "fsx_backend.h"

LS_HOT_DATA static int64_t last_create_ns;

LS_HOT int64_t fsx_last_create_ns(void)
{
	return last_create_ns;
}

LS_HOT void fsx_reset_create(void)
{
	last_create_ns = 0;
}

/* ---- lock-object ownership ---- */

/* PATH seen from the lock: itself, an entry directly inside it, or another. */
enum fsx_path fsx_path_role(const char *path)
{
	if (!fsx_bound || !fsx_lock_path_len || !path)
		return FSX_PATH_UNKNOWN;
	if (strncmp(path, fsx_cur.lock_path, fsx_lock_path_len) != 0)
		return FSX_PATH_OTHER;
	const char *rest = path + fsx_lock_path_len;
	if (*rest == '\0')
		return FSX_PATH_LOCK;
	return *rest == '/' && rest[1] && !strchr(rest + 1, '/') ? FSX_PATH_ENTRY : FSX_PATH_OTHER;
}

/* The lock object itself, or an entry directly inside it. */
int fsx_obj_tracked(const char *path)
{
	enum fsx_path p = fsx_path_role(path);
	return p == FSX_PATH_LOCK || p == FSX_PATH_ENTRY;
}

void fsx_obj_created(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return;
	if (fsx_cur.dev)
		st.st_dev = (dev_t)fsx_cur.dev;
	uint64_t seq = fsx_log_event(EV_OBJ_CREATE, 0, (int64_t)st.st_ino, (int64_t)st.st_dev, 0);
	arena_obj_add(fsx_cur.arena, st.st_dev, st.st_ino, fsx_cur.worker, seq);
	last_create_ns = fsx_mono_ns();
}

struct fsx_obj_id fsx_obj_identify(const char *path)
{
	struct fsx_obj_id id = { 0, 0, 0 };
	struct stat st;
	if (lstat(path, &st) == 0) {
		id.known = 1;
		id.dev = fsx_cur.dev ? fsx_cur.dev : st.st_dev;
		id.ino = st.st_ino;
	}
	return id;
}

void fsx_obj_removed(struct fsx_obj_id id)
{
	if (!id.known)
		return;
	uint64_t cseq = 0;
	int creator = arena_obj_take(fsx_cur.arena, id.dev, id.ino, &cseq);
	fsx_log_event(EV_OBJ_REMOVE, 0, (int64_t)id.ino, creator, (int64_t)cseq);
}
