/* testutil.h - helpers shared by the tests: scratch directories that are
 * always removed, running the lockstorm binary and capturing its output. */
#ifndef LS_TESTUTIL_H
#define LS_TESTUTIL_H

#include <jansson.h>

#include <sys/types.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

/* A fresh directory under /dev/shm (else /tmp), removed with everything in it
 * when the object goes out of scope. */
struct ScratchDir {
	std::string path;
	ScratchDir();
	~ScratchDir();
	std::string sub(const std::string &name) const { return path + "/" + name; }
};

struct CmdResult {
	int status;       /* exit code, or 128+signal */
	std::string out;  /* stdout */
	std::string err;  /* stderr */
};

/* Run argv[0] with args (no shell), capture both streams. */
CmdResult run_cmd(const std::string &cmdline);

/* ARGS of lockstorm with, when they are an explore that names no
 * --time-budget, one that never binds (30 min): a search stops at its
 * schedule count or its first failure, never at the clock, so no verdict
 * depends on the machine's speed (the default 60 s did, under load). */
std::string untimed(const std::string &args);

/* Read a whole file ("" if missing). */
std::string slurp(const std::string &path);

/* Files, for tests that set the scene on disk themselves. */
bool exists(const std::string &path);                         /* lstat: the name is there */
std::vector<std::string> entries(const std::string &dir);     /* sorted, without . and .. */
ino_t ino(const std::string &path);                           /* 0 when missing */
void put(const std::string &path, const std::string &text);   /* create or truncate, write (ASSERTs) */
void age(const std::string &path, long secs = 3600);          /* mtime secs back (ASSERTs) */
/* A pid no process has: a child that exited and was reaped. */
pid_t dead_pid();

/* A JSON report (lockstorm-report/1) read for assertions; root is NULL when
 * the file is missing or not JSON. */
struct Report {
	json_t *root = nullptr;
	explicit Report(const std::string &path);
	~Report();
	Report(const Report &) = delete;
	Report &operator=(const Report &) = delete;
	json_t *inv(const char *name) const;          /* the invariant's object, or NULL */
	long long violations(const char *name) const; /* -1: no such invariant */
	bool applicable(const char *name) const;
	std::string example(const char *name) const;  /* the first example's text, or "" */
	long long total(const char *key) const;       /* totals.KEY */
	long long ops() const;                        /* throughput.ops */
	double ops_per_s() const;                     /* throughput.ops_per_s */
	std::string verdict() const;
};

/* A violation a timed torture run (`lockstorm run` with real processes) shows only when the
 * machine's timing lets it: no test's verdict may hang on one seed's run.  SHOWS(seed, &said) runs
 * the test's command with that seed and says whether it showed the violation (SAID: what the run
 * gave, e.g. its verdict line); the seeds are tried in turn until one does.  Returns that seed, or
 * -1 when none did; *SEEN collects "seed N: SAID" of every seed tried, for the failure message.
 * The caller asserts only that some seed showed it (the result is not -1) and may then look at
 * that seed's files; whatever must hold on every seed it asserts inside SHOWS. */
int first_seed_showing(std::initializer_list<int> seeds, const std::function<bool(int seed, std::string *said)> &shows,
		       std::string *seen);

#endif
