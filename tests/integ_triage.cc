/*
 * integ_triage.cc - replay says what happened (the same steps or where they
 * diverge, exit 5), and `lockstorm triage` turns a failing torture run into a
 * counterexample that replays every time, or says it did not reproduce it.
 *
 * Torture runs here try a bounded list of seeds until one fails (asserting
 * only that some seed does); what is asserted exactly is the triage and the
 * replays, which do not depend on the machine's timing.
 */
#include <gtest/gtest.h>
#include <jansson.h>

#include <string>
#include <vector>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string SRC = LS_SOURCE_DIR;

/* A copy of a JSON file with EDIT applied. */
static std::string edited_copy(const ScratchDir &d, const std::string &from, const std::string &name,
			       void (*edit)(json_t *))
{
	json_error_t err;
	json_t *o = json_load_file(from.c_str(), 0, &err);
	EXPECT_TRUE(o) << from << ": " << err.text;
	if (!o)
		return "";
	edit(o);
	std::string to = d.sub(name);
	EXPECT_EQ(json_dump_file(o, to.c_str(), JSON_INDENT(1)), 0);
	json_decref(o);
	return to;
}

static const std::string KML1 = SRC + "/docs/cex/mkdir-legacy-k-ml-1.json";

TEST(IntegReplay, AKeptCounterexampleReplaysItsStepsAndExits1)
{
	CmdResult r = run_cmd(BIN + " replay " + KML1);
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_NE(r.out.find("steps: the same "), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("verdict: FAIL (exclusion)"), std::string::npos) << r.out;
}

TEST(IntegReplay, AnEditedStepExits5SayingWhichStepAndHow)
{
	ScratchDir d;
	std::string f = edited_copy(d, KML1, "edited.json", [](json_t *o) {
		json_array_set_new(json_object_get(o, "steps"), 4, json_string("w9 mkdir elsewhere -> ok"));
	});
	CmdResult r = run_cmd(BIN + " replay " + f);
	EXPECT_EQ(r.status, 5) << r.out << r.err;
	EXPECT_NE(r.out.find("steps: DIVERGED at step 5 "), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("saved: w9 mkdir elsewhere -> ok; now: "), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("no longer happens"), std::string::npos) << r.out; /* not a fix */
}

TEST(IntegReplay, ATruncatedCounterexampleExits5)
{
	ScratchDir d;
	/* the steps cut short: the replay goes on past the saved end */
	std::string steps = edited_copy(d, KML1, "short-steps.json", [](json_t *o) {
		json_t *s = json_object_get(o, "steps");
		while (json_array_size(s) > 10)
			json_array_remove(s, json_array_size(s) - 1);
	});
	CmdResult a = run_cmd(BIN + " replay " + steps);
	EXPECT_EQ(a.status, 5) << a.out << a.err;
	EXPECT_NE(a.out.find("DIVERGED at step 11 of 10 saved (the saved steps end at step 10"), std::string::npos)
		<< a.out;
	/* the choices cut short: the stall is gone, the schedule is another one */
	std::string choices = edited_copy(d, KML1, "short-choices.json", [](json_t *o) {
		json_t *c = json_object_get(o, "choices");
		while (json_array_size(c) > 2)
			json_array_remove(c, json_array_size(c) - 1);
	});
	CmdResult b = run_cmd(BIN + " replay " + choices + " --json " + d.sub("b.json"));
	EXPECT_EQ(b.status, 5) << b.out << b.err;
	EXPECT_NE(b.out.find("steps: DIVERGED at step "), std::string::npos) << b.out;
	json_t *o = json_load_file(d.sub("b.json").c_str(), 0, nullptr);
	ASSERT_TRUE(o);
	EXPECT_TRUE(json_is_false(json_object_get(o, "same_steps")));
	EXPECT_TRUE(json_is_integer(json_object_get(o, "diverged_at")));
	EXPECT_EQ(json_integer_value(json_object_get(o, "exit")), 5);
	json_decref(o);
	/* a choice no worker can take there */
	std::string bad = edited_copy(d, KML1, "untakeable.json", [](json_t *o) {
		json_object_set_new(json_array_get(json_object_get(o, "choices"), 0), "at", json_integer(0));
		json_object_set_new(json_array_get(json_object_get(o, "choices"), 0), "w", json_integer(2));
	});
	CmdResult c = run_cmd(BIN + " replay " + bad);
	EXPECT_EQ(c.status, 2) << c.out << c.err; /* w2 of a 2-worker file: bad input, one line */
}

