/* unit_lockfile.cc - lockfile-legacy (volter 3.0.155) and lockfile-recorded
 * (volter 3.0.157) step by step: arrange files on disk, call one op, check
 * the outcome and what is left on disk (PROTOCOLS.md §4, §5).
 *
 * No fsx binding: every fsx call passes straight through, so the pid and
 * hostname the protocols see are this process's.  A holder in another process
 * is a forked child that takes the lock and waits on a pipe; a dead pid is a
 * child that has exited and been reaped.  Nothing sleeps to synchronise and
 * nothing asserts on timing: waits that must give up use a wait_ms of a few
 * ms (the protocols' own poll loops sleep), and ages are set with utimensat
 * far from every threshold (an "old" file is an hour old; an empty file "past
 * the grace but short of the stale age" is 20 s old against 5 s and 60 s). */
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "testutil.h"

extern "C" {
#include "faults/fsx.h"
#include "protocols/lock.h"
}

namespace {

/* ---------------------------------------------------------------- disk */

const long kHour = 3600;
const long kPastGrace = 20; /* > grace 5 s, < stale 60 s */

std::string hostname()
{
	char h[256] = "";
	gethostname(h, sizeof h - 1);
	return h;
}

std::string iso_now()
{
	char buf[40];
	time_t t = time(nullptr);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
	return buf;
}

/* A holder record as the origins write it; token "" = none (3.0.155). */
std::string record(long pid, const std::string &host, const std::string &at,
		   const std::string &token = "")
{
	std::string r = "{\"pid\":" + std::to_string(pid) + ",\"hostname\":\"" + host +
			"\",\"at\":\"" + at + "\"";
	if (!token.empty())
		r += ",\"token\":\"" + token + "\"";
	return r + "}\n";
}

/* ---------------------------------------------------------------- locks */

/* One module instance's lock on FILE: defaults, then small waits, then the
 * overrides, set in lk.param[] directly.  Not copyable: lk.rng points in. */
struct LfLock {
	struct lock lk;
	struct prng rng;

	LfLock(const struct lock_ops *ops, const std::string &file, unsigned worker,
	       std::vector<std::pair<const char *, int64_t>> kv = {})
	{
		prng_seed(&rng, 42, worker, 0);
		lock_setup(&lk, ops, file.c_str(), nullptr, worker, &rng);
		set("wait_ms", 15);
		set("poll_ms", 1);
		for (auto &p : kv)
			set(p.first, p.second);
		EXPECT_EQ(ops->init(&lk), 0);
	}
	LfLock(const LfLock &) = delete;
	LfLock &operator=(const LfLock &) = delete;

	void set(const char *name, int64_t v)
	{
		int i = param_index(lk.ops->params, name);
		ASSERT_GE(i, 0) << name;
		lock_param_set(&lk, i, v);
	}
	int acquire() { return lk.ops->acquire(&lk); }
	int held() { return lk.ops->held(&lk); }
	int release() { return lk.ops->release(&lk); }
};

const int64_t kTwocall = 1; /* take=twocall */

/* A scratch dir with the protected file's name and its lock's names. */
struct Env {
	ScratchDir dir;
	std::string file = dir.sub("state.json");
	std::string P = file + ".lock";
	std::string R = P + ".recovery";
};

/*
 * The lock held by another process: a child takes it, says so on a pipe,
 * and releases when told (or when this object goes away).  ok() says whether
 * the child took it.
 */
struct ChildHolder {
	pid_t pid = -1;
	int took = 0;
	int go_fd = -1;

