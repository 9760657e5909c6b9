/*
 * unit_junit.cc - XML escaping of the JUnit writer (harness/junit.c).
 */
#include <gtest/gtest.h>
#include <stdio.h>
#include <stdlib.h>

#include <string>

extern "C" {
#include "report/junit.h"
}

static std::string esc(const char *s)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	junit_escape(f, s);
	fclose(f);
	std::string out(buf, len);
	free(buf);
	return out;
}

TEST(JunitEscape, MarkupCharacters)
{
	EXPECT_EQ(esc("a<b>&\"c'd"), "a&lt;b&gt;&amp;&quot;c&apos;d");
	EXPECT_EQ(esc("]]>"), "]]&gt;");
	EXPECT_EQ(esc(""), "");
	EXPECT_EQ(esc(nullptr), "");
}

TEST(JunitEscape, WhitespaceAndControlCharacters)
{
	EXPECT_EQ(esc("a\nb\tc\rd"), "a&#10;b&#9;c&#13;d");
	EXPECT_EQ(esc("x\x01y\x1b[0mz"), "x?y?[0mz");
}

TEST(JunitEscape, Utf8KeptInvalidBytesReplaced)
{
	EXPECT_EQ(esc("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92"), "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x94\x92");
	EXPECT_EQ(esc("a\xff" "b"), "a?b");           /* not a lead byte */
	EXPECT_EQ(esc("a\xc3"), "a?");                /* truncated */
	EXPECT_EQ(esc("\xc0\xaf"), "??");             /* overlong */
	EXPECT_EQ(esc("\xed\xa0\x80"), "???");        /* surrogate */
	EXPECT_EQ(esc("\xef\xbf\xbe"), "?");          /* U+FFFE */
}
