/* unit_pidlock.cc - quiver's source lock (protocols/pidlock.c, PROTOCOLS.md
 * §7) step by step, single process: arrange a lock file, call one op, check
 * the outcome and what is left on disk.
 *
 * No fsx binding: every fsx call passes straight through.  Nothing sleeps to
 * synchronise and nothing asserts on timing; "old" means an mtime set an hour
 * back with utimensat, far past the 60 s unreadable age.  A dead pid is a
 * child that has been reaped; a live one is this process. */
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "faults/fsx.h"
#include "protocols/lock.h"
}

namespace {

/* ---------------------------------------------------------------- disk */

std::string record(const std::string &token, const std::string &pid)
{
	return "{\"owner\":\"other\",\"token\":\"" + token + "\",\"pid\":" + pid +
	       ",\"at\":1,\"file\":\"/x\"}\n";
}

/* The token in the record at L ("" if none). */
std::string token_at(const std::string &L)
{
	json_error_t e;
	json_t *o = json_load_file(L.c_str(), 0, &e);
	const char *t = json_string_value(json_object_get(o, "token"));
	std::string s = t ? t : "";
	json_decref(o);
	return s;
}

/* ---------------------------------------------------------------- locks */

/* One worker's lock on FILE, params resolved from "K=V" overrides at time
 * scale 1.  Not copyable: lk.rng points into it. */
struct TestLock {
	struct lock lk;
	struct prng rng;

	TestLock(const std::string &file, unsigned worker, std::vector<std::string> kv = {})
	{
		int64_t vals[LS_MAX_PARAMS];
		std::vector<const char *> p;
		char why[256] = "";
		for (auto &s : kv)
			p.push_back(s.c_str());
		if (param_resolve(pidlock_ops.params, vals, p.data(), (unsigned)p.size(), 1.0, nullptr,
				  why, sizeof why) != 0)
			ADD_FAILURE() << why;
		prng_seed(&rng, 42, worker, 0);
		lock_setup(&lk, &pidlock_ops, file.c_str(), vals, worker, &rng);
		EXPECT_EQ(pidlock_ops.init(&lk), 0);
	}
	TestLock(const TestLock &) = delete;
	TestLock &operator=(const TestLock &) = delete;

	int acquire() { return lk.ops->acquire(&lk); }
	int held() { return lk.ops->held(&lk); }
	int release() { return lk.ops->release(&lk); }
};

struct Env {
	ScratchDir dir;
	std::string file = dir.sub("state.json");
	std::string L = file + ".lock";
	std::string gone = dir.sub("swept/state.json"); /* parent folder missing */
};

const std::string kOtherToken = "00000000-0000-4000-8000-000000000000";

/* ================================================================ acquire */

struct Row {
	const char *name;
	std::string content; /* the lock file's bytes; "-" none, "dir" a directory */
	bool old;            /* mtime an hour back */
	int want;            /* 0 or LS_BUSY */
	bool cleared;        /* documents the row: CLEAR removed the file that was there */
};

/* CLEAR then PA1: which locks are cleared, which block. */
TEST(ProtoPidlock, AcquireSteps)
{
	const std::string me = std::to_string(getpid());
	const std::string dead = std::to_string(dead_pid());
	const Row rows[] = {
		{ "free", "-", false, 0, false },
		/* CS4: a live pid keeps its lock however old ("never swept") */
		{ "live pid", record(kOtherToken, me), false, LS_BUSY, false },
		{ "live pid, old", record(kOtherToken, me), true, LS_BUSY, false },
		/* CS4-CS5: a dead pid releases at once, however young */
		{ "dead pid", record(kOtherToken, dead), false, 0, true },
		/* CS5 without CS4: parsed, no numeric pid */
		{ "no pid", "{}\n", false, 0, true },
		{ "string pid", record(kOtherToken, "\"" + me + "\""), false, 0, true },
		{ "a number", "5\n", false, 0, true },
		{ "an array", "[]\n", false, 0, true },
		/* process.kill throws a non-ESRCH error for a non-int32 pid: alive */
		{ "fractional pid", record(kOtherToken, "1.5"), false, LS_BUSY, false },
		{ "huge pid", record(kOtherToken, "1e12"), true, LS_BUSY, false },
		/* CS2-CS3: unreadable (JS-falsy) locks go by age only */
		{ "empty, young", "", false, LS_BUSY, false },
		{ "empty, old", "", true, 0, true },
		{ "torn, young", "{\"owner\":\"x\",\"tok", false, LS_BUSY, false },
		{ "torn, old", "{\"owner\":\"x\",\"tok", true, 0, true },
		{ "null, young", "null\n", false, LS_BUSY, false },
		{ "null, old", "null\n", true, 0, true },
		{ "zero, young", "0\n", false, LS_BUSY, false },
		{ "false, old", "false\n", true, 0, true },
		{ "empty string, young", "\"\"\n", false, LS_BUSY, false },
		/* a directory at L: read fails, unlink fails (ignored), create EEXIST */
		{ "L is a directory, old", "dir", true, LS_BUSY, false },
	};
	for (const Row &r : rows) {
		SCOPED_TRACE(r.name);
		Env env;
		if (r.content == "dir")
			ASSERT_EQ(mkdir(env.L.c_str(), 0777), 0);
		else if (r.content != "-")
			put(env.L, r.content);
		if (r.old && r.content != "-")
			age(env.L);
		ino_t before = ino(env.L);

		TestLock a(env.file, 0);
		errno = 0;
		EXPECT_EQ(a.acquire(), r.want) << strerror(errno);
		if (r.want == 0) {
			EXPECT_EQ(token_at(env.L).size(), 36u) << "our record";
			EXPECT_NE(token_at(env.L), kOtherToken);
			EXPECT_EQ(a.release(), 0);
			EXPECT_FALSE(exists(env.L));
		} else {
			EXPECT_EQ(ino(env.L), before) << "the blocking lock is untouched";
			EXPECT_EQ(a.release(), 0) << "nothing to release";
			EXPECT_TRUE(exists(env.L)) << "a release without a hold removes nothing";
		}
	}
}

TEST(ProtoPidlock, RecordNamesThisAcquire)
{
	Env env;
	TestLock a(env.file, 3);
	int64_t t0 = (int64_t)time(nullptr) * 1000;

	ASSERT_EQ(a.acquire(), 0) << strerror(errno);
	int64_t t1 = (int64_t)time(nullptr) * 1000 + 1000;
	std::string text;
	{
		FILE *f = fopen(env.L.c_str(), "r");
		ASSERT_NE(f, nullptr);
		char buf[1024];
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		text.assign(buf, n);
	}
	ASSERT_FALSE(text.empty());
	EXPECT_EQ(text.back(), '\n') << "one line";
	EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1);

