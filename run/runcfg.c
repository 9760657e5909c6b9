/*
 * runcfg.c - `lockstorm run` options, parameters and run.json (see runcfg.h).
 */
#include "runcfg.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/num.h"
#include "../faults/fsx.h"
#include "../protocols/external.h"
#include "../workloads/workload.h"
#include "hosts.h"
#include "netfs.h"

/* Wrap ", "-separated names after a fixed first line at column 26. */
static void usage_names(FILE *f, const char *names)
{
	int col = 26;
	fprintf(f, "%26s", "");
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ",");
		if (col > 26 && col + (int)n + 2 > 100) {
			fprintf(f, ",\n%26s", "");
			col = 26;
		} else if (col > 26) {
			fputs(", ", f);
			col += 2;
		}
		fprintf(f, "%.*s", (int)n, p);
		col += (int)n;
		p += n;
		while (*p == ',' || *p == ' ')
			p++;
	}
	fputc('\n', f);
}

void runcfg_usage(FILE *f)
{
	char names[1024], ext[512];
	fputs("usage: lockstorm run [options]   (--opt=VALUE and --opt VALUE alike)\n"
	      "  -p, --protocol P[,P..]  protocol revision(s); several make a mixed fleet (default mkdir-owner):\n", f);
	lock_names(names, sizeof names);
	ext_names(ext, sizeof ext);
	size_t n = strlen(names);
	snprintf(names + n, sizeof names - n, "%s%s, exec", *ext ? ", " : "", ext);
	usage_names(f, names);
	fputs("                          ext:NAME runs a real lock library through its adapter (lockstorm list protocols)\n"
	      "      --exec CMD          run CMD (/bin/sh -c) as the adapter of protocol 'exec' (docs/external-workers.md)\n"
	      "  -w, --workload W        the workload (default update):\n", f);
	workload_names(names, sizeof names);
	usage_names(f, names);
	fprintf(f, "  -n, --workers N         worker processes, 1..%d (default 8)\n", CFG_MAX_WORKERS);
	fputs("  -d, --duration D        run time with a unit: 500ms, 5s, 2m, 1h (default 5s)\n"
	      "      --ops N             stop after N operations in all (instead of -d)\n"
	      "      --fault SPEC        KIND[@POINT][:KEY=VAL,..], repeatable (see lockstorm list faults); KIND:\n", f);
	n = 0;
	names[0] = '\0';
	for (int k = FK_NONE + 1; k < FK__COUNT; k++)
		n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s", n ? ", " : "",
				      fault_kind_name((enum fault_kind)k));
	usage_names(f, names);
	fputs("                          durations: for=300ms|2s|1.5stale, every=5ms, by=+-2s, res=1s\n"
	      "      --faults PROFILE    standard | stalls | crashes | errnos | windows | none (the ones with\n"
	      "                          crashes imply --respawn; see lockstorm list faults)\n"
	      "      --time-scale F      multiply every protocol time constant by F, 0 < F <= 1000 (default 1)\n"
	      "      --param K=V         set a protocol or workload parameter (repeatable; see `lockstorm list`);\n"
	      "                          K_ms=1500 is ms (the name says so), or give a unit: K_ms=1.5s\n"
	      "  -s, --seed S            run seed, a decimal number: same seed, same fault decisions (default 1)\n"
	      "      --respawn           restart a worker that crashed\n"
	      "      --strict            also judge strict-lease: a live holder's lock taken over at all\n"
	      "                          (past its stale age) by a protocol without a held() check\n"
	      "      --dir DIR           work directory (default: a fresh one under $TMPDIR or /tmp, removed after)\n"
	      "  -o, --out OUTDIR        keep journals, final state and report.json here (default: in the\n"
	      "                          work directory, removed after)\n"
	      "      --json FILE         write the JSON report (schema lockstorm-report/1)\n"
	      "      --junit FILE        write JUnit XML: one testcase per invariant (n/a ones skipped)\n"
	      "      --keep              keep the work directory\n"
	      "      --trace             journal every fsx call and point (EV_STEP records)\n"
	      "      --triage[=D]        when the run fails, triage it: a targeted explore within D (default\n"
	      "                          60s) for a counterexample (lockstorm triage); the run's exit stays 1\n"
	      "      --hosts N           split the workers over N hosts: each a pid, UTS and mount namespace\n"
	      "                          (hostname lockstorm-hN; pids repeat across hosts); needs root (docs/hosts.md)\n"
	      "      --netfs sshfs[:attr=DUR,dir=DUR]  each host sees the work directory through its own sshfs\n"
	      "                          mount of a loopback sshd; attr/dir: attribute and lookup cache timeouts\n"
	      "                          (default 1s each); implies --hosts 2; nfs: not on this kernel (exit 2)\n"
	      "  -q, --quiet             only the verdict line\n"
	      "  -v, --verbose           more detail in the summary\n"
	      "  -h, --help              this help\n"
	      "exit: 0 every invariant held, 1 a violation, 2 bad usage or input, 3 the harness failed\n", f);
}

