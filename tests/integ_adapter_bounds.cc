/*
 * integ_adapter_bounds.cc - adapters that do what no adapter should (flood
 * the log or the event pipe, never start, ignore `stop`, leave a child
 * behind) end as a reported adapter failure, and none of their processes
 * outlives the driver, also when the driver itself is SIGKILLed.
 *
 * How "none outlives" is judged without timing: the test process becomes a
 * child subreaper, so every orphan of the run (a killed adapter's child, the
 * keeper) is reparented to it; it waits for all its descendants to end (a
 * survivor makes that wait time out: the failure), then looks in /proc for
 * any process whose environment carries this test's unique marker.  An
 * adapter that is "up" is known by a FIFO it writes to, never by a sleep.
 */
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <future>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string SRC = LS_SOURCE_DIR;

/* A marker no other process carries: in the environment of the run and so of
 * every adapter process it starts. */
static std::string new_marker()
{
	static int k;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return "lsbounds" + std::to_string(getpid()) + "x" + std::to_string(ts.tv_nsec) + "x" + std::to_string(k++);
}

/* Pids (not ours) whose environment has MARK=<marker>. */
static std::string marked(const std::string &marker)
{
	std::string found, want = "LS_BOUNDS_MARK=" + marker;
	DIR *d = opendir("/proc");
	if (!d)
		return "";
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
			continue;
		std::string env = slurp(std::string("/proc/") + e->d_name + "/environ");
		for (size_t i = 0; i < env.size(); i += strlen(env.c_str() + i) + 1)
			if (strcmp(env.c_str() + i, want.c_str()) == 0) {
				found += std::string(e->d_name) + " (" + slurp(std::string("/proc/") + e->d_name + "/cmdline") + ") ";
				break;
			}
	}
	closedir(d);
	return found;
}

/* Run the whole test as a subreaper; at the end, wait for every descendant. */
class Bounds : public ::testing::Test {
protected:
	void SetUp() override { ASSERT_EQ(prctl(PR_SET_CHILD_SUBREAPER, 1), 0); }
	void TearDown() override { prctl(PR_SET_CHILD_SUBREAPER, 0); }

	/* Every descendant has ended: 1, or 0 when some still live after 60 s
	 * (a process that nobody kills: the bug this suite looks for).  A
	 * blocking wait: SIGALRM (no SA_RESTART) ends it only on that failure. */
	static void on_alarm(int) {}
	static bool all_ended()
	{
		struct sigaction sa, old;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_alarm;
		sigaction(SIGALRM, &sa, &old);
		alarm(60);
		pid_t p;
		while ((p = waitpid(-1, NULL, 0)) > 0)
			;
		bool ended = p < 0 && errno == ECHILD;
		alarm(0);
		sigaction(SIGALRM, &old, NULL);
		return ended;
	}

	CmdResult run(const std::string &marker, const std::string &args)
	{
		return run_cmd("env LS_BOUNDS_MARK=" + marker + " " + BIN + " run " + args);
	}

	void expect_none_left(const std::string &marker)
	{
		EXPECT_TRUE(all_ended()) << "processes left: " << marked(marker);
		EXPECT_EQ(marked(marker), "");
	}
};

/* An adapter script in the scratch directory (the quoting stays readable). */
static std::string script(const ScratchDir &d, const std::string &name, const std::string &body)
{
	std::string p = d.sub(name);
	put(p, "#!/bin/sh\n" + body);
	chmod(p.c_str(), 0755);
	return p;
}

static const char *const NOT_A_VERDICT = "verdict:";

