/*
 * junit.c - JUnit XML writers (see junit.h).
 */
#include "junit.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../workloads/workload.h"

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	int n = (s[0] & 0xe0) == 0xc0 ? 2 : (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	if (!n || (n == 2 && s[0] < 0xc2) || (n == 4 && s[0] > 0xf4))
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if (n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0)))
		return 0; /* overlong, surrogate */
	if (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90)))
		return 0;
	return n;
}

void junit_escape(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	while (*s) {
		switch (*s) {
		case '&': fputs("&amp;", f); s++; continue;
		case '<': fputs("&lt;", f); s++; continue;
		case '>': fputs("&gt;", f); s++; continue;
		case '"': fputs("&quot;", f); s++; continue;
		case '\'': fputs("&apos;", f); s++; continue;
		case '\n': fputs("&#10;", f); s++; continue;
		case '\t': fputs("&#9;", f); s++; continue;
		case '\r': fputs("&#13;", f); s++; continue;
		default: break;
		}
		if (*s < 0x20 || *s == 0x7f) { /* not allowed in XML 1.0 (0x7f allowed but useless) */
			fputc('?', f);
			s++;
			continue;
		}
		int n = utf8_len(s);
		if (!n) {
			fputc('?', f);
			s++;
			continue;
		}
		/* U+FFFE / U+FFFF are not XML characters */
		if (n == 3 && s[0] == 0xef && s[1] == 0xbf && (s[2] == 0xbe || s[2] == 0xbf)) {
			fputc('?', f);
			s += 3;
			continue;
		}
		fwrite(s, 1, (size_t)n, f);
		s += n;
	}
}

static void attr(FILE *f, const char *name, const char *value)
{
	fprintf(f, " %s=\"", name);
	junit_escape(f, value);
	fputc('"', f);
}

static void property(FILE *f, const char *name, const char *value)
{
	fputs("      <property", f);
	attr(f, "name", name);
	attr(f, "value", value);
	fputs("/>\n", f);
}

static void timestamp(char *buf, size_t len)
{
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
}

static int finish(FILE *f)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

/* One invariant as a testcase. */
static void testcase(FILE *f, const char *classname, const char *name, int applicable, uint64_t violations,
		     const char *const *examples, unsigned nex, const char *failed_in)
{
	fputs("    <testcase", f);
	attr(f, "classname", classname);
	attr(f, "name", name);
	fputs(" time=\"0\"", f);
	if (!applicable) {
		fputs(">\n      <skipped message=\"n/a: the workload does not exercise this invariant\"/>\n"
		      "    </testcase>\n", f);
		return;
	}
	if (!violations) {
		fputs("/>\n", f);
		return;
	}
	char msg[512];
	snprintf(msg, sizeof msg, "%llu violation%s%s%s%s", (unsigned long long)violations, violations == 1 ? "" : "s",
		 failed_in ? failed_in : "", nex ? ": " : "", nex ? examples[0] : "");
	fputs(">\n      <failure", f);
	attr(f, "type", name);
	attr(f, "message", msg);
	fputc('>', f);
	for (unsigned k = 0; k < nex; k++) {
		junit_escape(f, examples[k]);
		fputc('\n', f);
	}
	fputs("</failure>\n    </testcase>\n", f);
}

/* The root carries no skipped count: Jenkins xUnit's junit-10.xsd
 * (tests/junit-10.xsd) allows name, time, tests, failures and errors only;
 * each <testsuite> has its own skipped. */
static void open_suites(FILE *f, unsigned tests, unsigned failures, unsigned errors, double time)
{
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
	fprintf(f, "<testsuites name=\"lockstorm\" tests=\"%u\" failures=\"%u\" errors=\"%u\" time=\"%.3f\">\n",
		tests, failures, errors, time);
}

