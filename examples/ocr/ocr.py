"""The OCR example (onyx_ocr, examples/ocr/main.c) through the Python
package: PaddleOCR's PP-OCRv4 detector and recogniser run by onyx, the same
steps and thresholds as the C program, so it prints the same lines:

    text<TAB>confidence<TAB>x1,y1 x2,y2 x3,y3 x4,y4

usage: python examples/ocr/ocr.py [--models DIR] [--threads N] IMAGE

Pillow reads the image (PNG, PPM...). The image operations are OpenCV's
(cv2.resize INTER_LINEAR, cv2.warpPerspective INTER_CUBIC with replicated
borders, cv2.findContours, cv2.minAreaRect) and the box growth pyclipper's,
as PaddleOCR's pipeline has them; the C program reimplements exactly these
(see README.md, "Pipeline"). On failure: one line `ocr.py: error: ...` on
stderr and exit status 1."""

import argparse
import math
import pathlib
import sys

import cv2
import numpy as np
import pyclipper
from PIL import Image

import onyx

DEFAULT_MODELS = pathlib.Path(__file__).resolve().parents[2] / "build" / "examples" / "ocr" / "models"
DET_MODEL, REC_MODEL, DICT_FILE = ("ch_PP-OCRv4_det_infer.onnx", "ch_PP-OCRv4_rec_infer.onnx",
                                   "ppocr_keys_v1.txt")
DET_LIMIT_SIDE = 960
REC_HEIGHT, REC_MIN_WIDTH, REC_MAX_WIDTH = 48, 320, 2560
DROP_SCORE = 0.5
THRESH, BOX_THRESH, UNCLIP_RATIO, MIN_SIDE = 0.3, 0.6, 1.5, 3
MEAN = np.array([0.485, 0.456, 0.406], np.float32)
STD = np.array([0.229, 0.224, 0.225], np.float32)


class OcrError(Exception):
    pass


def load_image(path):
    """RGB uint8; transparent areas become white, as in the C program."""
    try:
        with Image.open(path) as im:
            im.load()
            if im.mode in ("RGBA", "LA") or (im.mode == "P" and "transparency" in im.info):
                page = Image.new("RGBA", im.size, (255, 255, 255, 255))
                page.alpha_composite(im.convert("RGBA"))
                im = page
            return np.asarray(im.convert("RGB"))
    except (OSError, ValueError) as e:
        raise OcrError(f"{path}: {e}") from None


def load_dictionary(path):
    try:
        text = pathlib.Path(path).read_bytes().decode("utf-8")
    except OSError as e:
        raise OcrError(f"cannot open {path}: {e.strerror}") from None
    entries = text.split("\n")
    if entries and entries[-1] == "":  # a final line end starts no entry
        entries.pop()
    entries = [e[:-1] if e.endswith("\r") else e for e in entries]
    if not entries:
        raise OcrError(f"{path} is empty")
    return entries


# ---- detection ----

def det_side(side, ratio):
    """A multiple of 32 (Python's round: halves to even), at least 32."""
    return max(32, round(int(side * ratio) / 32) * 32)


def order_clockwise(p):
    """Top-left (smallest x + y), top-right, bottom-right (largest x + y),
    bottom-left: of the two others, top-right has the smaller y - x."""
    s = p[:, 0] + p[:, 1]
    first, last = int(np.argmin(s)), int(np.argmax(s))
    if first == last:
        last = 2 if first == 3 else 3
    a, b = [k for k in range(4) if k not in (first, last)]
    if p[b, 1] - p[b, 0] < p[a, 1] - p[a, 0]:
        a, b = b, a
    return p[[first, a, last, b]]


def box_score(prob, corners):
    """Mean probability over the pixels the quadrilateral covers."""
    h, w = prob.shape
    x0, x1 = (int(np.clip(f(v), 0, w - 1)) for f, v in ((math.floor, corners[:, 0].min()),
                                                          (math.ceil, corners[:, 0].max())))
    y0, y1 = (int(np.clip(f(v), 0, h - 1)) for f, v in ((math.floor, corners[:, 1].min()),
                                                          (math.ceil, corners[:, 1].max())))
    mask = np.zeros((y1 - y0 + 1, x1 - x0 + 1), np.uint8)
    cv2.fillPoly(mask, [(corners - [x0, y0]).astype(np.int32)], 1)
    return cv2.mean(prob[y0:y1 + 1, x0:x1 + 1], mask)[0]


def rect_of(points):
    """The minimum-area rectangle: its four corners and shorter side."""
    (cx, cy), (rw, rh), angle = cv2.minAreaRect(points)
    return cv2.boxPoints(((cx, cy), (rw, rh), angle)), min(rw, rh), rw * rh, 2 * (rw + rh)


def component_box(prob, contour, img_w, img_h):
    corners, short, area, perimeter = rect_of(contour)
    if short < MIN_SIDE:
        return None
    score = box_score(prob, corners)
    if score < BOX_THRESH:
        return None
    grow = pyclipper.PyclipperOffset()
    grow.AddPath(corners.astype(np.int64).tolist(), pyclipper.JT_ROUND, pyclipper.ET_CLOSEDPOLYGON)
    grown = grow.Execute(area * UNCLIP_RATIO / perimeter)
    if len(grown) != 1:
        return None
    corners, short, _, _ = rect_of(np.array(grown[0], np.float32))
    if short < MIN_SIDE + 2:
        return None
    mh, mw = prob.shape
    box = np.empty((4, 2))
    box[:, 0] = np.clip(np.round(corners[:, 0].astype(np.float64) / mw * img_w), 0, img_w)
    box[:, 1] = np.clip(np.round(corners[:, 1].astype(np.float64) / mh * img_h), 0, img_h)
    box = order_clockwise(box)
    box[:, 0] = np.minimum(box[:, 0], img_w - 1)
    box[:, 1] = np.minimum(box[:, 1], img_h - 1)
    if (math.floor(np.hypot(*(box[0] - box[1]))) <= 3
            or math.floor(np.hypot(*(box[0] - box[3]))) <= 3):
        return None
    return box


