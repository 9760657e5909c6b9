/*
 * unit_fsx_anchor.cc - the real file system with the calls below one folder
 * made relative to it (faults/fsx_anchor.c): every call lands where its
 * absolute path says, also after the folder was moved or made again.
 */
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "faults/fsx_backend.h"
#include "testutil.h"

namespace {

struct Anchored {
	ScratchDir dir;
	std::string store;
	uint32_t gen = 0;
	const struct fsx_backend *be;

	Anchored() : store(dir.sub("store"))
	{
		EXPECT_EQ(mkdir(store.c_str(), 0755), 0);
		be = fsx_anchor_backend(store.c_str(), &gen);
	}
	std::string in(const char *name) const { return store + "/" + name; }
};

int write_file(const struct fsx_backend *be, const std::string &path, const char *text)
{
	int fd = be->open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	ssize_t n = be->write(fd, text, strlen(text));
	be->close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

} // namespace

TEST(FsxAnchor, EveryCallLandsWhereItsAbsolutePathSays)
{
	Anchored a;
	ASSERT_NE(a.be, nullptr);
	EXPECT_EQ(a.be->mkdir(a.in("d.lock").c_str(), 0777), 0);
	EXPECT_TRUE(exists(a.in("d.lock")));
	EXPECT_EQ(a.be->mkdir(a.in("d.lock").c_str(), 0777), -1);
	EXPECT_EQ(errno, EEXIST);
	ASSERT_EQ(write_file(a.be, a.in("d.lock/owner"), "2000"), 0);
	EXPECT_EQ(a.be->link(a.in("d.lock/owner").c_str(), a.in("owner.link").c_str()), 0);
	EXPECT_EQ(a.be->rename(a.in("owner.link").c_str(), a.in("state.json").c_str()), 0);
	struct stat st, plain;
	ASSERT_EQ(a.be->lstat(a.in("state.json").c_str(), &st), 0);
	ASSERT_EQ(lstat(a.in("state.json").c_str(), &plain), 0);
	EXPECT_EQ(st.st_ino, plain.st_ino);
	EXPECT_EQ(st.st_size, 4);
	/* the folder itself, for a call that only looks: its own times */
	const struct timespec ts[2] = { { 1767225600, 0 }, { 1767225600, 5000 } };
	EXPECT_EQ(a.be->utimensat(AT_FDCWD, a.store.c_str(), ts, AT_SYMLINK_NOFOLLOW), 0);
	ASSERT_EQ(a.be->stat(a.store.c_str(), &st), 0);
	ASSERT_EQ(stat(a.store.c_str(), &plain), 0);
	EXPECT_EQ(st.st_ino, plain.st_ino);
	EXPECT_EQ(plain.st_mtim.tv_sec, 1767225600);
	EXPECT_EQ(plain.st_mtim.tv_nsec, 5000);
	EXPECT_EQ(a.be->access(a.in("state.json").c_str(), R_OK), 0);
	/* `..`, a sibling whose name starts as the folder's, a double slash */
	EXPECT_EQ(a.be->stat((a.store + "/d.lock/../state.json").c_str(), &st), 0);
	EXPECT_EQ(a.be->mkdir((a.store + "2").c_str(), 0777), 0);
	EXPECT_EQ(write_file(a.be, a.store + "2/x", "x"), 0);
	EXPECT_TRUE(exists(a.dir.sub("store2/x")));
	EXPECT_EQ(a.be->unlink((a.store + "//state.json").c_str()), 0);
	EXPECT_FALSE(exists(a.in("state.json")));
	EXPECT_EQ(a.be->unlink(a.in("d.lock/owner").c_str()), 0);
	EXPECT_EQ(a.be->rmdir(a.in("d.lock").c_str()), 0);
	EXPECT_FALSE(exists(a.in("d.lock")));
	EXPECT_EQ(a.gen, 0u); /* nothing above the folder moved */
	/* the folder itself is never removed through its own descriptor */
	EXPECT_EQ(a.be->rmdir(a.store.c_str()), 0);
	EXPECT_FALSE(exists(a.store));
	EXPECT_EQ(a.gen, 1u);
}

TEST(FsxAnchor, ItsDescriptorLeavesAProtocolsNumbersAsTheyWere)
{
	Anchored a;
	int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(probe, 0);
	close(probe);
	int fd = a.be->open(a.in("f").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	EXPECT_EQ(fd, probe); /* the anchor's own sits far above */
	a.be->close(fd);
}

TEST(FsxAnchor, AFolderMovedThroughItIsOpenedAgain)
{
	Anchored a;
	ASSERT_EQ(a.be->mkdir(a.in("a").c_str(), 0777), 0); /* the descriptor is open now */
	ASSERT_EQ(a.be->rename(a.store.c_str(), a.dir.sub("old").c_str()), 0);
	EXPECT_EQ(a.gen, 1u);
	ASSERT_EQ(mkdir(a.store.c_str(), 0755), 0);
	ASSERT_EQ(a.be->mkdir(a.in("b").c_str(), 0777), 0);
	EXPECT_TRUE(exists(a.in("b")));
	EXPECT_FALSE(exists(a.dir.sub("old/b")));
	/* so is one moved by a folder above it */
	ASSERT_EQ(a.be->rename(a.dir.path.c_str(), (a.dir.path + ".moved").c_str()), 0);
	EXPECT_EQ(a.gen, 2u);
	EXPECT_EQ(a.be->mkdir(a.in("c").c_str(), 0777), -1);
	EXPECT_EQ(errno, ENOENT); /* as its path says: there is nothing there */
	ASSERT_EQ(rename((a.dir.path + ".moved").c_str(), a.dir.path.c_str()), 0);
}

/* Made again behind the backend's back: only the generation tells, and
 * without it the calls would go to the removed folder (the reason for it). */
TEST(FsxAnchor, AFolderMadeAgainIsOpenedAgainWhenTheGenerationMoves)
{
	Anchored a;
	ASSERT_EQ(a.be->mkdir(a.in("a").c_str(), 0777), 0);
	ASSERT_EQ(rmdir(a.in("a").c_str()), 0);
	ASSERT_EQ(rmdir(a.store.c_str()), 0);
	ASSERT_EQ(mkdir(a.store.c_str(), 0755), 0);
	EXPECT_EQ(a.be->mkdir(a.in("b").c_str(), 0777), -1); /* the old folder, removed */
	EXPECT_EQ(errno, ENOENT);
	a.gen++;
	EXPECT_EQ(a.be->mkdir(a.in("b").c_str(), 0777), 0);
	EXPECT_TRUE(exists(a.in("b")));
}

TEST(FsxAnchor, ASymlinkedOrMissingFolderIsNotAnchored)
{
	Anchored a;
	ASSERT_EQ(mkdir(a.dir.sub("real").c_str(), 0755), 0);
	ASSERT_EQ(symlink(a.dir.sub("real").c_str(), a.dir.sub("link").c_str()), 0);
	uint32_t gen = 0;
	const struct fsx_backend *be = fsx_anchor_backend(a.dir.sub("link").c_str(), &gen);
	ASSERT_NE(be, nullptr);
	EXPECT_EQ(write_file(be, a.dir.sub("link/f"), "x"), 0);
	EXPECT_TRUE(exists(a.dir.sub("real/f")));
	ASSERT_EQ(unlink(a.dir.sub("link").c_str()), 0);
	ASSERT_EQ(mkdir(a.dir.sub("link").c_str(), 0755), 0);
	EXPECT_EQ(write_file(be, a.dir.sub("link/g"), "x"), 0); /* by path, as it says */
	EXPECT_TRUE(exists(a.dir.sub("link/g")));
	be = fsx_anchor_backend(a.dir.sub("nothing").c_str(), &gen);
	EXPECT_EQ(be->mkdir(a.dir.sub("nothing/x").c_str(), 0777), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(fsx_anchor_backend("relative/path", &gen), nullptr);
}

/* The explorer stamps only the store after a setup that changed nothing:
 * every call that may make or change something counts, no look does. */
TEST(FsxAnchor, ItCountsTheCallsThatMayChangeSomethingAndNoLook)
{
	Anchored a;
	unsigned long n = fsx_anchor_changes();
	struct stat st;
	EXPECT_EQ(a.be->stat(a.store.c_str(), &st), 0);
	EXPECT_EQ(a.be->lstat(a.in("none").c_str(), &st), -1);
	EXPECT_EQ(a.be->access(a.store.c_str(), F_OK), 0);
	EXPECT_EQ(fsx_anchor_changes(), n);
	ASSERT_EQ(write_file(a.be, a.in("f"), "x"), 0); /* an open and a write */
	EXPECT_EQ(fsx_anchor_changes(), n + 2);
	int fd = a.be->open(a.in("f").c_str(), O_RDWR | O_CLOEXEC, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(a.be->ftruncate(fd, 0), 0);
	EXPECT_EQ(a.be->pwrite(fd, "y", 1, 0), 1);
	const struct timespec ts[2] = { { 1, 0 }, { 1, 0 } };
	EXPECT_EQ(a.be->futimens(fd, ts), 0);
	a.be->close(fd);
	EXPECT_EQ(fsx_anchor_changes(), n + 6);
	EXPECT_EQ(a.be->utimensat(AT_FDCWD, a.in("f").c_str(), ts, 0), 0);
	EXPECT_EQ(a.be->mkdir(a.in("d").c_str(), 0777), 0);
	EXPECT_EQ(a.be->link(a.in("f").c_str(), a.in("g").c_str()), 0);
	EXPECT_EQ(a.be->rename(a.in("g").c_str(), a.in("h").c_str()), 0);
	EXPECT_EQ(a.be->unlink(a.in("h").c_str()), 0);
	EXPECT_EQ(a.be->rmdir(a.in("d").c_str()), 0);
	EXPECT_EQ(fsx_anchor_changes(), n + 12);
}

/* Removed (a sweep) and made again through it: the calls go relative to
 * the new folder again, not by path for good.  (A folder moved behind its
 * back tells the two apart: relative calls follow the descriptor.) */
TEST(FsxAnchor, AFolderRemovedAndMadeAgainThroughItIsAnchoredAgain)
{
	Anchored a;
	ASSERT_EQ(a.be->rmdir(a.store.c_str()), 0);
	EXPECT_EQ(a.be->mkdir(a.in("x").c_str(), 0777), -1); /* gone: by path, as it says */
	ASSERT_EQ(a.be->mkdir(a.store.c_str(), 0777), 0);
	ASSERT_EQ(a.be->mkdir(a.in("y").c_str(), 0777), 0); /* opened again here */
	ASSERT_EQ(rename(a.store.c_str(), a.dir.sub("aside").c_str()), 0);
	ASSERT_EQ(mkdir(a.store.c_str(), 0755), 0);
	ASSERT_EQ(a.be->mkdir(a.in("z").c_str(), 0777), 0);
	EXPECT_TRUE(exists(a.dir.sub("aside/z"))); /* relative to its descriptor */
	EXPECT_FALSE(exists(a.in("z")));
}

/* fsx_mkdir_p asks before it looks: the anchor is a folder there while its
 * descriptor is of the current generation (nothing through the seam moved
 * or removed it since); anything else, and the anchor once it moved, is
 * looked at (stat). */
TEST(FsxAnchor, ItKnowsItsFolderIsThereUntilTheGenerationMoves)
{
	Anchored a;
	ASSERT_NE(a.be->folder_known, nullptr);
	EXPECT_EQ(a.be->folder_known(a.store.c_str()), 1);
	EXPECT_EQ(a.be->folder_known(a.in("sub").c_str()), 0);     /* below it: ask */
	EXPECT_EQ(a.be->folder_known(a.dir.path.c_str()), 0);      /* above it: ask */
	EXPECT_EQ(a.be->folder_known((a.store + "/").c_str()), 0); /* not plainly its path */
	ASSERT_EQ(a.be->rmdir(a.store.c_str()), 0);                /* removed through it */
	EXPECT_EQ(a.be->folder_known(a.store.c_str()), 0);
	ASSERT_EQ(mkdir(a.store.c_str(), 0755), 0);         /* behind its back: */
	EXPECT_EQ(a.be->folder_known(a.store.c_str()), 0); /* not anchored, so ask */
	ASSERT_EQ(rmdir(a.store.c_str()), 0);
	ASSERT_EQ(a.be->mkdir(a.store.c_str(), 0777), 0); /* made again through it */
	EXPECT_EQ(a.be->folder_known(a.store.c_str()), 1); /* opened again */
	ASSERT_EQ(rename(a.store.c_str(), a.dir.sub("aside").c_str()), 0);
	a.gen++; /* (the explorer's reset, when it makes the store again) */
	EXPECT_EQ(a.be->folder_known(a.store.c_str()), 0);
}
