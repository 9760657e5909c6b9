/*
 * unit_extmanifest.cc - adapter manifests (protocols/extmanifest.c): the
 * built-in adapters' manifests (adapters/NAME/adapter.json), read as a
 * user's adapter would be, agree with their tables in protocols/external.c;
 * a manifest that breaks a rule is refused with the reason.
 */
#include <gtest/gtest.h>
#include <stdlib.h>
#include <string.h>

#include <string>

#include "protocols/external.h"
#include "testutil.h"

TEST(ExtManifest, BuiltInManifestsMatchTheirTables)
{
	setenv("LOCKSTORM_ADAPTERS", LS_TEST_SOURCE_DIR "/adapters", 1);
	for (const struct ext_adapter *a = ext_adapters; a->name; a++) {
		if (!a->run)
			continue;
		const struct ext_adapter *m = ext_user_load(a->name);
		ASSERT_NE(m, nullptr) << a->name << ": " << ext_manifest_error();
		EXPECT_STREQ(m->ops->origin, a->ops->origin) << a->name;
		EXPECT_STREQ(m->ops->summary, a->ops->summary) << a->name;
		EXPECT_EQ(m->stale, a->stale) << a->name;
		EXPECT_EQ(m->seam, a->seam) << a->name;
		int n = param_count(a->ops->params);
		ASSERT_EQ(param_count(m->ops->params), n) << a->name;
		for (int i = 0; i < n; i++) {
			const struct param *p = &a->ops->params[i], *q = &m->ops->params[i];
			EXPECT_STREQ(q->name, p->name) << a->name;
			EXPECT_EQ(q->def, p->def) << a->name << " " << p->name;
			EXPECT_STREQ(q->help, p->help) << a->name << " " << p->name;
			if (p->unit == PU_CHOICE)
				for (int k = 0; p->choices[k]; k++)
					EXPECT_STREQ(q->choices[k], p->choices[k]);
			else
				EXPECT_EQ(q->unit == PU_COUNT, p->unit == PU_COUNT) << a->name << " " << p->name;
		}
	}
	unsetenv("LOCKSTORM_ADAPTERS");
}

TEST(ExtManifest, BadManifestsAreRefusedWithTheReason)
{
	ScratchDir d;
	struct {
		const char *json, *why;
	} cases[] = {
		{ "{", "" },
		{ "{\"name\":\"other\"}", "\"name\" must be the directory's name" },
		{ "{\"name\":\"bad\",\"run\":\"../x\"}", "\"run\" must name the executable" },
		{ "{\"name\":\"bad\",\"run\":\"run\",\"stale\":\"sometimes\"}", "\"stale\" must be" },
		{ "{\"name\":\"bad\",\"run\":\"run\",\"stale\":\"never\",\"params\":[],\"workloads\":[\"append\"]}",
		  "\"workloads\" lists update and hold only" },
		{ "{\"name\":\"bad\",\"run\":\"run\",\"stale\":\"never\",\"params\":[],\"workloads\":[\"update\"]}",
		  "must have stale_ms and wait_ms" },
		{ "{\"name\":\"bad\",\"run\":\"run\",\"stale\":\"never\",\"workloads\":[\"update\"],"
		  "\"params\":[{\"name\":\"stale_ms\",\"unit\":\"ms\",\"default\":-1}]}", "a whole \"default\" >= 0" },
		{ "{\"name\":\"bad\",\"run\":\"run\",\"stale\":\"never\",\"seam\":\"ptrace\"}",
		  "\"seam\" must be \"helper\" or \"preload\"" },
	};
	setenv("LOCKSTORM_ADAPTERS", d.path.c_str(), 1);
	for (auto &c : cases) {
		system(("rm -rf '" + d.sub("bad") + "' && mkdir '" + d.sub("bad") + "'").c_str());
		put(d.sub("bad/adapter.json"), c.json);
		EXPECT_EQ(ext_user_load("bad"), nullptr) << c.json;
		EXPECT_NE(std::string(ext_manifest_error()).find(c.why), std::string::npos)
			<< c.json << " -> " << ext_manifest_error();
	}
	unsetenv("LOCKSTORM_ADAPTERS");
}