TEST(IntegReplay, TheRecordedDirectoryIsHonouredAndAnotherGivesTheSameSteps)
{
	ScratchDir d;
	CmdResult e = run_cmd(BIN + " explore -p mkdir-legacy -n 3 --ops 2 -q --time-budget 30m --dir " + d.path + " -o " + d.sub("x"));
	ASSERT_EQ(e.status, 1) << e.out << e.err;
	std::string cex = d.sub("x/cex-1.json");
	json_t *o = json_load_file(cex.c_str(), 0, nullptr);
	ASSERT_TRUE(o);
	const char *dir = json_string_value(json_object_get(o, "dir"));
	EXPECT_EQ(std::string(dir ? dir : ""), d.path);
	EXPECT_TRUE(json_string_value(json_object_get(o, "fs"))) << "the file system type is recorded";
	json_decref(o);
	CmdResult same = run_cmd(BIN + " replay " + cex);
	EXPECT_EQ(same.status, 1) << same.out << same.err;
	EXPECT_NE(same.out.find("dir: " + d.path + " ("), std::string::npos) << same.out;
	EXPECT_NE(same.out.find("steps: the same "), std::string::npos) << same.out;
	ScratchDir other;
	CmdResult moved = run_cmd(BIN + " replay " + cex + " --dir " + other.path);
	EXPECT_EQ(moved.status, 1) << moved.out << moved.err;
	EXPECT_NE(moved.out.find("dir: " + other.path + " ("), std::string::npos) << moved.out;
	EXPECT_NE(moved.out.find("; recorded " + d.path), std::string::npos) << moved.out;
	EXPECT_NE(moved.out.find("steps: the same "), std::string::npos) << moved.out;
	CmdResult baddir = run_cmd(BIN + " replay " + cex + " --dir " + d.sub("nope"));
	EXPECT_EQ(baddir.status, 2) << baddir.out << baddir.err;
}

/* A torture run that fails: the seeds in turn until one does (the machine decides which). */
static std::string failing_run(const ScratchDir &d, const std::string &args, const std::vector<int> &seeds)
{
	std::string tried;
	for (int s : seeds) {
		std::string out = d.sub("run-" + std::to_string(s));
		CmdResult r = run_cmd(BIN + " run " + args + " -s " + std::to_string(s) + " -q -o " + out +
				      " --dir " + d.sub("w-" + std::to_string(s)));
		if (r.status == 1)
			return out;
		tried += "seed " + std::to_string(s) + ": exit " + std::to_string(r.status) + " " + r.out + r.err;
	}
	ADD_FAILURE() << "no seed failed: " << tried;
	return "";
}

static std::string confirmed_file(const std::string &out)
{
	size_t at = out.find("confirmed: ");
	if (at == std::string::npos)
		return "";
	size_t end = out.find(" (", at);
	return out.substr(at + 11, end - at - 11);
}

static void expect_replays_10_of_10(const std::string &cex)
{
	for (int i = 0; i < 10; i++) {
		CmdResult r = run_cmd(BIN + " replay " + cex + " -q");
		ASSERT_EQ(r.status, 1) << "replay " << i + 1 << ": " << r.out << r.err;
		ASSERT_NE(r.out.find("steps: the same "), std::string::npos) << r.out;
	}
}

TEST(IntegTriage, ConfirmsTheLegacyDoflowFailureUnderStalls)
{
	ScratchDir d;
	std::string out = failing_run(d, "-p mkdir-legacy -w update -n 8 -d 5s --time-scale 0.01 --faults stalls",
				      { 1, 2, 3, 4, 5 });
	ASSERT_FALSE(out.empty());
	CmdResult t = run_cmd(BIN + " triage " + out + " --budget 60s");
	EXPECT_EQ(t.status, 1) << t.out << t.err;
	std::string cex = confirmed_file(t.out);
	ASSERT_FALSE(cex.empty()) << t.out;
	EXPECT_NE(t.out.find("(replays 10/10"), std::string::npos) << t.out;
	EXPECT_NE(t.out.find("    1. "), std::string::npos) << "the shrunk story: " << t.out;
	expect_replays_10_of_10(cex);
}

