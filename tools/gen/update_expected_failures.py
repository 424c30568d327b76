#!/usr/bin/env python3
"""Rewrites a conformance expected-failures list from a results TSV of
onyx_conformance (--results), so the list follows onyx as operators land:

  - listed tests that now pass are removed;
  - listed tests the run does not know are removed when their suite was run
    (a renamed or dropped test), unless --partial says the run was filtered;
  - listed tests that still fail keep their line, reason and place;
  - failing tests not yet listed are added with a placeholder reason derived
    from the failure, grouped under '# [generated] ...' headings (an entry
    may be moved out of those groups and given a better reason by hand;
    it then stays where it was put);
  - 'out of scope:' entries (skipped tests) are kept;
  - with --refresh-placeholders, entries still under a '# [generated]'
    heading get a new placeholder reason (and group) from their current
    failure, as when an operator version lands but its test still fails.

usage: update_expected_failures.py LIST RESULTS_TSV [--partial] [--refresh-placeholders]
                                   [--dry-run]

e.g.   build/tests/conformance/onyx_conformance --data build/onnx-suite \\
           --expected-failures tests/conformance/expected_failures_onnx123.txt \\
           --results build/conformance_onnx123.tsv
       tools/gen/update_expected_failures.py \\
           tests/conformance/expected_failures_onnx123.txt build/conformance_onnx123.tsv
"""

import argparse
import re
import sys

GENERATED = "# [generated] "
ENTRY = re.compile(r"^\s*(\S+/\S+)\s*#\s*(.*\S)\s*$")

# TensorProto.DataType numbers onyx may not know yet, for readable reasons.
ELEM_TYPES = {17: "float8e4m3fn", 18: "float8e4m3fnuz", 19: "float8e5m2",
              20: "float8e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4e2m1",
              24: "float8e8m0", 25: "uint2", 26: "int2"}

GROUPS = [
    # (group heading, pattern, reason builder)
    ("operator versions onyx does not implement yet (placeholder reasons)",
     re.compile(r"onyx implements \S+ versions \d+\.\.\d+; the model's opset (\d+) uses (\S+)"),
     lambda m: (f"opset-18+ operator version not yet implemented: {m.group(2)}"
                if int(m.group(1)) >= 18 else
                f"operator version not yet implemented: {m.group(2)}")),
    ("operators onyx does not implement yet (placeholder reasons)",
     re.compile(r"operator (\S+) \(domain '([^']*)'[^)]*\) is not implemented"
                r"|unknown operator (\S+) in domain '([^']*)'"),
     lambda m: "operator not yet implemented: " + qualified(
         m.group(2) if m.group(1) else m.group(4), m.group(1) or m.group(3))),
    ("element types onyx does not support yet (placeholder reasons)",
     re.compile(r"unknown element type (\d+)"),
     lambda m: "element type not yet supported: "
               + ELEM_TYPES.get(int(m.group(1)), f"type {m.group(1)}")),
    ("other failures, to investigate (placeholder reasons: the failure itself)",
     re.compile(r".*"),
     lambda m: short(m.group(0))),
]


def qualified(domain, op):
    return op if domain in ("", "ai.onnx") else f"{domain}.{op}"


def short(reason):
    reason = re.sub(r"^test_data_set_\d+: ", "", reason)
    reason = reason.replace("#", "")
    return reason[:160].rstrip() + ("..." if len(reason) > 160 else "")


def classify(reason):
    for heading, pattern, build in GROUPS:
        m = pattern.search(reason)
        if m:
            return heading, build(m)
    raise AssertionError("the last group matches everything")


def read_results(path):
    results = {}
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            fields = line.rstrip("\r\n").split("\t")
            if len(fields) < 3 or fields[2] not in ("pass", "fail", "skip"):
                if line.strip():
                    sys.exit(f"{path}:{lineno}: not a results line")
                continue
            results[f"{fields[0]}/{fields[1]}"] = (fields[2], "\t".join(fields[3:]).strip())
    return results


def format_entry(key, reason, width):
    return f"{key.ljust(width)}  # {reason}"


def realign(lines, start, end):
    """Sorts and aligns the entries of a generated group lines[start:end]."""
    entries = sorted(ENTRY.match(line).groups() for line in lines[start:end])
    width = min(max((len(k) for k, _ in entries), default=0), 64)
    lines[start:end] = [format_entry(k, r, width) for k, r in entries]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("list", help="expected-failures file to rewrite")
    ap.add_argument("results", help="onyx_conformance --results TSV")
    ap.add_argument("--partial", action="store_true",
                    help="the run was filtered: keep entries it does not mention")
    ap.add_argument("--refresh-placeholders", action="store_true",
                    help="re-derive the reasons of entries under '# [generated]' headings")
    ap.add_argument("--dry-run", action="store_true", help="print the changes only")
    args = ap.parse_args()

    results = read_results(args.results)
    suites_run = {k.split("/", 1)[0] for k in results}
    with open(args.list, encoding="utf-8") as f:
        lines = f.read().splitlines()

    listed, kept, removed = set(), [], []
    generated = False  # inside a '# [generated]' group
    for line in lines:
        m = ENTRY.match(line) if not line.lstrip().startswith("#") else None
        if not m:
            if line.startswith("#"):
                generated = line.startswith(GENERATED)
            kept.append(line)
            continue
        key = m.group(1)
        status = results.get(key, (None, ""))[0]
        if generated and args.refresh_placeholders and status == "fail":
            continue  # re-added below from its current failure
        listed.add(key)
        if status == "pass":
            removed.append((key, "passes"))
            continue
        if status is None and key.split("/", 1)[0] in suites_run and not args.partial:
            removed.append((key, "no such test in the run"))
            continue
        kept.append(line)
    lines = kept

    added = {}
    for key, (status, reason) in sorted(results.items()):
        if status == "fail" and key not in listed:
            heading, why = classify(reason or "failed")
            added.setdefault(heading, []).append(format_entry(key, why, 0))

    for heading, _, _ in GROUPS:
        header = GENERATED + heading
        if heading in added:
            if header not in lines:
                while lines and not lines[-1].strip():
                    lines.pop()
                lines += ["", header]
            at = lines.index(header) + 1
            end = at
            while end < len(lines) and ENTRY.match(lines[end]) and \
                    not lines[end].lstrip().startswith("#"):
                end += 1
            lines[end:end] = added[heading]
            realign(lines, at, end + len(added[heading]))
        elif header in lines:
            at = lines.index(header) + 1
            end = at
            while end < len(lines) and ENTRY.match(lines[end]) and \
                    not lines[end].lstrip().startswith("#"):
                end += 1
            if end == at:
                # The group emptied: drop its heading and the blank line before it.
                del lines[at - 1]
                if at - 2 >= 0 and not lines[at - 2].strip():
                    del lines[at - 2]
            else:
                realign(lines, at, end)

    for key, why in removed:
        print(f"removed {key}: {why}")
    for heading, entries in added.items():
        print(f"added {len(entries)} under '{heading}'")
    if not args.dry_run:
        with open(args.list, "w", encoding="utf-8") as f:
            f.write("\n".join(lines).rstrip("\n") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
