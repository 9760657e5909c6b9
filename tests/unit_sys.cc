/*
 * unit_sys.cc - the calls every op of a run makes itself (core/sys.h) and
 * the journal's clock through the vDSO (core/vdso.h): the same results and
 * errno as libc's, the same clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/auxv.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "core/sys.h"
#include "core/vdso.h"
#include "testutil.h"

TEST(Sys, OpenFlockAndCloseAnswerAsLibcDoes)
{
	ScratchDir d;
	const std::string f = d.sub("lock");
	errno = 0;
	EXPECT_EQ(ls_open(f.c_str(), O_RDWR | O_CLOEXEC, 0644), -1); /* not there */
	EXPECT_EQ(errno, ENOENT);
	int fd = ls_open(f.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640);
	ASSERT_GE(fd, 0);
	struct stat st;
	ASSERT_EQ(fstat(fd, &st), 0);
	EXPECT_EQ(st.st_mode & 0777, 0640u & ~(unsigned)umask(umask(0))); /* the mode went to the kernel */
	EXPECT_EQ(ls_open(f.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0640), -1);
	EXPECT_EQ(errno, EEXIST);
	EXPECT_EQ(ls_flock(fd, LOCK_EX), 0);
	int other = open(f.c_str(), O_RDWR | O_CLOEXEC);
	ASSERT_GE(other, 0);
	errno = 0;
	EXPECT_EQ(ls_flock(other, LOCK_EX | LOCK_NB), -1); /* held through fd */
	EXPECT_EQ(errno, EWOULDBLOCK);
	EXPECT_EQ(ls_flock(fd, LOCK_UN), 0);
	EXPECT_EQ(ls_flock(other, LOCK_EX | LOCK_NB), 0);
	EXPECT_EQ(ls_close(other), 0);
	EXPECT_EQ(ls_close(fd), 0);
	errno = 0;
	EXPECT_EQ(ls_close(fd), -1);
	EXPECT_EQ(errno, EBADF);
	EXPECT_EQ(ls_flock(fd, LOCK_EX), -1);
	EXPECT_EQ(errno, EBADF);
	errno = 1234;
	fd = ls_open(f.c_str(), O_RDONLY | O_CLOEXEC, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(errno, 1234); /* a success leaves errno alone */
	EXPECT_EQ(ls_close(fd), 0);
}

static int64_t ns_of(const struct timespec &ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Read between two of libc's CLOCK_MONOTONIC, it lies between them: the
 * same clock (CLOCK_REALTIME would be decades ahead). */
TEST(VdsoClock, IsTheMonotonicClock)
{
	struct timespec a, b, c;
	ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &a), 0);
	ASSERT_EQ(vdso_clock_gettime(CLOCK_MONOTONIC, &b), 0);
	ASSERT_EQ(clock_gettime(CLOCK_MONOTONIC, &c), 0);
	EXPECT_LE(ns_of(a), ns_of(b));
	EXPECT_LE(ns_of(b), ns_of(c));
}

TEST(VdsoClock, CallsTheVdsoWhereTheKernelMapsOne)
{
	struct timespec ts;
	ASSERT_EQ(vdso_clock_gettime(CLOCK_MONOTONIC, &ts), 0); /* resolves itself */
	if (!getauxval(AT_SYSINFO_EHDR))
		GTEST_SKIP() << "no vDSO in this process (valgrind?): libc's clock_gettime it is";
	EXPECT_NE((void *)vdso_clock_gettime, (void *)&clock_gettime) << "fell back to libc's wrapper";
	EXPECT_EQ(vdso_clock_gettime(CLOCK_MONOTONIC, &ts), 0);
}
