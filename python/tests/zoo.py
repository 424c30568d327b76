"""The model zoo's manifest (references/manifest.tsv, written by
models/make_references.py) and its tolerances, shared with the C model test:
make_references.out_of_tolerance is the one definition of them."""

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "models"))
from make_references import out_of_tolerance  # noqa: E402  (the zoo's tolerances)

# Cases the Python tests run by default: one of each family whose run takes
# a few seconds on two cores (classification CNN, transformer, OCR
# recogniser and classifier, a DETR detector); --zoo-cases all runs every
# case of the manifest.
DEFAULT_CASES = ["mobilenet_v3_small", "vit_tiny", "ppocr_rec", "ppocr_cls", "detr_b1",
                 "mobilenet_v3_small_dynamo"]


def read_manifest(zoo_dir):
    """{case: {"model": path, "inputs": {name: path}, "outputs": [(name, path, kind)]}}"""
    ref_dir = zoo_dir / "references"
    cases, current = {}, None
    for line in (ref_dir / "manifest.tsv").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        f = line.split("\t")
        if f[0] == "case":
            current = cases[f[1]] = {"model": ref_dir / f[2], "inputs": {}, "outputs": []}
        elif f[0] == "input":
            current["inputs"][f[1]] = ref_dir / f[2]
        elif f[0] == "output":
            current["outputs"].append((f[1], ref_dir / f[2], f[3]))
    return cases


def load_inputs(case):
    return {name: np.load(path) for name, path in case["inputs"].items()}


def compare(name, kind, got, want):
    """Fails naming the output when onyx's value is out of the zoo tolerance."""
    assert got.dtype == want.dtype, f"output {name}: dtype {got.dtype} vs {want.dtype}"
    why = out_of_tolerance(kind, got, want)
    assert why is None, f"output {name} ({kind}): {why}"
