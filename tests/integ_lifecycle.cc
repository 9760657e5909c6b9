/*
 * integ_lifecycle.cc - a run's life from its start to its end: interrupts,
 * refusing early, owned and locked folders, bounded waits, and no process
 * left behind (issue 16 items 4-5, issue 21 items 5-6).
 *
 * Nothing sleeps to synchronise: a test that interrupts a run reads the
 * run's stderr through a pipe until the line it prints once it is under way
 * (its signal handlers are installed by then) and signals it then; what it
 * asserts holds in whichever phase the signal lands.
 */
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <jansson.h>
#include <signal.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

/* In a namespace of its own: another test file has a Bg too, and two inline
 * destructors of one name are one to the linker (the other one's freed no outfile). */
namespace {
/* A lockstorm started in the background, its stderr read through a pipe. */
struct Bg {
	pid_t pid = -1;
	int err = -1;         /* read end of its stderr */
	std::string errtext;  /* what it printed so far */
	std::string outfile;

	/* WATCH_STDOUT: the pipe reads its stdout, and stderr goes to OUT */
	Bg(const std::string &args, const std::string &out, bool watch_stdout = false)
	{
		outfile = out;
		int p[2];
		EXPECT_EQ(pipe(p), 0);
		pid = fork();
		if (pid == 0) {
			close(p[0]);
			dup2(p[1], watch_stdout ? 1 : 2);
			int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
			dup2(o, watch_stdout ? 2 : 1);
			int nul = open("/dev/null", O_RDONLY);
			dup2(nul, 0);
			execl("/bin/sh", "sh", "-c", ("exec " + BIN + " " + args).c_str(), (char *)NULL);
			_exit(127);
		}
		close(p[1]);
		err = p[0];
	}
	/* Read stderr until TEXT shows (true) or it ends (false). */
	bool wait_for(const std::string &text)
	{
		char buf[4096];
		while (errtext.find(text) == std::string::npos) {
			ssize_t k = read(err, buf, sizeof buf);
			if (k <= 0)
				return false;
			errtext.append(buf, (size_t)k);
		}
		return true;
	}
	/* Its exit code (or 128+signal), with the rest of stderr read. */
	int finish()
	{
		wait_for("\x01never\x01");
		int st;
		while (waitpid(pid, &st, 0) < 0)
			;
		pid = -1;
		return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	std::string out() const { return slurp(outfile); }
	~Bg()
	{
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		if (err >= 0)
			close(err);
	}
};
} // namespace

/* Processes whose command line holds MARK. */
static int processes_with(const std::string &mark)
{
	int count = 0;
	DIR *d = opendir("/proc");
	struct dirent *de;
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		std::string cmd = slurp(std::string("/proc/") + de->d_name + "/cmdline");
		for (char &c : cmd)
			if (c == '\0')
				c = ' ';
		if (cmd.find(mark) != std::string::npos && cmd.find("integ_lifecycle") == std::string::npos)
			count++;
	}
	if (d)
		closedir(d);
	return count;
}

