/* unit_protocols.cc - protocols step by step, single process: arrange files on
 * disk, call one op, check the outcome and what is left on disk.  Plus the
 * registry conformance suite and params.c.
 *
 * No fsx binding here: every fsx call passes straight through.  Nothing
 * sleeps to synchronise and nothing asserts on timing; "old" means an mtime
 * set an hour back with utimensat, far past any stale age used below. */
#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "faults/fsx.h"
#include "protocols/lock.h"
}

namespace {

/* ---------------------------------------------------------------- disk */

bool is_dir(const std::string &p)
{
	struct stat st;
	return lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool is_reg(const std::string &p)
{
	struct stat st;
	return lstat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

time_t mtime(const std::string &p)
{
	struct stat st;
	return lstat(p.c_str(), &st) == 0 ? st.st_mtim.tv_sec : 0;
}

void mk(const std::string &p)
{
	ASSERT_EQ(mkdir(p.c_str(), 0777), 0) << p << ": " << strerror(errno);
}

void touch(const std::string &p)
{
	int fd = open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0666);
	ASSERT_GE(fd, 0) << p << ": " << strerror(errno);
	close(fd);
}

bool is_old(const std::string &p)
{
	return mtime(p) < time(nullptr) - 1800;
}

/* ---------------------------------------------------------------- locks */

/* One worker's lock on FILE, params resolved from "K=V" overrides at time
 * scale 1.  Not copyable: lk.rng points into it. */
struct TestLock {
	struct lock lk;
	struct prng rng;

	TestLock(const struct lock_ops *ops, const std::string &file, unsigned worker,
		 std::vector<std::string> kv = {})
	{
		int64_t vals[LS_MAX_PARAMS];
		std::vector<const char *> p;
		char why[256] = "";
		for (auto &s : kv)
			p.push_back(s.c_str());
		if (param_resolve(ops->params, vals, p.data(), (unsigned)p.size(), 1.0, nullptr, why,
				  sizeof why) != 0)
			ADD_FAILURE() << why;
		prng_seed(&rng, 42, worker, 0);
		lock_setup(&lk, ops, file.c_str(), vals, worker, &rng);
		EXPECT_EQ(ops->init(&lk), 0);
	}
	TestLock(const TestLock &) = delete;
	TestLock &operator=(const TestLock &) = delete;

	int acquire() { return lk.ops->acquire(&lk); }
	int held() { return lk.ops->held(&lk); }
	int release() { return lk.ops->release(&lk); }
	std::string path() const { return lk.path; }
};

/* Small budgets so a waiting acquire gives up at once (the loops still run). */
const std::vector<std::string> kQuick = { "retries=3", "wait_ms=1", "bounded_retries=1",
					  "bounded_wait_ms=1" };

std::vector<std::string> with(std::vector<std::string> kv, const std::string &more)
{
	kv.push_back(more);
	return kv;
}

/* The owner-* names in L. */
std::vector<std::string> owner_entries(const std::string &L)
{
	std::vector<std::string> out;
	for (auto &n : entries(L))
		if (n.rfind("owner-", 0) == 0)
			out.push_back(n);
	return out;
}

/* A scratch dir with the protected file's name and its lock path. */
struct Env {
	ScratchDir dir;
	std::string file = dir.sub("state.json");
	std::string L = file + ".lock";
	std::string gone = dir.sub("swept/state.json"); /* parent folder missing */
};

/* ================================================================ params */

const char *const kChoices[] = { "acquire", "try", "bounded", NULL };
const struct param kParams[] = {
	{ "stale_ms", 10000, PU_MS, NULL, "" },
	{ "retries", 100, PU_COUNT, NULL, "" },
	{ "form", 0, PU_CHOICE, kChoices, "" },
	{ "bounded_wait_ms", 5, PU_MS, NULL, "" },
	{ "off_ms", 0, PU_MS, NULL, "" },
	{ NULL, 0, PU_COUNT, NULL, NULL },
};

struct ParseRow {
	int param; /* index into kParams */
	const char *in;
	int ok;
	int64_t want;
};

TEST(Params, ParseTable)
{
	const ParseRow rows[] = {
		{ 0, "1500", 1, 1500 },      { 0, "250ms", 1, 250 },   { 0, "10s", 1, 10000 },
		{ 0, "1.5s", 1, 1500 },      { 0, "0", 1, 0 },         { 0, "0.4", 1, 0 },
		{ 0, "", 0, 0 },             { 0, "abc", 0, 0 },       { 0, "10m", 1, 600000 },
		{ 0, "-5", 0, 0 },           { 0, "s", 0, 0 },         { 0, "1e3", 0, 0 },
		{ 0, "inf", 0, 0 },          { 0, "10 s", 0, 0 },      { 1, "7", 1, 7 },
		{ 1, "0", 1, 0 },            { 1, "-1", 0, 0 },        { 1, "1.5", 0, 0 },
		{ 1, "7s", 0, 0 },           { 1, "", 0, 0 },          { 1, "99999999999999999999", 0, 0 },
		{ 2, "acquire", 1, 0 },      { 2, "try", 1, 1 },       { 2, "bounded", 1, 2 },
		{ 2, "2", 1, 2 },            { 2, "3", 0, 0 },         { 2, "Try", 0, 0 },
		{ 2, "", 0, 0 },
	};
	for (const auto &r : rows) {
		int64_t v = -42;
		char why[256] = "";
		int rc = param_parse(&kParams[r.param], r.in, &v, why, sizeof why);
		if (r.ok) {
			EXPECT_EQ(rc, 0) << kParams[r.param].name << "='" << r.in << "': " << why;
			EXPECT_EQ(v, r.want) << kParams[r.param].name << "='" << r.in << "'";
		} else {
			EXPECT_EQ(rc, -1) << kParams[r.param].name << "='" << r.in << "' parsed";
			EXPECT_NE(strstr(why, kParams[r.param].name), nullptr) << why;
			EXPECT_EQ(strchr(why, '\n'), nullptr) << "one line: " << why;
		}
	}
}

TEST(Params, BadChoiceListsTheChoices)
{
	char why[256] = "";
	int64_t v;
	ASSERT_EQ(param_parse(&kParams[2], "sometimes", &v, why, sizeof why), -1);
	EXPECT_NE(strstr(why, "'sometimes'"), nullptr) << why;
	EXPECT_NE(strstr(why, "acquire|try|bounded"), nullptr) << why;
}

TEST(Params, IndexCountFormat)
{
	EXPECT_EQ(param_count(kParams), 5);
	EXPECT_EQ(param_index(kParams, "form"), 2);
	EXPECT_EQ(param_index(kParams, "nope"), -1);
	char buf[64];
	param_format(&kParams[2], 1, buf, sizeof buf);
	EXPECT_STREQ(buf, "try");
	param_format(&kParams[0], 10000, buf, sizeof buf);
	EXPECT_STREQ(buf, "10000");
	param_format(&kParams[1], 3, buf, sizeof buf);
	EXPECT_STREQ(buf, "3");
}

TEST(Params, ResolveDefaultsOverridesAndScale)
{
	int64_t v[LS_MAX_PARAMS];
	const char *kv[] = { "stale_ms=10s", "workers=8", "retries=7", "form=try" };
	unsigned char used[4] = { 0, 0, 0, 0 };
	char why[256] = "";

	ASSERT_EQ(param_resolve(kParams, v, nullptr, 0, 1.0, nullptr, why, sizeof why), 0) << why;
	EXPECT_EQ(v[0], 10000);
	EXPECT_EQ(v[1], 100);
	EXPECT_EQ(v[2], 0);
	EXPECT_EQ(v[3], 5);

	ASSERT_EQ(param_resolve(kParams, v, kv, 4, 0.01, used, why, sizeof why), 0) << why;
	EXPECT_EQ(v[0], 100) << "10s x 0.01";
	EXPECT_EQ(v[1], 7) << "counts are not scaled";
	EXPECT_EQ(v[2], 1) << "choices are not scaled";
	EXPECT_EQ(v[3], 1) << "5 ms x 0.01 rounds to 0: a positive constant stays >= 1";
	EXPECT_EQ(v[4], 0) << "0 stays 0";
	EXPECT_EQ(used[0], 1);
	EXPECT_EQ(used[1], 0) << "workers= is for someone else";
	EXPECT_EQ(used[2], 1);
	EXPECT_EQ(used[3], 1);

	ASSERT_EQ(param_resolve(kParams, v, nullptr, 0, 0.333, nullptr, why, sizeof why), 0);
	EXPECT_EQ(v[0], 3330) << "rounded";
}

TEST(Params, ResolveErrors)
{
	int64_t v[LS_MAX_PARAMS];
	char why[256];
	const char *malformed[] = { "stale_ms" };
	const char *nokey[] = { "=5" };
	const char *bad[] = { "retries=lots" };

	why[0] = '\0';
	EXPECT_EQ(param_resolve(kParams, v, malformed, 1, 1.0, nullptr, why, sizeof why), -1);
	EXPECT_NE(strstr(why, "stale_ms"), nullptr) << why;
	why[0] = '\0';
	EXPECT_EQ(param_resolve(kParams, v, nokey, 1, 1.0, nullptr, why, sizeof why), -1);
	EXPECT_STRNE(why, "");
	why[0] = '\0';
	EXPECT_EQ(param_resolve(kParams, v, bad, 1, 1.0, nullptr, why, sizeof why), -1);
	EXPECT_NE(strstr(why, "retries"), nullptr) << why;
	EXPECT_NE(strstr(why, "lots"), nullptr) << why;
	why[0] = '\0';
	EXPECT_EQ(param_resolve(kParams, v, nullptr, 0, 0.0, nullptr, why, sizeof why), -1);
	EXPECT_STRNE(why, "");
}

TEST(Params, LockSetup)
{
	struct lock lk;
	struct prng rng;
	int64_t vals[LS_MAX_PARAMS] = { 111, 3, 1, 7, 0, 0, 0, 0, 0 };

	memset(&lk, 0xab, sizeof lk);
	prng_seed(&rng, 1, 2, 3);
	lock_setup(&lk, &mkdir_legacy_ops, "/x/state.json", vals, 5, &rng);
	EXPECT_EQ(lk.ops, &mkdir_legacy_ops);
	EXPECT_STREQ(lk.file, "/x/state.json");
	EXPECT_STREQ(lk.path, "/x/state.json.lock");
	EXPECT_EQ(lk.param[0], 111);
	EXPECT_EQ(lk.param[3], 7);
	EXPECT_EQ(lk.worker, 5u);
	EXPECT_EQ(lk.rng, &rng);
	EXPECT_EQ(lk.last_error, 0);
	for (size_t i = 0; i < sizeof lk.state.bytes; i++)
		ASSERT_EQ(lk.state.bytes[i], 0) << "state byte " << i;
}

/* ================================================================ registry */

TEST(ProtoRegistry, FindAndNames)
{
	char names[512];
	lock_names(names, sizeof names);
	for (int i = 0; lock_registry[i]; i++) {
		EXPECT_EQ(lock_find(lock_registry[i]->name), lock_registry[i]);
		EXPECT_NE(strstr(names, lock_registry[i]->name), nullptr) << names;
	}
	/* every name once, joined by ", ", in registry order */
	std::string want;
	for (int i = 0; lock_registry[i]; i++)
		want += std::string(i ? ", " : "") + lock_registry[i]->name;
	EXPECT_EQ(std::string(names), want);
	EXPECT_EQ(lock_find("mkdir"), nullptr);
	EXPECT_EQ(lock_find(""), nullptr);

	char tiny[8];
	lock_names(tiny, sizeof tiny);
	EXPECT_LT(strlen(tiny), sizeof tiny) << "truncated, NUL-terminated";
}

/* Every table is complete: no NULL hook, params and points well formed. */
TEST(ProtoConformance, Tables)
{
	const std::regex point_re("([a-z0-9-]+)/([a-z0-9-]+)/(before|after)-[a-z0-9-]+");
	for (int i = 0; lock_registry[i]; i++) {
		const struct lock_ops *o = lock_registry[i];
		SCOPED_TRACE(o->name);
		EXPECT_TRUE(o->origin && *o->origin);
		EXPECT_TRUE(o->summary && *o->summary);
		EXPECT_TRUE(o->claims && *o->claims);
		EXPECT_TRUE(o->init && o->acquire && o->held && o->release && o->stale_ms &&
			    o->wait_budget_ms);

		ASSERT_NE(o->params, nullptr);
		ASSERT_LE(param_count(o->params), LS_MAX_PARAMS);
		std::set<std::string> pnames;
		for (int k = 0; o->params[k].name; k++) {
			const struct param *p = &o->params[k];
			EXPECT_TRUE(pnames.insert(p->name).second) << "duplicate param " << p->name;
			if (p->unit == PU_CHOICE) {
				ASSERT_NE(p->choices, nullptr) << p->name;
				int n = 0;
				while (p->choices[n])
					n++;
				EXPECT_TRUE(p->def >= 0 && p->def < n) << p->name;
			} else {
				EXPECT_GE(p->def, 0) << p->name;
			}
		}
		EXPECT_EQ(pnames.count("stale_ms"), 1u) << "every protocol sizes for=Nstale";

		ASSERT_NE(o->points, nullptr);
		std::set<std::string> seen;
		for (int k = 0; o->points[k]; k++) {
			std::smatch m;
			std::string pt = o->points[k];
			ASSERT_TRUE(std::regex_match(pt, m, point_re)) << pt;
			EXPECT_EQ(m[1].str(), o->name) << pt;
			EXPECT_TRUE(seen.insert(pt).second) << "duplicate point " << pt;
		}
		EXPECT_FALSE(seen.empty());
	}
}

/* On a free lock, in every form: acquire 0, held 1, release 0; afterwards no
 * lock object is left, except flock's lock file; none never creates one. */
TEST(ProtoConformance, FreeLockRoundTrip)
{
	for (int i = 0; lock_registry[i]; i++) {
		const struct lock_ops *o = lock_registry[i];
		std::vector<std::string> forms = { "" };
		if (param_index(o->params, "form") >= 0)
			forms = { "form=acquire", "form=try", "form=bounded" };
		for (const auto &form : forms) {
			SCOPED_TRACE(std::string(o->name) + " " + form);
			Env env;
			std::vector<std::string> kv;
			if (!form.empty())
				kv.push_back(form);
			TestLock a(o, env.file, 0, kv);

			EXPECT_GT(o->stale_ms(&a.lk), 0);
			EXPECT_GE(o->wait_budget_ms(&a.lk), 0);

			ASSERT_EQ(a.acquire(), 0) << strerror(errno);
			EXPECT_EQ(a.held(), 1);
			if (o == &none_ops) {
				EXPECT_FALSE(exists(env.L)) << "none takes nothing";
			} else {
				EXPECT_TRUE(exists(env.L));
			}
			EXPECT_EQ(a.release(), 0) << strerror(errno);

			auto left = entries(env.dir.path);
			if (o == &flock_ops) {
				EXPECT_EQ(left, std::vector<std::string>{ "state.json.lock" });
				EXPECT_TRUE(is_reg(env.L));
			} else {
				EXPECT_TRUE(left.empty()) << left.size() << " left, first " << left[0];
			}

			/* and again: nothing is left that blocks the next round */
			ASSERT_EQ(a.acquire(), 0) << strerror(errno);
			EXPECT_EQ(a.release(), 0);
		}
	}
}

/* ================================================================ mkdir-legacy */

/* One step: arrange the disk, call acquire in one form, check outcome and disk. */
struct Row {
	const char *name;
	void (*arrange)(const Env &); /* nullptr: nothing on disk */
	bool swept;                   /* the lock's parent folder does not exist */
	const char *form;
	int want;       /* 0, LS_BUSY or -1 */
	int want_errno; /* when want == -1 */
	void (*check)(const Env &, TestLock &);
};

void run_rows(const struct lock_ops *ops, const Row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Row &r = rows[i];
		SCOPED_TRACE(std::string(r.name) + " [" + r.form + "]");
		Env env;
		if (r.arrange)
			r.arrange(env);
		TestLock a(ops, r.swept ? env.gone : env.file, 1,
			   with(kQuick, std::string("form=") + r.form));
		errno = 0;
		int rc = a.acquire();
		EXPECT_EQ(rc, r.want);
		if (r.want == -1) {
			EXPECT_EQ(errno, r.want_errno) << strerror(errno);
		}
		if (r.check)
			r.check(env, a);
	}
}

void free_dir_l(const Env &e) { mk(e.L); }
void stale_l(const Env &e)
{
	mk(e.L);
	age(e.L);
}
void stale_l_with_file(const Env &e)
{
	mk(e.L);
	touch(e.L + "/owner-7-0123456789ab");
	age(e.L);
}

void l_is_lock_dir(const Env &e, TestLock &) { EXPECT_TRUE(is_dir(e.L)); }
void l_fresh_lock(const Env &e, TestLock &)
{
	EXPECT_TRUE(is_dir(e.L));
	EXPECT_FALSE(is_old(e.L)) << "taken anew";
}
void l_untouched(const Env &e, TestLock &)
{
	EXPECT_TRUE(is_dir(e.L));
	EXPECT_TRUE(entries(e.L).empty());
}
void l_still_old(const Env &e, TestLock &)
{
	EXPECT_TRUE(is_old(e.L)) << "fails closed: a non-empty lock is not removed";
	EXPECT_EQ(entries(e.L).size(), 1u);
}
void nothing_made(const Env &e, TestLock &)
{
	EXPECT_TRUE(entries(e.dir.path).empty());
}

TEST(ProtoLegacy, Steps)
{
	const Row rows[] = {
		/* ML1 / MA1: free lock */
		{ "free", nullptr, false, "acquire", 0, 0, l_is_lock_dir },
		{ "free", nullptr, false, "try", 0, 0, l_is_lock_dir },
		{ "free", nullptr, false, "bounded", 0, 0, l_is_lock_dir },
		/* ML4: a fresh lock is a live holder: never waited on by try */
		{ "fresh", free_dir_l, false, "try", LS_BUSY, 0, l_untouched },
		{ "fresh", free_dir_l, false, "bounded", LS_BUSY, 0, l_untouched },
		{ "fresh", free_dir_l, false, "acquire", LS_BUSY, 0, l_untouched },
		/* ML5-ML6 / MA3-MA1: a stale lock is rmdir'd by name and taken anew */
		{ "stale", stale_l, false, "try", 0, 0, l_fresh_lock },
		{ "stale", stale_l, false, "acquire", 0, 0, l_fresh_lock },
		/* ML5 ENOTEMPTY -> null; MA3 error -> sleep: a non-empty lock (a
		 * 2.0.0 runtime's) is never taken (§9.1 item 2) */
		{ "stale non-empty", stale_l_with_file, false, "try", LS_BUSY, 0, l_still_old },
		{ "stale non-empty", stale_l_with_file, false, "acquire", LS_BUSY, 0, l_still_old },
		/* ML1 ENOENT raises; MA1 ENOENT is contention (K-ML-3) */
		{ "swept parent", nullptr, true, "try", -1, ENOENT, nothing_made },
		{ "swept parent", nullptr, true, "bounded", -1, ENOENT, nothing_made },
		{ "swept parent", nullptr, true, "acquire", LS_BUSY, 0, nothing_made },
	};
	run_rows(&mkdir_legacy_ops, rows, sizeof rows / sizeof rows[0]);
}

TEST(ProtoLegacy, HolderMakesOthersBusy)
{
	Env env;
	TestLock a(&mkdir_legacy_ops, env.file, 0, kQuick);
	TestLock b(&mkdir_legacy_ops, env.file, 1, with(kQuick, "form=try"));
	TestLock c(&mkdir_legacy_ops, env.file, 2, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(b.acquire(), LS_BUSY);
	EXPECT_EQ(c.acquire(), LS_BUSY);
	EXPECT_EQ(a.held(), 1);
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L));
	EXPECT_EQ(b.acquire(), 0);
	EXPECT_EQ(b.release(), 0);
}

