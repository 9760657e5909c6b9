/*
 * scenario_new.c - `lockstorm scenario new NAME --from-run OUTDIR` (see scenario_new.h).
 */
#include "scenario_new.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../faults/fault.h"
#include "../workloads/workload.h"
#include "../check/checker.h"
#include "../workloads/config.h"
#include "../run/runcfg.h"
#include "scenario_file.h"
#include "scenario_run.h"

static void put_opt(FILE *f, const char *opt, const char *value)
{
	if (value)
		fprintf(f, "%s %s\n", opt, value);
	else
		fprintf(f, "%s\n", opt);
}

static void one_line(char *s)
{
	for (; *s; s++)
		if (*s == '\n' || *s == '\r' || *s == '\t')
			*s = ' ';
}

int sc_new(int argc, char **argv)
{
	const char *name = NULL, *from = NULL, *outfile = NULL;
	static const struct option longopts[] = {
		{ "from-run", required_argument, NULL, 'f' },
		{ "out", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			from = optarg;
			break;
		case 'o':
			outfile = optarg;
			break;
		case 'h':
			printf("usage: lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n"
			       "  OUTDIR             a kept run (lockstorm run -o OUTDIR): its run.json and report.json\n"
			       "  -o, --out FILE     write the scenario there (refuses an existing file); default stdout\n"
			       "  -h, --help         this help (options take --opt=VALUE and --opt VALUE alike)\n");
			return 0;
		default:
			return sc_bad_option("new", c, argv);
		}
	}
	for (int i = optind; i < argc; i++) {
		if (name) {
			fprintf(stderr, "lockstorm: scenario new: one NAME only (got '%s' too)\n", argv[i]);
			return 2;
		}
		name = argv[i];
	}
	if (!name || !from) {
		fprintf(stderr, "lockstorm: scenario new: usage: lockstorm scenario new NAME --from-run OUTDIR [-o FILE]\n");
		return 2;
	}
	if (!sc_name_ok(name, 0)) {
		fprintf(stderr, "lockstorm: scenario new: name '%s': letters, digits, '.', '_', '-', '+' only\n", name);
		return 2;
	}
	if (outfile && access(outfile, F_OK) == 0) {
		fprintf(stderr, "lockstorm: scenario new: %s exists: refusing to overwrite it\n", outfile);
		return 2;
	}

	char p[PATH_MAX + 32], why[1024];
	struct run_config *cfg = malloc(sizeof *cfg);
	if (!cfg)
		return 3;
	snprintf(p, sizeof p, "%s/run.json", from);
	if (!sc_is_file(p)) {
		fprintf(stderr, "lockstorm: %s has no run.json: not a kept run (use run -o OUTDIR)\n", from);
		free(cfg);
		return 2;
	}
	if (runcfg_load(cfg, p, why, sizeof why)) {
		fprintf(stderr, "lockstorm: %s\n", why);
		free(cfg);
		return 2;
	}
	struct sc_observed obs;
	memset(&obs, 0, sizeof obs);
	snprintf(p, sizeof p, "%s/report.json", from);
	if (sc_read_report(p, &obs)) {
		fprintf(stderr, "lockstorm: %s has no readable report.json (%s)\n", from, obs.err);
		runcfg_unload(cfg);
		free(cfg);
		return 2;
	}

	/* The revision's protocols, and its label: the same words, with an adapter's
	 * "ext:NAME" as "ext-NAME" (a label is letters, digits and . _ - + ,). */
	char protos[SC_NAME_MAX * 4] = "", label[SC_NAME_MAX * 4];
	size_t ln = 0;
	for (unsigned i = 0; i < cfg->nproto; i++)
		ln += (size_t)snprintf(protos + ln, ln < sizeof protos ? sizeof protos - ln : 0, "%s%s", i ? "," : "",
				       cfg->proto[i]->name);
	snprintf(label, sizeof label, "%s", protos);
	for (char *c = label; *c; c++)
		if (*c == ':')
			*c = '-';
	if (!sc_name_ok(label, 1)) {
		fprintf(stderr, "lockstorm: scenario new: the protocol list '%s' is too long for a revision label\n",
			protos);
		runcfg_unload(cfg);
		free(cfg);
		return 2;
	}

	char *text = NULL;
	size_t tlen = 0;
	FILE *f = open_memstream(&text, &tlen);
	if (!f) {
		runcfg_unload(cfg);
		free(cfg);
		return 3;
	}
	char got[300], invs[256];
	sc_got_text(&obs, got, sizeof got);
	sc_inv_list(obs.viol, invs, sizeof invs);
	fprintf(f, "# Made by `lockstorm scenario new %s --from-run %s`.\n", name, from);
	fprintf(f, "# Say in the story what happened in production, add the fixed revision beside this one\n"
		   "# (revision LABEL PROTO, expect LABEL pass), then `lockstorm scenario run` it.\n");
	fprintf(f, "name %s\n", name);
	fprintf(f, "story Reproduces the kept run %s, verdict %s.\n", from, got);
	for (int k = 0; k < INV__COUNT; k++)
		if (obs.viol & (1u << k)) {
			one_line(obs.example[k]);
			fprintf(f, "story %s: %s\n", check_inv_name((enum inv_id)k), obs.example[k]);
		}
	if (strcmp(label, protos))
		fprintf(f, "\nrevision %s %s\n", label, protos);
	else
		fprintf(f, "\nrevision %s\n", label);
	if (obs.pass)
		fprintf(f, "expect %s pass\n", label);
	else {
		/* "a, b" -> "a,b" */
		char compact[256];
		size_t c = 0;
		for (const char *s = invs; *s && c + 1 < sizeof compact; s++)
			if (*s != ' ')
				compact[c++] = *s;
		compact[c] = '\0';
		fprintf(f, "expect %s fail %s\n", label, compact);
	}
	fprintf(f, "\n");
	char v[64];
	put_opt(f, "-w", cfg->workload->name);
	snprintf(v, sizeof v, "%u", cfg->workers);
	put_opt(f, "-n", v);
	if (cfg->ops) {
		snprintf(v, sizeof v, "%llu", (unsigned long long)cfg->ops);
		put_opt(f, "--ops", v);
	} else {
		snprintf(v, sizeof v, "%lldms", (long long)cfg->duration_ms);
		put_opt(f, "-d", v);
	}
	if (cfg->time_scale != 1.0) {
		/* the shortest form that reads back as the same number */
		for (int prec = 6; prec <= 17; prec++) {
			snprintf(v, sizeof v, "%.*g", prec, cfg->time_scale);
			if (strtod(v, NULL) == cfg->time_scale)
				break;
		}
		put_opt(f, "--time-scale", v);
	}
	snprintf(v, sizeof v, "%llu", (unsigned long long)cfg->seed);
	put_opt(f, "-s", v);
	for (unsigned i = 0; i < cfg->nkv; i++)
		put_opt(f, "--param", cfg->kv[i]);
	/* a profile's rules come back as --faults NAME; the others one by one */
	unsigned char from_profile[FAULT_MAX_RULES] = { 0 };
	if (cfg->faults.profile[0]) {
		static struct fault_plan prof;
		memset(&prof, 0, sizeof prof);
		if (fault_profile(&prof, cfg->faults.profile, why, sizeof why) == 0) {
			put_opt(f, "--faults", cfg->faults.profile);
			for (unsigned k = 0; k < prof.n; k++)
				for (unsigned i = 0; i < cfg->faults.n; i++)
					if (!from_profile[i] && !strcmp(cfg->faults.rule[i].spec, prof.rule[k].spec)) {
						from_profile[i] = 1;
						break;
					}
		}
	}
	for (unsigned i = 0; i < cfg->faults.n; i++)
		if (!from_profile[i])
			put_opt(f, "--fault", cfg->faults.rule[i].spec);
	if (cfg->respawn)
		put_opt(f, "--respawn", NULL);
	fclose(f);
	runcfg_unload(cfg);
	free(cfg);

	/* check what we made with the same parser `run` uses */
	char tmp[PATH_MAX];
	const char *base = getenv("TMPDIR");
	snprintf(tmp, sizeof tmp, "%s/lockstorm-new.XXXXXX", base && *base ? base : "/tmp");
	int fd = mkstemp(tmp);
	if (fd < 0 || write(fd, text, tlen) != (ssize_t)tlen) {
		fprintf(stderr, "lockstorm: scenario new: %s: %s\n", tmp, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(tmp);
		free(text);
		return 3;
	}
	close(fd);
	struct scenario *sc = scenario_load(tmp, why, sizeof why);
	unlink(tmp);
	if (!sc) {
		fprintf(stderr, "lockstorm: scenario new: the scenario made from %s does not parse: %s\n", from, why);
		free(text);
		return 3;
	}
	scenario_free(sc);
	int rc = 0;
	if (outfile) {
		FILE *o = fopen(outfile, "wx");
		if (!o || fwrite(text, 1, tlen, o) != tlen) {
			fprintf(stderr, "lockstorm: scenario new: %s: %s\n", outfile, strerror(errno));
			rc = 2;
		}
		if (o && fclose(o) && !rc) {
			fprintf(stderr, "lockstorm: scenario new: %s: %s\n", outfile, strerror(errno));
			rc = 2;
		}
		if (!rc)
			fprintf(stderr, "lockstorm: wrote %s (run it: lockstorm scenario run %s)\n", outfile, outfile);
	} else {
		fwrite(text, 1, tlen, stdout);
	}
	free(text);
	return rc;
}
