"""Zoo models through the Python package against onnxruntime run in the
same process on the manifest's inputs, at the model tests' tolerances."""

import pathlib

import numpy as np
import onnxruntime
import pytest

import onyx
import zoo


def pytest_generate_tests(metafunc):
    if "case_name" in metafunc.fixturenames:
        cases = metafunc.config.getoption("--zoo-cases")
        names = zoo.DEFAULT_CASES if cases is None else cases.split(",")
        zoo_dir = metafunc.config.getoption("--zoo-dir")
        if cases == "all" and zoo_dir and (pathlib.Path(zoo_dir) / "references").is_dir():
            names = list(zoo.read_manifest(pathlib.Path(zoo_dir)))
        metafunc.parametrize("case_name", names)


@pytest.fixture(scope="module")
def manifest(zoo_dir):
    return zoo.read_manifest(zoo_dir)


def test_zoo_case_matches_onnxruntime(manifest, case_name):
    if case_name not in manifest:
        pytest.fail(f"case {case_name} is not in the zoo's manifest", pytrace=False)
    case = manifest[case_name]
    feed = zoo.load_inputs(case)
    sess = onyx.InferenceSession(str(case["model"]))
    ref = onnxruntime.InferenceSession(str(case["model"]), providers=["CPUExecutionProvider"])
    assert [i.name for i in sess.get_inputs()] == [i.name for i in ref.get_inputs()]
    assert [(o.name, o.type) for o in sess.get_outputs()] == \
        [(o.name, o.type) for o in ref.get_outputs()]
    for mine, theirs in zip(sess.get_inputs(), ref.get_inputs()):
        # onnxruntime shows the dimension name "?" (Paddle2ONNX's spelling of
        # "unknown") as is; onyx reads it as unnamed: None
        assert (mine.type, mine.shape) == (theirs.type, [None if d == "?" else d for d in theirs.shape])
    names = [name for name, _, _ in case["outputs"]]
    got = sess.run(names, feed)
    want = ref.run(names, feed)
    for (name, _, kind), g, w in zip(case["outputs"], got, want):
        zoo.compare(name, kind, g, w)
        assert isinstance(g, np.ndarray)