/* K-ML-1 step 5: release rmdir's by name, so it removes a lock it did not make. */
TEST(ProtoLegacy, ReleaseRemovesAnothersLock)
{
	Env env;
	TestLock a(&mkdir_legacy_ops, env.file, 0, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	/* A's lock is judged stale and broken; B takes a new one at L */
	ASSERT_EQ(rmdir(env.L.c_str()), 0);
	mk(env.L);
	EXPECT_EQ(a.held(), 1) << "beta.5 has no held() check";
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L)) << "B's lock is gone: a third process may take it";
}

TEST(ProtoLegacy, BudgetsAndStale)
{
	Env env;
	TestLock a(&mkdir_legacy_ops, env.file, 0);
	EXPECT_EQ(mkdir_legacy_ops.stale_ms(&a.lk), 10000);
	EXPECT_GE(mkdir_legacy_ops.wait_budget_ms(&a.lk), 5000) << "100 x 50 ms";
	EXPECT_LT(mkdir_legacy_ops.wait_budget_ms(&a.lk), 10000) << "wait budget < stale";
	EXPECT_EQ(mkdir_legacy_ops.flags & LOCK_HAS_HELD, 0u);
}

/* ================================================================ mkdir-owner */

std::string pid_entry_re()
{
	return "owner-" + std::to_string(getpid()) + "-[0-9a-f]{12}";
}