static void open_suite(FILE *f, const char *name, unsigned tests, unsigned failures, unsigned errors,
		       unsigned skipped, double time)
{
	char ts[32], host[256] = "localhost";
	timestamp(ts, sizeof ts);
	gethostname(host, sizeof host - 1);
	host[sizeof host - 1] = '\0';
	fputs("  <testsuite", f);
	attr(f, "name", name);
	fprintf(f, " tests=\"%u\" failures=\"%u\" errors=\"%u\" skipped=\"%u\" time=\"%.3f\"", tests, failures, errors,
		skipped, time);
	attr(f, "timestamp", ts);
	attr(f, "hostname", host);
	fputs(">\n", f);
}

int junit_write_result(const char *path, const struct run_config *cfg, const struct check_result *res,
		       const struct verdict *v)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	char protos[256] = "", classname[320], suite[400], buf[64];
	size_t n = 0;
	for (unsigned i = 0; i < cfg->nproto; i++)
		n += (size_t)snprintf(protos + n, n < sizeof protos ? sizeof protos - n : 0, "%s%s", i ? "," : "",
				      cfg->proto[i]->name);
	snprintf(classname, sizeof classname, "lockstorm.%s.%s", protos, cfg->workload->name);
	snprintf(suite, sizeof suite, "lockstorm run %s/%s", protos, cfg->workload->name);
	unsigned tests = INV__COUNT, failures = 0, skipped = 0;
	for (int i = 0; i < INV__COUNT; i++) {
		if (!res->inv[i].applicable)
			skipped++;
		else if (res->inv[i].violations)
			failures++;
	}
	unsigned errors = v->incomplete ? 1 : 0; /* the run did not finish: an <error> testcase */
	open_suites(f, tests + errors, failures, errors, res->elapsed_s);
	open_suite(f, suite, tests + errors, failures, errors, skipped, res->elapsed_s);
	fputs("    <properties>\n", f);
	property(f, "protocols", protos);
	property(f, "workload", cfg->workload->name);
	snprintf(buf, sizeof buf, "%u", cfg->workers);
	property(f, "workers", buf);
	if (cfg->duration_ms)
		snprintf(buf, sizeof buf, "%lldms", (long long)cfg->duration_ms);
	else
		snprintf(buf, sizeof buf, "%llu ops", (unsigned long long)cfg->ops);
	property(f, "length", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)cfg->seed);
	property(f, "seed", buf);
	snprintf(buf, sizeof buf, "%g", cfg->time_scale);
	property(f, "time_scale", buf);
	if (cfg->faults.profile[0])
		property(f, "fault_profile", cfg->faults.profile);
	for (unsigned i = 0; i < cfg->faults.n; i++)
		property(f, "fault", cfg->faults.rule[i].spec);
	for (unsigned i = 0; i < cfg->nkv; i++)
		property(f, "param", cfg->kv[i]);
	snprintf(buf, sizeof buf, "%.1f", res->ops_per_s);
	property(f, "ops_per_s", buf);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)res->reclaims);
	property(f, "reclaims", buf);
	property(f, "verdict", verdict_json(v));
	fputs("    </properties>\n", f);
	for (int i = 0; i < INV__COUNT; i++) {
		const struct check_inv *inv = &res->inv[i];
		const char *ex[CHECK_MAX_EXAMPLES];
		for (unsigned k = 0; k < inv->nex; k++)
			ex[k] = inv->ex[k].text;
		testcase(f, classname, inv->name, inv->applicable, inv->violations, ex, inv->nex, NULL);
	}
	if (errors) {
		fputs("    <testcase", f);
		attr(f, "classname", classname);
		fputs(" name=\"complete\" time=\"0\">\n      <error type=\"incomplete\"", f);
		attr(f, "message", v->why);
		fputs("/>\n    </testcase>\n", f);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish(f);
}

