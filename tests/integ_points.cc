/*
 * integ_points.cc - the points workers really fire, end to end: every
 * protocol under every workload, traced (--trace journals an EV_STEP per
 * fsx call and point), and each step the dump names is an fs/ call, one of
 * the run's protocol's .points or one of its workload's.  A step the dump
 * cannot name (no "point") was fired under a name no table lists.  The
 * verdicts are not asserted: only the names.
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>

#include <set>
#include <sstream>
#include <string>

#include "testutil.h"

extern "C" {
#include "protocols/lock.h"
#include "workloads/workload.h"
}

static const std::string BIN = LOCKSTORM_BIN;

namespace {

bool listed(const char *const *points, const std::string &name)
{
	for (int k = 0; points[k]; k++)
		if (name == points[k])
			return true;
	return false;
}

} // namespace

TEST(IntegPoints, TracedStepsAreTheRunsOwnPoints)
{
	for (int w = 0; workload_registry[w]; w++) {
		const struct workload_ops *wl = workload_registry[w];
		std::string extra = strcmp(wl->name, "append") == 0 ? " --param locked=1 --param read_pct=30" : "";
		for (int p = 0; lock_registry[p]; p++) {
			const struct lock_ops *o = lock_registry[p];
			SCOPED_TRACE(std::string(o->name) + " x " + wl->name);
			ScratchDir d;
			CmdResult r = run_cmd(BIN + " run -q -p " + o->name + " -w " + wl->name +
					      " -n 2 --ops 20 -s 3 --trace --time-scale 0.01" + extra +
					      " --dir " + d.sub("w") + " -o " + d.sub("out"));
			ASSERT_TRUE(r.status == 0 || r.status == 1) << r.status << r.out << r.err;
			CmdResult dump = run_cmd(BIN + " dump " + d.sub("out"));
			ASSERT_EQ(dump.status, 0) << dump.err;
			std::istringstream lines(dump.out);
			std::string line;
			std::set<std::string> own;
			long steps = 0;
			while (std::getline(lines, line)) {
				json_error_t jerr;
				json_t *rec = json_loads(line.c_str(), 0, &jerr);
				if (!rec)
					continue; /* a header or diagnostic line */
				const char *type = json_string_value(json_object_get(rec, "type"));
				if (type && strcmp(type, "step") == 0) {
					steps++;
					const char *pt = json_string_value(json_object_get(rec, "point"));
					EXPECT_NE(pt, nullptr) << "a step no table names: " << line;
					if (pt && strncmp(pt, "fs/", 3) != 0) {
						EXPECT_TRUE(listed(o->points, pt) || listed(wl->points, pt)) << pt;
						own.insert(pt);
					}
				}
				json_decref(rec);
			}
			EXPECT_GT(steps, 0) << "--trace journalled no step";
			EXPECT_FALSE(own.empty()) << "no protocol or workload point fired";
		}
	}
}
