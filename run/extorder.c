/*
 * extorder.c - external runs' records in one global order (see extworker.h).
 */
#include "extworker.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/journal.h"

/* ---- the global order ---- */

struct ext_rec {
	struct jrec r;
	unsigned file;
};

static int ext_rec_cmp(const void *pa, const void *pb)
{
	const struct jrec *a = &((const struct ext_rec *)pa)->r, *b = &((const struct ext_rec *)pb)->r;
	if (a->ns != b->ns)
		return a->ns < b->ns ? -1 : 1;
	if (a->worker != b->worker)
		return a->worker < b->worker ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

int ext_resequence(const char *outdir)
{
	char dir[PATH_MAX + 16];
	snprintf(dir, sizeof dir, "%s/journal", outdir);
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	char (*names)[NAME_MAX + 1] = NULL;
	struct ext_rec *all = NULL;
	size_t n = 0, cap = 0;
	unsigned files = 0;
	int rc = -1;
	struct dirent *de;
	while ((de = readdir(d))) {
		size_t l = strlen(de->d_name);
		if (l < 5 || strcmp(de->d_name + l - 4, ".bin"))
			continue;
		char (*nn)[NAME_MAX + 1] = realloc(names, (files + 1) * sizeof *names);
		if (!nn)
			goto out;
		names = nn;
		snprintf(names[files], sizeof names[0], "%s", de->d_name);
		char p[PATH_MAX * 2];
		snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
		struct jrec *rec;
		size_t k, torn;
		if (journal_read_file(p, &rec, &k, &torn) != 0)
			goto out;
		if (n + k > cap) {
			size_t nc = (n + k) * 2 + 1024;
			struct ext_rec *na = realloc(all, nc * sizeof *na);
			if (!na) {
				free(rec);
				goto out;
			}
			all = na;
			cap = nc;
		}
		for (size_t i = 0; i < k; i++) {
			all[n].r = rec[i];
			all[n++].file = files;
		}
		free(rec);
		files++;
	}
	qsort(all, n, sizeof *all, ext_rec_cmp);
	for (size_t i = 0; i < n; i++)
		all[i].r.seq = i + 1;
	for (unsigned f = 0; f < files; f++) {
		char p[PATH_MAX * 2], tmp[PATH_MAX * 2 + 8];
		snprintf(p, sizeof p, "%s/%s", dir, names[f]);
		snprintf(tmp, sizeof tmp, "%s.tmp", p);
		unlink(tmp);
		struct journal j;
		if (journal_open(&j, tmp, 0) != 0)
			goto out;
		for (size_t i = 0; i < n; i++)
			if (all[i].file == f && journal_write(&j, &all[i].r) != 0) {
				journal_close(&j);
				goto out;
			}
		journal_close(&j);
		if (rename(tmp, p) != 0)
			goto out;
	}
	rc = 0;
out:
	closedir(d);
	free(all);
	free(names);
	return rc;
}
