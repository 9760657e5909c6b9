/*
 * report.c - terminal summary and JSON report (see report.h).
 */
#include "report.h"

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "../workloads/workload.h"
#include "byhost.h"

static void print_config(FILE *f, const struct run_config *cfg)
{
	fprintf(f, "config      protocol ");
	for (unsigned i = 0; i < (cfg->nproto_given ? cfg->nproto_given : cfg->nproto); i++) /* not the slots */
		fprintf(f, "%s%s", i ? "," : "", cfg->proto[i]->name);
	fprintf(f, ", workload %s, %u workers, ", cfg->workload->name, cfg->workers);
	if (cfg->duration_ms)
		fprintf(f, "%.1f s", (double)cfg->duration_ms / 1000.0);
	else
		fprintf(f, "%llu ops", (unsigned long long)cfg->ops);
	fprintf(f, ", seed %llu, time-scale %g\n", (unsigned long long)cfg->seed, cfg->time_scale);
	for (unsigned i = 0; i < cfg->nkv; i++)
		fprintf(f, "param       %s\n", cfg->kv[i]);
	for (unsigned i = 0; i < cfg->faults.n; i++)
		fprintf(f, "fault       %s\n", cfg->faults.rule[i].spec);
}

void report_print_text(FILE *f, const struct run_config *cfg, const struct check_result *res,
		       const struct verdict *v, const struct report_live *live)
{
	print_config(f, cfg);
	fprintf(f, "totals      %llu attempts, %llu acquired, %llu committed, %llu busy, %llu errors, "
		   "%llu lost, %llu crashes, %llu stalls, %llu reclaims\n",
		(unsigned long long)res->attempts, (unsigned long long)res->acquired,
		(unsigned long long)res->committed, (unsigned long long)res->busy,
		(unsigned long long)res->errors, (unsigned long long)res->lost,
		(unsigned long long)res->crashes, (unsigned long long)res->stalls,
		(unsigned long long)res->reclaims);
	fprintf(f, "throughput  %.1f ops/s over %.2f s;  wait p50 %.3f p99 %.3f max %.3f ms;  "
		   "hold p50 %.3f p99 %.3f max %.3f ms\n",
		res->ops_per_s, res->elapsed_s, res->wait.p50, res->wait.p99, res->wait.max,
		res->hold.p50, res->hold.p99, res->hold.max);
	if (res->nrev > 1) {
		fprintf(f, "by revision\n");
		fprintf(f, "  %-18s %7s %9s %9s %9s %7s %7s %7s %7s %10s %10s\n", "revision", "workers", "attempts",
			"acquired", "committed", "busy", "errors", "crashes", "stalls", "ops/s", "violations");
		for (unsigned k = 0; k < res->nrev; k++) {
			const struct check_rev *v = &res->rev[k];
			fprintf(f, "  %-18s %7u %9llu %9llu %9llu %7llu %7llu %7llu %7llu %10.1f %10llu\n", v->name,
				v->workers, (unsigned long long)v->attempts, (unsigned long long)v->acquired,
				(unsigned long long)v->committed, (unsigned long long)v->busy,
				(unsigned long long)v->errors, (unsigned long long)v->crashes,
				(unsigned long long)v->stalls, v->ops_per_s, (unsigned long long)v->violations);
		}
	}
	if (cfg->hosts)
		byhost_print(f, cfg);
	if (res->torn_bytes)
		fprintf(f, "journals    %zu torn bytes skipped at journal tails (a worker killed mid-write)\n",
			res->torn_bytes);
	if (live) {
		uint64_t calls = 0; /* none: external workers' calls are not counted */
		for (int op = 0; op < FSX_OP_COUNT; op++)
			calls += live->fs_calls[op];
		if (calls)
			fprintf(f, "fs calls   ");
		for (int op = 0; op < FSX_OP_COUNT; op++)
			if (live->fs_calls[op])
				fprintf(f, " %s %llu", fsx_op_name((enum fsx_op)op), (unsigned long long)live->fs_calls[op]);
		if (calls)
			fprintf(f, "\n");
		if (live->online_breaches)
			fprintf(f, "online      %llu overlapping holds seen the instant they happened, legal reclaims and dead "
				   "holders included (first: w%u and w%u); the verdict is the checker's\n",
				(unsigned long long)live->online_breaches, live->first_a, live->first_b);
	}
	fprintf(f, "\n%-16s %-6s %10s  %s\n", "invariant", "result", "violations", "first example");
	for (int i = 0; i < INV__COUNT; i++) {
		const struct check_inv *inv = &res->inv[i];
		if (!inv->applicable) {
			fprintf(f, "%-16s %-6s %10s  %s\n", inv->name, "n/a", "-", "(the workload does not exercise it)");
			continue;
		}
		fprintf(f, "%-16s %-6s %10llu  %s\n", inv->name, inv->violations ? "FAIL" : "ok",
			(unsigned long long)inv->violations, inv->nex ? inv->ex[0].text : "");
		unsigned show = cfg->verbose ? inv->nex : (inv->nex > 3 ? 3 : inv->nex);
		for (unsigned k = 1; k < show; k++)
			fprintf(f, "%-16s %-6s %10s  %s\n", "", "", "", inv->ex[k].text);
	}
	fprintf(f, "\n");
	verdict_print(f, v);
}

static json_t *dist_json(const struct dist *d)
{
	return json_pack("{s:f,s:f,s:f,s:I}", "p50", d->p50, "p99", d->p99, "max", d->max, "n", (json_int_t)d->n);
}

