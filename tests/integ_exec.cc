/*
 * integ_exec.cc - `lockstorm exec` and the preload shim end to end.
 *
 * The C probe (preload_probe.c) makes one libc call per argument group and
 * prints "<call> ok" or "<call> <ERRNO>", so each test states exactly which
 * call the shim failed and which it let through.  Nothing here sleeps or
 * asserts on timing: stalls and stops are checked in the inject log.
 */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string PROBE = PRELOAD_PROBE_BIN;

static std::string q(const std::string &s)
{
	std::string o = "'";
	for (char c : s)
		o += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return o + "'";
}

static CmdResult lsexec(const std::string &args)
{
	return run_cmd(BIN + " exec " + args);
}

static void touch(const std::string &p)
{
	FILE *f = fopen(p.c_str(), "w");
	ASSERT_TRUE(f) << p;
	fclose(f);
}

static long file_size(const std::string &p)
{
	struct stat st;
	return stat(p.c_str(), &st) == 0 ? (long)st.st_size : -1;
}

static int count_lines(const std::string &s)
{
	int n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

/* The inject log without its "pid N " prefixes (pids differ between runs). */
static std::string without_pids(const std::string &log)
{
	std::string out;
	size_t pos = 0;
	while (pos < log.size()) {
		size_t nl = log.find('\n', pos);
		std::string line = log.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
		pos = nl == std::string::npos ? log.size() : nl + 1;
		if (line.compare(0, 4, "pid ") == 0) {
			size_t sp = line.find(' ', 4);
			line = sp == std::string::npos ? line : line.substr(sp + 1);
		}
		out += line + "\n";
	}
	return out;
}

/* ---- errno at each call, limited to a path glob ---- */

struct OpCase {
	const char *call;   /* probe call */
	const char *point;  /* fs/<point> */
	/* set-up in the scratch dir, then the probe arguments for an x* path and another path */
	std::vector<const char *> files, dirs;
	std::vector<const char *> xargs, yargs;
	const char *x_untouched; /* a path whose state proves the failed call did not act ("" = none) */
	bool x_exists;           /* ... and whether it must exist afterwards */
};

static const OpCase op_cases[] = {
	{ "mkdir", "mkdir", {}, {}, { "xm" }, { "ym" }, "xm", false },
	{ "mkdirat", "mkdir", {}, {}, { "xm" }, { "ym" }, "xm", false },
	{ "rmdir", "rmdir", {}, { "xd", "yd" }, { "xd" }, { "yd" }, "xd", true },
	{ "unlinkat-dir", "rmdir", {}, { "xd", "yd" }, { "xd" }, { "yd" }, "xd", true },
	{ "link", "link", { "src" }, {}, { "src", "xl" }, { "src", "yl" }, "xl", false },
	{ "linkat", "link", { "src" }, {}, { "src", "xl" }, { "src", "yl" }, "xl", false },
	{ "symlink", "link", { "src" }, {}, { "src", "xl" }, { "src", "yl" }, "xl", false },
	{ "unlink", "unlink", { "xu", "yu" }, {}, { "xu" }, { "yu" }, "xu", true },
	{ "unlinkat", "unlink", { "xu", "yu" }, {}, { "xu" }, { "yu" }, "xu", true },
	{ "rename", "rename", { "xa", "ya" }, {}, { "xa", "ra" }, { "ya", "yb" }, "xa", true },
	{ "renameat", "rename", { "xa", "ya" }, {}, { "xa", "ra" }, { "ya", "yb" }, "xa", true },
	{ "renameat2", "rename", { "xa", "ya" }, {}, { "xa", "ra" }, { "ya", "yb" }, "xa", true },
	{ "open", "open", {}, {}, { "xf" }, { "yf" }, "xf", false },
	{ "openat", "open", {}, {}, { "xf" }, { "yf" }, "xf", false },
	{ "creat", "open", {}, {}, { "xf" }, { "yf" }, "xf", false },
	{ "fopen", "open", {}, {}, { "xf" }, { "yf" }, "xf", false },
	{ "utimensat", "utimens", { "xt", "yt" }, {}, { "xt" }, { "yt" }, "", false },
	{ "utimes", "utimens", { "xt", "yt" }, {}, { "xt" }, { "yt" }, "", false },
};

class IntegExecErrno : public ::testing::TestWithParam<std::tuple<OpCase, const char *>> {};

TEST_P(IntegExecErrno, FailsOnlyTheMatchingPath)
{
	const OpCase &c = std::get<0>(GetParam());
	const std::string err = std::get<1>(GetParam());
	ScratchDir d;
	for (const char *f : c.files)
		touch(d.sub(f));
	for (const char *dir : c.dirs)
		ASSERT_EQ(mkdir(d.sub(dir).c_str(), 0755), 0);
	std::string args = q(PROBE) + " " + c.call;
	for (const char *a : c.xargs)
		args += " " + q(d.sub(a));
	args += std::string(" ") + c.call;
	for (const char *a : c.yargs)
		args += " " + q(d.sub(a));
	std::string spec = std::string("errno@fs/") + c.point + ":err=" + err + ",path=*/x*";
	CmdResult r = lsexec("--fault " + q(spec) + " -- " + args);
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, std::string(c.call) + " " + err + "\n" + c.call + " ok\n") << r.err;
	EXPECT_NE(r.err.find(std::string("fs/") + c.point + " errno " + err), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("1 fault injected"), std::string::npos) << r.err;
	if (*c.x_untouched) {
		EXPECT_EQ(exists(d.sub(c.x_untouched)), c.x_exists) << c.x_untouched;
	}
}

