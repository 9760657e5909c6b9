/*
 * unit_mfs_pers.cc - the modelled file system's personalities (inode reuse,
 * birth time, time granularity, case, Windows delete-pending, split
 * identity, a listing in steps), power loss (the control: an append without
 * fsync is lost, with fsync kept), and the --fs option's spelling.
 */
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/stat.h>

#include <string>

#include "explore/mfs.h"
#include "faults/fsx.h"
#include "faults/fsx_backend.h"

namespace {

const char *const MOUNT = "/lockstorm-mfs-pers/store";

struct Model {
	explicit Model(const char *spec)
	{
		struct mfs_pers p;
		char why[512];
		EXPECT_EQ(mfs_pers_parse(spec, &p, why, sizeof why), 0) << why;
		EXPECT_EQ(mfs_open(MOUNT, &p, nullptr), 0);
		mfs_attach(-1);
		fsx_backend = mfs_backend();
	}
	~Model()
	{
		fsx_backend = nullptr;
		mfs_close();
	}
};

std::string P(const char *rel) { return std::string(MOUNT) + "/" + rel; }

uint64_t ino_of(const char *rel)
{
	struct fsx_stat st;
	EXPECT_EQ(fsx_lstat(P(rel).c_str(), &st), 0) << rel << ": " << strerror(errno);
	return st.ino;
}

void make_file(const char *rel, const char *text = "")
{
	ASSERT_EQ(fsx_write_file(P(rel).c_str(), O_TRUNC, text, strlen(text)), 0) << rel << ": " << strerror(errno);
}

/* A lock file made, removed, made again: the same number (ext4) or a new one (tmpfs). */
uint64_t reused(const char *spec)
{
	Model m(spec);
	make_file("keep");
	make_file("lock");
	uint64_t first = ino_of("lock");
	EXPECT_EQ(fsx_unlink(P("lock").c_str()), 0);
	make_file("other");
	return ino_of("other") == first;
}

/* An append to a journal, acknowledged, then the power goes. */
std::string after_power_loss(bool sync_file, bool sync_dir)
{
	Model m("model");
	EXPECT_EQ(fsx_mkdir(P("store").c_str(), 0777), 0);
	mfs_settle(0); /* the folder is on disk, as setup's are */
	int fd = fsx_open(P("store/events.jsonl").c_str(), O_WRONLY | O_CREAT | O_APPEND, 0666);
	EXPECT_GE(fd, 0);
	const char line[] = "{\"seq\":1}\n";
	EXPECT_EQ(fsx_write_all(fd, line, sizeof line - 1), 0);
	if (sync_file) {
		EXPECT_EQ(fsx_fsync(fd), 0);
	}
	EXPECT_EQ(fsx_close(fd), 0);
	if (sync_dir) {
		int dfd = fsx_open(P("store").c_str(), O_RDONLY | O_DIRECTORY, 0);
		EXPECT_GE(dfd, 0);
		EXPECT_EQ(fsx_fsync(dfd), 0);
		EXPECT_EQ(fsx_close(dfd), 0);
	}
	/* acknowledged: readable before the loss */
	char *buf = nullptr;
	size_t len = 0;
	EXPECT_EQ(fsx_read_file(P("store/events.jsonl").c_str(), &buf, &len), 0);
	free(buf);
	mfs_power_loss();
	if (fsx_read_file(P("store/events.jsonl").c_str(), &buf, &len) != 0)
		return std::string("missing: ") + strerror(errno);
	std::string s(buf, len);
	free(buf);
	return s;
}

} // namespace

TEST(MfsPers, InodeReuse)
{
	EXPECT_TRUE(reused("model"));            /* ext4: the freed number at once */
	EXPECT_TRUE(reused("model:reuse=immediate"));
	EXPECT_FALSE(reused("model:tmpfs"));     /* tmpfs: never */
	EXPECT_FALSE(reused("model:reuse=never"));
}