void stale_l_two_entries(const Env &e)
{
	mk(e.L);
	mk(e.L + "/owner-1-aaaaaaaaaaaa");
	mk(e.L + "/owner-2-bbbbbbbbbbbb");
	age(e.L);
}
void fresh_l_foreign_entry(const Env &e)
{
	mk(e.L);
	mk(e.L + "/owner-1-aaaaaaaaaaaa");
}
void stale_l_stray_file(const Env &e)
{
	mk(e.L);
	touch(e.L + "/junk");
	age(e.L);
}
void stale_l_full_entry(const Env &e)
{
	mk(e.L);
	mk(e.L + "/owner-1-aaaaaaaaaaaa");
	touch(e.L + "/owner-1-aaaaaaaaaaaa/x");
	age(e.L);
}
void l_is_file(const Env &e) { touch(e.L); }
void stale_l_is_file(const Env &e)
{
	touch(e.L);
	age(e.L);
}

void just_our_entry(const Env &e, TestLock &a)
{
	auto names = entries(e.L);
	ASSERT_EQ(names.size(), 1u);
	EXPECT_TRUE(std::regex_match(names[0], std::regex(pid_entry_re()))) << names[0];
	EXPECT_EQ(a.held(), 1);
}
void no_entry_left(const Env &e, TestLock &)
{
	EXPECT_TRUE(is_dir(e.L));
	EXPECT_TRUE(owner_entries(e.L).empty());
}
void only_foreign_entry(const Env &e, TestLock &)
{
	EXPECT_EQ(entries(e.L), std::vector<std::string>{ "owner-1-aaaaaaaaaaaa" });
}
void stray_still_blocks(const Env &e, TestLock &)
{
	EXPECT_EQ(entries(e.L), std::vector<std::string>{ "junk" }) << "our entry withdrawn";
}
void full_entry_stays(const Env &e, TestLock &)
{
	EXPECT_EQ(entries(e.L), std::vector<std::string>{ "owner-1-aaaaaaaaaaaa" });
}
void l_file_untouched(const Env &e, TestLock &)
{
	EXPECT_TRUE(is_reg(e.L));
}

