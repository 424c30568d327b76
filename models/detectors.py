"""D-FINE, RT-DETR and RT-DETRv2 from Hugging Face transformers, exported to
ONNX for the model zoo.

usage: detectors.py ZOO_DIR VARIANT...
       detectors.py --list [all|registered|cases]

The project exists because of bug reports about these detectors on GPU
runtimes, so the zoo has the real model classes (DFineForObjectDetection,
RTDetrForObjectDetection, RTDetrV2ForObjectDetection), not a look-alike.
No checkpoint can be fetched (no hub access, and backbones too are made
from their configs), so every model gets random weights from a fixed seed,
calibrated the way zoo_common.py explains.

A variant is ARCH_SIZE[_dynamo]:
  ARCH    dfine, rtdetr, rtdetr_v2
  SIZE    small    a few layers, 64 wide, a small HGNetV2 / ResNet backbone,
                   256 x 256 images, 100 queries, 10 classes
          default  the configuration class's defaults (RT-DETR: ResNet-50
                   backbone; D-FINE: HGNetV2 with D-FINE-L's stage widths),
                   640 x 640 images, 300 queries, 80 classes as COCO
  _dynamo torch.onnx.export's current default exporter (torch.export-based,
          at its own default opset); without it, the TorchScript-based
          exporter at opset 17.
Every variant has a dynamic batch axis; the input is `pixel_values` (RGB in
[0, 1], as the image processors make it), the outputs `logits` [batch,
queries, classes] and `pred_boxes` [batch, queries, 4] (cx, cy, w, h in
[0, 1]).

For each variant this writes ZOO_DIR/VARIANT.onnx, unless it is there and
up to date (same configuration, seed, exporter and library versions, as
recorded in ZOO_DIR/VARIANT.stamp), checks it in ONNX Runtime (loads, runs
at batch 1 and 2 and agrees with PyTorch, with the queries compared as
sets), and describes its two reference cases, VARIANT_b1 and VARIANT_b2
(the second batch starts with the first's image), through
make_references.write_case: ZOO_DIR/cases/VARIANT_b{1,2}.json (for the
default sizes only once the model test compares rows as sets: see
ORDER_FREE_KIND). make_references.py then computes the reference outputs
with the rest of the zoo. A file that is up to date is touched, so a build
system that reruns this script sees its outputs as new.

--list registered|cases prints the variants models/detectors.cmake
registers and their cases (without importing PyTorch).
"""

import hashlib
import json
import math
import os
import sys
import time
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
# No hub access at all: every configuration below is complete, and a
# missed default that reached for the network would fail here, not hang.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# transformers turns its input checks (torch_compilable_check) into
# torch._check_tensor_all asserts while torch.export traces, and the ONNX
# exporter has no conversion for them (aten._is_all_true: "No ONNX function
# found"); this is transformers' documented switch to leave them out. In
# these models the check is the deformable attention's "spatial shapes add
# up to the sequence length", which holds by construction for any batch.
os.environ.setdefault("TRANSFORMERS_DISABLE_TORCH_CHECK", "1")

