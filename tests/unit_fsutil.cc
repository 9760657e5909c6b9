// unit_fsutil.cc - core/fsutil: rm_tree, empty_dir, slurp, find beside the binary.
#include <gtest/gtest.h>

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "testutil.h"

extern "C" {
#include "core/fsutil.h"
}

/* KEEP/f, and in the folder TREE (made already): a/b/f, g, and link -> KEEP */
static void fill_tree(const std::string &tree, const std::string &keep)
{
	ASSERT_EQ(mkdir(keep.c_str(), 0777), 0);
	put(keep + "/f", "kept");
	ASSERT_EQ(mkdir((tree + "/a").c_str(), 0777), 0);
	ASSERT_EQ(mkdir((tree + "/a/b").c_str(), 0777), 0);
	put(tree + "/a/b/f", "x");
	put(tree + "/g", "y");
	ASSERT_EQ(symlink(keep.c_str(), (tree + "/link").c_str()), 0);
}

TEST(UnitFsutil, RmTreeRemovesEverythingAndNoLinkTarget)
{
	ScratchDir d;
	std::string keep = d.sub("keep"), tree = d.sub("tree");
	ASSERT_EQ(mkdir(tree.c_str(), 0777), 0);
	fill_tree(tree, keep);
	EXPECT_EQ(fsutil_rm_tree(tree.c_str()), 0);
	EXPECT_FALSE(exists(tree));
	EXPECT_EQ(slurp(keep + "/f"), "kept") << "a symlink is removed, not followed";
	EXPECT_EQ(fsutil_rm_tree(tree.c_str()), 0) << "missing: nothing to do";
}

TEST(UnitFsutil, EmptyDirKeepsTheFolderAndNoLinkTarget)
{
	ScratchDir d;
	std::string keep = d.sub("keep"), store = d.sub("store");
	ASSERT_EQ(mkdir(store.c_str(), 0777), 0);
	struct stat before, after;
	ASSERT_EQ(stat(store.c_str(), &before), 0);
	fill_tree(store, keep);
	EXPECT_EQ(fsutil_empty_dir(store.c_str()), 0);
	ASSERT_EQ(stat(store.c_str(), &after), 0);
	EXPECT_EQ(after.st_ino, before.st_ino) << "the folder itself stays";
	EXPECT_FALSE(exists(store + "/a"));
	EXPECT_FALSE(exists(store + "/g"));
	EXPECT_FALSE(exists(store + "/link"));
	EXPECT_EQ(slurp(keep + "/f"), "kept") << "a symlink is removed, not followed";
	EXPECT_EQ(fsutil_empty_dir(store.c_str()), 0) << "empty: nothing to do";
	/* more names than one read of the folder holds, removed while it is read */
	for (int i = 0; i < 600; i++)
		put(store + "/a-long-name-for-a-file-" + std::to_string(i), "z");
	EXPECT_EQ(fsutil_empty_dir(store.c_str()), 0);
	EXPECT_EQ(rmdir(store.c_str()), 0) << "nothing left in it";

	ASSERT_EQ(symlink(keep.c_str(), d.sub("to-keep").c_str()), 0);
	EXPECT_EQ(fsutil_empty_dir(d.sub("to-keep").c_str()), -1) << "a symlink to a folder is not followed";
	EXPECT_EQ(slurp(keep + "/f"), "kept");
	errno = 0;
	EXPECT_EQ(fsutil_empty_dir(d.sub("missing").c_str()), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(fsutil_empty_dir((keep + "/f").c_str()), -1) << "a file is not a folder";
}

TEST(UnitFsutil, SlurpWholeFileNulTerminated)
{
	ScratchDir d;
	std::string big(200000, 'x');
	big[12345] = '\0';
	put(d.sub("big"), big);
	size_t len = 7;
	char *buf = fsutil_slurp(d.sub("big").c_str(), &len);
	ASSERT_NE(buf, nullptr);
	EXPECT_EQ(len, big.size());
	EXPECT_EQ(std::string(buf, len), big);
	EXPECT_EQ(buf[len], '\0');
	free(buf);

	put(d.sub("empty"), "");
	buf = fsutil_slurp(d.sub("empty").c_str(), &len);
	EXPECT_EQ(len, 0u);
	free(buf);

	/* a file whose size says 0 but that has more (/proc): read to its end */
	buf = fsutil_slurp("/proc/self/status", &len);
	ASSERT_NE(buf, nullptr);
	EXPECT_NE(strstr(buf, "VmRSS"), nullptr) << "the whole of it, past its first lines";
	free(buf);

	len = 7;
	EXPECT_EQ(fsutil_slurp(d.sub("missing").c_str(), &len), nullptr);
	EXPECT_EQ(len, 0u);
}

TEST(UnitFsutil, ExeDirIsTheTestBinarysFolder)
{
	char dir[PATH_MAX], self[PATH_MAX];
	ASSERT_EQ(fsutil_exe_dir(dir, sizeof dir), 0);
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ASSERT_GT(n, 0);
	self[n] = '\0';
	EXPECT_EQ(std::string(dir), std::string(self).substr(0, std::string(self).rfind('/')));
	char tiny[1];
	EXPECT_EQ(fsutil_exe_dir(tiny, sizeof tiny), -1);
}

TEST(UnitFsutil, FindBesideTheBinaryThenTheSourceTree)
{
	char dir[PATH_MAX], out[PATH_MAX];
	ASSERT_EQ(fsutil_exe_dir(dir, sizeof dir), 0);
	std::string name = "fsutil-probe-" + std::to_string(getpid());
	std::string beside = std::string(dir) + "/" + name;
	put(beside, "here");
	EXPECT_EQ(fsutil_find_beside(name.c_str(), "CMakeLists.txt", FSUTIL_FILE, out, sizeof out), 0);
	EXPECT_EQ(std::string(out), beside) << "beside the binary first";
	EXPECT_EQ(fsutil_find_beside(name.c_str(), NULL, FSUTIL_DIR, out, sizeof out), -1) << "a file is no dir";
	EXPECT_EQ(errno, ENOENT);
	unlink(beside.c_str());
	EXPECT_EQ(fsutil_find_beside(name.c_str(), "CMakeLists.txt", FSUTIL_FILE, out, sizeof out), 0);
	EXPECT_EQ(std::string(out), std::string(LS_TEST_SOURCE_DIR) + "/CMakeLists.txt") << "else the source tree";
	EXPECT_EQ(fsutil_find_beside(name.c_str(), "no-such-thing", FSUTIL_ANY, out, sizeof out), -1);
	EXPECT_EQ(fsutil_find_beside(name.c_str(), "core", FSUTIL_DIR, out, sizeof out), 0);
}
