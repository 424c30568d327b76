"""InferenceSession and NodeArg, with onnxruntime's API."""

import os

from . import _onyx, _providers
from ._options import SessionOptions

_KIND_TENSOR, _KIND_SEQUENCE, _KIND_OPTIONAL = 0, 1, 2


class NodeArg:
    """A graph input or output: name, type ('tensor(float)'), shape (ints,
    symbolic dimensions as str, None where unknown, including the name "?"
    that some exporters write for unknown, which onnxruntime shows as is;
    None when even the rank is unknown)."""

    __slots__ = ("name", "type", "shape")

    def __init__(self, name, kind, type_name, shape):
        self.name = name
        tensor = f"tensor({type_name})"
        self.type = {_KIND_SEQUENCE: f"seq({tensor})",
                     _KIND_OPTIONAL: f"optional({tensor})"}.get(kind, tensor)
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


# One onyx_env for the process: the provider registry all sessions share.
_ENV = _onyx.new_env()


def _env():
    return _ENV


class InferenceSession:
    """A model loaded for inference, from a path or the model's bytes.

    providers: onnxruntime-style names ("CPUExecutionProvider",
    "VulkanExecutionProvider") or onyx's ("cpu", "vulkan"), optionally as
    (name, options) pairs; provider_options: one dict per provider, set with
    onyx_session_options_set_provider_option (e.g. {"device": "1"} for
    vulkan). Without providers the CPU runs everything. run() may be called
    from several threads at once."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None,
                 **kwargs):
        if kwargs:
            raise TypeError(f"unexpected arguments: {', '.join(sorted(kwargs))}")
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        env = _env()
        names, options = _providers.resolve(env, providers, provider_options)
        config = self._sess_options._config()
        if isinstance(path_or_bytes, (bytearray, memoryview)):
            path_or_bytes = bytes(path_or_bytes)
        elif not isinstance(path_or_bytes, bytes):
            path_or_bytes = os.fspath(path_or_bytes)
            self._model_path = path_or_bytes
        self._session = _onyx.Session(env, path_or_bytes, config[:3] + (names, options) + config[3:])
        if self._sess_options.optimized_model_filepath:
            self.save_subgraph([n[0] for n in self._session.nodes()],
                               self._sess_options.optimized_model_filepath)
        used = names if names and names[-1] == "cpu" else names + ["cpu"]
        self._providers = [_providers.ort_name(p) for p in used]
        self._provider_options = {}
        for provider, key, value in options:
            self._provider_options.setdefault(_providers.ort_name(provider), {})[key] = value
        self._inputs = [NodeArg(n, k, t, s) for n, k, _, t, s in self._session.inputs()]
        self._outputs = [NodeArg(n, k, t, s) for n, k, _, t, s in self._session.outputs()]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_providers(self):
        """The session's providers in priority order, onnxruntime-style."""
        return list(self._providers)

    def get_provider_options(self):
        return {p: dict(self._provider_options.get(p, {})) for p in self._providers}

    def get_session_options(self):
        return self._sess_options

    def get_nodes(self):
        """onyx's: [(name, op_type, domain, provider)] of the optimized graph."""
        return self._session.nodes()

    def save_subgraph(self, node_names, path):
        """onyx's: writes the named nodes of the optimized graph as a model
        (onyx_session_save_subgraph); all of them: the optimized model."""
        self._session.save_subgraph(list(node_names), os.fspath(path))

    def get_provider_stats(self, provider):
        """onyx's: what a provider did for this session's runs (kernel
        launches, copies, device faults...), as a dict."""
        return self._session.provider_stats(_providers.onyx_name(provider))

    def get_verify_stats(self):
        """onyx's: what the shadow runs (SessionOptions.verify_first_runs)
        found: runs_verified, mismatches, nodes_disabled, on_reference, and
        report (the last mismatch as text, "" when none)."""
        stats, report = self._session.verify_stats()
        return {**stats, "report": report}

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model; returns the outputs named (all for None) as numpy
        arrays that share onyx's memory. C-contiguous inputs of the right
        dtype are read in place."""
        return self._session.run(output_names, input_feed, run_options)

    def close(self):
        """Frees the session now (later calls raise onyx.InvalidArgument)."""
        self._session.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
