/*
 * integ_junit.cc - `--junit FILE` on run and check: JUnit XML in the common
 * shape (testsuites > testsuite > testcase), one testcase per invariant,
 * failures carrying the examples, n/a invariants skipped.  The XML is parsed
 * by Python's xml.etree (tests/junit_shape.py, which also checks every count
 * attribute against the testcases).
 */
#include <gtest/gtest.h>
#include <jansson.h>
#include <string.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string SHAPE = std::string("/usr/bin/python3 ") + LS_SOURCE_DIR + "/tests/junit_shape.py ";

/* The summary junit_shape.py prints, parsed; nullptr when the shape is wrong. */
static json_t *junit_shape(const std::string &file, std::string *why)
{
	CmdResult r = run_cmd(SHAPE + file);
	*why = r.err;
	if (r.status != 0)
		return nullptr;
	json_error_t err;
	return json_loads(r.out.c_str(), 0, &err);
}

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));
	return s ? s : "";
}

static void expect_run_suite(json_t *root, const std::string &report_path)
{
	ASSERT_STREQ(str(root, "name"), "lockstorm");
	json_t *suites = json_object_get(root, "suites");
	ASSERT_EQ(json_array_size(suites), 1u);
	json_t *suite = json_array_get(suites, 0);
	EXPECT_STREQ(str(suite, "name"), "lockstorm run none/update");
	EXPECT_STREQ(str(json_object_get(suite, "properties"), "verdict"), "fail");

	json_error_t err;
	json_t *rep = json_load_file(report_path.c_str(), 0, &err);
	ASSERT_TRUE(rep) << report_path;
	json_t *invs = json_object_get(rep, "invariants");
	json_t *cases = json_object_get(suite, "cases");
	ASSERT_EQ(json_array_size(cases), json_array_size(invs)); /* one testcase per invariant */
	size_t i;
	json_t *inv;
	int failed = 0, skipped = 0;
	json_array_foreach(invs, i, inv) {
		json_t *c = json_array_get(cases, i);
		EXPECT_STREQ(str(c, "name"), str(inv, "name"));
		EXPECT_STREQ(str(c, "classname"), "lockstorm.none.update");
		const char *want = !json_is_true(json_object_get(inv, "applicable")) ? "skipped"
				 : json_integer_value(json_object_get(inv, "violations")) ? "failed" : "passed";
		EXPECT_STREQ(str(c, "status"), want) << str(inv, "name");
		if (!strcmp(want, "failed")) {
			failed++;
			json_t *ex0 = json_array_get(json_object_get(inv, "examples"), 0);
			/* the failure carries the examples, in plain words */
			EXPECT_NE(std::string(str(c, "message")).find(str(ex0, "text")), std::string::npos);
			EXPECT_NE(std::string(str(c, "text")).find(str(ex0, "text")), std::string::npos);
		}
		skipped += !strcmp(want, "skipped");
	}
	EXPECT_GT(failed, 0);
	EXPECT_EQ(json_integer_value(json_object_get(root, "failures")), failed);
	EXPECT_EQ(json_integer_value(json_object_get(root, "skipped")), skipped);
	json_decref(rep);
}

TEST(Junit, RunAndCheckWriteTheCommonShape)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p none -n 3 --ops 120 -q -o " + d.sub("out") + " --junit " +
			      d.sub("run.xml"));
	ASSERT_EQ(r.status, 1) << r.err;
	std::string why;
	json_t *root = junit_shape(d.sub("run.xml"), &why);
	ASSERT_TRUE(root) << why << slurp(d.sub("run.xml"));
	expect_run_suite(root, d.sub("out/report.json"));
	json_decref(root);

	r = run_cmd(BIN + " check " + d.sub("out") + " -q --junit " + d.sub("check.xml"));
	ASSERT_EQ(r.status, 1) << r.err;
	root = junit_shape(d.sub("check.xml"), &why);
	ASSERT_TRUE(root) << why;
	expect_run_suite(root, d.sub("out/report.json"));
	json_decref(root);
}

TEST(Junit, PassingRunHasNoFailures)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p flock -w hold -n 2 --ops 50 -q --junit " + d.sub("j.xml"));
	ASSERT_EQ(r.status, 0) << r.err;
	std::string why;
	json_t *root = junit_shape(d.sub("j.xml"), &why);
	ASSERT_TRUE(root) << why;
	EXPECT_EQ(json_integer_value(json_object_get(root, "failures")), 0);
	EXPECT_GT(json_integer_value(json_object_get(root, "skipped")), 0); /* hold: no state to check */
	EXPECT_GT(json_integer_value(json_object_get(root, "tests")), 0);
	json_decref(root);
}

TEST(Junit, UnwritablePathIsReported)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " run -p flock -w hold -n 2 --ops 20 -q --junit " + d.sub("no/such/dir.xml"));
	EXPECT_EQ(r.status, 2); /* refused before anything runs (issue 16 item 5) */
	EXPECT_NE(r.err.find("cannot write"), std::string::npos) << r.err;
}
