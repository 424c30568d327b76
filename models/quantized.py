"""Dynamically quantized models for the zoo: ONNX Runtime's own quantizer
(onnxruntime.quantization.quantize_dynamic, int8 weights) applied to zoo
models, as users of ONNX Runtime make int8 models for the CPU.

usage: quantized.py ZOO_DIR

Writes ZOO_DIR/resnet50_int8.onnx (every convolution a ConvInteger, the
classifier a MatMulInteger, activations quantized per tensor at run time by
DynamicQuantizeLinear) and ZOO_DIR/vit_tiny_int8.onnx (the transformer's
products as MatMulInteger, the patch embedding a ConvInteger), and their
reference cases through make_references.write_case; make_references.py
computes the outputs with the rest of the zoo. Deterministic: the
quantizer reads only the weights.
"""

import logging
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (source model, quantized model, case, seed, input shape)
MODELS = [
    ("resnet50.onnx", "resnet50_int8.onnx", "resnet50_int8", 54, [1, 3, 224, 224]),
    ("vit_tiny.onnx", "vit_tiny_int8.onnx", "vit_tiny_int8", 56, [2, 3, 64, 64]),
]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    zoo_dir = sys.argv[1]
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from make_references import IMAGE_OUTPUTS, _image, write_case

    # the quantizer suggests shape pre-processing on every call; the
    # exports already carry their shapes
    logging.getLogger().setLevel(logging.ERROR)
    for src, dst, case, seed, shape in MODELS:
        out = os.path.join(zoo_dir, dst)
        quantize_dynamic(os.path.join(zoo_dir, src), out + ".tmp", weight_type=QuantType.QInt8)
        os.replace(out + ".tmp", out)
        write_case(zoo_dir, dict(name=case, model=dst, seed=seed,
                                 inputs={"input": _image(shape, normalize="imagenet")},
                                 outputs=IMAGE_OUTPUTS))
        print(f"quantized.py: {dst}")


if __name__ == "__main__":
    main()
