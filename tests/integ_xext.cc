/*
 * integ_xext.cc - `lockstorm explore -p ext:NAME` and `lockstorm replay` of
 * its counterexamples: the real libraries under the step scheduler
 * (explore/xext*.c, adapters/lib/lsexplore.js, adapters/lib/pyexplore, and
 * for C adapters the preload seam adapters/lib/lsexplore*.c).
 *
 * Fixed seeds and kept counterexamples, no timing: a kept counterexample
 * must replay to the same steps and the same violation every time; a
 * schedule list whose seed is known to reach the takeover race must reach
 * it; the kernel-lock and filelock adapters must pass their schedules.  The
 * Node tests skip when node or the npm packages are missing.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>
#include <unistd.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
/* seed 3 reaches proper-lockfile's removal by name at its 2nd schedule (as found) */
#define XEXT_SEED "3"
#define XEXT_SCHEDULES "2"
static const std::string SRC = LS_SOURCE_DIR;

static std::string node_missing(const char *pkg)
{
	if (run_cmd("node --version").status != 0)
		return "node";
	if (access((SRC + "/adapters/node/node_modules/" + pkg + "/package.json").c_str(), R_OK) != 0)
		return std::string("npm package ") + pkg;
	return "";
}

static std::string kept(const char *name)
{
	return SRC + "/tests/adapters/xext-" + name + ".cex.json";
}

/* The kept takeover race replays to its saved steps and violation, three times in a row. */
static void replays_exactly(const char *lib, const char *removal)
{
	for (int i = 0; i < 3; i++) {
		ScratchDir d;
		CmdResult r = run_cmd(BIN + " replay --dir " + d.path + " " + kept(lib));
		ASSERT_EQ(r.status, 1) << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("violated: own-release: w0 removed the lock object w1 created"), std::string::npos)
			<< r.out;
		EXPECT_NE(r.out.find(removal), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("is frozen 15000 ms (1.5 stale)"), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("DIVERGED"), std::string::npos) << r.out;
	}
}

TEST(IntegXext, ProperLockfileKeptRaceReplaysExactly)
{
	std::string why = node_missing("proper-lockfile");
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	replays_exactly("proper-lockfile", "w0 proper-lockfile rmdir state.json.lock: ok -> released");
}

TEST(IntegXext, NpmLockfileKeptRaceReplaysExactly)
{
	std::string why = node_missing("lockfile");
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	replays_exactly("npm-lockfile", "w0 npm-lockfile unlink state.json.lock: ok -> released");
}

/* Teeth: without its choices the same file is a run where nobody is frozen:
 * the steps differ from the saved ones (exit 5), no violation is claimed. */
TEST(IntegXext, ReplayWithoutTheChoicesDiverges)
{
	std::string why = node_missing("proper-lockfile");
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	ScratchDir d;
	json_t *root = json_load_file(kept("proper-lockfile").c_str(), 0, NULL);
	ASSERT_TRUE(root);
	json_object_set_new(root, "choices", json_array());
	ASSERT_EQ(json_dump_file(root, d.sub("cut.json").c_str(), 0), 0);
	json_decref(root);
	CmdResult r = run_cmd(BIN + " replay --dir " + d.path + " " + d.sub("cut.json"));
	EXPECT_EQ(r.status, 5) << r.out << r.err;
	EXPECT_NE(r.out.find("steps: DIVERGED"), std::string::npos) << r.out;
}