	json_error_t e;
	json_t *o = json_loads(text.c_str(), 0, &e);
	ASSERT_TRUE(json_is_object(o)) << text;
	EXPECT_STREQ(json_string_value(json_object_get(o, "owner")), "lockstorm-w3");
	EXPECT_EQ(json_integer_value(json_object_get(o, "pid")), (json_int_t)getpid());
	EXPECT_STREQ(json_string_value(json_object_get(o, "file")), env.file.c_str());
	json_int_t at = json_integer_value(json_object_get(o, "at"));
	EXPECT_GE(at, t0);
	EXPECT_LE(at, t1);
	const char *tok = json_string_value(json_object_get(o, "token"));
	ASSERT_NE(tok, nullptr);
	EXPECT_TRUE(std::regex_match(tok, std::regex("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")))
		<< tok;
	std::string first = tok;
	json_decref(o);

	EXPECT_EQ(a.held(), 1);
	EXPECT_EQ(a.release(), 0);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_NE(token_at(env.L), first) << "a fresh token per acquire";
	EXPECT_EQ(a.release(), 0);
}

TEST(ProtoPidlock, HolderMakesOthersBusyUntilRelease)
{
	Env env;
	TestLock a(env.file, 0);
	TestLock b(env.file, 1);
	TestLock c(env.file, 2, { "wait_ms=20", "retry_ms=1" });

	ASSERT_EQ(a.acquire(), 0);
	std::string tok = token_at(env.L);
	EXPECT_EQ(b.acquire(), LS_BUSY) << "waitMs 0: a single try";
	EXPECT_EQ(c.acquire(), LS_BUSY) << "retries until the deadline, then SOURCE_LOCKED";
	EXPECT_EQ(token_at(env.L), tok) << "the holder's record is untouched";
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L));
	EXPECT_EQ(b.acquire(), 0);
	EXPECT_EQ(b.release(), 0);
}

TEST(ProtoPidlock, SweptParentIsMadeAgain)
{
	Env env;
	TestLock a(env.gone, 0);
	ASSERT_EQ(a.acquire(), 0) << "PL0: mkdir -p dirname(L)";
	EXPECT_TRUE(exists(env.gone + ".lock"));
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(entries(env.dir.sub("swept")), std::vector<std::string>{});
}

