"""Writes the PP-OCRv4 recogniser's dictionary for onyx_ocr: one entry per
line, class i + 1 of the model's output being line i (class 0 is the CTC
blank, the last class a space; see main.c).

usage: ppocr_keys.py REC_MODEL.onnx OUT.txt

The exported recogniser carries its dictionary in the model's metadata,
under the key "character", one entry per line, so the list always matches
the model it comes with.
"""

import os
import sys

import onnx


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    model_path, out_path = sys.argv[1:]
    model = onnx.load(model_path)
    meta = {p.key: p.value for p in model.metadata_props}
    if "character" not in meta:
        sys.exit(f"ppocr_keys: {model_path} has no 'character' metadata")
    # Split on "\n" alone, as main.c reads the file: str.splitlines() would
    # also break at characters such as U+2028 that may be entries.
    keys = meta["character"].split("\n")
    if keys and keys[-1] == "":
        keys.pop()
    if any("\r" in k for k in keys):
        sys.exit(f"ppocr_keys: {model_path}: an entry holds a carriage return")
    # the output's last axis: blank + entries + space
    classes = model.graph.output[0].type.tensor_type.shape.dim[-1].dim_value
    if classes != len(keys) + 2:
        sys.exit(f"ppocr_keys: {model_path}: {len(keys)} entries, but the model has {classes} "
                 "classes (want entries + 2)")
    tmp = out_path + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(keys) + "\n")
    os.replace(tmp, out_path)


if __name__ == "__main__":
    main()