/* The search itself reaches the race on a seed known to, and its file replays. */
TEST(IntegXext, ExploreFindsProperLockfileTakeover)
{
	std::string why = node_missing("proper-lockfile");
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " explore -p ext:proper-lockfile -n 2 --ops 2 -s " XEXT_SEED
			      " --schedules " XEXT_SCHEDULES " --time-budget 30m --stall 1.5 --no-shrink -q --dir " + d.path + " -o " + d.sub("out"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("own-release violated"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("proper-lockfile rmdir state.json.lock: ok"), std::string::npos) << r.out;
	CmdResult p = run_cmd(BIN + " replay --dir " + d.path + " " + d.sub("out/cex-1.json"));
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
}

/* A kernel lock and py-filelock keep every invariant over their schedules. */
TEST(IntegXext, Flock1AndPyFilelockPass)
{
	for (const char *lib : { "flock1", "py-filelock" }) {
		if (!strcmp(lib, "py-filelock") && run_cmd("/usr/bin/python3 -c 'import filelock'").status != 0)
			continue;
		if (!strcmp(lib, "flock1") && run_cmd("flock --version").status != 0)
			continue;
		ScratchDir d;
		CmdResult r = run_cmd(BIN + " explore -p ext:" + lib + " -n 2 --ops 2 --schedules 4 --time-budget 30m -q --dir " + d.path +
				      " -o " + d.sub("out"));
		EXPECT_EQ(r.status, 0) << lib << "\n" << r.out << r.err;
		EXPECT_NE(r.out.find("no violation: 4 schedules"), std::string::npos) << r.out;
		EXPECT_FALSE(exists(d.sub("out/cex-1.json")));
	}
}

/* A fault kind that is a choice of the external explorer only when asked
 * for: with OPTION, LIB's 2 x 2 search keeps every invariant over its
 * SCHEDULES and at least one trace line shows MARK; without it, none does. */
static int lines_with(const std::string &trace, const std::string &mark)
{
	int n = 0;
	for (size_t at = 0; (at = trace.find(mark, at)) != std::string::npos; at++)
		n++;
	return n;
}

static void a_choice_when_asked_for(const std::string &lib, int schedules, const std::string &option,
				    const std::string &mark, const std::string &common = "")
{
	ScratchDir d;
	const std::string cmd = "LOCKSTORM_XEXT_TRACE=1 " + BIN + " explore -p ext:" + lib + " -n 2 --ops 2 -s 1 --schedules " +
				std::to_string(schedules) + " --time-budget 30m -q --dir " + d.path + " -o " + d.sub("out") + " " + common;
	CmdResult r = run_cmd(cmd + " " + option);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("no violation: " + std::to_string(schedules) + " schedules"), std::string::npos) << r.out;
	EXPECT_GT(lines_with(r.err, mark), 0) << r.err;
	r = run_cmd(cmd);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(lines_with(r.err, mark), 0) << r.err;
}

/* A crash: the adapter's process group is killed before one of its calls; a
 * kernel lock (flock1) is released with its holder, so the other worker
 * takes it and every invariant holds. */
TEST(IntegXext, CrashesAreChoicesWhenAskedFor)
{
	if (run_cmd("flock --version").status != 0)
		GTEST_SKIP() << "no flock(1)";
	a_choice_when_asked_for("flock1", 30, "--max-crashes 1", "is killed (SIGKILL) before flock1 ");
}

/* An errno (--max-faults errno=N): the library's call is not made and fails
 * with it, as Node's or Python's own error; py-filelock keeps every
 * invariant under them. */
TEST(IntegXext, ErrnosAreChoicesWhenAskedFor)
{
	if (run_cmd("/usr/bin/python3 -c 'import filelock'").status != 0)
		GTEST_SKIP() << "no python3-filelock";
	a_choice_when_asked_for("py-filelock", 40, "--max-faults errno=1", ", failed by lockstorm with E");
}

/* Each kind only when named: --max-faults crash=1 gives crashes, no errnos
 * and no torn writes (before, any --max-faults gave errnos). */
