/*
 * adapter.c - `lockstorm adapter new NAME --lang node|python|c [--dir DIR]`:
 * write the skeleton of a user's adapter, DIR/NAME/ with its manifest
 * (adapter.json, protocols/extmanifest.c) and an executable `run` that uses
 * the helper library of its language (adapters/lib/); for c also adapter.c,
 * which `run` builds (now, and again whenever adapter.c is newer).  The skeleton takes a
 * real lock (python, c: flock; node: mkdir), so with DIR on
 * $LOCKSTORM_ADAPTERS it passes `lockstorm run -p ext:NAME` at once; the user
 * then puts the library's own calls in acquire() and release().
 *
 * Exit: 0 written; 2 bad usage, a bad name, or NAME already there (nothing
 * is overwritten); 3 a write failed.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/fsutil.h"

int adapter_main(int argc, char **argv);
int adapter_take_option(int *argc, char **argv);

static const char adapter_usage[] =
	"usage: lockstorm adapter new NAME --lang node|python|c [--dir DIR]\n"
	"  writes DIR/NAME/ (default DIR: .): adapter.json (the manifest) and run (the adapter);\n"
	"  put DIR on LOCKSTORM_ADAPTERS and run it as: lockstorm run -p ext:NAME\n";

static const char manifest_fmt[] =
	"{\n"
	"  \"name\": \"%s\",\n"
	"  \"origin\": \"%s (made by lockstorm adapter new; say which library and version)\",\n"
	"  \"summary\": \"external: %s\",\n"
	"  \"run\": \"run\",\n"
	"  \"stale\": \"never\",\n"
	"%s"
	"  \"workloads\": [\"update\", \"hold\"],\n"
	"  \"params\": [\n"
	"    { \"name\": \"stale_ms\", \"unit\": \"ms\", \"default\": 10000,\n"
	"      \"help\": \"the library's stale age; with \\\"stale\\\": \\\"never\\\" only nominal (sizes for=1.5stale)\" },\n"
	"    { \"name\": \"wait_ms\", \"unit\": \"ms\", \"default\": 10000,\n"
	"      \"help\": \"how long one acquire waits before it ends busy\" }\n"
	"  ]\n"
	"}\n";

static const char python_fmt[] =
	"#!/usr/bin/python3\n"
	"\"\"\"%s - a lockstorm adapter (docs/external-workers.md), made by `lockstorm adapter new`.\n"
	"\n"
	"Put your library's lock calls in acquire() and release(); any exception they\n"
	"raise becomes an acquire-error/release-error event with its type's name.\n"
	"The placeholder lock is fcntl.flock on LOCKSTORM_LOCK.\n"
	"\"\"\"\n"
	"import fcntl\n"
	"import os\n"
	"import sys\n"
	"import time\n"
	"\n"
	"sys.path.insert(0, %s)\n"
	"import lockstorm  # noqa: E402\n"
	"\n"
	"WAIT_MS = lockstorm.param(\"wait_ms\", 10000)\n"
	"held = None\n"
	"\n"
	"\n"
	"def acquire():\n"
	"    \"\"\"True when held, False when it gave up within WAIT_MS (busy).\"\"\"\n"
	"    global held\n"
	"    fd = os.open(lockstorm.LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)\n"
	"    end = time.monotonic() + WAIT_MS / 1000.0\n"
	"    while True:\n"
	"        try:\n"
	"            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
	"            held = fd\n"
	"            return True\n"
	"        except BlockingIOError:\n"
	"            if time.monotonic() >= end:\n"
	"                os.close(fd)\n"
	"                return False\n"
	"            time.sleep(0.001)\n"
	"        except BaseException:\n"
	"            os.close(fd)\n"
	"            raise\n"
	"\n"
	"\n"
	"def release():\n"
	"    global held\n"
	"    fd, held = held, None\n"
	"    fcntl.flock(fd, fcntl.LOCK_UN)\n"
	"    os.close(fd)\n"
	"\n"
	"\n"
	"lockstorm.serve(acquire, release)\n";

static const char node_fmt[] =
	"#!/usr/bin/env node\n"
	"'use strict';\n"
	"/*\n"
	" * %s - a lockstorm adapter (docs/external-workers.md), made by `lockstorm adapter new`.\n"
	" *\n"
	" * Put your library's lock calls in acquire() and release(); anything they\n"
	" * throw or reject with becomes an acquire-error/release-error event with its\n"
	" * type's name.  The placeholder lock is mkdir LOCKSTORM_LOCK (no stale age).\n"
	" */\n"
	"const fs = require('fs');\n"
	"const ls = require(%s);\n"
	"\n"
	"const WAIT_MS = ls.param('wait_ms', 10000);\n"
	"\n"
	"async function acquire() {\n"
	"\tconst end = Date.now() + WAIT_MS;\n"
	"\tfor (;;) {\n"
	"\t\ttry {\n"
	"\t\t\tfs.mkdirSync(ls.LOCK);\n"
	"\t\t\treturn true;\n"
	"\t\t} catch (e) {\n"
	"\t\t\tif (e.code !== 'EEXIST')\n"
	"\t\t\t\tthrow e;\n"
	"\t\t}\n"
	"\t\tif (Date.now() >= end)\n"
	"\t\t\treturn false;\n"
	"\t\tawait new Promise((r) => setTimeout(r, 2));\n"
	"\t}\n"
	"}\n"
	"\n"
	"async function release() {\n"
	"\tfs.rmdirSync(ls.LOCK);\n"
	"}\n"
	"\n"
	"ls.serve({ acquire, release });\n";

