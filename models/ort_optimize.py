#!/usr/bin/env python3
"""Saves the graphs ONNX Runtime optimizes, as users keep them: for each
model, ONNX Runtime (CPU) at the 'basic' and 'extended' levels with
SessionOptions.optimized_model_filepath. The 'extended' files hold
com.microsoft operators (FusedConv, FusedGemm, FusedMatMul, QuickGelu,
BiasGelu, SkipLayerNormalization...). The model tests then run onyx on
these files against the original model's reference outputs.

usage: ort_optimize.py OUT_DIR MODEL.onnx [MODEL.onnx ...]
writes OUT_DIR/<model>.ort_basic.onnx and OUT_DIR/<model>.ort_extended.onnx
"""
import os
import sys

import onnxruntime as ort

LEVELS = {
    "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
    "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
}


def main():
    out_dir, models = sys.argv[1], sys.argv[2:]
    os.makedirs(out_dir, exist_ok=True)
    for path in models:
        stem = os.path.splitext(os.path.basename(path))[0]
        for level, value in LEVELS.items():
            out = os.path.join(out_dir, f"{stem}.ort_{level}.onnx")
            tmp = out + ".tmp"
            so = ort.SessionOptions()
            so.graph_optimization_level = value
            so.optimized_model_filepath = tmp
            ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
            os.replace(tmp, out)
            print(f"saved {out}")


if __name__ == "__main__":
    main()
