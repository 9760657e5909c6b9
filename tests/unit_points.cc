/* unit_points.cc - every fault point a protocol fires is one of its own
 * .points entries, the very entry (the seam keys its caches by the name's
 * address), and every points table is well formed.
 *
 * No fsx binding: calls pass straight through, and fsx_point_observer sees
 * each fsx_point name.  Each protocol runs, once per value of each of its
 * choice params (form, take, ...): round trips; a second worker against a
 * holder; a holder that died holding (a child that _exit()s), fresh and aged
 * an hour; a holder aged an hour under another's acquire.  Outcomes are not
 * asserted here (unit_protocols.cc does); only the names fired. */
#include <gtest/gtest.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "faults/fsx.h"
#include "protocols/lock.h"
#include "workloads/workload.h"
}

namespace {

std::vector<const char *> g_fired;

void record_point(const char *name)
{
	g_fired.push_back(name);
}

/* Installs the observer for its lifetime. */
struct Observe {
	Observe()
	{
		g_fired.clear();
		fsx_point_observer = record_point;
	}
	~Observe() { fsx_point_observer = nullptr; }
	Observe(const Observe &) = delete;
	Observe &operator=(const Observe &) = delete;
};

/* One worker's lock, params from "K=V" overrides (unknown keys ignored). */
struct Lock {
	struct lock lk;
	struct prng rng;

	Lock(const struct lock_ops *ops, const std::string &file, unsigned worker,
	     const std::vector<std::string> &kv)
	{
		int64_t vals[LS_MAX_PARAMS];
		std::vector<const char *> p;
		char why[256] = "";
		for (auto &s : kv)
			p.push_back(s.c_str());
		if (param_resolve(ops->params, vals, p.data(), (unsigned)p.size(), 1.0, nullptr, why,
				  sizeof why) != 0)
			ADD_FAILURE() << why;
		prng_seed(&rng, 7, worker, 0);
		lock_setup(&lk, ops, file.c_str(), vals, worker, &rng);
		EXPECT_EQ(ops->init(&lk), 0);
	}
	Lock(const Lock &) = delete;
	Lock &operator=(const Lock &) = delete;
	int acquire() { return lk.ops->acquire(&lk); }
	int held() { return lk.ops->held(&lk); }
	int release() { return lk.ops->release(&lk); }
};

/* mtime of everything under dir (dir itself aside) an hour back. */
void age_tree(const std::string &dir)
{
	for (auto &n : entries(dir)) {
		std::string p = dir + "/" + n;
		struct stat st;
		if (lstat(p.c_str(), &st) != 0)
			continue;
		if (S_ISDIR(st.st_mode))
			age_tree(p);
		age(p);
	}
}

/* A holder that dies holding: a child acquires and exits without release. */
void crash_holder(const struct lock_ops *o, const std::string &file,
		  const std::vector<std::string> &kv)
{
	pid_t pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		fsx_point_observer = nullptr;
		Lock c(o, file, 2, kv);
		c.acquire();
		_exit(0);
	}
	int status = 0;
	ASSERT_EQ(waitpid(pid, &status, 0), pid);
}

void scenarios(const struct lock_ops *o, const std::vector<std::string> &kv)
{
	ScratchDir dir;
	std::string file = dir.sub("state.json");

	/* round trips */
	{
		Lock a(o, file, 0, kv);
		for (int i = 0; i < 3; i++) {
			if (a.acquire() == 0) {
				a.held();
				a.release();
			}
		}
	}
	/* flock(2) locks belong to open files: a second one in this process
	 * would wait for ever.  The round trips fire all of flock's points. */
	if (o == &flock_ops)
		return;

	/* a second worker against a holder */
	{
		Lock a(o, file, 0, kv), b(o, file, 1, kv);
		if (a.acquire() == 0) {
			if (b.acquire() == 0)
				b.release();
			a.held();
			a.release();
		}
	}
	/* a holder that died holding, then the same aged an hour */
	for (int aged = 0; aged < 2; aged++) {
		crash_holder(o, file, kv);
		if (aged)
			age_tree(dir.path);
		Lock b(o, file, 1, kv);
		if (b.acquire() == 0) {
			b.held();
			b.release();
		}
	}
	/* a live holder aged an hour under another's acquire */
	{
		Lock a(o, file, 0, kv), b(o, file, 1, kv);
		if (a.acquire() == 0) {
			age_tree(dir.path);
			int got = b.acquire();
			a.held();
			a.release();
			if (got == 0) {
				b.held();
				b.release();
			}
		}
	}
}

