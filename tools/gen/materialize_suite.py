#!/usr/bin/env python3
"""Writes the ONNX backend test suite of the installed onnx package to disk in
the suite's usual layout, for onyx_conformance and tools/ort/ort_conformance.py:

    OUT/<suite>/<test>/model.onnx
    OUT/<suite>/<test>/test_data_set_N/{input,output}_K.pb
    OUT/<suite>/<test>/data.json          (only where rtol/atol are not the defaults)

Suites:
  node               built in memory by onnx.backend.test.loader (the wheel no
                     longer ships them as files); each value is written as a
                     TensorProto, SequenceProto, OptionalProto or MapProto
                     according to the model's declared input/output type, as
                     onnx's own `backend-test-tools generate-data` does.
  simple, pytorch-converted, pytorch-operator
                     copied from the folders the wheel ships.
  real               onnx's zoo cases, in the stripped-down versions the wheel
                     ships (data/light: weights made by ConstantOfShape) with
                     their reference outputs; the input is onnx's own dummy
                     input (arange(n)/n), as onnx's backend runner feeds them.
                     Cases that need a download are not written.

A stamp file records the onnx version and this script's hash; when both match,
nothing is written (the stamp is only touched), so the build may call this
whenever it likes.

usage: materialize_suite.py --out DIR [--force]
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import warnings

import numpy as np
import onnx
from onnx import numpy_helper

STAMP = "STAMP"
DEFAULT_RTOL, DEFAULT_ATOL = 1e-3, 1e-7
COPIED_SUITES = ("simple", "pytorch-converted", "pytorch-operator")


def stamp_text():
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    return f"onnx {onnx.__version__}\nscript {digest}\n"


def data_dir():
    from onnx.backend.test.loader import DATA_DIR  # noqa: PLC0415

    return DATA_DIR


def tensor_proto(value, name):
    # Some cases hand TensorProtos over directly (types numpy cannot hold).
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def sequence_proto(value, name, type_proto):
    elem = type_proto.sequence_type.elem_type
    kind = elem.WhichOneof("value")
    if kind == "tensor_type" and any(isinstance(v, onnx.TensorProto) for v in value):
        seq = onnx.SequenceProto(name=name, elem_type=onnx.SequenceProto.TENSOR)
        seq.tensor_values.extend(tensor_proto(v, None) for v in value)
        return seq
    # An empty list says nothing of its element kind; the model does.
    dtype = {"tensor_type": onnx.SequenceProto.TENSOR,
             "sequence_type": onnx.SequenceProto.SEQUENCE,
             "map_type": onnx.SequenceProto.MAP}.get(kind) if not value else None
    return numpy_helper.from_list(value, name, dtype)


def optional_proto(value, name, type_proto):
    # An empty optional is written with its declared element kind rather
    # than UNDEFINED, so a reader can tell what it would have held.
    dtype = None
    if value is None:
        dtype = {"tensor_type": onnx.OptionalProto.TENSOR,
                 "sequence_type": onnx.OptionalProto.SEQUENCE,
                 "map_type": onnx.OptionalProto.MAP}.get(
                     type_proto.optional_type.elem_type.WhichOneof("value"))
    return numpy_helper.from_optional(value, name, dtype)


def value_proto(value, value_info):
    t = value_info.type
    kind = t.WhichOneof("value")
    if kind == "map_type":
        return numpy_helper.from_dict(value, value_info.name)
    if kind == "sequence_type":
        return sequence_proto(value, value_info.name, t)
    if kind == "optional_type":
        return optional_proto(value, value_info.name, t)
    return tensor_proto(value, value_info.name)


def write_case(case_dir, model, data_sets, rtol, atol):
    os.makedirs(case_dir)
    with open(os.path.join(case_dir, "model.onnx"), "wb") as f:
        f.write(model.SerializeToString())
    if (rtol, atol) != (DEFAULT_RTOL, DEFAULT_ATOL):
        with open(os.path.join(case_dir, "data.json"), "w", encoding="utf-8") as f:
            json.dump({"rtol": rtol, "atol": atol}, f, sort_keys=True)
    # Graph inputs backed by initializers (older IR versions list them) take
    # no data file, so the K-th file is the K-th remaining input.
    inits = {i.name for i in model.graph.initializer}
    fed = [x for x in model.graph.input if x.name not in inits]
    for n, (inputs, outputs) in enumerate(data_sets):
        ds = os.path.join(case_dir, f"test_data_set_{n}")
        os.makedirs(ds)
        for prefix, values, infos in (("input", inputs, fed),
                                      ("output", outputs, model.graph.output)):
            for k, value in enumerate(values):
                with open(os.path.join(ds, f"{prefix}_{k}.pb"), "wb") as f:
                    f.write(value_proto(value, infos[k]).SerializeToString())


def write_node(out):
    from onnx.backend.test.loader import load_model_tests  # noqa: PLC0415

    # Building the cases runs every operator's numpy reference, which warns
    # about the overflows and NaNs some cases are made of on purpose.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cases = load_model_tests(kind="node")
    for case in sorted(cases, key=lambda c: c.name):
        write_case(os.path.join(out, "node", case.name), case.model, case.data_sets,
                   case.rtol, case.atol)
    return len(cases)


def write_real(out):
    """onnx's `real` cases: zoo models whose ONNX 1.23 versions are the
    wheel's stripped-down copies under data/light (weights made by
    ConstantOfShape), with reference outputs for onnx's own dummy input, and
    their own tolerances. Cases that would need a download are left out."""
    from onnx.backend.test.loader import load_model_tests  # noqa: PLC0415
    from onnx.backend.test.runner import Runner  # noqa: PLC0415

    prefix = "onnx/backend/test/data/light/"
    count = 0
    for case in sorted(load_model_tests(kind="real"), key=lambda c: c.name):
        if not (case.url or "").startswith(prefix):
            continue
        stem = os.path.splitext(case.url[len(prefix):])[0]
        src = os.path.join(data_dir(), "light")
        model = onnx.load(os.path.join(src, stem + ".onnx"))
        inits = {i.name for i in model.graph.initializer}
        inputs = [Runner.generate_dummy_data(x, seed=0, name=case.model_name, random=False)
                  for x in model.graph.input if x.name not in inits]
        outputs = []
        for k in range(len(model.graph.output)):
            ref = onnx.TensorProto()
            with open(os.path.join(src, f"{stem}_output_{k}.pb"), "rb") as f:
                ref.ParseFromString(f.read())
            outputs.append(ref)
        write_case(os.path.join(out, "real", case.name), model, [(inputs, outputs)],
                   case.rtol, case.atol)
        count += 1
    return count


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="folder to write the suite into")
    ap.add_argument("--force", action="store_true", help="rewrite even if up to date")
    args = ap.parse_args()

    out = os.path.abspath(args.out)
    want = stamp_text()
    stamp = os.path.join(out, STAMP)
    if not args.force and os.path.isfile(stamp):
        with open(stamp, encoding="utf-8") as f:
            current = f.read() == want
        if current:
            # Newer than its inputs again, so the build stops asking.
            os.utime(stamp)
            return 0

    # Written beside the target and swapped in whole, so an interrupted run
    # never leaves a half-written suite that looks current.
    tmp = out + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    counts = {"node": write_node(tmp)}
    for suite in COPIED_SUITES:
        src = os.path.join(data_dir(), suite)
        shutil.copytree(src, os.path.join(tmp, suite),
                        ignore=shutil.ignore_patterns("__init__.py", "__pycache__"))
        counts[suite] = sum(1 for d in os.listdir(os.path.join(tmp, suite))
                            if os.path.isfile(os.path.join(tmp, suite, d, "model.onnx")))
    counts["real"] = write_real(tmp)
    with open(os.path.join(tmp, STAMP), "w", encoding="utf-8") as f:
        f.write(want)
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    print(f"ONNX {onnx.__version__} backend test suite written to {out}: "
          + ", ".join(f"{s} {n}" for s, n in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
