"""Provider names: onyx's ("cpu", "vulkan") and onnxruntime's
("CPUExecutionProvider", "VulkanExecutionProvider"); either is accepted.
Sessions report onnxruntime's, as scripts written for it compare against
those."""

import warnings

from . import _onyx

# onyx's provider -> the name onnxruntime-style code uses for it. Vulkan has
# no onnxruntime provider; "VulkanExecutionProvider" follows the same form.
_ORT_NAMES = {"cpu": "CPUExecutionProvider", "vulkan": "VulkanExecutionProvider"}
_ONYX_NAMES = {v: k for k, v in _ORT_NAMES.items()}


def ort_name(name):
    return _ORT_NAMES.get(name, name[:1].upper() + name[1:] + "ExecutionProvider")


def onyx_name(name):
    """onyx's name of a provider given either way (unknown names unchanged)."""
    return _ONYX_NAMES.get(name, name)


def available(env):
    return [ort_name(p) for p in _onyx.providers(env)]


def _entries(providers, provider_options):
    """[(name, options dict)] from onnxruntime's two forms: names (or
    (name, options) pairs) and, separately, a list of option dicts."""
    if isinstance(providers, str):
        raise _onyx.InvalidArgument("providers must be a list of names, not a str")
    providers = list(providers)
    if provider_options is not None:
        provider_options = list(provider_options)
        if len(provider_options) != len(providers):
            raise _onyx.InvalidArgument(
                f"provider_options has {len(provider_options)} entries for "
                f"{len(providers)} providers")
    entries = []
    for i, p in enumerate(providers):
        options = {}
        if isinstance(p, tuple):
            if len(p) != 2 or not isinstance(p[1], dict):
                raise _onyx.InvalidArgument(f"provider {p!r}: want (name, options dict)")
            p, options = p
        if not isinstance(p, str):
            raise _onyx.InvalidArgument(f"provider names are str, not {type(p).__name__}")
        if provider_options is not None:
            options = {**options, **provider_options[i]}
        entries.append((p, options))
    return entries


def resolve(env, providers, provider_options):
    """(onyx provider names, [(provider, key, value)]) for a session.

    onnxruntime-style names this build does not offer (CUDAExecutionProvider
    in a script written for a GPU machine) are dropped with a warning, as
    onnxruntime does; an unknown onyx-style name goes to onyx, which refuses
    it naming the providers it has."""
    if not providers:
        if provider_options:
            raise _onyx.InvalidArgument("provider_options given without providers")
        return [], []
    have = set(_onyx.providers(env))
    names, options = [], []
    for name, opts in _entries(providers, provider_options):
        onyx = onyx_name(name)
        if onyx not in have and name.endswith("ExecutionProvider"):
            warnings.warn(f"provider {name} is not available in onyx (available: "
                          f"{', '.join(available(env))}); it is ignored", stacklevel=3)
            continue
        names.append(onyx)
        for key, value in opts.items():
            if isinstance(value, bool):
                value = "1" if value else "0"
            options.append((onyx, str(key), str(value)))
    return names, options