/* Runs of o with default params, then once per value of each choice param. */
std::vector<std::vector<std::string>> variants(const struct lock_ops *o)
{
	const std::vector<std::string> quick = { "retries=3", "wait_ms=1", "bounded_retries=1",
						 "bounded_wait_ms=1", "poll_ms=1" };
	std::vector<std::vector<std::string>> out = { quick };
	for (int k = 0; o->params[k].name; k++) {
		const struct param *p = &o->params[k];
		if (p->unit != PU_CHOICE)
			continue;
		for (int c = 0; p->choices[c]; c++) {
			auto kv = quick;
			kv.push_back(std::string(p->name) + "=" + p->choices[c]);
			out.push_back(kv);
		}
	}
	return out;
}

bool is_entry(const char *const *points, const char *name)
{
	for (int k = 0; points[k]; k++)
		if (points[k] == name)
			return true;
	return false;
}

bool is_listed(const char *const *points, const char *name)
{
	for (int k = 0; points[k]; k++)
		if (strcmp(points[k], name) == 0)
			return true;
	return false;
}

} // namespace

/* Every name a protocol fires is the address of one of its .points entries. */
TEST(Points, ProtocolsFireOnlyTheirOwnTableEntries)
{
	for (int i = 0; lock_registry[i]; i++) {
		const struct lock_ops *o = lock_registry[i];
		std::set<std::string> hit;
		for (const auto &kv : variants(o)) {
			SCOPED_TRACE(std::string(o->name) + " " + kv.back());
			{
				Observe obs;
				scenarios(o, kv);
			}
			for (const char *name : g_fired) {
				ASSERT_NE(name, nullptr) << "fsx_point(NULL): a hole in the points table";
				EXPECT_TRUE(is_entry(o->points, name))
					<< name << (is_listed(o->points, name)
							    ? ": listed, but fired from a copy, not the table's entry"
							    : ": not in the protocol's .points");
				hit.insert(name);
			}
		}
		EXPECT_FALSE(hit.empty()) << o->name << " fired no point";
	}
}

/* The observer sees names outside a worker too, and only while installed. */
TEST(Points, ObserverSeesEveryCallAndDefaultsOff)
{
	static const char name[] = "test/observe/after-call";
	EXPECT_EQ(fsx_point_observer, nullptr);
	{
		Observe obs;
		fsx_point(name);
		fsx_point(name);
		ASSERT_EQ(g_fired.size(), 2u);
		EXPECT_EQ(g_fired[0], name);
	}
	EXPECT_EQ(fsx_point_observer, nullptr);
	fsx_point(name);
	EXPECT_EQ(g_fired.size(), 2u);
}

/* Workload tables: "<workload>/<op>/<before|mid|after>-<label>", unique, no
 * name shared with a protocol. */
TEST(Points, WorkloadTablesWellFormed)
{
	const std::regex point_re("([a-z0-9-]+)/([a-z0-9-]+)/(before|mid|after)-[a-z0-9-]+");
	for (int i = 0; workload_registry[i]; i++) {
		const struct workload_ops *w = workload_registry[i];
		SCOPED_TRACE(w->name);
		ASSERT_NE(w->points, nullptr);
		std::set<std::string> seen;
		for (int k = 0; w->points[k]; k++) {
			std::smatch m;
			std::string pt = w->points[k];
			ASSERT_TRUE(std::regex_match(pt, m, point_re)) << pt;
			EXPECT_EQ(m[1].str(), w->name) << pt;
			EXPECT_TRUE(seen.insert(pt).second) << "duplicate point " << pt;
			for (int p = 0; lock_registry[p]; p++)
				EXPECT_FALSE(is_listed(lock_registry[p]->points, pt.c_str())) << pt;
		}
		EXPECT_FALSE(seen.empty());
	}
}
