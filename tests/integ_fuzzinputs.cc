/* integ_fuzzinputs - every input that once broke a parser (tests/fuzz/regress/,
 * README there) through the real binary: exit 2 with a one-line reason, or a
 * clean verdict where the input is valid; never a sanitizer report (ci/test
 * runs this suite against the ASan + UBSan build too).  Plus the bounds that
 * run.json's loader gives the numbers in it. */
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string REGRESS = std::string(LS_SOURCE_DIR) + "/tests/fuzz/regress";

static bool one_line(const std::string &s)
{
	return !s.empty() && s.find('\n') == s.size() - 1;
}

static bool starts_with(const std::string &s, const std::string &p)
{
	return s.compare(0, p.size(), p) == 0;
}

static const char RUN_JSON[] = "{\"schema\":\"lockstorm-run/1\",\"protocols\":[\"flock\"],\"workload\":\"update\","
			       "\"workers\":1,\"ops\":1,\"seed\":1,\"time_scale\":1.0}";

/* An output folder with this run.json and (optionally) one worker journal. */
static CmdResult check_dir(const ScratchDir &d, const std::string &run_json, const std::string &journal = "")
{
	put(d.sub("run.json"), run_json);
	if (!journal.empty()) {
		mkdir(d.sub("journal").c_str(), 0755);
		put(d.sub("journal/w0000.bin"), journal);
	}
	return run_cmd(BIN + " check -q '" + d.path + "'");
}

TEST(FuzzInputs, EveryRegressionInputIsRefusedOrJudgedCleanly)
{
	std::vector<std::string> files = entries(REGRESS);
	unsigned tried = 0;
	for (const std::string &name : files) {
		if (name == "README.md")
			continue;
		const std::string path = REGRESS + "/" + name;
		CmdResult r;
		SCOPED_TRACE(name);
		if (starts_with(name, "cex-")) {
			r = run_cmd(BIN + " replay '" + path + "'");
			EXPECT_EQ(r.status, 2) << r.err;
			EXPECT_TRUE(one_line(r.err)) << r.err;
		} else if (starts_with(name, "fault-")) {
			r = run_cmd(BIN + " run -q -p flock -n 1 --ops 1 --fault \"$(cat '" + path + "')\"");
			EXPECT_EQ(r.status, 2) << r.err;
			EXPECT_TRUE(one_line(r.err)) << r.err;
		} else if (starts_with(name, "runjson-")) {
			ScratchDir d;
			r = check_dir(d, slurp(path), std::string(64, '\0'));
			EXPECT_EQ(r.status, 2) << r.err;
			EXPECT_TRUE(one_line(r.err)) << r.err;
		} else if (starts_with(name, "journal-")) {
			ScratchDir d;
			r = check_dir(d, RUN_JSON, slurp(path));
			/* a journal is data to judge: a verdict (pass, fail, incomplete) or a refusal */
			EXPECT_TRUE(r.status == 0 || r.status == 1 || r.status == 2 || r.status == 4) << r.status << r.err;
			if (r.status == 2) {
				EXPECT_TRUE(one_line(r.err)) << r.err;
			}
		} else if (starts_with(name, "manifest-")) {
			/* a user's adapter refused: the unknown-adapter line says why, in one line */
			ScratchDir d;
			mkdir(d.sub("my-lock").c_str(), 0755);
			put(d.sub("my-lock/adapter.json"), slurp(path));
			r = run_cmd("LOCKSTORM_ADAPTERS='" + d.path + "' " + BIN + " run -q -p ext:my-lock -n 1 --ops 1");
			EXPECT_EQ(r.status, 2) << r.err;
			EXPECT_TRUE(one_line(r.err)) << r.err;
			EXPECT_NE(r.err.find("skipped"), std::string::npos) << r.err;
		} else {
			ADD_FAILURE() << "no rule for " << name << " (name it cex-, fault-, runjson-, journal- or manifest-)";
			continue;
		}
		EXPECT_EQ(r.err.find("runtime error"), std::string::npos) << r.err;
		EXPECT_EQ(r.err.find("Sanitizer"), std::string::npos) << r.err;
		tried++;
	}
	EXPECT_GE(tried, 8u);
}

/* run.json's numbers are bounded as the options bound them. */
TEST(FuzzInputs, RunJsonNumbersOutOfBoundsAreRefusedInOneLine)
{
	const struct {
		const char *from, *to, *want;
	} cases[] = {
		{ "\"ops\":1", "\"duration_ms\":34444444444444444444", "" },
		{ "\"ops\":1", "\"duration_ms\":2592000001", "duration_ms" },
		{ "\"ops\":1", "\"duration_ms\":-5", "duration_ms" },
		{ "\"ops\":1", "\"duration_ms\":1.5e300", "duration_ms" },
		{ "\"workers\":1", "\"workers\":0", "workers" },
		{ "\"workers\":1", "\"workers\":4097", "workers" },
		{ "\"workers\":1", "\"workers\":\"1\"", "workers" },
		{ "\"time_scale\":1.0", "\"time_scale\":1e308", "time_scale" },
		{ "\"time_scale\":1.0", "\"time_scale\":0", "time_scale" },
		{ "\"time_scale\":1.0", "\"time_scale\":1.0,\"params\":[\"nokv\"]", "params" },
		{ "\"time_scale\":1.0", "\"time_scale\":1.0,\"faults\":[7]", "faults" },
		{ "\"time_scale\":1.0", "\"time_scale\":1.0,\"faults\":[\"stop:for=34444444444444444444ms\"]", "for" },
	};
	for (const auto &c : cases) {
		std::string j = RUN_JSON;
		size_t at = j.find(c.from);
		ASSERT_NE(at, std::string::npos);
		j.replace(at, strlen(c.from), c.to);
		SCOPED_TRACE(j);
		ScratchDir d;
		CmdResult r = check_dir(d, j, std::string(64, '\0'));
		EXPECT_EQ(r.status, 2) << r.err;
		EXPECT_TRUE(one_line(r.err)) << r.err;
		EXPECT_NE(r.err.find(c.want), std::string::npos) << r.err;
	}
}

/* The bounds refuse nothing a real run writes. */
TEST(FuzzInputs, RunJsonOfARealRunStillLoads)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -q -p mkdir-owner -n 2 --ops 3 --param stale_ms=2500 --time-scale 0.5 "
				    "--fault 'stall@fs/mkdir:p=0.1,for=1.5stale' -o '" + d.sub("out") + "'");
	ASSERT_EQ(r.status, 0) << r.err;
	r = run_cmd(BIN + " check -q '" + d.sub("out") + "'");
	EXPECT_EQ(r.status, 0) << r.err;
}