TEST(IntegXext, OnlyTheNamedKindsAreChoices)
{
	if (run_cmd("/usr/bin/python3 -c 'import filelock'").status != 0)
		GTEST_SKIP() << "no python3-filelock";
	ScratchDir d;
	CmdResult r = run_cmd("LOCKSTORM_XEXT_TRACE=1 " + BIN + " explore -p ext:py-filelock -n 2 --ops 2 -s 1 --schedules 10 "
			      "--time-budget 30m --max-faults crash=1 --dir " + d.path + " -o " + d.sub("out"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.err.find("crashes <= 1, errnos <= 0, short writes <= 0, split writes <= 0"), std::string::npos) << r.err;
	EXPECT_EQ(lines_with(r.err, "failed by lockstorm with"), 0) << r.err;
	EXPECT_EQ(lines_with(r.err, "bytes land"), 0) << r.err;
}

/* A torn write (--max-faults short-write=N): only the first 10 bytes of a
 * write the library makes land, then it fails with ENOSPC, as the language's
 * own error.  The helpers' update writes a temporary file and renames it, so
 * a torn one is never published: py-filelock (Python's os.write) and a Node
 * adapter from `adapter new` (fs.promises.writeFile) keep every invariant. */
TEST(IntegXext, ShortWritesAreChoicesWhenAskedFor)
{
	const std::string mark = " (the disk fills mid-write, only its first 10 bytes land): ENOSPC";
	if (run_cmd("/usr/bin/python3 -c 'import filelock'").status == 0)
		a_choice_when_asked_for("py-filelock", 10, "--max-faults short-write=1", mark);
	if (run_cmd("node --version").status != 0)
		GTEST_SKIP() << "no node";
	ScratchDir a;
	CmdResult made = run_cmd(BIN + " adapter new my-node --lang node --dir " + a.path);
	ASSERT_EQ(made.status, 0) << made.out << made.err;
	a_choice_when_asked_for("my-node", 6, "--max-faults short-write=1", mark, "--adapters " + a.path);
}

/* A split write (--max-faults split-write=N): its first 10 bytes land, the
 * writer pauses (the shortest --stall multiple of its stale age) while the
 * others go on, and the rest lands as a call of its own: in Python's
 * os.write, and in Node's fs.writeSync on a descriptor (a sync call waits
 * through both parts). */
TEST(IntegXext, SplitWritesAreChoicesWhenAskedFor)
{
	if (run_cmd("/usr/bin/python3 -c 'import filelock'").status == 0)
		a_choice_when_asked_for("py-filelock", 10, "--max-faults split-write=1",
					": its first 10 bytes land, then w");
	if (run_cmd("node --version").status != 0)
		GTEST_SKIP() << "no node";
	a_choice_when_asked_for("torn-node", 8, "--max-faults split-write=1", " write, the rest of state.json: ok",
				"--adapters " + SRC + "/tests/adapters/torn");
}

/* Teeth: an adapter that writes the state in place (tests/adapters/torn)
 * is caught by a torn write: the state no longer parses.  The search finds
 * it with the option and not without; the counterexample records the choice
 * and replays to the same steps and verdict. */
static void torn_in_place_is_caught(const std::string &lib)
{
	ScratchDir d;
	const std::string ad = " --adapters " + SRC + "/tests/adapters/torn";
	const std::string cmd = BIN + " explore -p ext:" + lib + ad + " -n 2 --ops 2 -s 1 --schedules 10 --time-budget 30m --max-stalls 0 -q --dir " +
				d.path + " -o " + d.sub("out");
	CmdResult r = run_cmd(cmd + " --max-faults short-write=1");
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find(" write state.json (the disk fills mid-write, only its first 10 bytes land): ENOSPC"),
		  std::string::npos) << r.out;
	EXPECT_NE(r.out.find("state-intact"), std::string::npos) << r.out;
	json_t *cex = json_load_file(d.sub("out/cex-1.json").c_str(), 0, NULL);
	ASSERT_TRUE(cex);
	std::string kinds, inv = json_string_value(json_object_get(cex, "invariant"));
	json_t *ch = json_object_get(cex, "choices");
	for (size_t i = 0; i < json_array_size(ch); i++)
		kinds += std::string(json_string_value(json_object_get(json_array_get(ch, i), "do"))) + " ";
	json_decref(cex);
	EXPECT_NE(kinds.find("short-write"), std::string::npos) << kinds;
	for (int i = 0; i < 2; i++) {
		CmdResult p = run_cmd(BIN + " replay" + ad + " --dir " + d.path + " " + d.sub("out/cex-1.json"));
		EXPECT_EQ(p.status, 1) << p.out << p.err;
		EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
		EXPECT_NE(p.out.find("verdict: FAIL (" + inv + ")"), std::string::npos) << p.out;
		EXPECT_NE(p.out.find("the disk fills mid-write"), std::string::npos) << p.out;
	}
	r = run_cmd(cmd);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("no violation: 10 schedules"), std::string::npos) << r.out;
}

