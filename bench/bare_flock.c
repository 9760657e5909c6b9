/*
 * bare_flock.c - the baseline for bench/flock-overhead: N processes doing
 * exactly the system calls of lockstorm's `-p flock -w hold` (open, flock
 * LOCK_EX, flock LOCK_UN, close) in a bare loop, with no harness, no journal
 * and no seam.  Prints "ops_per_s <rate>" (acquire+release pairs per second).
 *
 * usage: bare_flock DIR WORKERS SECONDS
 */

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct shared {
	_Atomic int go;
	_Atomic int stop;
	_Atomic unsigned long long ops;
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bare_flock DIR WORKERS SECONDS\n");
		return 2;
	}
	int n = atoi(argv[2]);
	double secs = atof(argv[3]);
	if (n < 1 || secs <= 0) {
		fprintf(stderr, "bare_flock: bad WORKERS or SECONDS\n");
		return 2;
	}
	char path[4096];
	snprintf(path, sizeof path, "%s/state.json.lock", argv[1]);
	struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 3;
	for (int i = 0; i < n; i++) {
		if (fork() == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			while (!atomic_load(&sh->go))
				sched_yield();
			unsigned long long mine = 0;
			while (!atomic_load_explicit(&sh->stop, memory_order_relaxed)) {
				int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
				if (fd < 0)
					_exit(3);
				flock(fd, LOCK_EX);
				flock(fd, LOCK_UN);
				close(fd);
				mine++;
			}
			atomic_fetch_add(&sh->ops, mine);
			_exit(0);
		}
	}
	double t0 = now_s();
	atomic_store(&sh->go, 1);
	struct timespec ts = { (time_t)secs, (long)((secs - (double)(time_t)secs) * 1e9) };
	nanosleep(&ts, NULL);
	atomic_store(&sh->stop, 1);
	double t1 = now_s();
	while (wait(NULL) > 0)
		;
	unlink(path);
	printf("ops_per_s %.1f\n", (double)atomic_load(&sh->ops) / (t1 - t0));
	return 0;
}