	ChildHolder(const struct lock_ops *ops, const std::string &file,
		    std::vector<std::pair<const char *, int64_t>> kv = {})
	{
		int up[2], down[2];
		if (pipe(up) != 0 || pipe(down) != 0)
			return;
		pid = fork();
		if (pid == 0) {
			close(up[0]);
			close(down[1]);
			char c = 'n';
			int rc = 1;
			{
				LfLock l(ops, file, 9, kv);
				l.set("wait_ms", 2000);
				if (l.acquire() == 0) {
					c = 'y';
					if (write(up[1], &c, 1) == 1 && read(down[0], &c, 1) >= 0)
						rc = l.release() == 0 ? 0 : 2;
				} else if (write(up[1], &c, 1) != 1) {
					rc = 3;
				}
			}
			_exit(rc);
		}
		close(up[1]);
		close(down[0]);
		char c = 'n';
		took = read(up[0], &c, 1) == 1 && c == 'y';
		close(up[0]);
		go_fd = down[1];
	}
	bool ok() const { return took; }
	/* Release and exit; the child's exit status (0: released). */
	int finish()
	{
		if (pid <= 0)
			return -1;
		char c = 'g';
		if (write(go_fd, &c, 1) != 1) {
			/* the child reads EOF on close below */
		}
		close(go_fd);
		int status = 0;
		waitpid(pid, &status, 0);
		pid = -1;
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	}
	~ChildHolder() { finish(); }
};

const std::regex kIsoRe("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d\\.\\d{3}Z");

/* ================================================================ both */

struct Variant {
	const char *name;
	const struct lock_ops *ops;
	std::vector<std::pair<const char *, int64_t>> kv;
};

std::vector<Variant> variants()
{
	return {
		{ "legacy", &lockfile_legacy_ops, {} },
		{ "recorded link", &lockfile_recorded_ops, {} },
		{ "recorded twocall", &lockfile_recorded_ops, { { "take", kTwocall } } },
	};
}

TEST(Lockfile, FreeLockTakeAndReleaseLeaveNothing)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		LfLock a(v.ops, env.file, 0, v.kv);

		ASSERT_EQ(a.acquire(), 0) << strerror(errno);
		EXPECT_EQ(entries(env.dir.path), std::vector<std::string>{ "state.json.lock" })
			<< "no take file, no .recovery";
		EXPECT_EQ(a.held(), 1);
		EXPECT_EQ(a.release(), 0);
		EXPECT_TRUE(entries(env.dir.path).empty());

		ASSERT_EQ(a.acquire(), 0) << "and again";
		EXPECT_EQ(a.release(), 0);
		EXPECT_EQ(a.release(), 0) << "a second release is a no-op";
		EXPECT_TRUE(entries(env.dir.path).empty());
	}
}

TEST(Lockfile, TablesBudgetsAndNoHeldCheck)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		struct lock lk;
		lock_setup(&lk, v.ops, env.file.c_str(), nullptr, 0, nullptr);
		EXPECT_EQ(v.ops->stale_ms(&lk), 60000);
		EXPECT_EQ(v.ops->wait_budget_ms(&lk), 10000) << "the timeout (the give-up comes within a poll after it)";
		EXPECT_EQ(v.ops->flags & LOCK_HAS_HELD, 0u) << "no held() in either revision";
		EXPECT_EQ(param_index(v.ops->params, "form"), -1) << "withLock only";
		for (int i = 0; v.ops->points[i]; i++)
			EXPECT_EQ(std::string(v.ops->points[i]).rfind(std::string(v.ops->name) + "/", 0), 0u);
	}
	int k = param_index(lockfile_recorded_ops.params, "take");
	ASSERT_GE(k, 0);
	int64_t t = -1;
	char why[128];
	ASSERT_EQ(param_parse(&lockfile_recorded_ops.params[k], "twocall", &t, why, sizeof why), 0);
	EXPECT_EQ(t, kTwocall);
	EXPECT_EQ(lockfile_recorded_ops.params[param_index(lockfile_recorded_ops.params, "grace_ms")].def,
		  5000);
}

/* VL1 / WN2: the lock's folder is made when it is missing. */
TEST(Lockfile, MissingFolderIsMade)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		std::string file = env.dir.sub("world/state.json");
		LfLock a(v.ops, file, 0, v.kv);
		ASSERT_EQ(a.acquire(), 0) << strerror(errno);
		EXPECT_TRUE(exists(file + ".lock"));
		EXPECT_EQ(a.release(), 0);
		EXPECT_TRUE(entries(env.dir.sub("world")).empty());
	}
}

/* A live holder in another process: the waiter gives up BUSY at its timeout
 * and changes nothing; once released, the lock is free. */
