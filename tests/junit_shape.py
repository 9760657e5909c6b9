#!/usr/bin/python3
"""junit_shape.py FILE - check that FILE is JUnit XML in the common shape
(testsuites > testsuite > testcase, with failure/skipped/error children) and
that every count attribute matches the testcases; print a JSON summary.

exit 0 and the summary on stdout, or 1 and the first problem on stderr.
"""
import json
import sys
import xml.etree.ElementTree as ET


def fail(msg):
    print("junit_shape: %s" % msg, file=sys.stderr)
    sys.exit(1)


def main(path):
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as e:
        fail("%s: %s" % (path, e))
    if root.tag != "testsuites":
        fail("root is <%s>, not <testsuites>" % root.tag)
    out = {"name": root.get("name"), "suites": []}
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root:
        if suite.tag != "testsuite":
            fail("<testsuites> holds <%s>" % suite.tag)
        for a in ("name", "tests", "failures", "errors", "skipped", "time", "timestamp"):
            if suite.get(a) is None:
                fail("testsuite without %s" % a)
        float(suite.get("time"))
        cases, counts = [], {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        props = {}
        for el in suite:
            if el.tag == "properties":
                for p in el:
                    if p.tag != "property" or p.get("name") is None or p.get("value") is None:
                        fail("bad property")
                    props.setdefault(p.get("name"), p.get("value"))
                continue
            if el.tag != "testcase":
                fail("<testsuite> holds <%s>" % el.tag)
            if not el.get("name") or not el.get("classname"):
                fail("testcase without name or classname")
            status, message, text = "passed", None, None
            kids = list(el)
            if len(kids) > 1:
                fail("testcase %s has %d children" % (el.get("name"), len(kids)))
            for k in kids:
                if k.tag == "failure":
                    status, counts["failures"] = "failed", counts["failures"] + 1
                elif k.tag == "skipped":
                    status, counts["skipped"] = "skipped", counts["skipped"] + 1
                elif k.tag == "error":
                    status, counts["errors"] = "error", counts["errors"] + 1
                else:
                    fail("testcase holds <%s>" % k.tag)
                message, text = k.get("message"), k.text
                if status in ("failed", "error") and not message:
                    fail("%s without a message" % k.tag)
            counts["tests"] += 1
            cases.append({"classname": el.get("classname"), "name": el.get("name"), "status": status,
                          "message": message, "text": text})
        for a, v in counts.items():
            if int(suite.get(a)) != v:
                fail("testsuite %s says %s=%s, has %d" % (suite.get("name"), a, suite.get(a), v))
            totals[a] += v
        out["suites"].append({"name": suite.get("name"), "properties": props, "cases": cases, **counts})
    for a, v in totals.items():
        if root.get(a) is not None and int(root.get(a)) != v:
            fail("testsuites says %s=%s, has %d" % (a, root.get(a), v))
    out.update(totals)
    json.dump(out, sys.stdout, indent=1)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        fail("usage: junit_shape.py FILE")
    sys.exit(main(sys.argv[1]))