TEST(ProtoPidlock, CreateErrorRaises)
{
	Env env;
	/* the folder is a regular file: Node's recursive mkdir raises EEXIST */
	put(env.dir.sub("swept"), "");
	TestLock a(env.gone, 0);
	errno = 0;
	EXPECT_EQ(a.acquire(), -1);
	EXPECT_EQ(errno, EEXIST) << strerror(errno);
	EXPECT_EQ(a.lk.last_error, EEXIST);
}

/* PA2 fails after the create: the error is raised, the lock file stays
 * (empty or torn), blocks the next taker until old, then is cleared. */
TEST(ProtoPidlock, RecordWriteFailureLeavesAnUnreadableLock)
{
	Env env;
	pid_t child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		/* a file size limit of 10 bytes: the record write stops with EFBIG */
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { 10, 10 };
		setrlimit(RLIMIT_FSIZE, &rl);
		TestLock a(env.file, 0);
		errno = 0;
		int rc = a.acquire();
		_exit(rc == -1 && errno == EFBIG ? 0 : 1);
	}
	int st = 0;
	ASSERT_EQ(waitpid(child, &st, 0), child);
	ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "acquire raised EFBIG";
	struct stat sb;
	ASSERT_EQ(stat(env.L.c_str(), &sb), 0) << "the lock file is left";
	EXPECT_EQ(sb.st_size, 10) << "torn";

	TestLock b(env.file, 1);
	EXPECT_EQ(b.acquire(), LS_BUSY) << "unreadable and young: maybe a live taker's window";
	age(env.L);
	EXPECT_EQ(b.acquire(), 0) << "unreadable and old: retired";
	EXPECT_EQ(b.release(), 0);
}

/* ================================================================ release */

struct RelRow {
	const char *name;
	std::string replace_with; /* what is at L at release time; "-" removed, "mine" untouched */
	bool removed;             /* release unlinks L */
};

TEST(ProtoPidlock, ReleaseSteps)
{
	const std::string me = std::to_string(getpid());
	const RelRow rows[] = {
		/* RO1 token matches -> RO2 */
		{ "ours", "mine", true },
		/* "If a sweeper judged our lock stale and another writer replaced it,
		 * unlinking here would end *their* critical section" */
		{ "replaced by another's record", record(kOtherToken, me), false },
		{ "replaced by a record without a token", "{\"pid\":" + me + "}\n", false },
		{ "replaced by a numeric token", "{\"token\":5}\n", false },
		{ "replaced by a number", "7\n", false },
		/* unreadable: removed, whoever made it ("or the file cannot be read") */
		{ "replaced by an empty file", "", true },
		{ "replaced by a torn record", "{\"owner\":\"x\",\"to", true },
		{ "replaced by null", "null\n", true },
		/* gone: RO2 unlink fails ENOENT, ignored */
		{ "removed", "-", false },
	};
	for (const RelRow &r : rows) {
		SCOPED_TRACE(r.name);
		Env env;
		TestLock a(env.file, 0);
		ASSERT_EQ(a.acquire(), 0);
		if (r.replace_with == "-") {
			ASSERT_EQ(unlink(env.L.c_str()), 0);
		} else if (r.replace_with != "mine") {
			ASSERT_EQ(unlink(env.L.c_str()), 0);
			put(env.L, r.replace_with);
		}
		EXPECT_EQ(a.release(), 0) << "errors are ignored";
		if (r.replace_with == "-") {
			EXPECT_FALSE(exists(env.L));
		} else {
			EXPECT_EQ(exists(env.L), !r.removed);
		}
	}
}

TEST(ProtoPidlock, ReleaseActsOnce)
{
	Env env;
	TestLock a(env.file, 0);
	TestLock b(env.file, 1);

	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(a.release(), 0);
	ASSERT_EQ(b.acquire(), 0);
	put(env.L, ""); /* b's file made unreadable: a release by a would remove it */
	EXPECT_EQ(a.release(), 0) << "a second release takes no step";
	EXPECT_TRUE(exists(env.L));
	EXPECT_EQ(b.release(), 0);
	EXPECT_FALSE(exists(env.L));
}

/* Two takers on one dead owner's lock, one after the other: the first
 * clears and takes it, the second then reads a live record.  (Interleaved,
 * CS4's judgement and CS5's unlink by name are not atomic: the second would
 * remove the first's new lock - see integ_append.cc.) */
TEST(ProtoPidlock, DeadOwnersLockGoesToOneTaker)
{
	Env env;
	put(env.L, record(kOtherToken, std::to_string(dead_pid())));
	TestLock a(env.file, 0);
	TestLock b(env.file, 1);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(b.acquire(), LS_BUSY) << "a's record names a live pid (this process)";
	EXPECT_EQ(a.release(), 0);
}

/* ================================================================ steps taken */