TEST_F(Bounds, YesFloodsItsLog)
{
	ScratchDir d;
	std::string m = new_marker();
	CmdResult r = run(m, "--exec yes -n 1 -d 2s -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("adapter wrote more than 8 MB to its stdout and stderr"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("| y"), std::string::npos) << r.err; /* its last lines */
	EXPECT_EQ(r.out.find(NOT_A_VERDICT), std::string::npos) << r.out;
	struct stat st;
	ASSERT_EQ(stat(d.sub("out/adapter-w0.log").c_str(), &st), 0);
	EXPECT_LE(st.st_size, 8 << 20);
	expect_none_left(m);
}

TEST_F(Bounds, GarbageOnTheEventPipe)
{
	ScratchDir d;
	std::string m = new_marker();
	CmdResult r = run(m, "--exec 'yes >&3' -n 2 -d 2s -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("adapter sent a bad line: \"y\""), std::string::npos) << r.err;
	expect_none_left(m);
}

TEST_F(Bounds, MegabyteLines)
{
	ScratchDir d;
	std::string ev = script(d, "ev.sh", "head -c 1048576 /dev/zero | tr '\\0' x >&3\necho >&3\nexec sleep 1000\n");
	std::string out = script(d, "out.sh", "head -c 1048576 /dev/zero | tr '\\0' x\necho\nexec sleep 1000\n");
	std::string m = new_marker();
	CmdResult a = run(m, "--exec " + ev + " -n 1 -d 2s -q -o " + d.sub("a"));
	EXPECT_EQ(a.status, 3) << a.out << a.err;
	EXPECT_NE(a.err.find("(longer than 4096 bytes)"), std::string::npos) << a.err;
	CmdResult b = run(m, "--exec " + out + " -n 1 -d 2s -q -o " + d.sub("b"));
	EXPECT_EQ(b.status, 3) << b.out << b.err;
	EXPECT_NE(b.err.find("adapter wrote a line longer than 65536 bytes to its stdout or stderr"),
		  std::string::npos) << b.err;
	EXPECT_NE(b.err.find("| xxxx"), std::string::npos) << b.err; /* the line's start, cut */
	EXPECT_LT(b.err.size(), 8000u) << "the tail shows the start of a long line only";
	expect_none_left(m);
}

/* Neither ever says `next`: the start-up limit is cut to the run's length. */
TEST_F(Bounds, NeverStarts)
{
	ScratchDir d;
	std::string m = new_marker();
	auto sleeper = std::async(std::launch::async, [&] {
		return run(m, "--exec 'sleep 1000' -n 1 -d 2s --param wait_ms=100ms -q -o " + d.sub("a"));
	});
	/* the lock-wait budget (default wait_ms) is no part of the start-up allowance */
	CmdResult c = run(m, "--exec cat -n 1 -d 2s -q -o " + d.sub("b"));
	CmdResult s = sleeper.get();
	for (const CmdResult *r : { &s, &c }) {
		EXPECT_EQ(r->status, 3) << r->out << r->err;
		EXPECT_NE(r->err.find("adapter hung: no `next` within"), std::string::npos) << r->err;
		EXPECT_NE(r->err.find("(limit 12000 ms)"), std::string::npos) << r->err;
	}
	expect_none_left(m);
}