TEST(Lockfile, LiveHolderMakesOthersBusy)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		ChildHolder h(v.ops, env.file, v.kv);
		ASSERT_TRUE(h.ok());
		ino_t held = ino(env.P);
		std::string before = slurp(env.P);

		LfLock b(v.ops, env.file, 1, v.kv);
		EXPECT_EQ(b.acquire(), LS_BUSY);
		EXPECT_EQ(ino(env.P), held);
		EXPECT_EQ(slurp(env.P), before);
		EXPECT_EQ(entries(env.dir.path), std::vector<std::string>{ "state.json.lock" });

		EXPECT_EQ(h.finish(), 0) << "the holder's release";
		EXPECT_FALSE(exists(env.P));
		EXPECT_EQ(b.acquire(), 0);
		EXPECT_EQ(b.release(), 0);
	}
}

/* SL2 / SR2: this host's dead pid is stale at once, whatever its age. */
TEST(Lockfile, DeadPidRecordIsReclaimed)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		for (int64_t retain : { 0, 1 }) {
			SCOPED_TRACE(retain ? "retain" : "no retain");
			Env env;
			put(env.P, record(dead_pid(), hostname(), iso_now(), "0badc0de-dead-4bad-8bad-000000000001"));
			ino_t old = ino(env.P);
			auto kv = v.kv;
			kv.push_back({ "retain", retain });
			LfLock a(v.ops, env.file, 0, kv);

			ASSERT_EQ(a.acquire(), 0) << strerror(errno);
			EXPECT_NE(ino(env.P), old) << "taken anew";
			EXPECT_NE(slurp(env.P).find("\"pid\":" + std::to_string(getpid())), std::string::npos);
			EXPECT_EQ(entries(env.dir.path), std::vector<std::string>{ "state.json.lock" })
				<< "aside and .recovery removed";
			EXPECT_EQ(a.release(), 0);
		}
	}
}

/* Another host's pid cannot be asked: only the age counts, and never under
 * retainLiveOwner. */
TEST(Lockfile, OtherHostRecordAgesOutUnlessRetained)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		{
			Env env;
			put(env.P, record(1, "another-host", "2001-02-03T04:05:06.789Z"));
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), 0) << "old `at`: stale";
			EXPECT_EQ(a.release(), 0);
		}
		{
			Env env;
			put(env.P, record(1, "another-host", iso_now()));
			age(env.P, kHour);
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), LS_BUSY) << "young `at` wins over an old mtime";
		}
		{
			Env env;
			put(env.P, record(1, "another-host", "not a date"));
			age(env.P, kHour);
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), 0) << "unparseable `at`: the mtime's age";
			EXPECT_EQ(a.release(), 0);
		}
		{
			Env env;
			put(env.P, record(1, "another-host", "2001-02-03T04:05:06.789Z"));
			auto kv = v.kv;
			kv.push_back({ "retain", 1 });
			LfLock a(v.ops, env.file, 0, kv);
			EXPECT_EQ(a.acquire(), LS_BUSY) << "retainLiveOwner: a record never ages out";
			EXPECT_TRUE(exists(env.P));
		}
	}
}

/* K-VL-1: the empty lock of a taker killed between create and record. */
TEST(Lockfile, EmptyLockPastGraceReclaimedOnlyByRecorded)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		bool legacy = v.ops == &lockfile_legacy_ops;
		for (int64_t retain : { 0, 1 }) {
			SCOPED_TRACE(retain ? "retain" : "no retain");
			auto kv = v.kv;
			kv.push_back({ "retain", retain });
			{
				Env env;
				put(env.P, "");
				age(env.P, kPastGrace);
				LfLock a(v.ops, env.file, 0, kv);
				/* legacy: SL1 null, SL4 mtime young -> waited on (and
				 * with retain SL3 says never); recorded: SR4 empty past
				 * the grace, asked before the live-owner rule */
				EXPECT_EQ(a.acquire(), legacy ? LS_BUSY : 0);
				if (legacy) {
					EXPECT_EQ(slurp(env.P), "") << "left alone";
				}
				a.release();
			}
			{
				Env env;
				put(env.P, "");
				age(env.P, kHour);
				LfLock a(v.ops, env.file, 0, kv);
				/* past the stale age: legacy reclaims it, except under
				 * retainLiveOwner, where it waits for ever (K-VL-1 step 3) */
				EXPECT_EQ(a.acquire(), legacy && retain ? LS_BUSY : 0);
				a.release();
			}
		}
		{
			Env env;
			put(env.P, "");
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), LS_BUSY) << "a fresh empty lock is left alone";
			EXPECT_EQ(ino(env.P) != 0, true);
		}
	}
}

