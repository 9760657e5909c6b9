/* unit_extworker.cc - the external worker protocol's line parser: lines in,
 * the record (or the reason it is refused) out. */
#include <errno.h>
#include <gtest/gtest.h>

#include <string>

extern "C" {
#include "run/extworker.h"
#include "core/journal.h"
}

struct LineCase {
	const char *line;
	int ok;
	int type;
	int64_t a, b;
	int err;
};

static const LineCase cases[] = {
	{ "next", 1, EV_NONE, 0, 0, 0 },
	{ "12 next", 1, EV_NONE, 0, 0, 0 },
	{ "12 attempt n=3", 1, EV_ATTEMPT, 3, 0, 0 },
	{ "12 attempt", 1, EV_ATTEMPT, 0, 0, 0 },
	{ "12 acquired", 1, EV_ACQUIRED, 0, 0, 0 },
	{ "12 busy", 1, EV_BUSY, 0, 0, 0 },
	{ "12 acquire-error errno=EACCES", 1, EV_ACQUIRE_ERROR, 0, 0, EACCES },
	{ "12 acquire-error errno=13", 1, EV_ACQUIRE_ERROR, 0, 0, 13 },
	{ "12 read rev=-1 own=0", 1, EV_READ, -1, 0, 0 },
	{ "12 read rev=-1 own=0 errno=EBADMSG", 1, EV_READ, -1, 0, EBADMSG },
	{ "12 read errno=EIO", 1, EV_READ, -1, 0, EIO },
	{ "12 commit-begin rev=5 own=2", 1, EV_COMMIT_BEGIN, 5, 2, 0 },
	{ "12 commit rev=5 own=2 extra=ignored", 1, EV_COMMIT, 5, 2, 0 },
	{ "12 lost", 1, EV_LOST, 0, 0, 0 },
	{ "12 write-error errno=ENOSPC", 1, EV_WRITE_ERROR, 0, 0, ENOSPC },
	{ "12 release-begin", 1, EV_RELEASE_BEGIN, 0, 0, 0 },
	{ "12 released", 1, EV_RELEASED, 0, 0, 0 },
	{ "12 release-error errno=ENOLCK", 1, EV_RELEASE_ERROR, 0, 0, ENOLCK },
	{ "12 log anything at all", 1, EV_NONE, 0, 0, 0 },
	{ "", 0, 0, 0, 0, 0 },
	{ "acquired", 0, 0, 0, 0, 0 },
	{ "12 acquird", 0, 0, 0, 0, 0 },
	{ "12 commit rev=5", 0, 0, 0, 0, 0 },
	{ "12 commit rev=x own=1", 0, 0, 0, 0, 0 },
	{ "12 acquire-error", 0, 0, 0, 0, 0 },
	{ "12 acquire-error errno=ENOTANERRNO", 0, 0, 0, 0, 0 },
	{ "12 read rev=1 own=-2", 0, 0, 0, 0, 0 },
	{ "12 attempt 3", 0, 0, 0, 0, 0 },
	{ "12 next please", 0, 0, 0, 0, 0 },
	{ "0 acquired", 0, 0, 0, 0, 0 },
	{ "99999999999999999999 acquired", 0, 0, 0, 0, 0 },
	{ "12 acq\x01uired", 0, 0, 0, 0, 0 },
};

TEST(ExtParse, Table)
{
	for (const LineCase &c : cases) {
		struct ext_event ev;
		char why[256] = "";
		int r = ext_parse_line(c.line, &ev, why, sizeof why);
		EXPECT_EQ(r == 0, c.ok != 0) << "'" << c.line << "': " << why;
		if (r != 0 || !c.ok)
			continue;
		EXPECT_EQ(ev.type, c.type) << c.line;
		EXPECT_EQ(ev.a, c.a) << c.line;
		EXPECT_EQ(ev.b, c.b) << c.line;
		EXPECT_EQ(ev.err, c.err) << c.line;
	}
}

TEST(ExtParse, NextAndLogAreMarked)
{
	struct ext_event ev;
	char why[256];
	ASSERT_EQ(ext_parse_line("next", &ev, why, sizeof why), 0);
	EXPECT_TRUE(ev.next);
	ASSERT_EQ(ext_parse_line("7 log hello there", &ev, why, sizeof why), 0);
	EXPECT_TRUE(ev.log);
	EXPECT_STREQ(ev.text, "hello there");
	EXPECT_EQ(ev.ns, 7u);
}
