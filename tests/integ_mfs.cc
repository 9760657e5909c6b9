/*
 * integ_mfs.cc - the modelled file system end to end: every kept
 * counterexample (docs/cex/, scenarios/NAME.cex.json: found on the real file
 * system, before the model) and every one `explore --all` writes replays to
 * the same steps and verdict whatever the host directory (/dev/shm, /tmp);
 * --fs is recorded and honoured; bad --fs is a usage error.
 */
#include <dirent.h>
#include <gtest/gtest.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + untimed(args));
}

static std::vector<std::string> files(const std::string &dir, const std::string &suffix)
{
	std::vector<std::string> v;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return v;
	while (struct dirent *de = readdir(d)) {
		std::string n = de->d_name;
		if (n.size() > suffix.size() && n.substr(n.size() - suffix.size()) == suffix)
			v.push_back(dir + "/" + n);
	}
	closedir(d);
	return v;
}

static std::vector<std::string> hosts()
{
	std::vector<std::string> h;
	for (const char *d : { "/dev/shm", "/tmp" })
		if (access(d, W_OK) == 0)
			h.push_back(d);
	return h;
}

/* FILE replays to FAIL with the same steps in every host directory, and the same story. */
static void replays_everywhere(const std::string &file)
{
	std::string first;
	for (const std::string &h : hosts()) {
		CmdResult r = lockstorm("replay " + file + " -q --dir " + h);
		EXPECT_EQ(r.status, 1) << file << " in " << h << ": " << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << file << " in " << h << ": " << r.out;
		if (first.empty())
			first = r.out;
		else
			EXPECT_EQ(r.out, first) << file << ": the story differs in " << h;
	}
}

TEST(IntegMfs, KeptCounterexamplesReplayOnEveryHost)
{
	std::vector<std::string> all = files(std::string(LS_SOURCE_DIR) + "/docs/cex", ".json");
	for (const std::string &f : files(std::string(LS_SOURCE_DIR) + "/scenarios", ".cex.json"))
		all.push_back(f);
	ASSERT_GE(all.size(), 10u);
	for (const std::string &f : all)
		replays_everywhere(f);
}

TEST(IntegMfs, WhatExploreAllWritesReplaysOnEveryHost)
{
	ScratchDir out;
	CmdResult r = lockstorm("explore -p lockfile-legacy -n 3 --ops 2 --all -q --schedules 400 --time-budget 120s "
				"--dir /tmp -o " + out.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	std::vector<std::string> cex = files(out.path, ".json");
	ASSERT_GE(cex.size(), 1u);
	for (const std::string &f : cex) {
		std::string body = run_cmd("/bin/cat " + f).out;
		EXPECT_NE(body.find("\"filesystem\": \"model:reuse=immediate,"), std::string::npos) << f;
		replays_everywhere(f);
	}
}

TEST(IntegMfs, FsOptionIsRecordedAndHonoured)
{
	ScratchDir out;
	CmdResult r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 -q --fs model:tmpfs,time=2s -o " + out.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	std::vector<std::string> cex = files(out.path, ".json");
	ASSERT_EQ(cex.size(), 1u);
	std::string body = run_cmd("/bin/cat " + cex[0]).out;
	EXPECT_NE(body.find("\"filesystem\": \"model:reuse=never,btime=yes,readdir=snapshot,time=2s,"), std::string::npos)
		<< body;
	replays_everywhere(cex[0]);
	/* the real file system is still there */
	ScratchDir out2;
	r = lockstorm("explore -p mkdir-legacy -n 3 --ops 2 -q --fs real -o " + out2.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	cex = files(out2.path, ".json");
	ASSERT_EQ(cex.size(), 1u);
	body = run_cmd("/bin/cat " + cex[0]).out;
	EXPECT_NE(body.find("\"filesystem\": \"real\""), std::string::npos) << body;
	r = lockstorm("replay -q " + cex[0]);
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	for (const char *bad : { "--fs ext4", "--fs model:reuse=sometimes", "--fs model:btime" }) {
		r = lockstorm(std::string("explore -p mkdir-legacy ") + bad);
		EXPECT_EQ(r.status, 2) << bad;
		EXPECT_EQ(r.err.rfind("lockstorm", 0), 0u) << bad << ": " << r.err;
	}
}

/* The power-loss choice: quiver's journal append (appendFileSync, no fsync)
 * loses an acknowledged event when the power fails; the control that fsyncs
 * each append (and the folder that got the new journal) keeps every one.
 * Both under a real lock, so nothing else can lose an event. */
TEST(IntegMfs, PowerLossDropsAnUnsyncedAppendAndKeepsASyncedOne)
{
	const std::string args = "explore -p flock -w append --param locked=1 --param rev=append -n 2 --ops 2 "
				 "--max-faults all=0,power-loss=1 -q -s 1 --schedules 2000 --time-budget 10m";
	ScratchDir out;
	CmdResult r = lockstorm(args + " --param durable=0 -o " + out.path);
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("violated: journal-seq"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("appends seq 1"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("the power fails: every worker dies"), std::string::npos) << r.out;
	/* the machine comes back: the killed worker starts again, and its restart is judged
	 * (it appends seq 1 anew on the journal that lost it) */
	EXPECT_NE(r.out.find("starts again as a new process"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("both appended seq 1"), std::string::npos) << r.out;
	std::vector<std::string> cex = files(out.path, ".json");
	ASSERT_EQ(cex.size(), 1u);
	EXPECT_NE(run_cmd("/bin/cat " + cex[0]).out.find("\"power-loss\""), std::string::npos);
	replays_everywhere(cex[0]);
	ScratchDir out2;
	r = lockstorm(args + " --param durable=1 -o " + out2.path);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("verdict: PASS"), std::string::npos) << r.out;
	/* a choice of the model alone */
	r = lockstorm("explore -p flock -w append --max-faults power-loss=1 --fs real");
	EXPECT_EQ(r.status, 2);
	EXPECT_NE(r.err.find("modelled file system"), std::string::npos) << r.err;
}