static const char c_fmt[] =
	"/*\n"
	" * %s - a lockstorm adapter (docs/external-workers.md), made by `lockstorm adapter new`.\n"
	" *\n"
	" * Put your library's lock calls in my_acquire() and my_release(): 0 done,\n"
	" * LSA_BUSY gave up within wait_ms, anything else an error (errno's name, or\n"
	" * lsa_error_type(\"NAME\") first).  The placeholder lock is flock(2) on\n"
	" * LOCKSTORM_LOCK.  ./run builds this file when it is newer than its binary.\n"
	" */\n"
	"#include <errno.h>\n"
	"#include <fcntl.h>\n"
	"#include <sys/file.h>\n"
	"#include <time.h>\n"
	"#include <unistd.h>\n"
	"\n"
	"#include \"lsadapter.h\"\n"
	"\n"
	"static int fd = -1;\n"
	"\n"
	"static int64_t now_ms(void)\n"
	"{\n"
	"\tstruct timespec ts;\n"
	"\tclock_gettime(CLOCK_MONOTONIC, &ts);\n"
	"\treturn (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;\n"
	"}\n"
	"\n"
	"static int my_acquire(void)\n"
	"{\n"
	"\tint64_t end = now_ms() + lsa_param(\"wait_ms\", 10000);\n"
	"\tfd = open(lsa_lock_path(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);\n"
	"\tif (fd < 0)\n"
	"\t\treturn -1;\n"
	"\twhile (flock(fd, LOCK_EX | LOCK_NB) != 0) {\n"
	"\t\tint e = errno;\n"
	"\t\tif (e != EWOULDBLOCK || now_ms() >= end) {\n"
	"\t\t\tclose(fd);\n"
	"\t\t\tfd = -1;\n"
	"\t\t\terrno = e;\n"
	"\t\t\treturn e == EWOULDBLOCK ? LSA_BUSY : -1;\n"
	"\t\t}\n"
	"\t\tstruct timespec ts = { 0, 1000000 };\n"
	"\t\tnanosleep(&ts, NULL);\n"
	"\t}\n"
	"\treturn 0;\n"
	"}\n"
	"\n"
	"static int my_release(void)\n"
	"{\n"
	"\tint r = flock(fd, LOCK_UN);\n"
	"\tclose(fd);\n"
	"\tfd = -1;\n"
	"\treturn r;\n"
	"}\n"
	"\n"
	"int main(void)\n"
	"{\n"
	"\treturn lsa_serve(my_acquire, my_release);\n"
	"}\n";