/* A malformed non-empty record keeps the 60 s rule in both revisions. */
TEST(Lockfile, MalformedRecordKeepsTheStaleAge)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		{
			Env env;
			put(env.P, "{\"pid\":12");
			age(env.P, kPastGrace);
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), LS_BUSY);
		}
		{
			Env env;
			put(env.P, "{\"pid\":12");
			age(env.P, kHour);
			LfLock a(v.ops, env.file, 0, v.kv);
			EXPECT_EQ(a.acquire(), 0);
			EXPECT_EQ(a.release(), 0);
		}
	}
}

/* K-VL-2 and its fix: a leftover .recovery over a stale lock. */
TEST(Lockfile, LeftoverRecoveryBlocksLegacyButNotRecorded)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		bool legacy = v.ops == &lockfile_legacy_ops;
		for (const char *rec : { "", "{\"pid\":" }) {
			SCOPED_TRACE(std::string("recovery '") + rec + "'");
			Env env;
			put(env.P, record(dead_pid(), hostname(), iso_now()));
			put(env.R, rec);
			age(env.R, kPastGrace);
			LfLock a(v.ops, env.file, 0, v.kv);
			int r = a.acquire();
			if (legacy) {
				/* VL4 EEXIST until the timeout: "Lock recovery is active
				 * or interrupted", and nothing ever removes it */
				EXPECT_EQ(r, LS_BUSY);
				EXPECT_TRUE(exists(env.R));
				EXPECT_EQ(a.acquire(), LS_BUSY) << "again, for ever";
			} else if (*rec == '\0') {
				/* RS3: empty past the grace -> set aside, then the
				 * dead holder's lock is reclaimed */
				EXPECT_EQ(r, 0);
				EXPECT_EQ(entries(env.dir.path), std::vector<std::string>{ "state.json.lock" });
				EXPECT_EQ(a.release(), 0);
			} else {
				/* RS4: non-empty but unparseable is never stale */
				EXPECT_EQ(r, LS_BUSY);
				EXPECT_TRUE(exists(env.R));
			}
		}
	}
}

/* A .recovery younger than the grace is a reclaimer at work: waited on. */
TEST(LockfileRecorded, RecoveryRules)
{
	struct Case {
		const char *name;
		std::string text;
		long age_s;
		int want;
	};
	const std::string now = iso_now();
	const Case cases[] = {
		{ "fresh empty", "", 0, LS_BUSY },
		{ "dead pid, past grace", record(dead_pid(), hostname(), now, "r"), kPastGrace, 0 },
		{ "dead pid, fresh", record(dead_pid(), hostname(), now, "r"), 0, LS_BUSY },
		{ "live pid, old", record(getppid(), hostname(), now, "r"), kHour, LS_BUSY },
		{ "other host, old", record(1, "another-host", now, "r"), kHour, LS_BUSY },
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.name);
		Env env;
		put(env.P, "");
		age(env.P, kHour);
		put(env.R, c.text);
		age(env.R, c.age_s);
		LfLock a(&lockfile_recorded_ops, env.file, 0);
		EXPECT_EQ(a.acquire(), c.want);
		if (c.want == 0) {
			EXPECT_EQ(entries(env.dir.path), std::vector<std::string>{ "state.json.lock" });
			EXPECT_EQ(a.release(), 0);
		} else {
			EXPECT_EQ(slurp(env.R), c.text) << "left alone";
		}
	}
}

/* Release never removes a lock that is not the one taken: by inode (legacy)
 * or by token (recorded).  The first holder's file is kept (renamed) so the
 * replacement cannot reuse its inode number. */
TEST(Lockfile, ReleaseLeavesAReplacedLock)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		LfLock a(v.ops, env.file, 0, v.kv);
		ASSERT_EQ(a.acquire(), 0);
		ASSERT_EQ(rename(env.P.c_str(), (env.P + ".kept").c_str()), 0);
		std::string other = record(getppid(), hostname(), iso_now(),
					   "11111111-2222-4333-8444-555555555555");
		put(env.P, other);

		EXPECT_EQ(a.release(), 0);
		EXPECT_EQ(slurp(env.P), other) << "another's lock stays";
	}
}

