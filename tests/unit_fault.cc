/*
 * unit_fault.cc - the fault grammar, decisions and profiles.
 */
#include <errno.h>
#include <gtest/gtest.h>
#include <string.h>

#include <string>

#include "faults/fault.h"

static std::string parse_error(const char *spec)
{
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[512] = "";
	if (fault_parse(&plan, spec, why, sizeof why) == 0)
		return "";
	return why;
}

TEST(FaultParse, EveryKindWithItsKeys)
{
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[512];
	const char *good[] = {
		"stall@mkdir-owner/attempt/after-lock-mkdir:p=0.05,for=1.5stale",
		"stall:for=300ms",
		"stop@*:p=0.01,for=2s",
		"crash@*:p=0.01,once",
		"errno@fs/mkdir:err=EPERM,path=*/x*",
		"errno:err=ENOSPC,nth=3",
		"short-write@fs/write:bytes=7,err=ENOSPC",
		"sweep:every=2ms",
		"skew:by=-2s,workers=0,2,5-7",
		"coarse-mtime:res=2s",
		"pid-reuse:workers=1",
	};
	for (const char *g : good)
		ASSERT_EQ(fault_parse(&plan, g, why, sizeof why), 0) << g << ": " << why;
	ASSERT_EQ(plan.n, sizeof good / sizeof good[0]);
	EXPECT_EQ(plan.rule[0].kind, FK_STALL);
	EXPECT_EQ(plan.rule[0].for_ms, -1);
	EXPECT_DOUBLE_EQ(plan.rule[0].for_stale, 1.5);
	EXPECT_EQ(plan.rule[1].for_ms, 300);
	EXPECT_STREQ(plan.rule[1].point, "*");
	EXPECT_EQ(plan.rule[2].for_ms, 2000);
	EXPECT_EQ(plan.rule[3].once, 1);
	EXPECT_EQ(plan.rule[4].err, EPERM);
	EXPECT_STREQ(plan.rule[4].path, "*/x*");
	EXPECT_STREQ(plan.rule[5].point, "fs/*"); /* errno defaults to every call */
	EXPECT_EQ(plan.rule[5].nth, 3u);
	EXPECT_EQ(plan.rule[6].bytes, 7);
	EXPECT_EQ(plan.rule[7].every_ms, 2);
	EXPECT_EQ(plan.rule[8].by_ms, -2000);
	EXPECT_EQ(plan.rule[8].workers_all, 0);
	EXPECT_EQ(plan.rule[8].workers[0], (1ULL << 0) | (1ULL << 2) | (1ULL << 5) | (1ULL << 6) | (1ULL << 7));
	EXPECT_EQ(plan.rule[9].res_ms, 2000);
	EXPECT_EQ(plan.rule[6].split, 0);
	EXPECT_EQ(plan.rule[6].err, ENOSPC);
}

/* short-write with for=: a split write, no errno; the pause is resolved like a stall's. */
TEST(FaultParse, ShortWriteWithForSplits)
{
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[512];
	ASSERT_EQ(fault_parse(&plan, "short-write@fs/write:bytes=10,for=5ms", why, sizeof why), 0) << why;
	EXPECT_EQ(plan.rule[0].split, 1);
	EXPECT_EQ(plan.rule[0].err, 0);
	struct fault_state st;
	memset(&st, 0, sizeof st);
	struct prng rng;
	prng_seed(&rng, 1, 0, 0);
	struct fault_action a = fault_check(&plan, &st, &rng, 0, "fs/write", "/x/state.json", 100);
	EXPECT_EQ(a.kind, FK_SHORT_WRITE);
	EXPECT_EQ(a.err, 0);
	EXPECT_EQ(a.stall_ms, 5);
	EXPECT_EQ(a.bytes, 10);
}

struct BadSpec {
	const char *spec;
	const char *names; /* the offending token must be named */
};

TEST(FaultParse, BadSpecsNameTheOffendingToken)
{
	const BadSpec bad[] = {
		{ "explode", "unknown kind 'explode'" },
		{ "stall@", "empty point" },
		{ "stall:", "empty key list" },
		{ "stall:p=1.5", "p=1.5" },
		{ "stall:p=abc", "p=abc" },
		{ "stall:for=soon", "for=soon" },
		{ "stall:nth=0", "nth=0" },
		{ "stall:colour=red", "unknown key 'colour'" },
		{ "stall:p", "key 'p' needs a value" },
		{ "crash:for=1s", "for= does not apply to crash" },
		{ "errno:err=EWHATEVER", "err=EWHATEVER" },
		{ "errno@mkdir-owner/attempt/after-lock-mkdir", "its point is fs/<call>" },
		{ "sweep@fs/mkdir", "takes no @POINT" },
		{ "skew", "skew needs by=" },
		{ "skew:by=soon", "by=soon" },
		{ "coarse-mtime:res=0", "res=0" },
		{ "stall:workers=x", "workers=x" },
		{ "stall:workers=5-2", "workers=5-2" },
		{ "short-write:for=1ms,err=EIO", "takes no err=" },
	};
	for (const BadSpec &b : bad) {
		std::string why = parse_error(b.spec);
		EXPECT_NE(why.find(b.names), std::string::npos) << b.spec << " -> " << why;
		EXPECT_NE(why.find(b.spec), std::string::npos) << "the spec itself is quoted: " << why;
	}
}

