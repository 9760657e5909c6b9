/*
 * unit_fsx.cc - the seam bound to a worker: fault decisions at calls, the
 * process-level kinds (skew, coarse-mtime, split-identity, other-host), the
 * ownership table and the journal records it writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "faults/fault.h"
#include "faults/fsx.h"
#include "core/arena.h"
#include "core/journal.h"
#include "testutil.h"

struct Bound {
	ScratchDir dir;
	struct arena *arena = nullptr;
	struct journal j;
	struct fault_plan plan;
	struct fault_state fstates[4];
	struct prng rng;
	uint32_t op = 0;
	std::string lock;

	explicit Bound(std::initializer_list<const char *> specs, unsigned worker = 0)
	{
		memset(&plan, 0, sizeof plan);
		memset(fstates, 0, sizeof fstates);
		char why[512];
		for (const char *s : specs)
			EXPECT_EQ(fault_parse(&plan, s, why, sizeof why), 0) << why;
		arena = arena_create(4);
		EXPECT_NE(arena, nullptr);
		EXPECT_EQ(journal_open(&j, dir.sub("w.bin").c_str(), worker), 0);
		prng_seed(&rng, 1, worker, 0);
		lock = dir.sub("state.json.lock");
		struct fsx_binding b;
		memset(&b, 0, sizeof b);
		b.worker = worker;
		b.journal = &j;
		b.arena = arena;
		b.faults = &plan;
		b.fstate = &fstates[worker];
		b.rng = &rng;
		b.lock_path = lock.c_str();
		b.stale_ms = 100;
		b.op = &op;
		fsx_bind(&b);
	}
	~Bound()
	{
		fsx_unbind();
		journal_close(&j);
		arena_destroy(arena);
	}
	size_t records(int type)
	{
		struct jrec *r;
		size_t n, torn, k = 0;
		EXPECT_EQ(journal_read_file(dir.sub("w.bin").c_str(), &r, &n, &torn), 0);
		for (size_t i = 0; i < n; i++)
			k += r[i].type == type;
		free(r);
		return k;
	}
};

TEST(FsxBound, ErrnoOnMatchingPathsOnlyAndJournalled)
{
	Bound b({ "errno@fs/mkdir:err=EACCES,path=*/x*" });
	EXPECT_EQ(fsx_mkdir(b.dir.sub("x1").c_str(), 0777), -1);
	EXPECT_EQ(errno, EACCES);
	struct stat st;
	EXPECT_NE(stat(b.dir.sub("x1").c_str(), &st), 0) << "the call must not act";
	EXPECT_EQ(fsx_mkdir(b.dir.sub("y1").c_str(), 0777), 0);
	EXPECT_EQ(b.records(EV_FAULT), 1u);
}

/* Which call failed: a stat of a descriptor is told apart from a stat of a
 * path, injected or not (a protocol's claim about its lstat is not one about
 * its fstat: lockfile-legacy's VL13 and VL15). */
TEST(FsxBound, AFailedFstatIsNotAFailedStatOfAPath)
{
	Bound b({ "errno@fs/stat:nth=1,err=EIO" });
	struct fsx_stat st;
	int fd = open(b.dir.sub("f").c_str(), O_CREAT | O_WRONLY, 0644);
	ASSERT_GE(fd, 0);
	fsx_failure_clear();
	EXPECT_EQ(fsx_fstat(fd, &st), -1); /* the injected EIO */
	EXPECT_EQ(fsx_failed_call(EIO), FSX_CALL_FSTAT);
	fsx_failure_clear();
	EXPECT_EQ(fsx_lstat(b.dir.sub("missing").c_str(), &st), -1);
	EXPECT_EQ(fsx_failed_call(ENOENT), (int)FSX_STAT);
	fsx_failure_clear();
	EXPECT_EQ(fsx_fstat(-1, &st), -1); /* the kernel's EBADF */
	EXPECT_EQ(fsx_failed_call(EBADF), FSX_CALL_FSTAT);
	close(fd);
}

