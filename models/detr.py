"""A small DETR-family detector in the style of RT-DETR / D-FINE, exported
to ONNX with a dynamic batch axis.

usage: detr.py OUT_DIR            writes OUT_DIR/detr.onnx (opset 17)
       detr.py OUT_DIR --dynamo   writes OUT_DIR/detr_dynamo.onnx: the same
                                  model through torch.onnx.export's default,
                                  torch.export-based exporter (opset 18+)

The graph has what makes these detectors hard for a runtime:
- a CNN backbone giving three feature levels (strides 8, 16, 32);
- one transformer encoder layer over the tokens of all levels;
- TopK query selection over encoder tokens, the chosen tokens and anchor
  boxes fetched with torch.gather (GatherElements, int64 indices);
- a decoder whose cross-attention is multi-scale deformable attention:
  per head, level and point a sampling location and a weight, the
  features read with grid_sample (bilinear, zeros padding,
  align_corners=False) and summed; boxes refined layer by layer;
- a post-processor: sigmoid scores, TopK over queries x classes,
  labels = index % classes, boxes gathered by index // classes and scaled
  to the input size read from the input's shape.
Reshapes take the batch size from the input, so the export is full of
Shape -> Gather -> (Unsqueeze) -> Concat -> Reshape chains in int64.
"""

import math
import os
import sys
import time
import warnings

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import zoo_common as zc  # noqa: E402

IMAGE = 128  # input height and width
DIM = 64  # model width
HEADS = 4
LEVELS = 3
POINTS = 4
QUERIES = 30
CLASSES = 10
DETECTIONS = 20
DECODER_LAYERS = 2
OPSET = 17  # GridSample needs 16


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout),
                         nn.SiLU())


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 16, 2), conv_bn(16, 32, 2), conv_bn(32, 48, 2))
        self.stage4 = conv_bn(48, 96, 2)
        self.stage5 = conv_bn(96, 128, 2)
        # 1x1 projections to the model width, as RT-DETR's input_proj
        self.proj = nn.ModuleList(
            nn.Sequential(nn.Conv2d(c, DIM, 1, bias=False), nn.BatchNorm2d(DIM)) for c in (48, 96, 128))

    def forward(self, x):
        c3 = self.stem(x)
        c4 = self.stage4(c3)
        c5 = self.stage5(c4)
        return [p(c) for p, c in zip(self.proj, (c3, c4, c5))]


def level_shapes():
    return [(IMAGE // s, IMAGE // s) for s in (8, 16, 32)]


def sine_position(h, w):
    """2-D sine-cosine embedding of a h x w grid, [h*w, DIM]."""
    y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32), torch.arange(w, dtype=torch.float32),
                          indexing="ij")
    quarter = DIM // 4
    omega = 1.0 / (10000 ** (torch.arange(quarter, dtype=torch.float32) / quarter))
    ox = x.flatten()[:, None] * omega[None]
    oy = y.flatten()[:, None] * omega[None]
    return torch.cat([ox.sin(), ox.cos(), oy.sin(), oy.cos()], dim=1)


def anchors_unact():
    """Anchor boxes (cx, cy, w, h) of every token in inverse-sigmoid space."""
    out = []
    for lvl, (h, w) in enumerate(level_shapes()):
        y, x = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                              torch.arange(w, dtype=torch.float32), indexing="ij")
        cxcy = torch.stack([(x + 0.5) / w, (y + 0.5) / h], -1).reshape(-1, 2)
        wh = torch.full_like(cxcy, 0.05 * 2.0 ** lvl)
        out.append(torch.cat([cxcy, wh], -1))
    a = torch.cat(out).clamp(1e-4, 1 - 1e-4)
    return torch.log(a / (1 - a))


def inverse_sigmoid(x, eps=1e-5):
    x = x.clamp(eps, 1 - eps)
    return torch.log(x / (1 - x))


