/*
 * rundir.c - claimed, locked and marked run folders (see rundir.h).
 */
#include "rundir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsutil.h"

void rundir_init(struct rundir *d)
{
	memset(d, 0, sizeof *d);
	d->fd = -1;
}

static const char *tmp_base(void)
{
	const char *base = getenv("TMPDIR");
	return base && *base ? base : "/tmp";
}

/* The marker's text: the owner and what it made (rewritten in place, under
 * the lock: a rename would make a new, unlocked file). */
static int marker_write(struct rundir *d, int kept)
{
	char buf[RUNDIR_MAX_MADE * (RUNDIR_NAME_MAX + 8) + 256];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n,
			      "lockstorm pid %d\n# this folder is used by lockstorm; it removes only what is listed below\n",
			      (int)getpid());
	for (unsigned i = 0; i < d->nmade; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "made %s\n", d->made[i]);
	if (kept)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "kept\n");
	if (ftruncate(d->fd, 0) != 0 || pwrite(d->fd, buf, n, 0) != (ssize_t)n)
		return -1;
	return 0;
}

/* The owner pid a marker names (0: none); its `made` lines into D when D is given. */
static int marker_parse(int fd, struct rundir *d, int *kept)
{
	char buf[4096];
	ssize_t k = pread(fd, buf, sizeof buf - 1, 0);
	if (k <= 0)
		return 0;
	buf[k] = '\0';
	int pid = 0;
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		if (sscanf(line, "lockstorm pid %d", &pid) == 1 || sscanf(line, "made by lockstorm (pid %d", &pid) == 1)
			continue;
		if (kept && !strcmp(line, "kept"))
			*kept = 1;
		if (d && !strncmp(line, "made ", 5) && d->nmade < RUNDIR_MAX_MADE && strlen(line + 5) < RUNDIR_NAME_MAX &&
		    !strchr(line + 5, '/') && strcmp(line + 5, ".") && strcmp(line + 5, ".."))
			snprintf(d->made[d->nmade++], RUNDIR_NAME_MAX, "%s", line + 5);
	}
	return pid;
}

/* Open and lock DIR/MARKER.  0 ours (the earlier owner's list read into
 * d->made), 1 in use (*owner its pid), -1 error. */
static int marker_take(struct rundir *d, int *owner)
{
	char p[PATH_MAX + 80];
	snprintf(p, sizeof p, "%s/%s", d->path, d->marker);
	int fd = open(p, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0)
		return -1;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		*owner = marker_parse(fd, NULL, NULL);
		close(fd);
		if (e == EWOULDBLOCK)
			return 1;
		errno = e;
		return -1;
	}
	d->nmade = 0;
	marker_parse(fd, d, NULL);
	d->fd = fd;
	if (marker_write(d, 0) != 0) {
		int e = errno;
		close(fd);
		d->fd = -1;
		errno = e;
		return -1;
	}
	return 0;
}

static int dir_only_marker(const char *path, const char *marker, int *has_marker)
{
	DIR *dir = opendir(path);
	if (!dir)
		return -1;
	struct dirent *de;
	int only = 1;
	*has_marker = 0;
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!strcmp(de->d_name, marker))
			*has_marker = 1;
		else
			only = 0;
	}
	closedir(dir);
	return only;
}