TEST(ProtoOwner, Steps)
{
	const Row rows[] = {
		/* AT2 ok, AT3 ok, AT5 ELECT: alone -> HELD */
		{ "free", nullptr, false, "acquire", 0, 0, just_our_entry },
		{ "free", nullptr, false, "try", 0, 0, just_our_entry },
		{ "free", nullptr, false, "bounded", 0, 0, just_our_entry },
		/* AT2 EEXIST -> RC2 fresh -> BUSY, before any entry is made */
		{ "fresh empty L", free_dir_l, false, "try", LS_BUSY, 0, no_entry_left },
		{ "fresh empty L", free_dir_l, false, "bounded", LS_BUSY, 0, no_entry_left },
		{ "fresh empty L", free_dir_l, false, "acquire", LS_BUSY, 0, no_entry_left },
		{ "fresh held L", fresh_l_foreign_entry, false, "try", LS_BUSY, 0, only_foreign_entry },
		{ "fresh held L", fresh_l_foreign_entry, false, "acquire", LS_BUSY, 0, only_foreign_entry },
		/* RC1-RC9: stale, reclaimed in place */
		{ "stale empty L", stale_l, false, "try", 0, 0, just_our_entry },
		{ "stale empty L", stale_l, false, "acquire", 0, 0, just_our_entry },
		{ "stale L, 2 entries", stale_l_two_entries, false, "try", 0, 0, just_our_entry },
		{ "stale L, 2 entries", stale_l_two_entries, false, "acquire", 0, 0, just_our_entry },
		/* RC8 ENOTDIR / ENOTEMPTY: withdraw, BUSY; the stray blocks until removed */
		{ "stale L, stray file", stale_l_stray_file, false, "try", LS_BUSY, 0, stray_still_blocks },
		{ "stale L, stray file", stale_l_stray_file, false, "acquire", LS_BUSY, 0, stray_still_blocks },
		{ "stale L, full entry", stale_l_full_entry, false, "acquire", LS_BUSY, 0, full_entry_stays },
		/* L a regular file: EEXIST; fresh -> BUSY; stale -> RC3 ENOTDIR -> BUSY */
		{ "L is a file", l_is_file, false, "try", LS_BUSY, 0, l_file_untouched },
		{ "stale L is a file", stale_l_is_file, false, "acquire", LS_BUSY, 0, l_file_untouched },
		/* AT2 ENOENT raises out of every driver (update-merge retries it) */
		{ "swept parent", nullptr, true, "try", -1, ENOENT, nothing_made },
		{ "swept parent", nullptr, true, "acquire", -1, ENOENT, nothing_made },
		{ "swept parent", nullptr, true, "bounded", -1, ENOENT, nothing_made },
	};
	run_rows(&mkdir_owner_ops, rows, sizeof rows / sizeof rows[0]);
}

