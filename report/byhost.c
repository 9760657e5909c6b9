/*
 * byhost.c - the report's breakdown by host (run --hosts, docs/hosts.md):
 * which workers ran on which host, under which pids, and each host's share
 * of the figures, re-derived from the journals alone (so `check` shows it
 * too).  A worker's host is cfg_host_of (a built-in worker's EV_WORKER_START
 * says so in b; an adapter's start record is the driver's); a pid is only ever
 * compared with pids of the same host: equal numbers on two hosts are two
 * processes, and the breakdown counts them as colliding.
 */
#include "byhost.h"

#include <stdlib.h>
#include <string.h>

#include "../core/journal.h"
#include "../faults/fault.h"

#define BYHOST_PIDS 8 /* per worker: its incarnations' pids, the first ones */

struct wrow {
	unsigned host;
	int pids[BYHOST_PIDS];
	unsigned npid;
};

struct hrow {
	unsigned workers;
	uint64_t attempts, acquired, committed, busy, errors, crashes;
};

struct byhost {
	unsigned nhosts, nworkers;
	struct wrow *w;
	struct hrow h[CFG_MAX_HOSTS];
	unsigned collisions; /* pids that more than one host's workers had */
};

static void add_pid(struct wrow *w, int pid)
{
	for (unsigned i = 0; i < w->npid; i++)
		if (w->pids[i] == pid)
			return;
	if (w->npid < BYHOST_PIDS)
		w->pids[w->npid++] = pid;
}

static struct byhost *collect(const struct run_config *cfg)
{
	struct byhost *b = calloc(1, sizeof *b);
	if (!b || !(b->w = calloc(cfg->workers, sizeof *b->w))) {
		free(b);
		return NULL;
	}
	b->nhosts = cfg->hosts ? cfg->hosts : 1;
	b->nworkers = cfg->workers;
	for (unsigned w = 0; w < cfg->workers; w++)
		b->w[w].host = cfg_host_of(cfg, w);
	struct jrec *rec = NULL;
	size_t n = 0, torn = 0;
	unsigned files = 0;
	if (journal_read_dir(cfg->outdir, &rec, &n, &torn, &files) != 0)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct jrec *r = &rec[i];
		if (r->worker >= cfg->workers)
			continue;
		struct wrow *w = &b->w[r->worker];
		if (r->pid > 0)
			add_pid(w, r->pid);
	}
	for (size_t i = 0; i < n; i++) {
		const struct jrec *r = &rec[i];
		if (r->worker >= cfg->workers)
			continue;
		struct hrow *h = &b->h[b->w[r->worker].host];
		switch (r->type) {
		case EV_ATTEMPT: h->attempts += r->a == 0; break;
		case EV_ACQUIRED: h->acquired++; break;
		case EV_COMMIT: h->committed++; break;
		case EV_BUSY: h->busy++; break;
		case EV_ACQUIRE_ERROR: case EV_WRITE_ERROR: case EV_RELEASE_ERROR: h->errors++; break;
		case EV_FAULT: h->crashes += r->a == FK_CRASH; break;
		default: break;
		}
	}
	free(rec);
	for (unsigned w = 0; w < cfg->workers; w++)
		b->h[b->w[w].host].workers++;
	/* a pid seen on two hosts or more */
	for (unsigned w = 0; w < cfg->workers; w++)
		for (unsigned k = 0; k < b->w[w].npid; k++) {
			int pid = b->w[w].pids[k], first = 1, other = 0;
			for (unsigned v = 0; v < cfg->workers && first; v++)
				for (unsigned j = 0; j < b->w[v].npid; j++) {
					if (b->w[v].pids[j] != pid)
						continue;
					if (v < w || (v == w && j < k))
						first = 0; /* counted at its first sighting */
					else if (b->w[v].host != b->w[w].host)
						other = 1;
				}
			b->collisions += first && other;
		}
	return b;
}

static void free_byhost(struct byhost *b)
{
	if (b)
		free(b->w);
	free(b);
}

void byhost_print(FILE *f, const struct run_config *cfg)
{
	struct byhost *b = collect(cfg);
	if (!b)
		return;
	fprintf(f, "by host     %u hosts, own pid namespaces; %u pid%s used on more than one host\n", b->nhosts,
		b->collisions, b->collisions == 1 ? "" : "s");
	fprintf(f, "  %-14s %-26s %9s %9s %9s %7s %7s %7s\n", "host", "workers (pid)", "attempts", "acquired",
		"committed", "busy", "errors", "crashes");
	for (unsigned h = 0; h < b->nhosts; h++) {
		char name[32], ws[256] = "";
		size_t n = 0;
		byhost_hostname(h, name, sizeof name);
		for (unsigned w = 0; w < b->nworkers; w++) {
			if (b->w[w].host != h)
				continue;
			n += (size_t)snprintf(ws + n, n < sizeof ws ? sizeof ws - n : 0, "%sw%u(%d%s)", n ? " " : "", w,
					      b->w[w].npid ? b->w[w].pids[0] : 0, b->w[w].npid > 1 ? ",.." : "");
		}
		const struct hrow *r = &b->h[h];
		fprintf(f, "  %-14s %-26s %9llu %9llu %9llu %7llu %7llu %7llu\n", name, ws,
			(unsigned long long)r->attempts, (unsigned long long)r->acquired,
			(unsigned long long)r->committed, (unsigned long long)r->busy, (unsigned long long)r->errors,
			(unsigned long long)r->crashes);
	}
	if (cfg->netfs[0])
		fprintf(f, "  file system: --netfs %s, one mount per host (docs/hosts.md)\n", cfg->netfs);
	free_byhost(b);
}

json_t *byhost_json(const struct run_config *cfg)
{
	struct byhost *b = collect(cfg);
	if (!b)
		return NULL;
	json_t *hosts = json_array();
	for (unsigned h = 0; h < b->nhosts; h++) {
		char name[32];
		byhost_hostname(h, name, sizeof name);
		json_t *ws = json_array();
		for (unsigned w = 0; w < b->nworkers; w++) {
			if (b->w[w].host != h)
				continue;
			json_t *pids = json_array();
			for (unsigned k = 0; k < b->w[w].npid; k++)
				json_array_append_new(pids, json_integer(b->w[w].pids[k]));
			json_array_append_new(ws, json_pack("{s:i,s:o}", "worker", (int)w, "pids", pids));
		}
		const struct hrow *r = &b->h[h];
		json_array_append_new(hosts, json_pack("{s:i,s:s,s:o,s:I,s:I,s:I,s:I,s:I,s:I}", "host", (int)h,
			"hostname", name, "workers", ws, "attempts", (json_int_t)r->attempts,
			"acquired", (json_int_t)r->acquired, "committed", (json_int_t)r->committed,
			"busy", (json_int_t)r->busy, "errors", (json_int_t)r->errors, "crashes", (json_int_t)r->crashes));
	}
	json_t *o = json_pack("{s:i,s:o,s:i,s:s}", "count", (int)b->nhosts, "hosts", hosts, "pid_collisions",
			      (int)b->collisions, "netfs", cfg->netfs);
	free_byhost(b);
	return o;
}

void byhost_hostname(unsigned h, char *buf, size_t len)
{
	snprintf(buf, len, "lockstorm-h%u", h);
}