/* The same with the replacement written over the same inode: only the token
 * tells them apart (legacy's inode compare removes it). */
TEST(Lockfile, SameInodeDifferentTake)
{
	for (const Variant &v : variants()) {
		SCOPED_TRACE(v.name);
		Env env;
		LfLock a(v.ops, env.file, 0, v.kv);
		ASSERT_EQ(a.acquire(), 0);
		std::string other = record(getppid(), hostname(), iso_now(),
					   "11111111-2222-4333-8444-555555555555");
		ASSERT_EQ(truncate(env.P.c_str(), 0), 0);
		int fd = open(env.P.c_str(), O_WRONLY);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(write(fd, other.data(), other.size()), (ssize_t)other.size());
		close(fd);

		EXPECT_EQ(a.release(), 0);
		if (v.ops == &lockfile_legacy_ops)
			EXPECT_FALSE(exists(env.P)) << "same inode: removed";
		else
			EXPECT_EQ(slurp(env.P), other) << "another token: kept";
	}
}

/* ================================================================ legacy */

TEST(LockfileLegacy, RecordWrittenAfterTheCreate)
{
	Env env;
	LfLock a(&lockfile_legacy_ops, env.file, 0);
	ASSERT_EQ(a.acquire(), 0);
	std::string rec = slurp(env.P);
	std::smatch m;
	ASSERT_TRUE(std::regex_match(rec, m,
				     std::regex("\\{\"pid\":(\\d+),\"hostname\":\"([^\"]*)\",\"at\":\"([^\"]+)\"\\}\n")))
		<< rec;
	EXPECT_EQ(m[1].str(), std::to_string(getpid()));
	EXPECT_EQ(m[2].str(), hostname());
	EXPECT_TRUE(std::regex_match(m[3].str(), kIsoRe)) << m[3].str();
	EXPECT_EQ(a.release(), 0);
}

/* K-VL-4: a lock recorded with our own live pid is waited on: waiting on
 * ourselves. */
TEST(LockfileLegacy, OwnPidRecordIsWaitedOn)
{
	Env env;
	put(env.P, record(getpid(), hostname(), iso_now()));
	LfLock a(&lockfile_legacy_ops, env.file, 0);
	EXPECT_EQ(a.acquire(), LS_BUSY);
	EXPECT_TRUE(exists(env.P));
}

/* Two module instances in one process: the pid is alive, so the second waits. */
TEST(LockfileLegacy, SecondInstanceInProcessIsBusy)
{
	Env env;
	LfLock a(&lockfile_legacy_ops, env.file, 0);
	LfLock b(&lockfile_legacy_ops, env.file, 1);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(b.acquire(), LS_BUSY);
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(b.acquire(), 0);
	EXPECT_EQ(b.release(), 0);
	EXPECT_TRUE(entries(env.dir.path).empty());
}

/* VL8 rename-aside, VL9 unlink: an old lock is replaced by a new inode; an
 * aside name from a crashed reclaimer is not the lock and stays. */
TEST(LockfileLegacy, ReclaimRenamesAsideAndUnlinks)
{
	Env env;
	put(env.P, record(1, "another-host", "2001-02-03T04:05:06.789Z"));
	put(env.P + ".stale.1.2", "");
	ino_t old = ino(env.P);
	LfLock a(&lockfile_legacy_ops, env.file, 0);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_NE(ino(env.P), old);
	EXPECT_EQ(entries(env.dir.path),
		  (std::vector<std::string>{ "state.json.lock", "state.json.lock.stale.1.2" }));
	EXPECT_EQ(a.release(), 0);
}

/* ================================================================ recorded */