INSTANTIATE_TEST_SUITE_P(Calls, IntegExecErrno,
			 ::testing::Combine(::testing::ValuesIn(op_cases), ::testing::Values("EACCES", "EPERM")),
			 [](const ::testing::TestParamInfo<IntegExecErrno::ParamType> &i) {
				 std::string n = std::string(std::get<0>(i.param).call) + "_" + std::get<1>(i.param);
				 for (char &ch : n)
					 if (ch == '-')
						 ch = '_';
				 return n;
			 });

/* rename and link are judged by either name: the destination glob catches
 * the rename that publishes a file. */
TEST(IntegExec, RenameMatchesTheNewNameToo)
{
	ScratchDir d;
	touch(d.sub("tmp1"));
	touch(d.sub("tmp2"));
	CmdResult r = lsexec("--fault 'errno@fs/rename:err=EACCES,path=*/state.json' -- " + q(PROBE) + " rename " +
			     q(d.sub("tmp1")) + " " + q(d.sub("state.json")) + " rename " + q(d.sub("tmp2")) + " " +
			     q(d.sub("other.json")));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "rename EACCES\nrename ok\n");
	EXPECT_TRUE(exists(d.sub("tmp1")));
	EXPECT_NE(r.err.find(d.sub("state.json") + " errno EACCES"), std::string::npos) << r.err;
}

/* Relative paths are judged as absolute ones: through the cwd or the dirfd. */
TEST(IntegExec, RelativePathsAreResolved)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("sub").c_str(), 0755), 0);
	CmdResult r = run_cmd("cd " + q(d.path) + " && " + BIN + " exec --fault 'errno@fs/*:err=EACCES,path=*/sub/x*' -- " +
			      q(PROBE) + " mkdir sub/xa mkdir xb mkdirat-in sub xc openat-in sub xd openat-in sub yd");
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "mkdir EACCES\nmkdir ok\nmkdirat-in EACCES\nopenat-in EACCES\nopenat-in ok\n");
	EXPECT_NE(r.err.find(d.sub("sub/xc")), std::string::npos) << r.err;
}

/* fd calls are judged by what the descriptor names (/proc/self/fd). */
TEST(IntegExec, ShortWriteWritesSomeBytesThenFails)
{
	ScratchDir d;
	CmdResult r = lsexec("--fault 'short-write@fs/write:bytes=3,err=ENOSPC,path=*/x*' -- " + q(PROBE) + " write " +
			     q(d.sub("xw")) + " 10 write " + q(d.sub("yw")) + " 10 pwrite " + q(d.sub("xp")) + " 10");
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "write ENOSPC\nwrite ok\npwrite ENOSPC\n");
	EXPECT_EQ(file_size(d.sub("xw")), 3);
	EXPECT_EQ(file_size(d.sub("yw")), 10);
	EXPECT_EQ(file_size(d.sub("xp")), 3);
	EXPECT_NE(r.err.find("fs/write short-write ENOSPC"), std::string::npos) << r.err;
}

TEST(IntegExec, FdCallsFailOnTheirFile)
{
	ScratchDir d;
	CmdResult r = lsexec("--fault 'errno@fs/fsync:err=EIO,path=*/x*' --fault 'errno@fs/close:err=EINTR,path=*/x*' "
			     "--fault 'errno@fs/utimens:err=EPERM,path=*/x*' -- " +
			     q(PROBE) + " fsync " + q(d.sub("xs")) + " fsync " + q(d.sub("ys")) + " close " +
			     q(d.sub("xs")) + " close " + q(d.sub("ys")) + " futimens " + q(d.sub("xs")) + " futimens " +
			     q(d.sub("ys")));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "fsync EIO\nfsync ok\nclose EINTR\nclose ok\nfutimens EPERM\nfutimens ok\n");
}

/* ---- the kinds that act on the process ---- */

