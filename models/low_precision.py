"""Low-precision variants of zoo models, made the way users of ONNX
Runtime make them for the CPU:

- int8 by ONNX Runtime's dynamic quantizer
  (onnxruntime.quantization.quantize_dynamic, int8 weights):
  resnet50_int8.onnx (every convolution a ConvInteger, the classifier a
  MatMulInteger, activations quantized per tensor at run time by
  DynamicQuantizeLinear) and vit_tiny_int8.onnx (the transformer's
  products as MatMulInteger, the patch embedding a ConvInteger);
- float16 by ONNX Runtime's converter
  (onnxruntime.transformers.float16.convert_float_to_float16, float32
  inputs and outputs kept, so the graph casts at its edges; the reference
  input is made of float16 values, see make_references.py):
  resnet50_fp16.onnx. Not the ViT: ONNX Runtime 1.31 crashes (a
  segmentation fault) running its float16 conversion at optimization level
  all, so it has no reference outputs.

usage: low_precision.py ZOO_DIR

Writes those files and their reference cases through
make_references.write_case; make_references.py computes the outputs with
the rest of the zoo. Deterministic: both tools read only the weights.
"""

import logging
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# (source model, variant, seed, input shape)
MODELS = [
    ("resnet50", "int8", 54, [1, 3, 224, 224]),
    ("vit_tiny", "int8", 56, [2, 3, 64, 64]),
    ("resnet50", "fp16", 64, [1, 3, 224, 224]),
]


def convert(src, dst, variant):
    if variant == "int8":
        from onnxruntime.quantization import QuantType, quantize_dynamic

        quantize_dynamic(src, dst, weight_type=QuantType.QInt8)
    else:
        import onnx
        from onnxruntime.transformers.float16 import convert_float_to_float16

        onnx.save(convert_float_to_float16(onnx.load(src), keep_io_types=True), dst)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    zoo_dir = sys.argv[1]
    from make_references import IMAGE_OUTPUTS, _image, write_case

    # the quantizer suggests shape pre-processing on every call; the
    # exports already carry their shapes
    logging.getLogger().setLevel(logging.ERROR)
    for model, variant, seed, shape in MODELS:
        name = f"{model}_{variant}"
        out = os.path.join(zoo_dir, name + ".onnx")
        convert(os.path.join(zoo_dir, model + ".onnx"), out + ".tmp", variant)
        os.replace(out + ".tmp", out)
        image = _image(shape, normalize="imagenet")
        if variant == "fp16":
            image["representable"] = "float16"
        write_case(zoo_dir, dict(name=name, model=name + ".onnx", seed=seed, inputs={"input": image},
                                 outputs=IMAGE_OUTPUTS))
        print(f"low_precision.py: {name}.onnx")


if __name__ == "__main__":
    main()
