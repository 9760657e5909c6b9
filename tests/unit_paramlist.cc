// --param lists (protocols/params.c, workloads/variants.c): a comma list
// alternates across workers as -p A,B does, each slot resolved with its picks.
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "protocols/lock.h"
#include "run/runcfg.h"
#include "workloads/config.h"
#include "workloads/workload.h"
}

namespace {

TEST(ParamList, LengthsPicksAndLcm)
{
	EXPECT_EQ(param_list_len("rev=legacy"), 1u);
	EXPECT_EQ(param_list_len("rev=legacy,append"), 2u);
	EXPECT_EQ(param_list_len("rev=a,b,c"), 3u);
	const char *kv[] = { "rev=a,b", "locked=0,1,1", "x=1" };
	EXPECT_EQ(param_variants(kv, 3), 6u);
	EXPECT_EQ(param_variants(kv + 2, 1), 1u);
	char buf[64], why[160];
	ASSERT_EQ(param_kv_pick("rev=legacy,append", 0, buf, sizeof buf, why, sizeof why), 0);
	EXPECT_STREQ(buf, "rev=legacy");
	ASSERT_EQ(param_kv_pick("rev=legacy,append", 3, buf, sizeof buf, why, sizeof why), 0);
	EXPECT_STREQ(buf, "rev=append");
	ASSERT_EQ(param_kv_pick("rev=legacy", 5, buf, sizeof buf, why, sizeof why), 0);
	EXPECT_STREQ(buf, "rev=legacy");
	EXPECT_EQ(param_kv_pick("rev=legacy,", 1, buf, sizeof buf, why, sizeof why), -1) << "an empty element";
	EXPECT_EQ(param_kv_pick("=a,b", 0, buf, sizeof buf, why, sizeof why), -1);
}

struct Cfg {
	run_config c;
	char why[1024] = "";
	Cfg(const char *protos, const char *workload, std::initializer_list<const char *> kv)
	{
		runcfg_defaults(&c);
		EXPECT_EQ(runcfg_set_protocols(&c, protos, why, sizeof why), 0) << why;
		EXPECT_EQ(runcfg_set_workload(&c, workload, why, sizeof why), 0) << why;
		for (const char *k : kv)
			c.kv[c.nkv++] = k;
	}
};

TEST(ParamList, WorkersAlternateByList)
{
	Cfg f("flock", "append", { "rev=legacy,append", "locked=1" });
	ASSERT_EQ(runcfg_resolve(&f.c, f.why, sizeof f.why), 0) << f.why;
	EXPECT_EQ(f.c.nproto, 2u);
	EXPECT_EQ(f.c.nproto_given, 1u);
	int rev = param_index(f.c.workload->params, "rev"), locked = param_index(f.c.workload->params, "locked");
	ASSERT_GE(rev, 0);
	EXPECT_NE(cfg_wparam(&f.c, 0)[rev], cfg_wparam(&f.c, 1)[rev]);
	EXPECT_EQ(cfg_wparam(&f.c, 0)[rev], cfg_wparam(&f.c, 2)[rev]);
	EXPECT_EQ(cfg_wparam(&f.c, 1)[locked], 1);
	EXPECT_STREQ(cfg_slot_label(&f.c, 0), "flock rev=legacy");
	EXPECT_STREQ(cfg_slot_label(&f.c, 3), "flock rev=append");
	EXPECT_EQ(f.c.wvals[rev], cfg_wparam(&f.c, 0)[rev]) << "setup takes slot 0's";
	/* resolving again (a config read back) gives the same slots */
	f.c.nproto_given = 0;
	ASSERT_EQ(runcfg_resolve(&f.c, f.why, sizeof f.why), 0) << f.why;
	EXPECT_EQ(f.c.nproto, 2u);
	EXPECT_EQ(f.c.nproto_given, 1u);
}

TEST(ParamList, ProtocolsAndListsTakeTheLcm)
{
	Cfg f("flock,mkdir-owner", "append", { "rev=legacy,append,legacy" });
	ASSERT_EQ(runcfg_resolve(&f.c, f.why, sizeof f.why), 0) << f.why;
	EXPECT_EQ(f.c.nproto, 6u);
	EXPECT_STREQ(cfg_slot_label(&f.c, 0), "flock rev=legacy");
	EXPECT_STREQ(cfg_slot_label(&f.c, 1), "mkdir-owner rev=append");
	EXPECT_STREQ(cfg_slot_label(&f.c, 5), "mkdir-owner rev=legacy");
	EXPECT_EQ(f.c.proto[4], f.c.proto[0]);
}

TEST(ParamList, ProtocolParamsAlternateToo)
{
	Cfg f("mkdir-owner", "update", { "stale_ms=1s,2s" });
	ASSERT_EQ(runcfg_resolve(&f.c, f.why, sizeof f.why), 0) << f.why;
	int st = param_index(f.c.proto[0]->params, "stale_ms");
	ASSERT_GE(st, 0);
	EXPECT_EQ(f.c.pvals[cfg_proto_slot(&f.c, 0)][st], 1000);
	EXPECT_EQ(f.c.pvals[cfg_proto_slot(&f.c, 1)][st], 2000);
	EXPECT_EQ(runcfg_stale_ms(&f.c, 3), 2000);
}

TEST(ParamList, NoListNoChange)
{
	Cfg f("flock,mkdir-owner", "update", {});
	ASSERT_EQ(runcfg_resolve(&f.c, f.why, sizeof f.why), 0) << f.why;
	EXPECT_EQ(f.c.nproto, 2u);
	EXPECT_STREQ(cfg_slot_label(&f.c, 1), "mkdir-owner");
}

TEST(ParamList, BadListsAreRefused)
{
	Cfg bad("flock", "append", { "rev=legacy,bogus" });
	EXPECT_EQ(runcfg_resolve(&bad.c, bad.why, sizeof bad.why), -1);
	EXPECT_NE(std::string(bad.why).find("bogus"), std::string::npos) << bad.why;
	Cfg big("flock", "append", { "rev=legacy,append,legacy", "locked=0,1,0,1,0" });
	EXPECT_EQ(runcfg_resolve(&big.c, big.why, sizeof big.why), -1) << "15 slots";
	Cfg none("flock", "update", { "nosuch=1,2" });
	EXPECT_EQ(runcfg_resolve(&none.c, none.why, sizeof none.why), -1) << "no such parameter";
	Cfg inst("flock", "update", { "instances=2" });
	EXPECT_EQ(runcfg_resolve(&inst.c, inst.why, sizeof inst.why), -1) << "flock has no per-instance state";
	Cfg lr("lockfile-recorded", "update", { "instances=2" });
	EXPECT_EQ(runcfg_resolve(&lr.c, lr.why, sizeof lr.why), 0) << lr.why;
	EXPECT_EQ(cfg_pid_worker(&lr.c, 3), 2u);
	EXPECT_EQ(cfg_pid_worker(&lr.c, 4), 4u);
}

} // namespace
