#!/bin/sh
# End-to-end checks of the onyx command-line tool.
# usage: test_cli.sh ONYX_BINARY MODEL
set -u

if [ $# -ne 2 ]; then
    echo "usage: $0 ONYX_BINARY MODEL" >&2
    exit 2
fi
ONYX=$1
MODEL=$2
if [ ! -x "$ONYX" ]; then
    echo "not executable: $ONYX" >&2
    exit 2
fi
if [ ! -f "$MODEL" ]; then
    echo "no such model: $MODEL" >&2
    exit 2
fi

. "$(dirname "$0")/lib.sh"
cli_tmp cli

expect_ok() {
    name=$1
    shift
    run_cmd "$name" "$@"
    if [ "$(rc_of "$name")" -ne 0 ]; then
        fail "$name: 'onyx $*' exited $(rc_of "$name"): $(cat "$TMP/$name.err")"
        return 1
    fi
    echo "ok: $name"
}

# Failure must be exit status 1 and exactly one "onyx: error:" line.
expect_error() {
    name=$1
    shift
    run_cmd "$name" "$@"
    rc=$(rc_of "$name")
    lines=$(wc -l <"$TMP/$name.err")
    if [ "$rc" -ne 1 ]; then
        fail "$name: 'onyx $*' exited $rc, expected 1"
    elif [ "$lines" -ne 1 ]; then
        fail "$name: expected one stderr line, got $lines: $(cat "$TMP/$name.err")"
    elif ! grep -q '^onyx: error: ' "$TMP/$name.err"; then
        fail "$name: stderr lacks 'onyx: error: ': $(cat "$TMP/$name.err")"
    else
        echo "ok: $name"
    fi
}

expect_stdout() {
    name=$1
    pattern=$2
    if ! grep -q -- "$pattern" "$TMP/$name.out"; then
        fail "$name: stdout lacks '$pattern'"
    fi
}

is_npy() {
    [ "$(head -c 6 "$1" | od -An -c | tr -d ' \n')" = '223NUMPY' ]
}

# Reproducible junk: bytes from a linear congruential generator.
make_junk() {
    i=0
    x=12345
    while [ $i -lt 512 ]; do
        x=$(((x * 1103515245 + 12345) % 2147483648))
        # the octal escape has to be in the format to make a raw byte
        # shellcheck disable=SC2059
        printf "\\$(printf '%03o' $(((x / 65536) % 256)))"
        i=$((i + 1))
    done
}
make_junk >"$TMP/junk.bin"

# ---- help and version ----
for args in "--help" "-h" "help" "help run" "help info" "help bench" "run --help" \
    "info --help" "bench --help" "run -h" "info -h" "bench -h"; do
    # shellcheck disable=SC2086
    if expect_ok "help_$(echo $args | tr ' -' '__')" $args; then
        expect_stdout "help_$(echo $args | tr ' -' '__')" "usage: onyx"
    fi
done
expect_ok version --version && expect_stdout version "^onyx [0-9]"

# ---- usage errors ----
expect_error no_command
expect_error unknown_command frobnicate
expect_error unknown_option --frobnicate
expect_error help_unknown help frobnicate
expect_error info_no_model info
expect_error info_bad_option info --frobnicate "$MODEL"
expect_error run_no_model run
expect_error run_bad_option run --frobnicate "$MODEL"
expect_error run_bad_seed run --seed banana "$MODEL"
expect_error run_bad_threads run --threads -3 "$MODEL"
expect_error run_bad_level run --opt-level extreme "$MODEL"
expect_error run_bad_verify run --verify some "$MODEL"
expect_error run_missing_value run "$MODEL" --seed
expect_error run_unknown_input run --input no_such_input_name="$TMP/junk.bin" "$MODEL"
expect_error run_bad_time_limit run --time-limit-ms soon "$MODEL"
expect_error run_negative_time_limit run --time-limit-ms -5 "$MODEL"
expect_error run_bad_memory_limit run --memory-limit 1GB "$MODEL"
expect_error run_bad_dim run --dim batch "$MODEL"
expect_error run_unused_dim run --dim no_such_dim=2 "$MODEL"
expect_error bench_no_model bench
expect_error bench_bad_option bench --frobnicate "$MODEL"
expect_error bench_zero_runs bench --runs 0 "$MODEL"
expect_error bench_bad_runs bench --runs many "$MODEL"
expect_error bench_negative_warmup bench --warmup -1 "$MODEL"
expect_error bench_bad_threads bench --threads -2 "$MODEL"
expect_error bench_bad_level bench --opt-level extreme "$MODEL"
expect_error bench_missing_value bench "$MODEL" --runs
expect_error bench_bad_dim bench --dim batch=0 "$MODEL"
grep -q "bench: --dim expects NAME=SIZE" "$TMP/bench_bad_dim.err" ||
    fail "bench_bad_dim: $(cat "$TMP/bench_bad_dim.err")"
expect_error bench_unused_dim bench --dim no_such_dim=2 "$MODEL"
grep -q "'no_such_dim' names no open dimension" "$TMP/bench_unused_dim.err" ||
    fail "bench_unused_dim: $(cat "$TMP/bench_unused_dim.err")"
expect_error bench_unknown_input bench "$MODEL" no_such_input_name="$TMP/junk.bin"
expect_error bench_provider_bad_option bench --providers cpu:threads "$MODEL"

# ---- missing and corrupt files ----
expect_error info_missing info "$TMP/does-not-exist.onnx"
grep -q "does-not-exist.onnx" "$TMP/info_missing.err" || fail "info_missing: path not named"
expect_error run_missing run "$TMP/does-not-exist.onnx"
expect_error info_junk info "$TMP/junk.bin"
expect_error run_junk run "$TMP/junk.bin"
expect_error bench_missing bench "$TMP/does-not-exist.onnx"
expect_error bench_junk bench "$TMP/junk.bin"
expect_error info_dir info "$TMP"

# ---- info ----
if expect_ok info info "$MODEL"; then
    for p in "^inputs (" "^outputs (" "^opset imports (" "^nodes: [0-9]" "^operators (" \
        "^parameters: [0-9]" "^parameter bytes: [0-9]"; do
        expect_stdout info "$p"
    done
fi

# ---- run ----
n_outputs=$(sed -n 's/^outputs (\([0-9]*\)):$/\1/p' "$TMP/info.out")
n_inputs=$(sed -n 's/^inputs (\([0-9]*\)):$/\1/p' "$TMP/info.out")
if expect_ok run_a run --seed 7 --output-dir "$TMP/a/nested" "$MODEL"; then
    count=$(find "$TMP/a/nested" -name '*.npy' | wc -l)
    if [ "$count" -lt 1 ]; then
        fail "run_a: no .npy files written"
    fi
    if [ -n "$n_outputs" ] && [ "$(wc -l <"$TMP/run_a.out")" -lt "$n_outputs" ]; then
        fail "run_a: fewer summary lines than outputs"
    fi
    for f in "$TMP"/a/nested/*.npy; do
        [ -f "$f" ] || continue
        is_npy "$f" || fail "run_a: $f is not a .npy file"
    done
fi
# same seed, same results
if expect_ok run_b run --seed 7 --threads 1 --output-dir "$TMP/b" "$MODEL"; then
    for f in "$TMP"/a/nested/*.npy; do
        [ -f "$f" ] || continue
        cmp -s "$f" "$TMP/b/$(basename "$f")" || fail "run_b: $(basename "$f") differs for one seed"
    done
    cmp -s "$TMP/run_a.out" "$TMP/run_b.out" || fail "run_b: summaries differ for one seed"
fi
expect_ok run_opt_none run --opt-level none "$MODEL"
expect_ok run_providers run --providers cpu "$MODEL"
# provider options: NAME:KEY=VALUE; a key the provider lacks and a
# malformed option are errors that name them
expect_error run_provider_unknown_option run --providers cpu:threads=2 "$MODEL"
grep -q "provider 'cpu' has no option 'threads' (it takes none)" "$TMP/run_provider_unknown_option.err" ||
    fail "run_provider_unknown_option: $(cat "$TMP/run_provider_unknown_option.err")"
expect_error run_provider_bad_option run --providers cpu:threads "$MODEL"
grep -q "option 'threads' of 'cpu' is not key=value" "$TMP/run_provider_bad_option.err" ||
    fail "run_provider_bad_option: $(cat "$TMP/run_provider_bad_option.err")"
# limits the example model stays within, and a memory limit it cannot
if expect_ok run_generous_limits run --seed 7 --time-limit-ms 600000 --memory-limit 1000000000 \
    "$MODEL"; then
    cmp -s "$TMP/run_a.out" "$TMP/run_generous_limits.out" ||
        fail "run_generous_limits: summaries differ from a run without limits"
fi
expect_error run_memory_limit run --memory-limit 1 "$MODEL"
grep -q "the session's memory limit is 1 bytes" "$TMP/run_memory_limit.err" ||
    fail "run_memory_limit: limit not named: $(cat "$TMP/run_memory_limit.err")"
# output folder that is a file
expect_error run_outdir_file run --output-dir "$TMP/junk.bin" "$MODEL"
# junk as an input file (bound by name-less form when there is one input)
if [ "$n_inputs" = "1" ]; then
    expect_error run_junk_input run --input "$TMP/junk.bin" "$MODEL"
    # feeding a model's own test data, when it sits next to it
    data="$(dirname "$MODEL")/test_data_set_0/input_0.pb"
    if [ -f "$data" ]; then
        expect_ok run_pb_input run --input "$data" "$MODEL"
    fi
    # an output written as .npy is accepted as input where shapes agree
    first=$(find "$TMP/a/nested" -name '*.npy' | head -n 1)
    if [ -n "$first" ]; then
        run_cmd run_npy_input run --input "$first" "$MODEL"
        if [ "$(rc_of run_npy_input)" -ne 0 ] && [ "$(wc -l <"$TMP/run_npy_input.err")" -ne 1 ]; then
            fail "run_npy_input: failure without a single error line"
        fi
    fi
fi

# ---- bench (fields and exit codes only: timings are never asserted) ----
if expect_ok bench_text bench --runs 3 --warmup 1 --threads 1 "$MODEL"; then
    for p in "^model: " "^session create: [0-9.]* ms$" \
        "^latency over 3 runs after 1 warm-up: median [0-9.]* ms, min [0-9.]* ms, max [0-9.]* ms, mean [0-9.]* ms$" \
        "^peak resident memory: .* (VmHWM), .* above the .* at start$"; do
        expect_stdout bench_text "$p"
    done
fi
if expect_ok bench_json bench --json --runs 2 --warmup 0 --threads 2 --opt-level basic "$MODEL"; then
    [ "$(wc -l <"$TMP/bench_json.out")" -eq 1 ] || fail "bench_json: not one line"
    for f in '"runtime": "onyx"' '"threads": 2' '"runs": 2' '"warmup": 0' '"create_ms": [0-9.]*,' \
        '"median_ms": [0-9.]*,' '"min_ms": [0-9.]*,' '"max_ms": [0-9.]*,' '"mean_ms": [0-9.]*,' \
        '"peak_rss_mib": [0-9.]*,' '"rss_start_mib": [0-9.]*,' '"rss_growth_mib": [0-9.]*,' \
        '"providers": {}}$'; do
        expect_stdout bench_json "$f"
    done
    # one JSON object a parser accepts, when a python is at hand
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json, sys; d = json.load(sys.stdin); assert d["min_ms"] <= d["median_ms"] <= d["max_ms"]' \
            <"$TMP/bench_json.out" || fail "bench_json: not valid JSON or min <= median <= max fails"
    fi
fi
# --profile: the per-operator times and the slowest nodes, with their kernels
if expect_ok bench_profile bench --runs 2 --warmup 0 --threads 1 --profile 2 "$MODEL"; then
    for p in "^profile over 2 more runs, per run .*: [0-9.]* ms in [0-9]* nodes$" "^  by operator:$" \
        "^    [A-Za-z.]*  *[0-9.]* ms  *[0-9.]*%  [0-9]* nodes*$" "^  slowest 2 nodes:$" \
        "^ *[0-9.]* ms  *[0-9.]*%  .* (.*): cpu "; do
        expect_stdout bench_profile "$p"
    done
    [ "$(grep -c "): cpu " "$TMP/bench_profile.out")" -eq 2 ] || fail "bench_profile: not 2 slowest nodes"
fi
expect_error bench_profile_json bench --json --profile 3 "$MODEL"
expect_error bench_profile_zero bench --profile 0 "$MODEL"
# the open dimension by --dim, an input from a file, the provider list
expect_ok bench_dim bench --dim batch=3 --runs 1 --json "$MODEL"
grep -q "set to 1" "$TMP/bench_dim.err" && fail "bench_dim: --dim batch=3 not taken"
expect_ok run_dim run --dim batch=3 "$MODEL" && expect_stdout run_dim "\[3, "
expect_ok bench_providers bench --providers cpu --runs 1 "$MODEL"
if [ "$n_inputs" = "1" ]; then
    expect_error bench_junk_input bench "$MODEL" "$TMP/junk.bin"
fi

# ---- element types (fixtures from tests/cli/make_fixtures.py) ----
# onyx check: 0 when the outputs agree, 1 when one diverges, 2 on usage
# errors (one "onyx: error:" line); --bisect names an injected fault.
# expect_status NAME STATUS ARGS...
expect_status() {
    name=$1
    want=$2
    shift 2
    run_cmd "$name" "$@"
    if [ "$(rc_of "$name")" -ne "$want" ]; then
        fail "$name: 'onyx $*' exited $(rc_of "$name"), expected $want: $(cat "$TMP/$name.err")"
        return 1
    fi
    echo "ok: $name"
}
if expect_status check_clean 0 check --bisect "$MODEL"; then
    expect_stdout check_clean "^output:     'probabilities' float32 \[1, 2\]: .*: pass$"
    expect_stdout check_clean "^first divergent node: none"
fi
if ONYX_INJECT_FAULT=average expect_status check_fault 1 check --bisect "$MODEL"; then
    expect_stdout check_fault "^output:     'probabilities' .*: FAIL$"
    expect_stdout check_fault "^first divergent node: #1 'average' (GlobalAveragePool) on cpu"
    expect_stdout check_fault "^    input  'activations': float32 \[1, 2, 8, 8\], max abs err 0, max rel err 0: within tolerance$"
fi
# a fault inside a fused group names the group, with its origins
if ONYX_INJECT_FAULT=relu@cpu expect_status check_fused 1 check --bisect "$MODEL"; then
    expect_stdout check_fused "^first divergent node: #0 'line_detectors' (onyx.FusedConv)"
    expect_stdout check_fused "^    fused from: 'line_detectors', 'relu'$"
    # re-run unfused, the Relu still fails: the kernel, not the fusion
    expect_stdout check_fused "^    'relu' (Relu) on cpu: .*: FAIL$"
    expect_stdout check_fused "^verdict:    the unfused nodes diverge too, first at 'relu': a kernel fault"
fi
# --save-subgraph: the divergent node (a fused group as its model nodes)
# as a runnable model with its captured inputs; the printed command
# reproduces the divergence, and without the fault the subgraph agrees
for fault in average relu; do
    if ONYX_INJECT_FAULT=$fault expect_status "check_save_$fault" 1 check --bisect \
        --save-subgraph "$TMP/bad_$fault.onnx" "$MODEL"; then
        repro=$(sed -n 's/^reproduce:  //p' "$TMP/check_save_$fault.out")
        case "$repro" in
        "ONYX_INJECT_FAULT=$fault onyx check $TMP/bad_$fault.onnx --input "*) ;;
        *) fail "check_save_$fault: unexpected command: $repro" ;;
        esac
        args=${repro#"ONYX_INJECT_FAULT=$fault onyx check "}
        # shellcheck disable=SC2086
        ONYX_INJECT_FAULT=$fault expect_status "check_repro_$fault" 1 check $args
        # shellcheck disable=SC2086
        expect_status "check_repro_clean_$fault" 0 check $args
    fi
done
expect_stdout check_save_average "^subgraph:   '.*bad_average.onnx' (1 node of the model)"
expect_stdout check_save_relu "^subgraph:   '.*bad_relu.onnx' (2 nodes of the model)"
expect_status check_save_usage 2 check --save-subgraph "$TMP/x.onnx" "$MODEL"

# a fault only where the Relu is fused: the fusion is blamed
if ONYX_INJECT_FAULT=fused:relu expect_status check_fusion 1 check --bisect "$MODEL"; then
    expect_stdout check_fusion "^    'relu' (Relu) on cpu: .*: within tolerance$"
    expect_stdout check_fusion "^verdict:    unfused, the same nodes agree with the reference: the fusion is at fault$"
fi
# the reference never sees the fault: unoptimized under test, same result
ONYX_INJECT_FAULT=relu expect_status check_fault_none 1 check --opt-level none --bisect "$MODEL" &&
    expect_stdout check_fault_none "^first divergent node: #1 'relu' (Relu)"
# loose enough tolerances pass even a perturbed output
ONYX_INJECT_FAULT=softmax expect_status check_loose 0 check --stat max --atol 2 "$MODEL"
if expect_status check_plan 0 check --plan "$MODEL"; then
    expect_stdout check_plan "^#3 'classify' (Gemm) on cpu, kernel cpu Gemm$"
    # the variant is chosen once, at session creation, and printed
    expect_stdout check_plan "^#0 'line_detectors' (onyx.FusedConv) on cpu, kernel cpu onyx.FusedConv: depthwise, \(portable\|avx2\|avx512\)$"
    # the same model, options and machine give the same plan every time
    expect_status check_plan_again 0 check --plan "$MODEL" &&
        { cmp -s "$TMP/check_plan.out" "$TMP/check_plan_again.out" || fail "check_plan: plans differ"; }
    ONYX_CPU_ISA=portable expect_status check_plan_portable 0 check --plan "$MODEL" &&
        expect_stdout check_plan_portable "kernel cpu onyx.FusedConv: depthwise, portable$"
fi
ONYX_CPU_ISA=avx3 expect_error cpu_isa_unknown run "$MODEL" &&
    grep -q "ONYX_CPU_ISA is 'avx3'; expected portable, avx2 or avx512" "$TMP/cpu_isa_unknown.err" ||
    fail "cpu_isa_unknown: $(cat "$TMP/cpu_isa_unknown.err")"
for bad in "--atol -1" "--rtol x" "--stat quantile:2" "--stat mode" "--frobnicate"; do
    # shellcheck disable=SC2086
    expect_status "check_usage_${bad%% *}" 2 check $bad "$MODEL" &&
        [ "$(wc -l <"$TMP/check_usage_${bad%% *}.err")" -eq 1 ] ||
        fail "check_usage: '$bad' did not give one error line"
done
expect_status check_no_model 2 check
expect_status check_missing 2 check "$TMP/no-such-model.onnx"

DATA=$(cd "$(dirname "$0")" && pwd)/data
# expect_out NAME PATTERN: the named run's stdout matches PATTERN
expect_out() {
    grep -q -- "$2" "$TMP/$1.out" || fail "$1: stdout lacks '$2': $(cat "$TMP/$1.out")"
}
if [ -d "$DATA" ]; then
    # bfloat16 inputs stored as UINT16 (ONNX test data, numpy) are taken
    # as the bfloat16 the model asks for; a BFLOAT16 TensorProto as is
    if expect_ok bf16_uint16 run --input "input=$DATA/bf16_as_uint16.pb" "$DATA/cast_bf16_to_float.onnx"; then
        expect_out bf16_uint16 "values=\[0, 1, 2, 3, 4, 5\]"
    fi
    if expect_ok bf16_pb run --input "input=$DATA/bf16.pb" "$DATA/cast_bf16_to_float.onnx"; then
        expect_out bf16_pb "values=\[0, 1, 2, 3, 4, 5\]"
    fi
    # string outputs are saved as numpy unicode arrays and read back
    if expect_ok str_out run --input "$DATA/floats3.pb" --output-dir "$TMP/str" \
        "$DATA/cast_float_to_string.onnx"; then
        if [ ! -f "$TMP/str/output.npy" ]; then
            fail "str_out: string output not saved"
        else
            head -c 128 "$TMP/str/output.npy" | grep -q "'descr': '<U5'" ||
                fail "str_out: output.npy is not a '<U5' array"
            grep -q "is not saved" "$TMP/str_out.err" && fail "str_out: output reported unsaved"
            if expect_ok str_in run --input "$TMP/str/output.npy" "$DATA/cast_string_to_float.onnx"; then
                expect_out str_in "values=\[1.5, -2, 1e+10\]"
            fi
        fi
    fi
    # the narrow types by their ONNX names, in info and run summaries
    if expect_ok info_f8 info "$DATA/cast_float_to_float8e4m3fn.onnx"; then
        expect_out info_f8 "output  float8e4m3fn \[3\]"
    fi
    if expect_ok run_f8 run --input "$DATA/floats3.pb" "$DATA/cast_float_to_float8e4m3fn.onnx"; then
        # 1e10 saturates to float8e4m3fn's largest value
        expect_out run_f8 "output: float8e4m3fn \[3\] min=-2 max=448 .*values=\[1.5, -2, 448\]"
    fi
    if expect_ok run_int4 run --input "$DATA/int4.pb" --output-dir "$TMP/i4" "$DATA/cast_int4_to_float.onnx"; then
        expect_out run_int4 "values=\[-8, 7, -1\]"
    fi
    if expect_ok run_to_int4 run --input "$DATA/floats3.pb" --output-dir "$TMP/i4" \
        "$DATA/cast_float_to_int4.onnx"; then
        expect_out run_to_int4 "output: int4 \[3\] .*values=\[1, -2, 0\]"
        # int4 saves as int8 values and feeds back as int4
        head -c 128 "$TMP/i4/output.npy" | grep -q "'descr': '|i1'" ||
            fail "run_to_int4: output.npy is not an int8 array"
        if expect_ok int4_npy_in run --input "$TMP/i4/output.npy" "$DATA/cast_int4_to_float.onnx"; then
            expect_out int4_npy_in "values=\[1, -2, 0\]"
        fi
    fi
    # Cast corners beyond the ONNX suite (values from the ONNX reference)
    if expect_ok e8m0 run --input "$DATA/e8m0_in.pb" "$DATA/cast_e8m0_nearest.onnx"; then
        expect_out e8m0 "output: float8e8m0 \\[4\\] .*values=\\[4, 4, 0.5, 8.50706e+37\\]"
    fi
    if expect_ok e5m2 run --input "$DATA/doubles4.pb" "$DATA/cast_double_to_e5m2.onnx"; then
        expect_out e5m2 "values=\\[inf, 57344, -inf, 0.3125\\]"
    fi
    # names, dim_params, op types and domains from the model reach the
    # terminal escaped: no raw ESC, BEL or C1 CSI in any output
    raw_controls() {
        for f in "$TMP/$1.out" "$TMP/$1.err"; do
            LC_ALL=C grep -q "$(printf '\033')" "$f" && return 0
            LC_ALL=C grep -q "$(printf '\007')" "$f" && return 0
            LC_ALL=C grep -q "$(printf '\302\233')" "$f" && return 0
        done
        return 1
    }
    expect_literal() {
        grep -qF -- "$2" "$TMP/$1.out" "$TMP/$1.err" || fail "$1: output lacks '$2'"
    }
    if expect_ok ctl_info info "$DATA/control_names.onnx"; then
        raw_controls ctl_info && fail "ctl_info: raw control characters reach the terminal"
        expect_literal ctl_info 'x\x1b[2J  float32 [b\x1b]0;title\x07, 2]'
        expect_literal ctl_info 'y\x1b[31m\xc2\x9b  float32'
        expect_literal ctl_info 'evil\x1b[5m 1'
    fi
    if expect_ok ctl_run run "$DATA/control_names.onnx"; then
        raw_controls ctl_run && fail "ctl_run: raw control characters reach the terminal"
        expect_literal ctl_run 'y\x1b[31m\xc2\x9b: float32 [1, 2]'
        expect_literal ctl_run "onyx: note: input 'x\x1b[2J': dimension 0 ('b\x1b]0;title\x07') set to 1"
    fi
    expect_error ctl_op info "$DATA/control_op.onnx"
    raw_controls ctl_op && fail "ctl_op: raw control characters reach the terminal"
    expect_literal ctl_op "unknown operator Re\x1b[2Jlu in domain 'dom\x07'"
    # a Loop of INT64_MAX trips stops at its time limit (fixture from
    # tests/cli/make_run_control_fixtures.py)
    expect_error time_limit run --time-limit-ms 100 "$DATA/loop_forever.onnx"
    grep -q "run exceeded its time limit of 100 ms at node .*'loop' (Loop), iteration " \
        "$TMP/time_limit.err" || fail "time_limit: unexpected message: $(cat "$TMP/time_limit.err")"
else
    fail "no fixture folder $DATA"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
exit 0
