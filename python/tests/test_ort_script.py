"""An onnxruntime script runs unchanged with `import onyx as ort` on zoo
models and gives onnxruntime's results (at the zoo's logit tolerance)."""

import pathlib

import numpy as np
import pytest

import zoo

SCRIPT = pathlib.Path(__file__).with_name("ort_style_script.py")
ORT_IMPORT = "import onnxruntime as ort\n"

# single-output classifiers of the zoo with float inputs
MODELS = ["mobilenet_v3_small.onnx", "vit_tiny.onnx", "ch_ppocr_mobile_v2.0_cls_infer.onnx"]


def load_script(module_line):
    source = SCRIPT.read_text()
    assert source.count(ORT_IMPORT) == 1
    namespace = {"__name__": "ort_style_script"}
    exec(compile(source.replace(ORT_IMPORT, module_line), str(SCRIPT), "exec"), namespace)
    return namespace["main"]


@pytest.mark.parametrize("model", MODELS)
def test_onnxruntime_script_runs_unchanged_on_onyx(zoo_dir, model, capsys):
    path = zoo_dir / model
    if not path.is_file():
        pytest.fail(f"{path} is missing from the zoo", pytrace=False)
    providers, want = load_script(ORT_IMPORT)(str(path))
    printed_ort = capsys.readouterr().out
    onyx_providers, got = load_script("import onyx as ort\n")(str(path))
    printed_onyx = capsys.readouterr().out
    assert providers == onyx_providers == ["CPUExecutionProvider"]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert isinstance(g, np.ndarray)
        zoo.compare("output", "logit", g, w)
    assert printed_onyx.count("top-5") == printed_ort.count("top-5") == len(want)