static std::string json_str(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* The first line a run prints once its handlers are set and it starts. */
static const char *const RUN_STARTED = "work dir";

TEST(IntegLifecycle, AnInterruptedRunIsIncompleteInEveryOutput)
{
	for (int sig : { SIGTERM, SIGINT }) {
		ScratchDir d;
		Bg run("run -p flock -n 2 -d 30s --junit " + d.sub("j.xml") + " --json " + d.sub("r.json") + " -o " +
			       d.sub("out"),
		       d.sub("stdout"));
		ASSERT_TRUE(run.wait_for(RUN_STARTED)) << run.errtext;
		kill(run.pid, sig);
		int rc = run.finish();
		EXPECT_EQ(rc, 4) << run.errtext << run.out();
		EXPECT_NE(run.out().find("verdict: INCOMPLETE (interrupted"), std::string::npos) << run.out();
		EXPECT_EQ(run.out().find("verdict: PASS"), std::string::npos);
		for (const char *json : { "r.json", "out/report.json" }) {
			Report rep(d.sub(json));
			ASSERT_TRUE(rep.root) << json;
			EXPECT_EQ(rep.verdict(), "incomplete") << json;
			EXPECT_TRUE(json_is_false(json_object_get(rep.root, "complete"))) << json;
			EXPECT_NE(json_str(rep.root, "incomplete_reason").find("interrupted"), std::string::npos);
		}
		std::string xml = slurp(d.sub("j.xml"));
		EXPECT_NE(xml.find("<error"), std::string::npos) << xml;
		EXPECT_NE(xml.find("errors=\"1\""), std::string::npos) << xml;
		/* `check` of the kept run says the same */
		CmdResult c = lockstorm("check -q " + d.sub("out"));
		EXPECT_EQ(c.status, 4) << c.out << c.err;
		EXPECT_NE(c.out.find("verdict: INCOMPLETE (the run was interrupted)"), std::string::npos) << c.out;
	}
}

TEST(IntegLifecycle, AFinishedRunSaysComplete)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -p flock -w hold -n 2 --ops 50 -q --junit " + d.sub("j.xml") + " --json " +
				d.sub("r.json"));
	EXPECT_EQ(r.status, 0) << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_TRUE(json_is_true(json_object_get(rep.root, "complete")));
	EXPECT_EQ(slurp(d.sub("j.xml")).find("<error"), std::string::npos);
}

/* An adapter that never says its first line holds the run at its start
 * barrier: the interrupt lands in start-up, and the adapter goes too. */
TEST(IntegLifecycle, AnInterruptDuringStartUpEndsTheRunAndItsAdapter)
{
	ScratchDir d;
	Bg run("run --exec 'sleep 987651' -n 1 -d 30s -o " + d.sub("out"), d.sub("stdout"));
	ASSERT_TRUE(run.wait_for(RUN_STARTED)) << run.errtext;
	kill(run.pid, SIGINT);
	EXPECT_EQ(run.finish(), 4) << run.errtext << run.out();
	EXPECT_NE(run.out().find("verdict: INCOMPLETE (interrupted during start-up)"), std::string::npos)
		<< run.out() << run.errtext;
	EXPECT_EQ(processes_with("987651"), 0);
}

TEST(IntegLifecycle, AnAdaptersBackgroundChildDiesWithTheRun)
{
	ScratchDir d;
	CmdResult r = lockstorm("run --exec 'sleep 987652 & exit 0' -n 1 -d 2s -q -o " + d.sub("out"));
	EXPECT_NE(r.status, 0) << r.out << r.err;
	EXPECT_EQ(processes_with("987652"), 0);
}

