/*
 * unit_fsx_vt.cc - explore's file time stamps kept for later on the real
 * file system (faults/fsx_vt.c): which go out when, and which may wait.
 * A stamp that goes out too late, or lands on another object, would show a
 * protocol a wrong age; one that goes out early only costs a call.
 */
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/sched.h"
#include "faults/fsx.h"
extern "C" {
#include "faults/fsx_seam.h" /* (the seam's own header: C only) */
}
#include "testutil.h"

namespace {

/* the virtual clock at 5 s: a stamp reads 2026-01-01T00:00:05Z */
const int64_t STAMP_S = SCHED_EPOCH_MS / 1000 + 5;

struct Clocked {
	ScratchDir dir;
	std::string s;

	Clocked() : s(dir.sub("store"))
	{
		static struct sched *sc = sched_create(2, 64); /* (kept: the seam points at it) */
		sched_attach(sc, 0);
		sc->now_ns = 5000000000LL;
		EXPECT_EQ(mkdir(s.c_str(), 0755), 0);
	}
	~Clocked() { fsx_vt_flush(); }
	std::string in(const char *name) const { return s + "/" + name; }
};

/* Does PATH carry the virtual stamp (not the real time it was made at)? */
bool stamped(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0 && st.st_mtim.tv_sec == STAMP_S;
}

} // namespace

TEST(FsxVt, AStampWaitsUntilAFlushAndLandsThen)
{
	Clocked c;
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("lock").c_str());
	fsx_vt_stamp_parent(c.in("lock").c_str());
	EXPECT_FALSE(stamped(c.in("lock")));
	fsx_vt_flush();
	EXPECT_TRUE(stamped(c.in("lock")));
	EXPECT_TRUE(stamped(c.s));
}

/* A descriptor's stamp is a file's and a path's a folder's: the close of a
 * stamped descriptor sends the descriptors' out and keeps the folders'. */
TEST(FsxVt, ACloseSendsTheDescriptorsStampsAndKeepsTheFolders)
{
	Clocked c;
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("lock").c_str());
	int fd = open(c.in("tmp").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_GE(fd, 0);
	fsx_vt_stamp_fd(fd);
	fsx_vt_stamp_parent(c.in("tmp").c_str());
	fsx_vt_flush_fd(fd);
	close(fd);
	EXPECT_TRUE(stamped(c.in("tmp")));
	EXPECT_FALSE(stamped(c.in("lock")));
	EXPECT_FALSE(stamped(c.s));
	fsx_vt_flush();
	EXPECT_TRUE(stamped(c.in("lock")));
	EXPECT_TRUE(stamped(c.s));
}

/* A rename, unlink or rmdir leaves the folders above its path and the
 * other entries of its folder where they are: their stamps may wait.  One
 * of the path itself, below it, by a name that differs only in case, or by
 * a path with `.` or `..` in it goes out first. */