TEST(LockfileRecorded, RecordTakenWithTheLock)
{
	for (int64_t take : { 0, 1 }) {
		SCOPED_TRACE(take ? "twocall" : "link");
		Env env;
		LfLock a(&lockfile_recorded_ops, env.file, 3, { { "take", take } });
		ASSERT_EQ(a.acquire(), 0);
		std::string rec = slurp(env.P);
		std::smatch m;
		ASSERT_TRUE(std::regex_match(
			rec, m,
			std::regex("\\{\"pid\":(\\d+),\"hostname\":\"([^\"]*)\",\"at\":\"([^\"]+)\","
				   "\"token\":\"([0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})\","
				   "\"operation\":\"[^\"]+\",\"caller\":\"[^\"]+\"\\}\n")))
			<< rec;
		EXPECT_EQ(m[1].str(), std::to_string(getpid()));
		EXPECT_EQ(m[2].str(), hostname());
		EXPECT_TRUE(std::regex_match(m[3].str(), kIsoRe)) << m[3].str();
		struct stat st;
		ASSERT_EQ(stat(env.P.c_str(), &st), 0);
		EXPECT_EQ(st.st_nlink, 1u) << "the take file is gone (CR5)";
		EXPECT_EQ(a.release(), 0);
		EXPECT_TRUE(entries(env.dir.path).empty());
	}
}

/* Tokens come from the worker's stream: fresh per take, reproducible. */
TEST(LockfileRecorded, TokensComeFromTheWorkerStream)
{
	std::vector<std::string> first, second;
	for (int round = 0; round < 2; round++) {
		Env env;
		LfLock a(&lockfile_recorded_ops, env.file, 5);
		for (int i = 0; i < 2; i++) {
			ASSERT_EQ(a.acquire(), 0);
			(round ? second : first).push_back(slurp(env.P).substr(slurp(env.P).find("\"token\"")));
			EXPECT_EQ(a.release(), 0);
		}
	}
	EXPECT_EQ(first, second);
	EXPECT_NE(first[0], first[1]);
}

/* SR3: a lock recorded under this pid that this instance does not hold is no
 * holder's (the fix for K-VL-3/K-VL-4's waiting on ourselves). */
TEST(LockfileRecorded, OwnPidRuleReclaimsOurOwnLeftover)
{
	Env env;
	put(env.P, record(getpid(), hostname(), iso_now(), "99999999-9999-4999-8999-999999999999"));
	LfLock a(&lockfile_recorded_ops, env.file, 0, { { "retain", 1 } });
	ASSERT_EQ(a.acquire(), 0) << "stale even under retainLiveOwner";
	EXPECT_EQ(slurp(env.P).find("99999999-"), std::string::npos);
	EXPECT_EQ(a.release(), 0);
}

/* SR3 compares ownLocks[P] with the record's token: a 3.0.155 record (no
 * token) naming our pid matches "not held" (undefined === undefined) and is
 * waited on like any live holder's. */
TEST(LockfileRecorded, OwnPidRuleNeedsAToken)
{
	Env env;
	put(env.P, record(getpid(), hostname(), iso_now()));
	LfLock a(&lockfile_recorded_ops, env.file, 0);
	EXPECT_EQ(a.acquire(), LS_BUSY);
	EXPECT_TRUE(exists(env.P));
}

/* §5.7 "same pid in two module instances": ownLocks is one instance's
 * memory, so a second instance in the holder's process judges the lock its
 * own leftover and takes it: two holders.  The first one's release then
 * removes nothing of the second's (release by token). */
TEST(LockfileRecorded, SecondInstanceInProcessTakesItByTheOwnPidRule)
{
	Env env;
	LfLock a(&lockfile_recorded_ops, env.file, 0);
	LfLock b(&lockfile_recorded_ops, env.file, 1);
	ASSERT_EQ(a.acquire(), 0);
	std::string a_rec = slurp(env.P);
	ASSERT_EQ(b.acquire(), 0) << "SR3: recorded with our pid, not in b's ownLocks";
	std::string b_rec = slurp(env.P);
	EXPECT_NE(a_rec, b_rec);
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(slurp(env.P), b_rec) << "a's token is not there: nothing removed";
	EXPECT_EQ(b.release(), 0);
	EXPECT_TRUE(entries(env.dir.path).empty());
}

/* WAIT's REWRITE (§5.5): a process that holds one lock and waits on another
 * rewrites its held record with waitingFor, and without it once the wait is
 * over - padded with spaces to the file's length, never a shorter file with
 * an old tail.  Here the wait times out (the other lock's holder is a live
 * child). */
