/* unit_harden - loaders and the checker on hostile input: run.json's bounds
 * and its params' lifetime, the counterexample loader's protocol list, the
 * checker's sums of journal durations.  (The fuzz targets in tests/fuzz find
 * such inputs; these keep the fixes.) */
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "testutil.h"

extern "C" {
#include "check/checker.h"
#include "core/journal.h"
#include "core/num.h"
#include "faults/fault.h"
#include "protocols/lock.h"
#include "run/runcfg.h"
#include "explore/xint.h"
}

namespace {

std::string run_json(const std::string &extra)
{
	return "{\"schema\":\"lockstorm-run/1\",\"protocols\":[\"mkdir-owner\"],\"workload\":\"update\","
	       "\"workers\":2,\"ops\":3,\"seed\":5,\"time_scale\":0.5" +
	       extra + "}";
}

int load(const std::string &text, run_config *cfg, std::string *why)
{
	ScratchDir d;
	put(d.sub("run.json"), text);
	char w[512] = "";
	int rc = runcfg_load(cfg, d.sub("run.json").c_str(), w, sizeof w);
	*why = w;
	return rc;
}

} // namespace

TEST(RunJson, LoadsWhatSaveWrote)
{
	static run_config cfg;
	std::string why;
	ASSERT_EQ(load(run_json(",\"params\":[\"stale_ms=2500\"],\"faults\":[\"stall:for=1.5stale\"]"), &cfg, &why), 0)
		<< why;
	EXPECT_EQ(cfg.workers, 2u);
	EXPECT_EQ(cfg.ops, 3u);
	EXPECT_EQ(cfg.seed, 5u);
	EXPECT_DOUBLE_EQ(cfg.time_scale, 0.5);
	ASSERT_EQ(cfg.nkv, 1u);
	EXPECT_STREQ(cfg.kv[0], "stale_ms=2500");
	EXPECT_EQ(cfg.faults.n, 1u);
	runcfg_unload(&cfg);
	EXPECT_EQ(cfg.nkv, 0u);
}

TEST(RunJson, RefusesNumbersNoOptionGives)
{
	const char *bad[] = {
		",\"duration_ms\":2592000001", ",\"duration_ms\":-1", ",\"duration_ms\":1e300",
		",\"duration_ms\":\"5s\"", ",\"time_scale\":1e308", ",\"time_scale\":-1",
		",\"time_scale\":\"x\"", ",\"workers\":0", ",\"workers\":1e9", ",\"params\":[\"=x\"]",
		",\"params\":[3]", ",\"faults\":[null]", ",\"faults\":[\"stop:for=3e30\"]",
		",\"faults\":[\"stall:for=nan\"]", ",\"faults\":[\"sweep:every=01e308\"]",
		",\"exec\":7", ",\"workers\":3",
	};
	for (const char *b : bad) {
		static run_config cfg;
		std::string why;
		/* (",workers":3 repeats a key: which one counts would be the reader's whim, so it is refused) */
		EXPECT_EQ(load(run_json(b), &cfg, &why), -1) << b;
		EXPECT_FALSE(why.empty()) << b;
		EXPECT_EQ(why.find('\n'), std::string::npos) << why;
		EXPECT_EQ(cfg.nkv, 0u) << b; /* a failed load keeps no params */
	}
}

TEST(RunJson, AFailedLoadFreesItsParams)
{
	static run_config cfg;
	std::string why;
	/* params are read before the faults: the failure after them must free them (LSan checks) */
	EXPECT_EQ(load(run_json(",\"params\":[\"stale_ms=2500\",\"wait_ms=100\"],\"faults\":[\"bogus\"]"), &cfg, &why), -1);
	EXPECT_EQ(cfg.nkv, 0u);
}

TEST(RunJson, UnloadLeavesParamsItDidNotMake)
{
	static run_config cfg;
	runcfg_defaults(&cfg);
	const char *given = "stale_ms=100";
	cfg.kv[cfg.nkv++] = given; /* as runcfg_parse leaves argv's strings */
	runcfg_unload(&cfg);       /* must not free() a string it never allocated */
	EXPECT_EQ(cfg.nkv, 0u);
}

namespace {

int load_cex(const std::string &text, std::string *why)
{
	ScratchDir d;
	put(d.sub("cex.json"), text);
	static xcfg cfg;
	xcfg_defaults(&cfg);
	xchoice *dev = nullptr;
	size_t ndev = 0;
	json_t *root = nullptr;
	char w[1024] = "";
	int rc = cex_load(d.sub("cex.json").c_str(), &cfg, &dev, &ndev, &root, w, sizeof w);
	free(dev);
	json_decref(root);
	*why = w;
	return rc;
}

std::string cex_with(const std::string &protocols, const std::string &extra = "")
{
	return "{\"schema\":\"lockstorm-cex/1\",\"protocols\":[" + protocols +
	       "],\"workload\":\"update\",\"workers\":2,\"ops\":1,\"choices\":[]" + extra + "}";
}

} // namespace