TEST(ProtoOwner, FreeLockOneEntryThenReleaseRemovesAll)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);

	EXPECT_EQ(a.held(), 0) << "nothing acquired yet";
	ASSERT_EQ(a.acquire(), 0) << strerror(errno);
	auto names = entries(env.L);
	ASSERT_EQ(names.size(), 1u);
	EXPECT_TRUE(std::regex_match(names[0], std::regex(pid_entry_re()))) << names[0];
	EXPECT_EQ(a.held(), 1);
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L)) << "RL3 removed our entry, RL5 the same L";
	EXPECT_EQ(a.held(), 0) << "released";
}

TEST(ProtoOwner, SecondWorkerBusyAndLeavesNoEntry)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);
	TestLock b(&mkdir_owner_ops, env.file, 1, with(kQuick, "form=try"));
	TestLock c(&mkdir_owner_ops, env.file, 2, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	auto held = entries(env.L);
	EXPECT_EQ(b.acquire(), LS_BUSY);
	EXPECT_EQ(entries(env.L), held);
	EXPECT_EQ(c.acquire(), LS_BUSY);
	EXPECT_EQ(entries(env.L), held);
	EXPECT_EQ(b.held(), 0);
	EXPECT_EQ(a.held(), 1);

	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(b.acquire(), 0);
	EXPECT_EQ(b.release(), 0);
	EXPECT_FALSE(exists(env.L));
}