class Attention(nn.Module):
    """Multi-head self-attention written with plain reshapes so the batch
    size flows through the graph as a Shape-derived int64 value."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(DIM, 3 * DIM)
        self.out = nn.Linear(DIM, DIM)

    def forward(self, x, pos):
        b, n = x.shape[0], x.shape[1]
        qk = (x + pos) @ self.qkv.weight[: 2 * DIM].t() + self.qkv.bias[: 2 * DIM]
        v = x @ self.qkv.weight[2 * DIM:].t() + self.qkv.bias[2 * DIM:]
        q, k = qk.reshape(b, n, 2, HEADS, DIM // HEADS).permute(2, 0, 3, 1, 4)
        v = v.reshape(b, n, HEADS, DIM // HEADS).transpose(1, 2)
        att = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(DIM // HEADS), dim=-1)
        return self.out((att @ v).transpose(1, 2).reshape(b, n, DIM))


class EncoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attention()
        self.norm1 = nn.LayerNorm(DIM)
        self.ffn = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.GELU(), nn.Linear(2 * DIM, DIM))
        self.norm2 = nn.LayerNorm(DIM)

    def forward(self, x, pos):
        x = self.norm1(x + self.attn(x, pos))
        return self.norm2(x + self.ffn(x))


class DeformableAttention(nn.Module):
    """Multi-scale deformable attention (Deformable DETR), with the
    grid_sample formulation that RT-DETR and D-FINE export."""

    def __init__(self):
        super().__init__()
        self.offsets = nn.Linear(DIM, HEADS * LEVELS * POINTS * 2)
        self.weights = nn.Linear(DIM, HEADS * LEVELS * POINTS)
        self.value = nn.Linear(DIM, DIM)
        self.out = nn.Linear(DIM, DIM)
        # Deformable DETR's start: each head looks in its own direction,
        # farther for later points; small weights make it input-dependent.
        angle = torch.arange(HEADS, dtype=torch.float32) * (2 * math.pi / HEADS)
        grid = torch.stack([angle.cos(), angle.sin()], -1)
        grid = grid / grid.abs().max(-1, keepdim=True).values
        grid = grid[:, None, None, :].repeat(1, LEVELS, POINTS, 1)
        grid = grid * torch.arange(1, POINTS + 1, dtype=torch.float32)[None, None, :, None]
        with torch.no_grad():
            self.offsets.weight.mul_(0.1)
            self.offsets.bias.copy_(grid.flatten())

    def forward(self, query, ref, memory, shapes):
        b, nq = query.shape[0], query.shape[1]
        dh = DIM // HEADS
        value = self.value(memory).reshape(b, -1, HEADS, dh)
        off = self.offsets(query).reshape(b, nq, HEADS, LEVELS, POINTS, 2)
        w = torch.softmax(self.weights(query).reshape(b, nq, HEADS, LEVELS * POINTS), -1)
        # offsets are in units of half the reference box, per point
        loc = ref[:, :, None, None, None, :2] + off / POINTS * ref[:, :, None, None, None, 2:] * 0.5
        grids = 2 * loc - 1
        sampled = []
        per_level = value.split([h * w_ for h, w_ in shapes], dim=1)
        for lvl, (h, w_) in enumerate(shapes):
            v = per_level[lvl].flatten(2).transpose(1, 2).reshape(b * HEADS, dh, h, w_)
            g = grids[:, :, :, lvl].transpose(1, 2).flatten(0, 1)  # [b*HEADS, nq, POINTS, 2]
            sampled.append(F.grid_sample(v, g, mode="bilinear", padding_mode="zeros",
                                         align_corners=False))
        s = torch.stack(sampled, dim=-2).flatten(-2)  # [b*HEADS, dh, nq, LEVELS*POINTS]
        w = w.transpose(1, 2).reshape(b * HEADS, 1, nq, LEVELS * POINTS)
        out = (s * w).sum(-1).reshape(b, HEADS * dh, nq).transpose(1, 2)
        return self.out(out)


class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.self_attn = Attention()
        self.norm1 = nn.LayerNorm(DIM)
        self.cross = DeformableAttention()
        self.norm2 = nn.LayerNorm(DIM)
        self.ffn = nn.Sequential(nn.Linear(DIM, 2 * DIM), nn.ReLU(), nn.Linear(2 * DIM, DIM))
        self.norm3 = nn.LayerNorm(DIM)

    def forward(self, x, pos, ref, memory, shapes):
        x = self.norm1(x + self.self_attn(x, pos))
        x = self.norm2(x + self.cross(x + pos, ref, memory, shapes))
        return self.norm3(x + self.ffn(x))


def mlp(din, dout):
    return nn.Sequential(nn.Linear(din, DIM), nn.ReLU(), nn.Linear(DIM, dout))


class TinyDETR(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = Backbone()
        self.level_embed = nn.Parameter(torch.randn(LEVELS, DIM) * 0.1)
        self.encoder = EncoderLayer()
        self.enc_out = nn.Sequential(nn.Linear(DIM, DIM), nn.LayerNorm(DIM))
        self.enc_score = nn.Linear(DIM, CLASSES)
        self.enc_box = mlp(DIM, 4)
        self.query_pos = mlp(4, DIM)
        self.decoder = nn.ModuleList(DecoderLayer() for _ in range(DECODER_LAYERS))
        self.box_heads = nn.ModuleList(mlp(DIM, 4) for _ in range(DECODER_LAYERS))
        self.score_head = nn.Linear(DIM, CLASSES)
        shapes = level_shapes()
        self.shapes = shapes
        self.register_buffer("pos", torch.cat([sine_position(h, w) for h, w in shapes]))
        self.register_buffer("anchors", anchors_unact())
        # The TorchScript exporter reads the input size from the input's
        # shape at run time; torch.export fails on indexing the tensor of
        # torch._shape_as_tensor (it has no data while tracing), and
        # with only the batch axis dynamic the size is a constant there.
        self.size_from_shape = True

    def forward(self, images):
        feats = self.backbone(images)
        b = images.shape[0]
        tokens = torch.cat(
            [f.flatten(2).transpose(1, 2) + self.level_embed[i] for i, f in enumerate(feats)], 1)
        pos = self.pos[None]
        memory = self.encoder(tokens, pos)

        # query selection: the best-scoring encoder tokens become queries
        enc = self.enc_out(memory)
        enc_logits = self.enc_score(enc)
        enc_boxes = self.enc_box(enc) + self.anchors[None]
        top = torch.topk(enc_logits.max(-1).values, QUERIES, dim=1).indices  # [b, QUERIES]
        query = torch.gather(enc, 1, top.unsqueeze(-1).repeat(1, 1, DIM))
        ref_unact = torch.gather(enc_boxes, 1, top.unsqueeze(-1).repeat(1, 1, 4))
        ref = torch.sigmoid(ref_unact)

        for layer, box_head in zip(self.decoder, self.box_heads):
            query = layer(query, self.query_pos(ref), ref, memory, self.shapes)
            ref = torch.sigmoid(box_head(query) + inverse_sigmoid(ref))
        logits = self.score_head(query)  # [b, QUERIES, CLASSES]

        # post-processing, as RT-DETR's deploy mode
        scores = torch.sigmoid(logits).flatten(1)
        scores, index = torch.topk(scores, DETECTIONS, dim=1)
        labels = index % CLASSES
        which = torch.div(index, CLASSES, rounding_mode="floor")
        cx, cy, w, h = ref.unbind(-1)
        xyxy = torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], -1)
        if self.size_from_shape:
            # (W, H, W, H) from the input's shape at run time, not a traced constant
            size = torch._shape_as_tensor(images)[torch.tensor([3, 2, 3, 2])].to(xyxy.dtype)
        else:
            h, w = images.shape[2], images.shape[3]
            size = xyxy.new_tensor([w, h, w, h])
        boxes = torch.gather(xyxy * size, 1, which.unsqueeze(-1).repeat(1, 1, 4))
        return labels.reshape(b, DETECTIONS), boxes, scores


def has_shape_reshape_chain(model):
    """True when some Reshape's shape comes from a Concat fed (directly or
    through Unsqueeze) by a Gather of a Shape."""
    producer = {out: node for node in model.graph.node for out in node.output}

    def made_by(name, op):
        node = producer.get(name)
        return node is not None and node.op_type == op

    for node in model.graph.node:
        if node.op_type != "Reshape" or not made_by(node.input[1], "Concat"):
            continue
        for part in producer[node.input[1]].input:
            src = producer.get(part)
            if src is not None and src.op_type == "Unsqueeze":
                src = producer.get(src.input[0])
            if src is not None and src.op_type == "Gather" and made_by(src.input[0], "Shape"):
                return True
    return False


def main():
    args = sys.argv[1:]
    dynamo = "--dynamo" in args
    if dynamo:
        args.remove("--dynamo")
    if len(args) != 1:
        sys.exit(__doc__)
    out_dir = args[0]
    os.makedirs(out_dir, exist_ok=True)
    warnings.simplefilter("ignore")  # tracer warnings on shape arithmetic are expected
    torch.set_grad_enabled(False)
    start = time.time()
    torch.manual_seed(1717)
    model = TinyDETR().eval()
    batches = [(zc.synthetic_images(4, IMAGE, IMAGE, 170 + i),) for i in range(2)]
    zc.calibrate_batchnorm(model, batches)
    # class scores spread enough that both TopKs choose by clear margins
    zc.rescale_layer(model, model.enc_score, batches, 2.0)
    zc.rescale_layer(model, model.score_head, batches, 2.0)
    model.size_from_shape = not dynamo
    name = "detr_dynamo.onnx" if dynamo else "detr.onnx"
    path = os.path.join(out_dir, name)
    zc.export(
        model,
        # torch.export fixes any axis whose example size is 1, the batch too
        (batches[0][0][:2 if dynamo else 1],),
        path,
        ["images"],
        ["labels", "boxes", "scores"],
        dynamic_axes={n: {0: "batch"} for n in ("images", "labels", "boxes", "scores")},
        opset=OPSET,
        dynamo=dynamo,
    )
    import onnx

    ops = zc.op_types(path)
    wanted = {"Reshape", "GatherElements", "TopK", "GridSample"}
    # The torch.export-based exporter writes its reshapes with 0 and -1 in
    # constant shapes where it can, so only the TorchScript export has the
    # Shape -> Gather -> Concat -> Reshape chains.
    if not dynamo:
        wanted |= {"Shape", "Gather", "Concat"}
    missing = wanted - ops
    if missing:
        raise RuntimeError(f"{name} lacks {sorted(missing)}")
    if not dynamo and not has_shape_reshape_chain(onnx.load(path)):
        raise RuntimeError(f"{name} has no Shape -> Gather -> Concat -> Reshape chain")
    print(f"{name}: exported in {time.time() - start:.1f} s; ops: {' '.join(sorted(ops))}")


if __name__ == "__main__":
    main()