ARCHES = ("dfine", "rtdetr", "rtdetr_v2")
SIZES = ("small", "default")
IMAGE = {"small": 256, "default": 640}
# Variants that models/detectors.cmake registers (see its comment for the
# cost figures behind the choice); the others are made on request.
REGISTERED = (
    "dfine_small", "dfine_small_dynamo", "rtdetr_small", "rtdetr_small_dynamo",
    "rtdetr_v2_small", "rtdetr_v2_small_dynamo", "dfine_default", "dfine_default_dynamo",
    "rtdetr_default", "rtdetr_default_dynamo", "rtdetr_v2_default", "rtdetr_v2_default_dynamo",
)
# The order of the queries is the order of the encoder's TopK over all
# tokens (8400 at 640 px), and among 300 chosen scores a few are nearly
# always within float32 noise of each other: two correct runtimes then list
# the same detections in another order (onyx and ONNX Runtime do on
# rtdetr_default: two queries swapped, every detection equal within 4e-5).
# make_references' one-ulp check cannot find such an input for the default
# sizes, so their outputs need comparing as sets of rows. The small
# variants (100 of 1344 tokens) pass that check, but it guards against a
# one-ulp nudge only: a provider that sums in another order moves the
# scores by far more (Vulkan on lavapipe, on an Intel Xeon: dfine_small at
# batch 2 swapped the queries ranked 33 and 34, whose scores differ by
# 6e-6 while the scores moved by up to 2e-4, and its TopK kernel gives
# the CPU's order on the same input), so every variant compares its
# queries as sets. Without that comparison (the tolerance kind
# ORDER_FREE_KIND in make_references.KINDS and test_models.c), the
# default variants have no reference cases, only their `onyx run` test and
# the small ones compare in query order.
#
# D-FINE at the default size has no reference case at all: with random
# weights its fine-grained box refinement amplifies float32 rounding, so
# ONNX Runtime and PyTorch disagree by up to 0.33 on logits even as sets of
# rows (batch 2), ONNX Runtime differs from itself between optimization
# levels by 6.6e-3, and none of 16 input seeds stays within tolerance under
# a one-ulp nudge of its input. Its two exports get the `onyx run` test.
ILL_CONDITIONED = ("dfine_default", "dfine_default_dynamo")
ORDER_FREE_KIND = "row_set"
OPSET = 17  # the TorchScript exporter's variants; GridSample needs 16
SEED = {"dfine": 2501, "rtdetr": 2502, "rtdetr_v2": 2503}
FIRST_INPUT_SEED = {"dfine": 251, "rtdetr": 252, "rtdetr_v2": 253}
OUTPUTS = ("logits", "pred_boxes")


def all_variants():
    return [f"{a}_{s}{d}" for a in ARCHES for s in SIZES for d in ("", "_dynamo")]


def parse_variant(name):
    dynamo = name.endswith("_dynamo")
    base = name[: -len("_dynamo")] if dynamo else name
    for size in SIZES:
        if base.endswith("_" + size) and base[: -len(size) - 1] in ARCHES:
            return base[: -len(size) - 1], size, dynamo
    raise ValueError(f"unknown variant {name!r}; variants: {' '.join(all_variants())}")


# ---- configurations ----
def small_backbone(arch):
    """A backbone of a few narrow stages giving strides 8, 16 and 32 with
    64, 96 and 128 channels."""
    if arch == "dfine":
        from transformers import HGNetV2Config

        return HGNetV2Config(
            stem_channels=[3, 16, 16],
            stage_in_channels=[16, 32, 64, 96],
            stage_mid_channels=[16, 24, 32, 48],
            stage_out_channels=[32, 64, 96, 128],
            stage_num_blocks=[1, 1, 1, 1],
            stage_numb_of_layers=[2, 2, 2, 2],
            depths=[1, 1, 1, 1],
            hidden_sizes=[32, 64, 96, 128],
            out_features=["stage2", "stage3", "stage4"],
        )
    from transformers import RTDetrResNetConfig

    return RTDetrResNetConfig(
        embedding_size=32,
        hidden_sizes=[32, 64, 96, 128],
        depths=[1, 1, 1, 1],
        layer_type="basic",
        out_features=["stage2", "stage3", "stage4"],
    )


