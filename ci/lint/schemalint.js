#!/usr/bin/env node
// ci/lint/schemalint.js --gitlab FILE.. | --k8s FILE.. | --self-test
// Schema-aware checks of lockstorm's CI examples, offline (nothing is fetched):
//   --gitlab  a GitLab CI file against GitLab's CI JSON schema, vendored in schemas/gitlab-ci.json
//             (vendor-gitlab-schema.js says where it comes from), with Ajv (draft-07)
//   --k8s     every document of a Kubernetes manifest against the Kubernetes API's schemas, as
//             compiled into the npm package kubernetes-models (pinned by package-lock.json): type,
//             required fields, enums of each apiVersion/kind
//   --self-test  broken examples of both kinds, each of which must be refused (the checks' teeth)
// One line per finding, FILE: [DOC] PATH: message; exit 0 clean, 1 findings, 2 bad usage.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const YAML = require("yaml");
const Ajv = require("ajv");
const addFormats = require("ajv-formats");

const SCHEMA = path.join(__dirname, "schemas", "gitlab-ci.json");
let gitlabValidate = null;

function gitlab(text) {
	if (!gitlabValidate) {
		const ajv = new Ajv({ strict: false, allErrors: false });
		addFormats(ajv);
		gitlabValidate = ajv.compile(JSON.parse(fs.readFileSync(SCHEMA, "utf8")));
	}
	const doc = YAML.parse(text, { customTags: [{ tag: "!reference", collection: "seq", resolve: (v) => v }] });
	if (gitlabValidate(doc))
		return [];
	return gitlabValidate.errors.map((e) => `${e.instancePath || "/"}: ${e.message}${e.params && e.params.additionalProperty ? " (" + e.params.additionalProperty + ")" : ""}`);
}

async function k8s(text) {
	const out = [];
	const docs = YAML.parseAllDocuments(text);
	for (let n = 0; n < docs.length; n++) {
		if (docs[n].errors.length) {
			out.push(`doc ${n + 1}: YAML: ${docs[n].errors[0].message}`);
			continue;
		}
		const obj = docs[n].toJS();
		if (obj === null)
			continue;
		const where = `doc ${n + 1} (${obj.kind || "?"} ${(obj.metadata && obj.metadata.name) || "?"})`;
		if (typeof obj.apiVersion !== "string" || typeof obj.kind !== "string" || !/^[A-Za-z]+$/.test(obj.kind)) {
			out.push(`${where}: wants apiVersion and kind`);
			continue;
		}
		// core/v1 lives in v1/, batch/v1 in batch/v1/, apps/v1 in apps/v1/ ...
		const file = path.join(__dirname, "node_modules", "kubernetes-models", ...obj.apiVersion.split("/"), obj.kind + ".js");
		if (!fs.existsSync(file)) {
			out.push(`${where}: unknown apiVersion/kind ${obj.apiVersion} ${obj.kind}`);
			continue;
		}
		const mod = await import(file);
		try {
			new mod[obj.kind](obj).validate();
		} catch (e) {
			out.push(`${where}: ${e.message}`);
		}
	}
	return out;
}

const BROKEN = {
	gitlab: [
		"stages: 3\nbuild:\n  script: ls\n",                              // stages must be a list
		"build:\n  stage: build\n  script: {a: 1}\n",                      // script: string or list
		"build:\n  script: ls\n  when: sometimes\n",                       // not a `when`
		"build:\n  script: ls\n  parallel:\n    matrix: 4\n",              // matrix: a list of maps
		"build:\n  script: ls\n  artifacts:\n    expire_in: 2 days\n    pathz: [a]\n", // unknown key
	],
	k8s: [
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completions: four\n  template:\n    spec:\n      containers: [{name: a, image: i}]\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  template:\n    spec:\n      containers: [{image: i}]\n",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: x}\nspec:\n  accessModes: ReadWriteMany\n",
		"apiVersion: batch/v9\nkind: Job\nmetadata: {name: x}\n",
	],
};
const GOOD = {
	gitlab: "stages: [build]\nbuild:\n  stage: build\n  script: [ls]\n  parallel:\n    matrix:\n      - S: ['1', '2']\n",
	k8s: "apiVersion: batch/v1\nkind: Job\nmetadata: {name: x}\nspec:\n  completionMode: Indexed\n  completions: 2\n  template:\n    spec:\n      restartPolicy: Never\n      containers: [{name: a, image: i}]\n",
};

async function check(kind, text) {
	try {
		return kind === "gitlab" ? gitlab(text) : await k8s(text);
	} catch (e) {
		return [`cannot read it: ${e.message}`];
	}
}

async function main(argv) {
	if (argv[0] === "--self-test") {
		let bad = 0;
		for (const kind of ["gitlab", "k8s"]) {
			if ((await check(kind, GOOD[kind])).length) {
				process.stdout.write(`self-test: a valid ${kind} example was refused: ${(await check(kind, GOOD[kind]))[0]}\n`);
				bad++;
			}
			for (const t of BROKEN[kind]) {
				const found = await check(kind, t);
				if (!found.length) {
					process.stdout.write(`self-test: a broken ${kind} example passed:\n${t}`);
					bad++;
				}
			}
		}
		process.stdout.write(bad ? `self-test: ${bad} failed\n` : `self-test: ${BROKEN.gitlab.length + BROKEN.k8s.length} broken examples refused, 2 valid ones passed\n`);
		return bad ? 1 : 0;
	}
	const kind = { "--gitlab": "gitlab", "--k8s": "k8s" }[argv[0]];
	if (!kind || argv.length < 2) {
		process.stderr.write("usage: ci/lint/schemalint.js --gitlab FILE.. | --k8s FILE.. | --self-test\n");
		return 2;
	}
	let found = 0;
	for (const f of argv.slice(1)) {
		let text;
		try {
			text = fs.readFileSync(f, "utf8");
		} catch (e) {
			process.stderr.write(`schemalint: ${f}: ${e.message}\n`);
			return 2;
		}
		for (const m of await check(kind, text)) {
			process.stdout.write(`${f}: ${m}\n`);
			found++;
		}
	}
	return found ? 1 : 0;
}

main(process.argv.slice(2)).then((rc) => process.exit(rc));