TEST(IntegLifecycle, AnInterruptedExploreIsIncomplete)
{
	ScratchDir d;
	Bg ex("explore -p mkdir-owner -n 2 --ops 2 --schedules 100000000 --time-budget 10m --json " + d.sub("x.json") +
		      " -o " + d.sub("cex"),
	      d.sub("stdout"));
	ASSERT_TRUE(ex.wait_for("lockstorm explore:")) << ex.errtext;
	kill(ex.pid, SIGTERM);
	EXPECT_EQ(ex.finish(), 4) << ex.errtext << ex.out();
	EXPECT_NE(ex.out().find("verdict: INCOMPLETE (interrupted after"), std::string::npos) << ex.out();
	Report rep(d.sub("x.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.verdict(), "incomplete");
	EXPECT_TRUE(json_is_false(json_object_get(rep.root, "complete")));
}

TEST(IntegLifecycle, AnInterruptedCompareIsIncomplete)
{
	ScratchDir d;
	Bg cmp("compare -p flock,mkdir-owner -w hold -n 2 -d 1s --repeat 5 --json " + d.sub("c.json"),
	       d.sub("stdout"));
	ASSERT_TRUE(cmp.wait_for("[1/10]")) << cmp.errtext; /* the first run is done */
	kill(cmp.pid, SIGTERM);
	EXPECT_EQ(cmp.finish(), 4) << cmp.errtext << cmp.out();
	EXPECT_NE(cmp.out().find("verdict: INCOMPLETE (interrupted after "), std::string::npos) << cmp.out();
	EXPECT_NE(cmp.out().find(" of 10 runs"), std::string::npos) << cmp.out();
	Report rep(d.sub("c.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(rep.verdict(), "incomplete");
	EXPECT_TRUE(json_is_false(json_object_get(rep.root, "complete")));
}

TEST(IntegLifecycle, AnInterruptedScenarioRunIsIncomplete)
{
	ScratchDir d;
	Bg sc("scenario run --all", d.sub("stderr"), true);
	ASSERT_TRUE(sc.wait_for(" ok ")) << sc.errtext; /* one revision is done */
	kill(sc.pid, SIGTERM);
	EXPECT_EQ(sc.finish(), 4) << sc.errtext;
	EXPECT_NE(sc.errtext.find("verdict: INCOMPLETE (interrupted after "), std::string::npos) << sc.errtext;
	EXPECT_EQ(sc.errtext.find("every revision as expected"), std::string::npos) << sc.errtext;
}

TEST(IntegLifecycle, UnwritableOutputsAreRefusedBeforeAnythingRuns)
{
	ScratchDir d;
	for (const char *opt : { "--json", "--junit" }) {
		CmdResult r = lockstorm(std::string("run -p flock -n 2 -d 30s -o ") + d.sub("out") + " " + opt +
					" /nonexistent/dir/x.json");
		EXPECT_EQ(r.status, 2) << r.err;
		EXPECT_NE(r.err.find(opt), std::string::npos) << r.err;
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
		EXPECT_FALSE(exists(d.sub("out"))) << "the job ran";
	}
}

TEST(IntegLifecycle, TwoRunsOnOneFolderNeverBothRun)
{
	ScratchDir d;
	Bg first("run -p flock -n 2 -d 30s --dir " + d.sub("w") + " -o " + d.sub("out"), d.sub("stdout"));
	ASSERT_TRUE(first.wait_for(RUN_STARTED)) << first.errtext;
	std::string pid = std::to_string(first.pid);
	CmdResult dir = lockstorm("run -p flock -n 2 -d 1s --dir " + d.sub("w"));
	EXPECT_EQ(dir.status, 2) << dir.err;
	EXPECT_NE(dir.err.find("in use by lockstorm (pid " + pid + ")"), std::string::npos) << dir.err;
	CmdResult out = lockstorm("run -p flock -n 2 -d 1s -o " + d.sub("out"));
	EXPECT_EQ(out.status, 2) << out.err;
	EXPECT_NE(out.err.find("pid " + pid), std::string::npos) << out.err;
	kill(first.pid, SIGTERM);
	EXPECT_EQ(first.finish(), 4) << first.errtext;
	/* its owner gone, the folder is free again */
	EXPECT_EQ(lockstorm("run -p flock -w hold -n 2 --ops 20 -q --dir " + d.sub("w") + " -o " + d.sub("out")).status, 0);
}

TEST(IntegLifecycle, AStaleMarkerOfADeadOwnerIsTakenOver)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("w").c_str(), 0777), 0);
	ASSERT_EQ(mkdir(d.sub("w/store").c_str(), 0777), 0);
	put(d.sub("w/store/state.json.lock"), "left by a killed run\n");
	put(d.sub("w/.lockstorm-owned"), "lockstorm pid " + std::to_string(dead_pid()) + "\nmade store\n");
	CmdResult r = lockstorm("run -p flock -w hold -n 2 --ops 20 -q --dir " + d.sub("w"));
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_FALSE(exists(d.sub("w/store")));
}

TEST(IntegLifecycle, AHandPlantedMarkerNeverGetsAUsersFolderDeleted)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("w").c_str(), 0777), 0);
	ASSERT_EQ(mkdir(d.sub("w/store").c_str(), 0777), 0);
	put(d.sub("w/store/precious"), "the user's\n");
	put(d.sub("w/.lockstorm-owned"), "made by lockstorm (pid 1); lockstorm may remove what it made here\n");
	CmdResult r = lockstorm("run -p flock -w hold -n 2 --ops 20 -q --dir " + d.sub("w"));
	EXPECT_EQ(r.status, 2) << r.err;
	EXPECT_NE(r.err.find("did not make"), std::string::npos) << r.err;
	EXPECT_EQ(slurp(d.sub("w/store/precious")), "the user's\n");
}