TEST(IntegExec, CrashKillsTheProgramBeforeTheCall)
{
	ScratchDir d;
	touch(d.sub("f"));
	CmdResult r = lsexec("--fault crash@fs/unlink -- " + q(PROBE) + " unlink " + q(d.sub("f")));
	EXPECT_EQ(r.status, 137) << r.err;
	EXPECT_EQ(r.out, "");
	EXPECT_TRUE(exists(d.sub("f")));
	EXPECT_NE(r.err.find("fs/unlink crash"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find(d.sub("f") + " crash"), std::string::npos) << r.err;
}

TEST(IntegExec, StallAndStopAreLoggedAndTheCallProceeds)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("r").c_str(), 0755), 0);
	CmdResult r = lsexec("--log " + q(d.sub("inject.log")) +
			     " --fault 'stall@fs/rmdir:for=1ms' --fault 'stop@fs/mkdir:for=1ms' -- " + q(PROBE) +
			     " rmdir " + q(d.sub("r")) + " mkdir " + q(d.sub("m")));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "rmdir ok\nmkdir ok\n");
	EXPECT_FALSE(exists(d.sub("r")));
	EXPECT_TRUE(exists(d.sub("m")));
	std::string log = without_pids(slurp(d.sub("inject.log")));
	EXPECT_EQ(log, "fs/rmdir " + d.sub("r") + " stall 1ms\nfs/mkdir " + d.sub("m") + " stop 1ms\n");
}

TEST(IntegExec, NthAndOnceCountCalls)
{
	ScratchDir d;
	CmdResult r = lsexec("--fault 'errno@fs/mkdir:nth=2' -- " + q(PROBE) + " mkdir " + q(d.sub("a")) + " mkdir " +
			     q(d.sub("b")) + " mkdir " + q(d.sub("c")));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "mkdir ok\nmkdir EIO\nmkdir ok\n");
	r = lsexec("--fault 'errno@fs/rmdir:err=EBUSY,once' -- " + q(PROBE) + " rmdir " + q(d.sub("a")) + " rmdir " +
		   q(d.sub("c")));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "rmdir EBUSY\nrmdir ok\n");
}

/* ---- reproducibility ---- */

static std::string mkdir_calls(const std::string &dir, int n)
{
	std::string s;
	for (int i = 0; i < n; i++)
		s += " mkdir " + q(dir + "/d" + std::to_string(i));
	return s;
}

TEST(IntegExec, SameSeedSameDecisions)
{
	ScratchDir d;
	const int n = 64;
	std::string w = d.sub("w");
	auto once = [&](const char *seed, std::string *log) {
		EXPECT_EQ(system(("rm -rf " + q(w) + " && mkdir " + q(w)).c_str()), 0);
		CmdResult r = lsexec(std::string("-s ") + seed + " --log " + q(d.sub("log")) +
				     " --fault 'errno@fs/mkdir:err=EACCES,p=0.5' -- " + q(PROBE) + mkdir_calls(w, n));
		EXPECT_EQ(r.status, 0) << r.err;
		*log = without_pids(slurp(d.sub("log")));
		return r.out;
	};
	std::string log1, log2, log3;
	std::string out1 = once("42", &log1);
	std::string out2 = once("42", &log2);
	std::string out3 = once("43", &log3);
	EXPECT_EQ(out1, out2);
	EXPECT_EQ(log1, log2);
	EXPECT_NE(out1, out3);
	/* about the asked rate */
	int fired = count_lines(log1);
	EXPECT_GE(fired, n / 4) << log1;
	EXPECT_LE(fired, 3 * n / 4) << log1;
	EXPECT_EQ(count_lines(out1), n);
}

/* Programs started by a forked child draw their own streams, the same ones
 * on every run. */
TEST(IntegExec, ForkedProgramsDrawTheirOwnStreams)
{
	ScratchDir d;
	const int n = 48;
	std::string a = d.sub("a"), b = d.sub("b");
	std::string script = q(PROBE) + mkdir_calls(a, n) + "; " + q(PROBE) + mkdir_calls(b, n);
	auto once = [&]() {
		EXPECT_EQ(system(("rm -rf " + q(a) + " " + q(b) + " && mkdir " + q(a) + " " + q(b)).c_str()), 0);
		CmdResult r = lsexec("-s 9 -q --fault 'errno@fs/mkdir:err=EACCES,p=0.5' -- sh -c " + q(script));
		EXPECT_EQ(r.status, 0) << r.err;
		return r.out;
	};
	std::string out1 = once(), out2 = once();
	EXPECT_EQ(out1, out2);
	ASSERT_EQ(count_lines(out1), 2 * n);
	size_t half = 0;
	for (int i = 0; i < n; i++)
		half = out1.find('\n', half) + 1;
	EXPECT_NE(out1.substr(0, half), out1.substr(half)) << "both programs drew the same stream";
}

/* ---- the command line ---- */