TEST_F(Bounds, BackgroundChildOfAnAdapterThatExits)
{
	ScratchDir d;
	std::string m = new_marker();
	CmdResult r = run(m, "--exec 'sleep 777 & exit 0' -n 1 -d 2s -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("exited with status 0 before its first line"), std::string::npos) << r.err;
	expect_none_left(m);
}

/* An adapter that does its ops and then ignores `stop`. */
TEST_F(Bounds, IgnoresStop)
{
	ScratchDir d;
	std::string a = d.sub("a.py");
	put(a, "import os, sys, time, signal\n"
	       "def ev(s): os.write(3, ('%d %s\\n' % (time.monotonic_ns(), s)).encode())\n"
	       "while True:\n"
	       "    os.write(3, b'next\\n')\n"
	       "    line = sys.stdin.readline()\n"
	       "    if not line.startswith('op '):\n"
	       "        signal.pause()\n"
	       "    for e in ('attempt n=0', 'acquired', 'release-begin', 'released'):\n"
	       "        ev(e)\n");
	std::string m = new_marker();
	CmdResult r = run(m, "--exec 'python3 " + a + "' -w hold -n 1 --ops 3 --param wait_ms=100ms -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 3) << r.out << r.err;
	EXPECT_NE(r.err.find("did not exit within"), std::string::npos) << r.err;
	EXPECT_NE(r.err.find("of being told to stop"), std::string::npos) << r.err;
	expect_none_left(m);
}

/* SIGKILL of the driver: the adapter (PR_SET_PDEATHSIG) and its background
 * child (the keeper kills its group) end with it. */
TEST_F(Bounds, DriverKilled)
{
	ScratchDir d;
	std::string fifo = d.sub("up");
	ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
	for (const char *body : { "sleep 777 & echo up > %s; exec sleep 1000", "(sleep 778 &); echo up > %s; exec cat" }) {
		std::string m = new_marker();
		char cmd[1024];
		snprintf(cmd, sizeof cmd, body, fifo.c_str());
		pid_t pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);
			dup2(null, 1);
			dup2(null, 2);
			setenv("LS_BOUNDS_MARK", m.c_str(), 1);
			execl(BIN.c_str(), BIN.c_str(), "run", "--exec", cmd, "-n", "2", "-d", "60s", "-q", "-o",
			      d.sub("out" + m).c_str(), (char *)NULL);
			_exit(127);
		}
		/* both adapters are up once each has written to the FIFO: an open
		 * for reading waits for a writer, a read ends at its close */
		std::string got;
		while (got.size() < 6) {
			int fd = open(fifo.c_str(), O_RDONLY);
			ASSERT_GE(fd, 0);
			char buf[64];
			ssize_t k;
			while ((k = read(fd, buf, sizeof buf)) != 0)
				if (k > 0)
					got.append(buf, (size_t)k);
				else if (errno != EINTR)
					break;
			close(fd);
		}
		EXPECT_EQ(got, "up\nup\n");
		EXPECT_NE(marked(m), "");
		ASSERT_EQ(kill(pid, SIGKILL), 0);
		int status;
		ASSERT_EQ(waitpid(pid, &status, 0), pid);
		expect_none_left(m);
	}
}

/* A crash fault under --exec gives a verdict: a plain command is exec'd
 * itself (no shell lingers), and a shell's report of its adapter's SIGKILL
 * is a crash too. */
TEST_F(Bounds, CrashFaultsUnderExecGiveAVerdict)
{
	ScratchDir d;
	std::string m = new_marker();
	int k = 0;
	for (const std::string &cmd : { SRC + "/adapters/flock1/run", "X=1 " + SRC + "/adapters/flock1/run" }) {
		CmdResult r = run(m, "--exec '" + cmd + "' -n 2 -d 3s --fault 'crash@*:p=0.01' -o " + d.sub("o" + std::to_string(k++)));
		EXPECT_TRUE(r.status == 0 || r.status == 1) << cmd << "\n" << r.out << r.err;
		EXPECT_NE(r.out.find("verdict:"), std::string::npos) << r.out << r.err;
	}
	expect_none_left(m);
}

/* ---- the helpers: any exception is an event with its type's name ---- */

static std::string lines_of(const CmdResult &r)
{
	std::string out;
	for (size_t i = 0; i < r.out.size();) { /* drop the timestamps */
		size_t nl = r.out.find('\n', i), sp = r.out.find(' ', i);
		if (nl == std::string::npos)
			nl = r.out.size();
		out += r.out.substr(sp < nl ? sp + 1 : i, nl - (sp < nl ? sp + 1 : i)) + "\n";
		i = nl + 1;
	}
	return out;
}

