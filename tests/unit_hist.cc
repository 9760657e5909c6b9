/* unit_hist.cc - the checker's log-linear histogram (check/hist.h). */
#include <gtest/gtest.h>

#include <stdint.h>

#include <algorithm>
#include <vector>

extern "C" {
#include "check/hist.h"
}

namespace {

uint64_t exact_rank(std::vector<uint64_t> v, unsigned pct)
{
	std::sort(v.begin(), v.end());
	size_t r = (v.size() * pct + 99) / 100;
	return v[(r ? r : 1) - 1];
}

TEST(Hist, BucketsAreMonotoneAndNarrow)
{
	unsigned last = 0;
	for (uint64_t v = 1; v < (1ull << 40); v = v + v / 97 + 1) {
		unsigned b = hist_bucket(v);
		ASSERT_GE(b, last) << v;
		ASSERT_LT(b, (unsigned)HIST_BUCKETS);
		last = b;
	}
	EXPECT_LT(hist_bucket(UINT64_MAX), (unsigned)HIST_BUCKETS);
	for (uint64_t v = 0; v < 256; v++)
		EXPECT_EQ(hist_bucket(v), (unsigned)v);
	/* a bucket above 256 is at most 1/128 of its values wide */
	EXPECT_NE(hist_bucket(1000000), hist_bucket(1000000 + 1000000 / 100));
}

TEST(Hist, PercentilesWithinOnePercentOfTheExactRank)
{
	struct hist h = {};
	std::vector<uint64_t> v;
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t s = 1000 + x % 50000000; /* 1 us .. 50 ms */
		v.push_back(s);
		ASSERT_EQ(hist_push(&h, s), 0);
	}
	for (unsigned p : { 1u, 50u, 90u, 99u, 100u }) {
		uint64_t want = exact_rank(v, p), got = hist_rank(&h, p);
		EXPECT_LE(got > want ? got - want : want - got, want / 100) << "p" << p;
	}
	EXPECT_EQ(h.max, *std::max_element(v.begin(), v.end()));
	EXPECT_EQ(h.n, v.size());
	hist_free(&h);
}

TEST(Hist, EqualSamplesGiveTheExactValue)
{
	struct hist h = {};
	for (int i = 0; i < 10; i++)
		hist_push(&h, 2000000);
	for (int i = 0; i < 10; i++)
		hist_push(&h, 3000000);
	EXPECT_EQ(hist_rank(&h, 50), 2000000u);
	EXPECT_EQ(hist_rank(&h, 99), 3000000u);
	EXPECT_EQ(h.max, 3000000u);
	hist_free(&h);
	EXPECT_EQ(hist_rank(&h, 50), 0u);
}

} // namespace