/* run for C: build adapter.c when it is newer than its binary (or with --build), then exec it. */
static const char c_run_fmt[] =
	"#!/bin/sh\n"
	"# %s - builds adapter.c with lockstorm's adapters/lib/lsadapter.c when it is\n"
	"# newer than adapter.bin (or with --build), then runs it.\n"
	"here=$(cd \"$(dirname \"$0\")\" && pwd)\n"
	"src=%s\n"
	"bin=\"$here/adapter.bin\"\n"
	"if [ \"$1\" = --build ] || [ ! -x \"$bin\" ] || [ \"$here/adapter.c\" -nt \"$bin\" ]; then\n"
	"\tcc -std=gnu11 -O1 -I\"$src\" -I\"$src/adapters/lib\" -o \"$bin.$$\" \"$here/adapter.c\" \\\n"
	"\t\t\"$src/adapters/lib/lsadapter.c\" \"$src/workloads/update_state.c\" \\\n"
	"\t\t$(pkg-config --cflags --libs jansson) >&2 && mv -f \"$bin.$$\" \"$bin\" || { rm -f \"$bin.$$\"; exit 2; }\n"
	"\t[ \"$1\" = --build ] && exit 0\n"
	"fi\n"
	"exec \"$bin\"\n";

static int adapter_name_ok(const char *s)
{
	if (!*s || strlen(s) > 40)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return 0;
	return 1;
}

/* path as a quoted string literal of both languages ('...'), or -1. */
static int adapter_quote(const char *path, char *out, size_t len)
{
	if (strpbrk(path, "'\\\n") || strlen(path) + 3 > len)
		return -1;
	snprintf(out, len, "'%s'", path);
	return 0;
}

static int adapter_write(const char *path, const char *text, mode_t mode)
{
	FILE *f = fopen(path, "wx");
	if (!f)
		return -1;
	int ok = fputs(text, f) >= 0;
	if (fclose(f) != 0)
		ok = 0;
	if (!ok || chmod(path, mode) != 0)
		return -1;
	return 0;
}

static int adapter_new(const char *name, const char *lang, const char *dir)
{
	if (!adapter_name_ok(name)) {
		fprintf(stderr, "lockstorm: adapter new: '%s' is not a name ([a-z0-9-]+, at most 40)\n", name);
		return 2;
	}
	int node = !strcmp(lang, "node"), c = !strcmp(lang, "c");
	if (!node && !c && strcmp(lang, "python")) {
		fprintf(stderr, "lockstorm: adapter new: --lang %s: want node, python or c\n", lang);
		return 2;
	}
	char lib[PATH_MAX], real[PATH_MAX], quoted[PATH_MAX + 8];
	if (fsutil_find_beside("../adapters/lib", "adapters/lib", FSUTIL_DIR, lib, sizeof lib) != 0 ||
	    !realpath(lib, real)) {
		fprintf(stderr, "lockstorm: adapter new: the helper library (adapters/lib) is not found (tried %s)\n", lib);
		return 3;
	}
	if (node)
		strncat(real, "/lockstorm.js", sizeof real - strlen(real) - 1);
	if (c) { /* the source tree above adapters/lib: lsadapter.c and workloads/update_state.c */
		char *cut = strstr(real, "/adapters/lib");
		char us[PATH_MAX + 32];
		if (cut)
			*cut = '\0';
		snprintf(us, sizeof us, "%s/workloads/update_state.c", real);
		if (!cut || access(us, R_OK) != 0) {
			fprintf(stderr, "lockstorm: adapter new: --lang c needs lockstorm's source tree (%s is missing)\n", us);
			return 3;
		}
	}
	if (adapter_quote(real, quoted, sizeof quoted) != 0) {
		fprintf(stderr, "lockstorm: adapter new: %s: a path with a quote or backslash\n", real);
		return 3;
	}
	char top[PATH_MAX + 64], p[PATH_MAX + 128];
	snprintf(top, sizeof top, "%s/%s", dir, name);
	if (mkdir(top, 0777) != 0) {
		fprintf(stderr, "lockstorm: adapter new: cannot make %s: %s\n", top, strerror(errno));
		return errno == EEXIST || errno == ENOENT ? 2 : 3;
	}
	static char text[8192];
	/* a C adapter explores through the preload seam (adapters/lib/lsexplore.c) */
	snprintf(text, sizeof text, manifest_fmt, name, name, node ? "a Node adapter" : c ? "a C adapter" : "a Python adapter",
		 c ? "  \"seam\": \"preload\",\n" : "");
	snprintf(p, sizeof p, "%s/adapter.json", top);
	if (adapter_write(p, text, 0644) != 0)
		goto out_fail;
	if (c) {
		snprintf(text, sizeof text, c_fmt, name);
		snprintf(p, sizeof p, "%s/adapter.c", top);
		if (adapter_write(p, text, 0644) != 0)
			goto out_fail;
	}
	snprintf(text, sizeof text, c ? c_run_fmt : node ? node_fmt : python_fmt, name, quoted);
	snprintf(p, sizeof p, "%s/run", top);
	if (adapter_write(p, text, 0755) != 0)
		goto out_fail;
	if (c) { /* built now, so the first run starts at once */
		char build[PATH_MAX + 160];
		snprintf(build, sizeof build, "'%s' --build", p);
		if (strchr(p, '\'') || system(build) != 0) {
			fprintf(stderr, "lockstorm: adapter new: %s --build failed (a C compiler and libjansson-dev are needed)\n", p);
			return 3;
		}
	}
	printf("wrote %s/adapter.json and %s/run\n", top, top);
	printf("try:  LOCKSTORM_ADAPTERS=%s lockstorm run -p ext:%s -n 2 --ops 20\n", dir, name);
	return 0;
out_fail:
	fprintf(stderr, "lockstorm: adapter new: cannot write %s: %s\n", p, strerror(errno));
	return 3;
}