int junit_write_reports(const char *path, size_t n, const char *const *names, json_t *const *report,
			const unsigned *runs, const unsigned *failed, const unsigned *harness_errors)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	unsigned tests = 0, failures = 0, errors = 0, skipped = 0;
	double time = 0;
	for (size_t r = 0; r < n; r++) {
		size_t i;
		json_t *inv;
		json_array_foreach(json_object_get(report[r], "invariants"), i, inv) {
			tests++;
			if (!json_is_true(json_object_get(inv, "applicable")))
				skipped++;
			else if (json_integer_value(json_object_get(inv, "violations")))
				failures++;
		}
		if (harness_errors[r]) {
			tests++;
			errors++;
		}
		time += json_number_value(json_object_get(json_object_get(report[r], "throughput"), "elapsed_s"));
	}
	open_suites(f, tests, failures, errors, time);
	for (size_t r = 0; r < n; r++) {
		json_t *invs = json_object_get(report[r], "invariants");
		unsigned t = 0, fl = 0, sk = 0;
		size_t i;
		json_t *inv;
		json_array_foreach(invs, i, inv) {
			t++;
			if (!json_is_true(json_object_get(inv, "applicable")))
				sk++;
			else if (json_integer_value(json_object_get(inv, "violations")))
				fl++;
		}
		const char *wl = json_string_value(json_object_get(json_object_get(report[r], "config"), "workload"));
		char classname[320], suite[400], buf[64];
		snprintf(classname, sizeof classname, "lockstorm.compare.%s", names[r]);
		snprintf(suite, sizeof suite, "lockstorm compare %s/%s", names[r], wl ? wl : "?");
		double el = json_number_value(json_object_get(json_object_get(report[r], "throughput"), "elapsed_s"));
		open_suite(f, suite, t + (harness_errors[r] ? 1 : 0), fl, harness_errors[r] ? 1 : 0, sk, el);
		fputs("    <properties>\n", f);
		property(f, "protocol", names[r]);
		snprintf(buf, sizeof buf, "%u", runs[r]);
		property(f, "runs", buf);
		snprintf(buf, sizeof buf, "%u", failed[r]);
		property(f, "failed_runs", buf);
		fputs("    </properties>\n", f);
		char failed_in[64];
		snprintf(failed_in, sizeof failed_in, " (in %u of %u runs)", failed[r], runs[r]);
		json_array_foreach(invs, i, inv) {
			const char *ex[CHECK_MAX_EXAMPLES * 4];
			unsigned nex = 0;
			size_t k;
			json_t *e;
			json_array_foreach(json_object_get(inv, "examples"), k, e) {
				const char *text = json_string_value(json_object_get(e, "text"));
				if (text && nex < sizeof ex / sizeof ex[0])
					ex[nex++] = text;
			}
			const char *name = json_string_value(json_object_get(inv, "name"));
			testcase(f, classname, name ? name : "?", json_is_true(json_object_get(inv, "applicable")),
				 (uint64_t)json_integer_value(json_object_get(inv, "violations")), ex, nex,
				 runs[r] > 1 ? failed_in : NULL);
		}
		if (harness_errors[r]) {
			fputs("    <testcase", f);
			attr(f, "classname", classname);
			fputs(" name=\"harness\" time=\"0\">\n      <error", f);
			snprintf(buf, sizeof buf, "%u run%s could not be judged (exit 2/3)", harness_errors[r],
				 harness_errors[r] == 1 ? "" : "s");
			attr(f, "message", buf);
			fputs("/>\n    </testcase>\n", f);
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	return finish(f);
}

/* ---- a document built case by case (scenario run, explore) ---- */

struct junit_suite {
	char *name;
	char *props, *cases; /* the <property> and <testcase> elements, as written */
	size_t props_len, cases_len;
	FILE *pf, *cf;       /* open_memstream()s onto props and cases */
	unsigned tests, failures, errors, skipped;
	double time;
};

struct junit_doc {
	struct junit_suite *s;
	size_t n;
	int oom;
};

struct junit_doc *junit_doc_open(void)
{
	return calloc(1, sizeof(struct junit_doc));
}

static struct junit_suite *doc_cur(struct junit_doc *d)
{
	if (!d->n)
		junit_doc_suite(d, "lockstorm");
	return d->n ? &d->s[d->n - 1] : NULL;
}

void junit_doc_suite(struct junit_doc *d, const char *name)
{
	struct junit_suite *g = realloc(d->s, (d->n + 1) * sizeof *g);
	if (!g) {
		d->oom = 1;
		return;
	}
	d->s = g;
	struct junit_suite *s = &d->s[d->n];
	memset(s, 0, sizeof *s);
	s->name = strdup(name);
	s->pf = open_memstream(&s->props, &s->props_len);
	s->cf = open_memstream(&s->cases, &s->cases_len);
	if (!s->name || !s->pf || !s->cf) {
		d->oom = 1;
		if (s->pf)
			fclose(s->pf);
		if (s->cf)
			fclose(s->cf);
		free(s->props);
		free(s->cases);
		free(s->name);
		return;
	}
	d->n++;
}

void junit_doc_property(struct junit_doc *d, const char *name, const char *value)
{
	struct junit_suite *s = doc_cur(d);
	if (!s)
		return;
	fputs("      <property", s->pf);
	attr(s->pf, "name", name);
	attr(s->pf, "value", value ? value : "");
	fputs("/>\n", s->pf);
}

void junit_doc_case(struct junit_doc *d, const char *classname, const char *name, double seconds,
		    enum junit_outcome outcome, const char *message, const char *text)
{
	static const char *const tag[] = { "", "failure", "error", "skipped" };
	struct junit_suite *s = doc_cur(d);
	if (!s)
		return;
	s->tests++;
	s->failures += outcome == JUNIT_FAILURE;
	s->errors += outcome == JUNIT_ERROR;
	s->skipped += outcome == JUNIT_SKIPPED;
	s->time += seconds;
	fputs("    <testcase", s->cf);
	attr(s->cf, "classname", classname);
	attr(s->cf, "name", name);
	fprintf(s->cf, " time=\"%.3f\"", seconds);
	if (outcome == JUNIT_PASS) {
		fputs("/>\n", s->cf);
		return;
	}
	fprintf(s->cf, ">\n      <%s", tag[outcome]);
	if (outcome == JUNIT_FAILURE)
		attr(s->cf, "type", name);
	attr(s->cf, "message", message ? message : tag[outcome]);
	if (text && *text) {
		fputs(">", s->cf);
		junit_escape(s->cf, text);
		fprintf(s->cf, "</%s>\n", tag[outcome]);
	} else {
		fputs("/>\n", s->cf);
	}
	fputs("    </testcase>\n", s->cf);
}

int junit_doc_write(struct junit_doc *d, const char *path)
{
	if (d->oom) {
		errno = ENOMEM;
		return -1;
	}
	unsigned tests = 0, failures = 0, errors = 0;
	double time = 0;
	for (size_t i = 0; i < d->n; i++) {
		fflush(d->s[i].pf);
		fflush(d->s[i].cf);
		tests += d->s[i].tests;
		failures += d->s[i].failures;
		errors += d->s[i].errors;
		time += d->s[i].time;
	}
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	open_suites(f, tests, failures, errors, time);
	for (size_t i = 0; i < d->n; i++) {
		struct junit_suite *s = &d->s[i];
		open_suite(f, s->name, s->tests, s->failures, s->errors, s->skipped, s->time);
		if (s->props_len)
			fprintf(f, "    <properties>\n%s    </properties>\n", s->props);
		if (s->cases_len)
			fputs(s->cases, f);
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		if (!errno)
			errno = EIO;
		return -1;
	}
	return 0;
}

void junit_doc_free(struct junit_doc *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		fclose(d->s[i].pf);
		fclose(d->s[i].cf);
		free(d->s[i].props);
		free(d->s[i].cases);
		free(d->s[i].name);
	}
	free(d->s);
	free(d);
}