TEST(IntegXext, ATornInPlaceWriteIsCaughtAndReplaysPython)
{
	torn_in_place_is_caught("torn-py");
}

/* The same write through a Python file object, open(STATE, "w").write(...)
 * (torn-pyfile): the write(2) its close makes is a step the explorer tears.
 * Before file objects wrote through the seam, the search found nothing. */
TEST(IntegXext, ATornInPlaceWriteIsCaughtAndReplaysPythonFileObject)
{
	torn_in_place_is_caught("torn-pyfile");
}

/* The Python seam's file objects, against a fake explorer
 * (tests/pyexplore_fileobj.py): a file opened for writing in the store
 * writes through os.write, one step per write(2) its buffer makes (a flush,
 * a close that flushes, an unbuffered write), tearable; text and binary
 * modes, encodings, with blocks, read, seek, truncate, fileno and iteration
 * behave as before; pathlib (io.open) and os.fdopen of a store descriptor
 * too; reads and a file outside the store are no steps. */
TEST(IntegXext, PythonFileObjectsWriteThroughTheSeam)
{
	CmdResult r = run_cmd("/usr/bin/python3 " + SRC + "/tests/pyexplore_fileobj.py " + SRC + "/adapters/lib/pyexplore");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(r.out.find("ok 13 cases"), std::string::npos) << r.out << r.err;
}

TEST(IntegXext, ATornInPlaceWriteIsCaughtAndReplaysNode)
{
	if (run_cmd("node --version").status != 0)
		GTEST_SKIP() << "no node";
	torn_in_place_is_caught("torn-node");
}

/* proper-lockfile's takeover race through a slow write instead of a stall:
 * w1's write of its temporary file pauses 15 s (--stall 1.5) after 10 bytes,
 * w0 takes the lock over past its 10 s stale age and commits, and w1's rest
 * lands and it commits too: a zombie write, which replays. */
