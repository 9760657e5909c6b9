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

Report::Report(const std::string &path)
{
	json_error_t err;
	root = json_load_file(path.c_str(), 0, &err);
}

Report::~Report()
{
	json_decref(root);
}

json_t *Report::inv(const char *name) const
{
	size_t i;
	json_t *v;
	json_array_foreach(json_object_get(root, "invariants"), i, v)
		if (!strcmp(json_string_value(json_object_get(v, "name")), name))
			return v;
	return nullptr;
}

long long Report::violations(const char *name) const
{
	json_t *v = inv(name);
	return v ? json_integer_value(json_object_get(v, "violations")) : -1;
}

bool Report::applicable(const char *name) const
{
	json_t *v = inv(name);
	return v && json_is_true(json_object_get(v, "applicable"));
}

std::string Report::example(const char *name) const
{
	json_t *ex = json_array_get(json_object_get(inv(name), "examples"), 0);
	const char *t = json_string_value(json_object_get(ex, "text"));
	return t ? t : "";
}

long long Report::total(const char *key) const
{
	return json_integer_value(json_object_get(json_object_get(root, "totals"), key));
}

long long Report::ops() const
{
	return json_integer_value(json_object_get(json_object_get(root, "throughput"), "ops"));
}

double Report::ops_per_s() const
{
	return json_number_value(json_object_get(json_object_get(root, "throughput"), "ops_per_s"));
}

std::string Report::verdict() const
{
	const char *v = json_string_value(json_object_get(root, "verdict"));
	return v ? v : "";
}
