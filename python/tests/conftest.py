"""Where the tests find what the build made: the model zoo (--zoo-dir or
ONYX_ZOO_DIR: the exported .onnx files and references/manifest.tsv) and the
main build folder (--build-dir or ONYX_BUILD_DIR: the bundled example
model, the onyx CLI and onyx_ocr). A test that needs one that was not given,
or that is incomplete, fails: nothing is skipped."""

import os
import pathlib

import pytest


def pytest_addoption(parser):
    parser.addoption("--zoo-dir", default=os.environ.get("ONYX_ZOO_DIR"),
                     help="the exported model zoo (default $ONYX_ZOO_DIR)")
    parser.addoption("--build-dir", default=os.environ.get("ONYX_BUILD_DIR"),
                     help="the CMake build folder (default $ONYX_BUILD_DIR)")
    parser.addoption("--zoo-cases", default=None,
                     help="zoo cases to run, comma-separated, or 'all' (default: zoo.py's)")


def _folder(config, option, env):
    value = config.getoption(option)
    if not value:
        pytest.fail(f"{option} (or ${env}) is needed by this test", pytrace=False)
    path = pathlib.Path(value)
    if not path.is_dir():
        pytest.fail(f"{option} {path} is not a folder", pytrace=False)
    return path


@pytest.fixture(scope="session")
def zoo_dir(request):
    path = _folder(request.config, "--zoo-dir", "ONYX_ZOO_DIR")
    if not (path / "references" / "manifest.tsv").is_file():
        pytest.fail(f"{path} has no references/manifest.tsv: build the zoo_references target",
                    pytrace=False)
    return path


@pytest.fixture(scope="session")
def build_dir(request):
    return _folder(request.config, "--build-dir", "ONYX_BUILD_DIR")


def built_file(build_dir, relative):
    path = build_dir / relative
    if not path.exists():
        pytest.fail(f"{path} is missing: build the project first", pytrace=False)
    return path