TEST(FsxVt, ARenameKeepsOnlyWhatItCannotMove)
{
	Clocked c;
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	ASSERT_EQ(mkdir(c.in("lock/sub").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("lock").c_str());
	fsx_vt_stamp(c.s.c_str());
	fsx_vt_flush_touching(c.in("a.tmp").c_str(), c.in("state.json").c_str()); /* siblings, the folder above */
	EXPECT_FALSE(stamped(c.in("lock")));
	fsx_vt_flush_touching(c.in("LOCK").c_str(), nullptr); /* one entry, where case folds */
	EXPECT_TRUE(stamped(c.in("lock")));

	fsx_vt_stamp(c.in("lock/sub").c_str());
	fsx_vt_flush_touching(c.in("lock").c_str(), nullptr); /* moves what is below it */
	EXPECT_TRUE(stamped(c.in("lock/sub")));

	ASSERT_EQ(mkdir(c.in("b").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("b").c_str());
	fsx_vt_flush_touching((c.s + "/./other").c_str(), nullptr); /* not a plain path */
	EXPECT_TRUE(stamped(c.in("b")));

	ASSERT_EQ(mkdir(c.in("d").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("d").c_str());
	fsx_vt_flush_touching(c.in("d").c_str(), c.in("e").c_str()); /* itself */
	EXPECT_TRUE(stamped(c.in("d")));
}

/* An rmdir's own folder's stamp goes with it: the folder made again at that
 * path later is another object, and keeps its own (real) time. */
TEST(FsxVt, AnRmdirTakesItsFoldersStampWithIt)
{
	Clocked c;
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	ASSERT_EQ(mkdir(c.in("other").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("other").c_str());
	fsx_vt_stamp(c.in("lock").c_str());
	fsx_vt_flush_before_rmdir(c.in("lock").c_str());
	ASSERT_EQ(rmdir(c.in("lock").c_str()), 0);
	fsx_vt_rmdir_done(c.in("lock").c_str());
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	fsx_vt_flush();
	EXPECT_FALSE(stamped(c.in("lock")));
	EXPECT_TRUE(stamped(c.in("other"))); /* another folder's stays and lands */
	EXPECT_TRUE(stamped(c.s));           /* so does the one it was removed from */

	/* an rmdir that fails keeps the stamp: the folder is still there */
	ASSERT_EQ(mkdir(c.in("full").c_str(), 0755), 0);
	ASSERT_EQ(mkdir(c.in("full/x").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("full").c_str());
	fsx_vt_flush_before_rmdir(c.in("full").c_str());
	EXPECT_NE(rmdir(c.in("full").c_str()), 0);
	fsx_vt_flush();
	EXPECT_TRUE(stamped(c.in("full")));
}

/* The folders' stamps wait in the explorer's shared mapping, so they wait
 * across a hand-off: a worker about to wait sends only its descriptors'
 * (fsx_vt_flush_fds); the next step that could see a folder's, whoever's it
 * is, sends them, and so does the explorer before a sweep
 * (fsx_vt_flush_shared). */
TEST(FsxVt, AFoldersStampWaitsInTheMappingAcrossAHandOff)
{
	Clocked c;
	struct sched_vt *shared = sched_vt_shared();
	ASSERT_EQ(mkdir(c.in("lock").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("lock").c_str());
	int fd = open(c.in("tmp").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ASSERT_GE(fd, 0);
	fsx_vt_stamp_fd(fd);
	EXPECT_EQ(shared->n, 1u);
	EXPECT_EQ(std::string(shared->e[shared->order[0]].path), c.in("lock"));
	fsx_vt_flush_fds(); /* the hand-off */
	close(fd);
	EXPECT_TRUE(stamped(c.in("tmp")));
	EXPECT_FALSE(stamped(c.in("lock")));
	EXPECT_EQ(shared->n, 1u);
	struct sched *s = (struct sched *)((char *)shared - offsetof(struct sched, vt));
	fsx_vt_flush_shared(s); /* the explorer's sweep */
	EXPECT_TRUE(stamped(c.in("lock")));
	EXPECT_EQ(shared->n, 0u);
}

/* A path too long for the mapping is stamped at once, after the stamps
 * taken before it. */
TEST(FsxVt, APathTooLongForTheMappingIsStampedAtOnce)
{
	Clocked c;
	ASSERT_EQ(mkdir(c.in("first").c_str(), 0755), 0);
	fsx_vt_stamp(c.in("first").c_str());
	std::string deep = c.s;
	while (deep.size() < SCHED_VT_PATH) {
		deep += "/" + std::string(200, 'd');
		ASSERT_EQ(mkdir(deep.c_str(), 0755), 0);
	}
	fsx_vt_stamp(deep.c_str());
	EXPECT_TRUE(stamped(deep));
	EXPECT_TRUE(stamped(c.in("first")));
	EXPECT_EQ(sched_vt_shared()->n, 0u);
}

/* The explorer's stamp of the store at the start of an execution (the
 * clock's start) waits with the workers' and lands as theirs do: at a
 * flush, or replaced by a later stamp of the same folder. */
TEST(FsxVt, TheStoresStartStampWaitsWithTheWorkers)
{
	Clocked c;
	struct sched_vt *shared = sched_vt_shared();
	struct sched *s = (struct sched *)((char *)shared - offsetof(struct sched, vt));
	ASSERT_EQ(fsx_vt_stamp_shared(s, c.s.c_str()), 0);
	EXPECT_EQ(shared->n, 1u);
	fsx_vt_flush();
	struct stat st;
	ASSERT_EQ(lstat(c.s.c_str(), &st), 0);
	EXPECT_EQ(st.st_mtim.tv_sec, SCHED_EPOCH_MS / 1000);
	EXPECT_EQ(st.st_mtim.tv_nsec, 0);
	ASSERT_EQ(fsx_vt_stamp_shared(s, c.s.c_str()), 0);
	fsx_vt_stamp(c.s.c_str()); /* a worker's, later: the one that lands */
	EXPECT_EQ(shared->n, 1u);
	fsx_vt_flush();
	EXPECT_TRUE(stamped(c.s));
	EXPECT_EQ(fsx_vt_stamp_shared(s, (c.s + "/" + std::string(SCHED_VT_PATH, 'x')).c_str()), -1);
}
