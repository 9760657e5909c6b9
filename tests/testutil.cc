#include "testutil.h"

#include <gtest/gtest.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

bool exists(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0;
}

std::vector<std::string> entries(const std::string &dir)
{
	std::vector<std::string> out;
	DIR *d = opendir(dir.c_str());
	if (!d)
		return out;
	while (struct dirent *de = readdir(d))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			out.push_back(de->d_name);
	closedir(d);
	std::sort(out.begin(), out.end());
	return out;
}

ino_t ino(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

void put(const std::string &path, const std::string &text)
{
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
	ASSERT_GE(fd, 0) << path << ": " << strerror(errno);
	ASSERT_EQ(write(fd, text.data(), text.size()), (ssize_t)text.size());
	close(fd);
}

void age(const std::string &path, long secs)
{
	struct timespec ts[2];
	ts[0].tv_sec = 0;
	ts[0].tv_nsec = UTIME_OMIT;
	ts[1].tv_sec = time(nullptr) - secs;
	ts[1].tv_nsec = 0;
	ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), ts, 0), 0) << path << ": " << strerror(errno);
}

pid_t dead_pid()
{
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	int status;
	waitpid(pid, &status, 0);
	return pid;
}

int first_seed_showing(std::initializer_list<int> seeds, const std::function<bool(int seed, std::string *said)> &shows,
		       std::string *seen)
{
	for (int seed : seeds) {
		std::string said;
		bool shown = shows(seed, &said);
		*seen += "seed " + std::to_string(seed) + ": " + said;
		if (!said.empty() && said.back() != '\n')
			*seen += "\n";
		if (shown)
			return seed;
	}
	return -1;
}

std::string untimed(const std::string &args)
{
	if (args.rfind("explore ", 0) != 0 || args.find("--time-budget") != std::string::npos)
		return args;
	return args + " --time-budget 30m";
}