def make_config(arch, size):
    from transformers import DFineConfig, RTDetrConfig, RTDetrV2Config

    cls = {"dfine": DFineConfig, "rtdetr": RTDetrConfig, "rtdetr_v2": RTDetrV2Config}[arch]
    common = dict(
        # plain BatchNorm layers, so that zoo_common can calibrate them;
        # both exporters fold them into the convolutions, where a trained
        # checkpoint's frozen ones would leave a Mul and an Add
        freeze_backbone_batch_norms=False,
        # no pretrained backbone (transformers 5 builds the backbone from
        # backbone_config with random weights and ignores this; kept for
        # versions that still read it)
        use_pretrained_backbone=False,
    )
    if size == "default":
        labels = 80
        kw = dict(common)
    else:
        labels = 10
        kw = dict(
            common,
            backbone_config=small_backbone(arch),
            encoder_in_channels=[64, 96, 128],
            encoder_hidden_dim=64,
            encoder_ffn_dim=128,
            encoder_attention_heads=4,
            d_model=64,
            decoder_in_channels=[64, 64, 64],
            decoder_ffn_dim=128,
            decoder_attention_heads=4,
            decoder_layers=2,
            num_queries=100,
        )
        if arch == "dfine":
            kw.update(hidden_expansion=0.5, depth_mult=0.34, lqe_hidden_dim=32)
    kw.update(id2label={i: f"class_{i}" for i in range(labels)},
              label2id={f"class_{i}": i for i in range(labels)})
    return cls(**kw)


def build(arch, size):
    """The detector in eval mode with calibrated random weights, and an
    example batch of 2 images."""
    import torch
    from transformers import DFineForObjectDetection, RTDetrForObjectDetection, \
        RTDetrV2ForObjectDetection

    import zoo_common as zc

    cls = {"dfine": DFineForObjectDetection, "rtdetr": RTDetrForObjectDetection,
           "rtdetr_v2": RTDetrV2ForObjectDetection}[arch]
    config = make_config(arch, size)
    torch.manual_seed(SEED[arch] + (0 if size == "small" else 100))
    net = cls(config).eval()
    model = make_detector_class()(net).eval()
    # transformers zero-initialises the last layer of the box heads (and of
    # D-FINE's localization-quality head) so that training starts from the
    # anchors; left so, every predicted box would be its anchor, exactly,
    # and the box refinement would add zeros. Random weights of the size
    # PyTorch's default initialisation gives instead.
    for m in net.modules():
        if isinstance(m, torch.nn.Linear) and not m.weight.any():
            torch.nn.init.normal_(m.weight, std=1.0 / math.sqrt(m.in_features))
    n = IMAGE[size]
    seed = 10 * SEED[arch] + (0 if size == "small" else 5)
    # two batches of two images; one for the default size, where a forward
    # pass costs seconds
    batches = [(zc.synthetic_images(2, n, n, seed + i),) for i in range(2 if size == "small" else 1)]
    zc.calibrate_batchnorm(model, batches)
    # Class scores spread by a few units as a trained detector's, so that
    # the encoder's TopK query selection picks by clear margins (random
    # heads give scores within rounding of each other). The decoder's last
    # class head gives the logits output.
    inner = net.model
    zc.rescale_layer(model, inner.enc_score_head, batches, 2.0)
    zc.rescale_layer(model, inner.decoder.class_embed[-1], batches, 2.0)
    # The last refinement moves boxes by about half a unit in
    # inverse-sigmoid space (RT-DETR), or spreads D-FINE's edge
    # distributions over a few bins.
    zc.rescale_layer(model, inner.decoder.bbox_embed[-1].layers[-1], batches, 0.5)
    return model, config, batches[0][0]


def make_detector_class():
    import torch

    class Detector(torch.nn.Module):
        """(logits, pred_boxes) of a transformers detector, as a tuple the
        exporters name."""

        def __init__(self, net):
            super().__init__()
            self.net = net

        def forward(self, pixel_values):
            out = self.net(pixel_values=pixel_values, return_dict=True)
            return out.logits, out.pred_boxes

    return Detector


