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
