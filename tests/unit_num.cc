/* unit_num.cc - core/num.c: the one number and duration grammar, as tables
 * (text in, value or the reason's key words out). */
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

extern "C" {
#include "core/num.h"
}

namespace {

struct U64Row {
	const char *in;
	uint64_t lo, hi;
	bool ok;
	uint64_t want;     /* when ok */
	const char *says;  /* when not: in the reason */
};

TEST(NumU64, Table)
{
	const U64Row rows[] = {
		{ "0", 0, UINT64_MAX, true, 0, nullptr },
		{ "42", 0, UINT64_MAX, true, 42, nullptr },
		{ "010", 0, UINT64_MAX, true, 10, nullptr }, /* decimal, not octal */
		{ "08", 0, UINT64_MAX, true, 8, nullptr },   /* once refused as bad octal */
		{ "18446744073709551615", 0, UINT64_MAX, true, UINT64_MAX, nullptr },
		{ "18446744073709551616", 0, UINT64_MAX, false, 0, "whole decimal number" },
		{ "4096", 1, 4096, true, 4096, nullptr },
		{ "4097", 1, 4096, false, 0, "from 1 to 4096" },
		{ "0", 1, 4096, false, 0, "from 1 to 4096" },
		{ "0", 1, UINT64_MAX, false, 0, ">= 1" },
		{ "", 0, UINT64_MAX, false, 0, "''" },
		{ "-1", 0, UINT64_MAX, false, 0, "'-1'" },
		{ "+1", 0, UINT64_MAX, false, 0, "'+1'" },
		{ "0x10", 0, UINT64_MAX, false, 0, "'0x10'" },
		{ "1.5", 0, UINT64_MAX, false, 0, "'1.5'" },
		{ " 1", 0, UINT64_MAX, false, 0, "' 1'" },
		{ "1 ", 0, UINT64_MAX, false, 0, "'1 '" },
		{ "1e3", 0, UINT64_MAX, false, 0, "'1e3'" },
	};
	for (const auto &r : rows) {
		uint64_t v = 7;
		char why[256] = "";
		int rc = num_u64(r.in, r.lo, r.hi, &v, why, sizeof why);
		if (r.ok) {
			EXPECT_EQ(rc, 0) << "'" << r.in << "': " << why;
			EXPECT_EQ(v, r.want) << "'" << r.in << "'";
		} else {
			EXPECT_EQ(rc, -1) << "'" << r.in << "' parsed as " << v;
			EXPECT_EQ(v, 7u) << "'" << r.in << "': out written on failure";
			EXPECT_NE(std::string(why).find(r.says), std::string::npos) << r.in << " -> " << why;
			EXPECT_EQ(std::string(why).find('\n'), std::string::npos) << "one line: " << why;
		}
	}
}

struct RealRow {
	const char *in;
	double lo, hi;
	unsigned flags;
	bool ok;
	double want;
};

TEST(NumReal, Table)
{
	const RealRow rows[] = {
		{ "1", 0, 1000, NUM_ABOVE, true, 1 },
		{ "0.01", 0, 1000, NUM_ABOVE, true, 0.01 },
		{ ".5", 0, 1000, NUM_ABOVE, true, 0.5 },
		{ "1000", 0, 1000, NUM_ABOVE, true, 1000 },
		{ "0", 0, 1000, NUM_ABOVE, false, 0 },   /* above 0 */
		{ "0", 0, 1, 0, true, 0 },               /* from 0 */
		{ "1000.5", 0, 1000, NUM_ABOVE, false, 0 },
		{ "-1", -5, 5, 0, false, 0 },
		{ "-1", -5, 5, NUM_SIGNED, true, -1 },
		{ "nan", 0, 1000, 0, false, 0 },
		{ "inf", 0, 1000, 0, false, 0 },
		{ "1e-3", 0, 1000, 0, false, 0 },
		{ "0x1p3", 0, 1000, 0, false, 0 },
		{ "1.", 0, 1000, 0, false, 0 },
		{ "", 0, 1000, 0, false, 0 },
		{ "1,5", 0, 1000, 0, false, 0 },
	};
	for (const auto &r : rows) {
		double v = -42;
		char why[256] = "";
		int rc = num_real(r.in, r.lo, r.hi, r.flags, &v, why, sizeof why);
		if (r.ok) {
			EXPECT_EQ(rc, 0) << "'" << r.in << "': " << why;
			EXPECT_DOUBLE_EQ(v, r.want) << "'" << r.in << "'";
		} else {
			EXPECT_EQ(rc, -1) << "'" << r.in << "' parsed as " << v;
			EXPECT_NE(std::string(why).find(std::string("'") + r.in + "'"), std::string::npos) << why;
		}
	}
}

struct DurRow {
	const char *in;
	unsigned flags;
	bool ok;
	int64_t ms;        /* when ok and not stale */
	double stale;      /* when ok and stale (> 0 marks it) */
	const char *says;  /* when not ok: in the reason */
};

TEST(NumDuration, Table)
{
	const DurRow rows[] = {
		{ "300ms", 0, true, 300, 0, nullptr },
		{ "2s", 0, true, 2000, 0, nullptr },
		{ "1.5s", 0, true, 1500, 0, nullptr },
		{ "2m", 0, true, 120000, 0, nullptr },
		{ "1h", 0, true, 3600000, 0, nullptr },
		{ "0ms", 0, true, 0, 0, nullptr },
		{ "0.4ms", 0, true, 0, 0, nullptr },  /* rounded to whole ms */
		{ "0.5s", 0, true, 500, 0, nullptr },
		{ "010s", 0, true, 10000, 0, nullptr },
		{ "720h", 0, true, 720LL * 3600000, 0, nullptr }, /* 30 days: the ceiling itself */
		/* a bare number: refused, naming the units ... */
		{ "1500", 0, false, 0, 0, "give a unit (ms, s, m, h)" },
		{ "1500", NUM_STALE, false, 0, 0, "give a unit (ms, s, m, h, stale)" },
		/* ... unless the key's name says ms */
		{ "1500", NUM_BARE_MS, true, 1500, 0, nullptr },
		{ "1.5s", NUM_BARE_MS, true, 1500, 0, nullptr },
		/* stale multiples, only where allowed */
		{ "1.5stale", NUM_STALE, true, 0, 1.5, nullptr },
		{ "1stale", NUM_STALE, true, 0, 1, nullptr },
		{ "1.5stale", 0, false, 0, 0, "unknown unit 'stale'" },
		{ "2000stale", NUM_STALE, false, 0, 0, "stale age" },
		/* signs */
		{ "+500ms", NUM_SIGNED, true, 500, 0, nullptr },
		{ "-2s", NUM_SIGNED, true, -2000, 0, nullptr },
		{ "-2s", 0, false, 0, 0, "no sign" },
		{ "+2s", 0, false, 0, 0, "no sign" },
		{ "-1stale", NUM_STALE | NUM_SIGNED, false, 0, 0, ">= 0" },
		/* not numbers, unknown units, absurd values */
		{ "", 0, false, 0, 0, "empty" },
		{ "soon", 0, false, 0, 0, "not a number" },
		{ "nan", 0, false, 0, 0, "not a number" },
		{ "inf", 0, false, 0, 0, "not a number" },
		{ "infs", 0, false, 0, 0, "not a number" },
		{ "s", 0, false, 0, 0, "not a number" },
		{ ".s", 0, false, 0, 0, "not a number" },
		{ "5x", 0, false, 0, 0, "unknown unit 'x'" },
		{ "5 s", 0, false, 0, 0, "unknown unit ' s'" },
		{ "1e3ms", 0, false, 0, 0, "unknown unit 'e3ms'" },
		{ "5sec", 0, false, 0, 0, "unknown unit 'sec'" },
		{ "1d", 0, false, 0, 0, "unknown unit 'd'" },
		{ "721h", 0, false, 0, 0, "over 30 days" },
		{ "99999999999999999999s", 0, false, 0, 0, "over 30 days" },
		{ "-99999999999h", NUM_SIGNED, false, 0, 0, "over 30 days" },
		{ "1111111111111111111111111111111111111111111111111111111111111111111ms", 0, false, 0, 0,
		  "not a number" },
	};
	for (const auto &r : rows) {
		struct num_dur d = { -7, -7, -7 };
		char why[256] = "";
		int rc = num_duration(r.in, r.flags, &d, why, sizeof why);
		if (r.ok) {
			ASSERT_EQ(rc, 0) << "'" << r.in << "': " << why;
			EXPECT_EQ(d.is_stale, r.stale > 0) << r.in;
			if (r.stale > 0)
				EXPECT_DOUBLE_EQ(d.stale, r.stale) << r.in;
			else
				EXPECT_EQ(d.ms, r.ms) << r.in;
		} else {
			EXPECT_EQ(rc, -1) << "'" << r.in << "' parsed as " << d.ms << " ms";
			EXPECT_EQ(d.ms, -7) << "'" << r.in << "': out written on failure";
			EXPECT_NE(std::string(why).find(r.says), std::string::npos) << r.in << " -> " << why;
			EXPECT_NE(std::string(why).find(std::string("bad duration '") + r.in + "'"), std::string::npos)
				<< "the text is quoted: " << why;
		}
	}
}

TEST(NumMs, RefusesStaleAndKeepsFlags)
{
	int64_t ms = 0;
	char why[256];
	EXPECT_EQ(num_ms("1.5stale", NUM_STALE, &ms, why, sizeof why), -1) << "num_ms has no stale age";
	EXPECT_EQ(num_ms("-5ms", NUM_SIGNED, &ms, why, sizeof why), 0);
	EXPECT_EQ(ms, -5);
	EXPECT_EQ(num_ms("250", NUM_BARE_MS, &ms, why, sizeof why), 0);
	EXPECT_EQ(ms, 250);
	EXPECT_EQ(num_ms("250", 0, &ms, NULL, 0), -1) << "why may be NULL";
}

} // namespace