# ---- export ----
def stamp_of(arch, size, dynamo, config):
    """What decides a variant's file: a new value means a new export."""
    import onnx
    import torch
    import transformers

    return {
        "format": 1,
        "variant": f"{arch}_{size}{'_dynamo' if dynamo else ''}",
        "seed": SEED[arch],
        "image": IMAGE[size],
        "exporter": "dynamo" if dynamo else f"torchscript opset {OPSET}",
        "config": hashlib.sha256(config.to_json_string(use_diff=False).encode()).hexdigest(),
        "calibration": 2,  # bump when build() changes the weights
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
    }


class SymbolicLen:
    """While torch.export traces, the modeling files' `len` returns a
    tensor's first dimension as it is, symbolic included.

    The detectors' forward takes `batch_size = len(source_flatten)`; the
    builtin len() must return a Python int, so torch.export turns the batch
    dimension into the example's constant and rejects the dynamic batch
    ("You marked batch as dynamic but your code specialized it to be a
    constant"). The value is only used with learn_initial_query (off in
    every config here), so the exported graph is the same either way; a
    module-level name shadows the builtin for that module's code only, and
    is removed afterwards."""

    MODULES = ("transformers.models.d_fine.modeling_d_fine",
               "transformers.models.rt_detr.modeling_rt_detr",
               "transformers.models.rt_detr_v2.modeling_rt_detr_v2")

    def __enter__(self):
        import builtins
        import importlib

        import torch

        def symbolic_len(x):
            return x.shape[0] if isinstance(x, torch.Tensor) else builtins.len(x)

        self.modules = [importlib.import_module(m) for m in self.MODULES]
        for m in self.modules:
            if "len" in vars(m):
                raise RuntimeError(f"{m.__name__} defines its own len; see SymbolicLen")
            m.len = symbolic_len
        return self

    def __exit__(self, *exc):
        for m in self.modules:
            del m.len
        return False


def export(model, example, path, dynamo):
    """torch.onnx.export through a temporary file renamed into place, so an
    interrupted export never leaves a file that looks complete."""
    import torch

    tmp = path + ".tmp.onnx"
    names = dict(input_names=["pixel_values"], output_names=list(OUTPUTS))
    try:
        if dynamo:
            # The example batch is 2: torch.export specialises a dimension
            # that is 1 in the example. Weights inside the file, as every
            # zoo model: the tests open one file.
            with SymbolicLen():
                torch.onnx.export(
                    model, (example,), tmp, dynamo=True, external_data=False, optimize=True,
                    dynamic_shapes={"pixel_values": {0: torch.export.Dim("batch", min=1, max=64)}},
                    verbose=False, **names)
        else:
            torch.onnx.export(
                model, (example,), tmp, dynamo=False, opset_version=OPSET,
                do_constant_folding=True,
                dynamic_axes={n: {0: "batch"} for n in ("pixel_values",) + OUTPUTS}, **names)
        os.replace(tmp, path)
    finally:
        for leftover in (tmp, tmp + ".data"):
            if os.path.exists(leftover):
                os.remove(leftover)


