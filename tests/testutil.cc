#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

ScratchDir::ScratchDir()
{
	struct stat st;
	const char *base = stat("/dev/shm", &st) == 0 ? "/dev/shm" : "/tmp";
	char tmpl[256];
	snprintf(tmpl, sizeof tmpl, "%s/lockstorm-test.XXXXXX", base);
	if (!mkdtemp(tmpl))
		abort();
	path = tmpl;
}

ScratchDir::~ScratchDir()
{
	std::string cmd = "rm -rf '" + path + "'";
	if (system(cmd.c_str()) != 0) {
		/* nothing more to do in a destructor */
	}
}

std::string slurp(const std::string &path)
{
	std::ifstream f(path, std::ios::binary);
	std::stringstream ss;
	ss << f.rdbuf();
	return ss.str();
}

CmdResult run_cmd(const std::string &cmdline)
{
	ScratchDir d;
	std::string full = cmdline + " >'" + d.sub("out") + "' 2>'" + d.sub("err") + "' </dev/null";
	int rc = system(full.c_str());
	CmdResult r;
	if (rc == -1)
		r.status = -1;
	else if (WIFEXITED(rc))
		r.status = WEXITSTATUS(rc);
	else
		r.status = 128 + WTERMSIG(rc);
	r.out = slurp(d.sub("out"));
	r.err = slurp(d.sub("err"));
	return r;
}