def reading_order(boxes):
    """Top to bottom; left to right where tops are within 10 pixels."""
    boxes = sorted(boxes, key=lambda b: (b[0, 1], b[0, 0]))
    for i in range(len(boxes) - 1):
        for j in range(i, -1, -1):
            a, b = boxes[j], boxes[j + 1]
            if abs(b[0, 1] - a[0, 1]) < 10 and b[0, 0] < a[0, 0]:
                boxes[j], boxes[j + 1] = b, a
            else:
                break
    return boxes


def detect(sess, img):
    h, w = img.shape[:2]
    ratio = DET_LIMIT_SIDE / max(h, w) if max(h, w) > DET_LIMIT_SIDE else 1.0
    dw, dh = det_side(w, ratio), det_side(h, ratio)
    small = cv2.resize(img, (dw, dh), interpolation=cv2.INTER_LINEAR)
    # BGR, ImageNet statistics, in float32 as the models were trained
    x = (small[:, :, ::-1].astype(np.float32) / np.float32(255) - MEAN) / STD
    (prob,) = sess.run(None, {sess.get_inputs()[0].name: x.transpose(2, 0, 1)[None]})
    if prob.shape != (1, 1, dh, dw):
        raise OcrError("detection: unexpected output shape")
    prob = prob[0, 0]
    mask = (prob > THRESH).astype(np.uint8)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    boxes = [component_box(prob, c.reshape(-1, 2).astype(np.float32), w, h)
             for c in contours[:1000]]
    return reading_order([b for b in boxes if b is not None])


# ---- recognition ----

def crop(img, box):
    """The box straightened to a rectangle; tall crops turned a quarter."""
    w = int(max(np.hypot(*(box[0] - box[1])), np.hypot(*(box[2] - box[3]))))
    h = int(max(np.hypot(*(box[0] - box[3])), np.hypot(*(box[1] - box[2]))))
    if w < 1 or h < 1:
        return None
    rect = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    to_image = cv2.getPerspectiveTransform(rect, box.astype(np.float32))
    out = cv2.warpPerspective(img, to_image, (w, h), flags=cv2.INTER_CUBIC | cv2.WARP_INVERSE_MAP,
                              borderMode=cv2.BORDER_REPLICATE)
    return np.ascontiguousarray(np.rot90(out)) if h >= 1.5 * w else out


def ctc_decode(entries, probs):
    """Best class per step, repeats merged, blanks (0) dropped; the class
    past the dictionary is a space. Confidence: the kept steps' mean."""
    best = probs.argmax(axis=1)
    text, scores, prev = [], [], -1
    for t, k in enumerate(best.tolist()):
        if k != 0 and k != prev:
            text.append(entries[k - 1] if k <= len(entries) else " ")
            scores.append(float(probs[t, k]))
        prev = k
    return "".join(text), (math.fsum(scores) / len(scores) if scores else 0.0)


def recognise(sess, entries, line_img):
    ch, cw = line_img.shape[:2]
    wh = cw / ch
    width = min(int(REC_HEIGHT * max(REC_MIN_WIDTH / REC_HEIGHT, wh)), REC_MAX_WIDTH)
    resized_w = max(1, min(width, int(math.ceil(REC_HEIGHT * wh))))
    line = cv2.resize(line_img, (resized_w, REC_HEIGHT), interpolation=cv2.INTER_LINEAR)
    x = np.zeros((1, 3, REC_HEIGHT, width), np.float32)
    x[0, :, :, :resized_w] = ((line[:, :, ::-1].astype(np.float32) / np.float32(255)
                               - np.float32(0.5)) / np.float32(0.5)).transpose(2, 0, 1)
    (probs,) = sess.run(None, {sess.get_inputs()[0].name: x})
    if probs.ndim != 3 or probs.shape[0] != 1 or probs.shape[2] != len(entries) + 2:
        raise OcrError(f"recognition: output does not match the {len(entries)}-entry dictionary")
    return ctc_decode(entries, probs[0])


def read_text(image_path, models, threads=0):
    """[(text, confidence, box)] of the image's text lines in reading order."""
    img = load_image(image_path)
    entries = load_dictionary(models / DICT_FILE)
    so = onyx.SessionOptions()
    so.intra_op_num_threads = threads
    try:
        det = onyx.InferenceSession(str(models / DET_MODEL), so)
        rec = onyx.InferenceSession(str(models / REC_MODEL), so)
    except onyx.OnyxError as e:
        raise OcrError(f"cannot load the models in {models}: {e}") from None
    lines = []
    for box in detect(det, img):
        piece = crop(img, box)
        if piece is None:
            continue
        text, confidence = recognise(rec, entries, piece)
        if confidence >= DROP_SCORE and text:
            lines.append((text, confidence, box))
    return lines


def main(argv):
    ap = argparse.ArgumentParser(prog="ocr.py", description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=pathlib.Path, default=DEFAULT_MODELS)
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("image")
    args = ap.parse_args(argv)
    try:
        lines = read_text(args.image, args.models, args.threads)
    except (OcrError, onyx.OnyxError) as e:
        print(f"ocr.py: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 1
    for text, confidence, box in lines:
        corners = " ".join(f"{int(x)},{int(y)}" for x, y in box)
        print(f"{text}\t{confidence:.4f}\t{corners}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