TEST(FaultParse, ErrnoNames)
{
	EXPECT_EQ(fault_errno_parse("EPERM"), EPERM);
	EXPECT_EQ(fault_errno_parse("EACCES"), EACCES);
	EXPECT_EQ(fault_errno_parse("ENOSPC"), ENOSPC);
	EXPECT_EQ(fault_errno_parse("13"), 13);
	EXPECT_EQ(fault_errno_parse("ENOPE"), -1);
	EXPECT_EQ(fault_errno_parse("0"), -1);
}

static struct fault_plan plan_of(std::initializer_list<const char *> specs)
{
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[512];
	for (const char *s : specs)
		EXPECT_EQ(fault_parse(&plan, s, why, sizeof why), 0) << why;
	return plan;
}

TEST(FaultCheck, PointsPathsAndWorkers)
{
	struct fault_plan plan = plan_of({ "errno@fs/mkdir:err=EACCES,path=*/x*", "crash@update/write/*:workers=1" });
	struct fault_state st;
	memset(&st, 0, sizeof st);
	struct prng rng;
	prng_seed(&rng, 1, 0, 0);
	struct fault_action a = fault_check(&plan, &st, &rng, 0, "fs/mkdir", "/d/x1", 100);
	EXPECT_EQ(a.kind, FK_ERRNO);
	EXPECT_EQ(a.err, EACCES);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "fs/mkdir", "/d/y1", 100).kind, FK_NONE);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "fs/rmdir", "/d/x1", 100).kind, FK_NONE);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "fs/mkdir", NULL, 100).kind, FK_NONE); /* no path: no match */
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "update/write/after-read", NULL, 100).kind, FK_NONE);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 1, "update/write/after-read", NULL, 100).kind, FK_CRASH);
}

TEST(FaultCheck, NthOnceAndStaleMultiples)
{
	struct fault_plan plan = plan_of({ "stall@a/b/*:nth=3,for=1.5stale", "stall@c/d/*:once,for=7ms" });
	struct fault_state st;
	memset(&st, 0, sizeof st);
	struct prng rng;
	prng_seed(&rng, 1, 0, 0);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "a/b/after-x", NULL, 100).kind, FK_NONE);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "a/b/after-x", NULL, 100).kind, FK_NONE);
	struct fault_action a = fault_check(&plan, &st, &rng, 0, "a/b/after-x", NULL, 100);
	EXPECT_EQ(a.kind, FK_STALL);
	EXPECT_EQ(a.stall_ms, 150);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "a/b/after-x", NULL, 100).kind, FK_NONE);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "c/d/after-y", NULL, 100).stall_ms, 7);
	EXPECT_EQ(fault_check(&plan, &st, &rng, 0, "c/d/after-y", NULL, 100).kind, FK_NONE);
}

TEST(FaultCheck, SameSeedSameDecisionsAndAboutTheAskedRate)
{
	struct fault_plan plan = plan_of({ "stall@*:p=0.2,for=1ms" });
	for (int round = 0; round < 2; round++) {
		struct fault_state s1, s2;
		memset(&s1, 0, sizeof s1);
		memset(&s2, 0, sizeof s2);
		struct prng r1, r2;
		prng_seed(&r1, 42, 3, 0);
		prng_seed(&r2, 42, 3, 0);
		int fired = 0;
		for (int i = 0; i < 20000; i++) {
			struct fault_action a = fault_check(&plan, &s1, &r1, 3, "p/q/after-r", NULL, 10);
			struct fault_action b = fault_check(&plan, &s2, &r2, 3, "p/q/after-r", NULL, 10);
			ASSERT_EQ(a.kind, b.kind) << "draw " << i;
			fired += a.kind == FK_STALL;
		}
		/* 20000 draws at p=0.2: 4000 +- 5 sigma (about 280) */
		EXPECT_GT(fired, 3700);
		EXPECT_LT(fired, 4300);
	}
	/* another worker id draws another stream */
	struct fault_state s1, s2;
	memset(&s1, 0, sizeof s1);
	memset(&s2, 0, sizeof s2);
	struct prng r1, r2;
	prng_seed(&r1, 42, 3, 0);
	prng_seed(&r2, 42, 4, 0);
	int differ = 0;
	for (int i = 0; i < 200; i++)
		differ += fault_check(&plan, &s1, &r1, 3, "x", NULL, 10).kind !=
			  fault_check(&plan, &s2, &r2, 4, "x", NULL, 10).kind;
	EXPECT_GT(differ, 0);
}

TEST(FaultProfile, EveryProfileParsesAndUnknownIsRefused)
{
	for (const char *name : { "standard", "stalls", "crashes", "errnos", "windows", "none" }) {
		struct fault_plan plan;
		memset(&plan, 0, sizeof plan);
		char why[512];
		EXPECT_EQ(fault_profile(&plan, name, why, sizeof why), 0) << name << ": " << why;
		EXPECT_EQ(plan.windows, !strcmp(name, "windows")) << name;
	}
	struct fault_plan plan;
	memset(&plan, 0, sizeof plan);
	char why[512];
	EXPECT_EQ(fault_profile(&plan, "chaos", why, sizeof why), -1);
	EXPECT_NE(strstr(why, "chaos"), nullptr);
}
