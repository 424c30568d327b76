"""Exports the torchvision part of the model zoo to ONNX.

usage: export_torchvision.py OUT_DIR [--dynamo]

Writes OUT_DIR/{resnet50,mobilenet_v3_small,vit_tiny,fasterrcnn}.onnx with
the TorchScript-based exporter at opset 17. With --dynamo, writes
OUT_DIR/{resnet50,mobilenet_v3_small,vit_tiny}_dynamo.onnx instead: the same
models (same seeds, same weights) through torch.onnx.export's default
exporter, built on torch.export, which writes opset 18 and later. Faster
R-CNN has no such variant: torch.export stops at its data-dependent shapes
(the number of boxes left after the score threshold decides branches in
torchvision's batched NMS and RoI pooling), which only the TorchScript
exporter turns into graph operators.
Weights are random (fixed seeds, eval mode) with BatchNorm statistics and
head scales calibrated on synthetic images; see zoo_common.py for why.
"""

import os
import sys
import time
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torchvision  # noqa: E402
from torchvision.models.detection.faster_rcnn import FastRCNNPredictor, TwoMLPHead  # noqa: E402

import zoo_common as zc  # noqa: E402

# The zoo's original exports were opset 17 and stay so, to keep those
# cases as they were; the --dynamo variants cover the newer opsets.
OPSET = 17


class WithProbs(torch.nn.Module):
    """A classifier returning logits and softmax probabilities, so that
    both tolerance kinds of the model test are exercised."""

    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        logits = self.net(x)
        return logits, torch.softmax(logits, dim=-1)


DYNAMO = False  # set by --dynamo
SUFFIX = ""  # file name suffix of the variant


def classifier(name, net, head, size, out_dir, seed):
    calib = [(zc.imagenet_normalize(zc.synthetic_images(4, size, size, seed + i)),) for i in range(2)]
    zc.calibrate_batchnorm(net, calib)
    # logits of a few units, as a trained classifier gives, instead of the
    # near-uniform output of a random head
    zc.rescale_layer(net, head, calib, 2.0)
    model = WithProbs(net).eval()
    # torch.export fixes any axis whose example size is 1, the batch too
    x = calib[0][0][:2 if DYNAMO else 1]
    zc.export(
        model,
        (x,),
        os.path.join(out_dir, name + SUFFIX + ".onnx"),
        ["input"],
        ["logits", "probs"],
        dynamic_axes={"input": {0: "batch"}, "logits": {0: "batch"}, "probs": {0: "batch"}},
        opset=OPSET,
        dynamo=DYNAMO,
    )


def resnet50(out_dir):
    torch.manual_seed(50)
    net = torchvision.models.resnet50(weights=None)
    classifier("resnet50", net, net.fc, 224, out_dir, 500)


def mobilenet_v3_small(out_dir):
    torch.manual_seed(3)
    net = torchvision.models.mobilenet_v3_small(weights=None)
    classifier("mobilenet_v3_small", net, net.classifier[-1], 224, out_dir, 300)


def vit_tiny(out_dir):
    torch.manual_seed(16)
    net = torchvision.models.VisionTransformer(
        image_size=64, patch_size=16, num_layers=4, num_heads=4, hidden_dim=128, mlp_dim=512,
        num_classes=100)
    # torchvision zero-initialises the head (for fine-tuning); a zero head
    # would make every logit 0, and cannot be rescaled.
    torch.nn.init.normal_(net.heads.head.weight, std=0.1)
    classifier("vit_tiny", net, net.heads.head, 64, out_dir, 1600)


def build_fasterrcnn():
    """Faster R-CNN (MobileNetV3-Large FPN, 320 px) with its whole inference
    path in the graph: resize/normalise, RPN TopK + NMS, RoIAlign, box head,
    score threshold (NonZero) and per-class NMS. 11 classes and a 256-wide
    box head instead of 91 and 1024 keep the file small; the graph has the
    same structure. Fewer proposals and detections than the defaults
    (150/150/100, threshold 0.05): with random weights, every NMS among
    that many overlapping, similarly scored boxes has near-ties, and the
    kept boxes would then depend on float32 rounding (see the conditioning
    check in make_references.py)."""
    torch.manual_seed(320)
    model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
        weights=None, weights_backbone=None, num_classes=11, rpn_pre_nms_top_n_test=50,
        rpn_post_nms_top_n_test=50, box_detections_per_img=20, box_score_thresh=0.2)
    model.roi_heads.box_head = TwoMLPHead(256 * 7 * 7, 256)
    model.roi_heads.box_predictor = FastRCNNPredictor(256, 11)
    model.eval()
    batches = [([img for img in zc.synthetic_images(2, 320, 320, 3200 + i)],) for i in range(2)]
    zc.calibrate_batchnorm(model, batches)
    # Spread objectness, class scores and box deltas so that the RPN's TopK,
    # the score threshold and both NMS passes select by clear margins.
    # The RPN is fixed first: the box head sees its proposals.
    zc.rescale_layer(model, model.rpn.head.cls_logits, batches, 2.0)
    zc.rescale_layer(model, model.rpn.head.bbox_pred, batches, 1.0)
    zc.rescale_layer(model, model.roi_heads.box_predictor.cls_score, batches, 2.0)
    zc.rescale_layer(model, model.roi_heads.box_predictor.bbox_pred, batches, 1.0)
    return model, batches[0][0][0]


def fasterrcnn(out_dir):
    model, example = build_fasterrcnn()
    zc.export(
        model,
        ([example],),
        os.path.join(out_dir, "fasterrcnn.onnx"),
        ["image"],
        ["boxes", "labels", "scores"],
        opset=OPSET,
    )
    ops = zc.op_types(os.path.join(out_dir, "fasterrcnn.onnx"))
    missing = {"TopK", "Gather", "NonZero", "NonMaxSuppression", "RoiAlign"} - ops
    if missing:
        raise RuntimeError(f"fasterrcnn.onnx lacks {sorted(missing)}")


def main():
    global DYNAMO, SUFFIX
    args = sys.argv[1:]
    if "--dynamo" in args:
        args.remove("--dynamo")
        DYNAMO, SUFFIX = True, "_dynamo"
    if len(args) != 1:
        sys.exit(__doc__)
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    torch.set_grad_enabled(False)
    # tracing warns about every Python-side shape computation of the
    # detector; they are expected for an export and would bury real errors
    warnings.simplefilter("ignore")
    exports = (resnet50, mobilenet_v3_small, vit_tiny) + (() if DYNAMO else (fasterrcnn,))
    for export in exports:
        start = time.time()
        export(out_dir)
        name = export.__name__ + SUFFIX + ".onnx"
        zc.op_types(os.path.join(out_dir, name))  # onnx.checker
        print(f"{name}: exported in {time.time() - start:.1f} s", flush=True)


if __name__ == "__main__":
    main()
