/* testutil.h - helpers shared by the tests: scratch directories that are
 * always removed, running the lockstorm binary and capturing its output. */
#ifndef LS_TESTUTIL_H
#define LS_TESTUTIL_H

#include <string>

/* A fresh directory under /dev/shm (else /tmp), removed with everything in it
 * when the object goes out of scope. */
struct ScratchDir {
	std::string path;
	ScratchDir();
	~ScratchDir();
	std::string sub(const std::string &name) const { return path + "/" + name; }
};

struct CmdResult {
	int status;       /* exit code, or 128+signal */
	std::string out;  /* stdout */
	std::string err;  /* stderr */
};

/* Run argv[0] with args (no shell), capture both streams. */
CmdResult run_cmd(const std::string &cmdline);

/* Read a whole file ("" if missing). */
std::string slurp(const std::string &path);

#endif
