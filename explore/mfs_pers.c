/*
 * mfs_pers.c - the modelled file system's personality: parse and format
 * (see mfs.h).
 */
#include "mfs.h"

#include <stdio.h>
#include <string.h>

void mfs_pers_default(struct mfs_pers *p)
{
	*p = (struct mfs_pers){ .model = 1, .reuse = MFS_REUSE_IMMEDIATE, .btime = 1, .readdir = MFS_RD_STEPS,
				.time_ns = 1 };
}

static int preset(const char *name, struct mfs_pers *p)
{
	mfs_pers_default(p);
	if (!strcmp(name, "ext4"))
		return 0;
	if (!strcmp(name, "tmpfs")) {
		p->reuse = MFS_REUSE_NEVER;
		p->readdir = MFS_RD_SNAPSHOT;
	} else if (!strcmp(name, "fat")) {
		p->time_ns = 2000000000LL;
		p->nocase = 1;
		p->btime = 0;
	} else if (!strcmp(name, "windows")) {
		p->windows = 1;
		p->nocase = 1;
	} else if (!strcmp(name, "tab")) {
		p->split = 1;
		p->btime = 0;
	} else {
		return -1;
	}
	return 0;
}

static int yesno(const char *v, uint8_t *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "1"))
		*out = 1;
	else if (!strcmp(v, "no") || !strcmp(v, "0"))
		*out = 0;
	else
		return -1;
	return 0;
}

static int key(const char *k, const char *v, struct mfs_pers *p)
{
	if (!strcmp(k, "reuse")) {
		if (!strcmp(v, "immediate"))
			p->reuse = MFS_REUSE_IMMEDIATE;
		else if (!strcmp(v, "never"))
			p->reuse = MFS_REUSE_NEVER;
		else
			return -1;
	} else if (!strcmp(k, "readdir")) {
		if (!strcmp(v, "steps"))
			p->readdir = MFS_RD_STEPS;
		else if (!strcmp(v, "snapshot"))
			p->readdir = MFS_RD_SNAPSHOT;
		else
			return -1;
	} else if (!strcmp(k, "time")) {
		if (!strcmp(v, "ns"))
			p->time_ns = 1;
		else if (!strcmp(v, "1s"))
			p->time_ns = 1000000000LL;
		else if (!strcmp(v, "2s"))
			p->time_ns = 2000000000LL;
		else
			return -1;
	} else if (!strcmp(k, "case")) {
		if (!strcmp(v, "sensitive"))
			p->nocase = 0;
		else if (!strcmp(v, "insensitive"))
			p->nocase = 1;
		else
			return -1;
	} else if (!strcmp(k, "btime")) {
		return yesno(v, &p->btime);
	} else if (!strcmp(k, "windows")) {
		return yesno(v, &p->windows);
	} else if (!strcmp(k, "split")) {
		return yesno(v, &p->split);
	} else {
		return -1;
	}
	return 0;
}

int mfs_pers_parse(const char *spec, struct mfs_pers *p, char *why, size_t len)
{
	static const char want[] = "want real, or model[:PRESET][,KEY=VALUE...] with PRESET ext4|tmpfs|fat|windows|tab "
				   "and KEY reuse=immediate|never, btime=yes|no, readdir=steps|snapshot, time=ns|1s|2s, "
				   "case=sensitive|insensitive, windows=yes|no, split=yes|no";
	if (!strcmp(spec, "real")) {
		memset(p, 0, sizeof *p);
		return 0;
	}
	mfs_pers_default(p);
	if (!strcmp(spec, "model"))
		return 0;
	if (strncmp(spec, "model:", 6) || strlen(spec) > 255) {
		snprintf(why, len, "--fs %s: %s", spec, want);
		return -1;
	}
	char buf[256];
	snprintf(buf, sizeof buf, "%s", spec + 6);
	int first = 1;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save), first = 0) {
		char *eq = strchr(t, '=');
		if (!eq && first && preset(t, p) == 0)
			continue;
		if (!eq || (*eq = '\0', key(t, eq + 1, p) != 0)) {
			snprintf(why, len, "--fs %s: %s", spec, want);
			return -1;
		}
	}
	return 0;
}

void mfs_pers_format(const struct mfs_pers *p, char *buf, size_t len)
{
	if (!p->model) {
		snprintf(buf, len, "real");
		return;
	}
	snprintf(buf, len, "model:reuse=%s,btime=%s,readdir=%s,time=%s,case=%s,windows=%s,split=%s",
		 p->reuse == MFS_REUSE_NEVER ? "never" : "immediate", p->btime ? "yes" : "no",
		 p->readdir == MFS_RD_SNAPSHOT ? "snapshot" : "steps",
		 p->time_ns >= 2000000000LL ? "2s" : p->time_ns >= 1000000000LL ? "1s" : "ns",
		 p->nocase ? "insensitive" : "sensitive", p->windows ? "yes" : "no", p->split ? "yes" : "no");
}
