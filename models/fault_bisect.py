"""Fault injection across the zoo: `onyx check --bisect` must name the node.

For each configuration under test (the CPU at optimization level all,
and the Vulkan provider when asked), nodes are drawn at random with a
fixed seed from the zoo models' plans (`onyx check --plan`), from fused
groups too (a model node that optimization merged into another is drawn
by its own name). Each is perturbed through ONYX_INJECT_FAULT in the
session under test only; the check must exit 1 and report as first
divergent node exactly the plan node that computes the injected one.

usage: fault_bisect.py ONYX ZOO_DIR [--providers vulkan,cpu] [--count N]
       [--seed S] [--models a,b,...]
"""

import argparse
import os
import random
import re
import subprocess
import sys
import time

import onnx

# Models whose inputs onyx check can make up (floats in [0, 1), fixed
# shapes but the batch); PaddleOCR's open height and width need files.
DEFAULT_MODELS = ["mobilenet_v3_small", "resnet50", "vit_tiny", "detr", "rtdetr_small",
                  "mobilenet_v3_small_dynamo", "vit_tiny_dynamo", "dfine_small"]

FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE}


def float_nodes(path):
    """Names of the model's nodes whose outputs are all floating point (by
    ONNX shape inference): a perturbed integer (a shape, an index) could
    make the run fail instead of diverge, which is not what is tested."""
    m = onnx.shape_inference.infer_shapes(onnx.load(path))
    types = {v.name: v.type.tensor_type.elem_type
             for v in list(m.graph.value_info) + list(m.graph.output)}
    return {n.name for n in m.graph.node
            if n.output and all(types.get(o) in FLOAT_TYPES for o in n.output if o)}

NODE_LINE = re.compile(r"^#(\d+) '(.*)' \(([^)]*)\) on (\S+), kernel (.*)$")
ORIGINS_LINE = re.compile(r"^    fused from: (.*)$")


def tool_env(provider, **extra):
    """The environment for one onyx command."""
    env = dict(os.environ, **extra)
    if provider == "vulkan":
        # under LeakSanitizer: the Vulkan driver is unloaded when the tool
        # exits, leaving a leak report with no frames the suppressions can
        # name (the unit tests keep the driver loaded and check the
        # provider's own memory)
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    return env


def plan(onyx, model, providers, provider):
    """[(position, name, op, provider, [origins])] of the plan under test."""
    cmd = [onyx, "check", "--plan", model] + (["--providers", providers] if providers else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True,
                         env=tool_env(provider)).stdout
    nodes = []
    for line in out.splitlines():
        m = NODE_LINE.match(line)
        if m:
            nodes.append([int(m.group(1)), m.group(2), m.group(3).split(".")[-1], m.group(4), []])
            continue
        m = ORIGINS_LINE.match(line)
        if m and nodes:
            nodes[-1][4] = re.findall(r"'([^']*)'", m.group(1))
    return nodes


def candidates(nodes, provider, floats):
    """(injected name, expected plan position, plan node name, in a fused
    group) for the plan nodes on the given provider."""
    out = []
    for pos, name, op, prov, origins in nodes:
        if prov != provider or not name:
            continue
        if name in floats:
            out.append((name, pos, name, False))
        for o in origins[1:]:  # merged into this node: found through it
            if o in floats:
                out.append((o, pos, name, True))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("onyx")
    ap.add_argument("zoo")
    ap.add_argument("--providers", default="")
    ap.add_argument("--count", type=int, default=20)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--models", default=",".join(DEFAULT_MODELS))
    args = ap.parse_args()
    provider = args.providers.split(",")[0].split(":")[0] if args.providers else "cpu"
    rng = random.Random(args.seed)
    pool = []
    for m in args.models.split(","):
        path = os.path.join(args.zoo, m + ".onnx")
        if not os.path.exists(path):
            print(f"FAIL: no zoo model {path}")
            return 1
        for c in candidates(plan(args.onyx, path, args.providers, provider), provider,
                            float_nodes(path)):
            pool.append((path,) + c)
    fused = [c for c in pool if c[4]]
    plain = [c for c in pool if not c[4]]
    # fusions are CPU-only (they need the CPU's fused kernels)
    want_fused = args.count // 4 if provider == "cpu" else 0
    if len(fused) < want_fused or len(plain) < args.count:
        print(f"FAIL: too few candidates ({len(plain)} nodes, {len(fused)} fused)")
        return 1
    # a quarter from inside fused groups, when there are fused groups
    picks = rng.sample(fused, want_fused)
    picks += rng.sample(plain, args.count - len(picks))
    failures = 0
    for path, injected, pos, survivor, in_group in picks:
        spec = f"{injected}@{provider}"
        env = tool_env(provider, ONYX_INJECT_FAULT=spec)
        cmd = [args.onyx, "check", "--bisect", "--atol", "1e-3", "--rtol", "1e-2", path]
        if args.providers:
            cmd += ["--providers", args.providers]
        t0 = time.monotonic()
        r = subprocess.run(cmd, env=env, capture_output=True, text=True)
        took = time.monotonic() - t0
        want = f"first divergent node: #{pos} '{survivor}' "
        got = next((l for l in r.stdout.splitlines() if l.startswith("first divergent node")), "")
        ok = r.returncode == 1 and got.startswith(want)
        where = f"{os.path.basename(path)}: '{injected}'" + (f" (in '{survivor}')" if in_group else "")
        print(f"{'ok' if ok else 'FAIL'}: {where} -> {got or r.stderr.strip()} [{took:.1f} s]")
        if not ok:
            failures += 1
            print(r.stdout[-2000:], r.stderr[-2000:], sep="\n")
    print(f"{len(picks) - failures} of {len(picks)} injected faults found at the right node")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