def ort_check(path, model, example):
    """Loads the file in ONNX Runtime, runs it at batch 1 and 2 and compares
    with PyTorch; raises when the outputs disagree beyond float32 noise
    (an export that baked the batch size in, say). Returns the run times."""
    import numpy as np
    import onnxruntime as ort
    import torch

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    got_in = [i.name for i in session.get_inputs()]
    got_out = [o.name for o in session.get_outputs()]
    if got_in != ["pixel_values"] or got_out != list(OUTPUTS):
        raise RuntimeError(f"{path}: inputs {got_in}, outputs {got_out}")
    times = {}
    for batch in (1, 2):
        x = example[:batch].contiguous()
        with torch.no_grad():
            want = [t.numpy() for t in model(x)]
        start = time.time()
        got = session.run(list(OUTPUTS), {"pixel_values": x.numpy()})
        times[batch] = time.time() - start
        # Queries come in the order of the encoder's TopK, and PyTorch and
        # ONNX Runtime may order nearly tied scores differently: compare the
        # detections (logits and box of a query together) as sets, each
        # ONNX Runtime row against its closest PyTorch row of the same image.
        for name, g, w in zip(OUTPUTS, got, want):
            if g.shape != w.shape:
                raise RuntimeError(f"{path}: batch {batch}: {name} has shape {g.shape}, "
                                   f"PyTorch gives {w.shape}")
        g_rows, w_rows = (np.concatenate(t, axis=-1).astype(np.float64) for t in (got, want))
        scale = np.abs(w_rows).max(axis=(1, 2), keepdims=True)
        in_order = np.abs(g_rows - w_rows).max(-1) / scale[..., 0]
        nearest = np.stack([np.abs(g_rows[i][:, None] - w_rows[i][None]).max(-1).min(-1)
                            for i in range(batch)]) / scale[..., 0]
        # float32 rounding moves a detection by ~1e-6 of the largest value;
        # a wrong export (a batch size baked in, say) moves it by its size
        unmatched = float(np.mean(nearest > 1e-3))
        print(f"  batch {batch}: logits {list(got[0].shape)}, pred_boxes {list(got[1].shape)}: "
              f"largest |ort - torch| {in_order.max():.3g} of the largest value in query order, "
              f"{nearest.max():.3g} as sets; queries in another order "
              f"{100 * float(np.mean(in_order > 1e-3)):.1f}%", flush=True)
        if unmatched > 0.05:  # a tie at the 300th place may swap a query or two
            raise RuntimeError(f"{path}: batch {batch}: ONNX Runtime and PyTorch disagree: "
                               f"{100 * unmatched:.1f}% of the detections have no match")
    return times


def op_summary(path):
    import onnx

    model = onnx.load(path, load_external_data=False)
    onnx.checker.check_model(model)
    opsets = {o.domain or "ai.onnx": o.version for o in model.opset_import}
    ops = set()

    def walk(graph):
        for node in graph.node:
            ops.add(node.op_type if not node.domain else f"{node.domain}.{node.op_type}")
            for attr in node.attribute:
                if attr.HasField("g"):
                    walk(attr.g)
                for g in attr.graphs:
                    walk(g)

    walk(model.graph)
    return opsets, sorted(ops)


def order_free_kind():
    """ORDER_FREE_KIND when the model test compares rows as sets, else None."""
    import make_references

    return ORDER_FREE_KIND if ORDER_FREE_KIND in make_references.KINDS else None


def cases(variant):
    """The reference cases of a variant, as make_references.write_case takes
    them: batch 1, and batch 2 starting with batch 1's image (the batch axis
    must not mix images)."""
    arch, size, dynamo = parse_variant(variant)
    kind = order_free_kind()
    if kind is None and size == "small":
        kind = "logit"
    if kind is None or variant in ILL_CONDITIONED:
        return []
    n = IMAGE[size]
    seed = FIRST_INPUT_SEED[arch] + (0 if size == "small" else 50) + (20 if dynamo else 0)
    outputs = {"logits": kind, "pred_boxes": kind}
    b1 = dict(name=f"{variant}_b1", model=f"{variant}.onnx", seed=seed,
              inputs={"pixel_values": dict(shape=[1, 3, n, n], content="scene")},
              outputs=outputs)
    b2 = dict(name=f"{variant}_b2", model=f"{variant}.onnx", seed=seed + 1,
              inputs={"pixel_values": dict(shape=[2, 3, n, n], content="scene",
                                           prefix=b1["name"])},
              outputs=outputs)
    return [b1, b2]