struct Calls {
	uint64_t open, read, stat, unlink, kill;
	bool operator==(const Calls &o) const
	{
		return open == o.open && read == o.read && stat == o.stat && unlink == o.unlink &&
		       kill == o.kill;
	}
};
std::ostream &operator<<(std::ostream &os, const Calls &c)
{
	return os << "{open " << c.open << ", read " << c.read << ", stat " << c.stat << ", unlink "
		  << c.unlink << ", kill " << c.kill << "}";
}

struct CallCounter {
	uint64_t before[FSX_OP_COUNT];
	CallCounter() { memcpy(before, fsx_counts(), sizeof before); }
	uint64_t d(int op) const { return fsx_counts()[op] - before[op]; }
	Calls since() const
	{
		/* fsx_read_file is an open plus a read */
		return { d(FSX_OPEN), d(FSX_READ), d(FSX_STAT), d(FSX_UNLINK), d(FSX_KILL) };
	}
};

struct TraceRow {
	const char *name;
	std::string content;
	bool old;
	int want;
	Calls calls;
};

TEST(ProtoPidlock, StepsTaken)
{
	const std::string me = std::to_string(getpid());
	const TraceRow rows[] = {
		/* every row: PL0 mkdir EEXIST + its stat (is it a directory?) */
		/* CS1 read (open ENOENT), CS2 stat ENOENT; PA1 open */
		{ "free", "-", false, 0, { 2, 0, 2, 0, 0 } },
		/* CS1 read, CS4 kill alive; PA1 EEXIST */
		{ "live", record(kOtherToken, me), false, LS_BUSY, { 2, 1, 1, 0, 1 } },
		/* CS1 read, no numeric pid: CS5 unlink; PA1 open */
		{ "no pid", "{}\n", false, 0, { 2, 1, 1, 1, 0 } },
		/* CS1 read, CS2 stat, young; PA1 EEXIST */
		{ "empty young", "", false, LS_BUSY, { 2, 1, 2, 0, 0 } },
		/* CS1, CS2, CS3 unlink; PA1 */
		{ "empty old", "", true, 0, { 2, 1, 2, 1, 0 } },
		/* fractional pid: alive without a kill(2) */
		{ "fractional", record(kOtherToken, "2.5"), false, LS_BUSY, { 2, 1, 1, 0, 0 } },
	};
	for (const auto &r : rows) {
		SCOPED_TRACE(r.name);
		Env env;
		if (r.content != "-")
			put(env.L, r.content);
		if (r.old)
			age(env.L);
		TestLock a(env.file, 0);
		CallCounter c;
		EXPECT_EQ(a.acquire(), r.want);
		EXPECT_EQ(c.since(), r.calls);
	}
}

TEST(ProtoPidlock, ReleaseStepsTaken)
{
	Env env;
	TestLock a(env.file, 0);
	ASSERT_EQ(a.acquire(), 0);
	CallCounter c;
	EXPECT_EQ(a.release(), 0);
	/* RO1 read, RO2 unlink */
	EXPECT_EQ(c.since(), (Calls{ 1, 1, 0, 1, 0 }));
}

/* ================================================================ constants */

TEST(ProtoPidlock, ParamsBudgetsAndStale)
{
	Env env;
	TestLock a(env.file, 0);
	EXPECT_EQ(pidlock_ops.stale_ms(&a.lk), 60000) << "UNREADABLE_LOCK_STALE_MS";
	EXPECT_EQ(pidlock_ops.wait_budget_ms(&a.lk), 0) << "waitMs 0: one try";
	EXPECT_EQ(pidlock_ops.flags & LOCK_HAS_HELD, 0u) << "no held() check in the origin";
	EXPECT_EQ(pidlock_ops.held(&a.lk), 1);

	TestLock w(env.file, 0, { "wait_ms=2s" });
	EXPECT_GE(pidlock_ops.wait_budget_ms(&w.lk), 2000);
	EXPECT_LT(pidlock_ops.wait_budget_ms(&w.lk), 60000) << "wait budget < unreadable age";

	int64_t v[LS_MAX_PARAMS];
	char why[128];
	const char *kv[] = { "stale_ms=60s" };
	ASSERT_EQ(param_resolve(pidlock_ops.params, v, kv, 1, 0.01, nullptr, why, sizeof why), 0);
	EXPECT_EQ(v[param_index(pidlock_ops.params, "stale_ms")], 600) << "scaled by --time-scale";
	EXPECT_EQ(v[param_index(pidlock_ops.params, "retry_ms")], 1) << "never scaled to 0";
	EXPECT_EQ(lock_find("pidlock"), &pidlock_ops);
}

} // namespace
