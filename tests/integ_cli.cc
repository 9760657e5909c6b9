/*
 * integ_cli.cc - one command-line convention for every command, through the
 * real binary: `CMD --help` and `help CMD` print that command's usage and
 * exit 0; `--opt=VALUE` is `--opt VALUE`; `--version`; bad input exits 2 with
 * one line.  Every run here is tiny (-n 1 --ops 1) or stops at the option
 * parser; nothing depends on timing.
 */
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "testutil.h"

extern "C" {
#include "faults/fault.h"
#include "protocols/lock.h"
#include "workloads/workload.h"
}

static const std::string BIN = LOCKSTORM_BIN;

static CmdResult lockstorm(const std::string &args)
{
	return run_cmd(BIN + " " + args);
}

static int lines(const std::string &s)
{
	int n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

/* Every command of `lockstorm --help` (and the scenario verbs). */
static const char *const kCommands[] = {
	"run", "check", "dump", "list", "explore", "replay", "exec", "report", "merge", "compare",
	"scenario", "help", "version",
};
static const char *const kScenarioVerbs[] = { "list", "show", "run", "new" };

TEST(IntegCli, EveryCommandHasHelp)
{
	for (const char *cmd : kCommands) {
		for (const std::string &form : { std::string(cmd) + " --help", std::string(cmd) + " -h",
						 std::string("help ") + cmd }) {
			CmdResult r = lockstorm(form);
			EXPECT_EQ(r.status, 0) << form << ": " << r.err;
			EXPECT_NE(r.out.find("usage"), std::string::npos) << form << " prints no usage: " << r.out;
		}
		/* the same page either way */
		EXPECT_EQ(lockstorm(std::string(cmd) + " --help").out, lockstorm(std::string("help ") + cmd).out) << cmd;
	}
	for (const char *verb : kScenarioVerbs) {
		std::string v(verb);
		for (const std::string &form : { "scenario " + v + " --help", "scenario help " + v, "help scenario " + v }) {
			CmdResult r = lockstorm(form);
			EXPECT_EQ(r.status, 0) << form << ": " << r.err;
			EXPECT_NE(r.out.find("usage: lockstorm scenario " + v), std::string::npos) << form << ": " << r.out;
		}
	}
	CmdResult top = lockstorm("--help");
	EXPECT_EQ(top.status, 0);
	for (const char *cmd : kCommands)
		EXPECT_NE(top.out.find(std::string("  ") + cmd + " "), std::string::npos) << cmd << " not in --help";
}

TEST(IntegCli, Version)
{
	CmdResult a = lockstorm("--version"), b = lockstorm("version");
	EXPECT_EQ(a.status, 0) << a.err;
	EXPECT_EQ(b.status, 0) << b.err;
	EXPECT_EQ(a.out, b.out);
	ASSERT_EQ(a.out.rfind("lockstorm ", 0), 0u) << a.out;
	EXPECT_GT(a.out.size(), strlen("lockstorm \n")) << a.out;
	EXPECT_EQ(lines(a.out), 1) << a.out;
}

TEST(IntegCli, RunHelpListsTheRegistries)
{
	CmdResult r = lockstorm("run --help");
	ASSERT_EQ(r.status, 0);
	for (const struct lock_ops *const *o = lock_registry; *o; o++)
		EXPECT_NE(r.out.find((*o)->name), std::string::npos) << "protocol " << (*o)->name;
	for (const struct workload_ops *const *w = workload_registry; *w; w++)
		EXPECT_NE(r.out.find((*w)->name), std::string::npos) << "workload " << (*w)->name;
	for (int k = FK_NONE + 1; k < FK__COUNT; k++) {
		const char *name = fault_kind_name((enum fault_kind)k);
		EXPECT_NE(r.out.find(name), std::string::npos) << "fault kind " << name;
	}
}

TEST(IntegCli, BadInputIsOneLineAndExit2)
{
	const char *const bad[] = {
		"nosuch", "help nosuch", "run --bogus", "run -Z", "run --workers", "run stray", "check --bogus x",
		"check", "dump", "dump --bogus", "list", "list nosuch", "list --bogus protocols", "report --bogus",
		"merge --bogus x", "merge", "compare --bogus", "compare", "exec --bogus -- true", "exec true",
		"scenario nosuch", "scenario run --bogus", "scenario new --bogus", "scenario help nosuch",
		"version extra",
	};
	for (const char *args : bad) {
		CmdResult r = lockstorm(args);
		EXPECT_EQ(r.status, 2) << args << ": " << r.out << r.err;
		EXPECT_EQ(lines(r.err), 1) << args << ": " << r.err;
		EXPECT_EQ(r.err.rfind("lockstorm", 0), 0u) << args << ": " << r.err;
	}
}

TEST(IntegCli, NumbersAreDecimalAndDurationsNeedAUnit)
{
	ScratchDir d;
	/* -s 010 is ten and -s 08 eight (no octal) */
	for (const auto &seed : { std::pair<const char *, long long>{ "010", 10 }, { "08", 8 } }) {
		std::string json = d.sub(std::string("s") + seed.first + ".json");
		CmdResult r = lockstorm(std::string("run -p flock -w hold -n 1 --ops 1 -q -s ") + seed.first +
					" --dir " + d.sub("w") + " --json " + json);
		ASSERT_EQ(r.status, 0) << r.err;
		Report rep(json);
		ASSERT_TRUE(rep.root);
		EXPECT_EQ(json_integer_value(json_object_get(json_object_get(rep.root, "config"), "seed")), seed.second);
	}
	const char *const refused[][2] = {
		{ "run -d 1500", "give a unit (ms, s, m, h)" },
		{ "run --fault stall:for=1500", "give a unit (ms, s, m, h, stale)" },
		{ "run --fault sweep:every=5", "give a unit" },
		{ "run --fault skew:by=+500", "give a unit" },
		{ "run --fault coarse-mtime:res=2", "give a unit" },
		{ "run -d 31d", "unknown unit 'd'" },
		{ "run -d 800h", "over 30 days" },
		{ "run -d nan", "not a number" },
		{ "run -d -5s", "no sign" },
		{ "run --time-scale inf", "bad number 'inf'" },
		{ "run --time-scale 1e-3", "bad number '1e-3'" },
		{ "run -n 0x10", "bad number '0x10'" },
		{ "run -s 99999999999999999999", "bad number" },
		{ "run --ops -1", "bad number '-1'" },
		{ "run --param stale_ms=10x", "unknown unit 'x'" },
		{ "compare -p flock --repeat 0", "from 1 to 1000" },
		{ "run --keep=1", "option '--keep' takes no value" },
		{ "check --quiet=1 x", "takes no value" },
	};
	for (const auto &row : refused) {
		CmdResult r = lockstorm(row[0]);
		EXPECT_EQ(r.status, 2) << row[0] << ": " << r.err;
		EXPECT_NE(r.err.find(row[1]), std::string::npos) << row[0] << ": " << r.err;
		EXPECT_EQ(lines(r.err), 1) << row[0] << ": " << r.err;
	}
	/* a key whose name says ms takes a bare number; units work there too */
	for (const char *p : { "stale_ms=1500", "stale_ms=1.5s", "stale_ms=2m" }) {
		CmdResult r = lockstorm(std::string("run -p mkdir-owner -w hold -n 1 --ops 1 -q --param ") + p +
					" --dir " + d.sub("w"));
		EXPECT_EQ(r.status, 0) << p << ": " << r.err;
	}
}

/* `PREFIX --OPT=VALUE SUFFIX` and `PREFIX --OPT VALUE SUFFIX` end alike, and
 * neither is refused as an unknown option or one without a value. */
struct EqRow {
	std::string prefix, opt, value, suffix;
};

static void expect_same(const EqRow &row)
{
	std::string eq = row.prefix + " " + row.opt + "=" + row.value + " " + row.suffix;
	std::string sp = row.prefix + " " + row.opt + " " + row.value + " " + row.suffix;
	CmdResult a = lockstorm(eq), b = lockstorm(sp);
	EXPECT_EQ(a.status, b.status) << eq << " | " << sp << "\n" << a.err << b.err;
	EXPECT_EQ(a.err, b.err) << eq << " | " << sp;
	EXPECT_EQ(a.err.find("unknown option"), std::string::npos) << eq << ": " << a.err;
	EXPECT_EQ(a.err.find("needs a value"), std::string::npos) << eq << ": " << a.err;
}

TEST(IntegCli, OptEqualsValueIsOptSpaceValue)
{
	ScratchDir d;
	const std::string w = d.sub("w");
	/* values the parser refuses: the same reason both ways proves the value arrived */
	const std::vector<EqRow> rows = {
		{ "run", "--protocol", "nope", "" },
		{ "run", "--workload", "nope", "" },
		{ "run", "--workers", "0", "" },
		{ "run", "--duration", "1500", "" },
		{ "run", "--ops", "0", "" },
		{ "run", "--fault", "explode", "" },
		{ "run", "--faults", "nope", "" },
		{ "run", "--time-scale", "0", "" },
		{ "run", "--param", "nokey", "" },
		{ "run", "--seed", "x", "" },
		{ "run -p flock", "--exec", "true", "" },
		{ "run --ops 1 -n 1", "--dir", w, "--workers=0" },
		{ "run", "--out", d.sub("o"), "--workers=0" },
		{ "run", "--json", d.sub("j"), "--workers=0" },
		{ "run", "--junit", d.sub("u"), "--workers=0" },
		{ "check", "--json", d.sub("j"), d.sub("missing") },
		{ "check", "--junit", d.sub("u"), d.sub("missing") },
		{ "list points", "--protocol", "mkdir-owner", "" },
		{ "list points", "--protocol", "nope", "" },
		{ "report", "--html", d.sub("h"), d.sub("missing") },
		{ "report", "--markdown", d.sub("m"), d.sub("missing") },
		{ "report --html x", "--title", "T", d.sub("missing") },
		{ "merge", "--out", d.sub("mo"), d.sub("missing") },
		{ "merge", "--baseline", d.sub("b"), d.sub("missing") },
		{ "compare", "--protocol", "nope", "" },
		{ "compare -p flock", "--repeat", "0", "" },
		{ "compare -p flock", "--seed", "x", "" },
		{ "compare -p flock", "--workers", "0", "" },
		{ "compare -p flock", "--duration", "1500", "" },
		{ "compare -p flock", "--fault", "explode", "" },
		{ "compare -p flock", "--param", "nokey", "" },
		{ "compare -p flock --repeat 0", "--json", d.sub("cj"), "" },
		{ "compare -p flock --repeat 0", "--markdown", d.sub("cm"), "" },
		{ "compare -p flock --repeat 0", "--junit", d.sub("cu"), "" },
		{ "compare -p flock --repeat 0", "--out", d.sub("co"), "" },
		{ "exec", "--fault", "explode", "-- true" },
		{ "exec", "--seed", "x", "-- true" },
		{ "exec --seed x", "--log", d.sub("l"), "-- true" },
		{ "scenario run", "--out", d.sub("so"), "nosuch-scenario" },
		{ "scenario new x", "--from-run", d.sub("missing"), "" },
		{ "scenario new x --from-run " + d.sub("missing"), "--out", d.sub("f"), "" },
		{ "explore", "--time-budget", "1500", "" },
		{ "explore", "--ops", "0", "" },
		{ "replay", "--dir", w, d.sub("missing.cex") },
	};
	for (const EqRow &row : rows)
		expect_same(row);
}

TEST(IntegCli, OptEqualsValueInRealRuns)
{
	ScratchDir d;
	/* a tiny run, every path option written with '=': its files appear */
	CmdResult r = lockstorm("run --protocol=flock --workload=hold --workers=1 --ops=1 --seed=3 --time-scale=0.5 "
				"--duration=1s --quiet --dir=" + d.sub("w") + " --out=" + d.sub("o") +
				" --json=" + d.sub("r.json") + " --junit=" + d.sub("r.xml"));
	EXPECT_EQ(r.status, 2) << "-d and --ops exclude each other, whatever the spelling: " << r.err;
	r = lockstorm("run --protocol=flock --workload=hold --workers=1 --ops=1 --seed=3 --time-scale=0.5 "
		      "--quiet --dir=" + d.sub("w") + " --out=" + d.sub("o") + " --json=" + d.sub("r.json") +
		      " --junit=" + d.sub("r.xml"));
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_TRUE(exists(d.sub("o") + "/report.json"));
	EXPECT_TRUE(exists(d.sub("r.xml")));
	Report rep(d.sub("r.json"));
	ASSERT_TRUE(rep.root);
	EXPECT_EQ(json_integer_value(json_object_get(json_object_get(rep.root, "config"), "seed")), 3);

	/* check, both spellings, on the kept run */
	CmdResult c1 = lockstorm("check --quiet --json=" + d.sub("c1.json") + " " + d.sub("o"));
	CmdResult c2 = lockstorm("check --quiet --json " + d.sub("c2.json") + " " + d.sub("o"));
	EXPECT_EQ(c1.status, 0) << c1.err;
	EXPECT_EQ(c1.status, c2.status);
	EXPECT_TRUE(exists(d.sub("c1.json")));
	EXPECT_TRUE(exists(d.sub("c2.json")));

	/* scenario new, both spellings: the same scenario */
	CmdResult n1 = lockstorm("scenario new cli-eq --from-run=" + d.sub("o") + " --out=" + d.sub("a.scenario"));
	CmdResult n2 = lockstorm("scenario new cli-eq --from-run " + d.sub("o") + " --out " + d.sub("b.scenario"));
	EXPECT_EQ(n1.status, 0) << n1.err;
	EXPECT_EQ(n2.status, 0) << n2.err;
	EXPECT_FALSE(slurp(d.sub("a.scenario")).empty());
	EXPECT_EQ(slurp(d.sub("a.scenario")), slurp(d.sub("b.scenario")));

	/* compare passes run options through in either spelling */
	CmdResult m = lockstorm("compare --protocol=flock --workload=hold --workers=1 --ops=1 --repeat=1 --quiet "
				"--json=" + d.sub("cmp.json") + " --markdown=" + d.sub("cmp.md"));
	EXPECT_EQ(m.status, 0) << m.err;
	EXPECT_TRUE(exists(d.sub("cmp.json")));
	EXPECT_TRUE(exists(d.sub("cmp.md")));

	/* list: the same listing */
	EXPECT_EQ(lockstorm("list points --protocol=flock").out, lockstorm("list points -p flock").out);
}