int report_write_json(const char *path, const struct run_config *cfg, const struct check_result *res,
		      const struct verdict *v, const struct report_live *live)
{
	json_t *protos = json_array(), *faults = json_array(), *params = json_array();
	for (unsigned i = 0; i < (cfg->nproto_given ? cfg->nproto_given : cfg->nproto); i++) /* not the slots */
		json_array_append_new(protos, json_string(cfg->proto[i]->name));
	for (unsigned i = 0; i < cfg->faults.n; i++)
		json_array_append_new(faults, json_string(cfg->faults.rule[i].spec));
	for (unsigned i = 0; i < cfg->nkv; i++)
		json_array_append_new(params, json_string(cfg->kv[i]));
	json_t *config = json_pack("{s:o,s:s,s:i,s:I,s:I,s:I,s:f,s:o,s:o,s:b}",
				   "protocols", protos, "workload", cfg->workload->name,
				   "workers", (int)cfg->workers, "duration_ms", (json_int_t)cfg->duration_ms,
				   "ops", (json_int_t)cfg->ops, "seed", (json_int_t)cfg->seed,
				   "time_scale", cfg->time_scale, "faults", faults, "params", params,
				   "respawn", cfg->respawn);
	json_t *totals = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I}",
				   "attempts", (json_int_t)res->attempts, "acquired", (json_int_t)res->acquired,
				   "committed", (json_int_t)res->committed, "busy", (json_int_t)res->busy,
				   "errors", (json_int_t)res->errors, "lost", (json_int_t)res->lost,
				   "crashes", (json_int_t)res->crashes, "stalls", (json_int_t)res->stalls,
				   "reclaims", (json_int_t)res->reclaims, "kills", (json_int_t)res->kills);
	json_t *thr = json_pack("{s:f,s:I,s:f,s:o,s:o}", "ops_per_s", res->ops_per_s, "ops", (json_int_t)res->ops,
				"elapsed_s", res->elapsed_s, "wait_ms", dist_json(&res->wait),
				"hold_ms", dist_json(&res->hold));
	json_t *invs = json_array();
	for (int i = 0; i < INV__COUNT; i++) {
		const struct check_inv *inv = &res->inv[i];
		json_t *ex = json_array();
		for (unsigned k = 0; k < inv->nex; k++) {
			json_t *workers = json_array();
			for (int j = 0; j < 2; j++)
				if (inv->ex[k].worker[j] >= 0)
					json_array_append_new(workers, json_integer(inv->ex[k].worker[j]));
			json_array_append_new(ex, json_pack("{s:s,s:o,s:[I,I],s:[I,I]}", "text", inv->ex[k].text,
							    "workers", workers,
							    "ops", (json_int_t)inv->ex[k].op[0], (json_int_t)inv->ex[k].op[1],
							    "seqs", (json_int_t)inv->ex[k].seq[0], (json_int_t)inv->ex[k].seq[1]));
		}
		json_array_append_new(invs, json_pack("{s:s,s:b,s:I,s:o}", "name", inv->name,
						      "applicable", inv->applicable,
						      "violations", (json_int_t)inv->violations, "examples", ex));
	}
	json_t *root = json_pack("{s:s,s:o,s:o,s:o,s:o,s:s,s:I}", "schema", "lockstorm-report/1",
				 "config", config, "totals", totals, "throughput", thr, "invariants", invs,
				 "verdict", verdict_json(v), "torn_bytes", (json_int_t)res->torn_bytes);
	if (root) { /* an interrupted or cut-short run proves nothing: say so beside the verdict */
		json_object_set_new(root, "complete", json_boolean(!v->incomplete));
		if (v->incomplete)
			json_object_set_new(root, "incomplete_reason", json_string(v->why));
	}
	if (root && cfg->hosts)
		json_object_set_new(root, "hosts", byhost_json(cfg));
	if (root && res->nrev) {
		json_t *revs = json_array();
		for (unsigned k = 0; k < res->nrev; k++) {
			const struct check_rev *v = &res->rev[k];
			json_array_append_new(revs, json_pack("{s:s,s:i,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:f,s:I}",
				"protocol", v->name, "workers", (int)v->workers, "attempts", (json_int_t)v->attempts,
				"acquired", (json_int_t)v->acquired, "committed", (json_int_t)v->committed,
				"busy", (json_int_t)v->busy, "errors", (json_int_t)v->errors, "lost", (json_int_t)v->lost,
				"crashes", (json_int_t)v->crashes, "stalls", (json_int_t)v->stalls,
				"ops_per_s", v->ops_per_s, "violations", (json_int_t)v->violations));
		}
		json_object_set_new(root, "by_revision", revs);
	}
	if (root && live) {
		json_t *calls = json_object();
		for (int op = 0; op < FSX_OP_COUNT; op++)
			if (live->fs_calls[op])
				json_object_set_new(calls, fsx_op_name((enum fsx_op)op), json_integer((json_int_t)live->fs_calls[op]));
		json_object_set_new(root, "fs_calls", calls);
		json_object_set_new(root, "online_breaches", json_integer((json_int_t)live->online_breaches));
		json_object_set_new(root, "cut_stalls", json_integer((json_int_t)live->cut));
	}
	if (!root) {
		errno = ENOMEM;
		return -1;
	}
	int r = json_dump_file(root, path, JSON_INDENT(2));
	json_decref(root);
	if (r != 0 && !errno)
		errno = EIO;
	return r;
}
