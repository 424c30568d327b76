"""Shared pieces of the zoo exporters: reproducible random weights that give
well-spread outputs, and a guarded ONNX export.

No trained weights can be fetched, so every model starts from its own
random initialisation. Left like that, eval-mode BatchNorm is the identity
(running mean 0, variance 1) and activations either explode or collapse;
a detector's scores then come out all equal, and a comparison of TopK or
NMS results between two runtimes is decided by rounding noise instead of
by the model. The helpers below fix the statistics and the output scales
from a few synthetic images, deterministically.
"""

import os
import tempfile

import torch
import torch.nn.functional as F


def synthetic_images(n, height, width, seed):
    """Image-like tensors in [0, 1], of the same kind as the test inputs
    that make_references.py draws: smooth colour fields (upsampled
    low-resolution noise), solid rectangles, and a little pixel noise."""
    g = torch.Generator().manual_seed(seed)
    low = torch.rand(n, 3, 6, 6, generator=g)
    x = F.interpolate(low, size=(height, width), mode="bilinear", align_corners=False)
    for i in range(n):
        for _ in range(6):
            h = int(height * (0.1 + 0.35 * torch.rand(1, generator=g).item()))
            w = int(width * (0.1 + 0.35 * torch.rand(1, generator=g).item()))
            y0 = int((height - h) * torch.rand(1, generator=g).item())
            x0 = int((width - w) * torch.rand(1, generator=g).item())
            x[i, :, y0:y0 + h, x0:x0 + w] = torch.rand(3, 1, 1, generator=g)
    x = x + 0.04 * (torch.rand(n, 3, height, width, generator=g) - 0.5)
    return x.clamp(0.0, 1.0)


IMAGENET_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
IMAGENET_STD = torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1)


def imagenet_normalize(x):
    return (x - IMAGENET_MEAN) / IMAGENET_STD


@torch.no_grad()
def calibrate_batchnorm(model, batches):
    """Replaces the BatchNorm running statistics by the exact averages over
    the given batches, with the rest of the model in eval mode (so detectors
    run their inference path). `batches` is a list of argument tuples."""
    model.eval()
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None  # cumulative average over all batches seen
        m.train()
    for args in batches:
        model(*args)
    model.eval()


@torch.no_grad()
def rescale_layer(model, layer, batches, target_std):
    """Scales `layer`'s weight (and bias) so that its output has standard
    deviation `target_std` over the given batches. Used on heads whose
    random outputs would otherwise be nearly constant."""
    seen = []
    handle = layer.register_forward_hook(lambda _m, _i, out: seen.append(out.detach().flatten()))
    try:
        for args in batches:
            model(*args)
    finally:
        handle.remove()
    std = torch.cat(seen).std().item()
    if std <= 0:
        raise RuntimeError(f"cannot rescale {layer}: constant output")
    layer.weight.mul_(target_std / std)
    if layer.bias is not None:
        layer.bias.mul_(target_std / std)


def export(model, args, path, input_names, output_names, dynamic_axes=None, opset=17, dynamo=False):
    """torch.onnx.export into a temporary file renamed into place, so an
    interrupted export never leaves a file that looks up to date.

    dynamo=False is the TorchScript-based exporter at `opset` (the zoo's
    original exports); dynamo=True is torch.onnx.export's current default,
    the torch.export-based exporter, at its own default opset (`opset` is
    ignored): those files show what today's PyTorch users hand a runtime."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".onnx", dir=os.path.dirname(os.path.abspath(path)))
    os.close(fd)
    if dynamo:
        # weights inside the .onnx file, as the other zoo models: the model
        # test and the CLI tests open one file
        options = dict(dynamo=True, external_data=False, optimize=True, verbose=False)
    else:
        options = dict(dynamo=False, opset_version=opset, do_constant_folding=True)
    try:
        # With autograd off, nn.MultiheadAttention takes a fused fast path
        # that has no ONNX export; with it on, the exporter sees plain ops.
        with torch.enable_grad():
            torch.onnx.export(
                model,
                args,
                tmp,
                input_names=input_names,
                output_names=output_names,
                dynamic_axes=dynamic_axes,
                **options,
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it private
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def op_types(path):
    """Operator types of a model, subgraphs included."""
    import onnx

    found = set()

    def walk(graph):
        for node in graph.node:
            found.add(node.op_type)
            for attr in node.attribute:
                if attr.type == onnx.AttributeProto.GRAPH:
                    walk(attr.g)
                for sub in attr.graphs:
                    walk(sub)

    model = onnx.load(path)
    onnx.checker.check_model(model)
    walk(model.graph)
    return found
