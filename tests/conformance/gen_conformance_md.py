#!/usr/bin/python3
"""Turn onyx_conformance's results TSV into docs/CONFORMANCE.md.

Each input line is: suite <TAB> test <TAB> pass|fail|skip <TAB> reason.
An optional second TSV in the same format (--ort) holds ONNX Runtime's
results over the same suite, for a side-by-side comparison.
"""

import argparse
import os
import sys

SUITE_ORDER = ["node", "pytorch-converted", "pytorch-operator", "simple"]
STATUSES = ("pass", "fail", "skip")

REGEN = """\
```sh
bash scripts/conformance-report.sh
```

It runs `build/tests/conformance/onyx_conformance` (results TSV), then
`node tools/ort/ort_conformance.js` (ONNX Runtime's results in the same
format), then this generator on both."""


def read_results(path):
    """Returns {(suite, test): (status, reason)}, keeping the file's order."""
    results = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) < 3 or fields[2] not in STATUSES:
                sys.exit(f"{path}:{lineno}: expected 'suite<TAB>test<TAB>pass|fail|skip<TAB>reason'")
            reason = "\t".join(fields[3:]).strip()
            results[(fields[0], fields[1])] = (fields[2], reason)
    return results


def suites_of(*result_sets):
    seen = {suite for results in result_sets for suite, _ in results}
    known = [s for s in SUITE_ORDER if s in seen]
    return known + sorted(seen - set(known))


def tally(results, suite=None):
    counts = dict.fromkeys(STATUSES, 0)
    for (s, _), (status, _) in results.items():
        if suite is None or s == suite:
            counts[status] += 1
    return counts


def rate(counts):
    ran = counts["pass"] + counts["fail"]
    return f"{100.0 * counts['pass'] / ran:.1f}%" if ran else "n/a"


def md_text(s):
    """Keeps free-form failure messages from breaking the markdown around them."""
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")
    s = s.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("_", "\\_")
    return s


def render(results, ort, source):
    suites = suites_of(results)
    out = []
    w = out.append
    w("# ONNX conformance")
    w("")
    w("Results of running onyx over the ONNX backend test suite "
      "(`node`, `pytorch-converted`, `pytorch-operator` and `simple` test sets). "
      "A test passes when every one of its data sets produces outputs of the "
      "expected type and shape whose values match the reference: floating point "
      "within |got - expected| <= 1e-7 + 1e-3 * |expected| (NaN matches NaN, "
      "infinities must match exactly), everything else exactly. Skipped tests are "
      "outside onyx's scope (training operators and the like) and are not run.")
    w("")
    w(f"Generated from `{source}`; do not edit by hand. To regenerate:")
    w("")
    w(REGEN)
    w("")
    w("## Summary")
    w("")
    w("| Suite | Passed | Failed | Skipped | Total | Pass rate (of run) |")
    w("|---|---:|---:|---:|---:|---:|")
    for suite in suites:
        c = tally(results, suite)
        w(f"| {suite} | {c['pass']} | {c['fail']} | {c['skip']} | {sum(c.values())} | {rate(c)} |")
    c = tally(results)
    w(f"| **total** | **{c['pass']}** | **{c['fail']}** | **{c['skip']}** | "
      f"**{sum(c.values())}** | **{rate(c)}** |")
    w("")

    w("## Failures")
    w("")
    failures = sorted((k, v[1]) for k, v in results.items() if v[0] == "fail")
    if not failures:
        w("None.")
    for suite in suites:
        rows = [(t, r) for (s, t), r in failures if s == suite]
        if not rows:
            continue
        w(f"### {suite} ({len(rows)})")
        w("")
        for test, reason in rows:
            w(f"- `{test}`: {md_text(reason) if reason else 'failed'}")
        w("")
    if not failures:
        w("")

    skips = sorted((k, v[1]) for k, v in results.items() if v[0] == "skip")
    if skips:
        w("## Skipped")
        w("")
        for (suite, test), reason in skips:
            w(f"- `{suite}/{test}`: {md_text(reason)}")
        w("")

    w("## ONNX Runtime comparison")
    w("")
    if ort is None:
        w("No ONNX Runtime results were supplied. To fill this section, run the same "
          "suite through ONNX Runtime, write its results in the same TSV format "
          "(`suite<TAB>test<TAB>pass|fail|skip<TAB>reason`) and pass the file with "
          "`--ort`.")
        w("")
    else:
        w("ONNX Runtime's results over the same tests, measured in the same run with "
          "onnxruntime-node 1.30 (CPU, graph optimization 'all', one thread) by "
          "`tools/ort/ort_conformance.js`, which binds inputs and compares outputs "
          "exactly as onyx's runner does. Through the Node API ONNX Runtime can "
          "neither take nor return sequences and optionals, nor bfloat16 tensors, "
          "so tests that need them fail for it here; with its Python API it passes "
          "a few more (967 of 1072 has been reported on this suite).")
        w("")
        w("| Suite | onyx passed | ONNX Runtime passed | Tests |")
        w("|---|---:|---:|---:|")
        for suite in suites_of(results, ort):
            a, b = tally(results, suite), tally(ort, suite)
            total = len({t for (s, t) in list(results) + list(ort) if s == suite})
            w(f"| {suite} | {a['pass']} | {b['pass']} | {total} |")
        a, b = tally(results), tally(ort)
        w(f"| **total** | **{a['pass']}** | **{b['pass']}** | **{len(set(results) | set(ort))}** |")
        w("")
        only_ort = sorted(k for k, v in ort.items()
                          if v[0] == "pass" and results.get(k, ("missing",))[0] != "pass")
        only_onyx = sorted(k for k, v in results.items()
                           if v[0] == "pass" and ort.get(k, ("missing",))[0] != "pass")
        w(f"### Passing in ONNX Runtime but not in onyx ({len(only_ort)})")
        w("")
        for k in only_ort:
            w(f"- `{k[0]}/{k[1]}`")
        if not only_ort:
            w("None.")
        w("")
        w(f"### Passing in onyx but not in ONNX Runtime ({len(only_onyx)})")
        w("")
        for k in only_onyx:
            w(f"- `{k[0]}/{k[1]}`")
        if not only_onyx:
            w("None.")
        w("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="?", default="conformance_results.tsv",
                    help="onyx_conformance --results file (default: %(default)s)")
    ap.add_argument("-o", "--output", default="docs/CONFORMANCE.md",
                    help="markdown file to write, '-' for stdout (default: %(default)s)")
    ap.add_argument("--ort", metavar="FILE",
                    help="ONNX Runtime results in the same TSV format")
    args = ap.parse_args()

    results = read_results(args.results)
    ort = read_results(args.ort) if args.ort else None
    text = render(results, ort, os.path.basename(args.results))
    if args.output == "-":
        sys.stdout.write(text)
    else:
        parent = os.path.dirname(args.output)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)


if __name__ == "__main__":
    main()
