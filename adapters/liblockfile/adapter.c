/*
 * adapter.c - liblockfile (Debian liblockfile1, lockfile_create(3)) as a
 * lockstorm worker.
 *
 * lockfile_create(L, retries, flags) writes "<pid>\n" (L_PID) or "0\n" into
 * a unique temp file .lk<pid><t><host> beside L, link(2)s it to L and
 * compares the two inodes.  When L is someone else's, lockfile_check() judges
 * it: with a pid in it, valid while kill(pid, 0) says the process exists;
 * without one (or without L_PID), valid while its mtime is younger than 300 s
 * (a constant of the library: not scaled by --time-scale).  An invalid L is
 * unlink(2)ed by name and the link retried at once; a valid one is waited on
 * with sleep(5), sleep(10), ... up to sleep(60), `retries` times.
 * lockfile_remove() is an unlink by name.
 *
 * Parameters (LOCKSTORM_PARAM_*):
 *   retries     10    lockfile_create's retry count
 *   pid          1    1: L_PID (pid in the lock), 0: no flag ("0" in the lock)
 *   wait_ms    75000  the driver's wait budget for one lockfile_create;
 *                     its ratio to the default 75000 is the run's time scale
 *   backoff_ms        what one second of the library's sleep(n) lasts here
 *                     (optional): the adapter defines sleep() itself, and the
 *                     library's call binds to it, so --time-scale shortens the
 *                     5..60 s backoff too.  Default: 1000 x LOCKSTORM_TIME_SCALE
 *                     (the driver sets it), else wait_ms / 75 (1000: the library's real
 *                     seconds, unless --time-scale scaled wait_ms)
 */
#include <errno.h>
#include <lockfile.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "adapters/lib/lsadapter.h"

static int64_t backoff_ms = 1000;

/* liblockfile's backoff: sleep(n) is n x backoff_ms here. */
unsigned int sleep(unsigned int seconds)
{
	int64_t ms = (int64_t)seconds * backoff_ms;
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	return 0;
}

static int retries, flags;

static int llf_acquire(void)
{
	int r = lockfile_create(lsa_lock_path(), retries, flags);
	if (r == L_SUCCESS)
		return 0;
	if (r == L_MAXTRYS)
		return LSA_BUSY;
	if (errno == 0)
		errno = EIO;
	return -1;
}

static int llf_release(void)
{
	return lockfile_remove(lsa_lock_path());
}

int main(void)
{
	const char *scale = getenv("LOCKSTORM_TIME_SCALE");
	if (scale && *scale)
		backoff_ms = (int64_t)(strtod(scale, NULL) * 1000.0 + 0.5);
	else
		backoff_ms = lsa_param("wait_ms", 75000) / 75;
	backoff_ms = lsa_param("backoff_ms", backoff_ms);
	if (backoff_ms < 1)
		backoff_ms = 1;
	retries = (int)lsa_param("retries", 10);
	flags = lsa_param("pid", 1) ? L_PID : 0;
	return lsa_serve(llf_acquire, llf_release);
}