/* And which path it named, seen from the lock: mkdir(L) and mkdir(L/entry)
 * are one op but two steps of mkdir-owner (AT2, AT3), with different claims;
 * injected or the kernel's own error alike. */
TEST(FsxBound, AFailedCallNamesItsPathSeenFromTheLock)
{
	Bound b({ "errno@fs/mkdir:nth=2,err=EACCES" });
	EXPECT_EQ(fsx_mkdir(b.lock.c_str(), 0777), 0);
	fsx_failure_clear();
	std::string entry = b.lock + "/owner-1-abc";
	EXPECT_EQ(fsx_mkdir(entry.c_str(), 0777), -1); /* the injected EACCES */
	EXPECT_EQ(fsx_failed_call(EACCES), (int)FSX_MKDIR);
	EXPECT_EQ(fsx_failed_path(EACCES), FSX_PATH_ENTRY);
	EXPECT_EQ(fsx_failed_path(EPERM), FSX_PATH_UNKNOWN) << "another errno: not this call";
	fsx_failure_clear();
	EXPECT_EQ(fsx_mkdir(b.lock.c_str(), 0777), -1); /* the kernel's EEXIST */
	EXPECT_EQ(fsx_failed_path(EEXIST), FSX_PATH_LOCK);
	fsx_failure_clear();
	EXPECT_EQ(fsx_mkdir((b.lock + "/a/b").c_str(), 0777), -1); /* ENOENT, two levels down */
	EXPECT_EQ(fsx_failed_path(ENOENT), FSX_PATH_OTHER);
	fsx_failure_clear();
	EXPECT_EQ(fsx_rmdir((b.lock + ".recovery").c_str()), -1); /* a sibling: not the lock */
	EXPECT_EQ(fsx_failed_path(ENOENT), FSX_PATH_OTHER);
	fsx_failure_clear();
	struct fsx_stat st;
	EXPECT_EQ(fsx_fstat(-1, &st), -1); /* a descriptor names no path */
	EXPECT_EQ(fsx_failed_path(EBADF), FSX_PATH_UNKNOWN);
	fsx_failure_clear();
	EXPECT_EQ(fsx_failed_path(EBADF), FSX_PATH_UNKNOWN);
}