TEST(LockfileRecorded, WaitRewritesHeldRecordsWithWaitingForThenPadsItAway)
{
	Env env;
	std::string other = env.dir.sub("other.json");
	ChildHolder child(&lockfile_recorded_ops, other);
	ASSERT_TRUE(child.ok());
	LfLock a(&lockfile_recorded_ops, env.file, 0);
	ASSERT_EQ(a.acquire(), 0);
	std::string before = slurp(env.P);
	LfLock b(&lockfile_recorded_ops, other, 0); /* the same module instance: worker 0 */
	EXPECT_EQ(b.acquire(), LS_BUSY);
	std::string after = slurp(env.P);
	EXPECT_GT(after.size(), before.size()) << "waitingFor grew it, and the rewrite back is padded: " << after;
	EXPECT_EQ(after.find("waitingFor"), std::string::npos) << after;
	std::string body = before.substr(0, before.size() - 1);
	EXPECT_EQ(after, body + std::string(after.size() - before.size(), ' ') + "\n")
		<< "the same record (its take's at and token), spaces before the newline";

	/* a lock held by another instance (worker 1) is not this one's to rewrite */
	LfLock c(&lockfile_recorded_ops, other, 1);
	EXPECT_EQ(c.acquire(), LS_BUSY);
	EXPECT_EQ(slurp(env.P), after);
	EXPECT_EQ(a.release(), 0) << "the token still reads back: released";
	EXPECT_FALSE(exists(env.P));
	EXPECT_EQ(child.finish(), 0);
}

/* While it waits, the record says what for: a child holds A and waits on B,
 * which this process holds; A's record names B until the child takes B. */