TEST(IntegLifecycle, TheSweepStaysInsideTheLocksFolder)
{
	ScratchDir d;
	ASSERT_EQ(mkdir(d.sub("w").c_str(), 0777), 0);
	ASSERT_EQ(mkdir(d.sub("w/users-empty-folder").c_str(), 0777), 0);
	put(d.sub("w/.lockstorm-owned"), "lockstorm pid " + std::to_string(dead_pid()) + "\n");
	CmdResult r = lockstorm("run -p mkdir-owner -w update -n 2 --ops 200 --time-scale 0.01 -q "
				"--fault sweep:every=1ms --dir " + d.sub("w"));
	EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
	EXPECT_TRUE(exists(d.sub("w/users-empty-folder")));
}

/* A stop far past the run's end is cut at the end, and the report says so. */
TEST(IntegLifecycle, AStopLongerThanTheRunIsCut)
{
	ScratchDir d;
	CmdResult r = lockstorm("run -p flock -n 4 -d 1s -q --json " + d.sub("r.json") +
				" --fault 'stop@flock/acquire/after-flock:nth=3,workers=0,for=90s'");
	EXPECT_TRUE(r.status == 0 || r.status == 1) << r.out << r.err;
	EXPECT_NE(r.err.find("cut at its end"), std::string::npos) << r.err;
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_GE(json_integer_value(json_object_get(rep.root, "cut_stalls")), 1);
}

TEST(IntegLifecycle, TempFoldersOfADeadRunAreRemovedByTheNext)
{
	ScratchDir d;
	std::string dead = "lockstorm pid " + std::to_string(dead_pid()) + "\n";
	std::string live = "lockstorm pid " + std::to_string(getpid()) + "\n";
	for (const char *dir : { "lockstorm-work.dead01", "lockstorm-out.dead02", "lockstorm-work.live03",
				 "lockstorm-work.kept04", "lockstorm-work.nomark" })
		ASSERT_EQ(mkdir(d.sub(dir).c_str(), 0777), 0);
	put(d.sub("lockstorm-work.dead01/.lockstorm-owned"), dead + "made store\n");
	put(d.sub("lockstorm-out.dead02/.lockstorm-out"), dead);
	put(d.sub("lockstorm-work.live03/.lockstorm-owned"), live);
	put(d.sub("lockstorm-work.kept04/.lockstorm-owned"), dead + "kept\n");
	CmdResult r = run_cmd("TMPDIR=" + d.path + " " + BIN + " run -p flock -w hold -n 2 --ops 20 -q");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_FALSE(exists(d.sub("lockstorm-work.dead01")));
	EXPECT_FALSE(exists(d.sub("lockstorm-out.dead02")));
	EXPECT_TRUE(exists(d.sub("lockstorm-work.live03")));
	EXPECT_TRUE(exists(d.sub("lockstorm-work.kept04")));
	EXPECT_TRUE(exists(d.sub("lockstorm-work.nomark")));
}

/* The explorer's scratch folders are marked and locked as a run's temp
 * folders are: a SIGKILLed explorer's is removed by the next explorer on
 * that folder, once none of its workers lives; a live owner's, or one with
 * no marker, stays. */
