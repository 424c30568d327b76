#!/usr/bin/env python3
"""Turn the conformance results of onyx and ONNX Runtime into docs/CONFORMANCE.md.

Each results file is a TSV of lines: suite <TAB> test <TAB> pass|fail|skip <TAB> reason,
as written by onyx_conformance --results and tools/ort/ort_conformance.py.
A suite set (one --set per set) is one test-suite folder run by both engines:

    gen_conformance_md.py --set "ONNX 1.23" onyx123.tsv ort123.tsv \\
                          --set "ONNX 1.12 (Debian)" onyx112.tsv ort112.tsv \\
                          --ort-version 1.31.1 -o docs/CONFORMANCE.md

Give '-' for an ORT file that was not measured.
"""

import argparse
import os
import sys

SUITE_ORDER = ["node", "pytorch-converted", "pytorch-operator", "simple", "real"]
STATUSES = ("pass", "fail", "skip")

REGEN = """\
```sh
bash scripts/conformance-report.sh
```

It builds `onyx_conformance` (which writes the ONNX 1.23 suite into
`build/onnx-suite/` from the onnx wheel), runs it over both suites, runs
`tools/ort/ort_conformance.py` (ONNX Runtime, same binding, tolerances and
TSV format) over both, then `tests/conformance/gen_conformance_md.py`."""


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
    seen = {suite for results in result_sets if results for suite, _ in results}
    known = [s for s in SUITE_ORDER if s in seen]
    return known + sorted(seen - set(known))


def tally(results, suite=None):
    counts = dict.fromkeys(STATUSES, 0)
    for (s, _), (status, _) in (results or {}).items():
        if suite is None or s == suite:
            counts[status] += 1
    return counts


def md_text(s):
    """Keeps free-form failure messages from breaking the markdown around them."""
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("`", "'")
    s = s.replace("<", "&lt;").replace(">", "&gt;").replace("*", "\\*").replace("_", "\\_")
    return s


