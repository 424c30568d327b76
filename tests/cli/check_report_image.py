"""Checks a headless-Chromium screenshot of an onyx check --report page.

usage: check_report_image.py SCREENSHOT.png divergent|clean

The plot is found by its background colour; within it, the first divergent
node's marker is the only thing drawn in #d62728. "divergent" expects the
marker of the test's injected fault (mobilenet_v3_small, node 1 of 65,
infinite relative error): near the left end, in the band at the top;
"clean" expects no marker. Both expect within-tolerance points.
"""
import sys

import numpy as np
from PIL import Image

PLOT_BG = (0xFB, 0xFB, 0xF7)
FIRST = (0xD6, 0x27, 0x28)
PASS = (0x1F, 0x77, 0xB4)
FAIL = (0xFF, 0x7F, 0x0E)


def mask(img, color):
    return np.all(img == np.array(color, dtype=np.uint8), axis=2)


def main():
    path, mode = sys.argv[1], sys.argv[2]
    img = np.asarray(Image.open(path).convert("RGB"))
    bg = mask(img, PLOT_BG)
    if bg.sum() < 10000:
        sys.exit(f"{path}: no plot background ({bg.sum()} pixels of #fbfbf7)")
    rows, cols = np.nonzero(bg)
    top, bottom, left, right = rows.min(), rows.max(), cols.min(), cols.max()
    height, width = bottom - top + 1, right - left + 1
    print(f"plot at x {left}..{right}, y {top}..{bottom}")
    if width < 600 or height < 150:
        sys.exit(f"{path}: plot area {width}x{height} is too small")
    plot = img[top:bottom + 1, left:right + 1]
    n_pass = int(mask(plot, PASS).sum())
    n_fail = int(mask(plot, FAIL).sum())
    first = mask(plot, FIRST)
    n_first = int(first.sum())
    print(f"pixels in the plot: within tolerance {n_pass}, outside {n_fail}, "
          f"first divergent {n_first}")
    if n_pass == 0:
        sys.exit(f"{path}: no within-tolerance point in the plot")
    if mode == "clean":
        if n_first or n_fail:
            sys.exit(f"{path}: a divergent marker or failing point in a passing run's plot")
        return
    # a filled circle of radius 7 is about 150 pixels
    if n_first < 80:
        sys.exit(f"{path}: the first divergent node's marker is missing ({n_first} pixels)")
    if n_fail == 0:
        sys.exit(f"{path}: no point outside tolerance after the divergent node")
    ys, xs = np.nonzero(first)
    cx, cy = xs.mean() / width, ys.mean() / height
    print(f"marker centre at {cx:.3f} of the width, {cy:.3f} of the height")
    # node 2 of 66 sits at about 4% of the width; infinite errors in the
    # top band, within the first 10% of the height
    if not (0.01 < cx < 0.10 and cy < 0.10):
        sys.exit(f"{path}: the marker is not where node 2's infinite error belongs")


if __name__ == "__main__":
    main()