int rundir_claim(struct rundir *d, const char *path, const char *marker, const char *what, char *why,
		 size_t len)
{
	rundir_init(d);
	snprintf(d->path, sizeof d->path, "%s", path);
	snprintf(d->marker, sizeof d->marker, "%s", marker);
	if (mkdir(path, 0777) != 0 && errno != EEXIST) {
		snprintf(why, len, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	int has = 0, only = dir_only_marker(path, marker, &has);
	if (only < 0) {
		snprintf(why, len, "%s %s: %s", what, path, strerror(errno));
		return -1;
	}
	if (!only && !has) {
		snprintf(why, len, "%s %s is not empty and not marked as lockstorm's (%s): refusing to use it", what,
			 path, marker);
		return -1;
	}
	int owner = 0, r = marker_take(d, &owner);
	if (r == 1) {
		if (owner > 0)
			snprintf(why, len, "%s %s is in use by lockstorm (pid %d): refusing to share it", what, path, owner);
		else
			snprintf(why, len, "%s %s is in use by another lockstorm run: refusing to share it", what, path);
		return -1;
	}
	if (r != 0) {
		snprintf(why, len, "%s %s: cannot take its marker %s: %s", what, path, marker, strerror(errno));
		return -1;
	}
	return 0;
}

static int rundir_made(struct rundir *d, char *why, size_t len)
{
	d->temp = 1;
	int owner = 0;
	if (marker_take(d, &owner) != 0) {
		snprintf(why, len, "cannot mark %s: %s", d->path, strerror(errno));
		rmdir(d->path);
		d->temp = 0;
		return -1;
	}
	return 0;
}

int rundir_temp(struct rundir *d, const char *prefix, const char *marker, char *why, size_t len)
{
	return rundir_temp_in(d, tmp_base(), prefix, marker, why, len);
}

int rundir_temp_in(struct rundir *d, const char *base, const char *prefix, const char *marker, char *why,
		   size_t len)
{
	rundir_init(d);
	snprintf(d->marker, sizeof d->marker, "%s", marker);
	snprintf(d->path, sizeof d->path, "%s/%s.XXXXXX", base, prefix);
	if (!mkdtemp(d->path)) {
		snprintf(why, len, "cannot make a temporary directory in %s: %s", base, strerror(errno));
		d->path[0] = '\0';
		return -1;
	}
	return rundir_made(d, why, len);
}

int rundir_temp_at(struct rundir *d, const char *path, const char *marker, char *why, size_t len)
{
	rundir_init(d);
	snprintf(d->marker, sizeof d->marker, "%s", marker);
	snprintf(d->path, sizeof d->path, "%s", path);
	if (mkdir(d->path, 0700) != 0) {
		snprintf(why, len, "cannot make the temporary directory %s: %s", path, strerror(errno));
		d->path[0] = '\0';
		return -1;
	}
	return rundir_made(d, why, len);
}

static int noted(const struct rundir *d, const char *name)
{
	for (unsigned i = 0; i < d->nmade; i++)
		if (!strcmp(d->made[i], name))
			return 1;
	return 0;
}

int rundir_note(struct rundir *d, const char *name, char *why, size_t len)
{
	if (noted(d, name))
		return 0;
	if (d->nmade == RUNDIR_MAX_MADE || strlen(name) >= RUNDIR_NAME_MAX) {
		fprintf(stderr, "BUG: %s:%d: rundir_note %s\n", __FILE__, __LINE__, name);
		abort();
	}
	snprintf(d->made[d->nmade++], RUNDIR_NAME_MAX, "%s", name);
	if (d->fd >= 0 && marker_write(d, 0) != 0) {
		snprintf(why, len, "cannot write the marker of %s: %s", d->path, strerror(errno));
		return -1;
	}
	return 0;
}

int rundir_clear(struct rundir *d, const char *name, char *why, size_t len)
{
	char p[PATH_MAX + 80];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", d->path, name);
	if (lstat(p, &st) == 0) {
		if (!noted(d, name)) {
			snprintf(why, len, "%s holds %s, which lockstorm did not make: refusing to use the folder", d->path,
				 name);
			return -1;
		}
		if (S_ISDIR(st.st_mode) ? fsutil_rm_tree(p) != 0 : unlink(p) != 0) {
			snprintf(why, len, "cannot remove the earlier run's %s: %s", p, strerror(errno));
			return -1;
		}
	}
	return rundir_note(d, name, why, len);
}

void rundir_release(struct rundir *d, int remove)
{
	if (d->fd < 0)
		return;
	char p[PATH_MAX + 80];
	if (remove && d->temp) {
		fsutil_rm_tree(d->path); /* the marker goes with it, still locked: nobody sweeps it meanwhile */
	} else if (remove) {
		for (unsigned i = 0; i < d->nmade; i++) {
			snprintf(p, sizeof p, "%s/%s", d->path, d->made[i]);
			fsutil_rm_tree(p);
		}
		d->nmade = 0;
		marker_write(d, 0);
	} else {
		marker_write(d, 1);
	}
	close(d->fd);
	d->fd = -1;
}

/* One $TMPDIR entry: a lockstorm temp folder whose owner is dead goes. */
static void sweep_one(const char *path)
{
	struct stat st;
	if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid())
		return;
	static const char *const markers[] = { ".lockstorm-owned", ".lockstorm-out" };
	for (size_t i = 0; i < sizeof markers / sizeof markers[0]; i++) {
		char p[PATH_MAX + 80];
		snprintf(p, sizeof p, "%s/%s", path, markers[i]);
		int fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			continue;
		int kept = 0, pid = 0;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			pid = marker_parse(fd, NULL, &kept);
		/* unlocked, naming a pid that is gone, not kept: its owner died */
		if (pid > 0 && !kept && kill(pid, 0) != 0 && errno == ESRCH)
			fsutil_rm_tree(path);
		close(fd);
		return;
	}
}

/* The temp folders lockstorm makes (each marked; see rundir_temp_in's callers). */
static const char *const temp_prefixes[] = {
	"lockstorm-work.", "lockstorm-out.",   /* run */
	"lockstorm-explore.", "lockstorm-j.", /* explore, and -j's reports */
	"lockstorm-xext.",                     /* explore of an adapter */
	"lockstorm-compare.",                  /* compare's reports */
};

void rundir_sweep_stale_in(const char *base)
{
	DIR *dir = opendir(base);
	if (!dir)
		return;
	struct dirent *de;
	while ((de = readdir(dir))) {
		size_t k = 0, n = sizeof temp_prefixes / sizeof temp_prefixes[0];
		while (k < n && strncmp(de->d_name, temp_prefixes[k], strlen(temp_prefixes[k])))
			k++;
		if (k == n)
			continue;
		char p[PATH_MAX + 80];
		snprintf(p, sizeof p, "%s/%s", base, de->d_name);
		sweep_one(p);
	}
	closedir(dir);
}

void rundir_sweep_stale(void)
{
	rundir_sweep_stale_in(tmp_base());
	if (strcmp(tmp_base(), "/dev/shm")) /* the explorer's default */
		rundir_sweep_stale_in("/dev/shm");
}

int rundir_check_writable(const char *file, const char *what, char *why, size_t len)
{
	if (!file || !file[0])
		return 0;
	struct stat st;
	if (stat(file, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			snprintf(why, len, "%s %s: is a directory", what, file);
			return -1;
		}
		if (access(file, W_OK) != 0) {
			snprintf(why, len, "%s %s: cannot write it: %s", what, file, strerror(errno));
			return -1;
		}
		return 0;
	}
	char dir[PATH_MAX];
	snprintf(dir, sizeof dir, "%s", file);
	char *slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, sizeof dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	int bad = stat(dir, &st) != 0 ? errno : !S_ISDIR(st.st_mode) ? ENOTDIR
		  : access(dir, W_OK | X_OK) != 0 ? errno : 0;
	if (bad) {
		snprintf(why, len, "%s %s: cannot write into %s: %s", what, file, dir, strerror(bad));
		return -1;
	}
	return 0;
}