/* A holder paused past the stale age is reclaimed in place; held() then says
 * lost, and its release removes nothing of the new holder's. */
TEST(ProtoOwner, ReclaimedHolderLosesAndReleasesNothing)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);
	TestLock b(&mkdir_owner_ops, env.file, 1, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	std::string a_entry = entries(env.L).at(0);
	ino_t l_ino = ino(env.L);
	age(env.L); /* A stalls past stale_ms */

	ASSERT_EQ(b.acquire(), 0);
	EXPECT_EQ(ino(env.L), l_ino) << "reclaimed in place: L never emptied";
	auto names = entries(env.L);
	ASSERT_EQ(names.size(), 1u);
	EXPECT_NE(names[0], a_entry) << "A's entry was removed (RC8)";
	EXPECT_EQ(a.held(), 0) << "HC1: A's entry is gone";
	EXPECT_EQ(b.held(), 1);

	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(entries(env.L), names) << "A's release left B's lock alone";
	EXPECT_EQ(b.held(), 1);

	EXPECT_EQ(b.release(), 0);
	EXPECT_FALSE(exists(env.L));
}

TEST(ProtoOwner, StaleLockWithEntriesReclaimedInPlace)
{
	Env env;
	stale_l_two_entries(env);
	ino_t l_ino = ino(env.L);
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(ino(env.L), l_ino);
	auto names = entries(env.L);
	ASSERT_EQ(names.size(), 1u);
	EXPECT_TRUE(std::regex_match(names[0], std::regex(pid_entry_re()))) << names[0];
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L));
}

/* An older runtime's lock is an empty L: waited on until stale, then reclaimed. */
TEST(ProtoOwner, FreshEmptyLockBusyUntilStale)
{
	Env env;
	mk(env.L);
	ino_t l_ino = ino(env.L);
	TestLock a(&mkdir_owner_ops, env.file, 0, with(kQuick, "form=try"));

	EXPECT_EQ(a.acquire(), LS_BUSY);
	EXPECT_EQ(a.acquire(), LS_BUSY);
	EXPECT_TRUE(entries(env.L).empty());
	age(env.L);
	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(ino(env.L), l_ino);
	EXPECT_EQ(owner_entries(env.L).size(), 1u);
	EXPECT_EQ(a.release(), 0);
	EXPECT_FALSE(exists(env.L));
}

/* RL0: only the first release acts; a later L (someone else's) survives. */
TEST(ProtoOwner, ReleaseIsIdempotent)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);
	TestLock b(&mkdir_owner_ops, env.file, 1, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	EXPECT_EQ(a.release(), 0);
	ASSERT_EQ(b.acquire(), 0);
	auto names = entries(env.L);
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(entries(env.L), names);
	EXPECT_EQ(b.held(), 1);
	EXPECT_EQ(b.release(), 0);
}

/* RL4: A's entry gone and L replaced by an older runtime's empty lock: A's
 * release removes neither. */
TEST(ProtoOwner, ReleaseLeavesAReplacedLock)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);

	ASSERT_EQ(a.acquire(), 0);
	std::string a_entry = env.L + "/" + entries(env.L).at(0);
	ASSERT_EQ(rmdir(a_entry.c_str()), 0);
	ASSERT_EQ(rmdir(env.L.c_str()), 0);
	mk(env.L);
	EXPECT_EQ(a.held(), 0);
	EXPECT_EQ(a.release(), 0);
	EXPECT_TRUE(is_dir(env.L)) << "not ours to remove";
}

/* Names: 6 bytes from the worker's PRNG, fresh each attempt, reproducible. */
TEST(ProtoOwner, EntryNamesComeFromTheWorkerStream)
{
	Env env;
	std::vector<std::string> first, second;
	for (int round = 0; round < 2; round++) {
		TestLock a(&mkdir_owner_ops, env.file, 3, kQuick);
		TestLock b(&mkdir_owner_ops, env.file, 4, kQuick);
		for (TestLock *l : { &a, &b }) {
			ASSERT_EQ(l->acquire(), 0);
			(round ? second : first).push_back(entries(env.L).at(0));
			EXPECT_EQ(l->release(), 0);
		}
		ASSERT_EQ(a.acquire(), 0);
		(round ? second : first).push_back(entries(env.L).at(0));
		EXPECT_EQ(a.release(), 0);
	}
	EXPECT_EQ(first, second) << "same seed, same names";
	EXPECT_NE(first[0], first[1]) << "workers differ";
	EXPECT_NE(first[0], first[2]) << "a name is never reused";
}