TEST(IntegTriage, ConfirmsThePidlockFailureUnderTheStandardFaults)
{
	ScratchDir d;
	std::string out = failing_run(d, "-p pidlock -w update -n 8 -d 3s --time-scale 0.01 --faults standard",
				      { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 });
	ASSERT_FALSE(out.empty());
	CmdResult t = run_cmd(BIN + " triage " + out + " --budget 60s");
	EXPECT_EQ(t.status, 1) << t.out << t.err;
	std::string cex = confirmed_file(t.out);
	ASSERT_FALSE(cex.empty()) << t.out;
	expect_replays_10_of_10(cex);
}

TEST(IntegTriage, AFlockRunMadeToFailByAFixtureIsNotReproduced)
{
	/* the `none` control's journals (always caught), relabelled as flock's: the checker fails
	 * them, but no interleaving of flock can show it */
	ScratchDir d;
	std::string out = failing_run(d, "-p none -w update -n 4 --ops 200", { 1, 2, 3, 4, 5 });
	ASSERT_FALSE(out.empty());
	std::string runjson = out + "/run.json";
	json_t *o = json_load_file(runjson.c_str(), 0, nullptr);
	ASSERT_TRUE(o);
	json_t *p = json_array();
	json_array_append_new(p, json_string("flock"));
	json_object_set_new(o, "protocols", p);
	ASSERT_EQ(json_dump_file(o, runjson.c_str(), JSON_INDENT(1)), 0);
	json_decref(o);
	CmdResult c = run_cmd(BIN + " check " + out + " -q");
	ASSERT_EQ(c.status, 1) << "the fixture fails the checker: " << c.out << c.err;
	CmdResult t = run_cmd(BIN + " triage " + out + " --budget 8s");
	EXPECT_EQ(t.status, 0) << t.out << t.err;
	EXPECT_NE(t.out.find("not reproduced within 8 s"), std::string::npos) << t.out;
	EXPECT_NE(t.out.find("(tried -n 2 --ops 2"), std::string::npos) << "what was tried: " << t.out;
	EXPECT_EQ(t.out.find("confirmed: "), std::string::npos) << t.out;
}

TEST(IntegTriage, UsageAndAPassingRun)
{
	ScratchDir d;
	EXPECT_EQ(run_cmd(BIN + " triage").status, 2);
	EXPECT_EQ(run_cmd(BIN + " triage " + d.path).status, 2); /* no run.json */
	EXPECT_EQ(run_cmd(BIN + " triage " + d.path + " --budget 0s").status, 2);
	CmdResult r = run_cmd(BIN + " run -p flock -w update -n 2 --ops 20 -q -o " + d.sub("ok"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	CmdResult t = run_cmd(BIN + " triage " + d.sub("ok"));
	EXPECT_EQ(t.status, 0) << t.out << t.err;
	EXPECT_NE(t.out.find("nothing to triage"), std::string::npos) << t.out;
}

TEST(IntegTriage, RunTriageTriagesAFailingRunAtItsEnd)
{
	ScratchDir d;
	std::string tried;
	for (int s : { 1, 2, 3, 4, 5 }) {
		std::string out = d.sub("o" + std::to_string(s));
		CmdResult r = run_cmd(BIN + " run -p mkdir-legacy -w update -n 4 -d 2s --time-scale 0.01 --faults stalls -q "
				      "--triage=60s -s " + std::to_string(s) + " -o " + out + " --dir " + d.sub("w"));
		if (r.status != 1) {
			tried += r.out + r.err;
			continue;
		}
		EXPECT_NE(r.out.find("confirmed: " + out + "/triage/cex-1.json"), std::string::npos) << r.out;
		EXPECT_TRUE(exists(out + "/triage/cex-1.json"));
		return;
	}
	ADD_FAILURE() << "no seed failed: " << tried;
}