TEST(AdapterHelpers, PythonAnyExceptionIsAnEvent)
{
	ScratchDir d;
	put(d.sub("t.py"), "import os, sys\n"
			   "sys.path.insert(0, '" + SRC + "/adapters/lib')\n"
			   "os.environ['LOCKSTORM_EVENT_FD'] = '1'\n"
			   "import lockstorm\n"
			   "class Weird(Exception): pass\n"
			   "def weird(): raise Weird('the library had its own idea')\n"
			   "def missing(): raise FileNotFoundError(2, 'gone')\n"
			   "def bad(): raise ValueError('v')\n"
			   "ok = lambda: True\n"
			   "lockstorm.op(weird, ok)\n"
			   "lockstorm.op(missing, ok)\n"
			   "lockstorm.op(ok, weird, update=lambda: lockstorm.emit('read', 'rev=-1 own=0'))\n"
			   "lockstorm.op(ok, ok, update=bad)\n");
	CmdResult r = run_cmd("/usr/bin/python3 " + d.sub("t.py"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(lines_of(r), "attempt n=0\nacquire-error errno=EIO error=Weird\n"
			       "attempt n=0\nacquire-error errno=ENOENT error=FileNotFoundError\n"
			       "attempt n=0\nacquired\nread rev=-1 own=0\nrelease-begin\nrelease-error errno=EIO error=Weird\n"
			       "attempt n=0\nacquired\nwrite-error errno=EIO error=ValueError\nrelease-begin\nreleased\n")
		<< r.out;
}

TEST(AdapterHelpers, NodeAnyThrowIsAnEvent)
{
	if (run_cmd("node --version").status != 0)
		GTEST_SKIP() << "node is not installed";
	ScratchDir d;
	put(d.sub("t.js"), "process.env.LOCKSTORM_EVENT_FD = '1';\n"
			   "const ls = require('" + SRC + "/adapters/lib/lockstorm.js');\n"
			   "class Weird extends Error {}\n"
			   "const ok = async () => true;\n"
			   "(async () => {\n"
			   "  await ls.op({ acquire: () => { throw new Weird('own'); }, release: ok });\n"
			   "  await ls.op({ acquire: async () => { throw 'a string'; }, release: ok });\n"
			   "  await ls.op({ acquire: ok, release: async () => { throw Object.assign(new Error('x'), { code: 'ERELEASED' }); },\n"
			   "                update: async () => ls.emit('read', 'rev=-1 own=0') });\n"
			   "  await ls.op({ acquire: ok, release: ok, update: () => { throw new RangeError('r'); } });\n"
			   "})();\n");
	CmdResult r = run_cmd("node " + d.sub("t.js"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(lines_of(r), "attempt n=0\nacquire-error errno=EIO error=Weird\n"
			       "attempt n=0\nacquire-error errno=EIO error=string\n"
			       "attempt n=0\nacquired\nread rev=-1 own=0\nrelease-begin\n"
			       "log library error ERELEASED: x\nrelease-error errno=ENOLCK error=Error:ERELEASED\n"
			       "attempt n=0\nacquired\nwrite-error errno=EIO error=RangeError\nrelease-begin\nreleased\n")
		<< r.out;
}

/* --exec adapters: stale_ms=never is a stale age that does not exist, so no
 * double holder is excused as a reclaim; the kept run re-checks the same. */
TEST(AdapterHelpers, ExecStaleNever)
{
	ScratchDir d;
	std::string toy = SRC + "/tests/adapters/toy.py";
	CmdResult r = run_cmd(BIN + " run --exec '" + toy + " nolock' -n 4 --ops 100 -q --param stale_ms=never --json " +
			      d.sub("r.json") + " -o " + d.sub("out"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root) << r.out << r.err;
	EXPECT_GT(rep.violations("exclusion"), 0);
	EXPECT_EQ(rep.total("reclaims"), 0);
	CmdResult c = run_cmd(BIN + " check -q " + d.sub("out"));
	EXPECT_EQ(c.status, 1) << c.out << c.err;
	CmdResult bad = run_cmd(BIN + " run -p ext:flock1 -n 1 --ops 1 -q --param stale_ms=never");
	EXPECT_EQ(bad.status, 2) << bad.out << bad.err; /* a nominal stale age: a duration only */
}
