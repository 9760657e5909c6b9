/*
 * integ_install.cc - `cmake --install BUILD --prefix P` gives a lockstorm that
 * stands on its own: P/bin/lockstorm finds its report scripts, scenarios,
 * adapters and preload shim under P/share/lockstorm and P/lib/lockstorm, run
 * from another directory with the source-tree fallback switched off
 * (LOCKSTORM_NO_SOURCE_TREE=1, core/fsutil.h); the man page renders, the bash
 * completion completes, and `cpack -G DEB` packs the same files.
 */
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "testutil.h"

static const std::string BIN = LOCKSTORM_BIN;
static const std::string BUILD = BIN.substr(0, BIN.rfind('/'));

/* One install per test binary run: installing copies a few hundred files. */
static const std::string &prefix()
{
	static ScratchDir d;
	static std::string p;
	if (p.empty()) {
		CmdResult r = run_cmd("cmake --install " + BUILD + " --prefix " + d.sub("p"));
		EXPECT_EQ(r.status, 0) << r.out << r.err;
		p = d.sub("p");
	}
	return p;
}

/* CMD run in a fresh directory outside both trees, without the source fallback. */
static CmdResult elsewhere(const ScratchDir &d, const std::string &cmd)
{
	return run_cmd("cd " + d.path + " && env -u LOCKSTORM_REPORTS -u LOCKSTORM_SCENARIOS -u LOCKSTORM_ADAPTERS "
		       "-u LOCKSTORM_PRELOAD LOCKSTORM_NO_SOURCE_TREE=1 " + cmd);
}

TEST(Install, LaysOutTheFiles)
{
	const std::string &p = prefix();
	for (const char *f : { "bin/lockstorm", "lib/lockstorm/liblockstorm_preload.so",
			       "lib/lockstorm/liblockstorm_explore.so",
			       "share/lockstorm/reports/report.py", "share/lockstorm/reports/lsdata.py",
			       "share/lockstorm/reports/merge.py", "share/lockstorm/reports/nightlib.py",
			       "share/lockstorm/scenarios/empty-record-lock.scenario",
			       "share/lockstorm/adapters/flock1/run", "share/lockstorm/adapters/lib/lockstorm.py",
			       "share/man/man1/lockstorm.1", "share/bash-completion/completions/lockstorm" })
		EXPECT_TRUE(exists(p + "/" + f)) << f;
	EXPECT_EQ(access((p + "/share/lockstorm/adapters/flock1/run").c_str(), X_OK), 0);
}

TEST(Install, TheInstalledBinaryNeedsNoSourceTree)
{
	const std::string &p = prefix();
	ScratchDir d;
	CmdResult r = elsewhere(d, p + "/bin/lockstorm scenario run empty-record-lock -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	r = elsewhere(d, p + "/bin/lockstorm run -p ext:flock1 -n 2 -d 2s -q -o " + d.sub("out"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	r = elsewhere(d, p + "/bin/lockstorm report " + d.sub("out") + " --html " + d.sub("r.html") + " --markdown " +
			      d.sub("r.md"));
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	EXPECT_NE(slurp(d.sub("r.html")).find("id=\"throughput\""), std::string::npos);
	/* the liblockfile adapter's binary from PREFIX/lib/lockstorm/adapters (when the build made one) */
	if (exists(BUILD + "/adapters/ls_adapter_liblockfile")) {
		r = elsewhere(d, p + "/bin/lockstorm run -p ext:liblockfile -n 2 --ops 20 -q");
		EXPECT_EQ(r.status, 0) << r.out << r.err;
		/* and explored through the C seam, PREFIX/lib/lockstorm/liblockstorm_explore.so */
		r = elsewhere(d, "env -u LOCKSTORM_EXPLORE_PRELOAD " + p + "/bin/lockstorm explore -p ext:liblockfile -n 2 "
				 "--ops 2 --schedules 3 --time-budget 30m -q -o " + d.sub("xout"));
		EXPECT_EQ(r.status, 0) << r.out << r.err;
		EXPECT_NE(r.out.find("no violation: 3 schedules"), std::string::npos) << r.out;
	}
	/* the preload shim from PREFIX/lib/lockstorm */
	r = elsewhere(d, p + "/bin/lockstorm exec --fault errno@fs/mkdir:err=EPERM -- mkdir " + d.sub("x"));
	EXPECT_NE(r.status, 0) << r.out << r.err;
	EXPECT_EQ(r.err.find("shim"), std::string::npos) << r.err;
	EXPECT_FALSE(exists(d.sub("x")));
}

