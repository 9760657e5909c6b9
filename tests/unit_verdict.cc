/*
 * unit_verdict.cc - the one verdict line and its JSON value (check/verdict.c):
 * the three forms, FAIL over INCOMPLETE, grouping by revision, and a
 * check_result's verdict.
 */
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>

extern "C" {
#include "check/checker.h"
#include "check/verdict.h"
}

static std::string line(const struct verdict *v)
{
	char buf[2048];
	size_t n = verdict_format(v, buf, sizeof buf);
	EXPECT_EQ(n, strlen(buf));
	return buf;
}

static std::string printed(const struct verdict *v)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	verdict_print(f, v);
	fclose(f);
	std::string out(buf, len);
	free(buf);
	return out;
}

TEST(Verdict, PassWhenNothingFailed)
{
	struct verdict v;
	verdict_init(&v);
	EXPECT_EQ(verdict_kind(&v), VERDICT_PASS);
	EXPECT_EQ(line(&v), "verdict: PASS");
	EXPECT_EQ(printed(&v), "verdict: PASS\n");
	EXPECT_STREQ(verdict_json(&v), "pass");
}

TEST(Verdict, FailListsEachInvariantOnceInOrder)
{
	struct verdict v;
	verdict_init(&v);
	verdict_fail(&v, NULL, "exclusion");
	verdict_fail(&v, NULL, "zombie-write");
	verdict_fail(&v, NULL, "exclusion"); /* again: listed once */
	EXPECT_EQ(verdict_kind(&v), VERDICT_FAIL);
	EXPECT_EQ(line(&v), "verdict: FAIL (exclusion, zombie-write)");
	EXPECT_STREQ(verdict_json(&v), "fail");
}

TEST(Verdict, FailGroupsByRevision)
{
	struct verdict v;
	verdict_init(&v);
	verdict_fail(&v, "mkdir-legacy", "exclusion");
	verdict_fail(&v, "mkdir-legacy", "own-release");
	verdict_fail(&v, "mkdir-v2", "liveness");
	EXPECT_EQ(line(&v), "verdict: FAIL (mkdir-legacy: exclusion, own-release; mkdir-v2: liveness)");
}

TEST(Verdict, IncompleteSaysWhy)
{
	struct verdict v;
	verdict_init(&v);
	verdict_incomplete(&v, "interrupted");
	verdict_incomplete(&v, "a second reason"); /* the first one stays */
	EXPECT_EQ(verdict_kind(&v), VERDICT_INCOMPLETE);
	EXPECT_EQ(line(&v), "verdict: INCOMPLETE (interrupted)");
	EXPECT_STREQ(verdict_json(&v), "incomplete");

	verdict_init(&v);
	verdict_incomplete(&v, NULL);
	EXPECT_EQ(line(&v), "verdict: INCOMPLETE (the run did not finish)");
}

TEST(Verdict, FailTakesPrecedenceOverIncomplete)
{
	/* either order: a violation seen before the run was cut short still fails it */
	struct verdict a, b;
	verdict_init(&a);
	verdict_incomplete(&a, "interrupted");
	verdict_fail(&a, NULL, "exclusion");
	verdict_init(&b);
	verdict_fail(&b, NULL, "exclusion");
	verdict_incomplete(&b, "interrupted");
	for (const struct verdict *v : { &a, &b }) {
		EXPECT_EQ(verdict_kind(v), VERDICT_FAIL);
		EXPECT_EQ(line(v), "verdict: FAIL (exclusion)");
		EXPECT_STREQ(verdict_json(v), "fail");
	}
}

TEST(Verdict, ShortBufferReportsTheLengthNeeded)
{
	struct verdict v;
	verdict_init(&v);
	verdict_fail(&v, NULL, "no-lost-writes");
	char small[10];
	size_t n = verdict_format(&v, small, sizeof small);
	EXPECT_EQ(n, strlen("verdict: FAIL (no-lost-writes)"));
	EXPECT_STREQ(small, "verdict: ");
	EXPECT_EQ(verdict_format(&v, NULL, 0), n);
}

TEST(Verdict, PastTheTableTheRestIsCounted)
{
	static char names[VERDICT_MAX_FAILS + 3][16];
	struct verdict v;
	verdict_init(&v);
	for (unsigned i = 0; i < VERDICT_MAX_FAILS + 3; i++) {
		snprintf(names[i], sizeof names[i], "inv%u", i);
		verdict_fail(&v, NULL, names[i]);
	}
	std::string l = printed(&v);
	EXPECT_EQ(l.rfind("verdict: FAIL (inv0, inv1, ", 0), 0u) << l;
	EXPECT_NE(l.find("; 3 more)\n"), std::string::npos) << l;
}

TEST(Verdict, FromCheckNamesApplicableViolationsOnly)
{
	static struct check_result res;
	memset(&res, 0, sizeof res);
	for (int i = 0; i < INV__COUNT; i++) {
		res.inv[i].name = check_inv_name((enum inv_id)i);
		res.inv[i].applicable = 1;
	}
	struct verdict v;
	verdict_from_check(&v, &res);
	EXPECT_EQ(line(&v), "verdict: PASS");

	res.inv[INV_OWN_RELEASE].violations = 2;
	res.inv[INV_EXCLUSION].violations = 5;
	res.inv[INV_JOURNAL_SEQ].violations = 1; /* not applicable: not the verdict's */
	res.inv[INV_JOURNAL_SEQ].applicable = 0;
	verdict_from_check(&v, &res);
	EXPECT_EQ(line(&v), "verdict: FAIL (exclusion, own-release)");
}

TEST(Verdict, ExitCodesAreZeroOnlyForAPass)
{
	struct verdict v;
	verdict_init(&v);
	EXPECT_EQ(verdict_exit(&v), 0);
	verdict_incomplete(&v, "interrupted after 2.6 s of 30 s");
	EXPECT_EQ(verdict_exit(&v), VERDICT_EXIT_INCOMPLETE);
	EXPECT_EQ(VERDICT_EXIT_INCOMPLETE, 4);
	EXPECT_EQ(line(&v), "verdict: INCOMPLETE (interrupted after 2.6 s of 30 s)");
	verdict_fail(&v, NULL, "exclusion"); /* a violation seen before the cut: FAIL */
	EXPECT_EQ(verdict_exit(&v), 1);
}