TEST(IntegExec, ExitStatusPassesThrough)
{
	CmdResult r = lsexec("-- sh -c 'exit 7'");
	EXPECT_EQ(r.status, 7) << r.err;
	EXPECT_NE(r.err.find("no faults injected"), std::string::npos) << r.err;
	r = lsexec("-q -- sh -c 'kill -TERM $$'");
	EXPECT_EQ(r.status, 128 + 15) << r.err;
	r = lsexec("-q -- /nonexistent/program");
	EXPECT_EQ(r.status, 127) << r.err;
}

TEST(IntegExec, WithoutAPlanTheShimIsInert)
{
	ScratchDir d;
	CmdResult r = lsexec("-- " + q(PROBE) + " mkdir " + q(d.sub("xa")) + " write " + q(d.sub("xw")) + " 5");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "mkdir ok\nwrite ok\n");
	EXPECT_NE(r.err.find("no faults injected"), std::string::npos) << r.err;
}

TEST(IntegExec, BadUsageIsExit2WithTheOffendingToken)
{
	struct {
		const char *args, *token;
	} cases[] = {
		{ "--fault 'bogus@fs/mkdir' -- true", "bogus" },
		{ "--fault 'errno@fs/mkdir:err=ENOTANERRNO' -- true", "ENOTANERRNO" },
		{ "--fault 'errno@fs/mkdir:colour=red' -- true", "colour" },
		{ "--fault 'sweep:every=5ms' -- true", "sweep" },
		{ "--fault 'stall@fs/stat' -- true", "fs/stat" },
		{ "--fault 'errno@fs/mkdir' true", "--" },
		{ "--fault 'errno@fs/mkdir' --", "no command" },
		{ "--bogus -- true", "--bogus" },
		{ "-s many -- true", "many" },
	};
	for (const auto &c : cases) {
		CmdResult r = lsexec(c.args);
		EXPECT_EQ(r.status, 2) << c.args << "\n" << r.err;
		EXPECT_EQ(count_lines(r.err), 1) << c.args << "\n" << r.err;
		EXPECT_NE(r.err.find(c.token), std::string::npos) << c.args << "\n" << r.err;
		EXPECT_EQ(r.out, "") << c.args;
	}
}

TEST(IntegExec, MissingShimIsExit3)
{
	ScratchDir d;
	ASSERT_EQ(system(("cp " + q(BIN) + " " + q(d.sub("lockstorm"))).c_str()), 0);
	CmdResult r = run_cmd(q(d.sub("lockstorm")) + " exec -- true");
	EXPECT_EQ(r.status, 3) << r.err;
	EXPECT_NE(r.err.find("liblockstorm_preload.so"), std::string::npos) << r.err;
}

TEST(IntegExec, TempLogIsRemovedAndLdPreloadIsPrepended)
{
	ScratchDir d;
	CmdResult r = run_cmd("TMPDIR=" + q(d.path) + " LD_PRELOAD= " + BIN +
			      " exec --fault 'errno@fs/mkdir:path=*/x*' -- sh -c 'echo \"$LD_PRELOAD\"; ls \"$TMPDIR\"'");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_NE(r.out.find("liblockstorm_preload.so\nlockstorm-exec."), std::string::npos) << r.out;
	r = run_cmd("ls -A " + q(d.path));
	EXPECT_EQ(r.out, "") << "temp inject log left behind";
}

/* ---- the Node check ---- */

TEST(IntegExec, NodeSeesTheErrno)
{
	if (run_cmd("command -v node").status != 0)
		GTEST_SKIP() << "node is not on PATH";
	ScratchDir d;
	for (const char *err : { "EACCES", "EPERM" }) {
		std::string js = "const fs=require('fs');"
				 "try{fs.mkdirSync('" + d.sub(std::string("x_") + err) + "');console.log('x ok')}"
				 "catch(e){console.log('x',e.code)}"
				 "fs.mkdirSync('" + d.sub(std::string("y_") + err) + "');console.log('y ok')";
		CmdResult r = lsexec(std::string("--fault 'errno@fs/mkdir:err=") + err + ",path=*/x*' -- node -e " + q(js));
		EXPECT_EQ(r.status, 0) << r.err;
		EXPECT_EQ(r.out, std::string("x ") + err + "\ny ok\n") << r.err;
		EXPECT_FALSE(exists(d.sub(std::string("x_") + err)));
		EXPECT_TRUE(exists(d.sub(std::string("y_") + err)));
		/* and uncaught, as the issue runs it: Node reports the errno */
		r = lsexec(std::string("-q --fault 'errno@fs/mkdir:err=") + err + ",path=*/x*' -- node -e " +
			   q("require('fs').mkdirSync('" + d.sub(std::string("x1_") + err) + "')"));
		EXPECT_EQ(r.status, 1);
		EXPECT_NE(r.err.find(std::string(err) + ":"), std::string::npos) << r.err;
	}
}
