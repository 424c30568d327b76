"""SessionOptions, GraphOptimizationLevel and RunOptions with onnxruntime's
names, mapped to onyx_session_options and onyx_run_options."""

import enum
import os

from . import _onyx


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels (and values). onyx has three: none, basic and all;
    EXTENDED and LAYOUT both mean all (onyx's fusions)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for onnxruntime scripts; onyx runs a graph's nodes in order
    and parallelises inside them, whichever is chosen."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


_ONYX_OPT_LEVEL = {0: 0, 1: 1, 2: 2, 3: 2, 99: 2}
# onnxruntime's severities (0 verbose .. 4 fatal) -> onyx_log_level
_ONYX_LOG_LEVEL = {0: 3, 1: 2, 2: 1, 3: 0, 4: 0}


class SessionOptions:
    """Options of a session: intra_op_num_threads (0: one per core),
    graph_optimization_level, log_severity_level (onnxruntime's 0-4),
    optimized_model_filepath (the optimized graph is written there when the
    session is made, through onyx_session_save_subgraph), and onyx's own:
    memory_limit (bytes, 0: none), external_data_dir, cache_dir (where device
    faults are remembered; "" keeps nothing), and shadow runs:
    verify_first_runs (the first N runs also run on the CPU reference and
    must match within verify_atol + verify_rtol * |ref|; see
    InferenceSession.get_verify_stats).
    inter_op_num_threads, execution_mode, enable_mem_pattern,
    enable_cpu_mem_arena and enable_profiling=False are accepted and have no
    effect (onyx has no such switches)."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_mem_pattern = True
        self.enable_cpu_mem_arena = True
        self.enable_profiling = False
        self.optimized_model_filepath = ""
        self.memory_limit = 0
        self.external_data_dir = None
        self.cache_dir = None
        self.verify_first_runs = 0
        self.verify_atol = 1e-4
        self.verify_rtol = 1e-3

    def _config(self):
        """The tuple onyx._onyx.Session takes (less providers)."""
        threads = int(self.intra_op_num_threads)
        if threads < 0:
            raise _onyx.InvalidArgument(f"intra_op_num_threads must be >= 0, not {threads}")
        level = int(self.graph_optimization_level)
        if level not in _ONYX_OPT_LEVEL:
            raise _onyx.InvalidArgument(f"unknown graph_optimization_level {level}")
        severity = int(self.log_severity_level)
        if severity not in _ONYX_LOG_LEVEL:
            raise _onyx.InvalidArgument(f"log_severity_level must be 0..4, not {severity}")
        if self.enable_profiling:
            raise _onyx.NotImplemented("onyx has no profiler: enable_profiling must be False "
                                       "(use the onyx CLI's bench and check commands)")
        if int(self.memory_limit) < 0 or int(self.verify_first_runs) < 0:
            raise _onyx.InvalidArgument("memory_limit and verify_first_runs must be >= 0")
        data_dir, cache_dir = self.external_data_dir, self.cache_dir
        return (threads, _ONYX_OPT_LEVEL[level], _ONYX_LOG_LEVEL[severity],
                int(self.memory_limit), None if data_dir is None else os.fspath(data_dir),
                None if cache_dir is None else os.fspath(cache_dir),
                (int(self.verify_first_runs), float(self.verify_atol), float(self.verify_rtol)))


class RunOptions(_onyx.RunOptions):
    """Options of runs: `terminate = True` stops every run using them (from
    any thread), as in onnxruntime; onyx adds time_limit_ms (0: none).
    A stopped run raises onyx.Cancelled or onyx.Timeout."""

    def __init__(self):
        super().__init__()
        self._time_limit_ms = 0
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.run_tag = ""

    @property
    def terminate(self):
        return self.is_cancelled()

    @terminate.setter
    def terminate(self, value):
        if value:
            self.cancel()
        else:
            self.reset_cancel()

    @property
    def time_limit_ms(self):
        return self._time_limit_ms

    @time_limit_ms.setter
    def time_limit_ms(self, ms):
        self.set_time_limit_ms(int(ms))
        self._time_limit_ms = int(ms)