TEST(ProtoOwner, PlatformParam)
{
	int k = param_index(mkdir_owner_ops.params, "platform");
	ASSERT_GE(k, 0);
	EXPECT_EQ(mkdir_owner_ops.params[k].def, 0) << "posix by default";
	int64_t v = -1;
	char why[128];
	ASSERT_EQ(param_parse(&mkdir_owner_ops.params[k], "win32", &v, why, sizeof why), 0);
	EXPECT_EQ(v, 1);
	EXPECT_EQ(param_parse(&mkdir_owner_ops.params[k], "darwin", &v, why, sizeof why), -1);
	EXPECT_NE(strstr(why, "posix|win32"), nullptr) << why;
}

TEST(ProtoOwner, BudgetsAndStale)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0);
	TestLock t(&mkdir_owner_ops, env.file, 0, { "form=try" });
	EXPECT_EQ(mkdir_owner_ops.stale_ms(&a.lk), 10000);
	EXPECT_GE(mkdir_owner_ops.wait_budget_ms(&a.lk), 5000);
	EXPECT_LT(mkdir_owner_ops.wait_budget_ms(&a.lk), 10000) << "wait budget < stale";
	EXPECT_GE(mkdir_owner_ops.wait_budget_ms(&t.lk), 40) << "CONTEND_MS";
	EXPECT_LT(mkdir_owner_ops.wait_budget_ms(&t.lk), 1000);
	EXPECT_NE(mkdir_owner_ops.flags & LOCK_HAS_HELD, 0u);
}

/*
 * mkdir(L) failing EACCES: POSIX raises it, win32 reads it as "being
 * deleted" and goes to RECLAIM (RC1 ENOENT -> AGAIN), so it gives up BUSY.
 * The legacy try raises it, the legacy acquire calls it contention (K-ML-4).
 * Made real with a read-only parent directory, in a child that drops root
 * (root ignores directory permissions); skipped where that is not possible.
 */
TEST(ProtoOwner, Win32TreatsEaccesAsContention)
{
	Env env;
	std::string ro = env.dir.sub("ro");
	ASSERT_EQ(chmod(env.dir.path.c_str(), 0755), 0);
	mk(ro);
	ASSERT_EQ(chmod(ro.c_str(), 0555), 0);
	std::string file = ro + "/state.json";

	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) != 0 || setuid(65534) != 0))
			_exit(77);
		if (mkdir((ro + "/probe").c_str(), 0777) == 0)
			_exit(77); /* permissions not enforced here */
		int fails = 0;
		{
			TestLock l(&mkdir_owner_ops, file, 0, with(kQuick, "form=try"));
			errno = 0;
			if (!(l.acquire() == -1 && errno == EACCES))
				fails |= 1;
		}
		{
			TestLock l(&mkdir_owner_ops, file, 0, with(with(kQuick, "form=try"), "platform=win32"));
			if (l.acquire() != LS_BUSY)
				fails |= 2;
		}
		{
			TestLock l(&mkdir_owner_ops, file, 0, with(kQuick, "platform=win32"));
			if (l.acquire() != LS_BUSY)
				fails |= 4;
		}
		{
			TestLock l(&mkdir_legacy_ops, file, 0, with(kQuick, "form=try"));
			errno = 0;
			if (!(l.acquire() == -1 && errno == EACCES))
				fails |= 8;
		}
		{
			TestLock l(&mkdir_legacy_ops, file, 0, kQuick);
			if (l.acquire() != LS_BUSY)
				fails |= 16;
		}
		_exit(fails);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 77)
		GTEST_SKIP() << "cannot make mkdir fail EACCES here";
	int fails = WEXITSTATUS(status);
	EXPECT_EQ(fails & 1, 0) << "posix try must raise EACCES";
	EXPECT_EQ(fails & 2, 0) << "win32 try must give up BUSY";
	EXPECT_EQ(fails & 4, 0) << "win32 acquire must give up BUSY";
	EXPECT_EQ(fails & 8, 0) << "legacy try must raise EACCES";
	EXPECT_EQ(fails & 16, 0) << "legacy acquire must treat EACCES as contention";
	EXPECT_TRUE(entries(ro).empty());
}

/* ================================================================ step traces */

/*
 * The same outcome can come from different paths (a protocol is robust by
 * design), so some scenarios also pin the exact file-system steps taken,
 * counted by fsx (which counts even unbound; fsx_exists counts as a stat).
 */
struct Calls {
	uint64_t mkdir, rmdir, stat, list;
	bool operator==(const Calls &o) const
	{
		return mkdir == o.mkdir && rmdir == o.rmdir && stat == o.stat && list == o.list;
	}
};

std::ostream &operator<<(std::ostream &os, const Calls &c)
{
	return os << "{mkdir " << c.mkdir << ", rmdir " << c.rmdir << ", stat " << c.stat
		  << ", list " << c.list << "}";
}

struct CallCounter {
	uint64_t before[FSX_OP_COUNT];
	CallCounter() { memcpy(before, fsx_counts(), sizeof before); }
	Calls since() const
	{
		const uint64_t *now = fsx_counts();
		return { now[FSX_MKDIR] - before[FSX_MKDIR], now[FSX_RMDIR] - before[FSX_RMDIR],
			 now[FSX_STAT] - before[FSX_STAT], now[FSX_LIST] - before[FSX_LIST] };
	}
};

