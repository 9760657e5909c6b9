// The explorer's scheduler, virtual clock and shrinker, driven by scripts:
// choices in, step order out (harness/explore.h explore_script).
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <string>
#include <vector>

extern "C" {
#include "faults/fsx.h"
#include "explore/explore.h"
#include "core/sched.h"
#include "check/checker.h"
#include "check/livelock.h"
}

namespace {

// Memory the test and the forked workers share.
struct Shared {
	int64_t t[SCHED_MAX_WORKERS];
	int64_t age_ms;
	int64_t mtime_ms;
	int alive;
	int order[8];
	int norder;
};

Shared *shared()
{
	static Shared *s = static_cast<Shared *>(
		mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
	memset(s, 0, sizeof *s);
	return s;
}

std::vector<std::string> run_script(unsigned workers, void (*body)(unsigned, const char *, void *),
				    std::vector<xchoice> choices = {}, void *arg = nullptr)
{
	struct explore_script sc = {};
	sc.workers = workers;
	sc.body = body;
	sc.arg = arg;
	sc.choices = choices.data();
	sc.nchoices = choices.size();
	sc.stale_ms = 10000;
	sc.stall = 1.5;
	char **lines = nullptr;
	size_t n = 0;
	char why[256] = "";
	EXPECT_EQ(explore_script(&sc, &lines, &n, why, sizeof why), 0) << why;
	std::vector<std::string> out(lines, lines + n);
	explore_lines_free(lines, n);
	return out;
}

std::string path_in(const char *dir, const char *name)
{
	return std::string(dir) + "/" + name;
}

void own_dir(unsigned id, const char *dir, void *)
{
	std::string p = path_in(dir, id ? "a1" : "a0");
	fsx_mkdir(p.c_str(), 0777);
	fsx_rmdir(p.c_str());
}

void one_lock(unsigned, const char *dir, void *)
{
	std::string p = path_in(dir, "L");
	fsx_mkdir(p.c_str(), 0777);
	fsx_rmdir(p.c_str());
}

xchoice run_w(uint32_t at, uint8_t w)
{
	return xchoice{ at, XK_RUN, w, 0 };
}

} // namespace

TEST(ExploreScript, DefaultRunsEachWorkerUntilItStops)
{
	EXPECT_EQ(run_script(2, own_dir),
		  (std::vector<std::string>{ "w0 mkdir a0 -> ok", "w0 rmdir a0 -> ok", "w1 mkdir a1 -> ok",
					     "w1 rmdir a1 -> ok" }));
}

TEST(ExploreScript, ChoicesInStepOrderOut)
{
	// decision 1: w1 instead of w0; then the default keeps w1 until it is done
	EXPECT_EQ(run_script(2, own_dir, { run_w(1, 1) }),
		  (std::vector<std::string>{ "w0 mkdir a0 -> ok", "w1 mkdir a1 -> ok", "w1 rmdir a1 -> ok",
					     "w0 rmdir a0 -> ok" }));
	// w1 first, then back to w0 after one step
	EXPECT_EQ(run_script(2, own_dir, { run_w(0, 1), run_w(1, 0) }),
		  (std::vector<std::string>{ "w1 mkdir a1 -> ok", "w0 mkdir a0 -> ok", "w0 rmdir a0 -> ok",
					     "w1 rmdir a1 -> ok" }));
}

TEST(ExploreScript, TheOrderDecidesWhatEachStepSees)
{
	EXPECT_EQ(run_script(2, one_lock),
		  (std::vector<std::string>{ "w0 mkdir L -> ok", "w0 rmdir L -> ok", "w1 mkdir L -> ok",
					     "w1 rmdir L -> ok" }));
	EXPECT_EQ(run_script(2, one_lock, { run_w(1, 1) }),
		  (std::vector<std::string>{ "w0 mkdir L -> ok", "w1 mkdir L -> EEXIST", "w1 rmdir L -> ok",
					     "w0 rmdir L -> ENOENT" }));
}

TEST(ExploreScript, AChoiceThatCannotBeTakenFallsBackToTheDefault)
{
	// w5 does not exist; a run of w1 at a decision past the end is never reached
	EXPECT_EQ(run_script(2, own_dir, { run_w(0, 5), run_w(40, 1) }), run_script(2, own_dir));
}

TEST(ExploreScript, SameChoicesSameStepsEveryTime)
{
	std::vector<xchoice> ch = { run_w(1, 1), xchoice{ 2, XK_STALL, 0, 0 }, run_w(3, 0) };
	auto first = run_script(2, one_lock, ch);
	for (int i = 0; i < 5; i++)
		EXPECT_EQ(run_script(2, one_lock, ch), first);
}

namespace {

Shared *g_shared;

void sleep_then_note(unsigned id, const char *, void *)
{
	int64_t t0 = fsx_now_ms();
	fsx_sleep_ms(id == 0 ? 5000 : 2000);
	g_shared->t[id] = fsx_now_ms() - t0;
	g_shared->order[g_shared->norder++] = (int)id;
}

void mkdir_sleep_stat(unsigned id, const char *dir, void *)
{
	if (id)
		return;
	std::string p = path_in(dir, "L");
	fsx_mkdir(p.c_str(), 0777);
	fsx_sleep_ms(7000);
	struct fsx_stat st;
	if (fsx_stat(p.c_str(), &st) == 0) {
		g_shared->mtime_ms = st.mtime_ns / 1000000;
		g_shared->age_ms = fsx_now_ms() - g_shared->mtime_ms;
	}
}

void stat_then_note(unsigned id, const char *dir, void *)
{
	int64_t t0 = fsx_now_ms();
	struct fsx_stat st;
	fsx_stat(dir, &st);
	g_shared->t[id] = fsx_now_ms() - t0;
}

void read_both_clocks(unsigned id, const char *dir, void *)
{
	struct fsx_stat st;
	fsx_stat(dir, &st); /* a step: a decision at which the skew may come */
	fsx_stat(dir, &st);
	g_shared->t[2 * id] = fsx_now_ms();
	g_shared->t[2 * id + 1] = fsx_now_us() / 1000;
}

void mkdir_then_check_peer(unsigned id, const char *dir, void *)
{
	std::string p = path_in(dir, id ? "a1" : "a0");
	fsx_mkdir(p.c_str(), 0777);
	fsx_rmdir(p.c_str());
	if (id == 1)
		g_shared->alive = fsx_pid_alive(fsx_getpid() - 1); // w0's pid
}

} // namespace

TEST(ExploreClock, ASleepEndsWhenEveryoneElseWaitsAndTimeIsVirtual)
{
	g_shared = shared();
	run_script(2, sleep_then_note);
	EXPECT_EQ(g_shared->t[0], 5000);
	EXPECT_EQ(g_shared->t[1], 2000);
	ASSERT_EQ(g_shared->norder, 2);
	EXPECT_EQ(g_shared->order[0], 1); // the shorter sleep wakes first
	EXPECT_EQ(g_shared->order[1], 0);
}

TEST(ExploreClock, FileTimesFollowTheVirtualClock)
{
	g_shared = shared();
	run_script(1, mkdir_sleep_stat);
	EXPECT_EQ(g_shared->mtime_ms, SCHED_EPOCH_MS); // made at virtual 0
	EXPECT_EQ(g_shared->age_ms, 7000);
}

/* A skewed worker's clock is one clock, read in ms or in us (fsx_now_us
 * ignored the skew, so a wait measured in us and an age in ms disagreed). */
TEST(ExploreClock, ASkewedClockReadsTheSameInMsAndUs)
{
	g_shared = shared();
	run_script(1, read_both_clocks);
	const int64_t plain = g_shared->t[0];
	EXPECT_EQ(g_shared->t[1], plain);
	run_script(1, read_both_clocks, { xchoice{ 0, XK_SKEW, 0, 0 } });
	EXPECT_NE(g_shared->t[0], plain) << "the skew was not taken";
	EXPECT_EQ(g_shared->t[1], g_shared->t[0]);
}

TEST(ExploreClock, AStallJumpsTheClockPastTheStaleAge)
{
	g_shared = shared();
	auto lines = run_script(1, stat_then_note, { xchoice{ 0, XK_STALL, 0, 0 } });
	ASSERT_FALSE(lines.empty());
	EXPECT_EQ(lines[0], "w0 stalls 15 s (1.5 x its stale age); the clock jumps to 15.000 s");
	EXPECT_EQ(g_shared->t[0], 15000);
}

namespace {

void pause_probe(unsigned id, const char *dir, void *)
{
	if (id == 0) { /* one step, then note when it got to go on */
		struct fsx_stat st;
		fsx_stat(dir, &st);
		g_shared->t[0] = fsx_now_ms() - SCHED_EPOCH_MS;
		g_shared->order[g_shared->norder++] = 0;
		return;
	}
	for (int i = 0; i < 4; i++) { /* w1 sleeps 5 s at a time through the pause */
		fsx_sleep_ms(5000);
		g_shared->order[g_shared->norder++] = 10 + (int)(fsx_now_ms() - SCHED_EPOCH_MS) / 1000;
	}
}

} // namespace

TEST(ExploreClock, APauseLetsTheOthersGoOnThroughTheTimesBetween)
{
	g_shared = shared();
	/* w0 paused 15 s at its first step: w1 wakes at 5, 10 and 15 s; w0 goes on at 15 s */
	auto lines = run_script(2, pause_probe, { xchoice{ 0, XK_PAUSE, 0, 0 } });
	ASSERT_FALSE(lines.empty());
	EXPECT_EQ(lines[0], "w0 pauses 15 s (1.5 x its stale age) while the others go on, until 15.000 s");
	EXPECT_EQ(g_shared->t[0], 15000);
	ASSERT_GE(g_shared->norder, 3);
	EXPECT_EQ(g_shared->order[0], 15); /* w1 at 5 s */
	EXPECT_EQ(g_shared->order[1], 20); /* w1 at 10 s */
	/* a stall instead: the clock jumps for everyone, w1's first wake-up is already past 15 s */
	g_shared = shared();
	run_script(2, pause_probe, { xchoice{ 0, XK_STALL, 0, 0 } });
	EXPECT_EQ(g_shared->t[0], 15000);
	EXPECT_GE(g_shared->order[0] == 0 ? g_shared->order[1] : g_shared->order[0], 10 + 15);
}

TEST(ExploreClock, ACrashIsASigkillAtTheStepAndThePidIsGone)
{
	g_shared = shared();
	g_shared->alive = -1;
	auto lines = run_script(2, mkdir_then_check_peer, { xchoice{ 1, XK_CRASH, 0, 0 } });
	ASSERT_GE(lines.size(), 3u);
	EXPECT_EQ(lines[0], "w0 mkdir a0 -> ok");
	EXPECT_EQ(lines[1], "w0 is killed (SIGKILL) before its rmdir a0");
	EXPECT_EQ(lines[2], "w1 mkdir a1 -> ok");
	EXPECT_EQ(g_shared->alive, 0);
	// the same moment without the crash: w0 waits at its rmdir, alive
	g_shared->alive = -1;
	run_script(2, mkdir_then_check_peer, { run_w(1, 1) });
	EXPECT_EQ(g_shared->alive, 1);
	// after w0 finished its work it counts as gone, as an exited process would
	g_shared->alive = -1;
	run_script(2, mkdir_then_check_peer);
	EXPECT_EQ(g_shared->alive, 0);
}

namespace {

int holds_3_7_12(void *ctx, const void *items, size_t n)
{
	++*static_cast<int *>(ctx);
	const int *v = static_cast<const int *>(items);
	int found = 0;
	for (size_t i = 0; i < n; i++)
		found |= (v[i] == 3) | (v[i] == 7) << 1 | (v[i] == 12) << 2;
	return found == 7;
}

int never_empty(void *, const void *, size_t n)
{
	return n > 0;
}

} // namespace

TEST(ExploreDdmin, ShrinksToTheItemsThePredicateNeeds)
{
	std::vector<int> v;
	for (int i = 0; i < 40; i++)
		v.push_back(i);
	int calls = 0;
	size_t n = explore_ddmin(v.data(), v.size(), sizeof v[0], holds_3_7_12, &calls);
	v.resize(n);
	EXPECT_EQ(v, (std::vector<int>{ 3, 7, 12 }));
	EXPECT_LT(calls, 200);
}

TEST(ExploreDdmin, OneItemStaysWhenThePredicateNeedsOne)
{
	std::vector<int> v = { 5, 6, 7, 8 };
	size_t n = explore_ddmin(v.data(), v.size(), sizeof v[0], never_empty, nullptr);
	EXPECT_EQ(n, 1u);
}

// no-livelock: a worker that spins inside one op without sleeping or changing
// the lock directory breaks it; one that sleeps between polls, or whose polls
// see the directory change, keeps it.
TEST(NoLivelock, ASpinWithoutSleepOrChangeBreaksItAPollingWaitKeepsIt)
{
	std::vector<ck_step> spin, poll, watched;
	for (unsigned k = 0; k < 300; k++) {
		spin.push_back(ck_step{ 1, 2, 0, 0 });                             // w1, op 2: stat, stat, ...
		poll.push_back(ck_step{ 1, 2, (uint8_t)(k % 3 == 2), 0 });         // ... and a sleep every third step
		watched.push_back(ck_step{ (uint16_t)(k % 2), 2, 0, (uint8_t)(k % 10 == 0) }); // w0 changes the directory
	}
	check_inv bad = {}, good = {}, seen = {};
	check_livelock(spin.data(), spin.size(), 200, &bad);
	EXPECT_EQ(bad.violations, 1u); // one per (worker, op), not one per step past the limit
	ASSERT_EQ(bad.nex, 1u);
	EXPECT_EQ(bad.ex[0].worker[0], 1);
	EXPECT_EQ(bad.ex[0].seq[0], 0u);
	EXPECT_EQ(bad.ex[0].seq[1], 200u);
	EXPECT_NE(std::string(bad.ex[0].text).find("w1 took 201 steps inside op 2"), std::string::npos) << bad.ex[0].text;
	check_livelock(poll.data(), poll.size(), 200, &good);
	EXPECT_EQ(good.violations, 0u);
	check_livelock(watched.data(), watched.size(), 200, &seen);
	EXPECT_EQ(seen.violations, 0u);
	// a new op starts the count again
	std::vector<ck_step> ops;
	for (unsigned k = 0; k < 300; k++)
		ops.push_back(ck_step{ 0, k / 150, 0, 0 });
	check_inv two = {};
	check_livelock(ops.data(), ops.size(), 200, &two);
	EXPECT_EQ(two.violations, 0u);
}
