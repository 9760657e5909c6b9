/*
 * fuzz.h - what every libFuzzer target in tests/fuzz shares.
 *
 * Each target is one fuzz_<name>.c with LLVMFuzzerTestOneInput; it feeds the
 * bytes to one parser or loader of lockstorm exactly as the binary would and
 * frees what it got.  The sanitizers (ASan, UBSan, LSan) are the oracle; a
 * target adds assertions of its own where the module's header promises
 * something (a bound, a reason on failure).
 *
 * Loaders that take a path read the bytes from an anonymous memfd through
 * /proc/self/fd/N: nothing is left on disk, whatever the target does.
 */
#ifndef LS_FUZZ_H
#define LS_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort with the condition's text: libFuzzer keeps the input as a crash. */
#define FUZZ_ASSERT(cond)                                                              \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                \
			abort();                                                       \
		}                                                                      \
	} while (0)

/* The bytes as a NUL-terminated string (cut at the first NUL); free() it. */
static inline char *fuzz_cstr(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = 0;
	return s;
}

/* The bytes as the content of a file; returns its path (valid until the next call). */
static inline const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("lockstorm-fuzz", MFD_CLOEXEC);
		if (fd < 0)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();
	return path;
}

/* A reason must be one non-empty line. */
static inline int fuzz_one_line(const char *why)
{
	return why[0] && !strchr(why, '\n');
}

#endif
