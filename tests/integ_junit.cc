/*
 * integ_junit.cc - `--junit FILE` on run, check, compare, scenario run and
 * explore: valid against junit-10.xsd (xmllint); JUnit XML in the common
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
	CmdResult r = run_cmd(BIN + " run -p none -n 8 --ops 3000 -q -o " + d.sub("out") + " --junit " +
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

/* Every writer's XML validates against Jenkins xUnit's junit-10.xsd (tests/junit-10.xsd): the
 * root carries no skipped count, which that schema rejects. */
static std::string xsd_problem(const std::string &file)
{
	CmdResult r = run_cmd("xmllint --noout --schema " + std::string(LS_SOURCE_DIR) + "/tests/junit-10.xsd " + file);
	return r.status == 0 ? "" : r.err + r.out;
}

TEST(Junit, RunCheckAndCompareValidateAgainstJunit10Xsd)
{
	ScratchDir d;
	/* the schema has teeth: a root with skipped= is refused */
	put(d.sub("bad.xml"), "<?xml version=\"1.0\"?>\n<testsuites tests=\"1\" skipped=\"0\"><testsuite name=\"s\" "
			      "tests=\"1\" failures=\"0\" errors=\"0\"><testcase name=\"c\"/></testsuite></testsuites>\n");
	EXPECT_NE(xsd_problem(d.sub("bad.xml")), "");
	CmdResult r = run_cmd(BIN + " run -p none -n 8 --ops 3000 -q -o " + d.sub("out") + " --junit " + d.sub("run.xml"));
	ASSERT_EQ(r.status, 1) << r.err;
	EXPECT_EQ(xsd_problem(d.sub("run.xml")), "");
	std::string xml = slurp(d.sub("run.xml"));
	size_t root_at = xml.find("<testsuites");
	ASSERT_NE(root_at, std::string::npos);
	std::string root_tag = xml.substr(root_at, xml.find('>', root_at) - root_at);
	EXPECT_EQ(root_tag.find("skipped="), std::string::npos) << root_tag;
	r = run_cmd(BIN + " check " + d.sub("out") + " -q --junit " + d.sub("check.xml"));
	EXPECT_EQ(xsd_problem(d.sub("check.xml")), "");
	r = run_cmd(BIN + " compare -p none,flock -n 8 --ops 3000 -q --junit " + d.sub("cmp.xml"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_EQ(xsd_problem(d.sub("cmp.xml")), "");
}

TEST(Junit, ScenarioRunWritesATestcasePerRevision)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " scenario run empty-record-lock -q --junit " + d.sub("sc.xml"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(xsd_problem(d.sub("sc.xml")), "");
	std::string why;
	json_t *root = junit_shape(d.sub("sc.xml"), &why);
	ASSERT_TRUE(root) << why;
	json_t *suite = json_array_get(json_object_get(root, "suites"), 0);
	EXPECT_STREQ(str(suite, "name"), "lockstorm scenario empty-record-lock");
	json_t *cases = json_object_get(suite, "cases");
	ASSERT_EQ(json_array_size(cases), 2u);
	EXPECT_STREQ(str(json_array_get(cases, 0), "name"), "3.0.155");
	EXPECT_STREQ(str(json_array_get(cases, 0), "classname"), "lockstorm.scenario.empty-record-lock");
	EXPECT_STREQ(str(json_array_get(cases, 0), "status"), "passed"); /* it failed, as the scenario expects */
	EXPECT_STREQ(str(json_array_get(cases, 1), "name"), "3.0.157");
	EXPECT_EQ(json_integer_value(json_object_get(root, "failures")), 0);
	json_decref(root);
	/* a revision not as expected is a failure: a scenario file that expects the legacy revision to pass */
	std::string src = slurp(std::string(LS_SOURCE_DIR) + "/scenarios/empty-record-lock.scenario");
	const std::string want = "expect 3.0.155 fail liveness";
	size_t at = src.find(want);
	ASSERT_NE(at, std::string::npos);
	src.replace(at, want.size(), "expect 3.0.155 pass");
	put(d.sub("wrong.scenario"), src);
	r = run_cmd(BIN + " scenario run " + d.sub("wrong.scenario") + " -q --junit " + d.sub("wrong.xml"));
	EXPECT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_EQ(xsd_problem(d.sub("wrong.xml")), "");
	root = junit_shape(d.sub("wrong.xml"), &why);
	ASSERT_TRUE(root) << why;
	cases = json_object_get(json_array_get(json_object_get(root, "suites"), 0), "cases");
	EXPECT_STREQ(str(json_array_get(cases, 0), "status"), "failed");
	EXPECT_NE(std::string(str(json_array_get(cases, 0), "message")).find("expect PASS, got FAIL (liveness)"), std::string::npos)
		<< str(json_array_get(cases, 0), "message");
	EXPECT_NE(std::string(str(json_array_get(cases, 0), "text")).find("liveness: "), std::string::npos)
		<< str(json_array_get(cases, 0), "text"); /* the example, in plain words */
	EXPECT_STREQ(str(json_array_get(cases, 1), "status"), "passed");
	json_decref(root);
}

TEST(Junit, ExploreWritesATestcasePerInvariant)
{
	ScratchDir d;
	CmdResult r = run_cmd(BIN + " explore -p mkdir-legacy -n 3 --ops 2 --invariant exclusion --schedules 60 -q -o " + d.sub("cex") +
			      " --junit " + d.sub("ex.xml"));
	ASSERT_EQ(r.status, 1) << r.out << r.err;
	EXPECT_EQ(xsd_problem(d.sub("ex.xml")), "");
	std::string why;
	json_t *root = junit_shape(d.sub("ex.xml"), &why);
	ASSERT_TRUE(root) << why;
	json_t *suite = json_array_get(json_object_get(root, "suites"), 0);
	EXPECT_STREQ(str(suite, "name"), "lockstorm explore mkdir-legacy/update");
	json_t *cases = json_object_get(suite, "cases");
	size_t i;
	json_t *c;
	bool exclusion_failed = false;
	json_array_foreach(cases, i, c) {
		if (!strcmp(str(c, "name"), "exclusion") && !strcmp(str(c, "status"), "failed")) {
			exclusion_failed = true;
			EXPECT_NE(std::string(str(c, "text")).find("lockstorm replay " + d.sub("cex") + "/cex-"),
				  std::string::npos) << str(c, "text");
		}
	}
	EXPECT_TRUE(exclusion_failed);
	json_decref(root);
	/* the flock control: every invariant a passing testcase */
	r = run_cmd(BIN + " explore -p flock -n 2 --ops 2 --schedules 50 -q -o " + d.sub("cex2") + " --junit " +
		    d.sub("ok.xml"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_EQ(xsd_problem(d.sub("ok.xml")), "");
	root = junit_shape(d.sub("ok.xml"), &why);
	ASSERT_TRUE(root) << why;
	EXPECT_EQ(json_integer_value(json_object_get(root, "failures")), 0);
	EXPECT_GT(json_integer_value(json_object_get(root, "tests")), 0);
	json_decref(root);
}