TEST(FsxBound, ErrnoOnWriteWritesNothingAndShortWriteWritesK)
{
	Bound b({ "errno@fs/write:nth=1,err=ENOSPC,path=*/f", "short-write@fs/write:nth=2,bytes=3" });
	int fd = fsx_open(b.dir.sub("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(fsx_write_all(fd, "hello", 5), -1);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_EQ(fsx_write_all(fd, "hello", 5), -1);
	EXPECT_EQ(errno, ENOSPC);
	EXPECT_EQ(fsx_write_all(fd, "!", 1), 0);
	fsx_close(fd);
	EXPECT_EQ(slurp(b.dir.sub("f")), "hel!");
}

/* short-write with for=: the write loop's second write(2) comes late; the
 * call succeeds with every byte, and the fault is journalled (err 0). */
TEST(FsxBound, SplitShortWriteLandsEveryByteAfterThePause)
{
	Bound b({ "short-write@fs/write:nth=1,bytes=2,for=1ms" });
	int fd = fsx_open(b.dir.sub("f").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(fsx_write_all(fd, "hello", 5), 0);
	EXPECT_EQ(fsx_write_all(fd, "!", 1), 0);
	fsx_close(fd);
	EXPECT_EQ(slurp(b.dir.sub("f")), "hello!");
	EXPECT_EQ(b.records(EV_FAULT), 1u);
}

TEST(FsxBound, SkewMovesTheClockCoarseMtimeRoundsFileTimes)
{
	int64_t before = fsx_now_ms();
	Bound b({ "skew:by=+5s", "coarse-mtime:res=2s" });
	int64_t skewed = fsx_now_ms();
	EXPECT_GE(skewed - before, 5000);
	EXPECT_LT(skewed - before, 60000);
	ASSERT_EQ(fsx_mkdir(b.dir.sub("d").c_str(), 0777), 0);
	struct fsx_stat st;
	ASSERT_EQ(fsx_stat(b.dir.sub("d").c_str(), &st), 0);
	EXPECT_EQ(st.mtime_ns % 2000000000LL, 0);
}

TEST(FsxBound, SplitIdentityAndOtherHost)
{
	Bound b({ "split-identity", "other-host" });
	int fd = fsx_open(b.dir.sub("f").c_str(), O_WRONLY | O_CREAT, 0644);
	ASSERT_GE(fd, 0);
	struct fsx_stat viafd, viapath;
	ASSERT_EQ(fsx_fstat(fd, &viafd), 0);
	ASSERT_EQ(fsx_lstat(b.dir.sub("f").c_str(), &viapath), 0);
	EXPECT_NE(viafd.ino, viapath.ino);
	fsx_close(fd);
	char real[256] = "", seen[256] = "";
	gethostname(real, sizeof real);
	ASSERT_EQ(fsx_hostname(seen, sizeof seen), 0);
	EXPECT_EQ(std::string(seen), std::string(real) + "-other");
}

TEST(FsxBound, OwnershipOfLockObjects)
{
	Bound b({});
	ASSERT_EQ(fsx_mkdir(b.lock.c_str(), 0777), 0);
	ASSERT_EQ(fsx_mkdir((b.lock + "/owner-1").c_str(), 0777), 0);
	ASSERT_EQ(fsx_mkdir(b.dir.sub("other").c_str(), 0777), 0); /* not a lock object */
	EXPECT_EQ(b.records(EV_OBJ_CREATE), 2u);
	EXPECT_GT(fsx_last_create_ns(), 0);
	ASSERT_EQ(fsx_rmdir((b.lock + "/owner-1").c_str()), 0);
	ASSERT_EQ(fsx_rmdir(b.lock.c_str()), 0);
	EXPECT_EQ(b.records(EV_OBJ_REMOVE), 2u);
	/* the table is empty again: nothing left to attribute */
	for (unsigned i = 0; i < ARENA_OBJ_SLOTS; i++)
		ASSERT_TRUE(b.arena->obj[i].dev == 0 && b.arena->obj[i].ino == 0);
}

/* A reset clears what the table holds, the slots it wrote one by one (a
 * few an execution), and the whole table when it wrote too many to list. */
static bool obj_table_empty(const struct arena *a)
{
	for (unsigned i = 0; i < ARENA_OBJ_SLOTS; i++)
		if (a->obj[i].dev || a->obj[i].ino)
			return false;
	return true;
}

TEST(ArenaObj, AResetLeavesTheTableEmptyFewOrManyWritten)
{
	struct arena *a = arena_create(2);
	ASSERT_NE(a, nullptr);
	for (unsigned many : { 3u, ARENA_OBJ_DIRTY - 1u, (unsigned)ARENA_OBJ_DIRTY, ARENA_OBJ_DIRTY + 1u, 3000u }) {
		for (uint64_t ino = 1; ino <= many; ino++)
			arena_obj_add(a, 7, ino * 11, 1, ino);
		uint64_t seq = 0;
		EXPECT_EQ(arena_obj_take(a, 7, 11, &seq), 1); /* a take moves entries back */
		EXPECT_EQ(seq, 1u);
		EXPECT_FALSE(obj_table_empty(a)) << many;
		arena_reset(a);
		EXPECT_TRUE(obj_table_empty(a)) << many;
		EXPECT_EQ(arena_obj_take(a, 7, 22, &seq), -1) << many;
	}
	arena_destroy(a);
}

/* The fast path of an armed plan: rules aimed at other workers are left out
 * of this worker's masks at bind.  The decisions must be the ones the slow
 * walk made: what fires, what the PRNG draws, what each rule counted. */
static std::vector<int> mkdir_outcomes(std::initializer_list<const char *> specs, int calls,
				       uint64_t rng_after[4], uint64_t matches[2])
{
	Bound b(specs);
	std::vector<int> out;
	for (int i = 0; i < calls; i++) {
		fsx_point("fsxtest/op/after-step"); /* a protocol step between the calls */
		int r = fsx_mkdir(b.dir.sub("d" + std::to_string(i)).c_str(), 0777);
		out.push_back(r == 0 ? 0 : errno);
	}
	memcpy(rng_after, b.rng.s, 4 * sizeof(uint64_t));
	matches[0] = b.fstates[0].matches[0];
	matches[1] = b.fstates[0].matches[1];
	return out;
}

TEST(FsxBound, RulesForOtherWorkersChangeNoDecisionOfThisOne)
{
	uint64_t rng_a[4], rng_b[4], rng_c[4], m_a[2], m_b[2], m_c[2];
	/* rule 0 applies to worker 0; rule 1 (and a step rule) to others only */
	std::vector<int> a = mkdir_outcomes({ "errno@fs/mkdir:p=0.5,err=EIO,workers=0",
					      "errno@fs/mkdir:p=0.5,err=EPERM,workers=1-3",
					      "crash@*:p=0.5,workers=2" }, 200, rng_a, m_a);
	std::vector<int> b = mkdir_outcomes({ "errno@fs/mkdir:p=0.5,err=EIO,workers=0" }, 200, rng_b, m_b);
	EXPECT_EQ(a, b);
	EXPECT_EQ(memcmp(rng_a, rng_b, sizeof rng_a), 0) << "the same draws";
	EXPECT_EQ(m_a[0], 200u);
	EXPECT_EQ(m_a[0], m_b[0]);
	EXPECT_EQ(m_a[1], 0u) << "a rule of other workers counts nothing here";
	int eio = 0;
	for (int e : a) {
		EXPECT_TRUE(e == 0 || e == EIO) << e;
		eio += e == EIO;
	}
	EXPECT_GT(eio, 0);
	EXPECT_LT(eio, 200);
	/* a plan only for other workers: nothing fires, nothing is drawn */
	std::vector<int> c = mkdir_outcomes({ "errno@fs/mkdir:p=0.5,err=EPERM,workers=1-3",
					      "stall@*:p=0.5,for=1ms,workers=2" }, 50, rng_c, m_c);
	EXPECT_EQ(c, std::vector<int>(50, 0));
	struct prng fresh;
	prng_seed(&fresh, 1, 0, 0);
	EXPECT_EQ(memcmp(rng_c, fresh.s, sizeof rng_c), 0) << "no draw from the worker's stream";
	EXPECT_EQ(m_c[0] + m_c[1], 0u);
}

TEST(FaultCheck, WorkerMaskIsTheRulesThatApply)
{
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[256];
	for (const char *s : { "stall@*:p=0", "stall@fs/mkdir:workers=1", "crash@x/y/*:workers=0,2" })
		ASSERT_EQ(fault_parse(&plan, s, why, sizeof why), 0) << why;
	EXPECT_EQ(fault_worker_mask(&plan, 0), 0x5u);
	EXPECT_EQ(fault_worker_mask(&plan, 1), 0x3u);
	EXPECT_EQ(fault_worker_mask(&plan, 2), 0x5u);
	EXPECT_EQ(fault_worker_mask(&plan, 3), 0x1u);
	EXPECT_EQ(fault_plan_steps_mask(&plan, 0x2u), 0) << "an fs/ rule is no step rule";
	EXPECT_EQ(fault_plan_steps_mask(&plan, 0x4u), 1);
	EXPECT_EQ(fault_plan_steps(&plan), 1);
}