TEST(IntegLifecycle, AKilledExplorersScratchIsRemovedByTheNext)
{
	ScratchDir d;
	for (const char *dir : { "lockstorm-explore.live01", "lockstorm-j.nomark" })
		ASSERT_EQ(mkdir(d.sub(dir).c_str(), 0777), 0);
	put(d.sub("lockstorm-explore.live01/.lockstorm-owned"), "lockstorm pid " + std::to_string(getpid()) + "\n");
	put(d.sub("lockstorm-j.dead02"), ""); /* a file of that name is no folder: left */
	std::string killed;
	{
		Bg ex("explore -p flock -n 3 --ops 20 --time-budget 10m --dir " + d.path, d.sub("stdout"));
		ASSERT_TRUE(ex.wait_for("lockstorm explore:")) << ex.errtext;
		for (const std::string &e : entries(d.path))
			if (e.rfind("lockstorm-explore.", 0) == 0 && e != "lockstorm-explore.live01")
				killed = e;
		ASSERT_FALSE(killed.empty()) << ex.errtext;
		int fd = open(d.sub(killed + "/.lockstorm-owned").c_str(), O_RDONLY | O_CLOEXEC);
		ASSERT_GE(fd, 0);
		EXPECT_NE(flock(fd, LOCK_EX | LOCK_NB), 0) << "a live explorer's marker is locked";
		kill(ex.pid, SIGKILL);
		EXPECT_EQ(ex.finish(), 128 + SIGKILL);
		EXPECT_EQ(flock(fd, LOCK_EX), 0); /* returns once the last of its workers is gone */
		close(fd);
	}
	EXPECT_TRUE(exists(d.sub(killed))) << "nobody removed it yet";
	CmdResult r = lockstorm("explore -p flock -n 2 --ops 2 --schedules 20 -q --dir " + d.path);
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_FALSE(exists(d.sub(killed)));
	EXPECT_TRUE(exists(d.sub("lockstorm-explore.live01")));
	EXPECT_TRUE(exists(d.sub("lockstorm-j.nomark")));
	EXPECT_TRUE(exists(d.sub("lockstorm-j.dead02")));
	for (const std::string &e : entries(d.path))
		EXPECT_TRUE(e == "lockstorm-explore.live01" || e == "lockstorm-j.nomark" || e == "lockstorm-j.dead02" ||
			    e == "stdout")
			<< e << " left behind";
}

/* The driver signals only process groups it made: a sibling in the caller's
 * group survives every fault kind and an interrupt. */
TEST(IntegLifecycle, ASiblingInTheCallersGroupSurvivesEveryFaultAndAnInterrupt)
{
	pid_t sib = fork();
	if (sib == 0) {
		for (;;)
			pause();
	}
	ASSERT_GT(sib, 0);
	ASSERT_EQ(getpgid(sib), getpgrp());
	const char *faults[] = {
		"stall@*:p=0.01,for=1.5stale", "stop@*:p=0.01,for=2s", "crash@*:p=0.01", "errno@fs/rename:p=0.1,err=EPERM",
		"short-write:p=0.2", "sweep:every=1ms", "skew:by=+500ms", "coarse-mtime", "pid-reuse",
	};
	for (const char *f : faults) {
		ScratchDir d;
		CmdResult r = lockstorm(std::string("run -p mkdir-owner -w update -n 3 -d 1s --time-scale 0.01 -q --respawn "
						    "--fault '") + f + "' -o " + d.sub("out"));
		EXPECT_TRUE(r.status == 0 || r.status == 1) << f << "\n" << r.err;
		EXPECT_EQ(waitpid(sib, NULL, WNOHANG), 0) << "the sibling died under " << f;
	}
	{
		ScratchDir d;
		Bg run("run -p mkdir-owner -n 3 -d 30s --fault 'stop@*:p=0.05,for=1h' -o " + d.sub("out"), d.sub("stdout"));
		ASSERT_TRUE(run.wait_for(RUN_STARTED)) << run.errtext;
		kill(run.pid, SIGTERM);
		EXPECT_EQ(run.finish(), 4) << run.errtext;
		EXPECT_EQ(waitpid(sib, NULL, WNOHANG), 0) << "the sibling died with the interrupt";
	}
	kill(sib, SIGKILL);
	waitpid(sib, NULL, 0);
}