int runcfg_fail(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

void runcfg_defaults(struct run_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->proto[0] = &mkdir_owner_ops;
	cfg->nproto = 1;
	cfg->workload = &update_workload;
	cfg->workers = 8;
	cfg->duration_ms = 5000;
	cfg->seed = 1;
	cfg->time_scale = 1.0;
}

static int set_protocols(struct run_config *cfg, const char *list, char *why, size_t len)
{
	char buf[512];
	snprintf(buf, sizeof buf, "%s", list);
	cfg->nproto = 0;
	cfg->nproto_given = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct lock_ops *ops = lock_find(t);
		if (!ops) {
			char names[512], ext[256];
			lock_names(names, sizeof names);
			ext_names(ext, sizeof ext);
			if (!strncmp(t, "ext:", 4))
				return runcfg_fail(why, len, "unknown external adapter '%s' (known: %s; or --exec 'CMD')", t, ext);
			return runcfg_fail(why, len, "unknown protocol '%s' (known: %s, %s, exec)", t, names, ext);
		}
		if (cfg->nproto == CFG_MAX_PROTOS)
			return runcfg_fail(why, len, "at most %d protocols in one run", CFG_MAX_PROTOS);
		cfg->proto[cfg->nproto++] = ops;
	}
	if (!cfg->nproto)
		return runcfg_fail(why, len, "-p needs a protocol name");
	return 0;
}

static int set_workload(struct run_config *cfg, const char *name, char *why, size_t len)
{
	cfg->workload = workload_find(name);
	if (!cfg->workload) {
		char names[256];
		workload_names(names, sizeof names);
		return runcfg_fail(why, len, "unknown workload '%s' (known: %s)", name, names);
	}
	return 0;
}

int runcfg_set_protocols(struct run_config *cfg, const char *list, char *why, size_t len)
{
	return set_protocols(cfg, list, why, len);
}

int runcfg_set_workload(struct run_config *cfg, const char *name, char *why, size_t len)
{
	return set_workload(cfg, name, why, len);
}

enum {
	OPT_OPS = 256, OPT_FAULT, OPT_TIME_SCALE, OPT_PARAM, OPT_RESPAWN, OPT_STRICT, OPT_DIR, OPT_JSON,
	OPT_KEEP, OPT_TRACE, OPT_FAULTS, OPT_JUNIT, OPT_EXEC, OPT_TRIAGE, OPT_HOSTS, OPT_NETFS,
};

const char runcfg_shortopts[] = "p:w:n:d:s:o:qvh";

