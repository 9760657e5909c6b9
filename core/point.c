/*
 * point.c - the point table (see point.h).
 */
#include "point.h"

#include <string.h>

static const char *const op_points[FSX_OP_COUNT] = {
	[FSX_MKDIR] = "fs/mkdir",   [FSX_RMDIR] = "fs/rmdir",     [FSX_OPEN] = "fs/open",
	[FSX_CLOSE] = "fs/close",   [FSX_LINK] = "fs/link",       [FSX_UNLINK] = "fs/unlink",
	[FSX_RENAME] = "fs/rename", [FSX_STAT] = "fs/stat",       [FSX_LIST] = "fs/list",
	[FSX_READ] = "fs/read",     [FSX_WRITE] = "fs/write",     [FSX_FSYNC] = "fs/fsync",
	[FSX_UTIMENS] = "fs/utimens", [FSX_FLOCK] = "fs/flock",   [FSX_KILL] = "fs/kill",
	[FSX_SLEEP] = "fs/sleep",   [FSX_NOW] = "fs/now",         [FSX_POINT] = "point",
};

const char *fsx_op_point(enum fsx_op op)
{
	return (unsigned)op < FSX_OP_COUNT ? op_points[op] : "fs/?";
}

const char *fsx_op_name(enum fsx_op op)
{
	const char *p = fsx_op_point(op);
	const char *slash = strchr(p, '/');
	return slash ? slash + 1 : p;
}

const char *fsx_path_name(enum fsx_path p)
{
	static const char *const names[FSX_PATH_COUNT] = {
		[FSX_PATH_UNKNOWN] = "", [FSX_PATH_LOCK] = "the lock",
		[FSX_PATH_ENTRY] = "an entry inside the lock", [FSX_PATH_OTHER] = "another path",
	};
	return (unsigned)p < FSX_PATH_COUNT ? names[p] : "";
}

uint64_t point_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;
	for (const unsigned char *s = (const unsigned char *)name; *s; s++) {
		h ^= *s;
		h *= 0x100000001b3ULL;
	}
	return h;
}