void stale_l_late_stray(const Env &e)
{
	mk(e.L);
	touch(e.L + "/zz-junk"); /* sorts after our name: ELECT would queue us */
	age(e.L);
}

struct TraceRow {
	const char *name;
	const struct lock_ops *ops;
	void (*arrange)(const Env &);
	int want;
	Calls calls;
};

TEST(ProtoTrace, TryStepsTaken)
{
	const TraceRow rows[] = {
		/* AT2, AT3 mkdir; EL1 readdir -> HELD */
		{ "owner free", &mkdir_owner_ops, nullptr, 0, { 2, 0, 0, 1 } },
		/* AT2 EEXIST, RC1 stat, RC2 fresh -> BUSY */
		{ "owner fresh", &mkdir_owner_ops, free_dir_l, LS_BUSY, { 1, 0, 1, 0 } },
		/* AT2, RC1, RC3, RC4, RC6, RC7, RC8 x2, EL1 -> HELD */
		{ "owner stale 2 entries", &mkdir_owner_ops, stale_l_two_entries, 0, { 2, 2, 3, 2 } },
		/* ... RC8 ENOTDIR, WITHDRAW -> BUSY, no ELECT */
		{ "owner stale stray", &mkdir_owner_ops, stale_l_late_stray, LS_BUSY, { 2, 2, 3, 1 } },
		/* ML1 EEXIST, ML2 stat, ML4 stale, ML5 rmdir, ML6 mkdir */
		{ "legacy stale", &mkdir_legacy_ops, stale_l, 0, { 2, 1, 1, 0 } },
		/* ML1 EEXIST, ML2 stat, ML4 fresh -> null */
		{ "legacy fresh", &mkdir_legacy_ops, free_dir_l, LS_BUSY, { 1, 0, 1, 0 } },
	};
	for (const auto &r : rows) {
		SCOPED_TRACE(r.name);
		Env env;
		if (r.arrange)
			r.arrange(env);
		TestLock a(r.ops, env.file, 0, with(kQuick, "form=try"));
		CallCounter c;
		EXPECT_EQ(a.acquire(), r.want);
		EXPECT_EQ(c.since(), r.calls);
	}
}

TEST(ProtoTrace, OwnerReleaseSteps)
{
	Env env;
	TestLock a(&mkdir_owner_ops, env.file, 0, kQuick);
	TestLock b(&mkdir_owner_ops, env.file, 1, kQuick);

	/* RL1 stat, RL2 exists, RL3 rmdir entry, RL4 stat, RL5 rmdir L */
	ASSERT_EQ(a.acquire(), 0);
	CallCounter c1;
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(c1.since(), (Calls{ 0, 2, 3, 0 }));

	/* reclaimed: RL1 stat, RL2 exists (false), RL3 rmdir ENOENT -> return */
	ASSERT_EQ(a.acquire(), 0);
	age(env.L);
	ASSERT_EQ(b.acquire(), 0);
	CallCounter c2;
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(c2.since(), (Calls{ 0, 1, 2, 0 }));

	/* RL0: a second release takes no step */
	CallCounter c3;
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(c3.since(), (Calls{ 0, 0, 0, 0 }));
	EXPECT_EQ(b.release(), 0);
}

/* ================================================================ controls */

TEST(ProtoFlock, HoldsTheKernelLockUntilRelease)
{
	Env env;
	TestLock a(&flock_ops, env.file, 0);

	ASSERT_EQ(a.acquire(), 0) << strerror(errno);
	ASSERT_TRUE(is_reg(env.L));
	int probe = open(env.L.c_str(), O_RDWR | O_CLOEXEC);
	ASSERT_GE(probe, 0);
	EXPECT_EQ(flock(probe, LOCK_EX | LOCK_NB), -1) << "held by A";
	EXPECT_EQ(errno, EWOULDBLOCK);
	EXPECT_EQ(a.held(), 1);
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(flock(probe, LOCK_EX | LOCK_NB), 0) << "released";
	close(probe);
	EXPECT_TRUE(is_reg(env.L)) << "the lock file stays";
	EXPECT_EQ(a.release(), 0) << "a second release is a no-op";
	EXPECT_EQ(flock_ops.stale_ms(&a.lk), LS_NEVER);
}

TEST(ProtoFlock, OpenFailureIsAnError)
{
	Env env;
	TestLock a(&flock_ops, env.gone, 0);
	errno = 0;
	EXPECT_EQ(a.acquire(), -1);
	EXPECT_EQ(errno, ENOENT);
	EXPECT_EQ(a.release(), 0) << "nothing to release";
}

TEST(ProtoNone, TakesNothingSoTwoHolders)
{
	Env env;
	TestLock a(&none_ops, env.file, 0);
	TestLock b(&none_ops, env.file, 1);
	EXPECT_EQ(a.acquire(), 0);
	EXPECT_EQ(b.acquire(), 0) << "busted: both hold";
	EXPECT_EQ(a.held(), 1);
	EXPECT_EQ(b.held(), 1);
	EXPECT_TRUE(entries(env.dir.path).empty());
	EXPECT_EQ(a.release(), 0);
	EXPECT_EQ(b.release(), 0);
	EXPECT_EQ(none_ops.stale_ms(&a.lk), LS_NEVER);
}

} // namespace
