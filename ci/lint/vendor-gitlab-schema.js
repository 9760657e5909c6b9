#!/usr/bin/env node
// ci/lint/vendor-gitlab-schema.js INDEX_JS > schemas/gitlab-ci.json - how schemas/gitlab-ci.json was
// made: GitLab's own CI schema (app/assets/javascripts/editor/schema/ci.json, MIT, the one GitLab's
// editor and `gitlab-ci-local` validate with), taken from the npm package gitlab-ci-local (MIT) that
// bundles it as an object literal: `npm pack gitlab-ci-local@4.75.1`, unpack, then run this on
// package/dist/index.js.  Run once by hand to update the vendored copy; ctest never runs it (no
// network at test time).
"use strict";
const fs = require("node:fs");
const s = fs.readFileSync(process.argv[2], "utf8");
const start = s.indexOf('{$schema:"http://json-schema.org/draft-07/schema#",$id:"https://gitlab.com/.gitlab-ci.yml"');
if (start < 0) {
	process.stderr.write("vendor-gitlab-schema: no GitLab CI schema in " + process.argv[2] + "\n");
	process.exit(1);
}
let depth = 0, quote = null, i = start;
for (; i < s.length; i++) {
	const c = s[i];
	if (quote) {
		if (c === "\\") i++;
		else if (c === quote) quote = null;
		continue;
	}
	if (c === '"' || c === "'" || c === "`") quote = c;
	else if (c === "{" || c === "[") depth++;
	else if ((c === "}" || c === "]") && --depth === 0) break;
}
const schema = new Function("return " + s.slice(start, i + 1))();
process.stdout.write(JSON.stringify(schema, null, 1) + "\n");
