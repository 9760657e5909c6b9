/*
 * byhost.h - the report's breakdown by host for a run with --hosts
 * (docs/hosts.md): the text rows (report_print_text) and the JSON object
 * `hosts` of report.json, both read from cfg->outdir's journals.
 */
#ifndef LS_BYHOST_H
#define LS_BYHOST_H

#include <jansson.h>
#include <stdio.h>

#include "../workloads/config.h"

#ifdef __cplusplus
extern "C" {
#endif

void byhost_print(FILE *f, const struct run_config *cfg);
/* {count, hosts: [{host, hostname, workers: [{worker, pids}], attempts, ..}], pid_collisions, netfs}; NULL: no memory */
json_t *byhost_json(const struct run_config *cfg);
/* Host h's hostname, as run/hosts.c sets it: "lockstorm-h<h>". */
void byhost_hostname(unsigned h, char *buf, size_t len);

#ifdef __cplusplus
}
#endif
#endif
