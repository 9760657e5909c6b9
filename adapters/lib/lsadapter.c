/*
 * lsadapter.c - lockstorm's external-worker protocol for C adapters (see
 * lsadapter.h).  The state file is parsed and formatted by
 * workloads/update_state.c, the built-in update workload's own code.
 */
#include "lsadapter.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "workloads/workload.h"

static int event_fd(void)
{
	const char *s = getenv("LOCKSTORM_EVENT_FD");
	return s && *s ? atoi(s) : 3;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *s = getenv(name);
	return s && *s ? s : dflt;
}

const char *lsa_resource(void)
{
	return env_or("LOCKSTORM_RESOURCE", env_or("LOCKSTORM_STATE", "state.json"));
}

const char *lsa_lock_path(void)
{
	static char buf[4096];
	const char *s = getenv("LOCKSTORM_LOCK");
	if (s && *s)
		return s;
	snprintf(buf, sizeof buf, "%s.lock", lsa_resource());
	return buf;
}

int64_t lsa_param(const char *name, int64_t dflt)
{
	char key[128];
	int n = snprintf(key, sizeof key, "LOCKSTORM_PARAM_");
	for (const char *p = name; *p && n < (int)sizeof key - 1; p++)
		key[n++] = (char)toupper((unsigned char)*p);
	key[n] = '\0';
	const char *v = getenv(key);
	if (!v || !*v)
		return dflt;
	char *end;
	long long x = strtoll(v, &end, 10);
	if (*end) {
		fprintf(stderr, "lockstorm adapter: %s=%s is not an integer\n", key, v);
		exit(2);
	}
	return x;
}