TEST(Install, ACopyAloneFindsNothingWithoutTheSourceTree)
{
	/* the teeth of the test above: the same binary with nothing beside it and the source tree off */
	ScratchDir d;
	ASSERT_EQ(run_cmd("cp " + BIN + " " + d.sub("lockstorm")).status, 0);
	CmdResult r = elsewhere(d, d.sub("lockstorm") + " scenario list");
	EXPECT_EQ(r.status, 2) << r.out << r.err;
	/* and with the fallback on, the build's source tree serves it */
	r = run_cmd("cd " + d.path + " && env -u LOCKSTORM_SCENARIOS " + d.sub("lockstorm") + " scenario list");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
}

TEST(Install, ManPageAndCompletion)
{
	const std::string &p = prefix();
	CmdResult r = run_cmd("LC_ALL=C MANWIDTH=100 man -P cat -l " + p + "/share/man/man1/lockstorm.1");
	ASSERT_EQ(r.status, 0) << r.err;
	for (const char *s : { "lockstorm run", "--time-scale", "EXIT STATUS", "scenario", "share/lockstorm" })
		EXPECT_NE(r.out.find(s), std::string::npos) << s;
	std::string comp = p + "/share/bash-completion/completions/lockstorm";
	auto complete = [&](const std::string &words, int cword) {
		return run_cmd("PATH=" + p + "/bin:$PATH bash -c 'source " + comp + "; COMP_WORDS=(" + words +
			       "); COMP_CWORD=" + std::to_string(cword) + "; _lockstorm; echo \"${COMPREPLY[*]}\"'");
	};
	r = complete("lockstorm run --time-s", 2);
	EXPECT_EQ(r.out, "--time-scale\n") << r.err;
	r = complete("lockstorm scen", 1);
	EXPECT_EQ(r.out, "scenario\n") << r.err;
	r = complete("lockstorm run -p mkdir-o", 3);
	EXPECT_EQ(r.out, "mkdir-owner\n") << r.err;
	r = complete("lockstorm scenario run empty-record-lock-r", 3);
	EXPECT_EQ(r.out, "empty-record-lock-retained\n") << r.err;
	r = complete("lockstorm explore --time-b", 2);
	EXPECT_EQ(r.out, "--time-budget\n") << r.err;
}

TEST(Install, CpackMakesADebianPackage)
{
	ScratchDir d;
	CmdResult r = run_cmd("cd " + BUILD + " && cpack -G DEB -B " + d.sub("pkg"));
	ASSERT_EQ(r.status, 0) << r.out << r.err;
	CmdResult deb = run_cmd("ls " + d.sub("pkg") + "/lockstorm_*.deb");
	ASSERT_EQ(deb.status, 0) << deb.out;
	std::string file = deb.out.substr(0, deb.out.find('\n'));
	r = run_cmd("dpkg-deb -c " + file);
	ASSERT_EQ(r.status, 0) << r.err;
	for (const char *f : { "./usr/bin/lockstorm", "./usr/lib/lockstorm/liblockstorm_preload.so",
			       "./usr/share/lockstorm/reports/report.py", "./usr/share/lockstorm/scenarios/",
			       "./usr/share/lockstorm/adapters/flock1/run", "./usr/share/man/man1/lockstorm.1",
			       "./usr/share/bash-completion/completions/lockstorm" })
		EXPECT_NE(r.out.find(f), std::string::npos) << f << "\n" << r.out;
	/* the package's tree runs on its own: unpacked anywhere, its lockstorm finds its files */
	ASSERT_EQ(run_cmd("dpkg-deb -x " + file + " " + d.sub("root")).status, 0);
	r = elsewhere(d, d.sub("root") + "/usr/bin/lockstorm run -p flock -n 2 -d 1s -q");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	r = elsewhere(d, d.sub("root") + "/usr/bin/lockstorm scenario list");
	EXPECT_EQ(r.status, 0) << r.out << r.err;
	r = run_cmd("dpkg-deb -f " + file + " Package Depends");
	EXPECT_NE(r.out.find("Package: lockstorm"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("python3-matplotlib"), std::string::npos) << r.out;
}