def render(sets, ort_version):
    out = []
    w = out.append
    w("# ONNX conformance")
    w("")
    w("Results of running onyx and ONNX Runtime over two ONNX backend test suites:")
    w("")
    w("- **ONNX 1.23**: the suite of the onnx wheel pinned in `requirements.txt`, "
      "written into the build folder by `tools/gen/materialize_suite.py`: the `node` "
      "cases (built by the wheel in memory, operator sets up to the wheel's newest), "
      "the `simple`, `pytorch-converted` and `pytorch-operator` folders it ships, and "
      "`real` (the zoo models in the stripped-down versions the wheel ships, fed "
      "onnx's dummy input, with their own tolerances). CTest: "
      "`conformance_onnx123`, expected failures in "
      "`tests/conformance/expected_failures_onnx123.txt`.")
    w("- **ONNX 1.12 (Debian)**: Debian's 2022 suite (`libonnx-testdata`, opset <= 17), "
      "kept as a regression test. CTest: `conformance_onnx112`, expected failures in "
      "`tests/conformance/expected_failures.txt`.")
    w("")
    w("A test passes when every one of its data sets produces outputs of the expected "
      "kind (tensor, sequence, optional), element type and shape whose values match "
      "the reference: floating point within |got - expected| <= atol + rtol * "
      "|expected| (rtol 1e-3 and atol 1e-7 unless the test's `data.json` says "
      "otherwise, rtol at least 2^-6 for bfloat16, as onnx's backend test does; NaN "
      "matches NaN, infinities must match exactly), everything else exactly. Skipped "
      "tests are outside onyx's scope (training operators, outputs drawn from numpy's "
      "random generator) and are run by neither engine.")
    w("")
    w(f"ONNX Runtime is onnxruntime {ort_version or '(version not given)'} from the "
      "Python wheel (CPU provider, graph optimization 'all', one thread), driven by "
      "`tools/ort/ort_conformance.py` with the same input binding, tolerances and "
      "result format as onyx's runner.")
    w("")
    w("Generated; do not edit by hand. To regenerate:")
    w("")
    w(REGEN)
    w("")

    w("## Summary")
    w("")
    w("| Suite set | Suite | Tests | Skipped | onyx passed | ONNX Runtime passed |")
    w("|---|---|---:|---:|---:|---:|")
    for label, onyx, ort in sets:
        for suite in suites_of(onyx, ort):
            a, b = tally(onyx, suite), tally(ort, suite)
            total = len({t for (s, t) in list(onyx) + list(ort or {}) if s == suite})
            w(f"| {label} | {suite} | {total} | {a['skip']} | {a['pass']} | "
              f"{b['pass'] if ort is not None else 'n/a'} |")
        a, b = tally(onyx), tally(ort)
        total = len(set(onyx) | set(ort or {}))
        w(f"| **{label}** | **all** | **{total}** | **{a['skip']}** | **{a['pass']}** | "
          f"**{b['pass'] if ort is not None else 'n/a'}** |")
    w("")

    w("## ONNX Runtime passes, onyx fails")
    w("")
    w("This list must become empty: each entry is something a mainstream runtime "
      "does that onyx does not yet. onyx's reason follows each test.")
    w("")
    for label, onyx, ort in sets:
        if ort is None:
            continue
        rows = sorted(k for k, v in ort.items()
                      if v[0] == "pass" and onyx.get(k, ("missing", ""))[0] != "pass")
        w(f"### {label} ({len(rows)})")
        w("")
        for k in rows:
            why = onyx.get(k, ("missing", "not run by onyx"))[1]
            w(f"- `{k[0]}/{k[1]}`: {md_text(why) if why else 'failed'}")
        if not rows:
            w("None.")
        w("")

    w("## onyx passes, ONNX Runtime fails")
    w("")
    w("ONNX Runtime's reason follows each test.")
    w("")
    for label, onyx, ort in sets:
        if ort is None:
            continue
        rows = sorted(k for k, v in onyx.items()
                      if v[0] == "pass" and ort.get(k, ("missing", ""))[0] != "pass")
        w(f"### {label} ({len(rows)})")
        w("")
        for k in rows:
            why = ort.get(k, ("missing", "not run by ONNX Runtime"))[1]
            w(f"- `{k[0]}/{k[1]}`: {md_text(why) if why else 'failed'}")
        if not rows:
            w("None.")
        w("")

    w("## Both fail")
    w("")
    w("onyx's reason follows each test.")
    w("")
    for label, onyx, ort in sets:
        rows = sorted(k for k, v in onyx.items()
                      if v[0] == "fail" and (ort is None or ort.get(k, ("fail",))[0] != "pass"))
        w(f"### {label} ({len(rows)})")
        w("")
        for k in rows:
            why = onyx[k][1]
            w(f"- `{k[0]}/{k[1]}`: {md_text(why) if why else 'failed'}")
        if not rows:
            w("None.")
        w("")

    w("## Skipped")
    w("")
    for label, onyx, _ in sets:
        skips = sorted((k, v[1]) for k, v in onyx.items() if v[0] == "skip")
        w(f"### {label} ({len(skips)})")
        w("")
        for (suite, test), reason in skips:
            w(f"- `{suite}/{test}`: {md_text(reason)}")
        if not skips:
            w("None.")
        w("")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--set", nargs=3, action="append", required=True,
                    metavar=("LABEL", "ONYX_TSV", "ORT_TSV"),
                    help="a suite set: its label, onyx's results, ONNX Runtime's ('-': none)")
    ap.add_argument("--ort-version", help="onnxruntime version, for the text")
    ap.add_argument("-o", "--output", default="docs/CONFORMANCE.md",
                    help="markdown file to write, '-' for stdout (default: %(default)s)")
    args = ap.parse_args()

    sets = [(label, read_results(onyx), None if ort == "-" else read_results(ort))
            for label, onyx, ort in args.set]
    text = render(sets, args.ort_version)
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
