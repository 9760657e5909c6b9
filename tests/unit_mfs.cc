/*
 * unit_mfs.cc - the modelled file system (explore/mfs_core.c) against the kernel:
 * seeded random sequences of seam calls run on the model and on a real
 * directory (tmpfs /dev/shm, ext4 or whatever /tmp is) must give the same
 * results and errnos, and after every call the same tree (names, types,
 * sizes, contents, which names and descriptors are one file).  A
 * deliberately wrong rule is caught.  Then the personalities (inode reuse,
 * birth time, time granularity, case, Windows delete-pending, split
 * identity), power loss, and the personality option.
 */
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include "core/fsutil.h"
#include "core/prng.h"
#include "explore/mfs.h"
#include "faults/fsx.h"
#include "faults/fsx_backend.h"
#include "testutil.h"

namespace {

/* A scratch directory under BASE, removed with what is in it. */
struct Scratch {
	std::string path;
	explicit Scratch(const char *base)
	{
		std::string t = std::string(base) + "/lockstorm-mfs-XXXXXX";
		std::vector<char> b(t.begin(), t.end());
		b.push_back('\0');
		EXPECT_NE(mkdtemp(b.data()), nullptr);
		path = b.data();
	}
	~Scratch()
	{
		std::string rm = "rm -rf '" + path + "'";
		EXPECT_EQ(system(rm.c_str()), 0);
	}
};

const char *const MOUNT = "/lockstorm-mfs-test/store";

struct Model {
	explicit Model(const char *spec = "model")
	{
		struct mfs_pers p;
		char why[512];
		EXPECT_EQ(mfs_pers_parse(spec, &p, why, sizeof why), 0) << why;
		EXPECT_EQ(mfs_open(MOUNT, &p, nullptr), 0);
		mfs_attach(-1);
	}
	~Model()
	{
		fsx_backend = nullptr;
		mfs_close();
	}
	void on() { fsx_backend = mfs_backend(); }
	void off() { fsx_backend = nullptr; }
};


/* The universe of names a sequence plays with. */
const char *const paths[] = { "a", "b", "c", "d", "d/a", "d/b", "e", "e/a", "d/e", "d/e/a" };
const unsigned NPATHS = sizeof paths / sizeof paths[0];
const char *const dirs[] = { "", "d", "e", "d/e" };

struct Side {
	std::string base;
	bool model;
	std::vector<int> fds; /* -1: closed */
};

struct Outcome {
	long r;
	int err;
	std::string data; /* a read's bytes, a listing's names */
	bool operator==(const Outcome &o) const { return r == o.r && err == o.err && data == o.data; }
};

std::string show(const Outcome &o)
{
	return "r=" + std::to_string(o.r) + " errno=" + (o.err ? strerror(o.err) : "0") + " data=[" + o.data + "]";
}

/* One call, drawn by the caller, on one side. */
struct Call {
	int kind, a, b, flags;
	std::string text;
};

enum { C_MKDIR, C_RMDIR, C_OPEN, C_CLOSE, C_LINK, C_UNLINK, C_RENAME, C_WRITE, C_PWRITE, C_TRUNC, C_FSYNC,
       C_READ, C_LIST, C_EXISTS, C_FLOCK, C_N };

const int open_flags[] = { O_WRONLY | O_CREAT | O_EXCL, O_RDONLY, O_RDWR, O_RDWR | O_CREAT, O_WRONLY | O_CREAT | O_TRUNC,
			   O_WRONLY | O_CREAT | O_APPEND, O_RDONLY | O_DIRECTORY, O_WRONLY };

Outcome run(Side &s, const Call &c)
{
	std::string pa = s.base + "/" + paths[c.a % NPATHS], pb = s.base + "/" + paths[c.b % NPATHS];
	Outcome o = { 0, 0, "" };
	auto fd = [&](int i) { return s.fds.empty() ? -1 : s.fds[(unsigned)i % s.fds.size()]; };
	long r = 0;
	errno = 0;
	switch (c.kind) {
	case C_MKDIR: r = fsx_mkdir(pa.c_str(), 0777); break;
	case C_RMDIR: r = fsx_rmdir(pa.c_str()); break;
	case C_OPEN:
		r = fsx_open(pa.c_str(), open_flags[c.flags % 8], 0666);
		if (r >= 0) {
			s.fds.push_back((int)r);
			r = 0; /* descriptor numbers differ: compare that it opened */
		}
		break;
	case C_CLOSE: {
		if (s.fds.empty())
			return o;
		unsigned i = (unsigned)c.a % s.fds.size();
		r = fsx_close(s.fds[i]);
		s.fds.erase(s.fds.begin() + i);
		break;
	}
	case C_LINK: r = fsx_link(pa.c_str(), pb.c_str()); break;
	case C_UNLINK: r = fsx_unlink(pa.c_str()); break;
	case C_RENAME: r = fsx_rename(pa.c_str(), pb.c_str()); break;
	case C_WRITE: {
		if (fd(c.a) < 0)
			return o;
		r = fsx_write_all(fd(c.a), c.text.data(), c.text.size());
		break;
	}
	case C_PWRITE:
		if (fd(c.a) < 0)
			return o;
		r = fsx_pwrite(fd(c.a), c.text.data(), c.text.size(), c.flags % 7);
		break;
	case C_TRUNC:
		if (fd(c.a) < 0)
			return o;
		r = fsx_ftruncate(fd(c.a), c.flags % 5);
		break;
	case C_FSYNC:
		if (fd(c.a) < 0)
			return o;
		r = fsx_fsync(fd(c.a));
		break;
	case C_READ: {
		char *buf = nullptr;
		size_t len = 0;
		r = fsx_read_file(pa.c_str(), &buf, &len);
		if (r == 0)
			o.data.assign(buf, len);
		free(buf);
		break;
	}
	case C_LIST: {
		std::string d = s.base + (dirs[c.a % 4][0] ? std::string("/") + dirs[c.a % 4] : "");
		struct fsx_list l;
		r = fsx_list(d.c_str(), &l);
		for (size_t i = 0; r == 0 && i < l.n; i++)
			o.data += std::string(l.names[i]) + " ";
		fsx_list_free(&l);
		break;
	}
	case C_EXISTS: r = fsx_exists(pa.c_str()); break;
	case C_FLOCK:
		if (fd(c.a) < 0)
			return o;
		r = fsx_flock(fd(c.a), (c.flags % 3 == 0 ? LOCK_SH : c.flags % 3 == 1 ? LOCK_EX : LOCK_UN) | LOCK_NB);
		break;
	}
	o.r = r;
	o.err = r < 0 ? errno : 0;
	return o;
}

/* The whole tree as both sides must agree on it: per name its type, size
 * and contents; which names and descriptors are one file. */
std::string tree(Side &s)
{
	std::string out;
	std::vector<uint64_t> ids;
	for (unsigned i = 0; i < NPATHS; i++) {
		std::string p = s.base + "/" + paths[i];
		struct fsx_stat st;
		if (fsx_lstat(p.c_str(), &st) != 0) {
			out += std::string(paths[i]) + ":" + strerror(errno) + " ";
			ids.push_back(0);
			continue;
		}
		ids.push_back(st.ino);
		if (S_ISDIR(st.mode)) {
			out += std::string(paths[i]) + ":dir ";
			continue;
		}
		char *buf = nullptr;
		size_t len = 0;
		std::string body = "?";
		if (fsx_read_file(p.c_str(), &buf, &len) == 0)
			body.assign(buf, len);
		free(buf);
		out += std::string(paths[i]) + ":" + std::to_string(st.size) + "'" + body + "' ";
	}
	for (int fd : s.fds) {
		struct fsx_stat st;
		if (fsx_fstat(fd, &st) != 0) {
			out += std::string("fd:") + strerror(errno) + " ";
			ids.push_back(0);
			continue;
		}
		ids.push_back(st.ino);
		/* a directory's size is the file system's own business */
		out += "fd:" + (S_ISDIR(st.mode) ? std::string("dir") : std::to_string(st.size)) + " ";
	}
	/* identity as a partition: i ~ j when both exist and are one file */
	for (size_t i = 0; i < ids.size(); i++)
		for (size_t j = i + 1; j < ids.size(); j++)
			if (ids[i] && ids[i] == ids[j])
				out += std::to_string(i) + "=" + std::to_string(j) + " ";
	return out;
}

Call draw(struct prng *rng)
{
	Call c;
	c.kind = (int)prng_below(rng, C_N);
	c.a = (int)prng_below(rng, 64);
	c.b = (int)prng_below(rng, 64);
	c.flags = (int)prng_below(rng, 64);
	static const char *const texts[] = { "x", "hello", "{\"pid\":1}\n", "", "0123456789" };
	c.text = texts[prng_below(rng, 5)];
	return c;
}

/* SEQS sequences of LEN calls on the model and under REAL_BASE: the number
 * of the first sequence that differs (-1 none), and how, in *why. */
int differ(const char *real_base, const char *spec, int seqs, int len, std::string *why)
{
	Model m(spec);
	for (int q = 0; q < seqs; q++) {
		struct prng rng;
		prng_seed(&rng, 0x6d6673, (uint64_t)q, 0);
		m.on();
		mfs_reset();
		m.off();
		std::string real = std::string(real_base) + "/s";
		Side sm = { MOUNT, true, {} }, sr = { real, false, {} };
		EXPECT_EQ(mkdir(real.c_str(), 0777), 0);
		int bad = 0;
		for (int k = 0; k < len && !bad; k++) {
			Call c = draw(&rng);
			m.on();
			Outcome om = run(sm, c);
			std::string tm = tree(sm);
			m.off();
			Outcome orl = run(sr, c);
			std::string tr = tree(sr);
			if (!(om == orl) || tm != tr) {
				*why = "sequence " + std::to_string(q) + " call " + std::to_string(k) + " (kind " +
				       std::to_string(c.kind) + " " + paths[c.a % NPATHS] + " " + paths[c.b % NPATHS] +
				       " flags " + std::to_string(c.flags) + "): model " + show(om) + " tree " + tm +
				       "; real " + show(orl) + " tree " + tr;
				bad = 1;
			}
		}
		for (int fd : sr.fds)
			close(fd);
		m.on();
		mfs_proc_gone(-1);
		m.off();
		EXPECT_EQ(fsutil_rm_tree(real.c_str()), 0);
		if (bad)
			return q;
	}
	return -1;
}

} // namespace

TEST(Mfs, SameAsTmpfs)
{
	if (access("/dev/shm", W_OK) != 0)
		GTEST_SKIP() << "no /dev/shm";
	Scratch d("/dev/shm");
	std::string why;
	EXPECT_EQ(differ(d.path.c_str(), "model:tmpfs", 1000, 30, &why), -1) << why;
}

TEST(Mfs, SameAsTmp)
{
	Scratch d("/tmp");
	std::string why;
	EXPECT_EQ(differ(d.path.c_str(), "model", 1000, 30, &why), -1) << why;
}

TEST(Mfs, AWrongRuleIsCaught)
{
	Scratch d("/tmp");
	std::string why;
	mfs_wrong_rule = 1; /* rename over an existing name fails EEXIST */
	int q = differ(d.path.c_str(), "model", 200, 40, &why);
	mfs_wrong_rule = 0;
	EXPECT_GE(q, 0) << "200 sequences never renamed over a name?";
	EXPECT_NE(why.find("File exists"), std::string::npos) << why;
}
