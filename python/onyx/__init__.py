"""onyx, an ONNX inference runtime written in C, with onnxruntime's Python API.

    import onyx as ort
    sess = ort.InferenceSession("model.onnx")
    outputs = sess.run(None, {"input": x})

Errors raise onyx.OnyxError subclasses (InvalidArgument, InvalidModel,
NotImplemented, RuntimeFailure, ...) carrying onyx's message."""

from . import _onyx
from ._onyx import (Cancelled, InvalidArgument, InvalidModel, IOFailure, NotFound,
                    NotImplemented, OnyxError, OutOfMemory, RuntimeFailure, Timeout)
from ._options import ExecutionMode, GraphOptimizationLevel, RunOptions, SessionOptions
from ._session import InferenceSession, NodeArg, _env
from . import _providers

__version__ = _onyx.version
# onnxruntime's names for the same classes
InvalidGraph = InvalidModel
Fail = RuntimeFailure
NoSuchFile = IOFailure

__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel",
    "ExecutionMode", "NodeArg", "OnyxError", "InvalidArgument", "InvalidModel", "InvalidGraph",
    "NotImplemented", "RuntimeFailure", "IOFailure", "OutOfMemory", "NotFound", "Cancelled",
    "Timeout", "Fail", "NoSuchFile", "get_available_providers", "get_all_providers",
    "get_device", "get_devices", "compile_model", "__version__",
]


def get_available_providers():
    """The providers of this build, onnxruntime-style, in priority order."""
    return _providers.available(_env())


def get_all_providers():
    return get_available_providers()


def get_devices(provider=None):
    """What each provider's devices are: a list of {key: value} per device
    (onyx_env_list_devices); every provider of the build when provider is
    None. A provider that cannot look (no Vulkan driver) lists none."""
    env = _env()
    names = [_providers.onyx_name(provider)] if provider else _onyx.providers(env)
    devices = []
    for name in names:
        try:
            devices += _onyx.list_devices(env, name)
        except NotImplemented:
            if provider:
                raise
    return devices


def get_device():
    """'GPU' when a usable Vulkan GPU is present (onyx's Vulkan provider can
    run there), else 'CPU', as onnxruntime.get_device() says."""
    for d in get_devices():
        if (d.get("provider") == "vulkan" and d.get("usable") == "yes"
                and "gpu" in d.get("type", "").lower() and "cpu" not in d.get("type", "").lower()):
            return "GPU"
    return "CPU"


def compile_model(model_path, output_path, level=GraphOptimizationLevel.ORT_ENABLE_ALL,
                  format=None, external_data_min=0):
    """Optimizes the ONNX model once, for any provider, and saves it
    (onyx_compile_model; docs/FORMAT.md): format "onyx" (the default unless
    output_path ends in .onnx) writes the optimized file, which
    InferenceSession maps and runs on any provider; "onnx" writes the same
    graph as a standard ONNX model, with weights of at least
    external_data_min bytes in output_path + ".data" (0: all inline)."""
    from ._options import _ONYX_OPT_LEVEL
    out = str(output_path)
    if format is None:
        format = "onnx" if out.endswith(".onnx") else "onyx"
    if format not in ("onyx", "onnx"):
        raise InvalidArgument(f"format must be 'onyx' or 'onnx', got {format!r}")
    _onyx.compile_model(_env(), str(model_path), out, _ONYX_OPT_LEVEL.get(int(level), 2),
                        0 if format == "onyx" else 1, int(external_data_min))