const struct option runcfg_longopts[] = {
	{ "protocol", required_argument, NULL, 'p' },
	{ "workload", required_argument, NULL, 'w' },
	{ "workers", required_argument, NULL, 'n' },
	{ "duration", required_argument, NULL, 'd' },
	{ "ops", required_argument, NULL, OPT_OPS },
	{ "fault", required_argument, NULL, OPT_FAULT },
	{ "faults", required_argument, NULL, OPT_FAULTS },
	{ "time-scale", required_argument, NULL, OPT_TIME_SCALE },
	{ "param", required_argument, NULL, OPT_PARAM },
	{ "seed", required_argument, NULL, 's' },
	{ "respawn", no_argument, NULL, OPT_RESPAWN },
	{ "strict", no_argument, NULL, OPT_STRICT },
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "out", required_argument, NULL, 'o' },
	{ "json", required_argument, NULL, OPT_JSON },
	{ "junit", required_argument, NULL, OPT_JUNIT },
	{ "exec", required_argument, NULL, OPT_EXEC },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "trace", no_argument, NULL, OPT_TRACE },
	{ "triage", optional_argument, NULL, OPT_TRIAGE },
	{ "hosts", required_argument, NULL, OPT_HOSTS },
	{ "netfs", required_argument, NULL, OPT_NETFS },
	{ "quiet", no_argument, NULL, 'q' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

const struct option *runcfg_option(int val)
{
	for (const struct option *o = runcfg_longopts; o->name; o++)
		if (o->val == val)
			return o;
	return NULL;
}

int runcfg_parse(struct run_config *cfg, int argc, char **argv, char *why, size_t len)
{
	int saw_d = 0, saw_ops = 0, saw_p = 0;
	optind = 1;
	opterr = 0;
	int c;
	char shortopts[sizeof runcfg_shortopts + 1];
	snprintf(shortopts, sizeof shortopts, ":%s", runcfg_shortopts); /* ':' : a missing value is ':' */
	char msg[256];
	while ((c = getopt_long(argc, argv, shortopts, runcfg_longopts, NULL)) != -1) {
		uint64_t u;
		switch (c) {
		case 'p':
			if (set_protocols(cfg, optarg, why, len))
				return -1;
			saw_p = 1;
			break;
		case OPT_EXEC:
			if (!*optarg || strlen(optarg) >= sizeof cfg->exec_cmd)
				return runcfg_fail(why, len, "--exec: want a command (at most %zu bytes)", sizeof cfg->exec_cmd - 1);
			snprintf(cfg->exec_cmd, sizeof cfg->exec_cmd, "%s", optarg);
			break;
		case 'w':
			if (set_workload(cfg, optarg, why, len))
				return -1;
			break;
		case 'n':
			if (num_u64(optarg, 1, CFG_MAX_WORKERS, &u, msg, sizeof msg))
				return runcfg_fail(why, len, "-n: %s (workers)", msg);
			cfg->workers = (unsigned)u;
			break;
		case 'd': {
			int64_t ms;
			if (num_ms(optarg, 0, &ms, msg, sizeof msg))
				return runcfg_fail(why, len, "-d: %s", msg);
			if (ms <= 0)
				return runcfg_fail(why, len, "-d %s: want a run time of 1ms or more", optarg);
			cfg->duration_ms = ms;
			saw_d = 1;
			break;
		}
		case OPT_OPS:
			if (num_u64(optarg, 1, UINT64_MAX, &u, msg, sizeof msg))
				return runcfg_fail(why, len, "--ops: %s", msg);
			cfg->ops = u;
			saw_ops = 1;
			break;
		case OPT_FAULT:
			if (fault_parse(&cfg->faults, optarg, why, len))
				return -1;
			break;
		case OPT_FAULTS:
			if (cfg->faults.profile[0])
				return runcfg_fail(why, len, "--faults given twice ('%s' and '%s')", cfg->faults.profile, optarg);
			if (fault_profile(&cfg->faults, optarg, why, len))
				return -1;
			snprintf(cfg->faults.profile, sizeof cfg->faults.profile, "%s", optarg);
			/* a profile that crashes workers restarts them, or a long run ends with none */
			if (!strcmp(optarg, "standard") || !strcmp(optarg, "crashes"))
				cfg->respawn = 1;
			break;
		case OPT_TIME_SCALE: {
			double f;
			if (num_real(optarg, 0, 1000, NUM_ABOVE, &f, msg, sizeof msg))
				return runcfg_fail(why, len, "--time-scale: %s (e.g. 0.01)", msg);
			cfg->time_scale = f;
			break;
		}
		case OPT_PARAM:
			if (!strchr(optarg, '=') || optarg[0] == '=')
				return runcfg_fail(why, len, "--param %s: want K=V", optarg);
			if (cfg->nkv == CFG_MAX_KV)
				return runcfg_fail(why, len, "too many --param (at most %d)", CFG_MAX_KV);
			cfg->kv[cfg->nkv++] = optarg;
			break;
		case 's':
			if (num_u64(optarg, 0, UINT64_MAX, &u, msg, sizeof msg))
				return runcfg_fail(why, len, "-s: %s (the seed)", msg);
			cfg->seed = u;
			break;
		case OPT_RESPAWN:
			cfg->respawn = 1;
			break;
		case OPT_STRICT:
			cfg->strict = 1;
			break;
		case OPT_DIR:
			if (strlen(optarg) >= sizeof cfg->workdir - 64)
				return runcfg_fail(why, len, "--dir: path too long");
			snprintf(cfg->workdir, sizeof cfg->workdir, "%s", optarg);
			break;
		case 'o':
			if (strlen(optarg) >= sizeof cfg->outdir - 64)
				return runcfg_fail(why, len, "-o: path too long");
			snprintf(cfg->outdir, sizeof cfg->outdir, "%s", optarg);
			break;
		case OPT_JSON:
			snprintf(cfg->json_path, sizeof cfg->json_path, "%s", optarg);
			break;
		case OPT_JUNIT:
			snprintf(cfg->junit_path, sizeof cfg->junit_path, "%s", optarg);
			break;
		case OPT_KEEP:
			cfg->keep = 1;
			break;
		case OPT_TRACE:
			cfg->trace = 1;
			break;
		case OPT_TRIAGE: { /* a failing run is triaged at its end (cli: lockstorm triage) */
			char msg[160];
			cfg->triage_ms = 60000;
			if (optarg && (num_ms(optarg, 0, &cfg->triage_ms, msg, sizeof msg) || cfg->triage_ms < 1000))
				return runcfg_fail(why, len, "--triage=%s: want a budget of 1s or more", optarg);
			break;
		}
		case OPT_HOSTS: /* run/hosts.h */
			if (num_u64(optarg, 1, CFG_MAX_HOSTS, &u, msg, sizeof msg))
				return runcfg_fail(why, len, "--hosts %s: %s (hosts, 1..%d)", optarg, msg, CFG_MAX_HOSTS);
			cfg->hosts = (unsigned)u;
			break;
		case OPT_NETFS: { /* run/netfs.h */
			struct netfs nf;
			if (netfs_parse(optarg, &nf, why, len))
				return -1;
			snprintf(cfg->netfs, sizeof cfg->netfs, "%s", optarg);
			break;
		}
		case 'q':
			cfg->quiet = 1;
			break;
		case 'v':
			cfg->verbose = 1;
			break;
		case 'h':
			runcfg_usage(stdout);
			return 1;
		case ':':
			return runcfg_fail(why, len, "option %s needs a value", argv[optind - 1]);
		default:
			if (optopt && !strncmp(argv[optind - 1], "--", 2) && strchr(argv[optind - 1], '='))
				return runcfg_fail(why, len, "option '%.*s' takes no value", (int)strcspn(argv[optind - 1], "="),
						   argv[optind - 1]);
			if (optopt && optopt < 256 && argv[optind - 1][1] != '-')
				return runcfg_fail(why, len, "unknown option '-%c' (see lockstorm run --help)", optopt);
			return runcfg_fail(why, len, "unknown option '%s' (see lockstorm run --help)", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return runcfg_fail(why, len, "unexpected argument '%s' (see lockstorm run --help)", argv[optind]);
	if (saw_d && saw_ops)
		return runcfg_fail(why, len, "-d and --ops exclude each other");
	if (saw_ops)
		cfg->duration_ms = 0;
	if (cfg->netfs[0] && !cfg->hosts) /* a network file system is seen from more than one host */
		cfg->hosts = 2;
	if (cfg->hosts > cfg->workers)
		return runcfg_fail(why, len, "--hosts %u: more hosts than workers (-n %u)", cfg->hosts, cfg->workers);
	if (cfg->exec_cmd[0] && !saw_p) {
		cfg->proto[0] = &ext_exec_ops;
		cfg->nproto = 1;
	}
	int has_exec = 0;
	for (unsigned i = 0; i < cfg->nproto; i++)
		has_exec |= cfg->proto[i] == &ext_exec_ops;
	if (has_exec && !cfg->exec_cmd[0])
		return runcfg_fail(why, len, "-p exec needs --exec 'CMD' (the adapter to run)");
	if (!has_exec && cfg->exec_cmd[0])
		return runcfg_fail(why, len, "--exec with -p: name 'exec' among the protocols (-p exec or -p A,exec)");
	for (unsigned i = 0; i < cfg->faults.n; i++)
		if (!runcfg_point_known(cfg, cfg->faults.rule[i].point))
			return runcfg_fail(why, len, "bad fault spec '%s': no point of this run matches '%s' (see lockstorm list points)",
				    cfg->faults.rule[i].spec, cfg->faults.rule[i].point);
	return runcfg_resolve(cfg, why, len);
}

int runcfg_resolve(struct run_config *cfg, char *why, size_t len)
{
	unsigned char used[CFG_MAX_KV] = { 0 };
	if (hosts_resolve_faults(cfg, why, len))
		return -1;
	static char store[CFG_MAX_KV][256]; /* a slot's picks of --param lists (workloads/variants.c) */
	const char *kv[CFG_MAX_KV];
	if (cfg_slots_expand(cfg, why, len) || cfg_instances(cfg, used, why, len))
		return -1;
	/* pvals/wvals in whole ms for the hooks, and in exact us (lk->us): what the
	 * workers sleep and compare with, the origin's ratios at every scale (one
	 * that still rounds says so once) */
	for (unsigned i = 0; i < cfg->nproto; i++)
		if (cfg_slot_kv(cfg, i, store, kv, why, len) ||
		    param_resolve(cfg->proto[i]->params, cfg->pvals[i], kv, cfg->nkv, cfg->time_scale, used, why, len) ||
		    param_resolve(cfg->workload->params, cfg->wvals_slot[i], kv, cfg->nkv, cfg->time_scale, used, why,
				  len) ||
		    param_resolve_us(cfg->proto[i]->params, cfg->pvals_us[i], kv, cfg->nkv, cfg->time_scale, why, len) ||
		    param_resolve_us(cfg->workload->params, cfg->wvals_us_slot[i], kv, cfg->nkv, cfg->time_scale, why,
				     len))
			return -1;
	memcpy(cfg->wvals, cfg->wvals_slot[0], sizeof cfg->wvals);
	memcpy(cfg->wvals_us, cfg->wvals_us_slot[0], sizeof cfg->wvals_us);
	for (unsigned k = 0; k < cfg->nkv; k++) {
		if (used[k])
			continue;
		char names[1024] = "";
		size_t n = 0;
		for (unsigned i = 0; i <= cfg->nproto; i++) {
			const struct param *p = i < cfg->nproto ? cfg->proto[i]->params : cfg->workload->params;
			for (; p->name; p++)
				n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s%s",
						      n ? ", " : "", p->name);
		}
		return runcfg_fail(why, len, "--param %s: no protocol or workload of this run has that parameter (known: %s)",
			    cfg->kv[k], names);
	}
	return 0;
}

static void slot_lock(const struct run_config *cfg, unsigned worker, struct lock *lk)
{
	unsigned slot = cfg_proto_slot(cfg, worker);
	lock_setup(lk, cfg->proto[slot], "/lockstorm/state.json", cfg->pvals[slot], worker, NULL);
	lock_setup_exact(lk, cfg->pvals_us[slot]);
}

int64_t runcfg_stale_ms(const struct run_config *cfg, unsigned worker)
{
	static struct lock lk; /* big: keep it off the stack */
	slot_lock(cfg, worker, &lk);
	return lk.ops->stale_ms(&lk);
}

int64_t runcfg_budget_ms(const struct run_config *cfg, unsigned worker)
{
	static struct lock lk;
	slot_lock(cfg, worker, &lk);
	return lk.ops->wait_budget_ms(&lk);
}

static int points_match(const char *const *points, const char *glob)
{
	for (; points && *points; points++)
		if (fault_point_match(glob, *points))
			return 1;
	return 0;
}

int runcfg_point_known(const struct run_config *cfg, const char *glob)
{
	for (int op = 0; op < FSX_OP_COUNT; op++)
		if (op != FSX_POINT && fault_point_match(glob, fsx_op_point((enum fsx_op)op)))
			return 1;
	for (unsigned i = 0; i < cfg->nproto; i++)
		if (points_match(cfg->proto[i]->points, glob))
			return 1;
	return points_match(cfg->workload->points, glob);
}

/* ---- run.json ---- */

int runcfg_save(const struct run_config *cfg, const char *path)
{
	json_t *root = json_object();
	json_t *protos = json_array(), *params = json_array(), *faults = json_array();
	for (unsigned i = 0; i < cfg->nproto; i++)
		json_array_append_new(protos, json_string(cfg->proto[i]->name));
	for (unsigned i = 0; i < cfg->nkv; i++)
		json_array_append_new(params, json_string(cfg->kv[i]));
	for (unsigned i = 0; i < cfg->faults.n; i++)
		json_array_append_new(faults, json_string(cfg->faults.rule[i].spec));
	json_object_set_new(root, "schema", json_string("lockstorm-run/1"));
	json_object_set_new(root, "fault_profile", json_string(cfg->faults.profile));
	json_object_set_new(root, "windows", json_boolean(cfg->faults.windows));
	json_object_set_new(root, "protocols", protos);
	json_object_set_new(root, "workload", json_string(cfg->workload->name));
	json_object_set_new(root, "workers", json_integer(cfg->workers));
	json_object_set_new(root, "duration_ms", json_integer(cfg->duration_ms));
	json_object_set_new(root, "ops", json_integer((json_int_t)cfg->ops));
	json_object_set_new(root, "seed", json_integer((json_int_t)cfg->seed));
	json_object_set_new(root, "time_scale", json_real(cfg->time_scale));
	json_object_set_new(root, "params", params);
	json_object_set_new(root, "faults", faults);
	json_object_set_new(root, "respawn", json_boolean(cfg->respawn));
	if (cfg->strict)
		json_object_set_new(root, "strict", json_true());
	if (cfg->exec_cmd[0])
		json_object_set_new(root, "exec", json_string(cfg->exec_cmd));
	if (cfg->hosts)
		json_object_set_new(root, "hosts", json_integer(cfg->hosts));
	if (cfg->netfs[0])
		json_object_set_new(root, "netfs", json_string(cfg->netfs));
	int r = json_dump_file(root, path, JSON_INDENT(2));
	json_decref(root);
	return r;
}

/*
 * The params runcfg_load read are copies: every copy it makes is listed here
 * until runcfg_unload frees it (a config that is never unloaded keeps its
 * copies reachable for the life of the process; nothing leaks).
 */
static char **loaded_kv;
static size_t nloaded_kv, caploaded_kv;

static char *kv_copy(const char *s)
{
	if (nloaded_kv == caploaded_kv) {
		size_t nc = caploaded_kv ? 2 * caploaded_kv : CFG_MAX_KV;
		char **nv = realloc(loaded_kv, nc * sizeof *nv);
		if (!nv)
			return NULL;
		loaded_kv = nv;
		caploaded_kv = nc;
	}
	char *c = strdup(s);
	if (c)
		loaded_kv[nloaded_kv++] = c;
	return c;
}

void runcfg_unload(struct run_config *cfg)
{
	for (unsigned i = 0; i < cfg->nkv; i++) {
		for (size_t k = 0; k < nloaded_kv; k++) {
			if (loaded_kv[k] != cfg->kv[i])
				continue;
			free(loaded_kv[k]);
			loaded_kv[k] = loaded_kv[--nloaded_kv];
			break;
		}
	}
	cfg->nkv = 0;
}

/* KEY of run.json as a whole number in [lo, hi] (def when absent): 0, or -1 with why. */
static int load_int(json_t *root, const char *key, json_int_t lo, json_int_t hi, json_int_t def,
		    json_int_t *out, const char *path, char *why, size_t len)
{
	json_t *v = json_object_get(root, key);
	if (!v) {
		*out = def;
		return 0;
	}
	if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
		return runcfg_fail(why, len, "%s: '%s' wants a whole number from %lld to %lld", path, key,
				   (long long)lo, (long long)hi);
	*out = json_integer_value(v);
	return 0;
}

/* Every value is checked as the command line checks it: a hand-edited or
 * damaged run.json is refused with a reason, never run or judged with
 * numbers no option could have given. */
int runcfg_load(struct run_config *cfg, const char *path, char *why, size_t len)
{
	json_error_t err;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
	if (!root)
		return runcfg_fail(why, len, "%s: %s", path, err.text);
	runcfg_defaults(cfg);
	int rc = -1;
	json_int_t n;
	const char *schema = json_string_value(json_object_get(root, "schema"));
	if (!json_is_object(root) || !schema || strcmp(schema, "lockstorm-run/1")) {
		runcfg_fail(why, len, "%s: not a lockstorm run file (schema lockstorm-run/1)", path);
		goto out;
	}
	json_t *protos = json_object_get(root, "protocols");
	size_t i;
	json_t *v;
	cfg->nproto = 0;
	json_array_foreach(protos, i, v) {
		const struct lock_ops *ops = json_is_string(v) ? lock_find(json_string_value(v)) : NULL;
		if (!ops || cfg->nproto == CFG_MAX_PROTOS) {
			runcfg_fail(why, len, "%s: unknown protocol in 'protocols'", path);
			goto out;
		}
		cfg->proto[cfg->nproto++] = ops;
	}
	const char *wl = json_string_value(json_object_get(root, "workload"));
	if (!cfg->nproto || !wl || set_workload(cfg, wl, why, len)) {
		if (cfg->nproto && wl)
			goto out;
		runcfg_fail(why, len, "%s: 'protocols' or 'workload' missing", path);
		goto out;
	}
	if (load_int(root, "workers", 1, CFG_MAX_WORKERS, 0, &n, path, why, len))
		goto out;
	if (n < 1) {
		runcfg_fail(why, len, "%s: 'workers' missing", path);
		goto out;
	}
	cfg->workers = (unsigned)n;
	if (load_int(root, "duration_ms", 0, NUM_MAX_MS, 0, &n, path, why, len))
		goto out;
	cfg->duration_ms = n;
	/* ops and seed are unsigned, saved as JSON's signed integers: any value round-trips */
	if (load_int(root, "ops", INT64_MIN, INT64_MAX, 0, &n, path, why, len))
		goto out;
	cfg->ops = (uint64_t)n;
	if (load_int(root, "seed", INT64_MIN, INT64_MAX, 0, &n, path, why, len))
		goto out;
	cfg->seed = (uint64_t)n;
	json_t *ts = json_object_get(root, "time_scale");
	cfg->time_scale = ts ? json_number_value(ts) : 1;
	if ((ts && !json_is_number(ts)) || !(cfg->time_scale > 0 && cfg->time_scale <= 1000)) {
		runcfg_fail(why, len, "%s: 'time_scale' wants a number above 0, at most 1000", path);
		goto out;
	}
	cfg->respawn = json_is_true(json_object_get(root, "respawn"));
	cfg->strict = json_is_true(json_object_get(root, "strict"));
	json_t *ex = json_object_get(root, "exec");
	if (ex && (!json_is_string(ex) || json_string_length(ex) >= sizeof cfg->exec_cmd ||
		   strlen(json_string_value(ex)) != json_string_length(ex))) {
		runcfg_fail(why, len, "%s: 'exec' wants a command line (at most %zu bytes)", path,
			    sizeof cfg->exec_cmd - 1);
		goto out;
	}
	snprintf(cfg->exec_cmd, sizeof cfg->exec_cmd, "%s", ex ? json_string_value(ex) : "");
	json_t *hj = json_object_get(root, "hosts"), *nj = json_object_get(root, "netfs");
	if (hj && (!json_is_integer(hj) || json_integer_value(hj) < 1 || json_integer_value(hj) > CFG_MAX_HOSTS ||
		   (unsigned)json_integer_value(hj) > cfg->workers)) {
		runcfg_fail(why, len, "%s: 'hosts' wants 1..%d, at most the workers", path, CFG_MAX_HOSTS);
		goto out;
	}
	cfg->hosts = hj ? (unsigned)json_integer_value(hj) : 0;
	if (nj && (!json_is_string(nj) || json_string_length(nj) >= sizeof cfg->netfs)) {
		runcfg_fail(why, len, "%s: 'netfs' wants a --netfs spec", path);
		goto out;
	}
	snprintf(cfg->netfs, sizeof cfg->netfs, "%s", nj ? json_string_value(nj) : "");
	json_array_foreach(json_object_get(root, "params"), i, v) {
		const char *kv = json_string_value(v);
		if (!kv || !strchr(kv, '=') || kv[0] == '=' || cfg->nkv == CFG_MAX_KV) {
			runcfg_fail(why, len, "%s: 'params' wants at most %d K=V strings", path, CFG_MAX_KV);
			goto out;
		}
		if (!(cfg->kv[cfg->nkv] = kv_copy(kv))) {
			runcfg_fail(why, len, "out of memory");
			goto out;
		}
		cfg->nkv++;
	}
	json_array_foreach(json_object_get(root, "faults"), i, v) {
		if (!json_is_string(v)) {
			runcfg_fail(why, len, "%s: 'faults' wants fault specs (strings)", path);
			goto out;
		}
		if (fault_parse(&cfg->faults, json_string_value(v), why, len))
			goto out;
	}
	cfg->faults.windows = json_is_true(json_object_get(root, "windows"));
	const char *prof = json_string_value(json_object_get(root, "fault_profile"));
	if (prof && strlen(prof) >= sizeof cfg->faults.profile) {
		runcfg_fail(why, len, "%s: 'fault_profile' is too long", path);
		goto out;
	}
	snprintf(cfg->faults.profile, sizeof cfg->faults.profile, "%s", prof ? prof : "");
	rc = runcfg_resolve(cfg, why, len);
out:
	if (rc != 0)
		runcfg_unload(cfg);
	json_decref(root);
	return rc;
}