void lsa_emit(const char *event, const char *fields)
{
	struct timespec ts;
	char line[512];
	clock_gettime(CLOCK_MONOTONIC, &ts);
	int n = snprintf(line, sizeof line, "%lld %s%s%s\n",
			 (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec, event,
			 fields && *fields ? " " : "", fields ? fields : "");
	if (n >= (int)sizeof line)
		n = sizeof line - 1, line[n - 1] = '\n';
	int err = errno;
	if (write(event_fd(), line, (size_t)n) != n)
		_exit(3); /* the driver is gone or the pipe is broken: nobody to report to */
	errno = err;
}

static char error_type[64]; /* lsa_error_type's name for the next *-error event */

void lsa_error_type(const char *name)
{
	size_t k = 0;
	for (; name && name[k] && k < sizeof error_type - 1; k++) {
		char c = name[k];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			 c == '_' || c == '.' || c == ':' || c == '-';
		error_type[k] = ok ? c : '_';
	}
	error_type[k] = '\0';
}

/* `EVENT errno=NAME[ error=TYPE]`; errno 0 (a library that does not set it) is EIO. */
static void emit_error(const char *event, int err, int rc)
{
	char f[160];
	const char *name = err ? strerrorname_np(err) : NULL;
	if (error_type[0])
		snprintf(f, sizeof f, "errno=%s error=%s", name ? name : "EIO", error_type);
	else if (rc != -1)
		snprintf(f, sizeof f, "errno=%s error=rc%d", name ? name : "EIO", rc);
	else
		snprintf(f, sizeof f, "errno=%s", name ? name : "EIO");
	error_type[0] = '\0';
	lsa_emit(event, f);
}

static void emit_errno(const char *event, int err)
{
	emit_error(event, err, -1);
}

static int read_all(const char *path, char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	if (!b)
		goto out_close;
	for (;;) {
		if (n == cap) {
			char *t = realloc(b, cap *= 2);
			if (!t)
				goto out_free;
			b = t;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto out_free;
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*buf = b, *len = n;
	return 0;
out_free: {
	int err = errno;
	free(b);
	errno = err;
	}
out_close: {
	int err = errno;
	close(fd);
	errno = err;
	}
	return -1;
}

static int write_all(const char *path, const char *text, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	while (len > 0) {
		ssize_t w = write(fd, text, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int err = errno;
			close(fd);
			errno = err;
			return -1;
		}
		text += w, len -= (size_t)w;
	}
	return close(fd);
}

void lsa_update_state(void)
{
	const char *state = env_or("LOCKSTORM_STATE", lsa_resource());
	unsigned worker = (unsigned)atoi(env_or("LOCKSTORM_WORKER", "0"));
	struct update_state st = { .nworkers = (unsigned)atoi(env_or("LOCKSTORM_WORKERS", "1")) };
	char f[96], *buf;
	size_t len;

	if (worker >= st.nworkers)
		st.nworkers = worker + 1;
	if (read_all(state, &buf, &len) == 0) {
		int r = update_state_parse(buf, len, &st);
		int err = errno;
		free(buf);
		if (r != 0) {
			snprintf(f, sizeof f, "rev=-1 own=0 errno=%s", err == EBADMSG ? "EBADMSG" : "ENOMEM");
			lsa_emit("read", f);
			return;
		}
	} else if (errno == ENOENT) {
		st.revision = -1;
		st.counts = calloc(st.nworkers, sizeof *st.counts);
		if (!st.counts)
			return;
	} else {
		snprintf(f, sizeof f, "rev=-1 own=0 errno=%s", strerrorname_np(errno) ? strerrorname_np(errno) : "EIO");
		lsa_emit("read", f);
		return;
	}
	int64_t read_rev = st.revision, own = st.counts[worker];
	snprintf(f, sizeof f, "rev=%lld own=%lld", (long long)read_rev, (long long)own);
	lsa_emit("read", f);

	st.revision = (read_rev < 0 ? 0 : read_rev) + 1;
	st.counts[worker] = own + 1;
	char *text = update_state_format(&st, &len);
	char tmp[4200];
	snprintf(tmp, sizeof tmp, "%s.%d.tmp", state, (int)getpid());
	if (!text || write_all(tmp, text, len) != 0) {
		emit_errno("write-error", errno);
		goto out_free;
	}
	snprintf(f, sizeof f, "rev=%lld own=%lld", (long long)st.revision, (long long)own + 1);
	lsa_emit("commit-begin", f);
	if (rename(tmp, state) != 0) {
		emit_errno("write-error", errno);
		goto out_free;
	}
	lsa_emit("commit", f);
out_free:
	free(text);
	update_state_free(&st);
}

static void op(int (*acquire)(void), int (*release)(void), void (*update)(void))
{
	lsa_emit("attempt", "n=0");
	error_type[0] = '\0';
	errno = 0;
	int r = acquire();
	if (r == LSA_BUSY) {
		lsa_emit("busy", NULL);
		return;
	}
	if (r != 0) { /* any failure: -1 with errno, or the library's own code */
		emit_error("acquire-error", errno, r);
		return;
	}
	lsa_emit("acquired", NULL);
	const char *wl = env_or("LOCKSTORM_WORKLOAD", "update");
	if (!strcmp(wl, "hold")) {
		long long ms = atoll(env_or("LOCKSTORM_HOLD_MS", "0"));
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
		while (ms > 0 && nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	} else {
		(update ? update : lsa_update_state)();
	}
	lsa_emit("release-begin", NULL);
	error_type[0] = '\0';
	errno = 0;
	int rr = release();
	if (rr == 0)
		lsa_emit("released", NULL);
	else
		emit_error("release-error", errno, rr);
}

int lsa_serve(int (*acquire)(void), int (*release)(void))
{
	return lsa_serve_update(acquire, release, NULL);
}

int lsa_serve_update(int (*acquire)(void), int (*release)(void), void (*update)(void))
{
	char line[128];
	for (;;) {
		lsa_emit("next", NULL);
		if (!fgets(line, sizeof line, stdin) || strncmp(line, "op ", 3))
			return 0;
		op(acquire, release, update);
	}
}
