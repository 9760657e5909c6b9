// --strategy guided (explore/guided.c): its mutations keep a plan well formed
// and are a function of the seed; its corpus keeps an execution that reached a
// new abstract state or new step pairs, and only such.
#include <gtest/gtest.h>

#include <vector>

extern "C" {
#include "explore/xint.h"
}

namespace {

struct Guided {
	struct xguided *g = guided_new();
	~Guided() { guided_free(g); }
};

std::vector<xchoice> mutant(uint64_t seed, uint64_t k, const std::vector<xchoice> &dev,
			    const std::vector<xchoice> &other, unsigned stack)
{
	Guided g;
	EXPECT_NE(g.g, nullptr);
	guided_seed(g.g, seed, k);
	EXPECT_EQ(guided_mutate(g.g, dev.data(), dev.size(), other.empty() ? nullptr : other.data(), other.size(),
				3, 40, 2, stack), 0);
	size_t n;
	const xchoice *p = guided_plan(g.g, &n);
	return std::vector<xchoice>(p, p + n);
}

bool same(const std::vector<xchoice> &a, const std::vector<xchoice> &b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (a[i].at != b[i].at || a[i].kind != b[i].kind || a[i].w != b[i].w || a[i].m != b[i].m)
			return false;
	return true;
}

const std::vector<xchoice> kParent = { { 3, XK_RUN, 1, 0 }, { 9, XK_STALL, 0, 1 }, { 15, XK_RUN, 2, 0 } };
const std::vector<xchoice> kOther = { { 1, XK_RUN, 2, 0 }, { 20, XK_CRASH, 1, 0 } };

TEST(Guided, MutantsAreWellFormed)
{
	for (uint64_t k = 0; k < 500; k++) {
		std::vector<xchoice> p = mutant(1, k, kParent, kOther, 1u << (k % 4));
		for (size_t i = 0; i < p.size(); i++) {
			EXPECT_LT(p[i].w, 3) << "schedule " << k;
			EXPECT_LE(p[i].kind, XK_PAUSE) << "schedule " << k;
			EXPECT_LT(p[i].m, 2) << "schedule " << k;
			if (i) {
				EXPECT_LT(p[i - 1].at, p[i].at) << "sorted, one per decision; schedule " << k;
			}
		}
	}
}

TEST(Guided, MutantsAreAFunctionOfTheSeed)
{
	unsigned differ = 0, changed = 0;
	for (uint64_t k = 0; k < 200; k++) {
		std::vector<xchoice> a = mutant(5, k, kParent, kOther, 4), b = mutant(5, k, kParent, kOther, 4);
		EXPECT_TRUE(same(a, b)) << "schedule " << k;
		differ += !same(a, mutant(6, k, kParent, kOther, 4));
		changed += !same(a, kParent);
	}
	EXPECT_GT(differ, 100u) << "another seed, other mutants";
	EXPECT_GT(changed, 150u) << "a mutant is mostly not its parent";
}

TEST(Guided, AnEmptyParentGrows)
{
	for (uint64_t k = 0; k < 50; k++)
		EXPECT_FALSE(mutant(1, k, {}, {}, 1).empty()) << "an empty plan can only take an insert";
}

TEST(Guided, TheCorpusKeepsOnlyNews)
{
	Guided g;
	ASSERT_NE(g.g, nullptr);
	std::vector<xstep> steps(2);
	for (auto &s : steps)
		s = xstep{};
	steps[0].kind = XK_RUN;
	steps[0].fsop = 3;
	steps[1].kind = XK_RUN;
	steps[1].w = 1;
	steps[1].fsop = 4;
	xchoice dev[1] = { { 1, XK_RUN, 1, 0 } };
	xexec x{};
	x.step = steps.data();
	x.nstep = steps.size();
	x.dev = dev;
	x.ndev = 1;
	x.outcome = XO_PASS;
	EXPECT_EQ(guided_learn(g.g, nullptr, &x, 0), 1) << "the first states are new";
	EXPECT_EQ(guided_learn(g.g, nullptr, &x, 0), 0) << "the same states again are not";
	EXPECT_EQ(guided_corpus_size(g.g), 1u);
	EXPECT_EQ(guided_learn(g.g, nullptr, &x, 1), 1) << "new step pairs are news";
	steps[1].result = -1;
	steps[1].err = 2;
	EXPECT_EQ(guided_learn(g.g, nullptr, &x, 0), 1) << "an errno is another state";
	x.outcome = XO_HARNESS;
	steps[1].err = 5;
	EXPECT_EQ(guided_learn(g.g, nullptr, &x, 1), 0) << "a harness failure is never kept";
	EXPECT_EQ(guided_corpus_size(g.g), 3u);
}

} // namespace