TEST(CexLoad, ManyProtocolsAreRefusedBeforeTheListIsBuilt)
{
	std::string many;
	for (int i = 0; i < 100; i++)
		many += std::string(i ? "," : "") + "\"mkdir-legacy-" + std::string(40, 'x') + "\"";
	std::string why;
	EXPECT_EQ(load_cex(cex_with(many), &why), -1);
	EXPECT_NE(why.find("at most 8"), std::string::npos) << why;
	EXPECT_EQ(load_cex(cex_with("\"" + std::string(5000, 'p') + "\""), &why), -1);
	EXPECT_EQ(why.find('\n'), std::string::npos);
}

TEST(CexLoad, NumbersAreBoundedAsExploresOptionsBoundThem)
{
	const char *bad[] = {
		",\"stall\":1e308", ",\"stall\":[1.5,-1]", ",\"stall\":\"x\"", ",\"max_steps\":5",
		",\"max_stalls\":-1", ",\"max_crashes\":99", ",\"seed\":\"x\"",
	};
	std::string why;
	ASSERT_EQ(load_cex(cex_with("\"mkdir-owner\""), &why), 0) << why;
	for (const char *b : bad) {
		EXPECT_EQ(load_cex(cex_with("\"mkdir-owner\"", b), &why), -1) << b;
		EXPECT_EQ(why.find('\n'), std::string::npos) << why;
	}
	/* a choice's "at" beyond 32 bits would wrap when stored */
	std::string c = cex_with("\"mkdir-owner\"");
	c.replace(c.find("\"choices\":[]"), 12, "\"choices\":[{\"at\":4294967296,\"do\":\"run\",\"w\":0}]");
	EXPECT_EQ(load_cex(c, &why), -1);
}

namespace {

jrec rec(unsigned w, int type, uint64_t seq, uint64_t ms, int64_t a = 0, int64_t b = 0, int64_t c = 0)
{
	jrec r;
	memset(&r, 0, sizeof r);
	r.type = (uint16_t)type;
	r.worker = (uint16_t)w;
	r.seq = seq;
	r.ns = (1000 + ms) * 1000000ull;
	r.a = a;
	r.b = b;
	r.c = c;
	return r;
}

check_result check(const std::vector<jrec> &v, int64_t budget)
{
	int64_t stale[1] = { LS_NEVER }, bud[1] = { budget };
	check_input in;
	memset(&in, 0, sizeof in);
	in.rec = v.data();
	in.n = v.size();
	in.workers = 1;
	in.stale_ms = stale;
	in.budget_ms = bud;
	check_result out;
	EXPECT_EQ(check_run(&in, &out), 0);
	return out;
}

} // namespace

/* A crafted journal announces stalls that add up past INT64_MAX: the sum
 * saturates (UBSan would abort the sanitized unit run on the overflow), and
 * the attempt they excuse stays excused. */
TEST(CheckerArithmetic, AnnouncedStallsSaturate)
{
	std::vector<jrec> v = {
		rec(0, EV_ATTEMPT, 1, 0),
		rec(0, EV_FAULT, 2, 1, FK_STALL, 0, INT64_MAX),
		rec(0, EV_FAULT, 3, 2, FK_STALL, 0, INT64_MAX),
		rec(0, EV_FAULT, 4, 3, FK_STOP, 0, INT64_MAX - 1),
		rec(0, EV_BUSY, 5, 60000),
	};
	check_result r = check(v, 1000);
	EXPECT_EQ(r.inv[INV_LIVENESS].violations, 0u);
	EXPECT_EQ(r.stalls, 3u);
}

/* A negative stall length excuses nothing: the overlong wait is still caught. */
TEST(CheckerArithmetic, NegativeStallsCountAsNone)
{
	std::vector<jrec> v = {
		rec(0, EV_ATTEMPT, 1, 0),
		rec(0, EV_FAULT, 2, 1, FK_STALL, 0, INT64_MIN),
		rec(0, EV_FAULT, 3, 2, FK_STALL, 0, -5),
		rec(0, EV_BUSY, 4, 60000),
	};
	check_result r = check(v, 1000);
	EXPECT_EQ(r.inv[INV_LIVENESS].violations, 1u);
}