def make_variant(zoo_dir, variant):
    from make_references import write_case

    arch, size, dynamo = parse_variant(variant)
    path = os.path.join(zoo_dir, variant + ".onnx")
    stamp_path = os.path.join(zoo_dir, variant + ".stamp")
    config = make_config(arch, size)
    stamp = stamp_of(arch, size, dynamo, config)
    old = None
    if os.path.exists(path) and os.path.exists(stamp_path):
        with open(stamp_path, encoding="utf-8") as f:
            try:
                old = json.load(f)
            except json.JSONDecodeError:
                old = None
    if old is not None and {k: v for k, v in old.items() if k != "measured"} == stamp:
        print(f"{variant}.onnx: up to date ({old.get('measured', {})})", flush=True)
        os.utime(path)
        os.utime(stamp_path)
    else:
        # wall and CPU time: on a shared machine the first overstates,
        # the second (all threads together) says what it costs
        start, cpu = time.time(), time.process_time()
        model, _, example = build(arch, size)
        built, built_cpu = time.time() - start, time.process_time() - cpu
        start, cpu = time.time(), time.process_time()
        export(model, example, path, dynamo)
        exported, exported_cpu = time.time() - start, time.process_time() - cpu
        opsets, ops = op_summary(path)
        print(f"{variant}.onnx: built in {built:.1f} s ({built_cpu:.1f} s CPU), exported in "
              f"{exported:.1f} s ({exported_cpu:.1f} s CPU), "
              f"{os.path.getsize(path) / 2**20:.1f} MiB, opsets {opsets}", flush=True)
        print(f"  ops: {' '.join(ops)}", flush=True)
        try:
            times = ort_check(path, model, example)
        except Exception:
            os.remove(path)  # a file that failed its check must not look made
            raise
        print(f"  ONNX Runtime: loads, runs batch 1 in {times[1]:.2f} s, batch 2 in "
              f"{times[2]:.2f} s", flush=True)
        stamp["measured"] = {"build_s": round(built, 1), "build_cpu_s": round(built_cpu, 1),
                             "export_s": round(exported, 1),
                             "export_cpu_s": round(exported_cpu, 1),
                             "mib": round(os.path.getsize(path) / 2**20, 1),
                             "ort_b1_s": round(times[1], 2), "ort_b2_s": round(times[2], 2),
                             "opsets": opsets}
        with open(stamp_path + ".tmp", "w", encoding="utf-8") as f:
            json.dump(stamp, f, indent=1)
            f.write("\n")
        os.replace(stamp_path + ".tmp", stamp_path)
        del model  # before the next variant's: the default sizes take GiB
    # case files are rewritten only when they change, so that an up-to-date
    # variant leaves the references alone; touched either way (see above)
    written = cases(variant)
    for suffix in ("_b1", "_b2"):  # left by a version that wrote other cases
        stale = os.path.join(zoo_dir, "cases", variant + suffix + ".json")
        if os.path.exists(stale) and variant + suffix not in [c["name"] for c in written]:
            os.remove(stale)
    for case in written:
        case_path = os.path.join(zoo_dir, "cases", case["name"] + ".json")
        same = False
        if os.path.exists(case_path):
            with open(case_path, encoding="utf-8") as f:
                try:
                    same = json.load(f) == case
                except json.JSONDecodeError:
                    same = False
        if same:
            os.utime(case_path)
        else:
            write_case(zoo_dir, case)


def main():
    args = sys.argv[1:]
    if args[:1] == ["--list"]:
        # for models/detectors.cmake, at configure time: no torch import
        which = args[1] if len(args) > 1 else "all"
        if which == "cases":
            print("\n".join(c["name"] for v in REGISTERED for c in cases(v)))
        else:
            print("\n".join(REGISTERED if which == "registered" else all_variants()))
        return
    if len(args) < 2:
        sys.exit(__doc__)
    zoo_dir = os.path.abspath(args[0])
    variants = args[1:]
    for v in variants:
        parse_variant(v)  # fail on a typo before any work
    os.makedirs(zoo_dir, exist_ok=True)
    import torch

    torch.set_grad_enabled(False)
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    # tracing warns about every Python-side shape computation; they are
    # expected for an export and would bury real errors
    warnings.simplefilter("ignore")
    for v in variants:
        make_variant(zoo_dir, v)


if __name__ == "__main__":
    main()
