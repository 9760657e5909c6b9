/*
 * fsx_obj.c - the seam's lock-object ownership table (see fsx_seam.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "../core/arena.h"
#include "../core/journal.h"
#include "../core/sched.h"
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

/* ---- explore on the real file system: identities by path ----
 *
 * Every step is the explorer's, so between a lock object's creation through
 * the seam and its removal nothing changes its name unseen: every name
 * change of a worker's goes through these wrappers (fsx_obj_renamed), the
 * explorer's own (its sweep) drop them all, and a new execution starts with
 * none.  So the removal of one asks the table (struct sched_ids) before it
 * asks the kernel: one lstat an acquire and release of a mkdir lock, not
 * two.  Only plain absolute paths are kept, and a name change at a path that
 * is not one forgets all; names are compared without case (a folder that
 * folds case has one entry for both).  A name through a symlink to the
 * same folder would not be seen: the workloads and protocols make none (as
 * fsx_anchor.c notes).  LOCKSTORM_ID_LOOK=1 asks the kernel every time and
 * aborts when the table says otherwise (the tests run both ways). */
static struct sched_ids *ids(void)
{
	return fsx_sched && !fsx_modelled() ? &fsx_sched->ids : NULL;
}

static int id_look(void)
{
	static int look = -1;
	if (look < 0) {
		const char *e = getenv("LOCKSTORM_ID_LOOK");
		look = e && strcmp(e, "1") == 0;
	}
	return look;
}

static int ids_find(const struct sched_ids *t, const char *path)
{
	for (unsigned i = 0; i < t->n; i++)
		if (strcmp(t->e[i].path, path) == 0)
			return (int)i;
	return -1;
}

static void ids_forget(struct sched_ids *t, unsigned i)
{
	t->e[i] = t->e[--t->n];
}

void fsx_obj_forget(const char *path)
{
	struct sched_ids *t = ids();
	if (!t || !t->n)
		return;
	if (!fsx_path_plain(path)) {
		t->n = 0;
		return;
	}
	size_t len = strlen(path);
	for (unsigned i = t->n; i-- > 0;) {
		const char *e = t->e[i].path;
		if (strncasecmp(e, path, len) == 0 && (e[len] == '\0' || e[len] == '/'))
			ids_forget(t, i);
	}
}

static void ids_put(const char *path, uint64_t dev, uint64_t ino)
{
	struct sched_ids *t = ids();
	size_t len = strlen(path);
	if (!t || len >= sizeof t->e[0].path || !fsx_path_plain(path))
		return;
	int i = ids_find(t, path);
	if (i < 0) {
		if (t->n == SCHED_IDS)
			ids_forget(t, 0);
		i = (int)t->n++;
		memcpy(t->e[i].path, path, len + 1);
	}
	t->e[i].dev = dev;
	t->e[i].ino = ino;
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
	ids_put(path, st.st_dev, st.st_ino);
	last_create_ns = fsx_mono_ns();
}

struct fsx_obj_id fsx_obj_identify(const char *path)
{
	struct fsx_obj_id id = { 0, 0, 0 };
	const struct sched_ids *t = ids();
	int i = t ? ids_find(t, path) : -1;
	if (i >= 0 && !id_look())
		return (struct fsx_obj_id){ 1, t->e[i].dev, t->e[i].ino };
	struct stat st;
	if (lstat(path, &st) == 0) {
		id.known = 1;
		id.dev = fsx_cur.dev ? fsx_cur.dev : st.st_dev;
		id.ino = st.st_ino;
	}
	if (i >= 0 && (!id.known || id.dev != t->e[i].dev || id.ino != t->e[i].ino)) {
		fprintf(stderr, "lockstorm: harness bug: %s is %s, the identity table says dev %llu inode %llu\n", path,
			id.known ? "another object" : "gone", (unsigned long long)t->e[i].dev,
			(unsigned long long)t->e[i].ino);
		abort();
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
