"""A script written for onnxruntime, as users write them: load a model,
look at its inputs, feed random data shaped after them, print the top
classes. test_ort_script.py runs it unchanged but for the import line."""

import sys

import numpy as np
import onnxruntime as ort


def main(model_path, seed=0):
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 2
    so.log_severity_level = 3
    providers = [p for p in ["CUDAExecutionProvider", "CPUExecutionProvider"]
                 if p in ort.get_available_providers()]
    sess = ort.InferenceSession(model_path, sess_options=so, providers=providers)
    rng = np.random.default_rng(seed)
    feed = {}
    for inp in sess.get_inputs():
        # batch 1; other open dimensions (image sides) 64
        shape = [d if isinstance(d, int) else (1 if i == 0 else 64) for i, d in enumerate(inp.shape)]
        assert inp.type == "tensor(float)", inp.type
        feed[inp.name] = rng.random(shape, dtype=np.float32)
    output_names = [o.name for o in sess.get_outputs()]
    outputs = sess.run(output_names, feed)
    for name, value in zip(output_names, outputs):
        flat = value.reshape(value.shape[0], -1) if value.ndim > 1 else value.reshape(1, -1)
        top = np.argsort(-flat, axis=1)[:, :5]
        print(f"{name}: shape {list(value.shape)}, top-5 {top[0].tolist()}")
    return sess.get_providers(), outputs


if __name__ == "__main__":
    main(sys.argv[1])
