"""treecheck.py - what tests/layers.py, tests/points.py and tests/odr.py share:
their command line, and proving a source-tree check on fixture trees (each
tree made in a temporary folder must give exactly the findings named, the
clean one none)."""
import os
import tempfile


def main(argv, check, fixture, failed, clean):
    """A check's command line: `--fixture` runs FIXTURE; else CHECK of ROOT (argv[1], default this
    checkout) prints each finding, then FAILED % count (exit 1) or CLEAN(root) (exit 0)."""
    if len(argv) > 1 and argv[1] == "--fixture":
        return fixture()
    root = argv[1] if len(argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    findings = check(root)
    for f in findings:
        print(f)
    if findings:
        print(failed % len(findings))
        return 1
    print(clean(root))
    return 0


def run_fixtures(check, trees, prefix):
    """trees: name -> ({path: text}, [finding, ...]).  0 if every tree gave its findings, else 1."""
    bad = 0
    for name, (files, want) in trees.items():
        with tempfile.TemporaryDirectory(prefix=prefix) as root:
            for path, text in files.items():
                os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
                with open(os.path.join(root, path), "w") as fh:
                    fh.write(text)
            got = sorted(check(root))
        if got != sorted(want):
            bad += 1
            print("fixture '%s': want %s, got %s" % (name, sorted(want), got))
        else:
            print("fixture '%s': %d finding(s) as expected" % (name, len(want)))
    return 1 if bad else 0