TEST(MfsPers, AnOpenDescriptorKeepsARemovedFile)
{
	Model m("model");
	make_file("lock", "abc");
	int fd = fsx_open(P("lock").c_str(), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	uint64_t was = ino_of("lock");
	ASSERT_EQ(fsx_unlink(P("lock").c_str()), 0);
	make_file("other");
	EXPECT_NE(ino_of("other"), was); /* the number is still taken */
	struct fsx_stat st;
	ASSERT_EQ(fsx_fstat(fd, &st), 0);
	EXPECT_EQ(st.ino, was);
	EXPECT_EQ(st.size, 3);
	unsigned before = mfs_inodes_used();
	EXPECT_EQ(fsx_close(fd), 0);
	EXPECT_EQ(mfs_inodes_used(), before - 1);
	make_file("third");
	EXPECT_EQ(ino_of("third"), was); /* now it is free */
}

TEST(MfsPers, BirthTime)
{
	{
		Model m("model");
		make_file("f");
		struct fsx_stat st;
		ASSERT_EQ(fsx_stat(P("f").c_str(), &st), 0);
		EXPECT_NE(st.btime_ns, 0);
	}
	{
		Model m("model:btime=no");
		make_file("f");
		struct fsx_stat st;
		ASSERT_EQ(fsx_stat(P("f").c_str(), &st), 0);
		EXPECT_EQ(st.btime_ns, 0);
	}
}

TEST(MfsPers, TimeGranularity)
{
	for (const char *spec : { "model", "model:time=1s", "model:time=2s" }) {
		Model m(spec);
		mfs_set_clock(1767225601234567891LL);
		make_file("f");
		struct fsx_stat st;
		ASSERT_EQ(fsx_stat(P("f").c_str(), &st), 0);
		int64_t want = !strcmp(spec, "model") ? 1767225601234567891LL
			: !strcmp(spec, "model:time=1s") ? 1767225601000000000LL : 1767225600000000000LL;
		EXPECT_EQ(st.mtime_ns, want) << spec;
	}
}

TEST(MfsPers, CaseInsensitive)
{
	Model m("model:case=insensitive");
	make_file("State.json");
	EXPECT_EQ(ino_of("state.JSON"), ino_of("State.json"));
	EXPECT_EQ(fsx_open(P("STATE.json").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666), -1);
	EXPECT_EQ(errno, EEXIST);
	struct fsx_list l;
	ASSERT_EQ(fsx_list(MOUNT, &l), 0);
	ASSERT_EQ(l.n, 1u);
	EXPECT_STREQ(l.names[0], "State.json"); /* the name as made */
	fsx_list_free(&l);
}

TEST(MfsPers, WindowsDeletePending)
{
	Model m("model:windows");
	ASSERT_EQ(fsx_mkdir(P("lock").c_str(), 0777), 0);
	int fd = fsx_open(P("lock").c_str(), O_RDONLY, 0); /* a handle on it */
	ASSERT_GE(fd, 0);
	ASSERT_EQ(fsx_rmdir(P("lock").c_str()), 0);
	EXPECT_EQ(fsx_mkdir(P("lock").c_str(), 0777), -1);
	EXPECT_EQ(errno, EPERM);
	EXPECT_EQ(fsx_open(P("lock/x").c_str(), O_WRONLY | O_CREAT, 0666), -1);
	EXPECT_EQ(errno, EACCES);
	EXPECT_EQ(fsx_close(fd), 0); /* the last handle: the name goes */
	EXPECT_EQ(fsx_mkdir(P("lock").c_str(), 0777), 0);
	/* without the rule, the name goes at once */
	Model posix("model");
	ASSERT_EQ(fsx_mkdir(P("lock").c_str(), 0777), 0);
	fd = fsx_open(P("lock").c_str(), O_RDONLY, 0);
	ASSERT_EQ(fsx_rmdir(P("lock").c_str()), 0);
	EXPECT_EQ(fsx_mkdir(P("lock").c_str(), 0777), 0);
	fsx_close(fd);
}

TEST(MfsPers, SplitIdentity)
{
	Model m("model:tab");
	make_file("f");
	int fd = fsx_open(P("f").c_str(), O_RDONLY, 0);
	struct fsx_stat a, b;
	ASSERT_EQ(fsx_fstat(fd, &a), 0);
	ASSERT_EQ(fsx_lstat(P("f").c_str(), &b), 0);
	EXPECT_NE(a.ino, b.ino);
	EXPECT_EQ(a.btime_ns, 0);
	fsx_close(fd);
}

TEST(MfsPers, PowerLossControl)
{
	/* written and acknowledged, not fsync'd: lost (the name too: its folder was not fsync'd) */
	EXPECT_EQ(after_power_loss(false, false), "missing: No such file or directory");
	/* the data fsync'd, the folder not: the entry of a new file is lost */
	EXPECT_EQ(after_power_loss(true, false), "missing: No such file or directory");
	/* the folder fsync'd, the data not: an empty file (ext4 after a crash) */
	EXPECT_EQ(after_power_loss(false, true), "");
	/* both: kept */
	EXPECT_EQ(after_power_loss(true, true), "{\"seq\":1}\n");
}

TEST(MfsPers, PowerLossBringsBackARemovalNotSynced)
{
	Model m("model");
	make_file("lock", "{\"pid\":7}");
	mfs_settle(0);
	ASSERT_EQ(fsx_unlink(P("lock").c_str()), 0); /* released, the folder not fsync'd */
	EXPECT_FALSE(fsx_exists(P("lock").c_str()));
	mfs_power_loss();
	char *buf = nullptr;
	size_t len = 0;
	ASSERT_EQ(fsx_read_file(P("lock").c_str(), &buf, &len), 0); /* a lock carried over the reboot */
	EXPECT_EQ(std::string(buf, len), "{\"pid\":7}");
	free(buf);
}

/* A change the power loss takes back takes its times with it: the file is
 * as old as its last fsync'd state, not as its lost write (a lock judged by
 * its age after the reboot). */
TEST(MfsPers, PowerLossTakesBackTheTimesOfWhatItTakesBack)
{
	Model m("model");
	mfs_set_clock(1000000000LL);
	make_file("lock", "{\"pid\":7}");
	mfs_settle(1000000000LL);
	mfs_set_clock(90000000000LL);
	int fd = fsx_open(P("lock").c_str(), O_WRONLY | O_TRUNC, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(fsx_write_all(fd, "{\"pid\":8}", 9), 0);
	EXPECT_EQ(fsx_close(fd), 0);
	struct fsx_stat st;
	ASSERT_EQ(fsx_stat(P("lock").c_str(), &st), 0);
	EXPECT_EQ(st.mtime_ns, 90000000000LL);
	mfs_power_loss();
	ASSERT_EQ(fsx_stat(P("lock").c_str(), &st), 0);
	EXPECT_EQ(st.mtime_ns, 1000000000LL);
	EXPECT_EQ(st.size, 9u);
}

TEST(MfsPers, RenameOverIsAtomicAcrossPowerLoss)
{
	Model m("model");
	make_file("state.json", "old");
	mfs_settle(0);
	make_file("state.json.tmp", "new");
	int fd = fsx_open(P("state.json.tmp").c_str(), O_RDONLY, 0);
	ASSERT_EQ(fsx_fsync(fd), 0);
	fsx_close(fd);
	ASSERT_EQ(fsx_rename(P("state.json.tmp").c_str(), P("state.json").c_str()), 0);
	mfs_power_loss(); /* the folder was not fsync'd: the old state, whole */
	char *buf = nullptr;
	size_t len = 0;
	ASSERT_EQ(fsx_read_file(P("state.json").c_str(), &buf, &len), 0);
	EXPECT_EQ(std::string(buf, len), "old");
	free(buf);
}

TEST(MfsPers, Spelling)
{
	struct mfs_pers p;
	char why[512], buf[256];
	ASSERT_EQ(mfs_pers_parse("model", &p, why, sizeof why), 0);
	mfs_pers_format(&p, buf, sizeof buf);
	EXPECT_STREQ(buf, "model:reuse=immediate,btime=yes,readdir=steps,time=ns,case=sensitive,windows=no,split=no");
	struct mfs_pers q;
	ASSERT_EQ(mfs_pers_parse(buf, &q, why, sizeof why), 0) << why; /* the canonical spelling reads back */
	EXPECT_EQ(memcmp(&p, &q, sizeof p), 0);
	ASSERT_EQ(mfs_pers_parse("model:fat,btime=yes", &p, why, sizeof why), 0);
	EXPECT_EQ(p.time_ns, 2000000000LL);
	EXPECT_TRUE(p.btime && p.nocase);
	ASSERT_EQ(mfs_pers_parse("real", &p, why, sizeof why), 0);
	EXPECT_FALSE(p.model);
	EXPECT_NE(mfs_pers_parse("model:reuse=sometimes", &p, why, sizeof why), 0);
	EXPECT_NE(mfs_pers_parse("ext4", &p, why, sizeof why), 0);
	EXPECT_NE(mfs_pers_parse("model:btime", &p, why, sizeof why), 0);
}