TEST(IntegXext, ProperLockfileTakeoverThroughASplitWrite)
{
	std::string why = node_missing("proper-lockfile");
	if (!why.empty())
		GTEST_SKIP() << why << " is not installed: run ./ci/setup";
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " explore -p ext:proper-lockfile -n 2 --ops 2 -s 1 --schedules 2 --time-budget 30m --stall 1.5 --max-stalls 0 "
			      "--max-faults split-write=1 --no-shrink -q --dir " + d.path + " -o " + d.sub("out"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("zombie-write violated"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("its first 10 bytes land, then w1 pauses 15 s before the rest"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("w1 proper-lockfile writeFile, the rest of state.json.2001.tmp: ok"), std::string::npos) << r.out;
	CmdResult p = run_cmd(BIN + " replay --dir " + d.path + " " + d.sub("out/cex-1.json"));
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
	EXPECT_NE(p.out.find("verdict: FAIL (zombie-write)"), std::string::npos) << p.out;
}

/* npm's lockfile swallows every error of its unlock's unlink (its "best
 * effort"): a release whose unlink fails (an errno the explorer chose)
 * leaves the lock file, and the holder's next attempt gives up on it at its
 * wait budget, 10 s, just as it turns 10 s stale.  That was a false liveness
 * FAIL (waits-on-itself): the library reclaims any lock by age, so until its
 * stale age a left lock is what it promises (CheckerOracle.ALockAnAdapter*).
 * The kept counterexample replays the same steps, to PASS; a search with
 * errnos finds the library's real race (a stalled writer's late rename). */
TEST(IntegXext, NpmLockfilesFailedUnlinkIsNoLivenessFailure)
{
	std::string missing = node_missing("lockfile");
	if (!missing.empty())
		GTEST_SKIP() << "no " << missing;
	ScratchDir d;
	CmdResult p = run_cmd(BIN + " replay --dir " + d.path + " " + kept("npm-lockfile-unlink"));
	EXPECT_EQ(p.status, 0) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
	EXPECT_NE(p.out.find("the violation (liveness) no longer happens"), std::string::npos) << p.out;
	CmdResult r = run_cmd(BIN + " explore -p ext:npm-lockfile -n 2 --ops 2 -s 1 --max-faults errno=1 --schedules 40 "
			      "--time-budget 30m --dir " + d.path +
			      " -o " + d.sub("out"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_EQ(r.out.find("liveness violated"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("waiting on itself"), std::string::npos) << r.out;
}

TEST(IntegXext, MixedFleetIsRefused)
{
	CmdResult r = run_cmd(BIN + " explore -p ext:flock1,mkdir-owner -n 2 --ops 1");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	EXPECT_NE(r.err.find("one external adapter at a time"), std::string::npos) << r.err;
}

/* ---- C adapters, through the preload seam (liblockstorm_explore.so) ---- */

static std::string liblockfile_missing()
{
	const std::string bin = BIN.substr(0, BIN.rfind('/')) + "/adapters/ls_adapter_liblockfile";
	return access(bin.c_str(), X_OK) == 0 ? "" : "ls_adapter_liblockfile (liblockfile-dev)";
}

/* liblockfile's calls are steps: its 2 x 2 search runs its schedules (it
 * used to hang: "adapter hung"), keeps every invariant (a live holder's pid
 * keeps its lock valid, a stall included), and the same seed gives the same
 * schedules, step for step. */
TEST(IntegXext, LiblockfileExploresThroughThePreloadSeam)
{
	std::string why = liblockfile_missing();
	if (!why.empty())
		GTEST_SKIP() << why << " is not built";
	std::string trace[2];
	for (int i = 0; i < 2; i++) {
		ScratchDir d;
		CmdResult r = run_cmd("LOCKSTORM_XEXT_TRACE=1 " + BIN + " explore -p ext:liblockfile -n 2 --ops 2 -s 1 "
				      "--schedules 20 --time-budget 30m -q --dir " + d.path + " -o " + d.sub("out"));
		ASSERT_EQ(r.status, 0) << r.out << r.err;
		EXPECT_NE(r.out.find("no violation: 20 schedules"), std::string::npos) << r.out;
		trace[i] = r.err;
	}
	/* the library's own calls, with the seam's virtual pid and host in the temp name */
	EXPECT_GT(lines_with(trace[0], "liblockfile link .lk020000lockstorm state.json.lock: ok"), 0) << trace[0];
	EXPECT_GT(lines_with(trace[0], "liblockfile kill 200"), 0) << trace[0];
	EXPECT_GT(lines_with(trace[0], "the clock moves"), 0) << trace[0]; /* sleep(5) waits on the virtual clock */
	EXPECT_GT(lines_with(trace[0], "is frozen"), 0) << trace[0];
	EXPECT_EQ(trace[0], trace[1]);
}

/* The kept check-then-unlink race: w0 dies holding the lock (a crash
 * choice); w1 and w2 both read its pid, both find it dead (kill: ESRCH), w1
 * unlinks the dead lock and takes a fresh one, and w2's unlink by name
 * removes w1's.  It replays to the same steps and violation every time. */
TEST(IntegXext, LiblockfileKeptStaleRaceReplaysExactly)
{
	std::string why = liblockfile_missing();
	if (!why.empty())
		GTEST_SKIP() << why << " is not built";
	for (int i = 0; i < 3; i++) {
		ScratchDir d;
		CmdResult r = run_cmd(BIN + " replay --dir " + d.path + " " + kept("liblockfile"));
		ASSERT_EQ(r.status, 1) << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("w0 is killed (SIGKILL) before liblockfile"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("w1 liblockfile kill 2000: ESRCH"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("w2 liblockfile kill 2000: ESRCH"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("w2 liblockfile unlink state.json.lock: ok"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("violated: own-release: w2 removed the lock object w1 created"), std::string::npos)
			<< r.out;
		EXPECT_EQ(r.out.find("DIVERGED"), std::string::npos) << r.out;
	}
}

/* The second race, with no crash: w0's check stats the lock just after its
 * holder w2 released it (ENOENT: "invalid"), w2 takes a fresh one, and w0
 * unlinks it by name; w1 then links its own beside w2 (exclusion). */
TEST(IntegXext, LiblockfileKeptVanishedLockRaceReplaysExactly)
{
	std::string why = liblockfile_missing();
	if (!why.empty())
		GTEST_SKIP() << why << " is not built";
	for (int i = 0; i < 3; i++) {
		ScratchDir d;
		CmdResult r = run_cmd(BIN + " replay --dir " + d.path + " " + kept("liblockfile-vanished"));
		ASSERT_EQ(r.status, 1) << r.out << r.err;
		EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("liblockfile stat state.json.lock: ENOENT"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("w0 liblockfile unlink state.json.lock: ok"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("violated: exclusion: w1 acquired 'lock'"), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("killed"), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("DIVERGED"), std::string::npos) << r.out;
	}
}

/* The search reaches it (seed 1, its first schedule) with crashes asked
 * for, and its file replays; without crashes' ESRCH, the same schedule is
 * no race (teeth: a worker that never dies keeps its lock valid). */
TEST(IntegXext, ExploreFindsLiblockfileStaleRace)
{
	std::string why = liblockfile_missing();
	if (!why.empty())
		GTEST_SKIP() << why << " is not built";
	ScratchDir d;
	const std::string cmd = BIN + " explore -p ext:liblockfile -n 3 --ops 2 -s 1 --schedules 1 --time-budget 30m "
			        "--max-stalls 0 --no-shrink -q --dir " + d.path + " -o " + d.sub("out");
	CmdResult r = run_cmd(cmd + " --max-crashes 1");
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("own-release violated"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("liblockfile kill 2000: ESRCH"), std::string::npos) << r.out;
	CmdResult p = run_cmd(BIN + " replay --dir " + d.path + " " + d.sub("out/cex-1.json"));
	EXPECT_EQ(p.status, 1) << p.out << p.err;
	EXPECT_NE(p.out.find("steps: the same "), std::string::npos) << p.out;
	r = run_cmd(cmd);
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

/* A C adapter from `lockstorm adapter new --lang c` explores through the
 * seam too (its manifest says "seam": "preload"): its flock(2) lock keeps
 * every invariant, crashes included (the kernel drops a dead holder's lock). */
TEST(IntegXext, ACAdapterSkeletonIsExplorable)
{
	if (run_cmd("cc --version >/dev/null && pkg-config --exists jansson").status != 0)
		GTEST_SKIP() << "no C compiler or libjansson-dev";
	ScratchDir a;
	CmdResult made = run_cmd(BIN + " adapter new my-c --lang c --dir " + a.path);
	ASSERT_EQ(made.status, 0) << made.out << made.err;
	EXPECT_NE(slurp(a.sub("my-c/adapter.json")).find("\"seam\": \"preload\""), std::string::npos);
	a_choice_when_asked_for("my-c", 12, "--max-crashes 1", "is killed (SIGKILL) before my-c ", "--adapters " + a.path);
}