int adapter_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "lang", required_argument, NULL, 'l' },
		{ "dir", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *lang = NULL, *dir = ".";
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+l:D:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			lang = optarg;
			break;
		case 'D':
			dir = optarg;
			break;
		case 'h':
			fputs(adapter_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "lockstorm: adapter: bad option (lockstorm adapter --help)\n");
			return 2;
		}
	}
	/* NAME may come before the options too: `adapter new NAME --lang python` */
	while (optind < argc && !strcmp(argv[optind], "new") && optind + 1 < argc) {
		const char *name = argv[optind + 1];
		optind += 2;
		while ((c = getopt_long(argc, argv, "+l:D:h", opts, NULL)) != -1) {
			if (c == 'l')
				lang = optarg;
			else if (c == 'D')
				dir = optarg;
			else {
				fprintf(stderr, "lockstorm: adapter: bad option (lockstorm adapter --help)\n");
				return 2;
			}
		}
		if (optind < argc) {
			fprintf(stderr, "lockstorm: adapter new: unexpected argument '%s'\n", argv[optind]);
			return 2;
		}
		if (!lang) {
			fprintf(stderr, "lockstorm: adapter new: --lang node|python|c is needed\n");
			return 2;
		}
		return adapter_new(name, lang, dir);
	}
	fprintf(stderr, "lockstorm: adapter: usage: lockstorm adapter new NAME --lang node|python|c [--dir DIR]\n");
	return 2;
}

/* `--adapters DIR` (or --adapters=DIR), for every command: taken out of argv
 * (up to a `--`) and put in front of $LOCKSTORM_ADAPTERS, so the runs a
 * command starts (compare's, scenario's) search it too.  0, or 2 with the
 * one-line reason printed. */
int adapter_take_option(int *argc, char **argv)
{
	int out = 1;
	for (int i = 1; i < *argc; i++) {
		const char *dir = NULL;
		if (!strcmp(argv[i], "--")) {
			while (i < *argc)
				argv[out++] = argv[i++];
			break;
		}
		if (!strcmp(argv[i], "--adapters")) {
			if (i + 1 >= *argc || !argv[i + 1][0]) {
				fprintf(stderr, "lockstorm: --adapters needs a directory\n");
				return 2;
			}
			dir = argv[++i];
		} else if (!strncmp(argv[i], "--adapters=", 11)) {
			dir = argv[i] + 11;
			if (!*dir) {
				fprintf(stderr, "lockstorm: --adapters needs a directory\n");
				return 2;
			}
		} else {
			argv[out++] = argv[i];
			continue;
		}
		const char *old = getenv("LOCKSTORM_ADAPTERS");
		char *list = malloc(strlen(dir) + (old ? strlen(old) : 0) + 2);
		if (!list) {
			fprintf(stderr, "lockstorm: out of memory\n");
			return 2;
		}
		sprintf(list, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
		setenv("LOCKSTORM_ADAPTERS", list, 1);
		free(list);
	}
	*argc = out;
	argv[out] = NULL;
	return 0;
}