TEST(LockfileRecorded, HeldRecordNamesTheLockItsHolderWaitsFor)
{
	Env env;
	std::string other = env.dir.sub("other.json");
	LfLock b(&lockfile_recorded_ops, other, 0);
	ASSERT_EQ(b.acquire(), 0);
	int done[2];
	ASSERT_EQ(pipe(done), 0);
	pid_t pid = fork();
	if (pid == 0) {
		close(done[0]);
		int rc = 1;
		{
			LfLock ca(&lockfile_recorded_ops, env.file, 7);
			LfLock cb(&lockfile_recorded_ops, other, 7, { { "wait_ms", 10000 } });
			if (ca.acquire() == 0 && cb.acquire() == 0) {
				char c = 'y';
				rc = write(done[1], &c, 1) == 1 && cb.release() == 0 && ca.release() == 0 ? 0 : 2;
			}
		}
		_exit(rc);
	}
	close(done[1]);
	/* the child's first wait rewrites A: watch for it, bounded (no sleep) */
	std::string rec, want = ",\"waitingFor\":{\"path\":\"" + other + ".lock\",\"since\":\"";
	const std::regex whole("\"since\":\"[0-9T:.-]+Z\"\\}\\}\n$");
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do { /* a read may meet the pwrite half done (the field's start there, its end not yet):
	      * look until the whole record is there */
		rec = slurp(env.P);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((rec.find(want) == std::string::npos || !std::regex_search(rec, whole)) && t.tv_sec - t0.tv_sec < 8);
	EXPECT_NE(rec.find(want), std::string::npos) << rec;
	EXPECT_TRUE(std::regex_search(rec, whole)) << rec;
	EXPECT_EQ(b.release(), 0);
	char c = 'n';
	EXPECT_EQ(read(done[0], &c, 1), 1);
	EXPECT_EQ(c, 'y') << "the child took B once it was released";
	close(done[0]);
	int status = 0;
	waitpid(pid, &status, 0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* CR4 SWEEP: on a link EEXIST, take files older than the grace are removed,
 * younger ones (a live taker's) are kept; once per process per path. */
TEST(LockfileRecorded, SweepRemovesOldTakeFiles)
{
	Env env;
	ChildHolder h(&lockfile_recorded_ops, env.file);
	ASSERT_TRUE(h.ok());
	std::string old_take = env.P + ".take.1.00000000-0000-4000-8000-000000000000";
	std::string young_take = env.P + ".take.2.00000000-0000-4000-8000-000000000001";
	std::string other = env.P + ".recovery.take.3.00000000-0000-4000-8000-000000000002";
	put(old_take, "{}");
	age(old_take, kPastGrace);
	put(young_take, "{}");
	put(other, "{}");
	age(other, kPastGrace);

	LfLock b(&lockfile_recorded_ops, env.file, 1);
	EXPECT_EQ(b.acquire(), LS_BUSY);
	EXPECT_FALSE(exists(old_take)) << "swept";
	EXPECT_TRUE(exists(young_take)) << "younger than the grace";
	EXPECT_TRUE(exists(other)) << "another path's take file";

	put(old_take, "{}");
	age(old_take, kPastGrace);
	EXPECT_EQ(b.acquire(), LS_BUSY);
	EXPECT_TRUE(exists(old_take)) << "at most once per process per path";
	EXPECT_EQ(h.finish(), 0);
}

/* A leftover take file holds nothing: the lock is free. */
TEST(LockfileRecorded, LeftoverTakeFileDoesNotBlock)
{
	Env env;
	std::string take = env.P + ".take.1.00000000-0000-4000-8000-000000000000";
	put(take, record(dead_pid(), hostname(), iso_now(), "t"));
	LfLock a(&lockfile_recorded_ops, env.file, 0);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(a.release(), 0);
	EXPECT_TRUE(exists(take)) << "only a link EEXIST sweeps";
}

/* ================================================================ carried */

struct CarriedCase {
	const char *name;
	const char *file;    /* in the lock's folder */
	std::string text;
	long age_s;          /* mtime this far back; negative: after the boot */
	bool removed;
};

TEST(LockfileRecorded, RemoveCarriedLocksAtInit)
{
	const CarriedCase cases[] = {
		{ "empty lock", "state.json.lock", "", kHour, true },
		{ "blank lock", "state.json.lock", " \n ", kHour, true },
		{ "torn record", "state.json.lock", "{\"pid\":12", kHour, true },
		{ "pid not an integer", "state.json.lock", "{\"pid\":\"12\"}\n", kHour, true },
		{ "a record", "state.json.lock", record(1, "h", "2001-02-03T04:05:06.789Z"), kHour, false },
		{ "not a record", "state.json.lock", "garbage", kHour, false },
		{ "made after the boot", "state.json.lock", "", -kHour, false },
		{ "too big", "state.json.lock", std::string(1025, ' '), kHour, false },
		{ "empty recovery", "state.json.lock.recovery", "", kHour, true },
		{ "torn recovery", "state.json.lock.recovery", "{\"pid\"", kHour, true },
		{ "another lock", "other.lock", "", kHour, true },
		{ "not a lock name", "state.json.lock.stale.1.2", "", kHour, false },
	};
	for (const CarriedCase &c : cases) {
		SCOPED_TRACE(c.name);
		Env env;
		std::string p = env.dir.sub(c.file);
		put(p, c.text);
		age(p, c.age_s);
		LfLock a(&lockfile_recorded_ops, env.file, 0, { { "carried_sweep", 1 } });
		EXPECT_EQ(exists(p), !c.removed);
		auto left = entries(env.dir.path);
		EXPECT_EQ(left.size(), c.removed ? 0u : 1u) << "no aside, no .recovery left";
	}
}

TEST(LockfileRecorded, CarriedSweepIsOffByDefault)
{
	Env env;
	put(env.P, "");
	age(env.P, kHour);
	LfLock a(&lockfile_recorded_ops, env.file, 0);
	EXPECT_TRUE(exists(env.P));
}

/* removeLock works under the lock's .recovery: a reclaimer at work (a fresh
 * .recovery) keeps the sweep off the lock. */
TEST(LockfileRecorded, CarriedLockUnderAReclaimerIsLeft)
{
	Env env;
	put(env.P, "");
	age(env.P, kHour);
	put(env.R, record(getppid(), hostname(), iso_now(), "r"));
	age(env.R, -kHour); /* made after the boot's claim: not carried itself */
	LfLock a(&lockfile_recorded_ops, env.file, 0, { { "carried_sweep", 1 } });
	EXPECT_TRUE(exists(env.P));
	EXPECT_TRUE(exists(env.R));
}

} // namespace
