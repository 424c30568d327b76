#!/bin/sh
# onyx compile: the optimized file and the ONNX twin of the bundled
# example run to the same output bits as the model; info reads them; usage
# mistakes, an optimized file as the source and a truncated optimized file
# exit 1 with one "onyx: error:" line saying what is wrong.
# usage: test_compile.sh ONYX_BINARY MODEL
set -u

if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -f "$2" ]; then
    echo "usage: $0 ONYX_BINARY MODEL" >&2
    exit 2
fi
ONYX=$1
MODEL=$2
. "$(dirname "$0")/lib.sh"
cli_tmp compile

expect_rc() {
    want=$1
    name=$2
    shift 2
    run_cmd "$name" "$@"
    rc=$(rc_of "$name")
    if [ "$rc" -ne "$want" ]; then
        fail "$name: 'onyx $*' exited $rc, expected $want: $(cat "$TMP/$name.err")"
        return 1
    fi
    if [ "$want" -ne 0 ]; then
        if [ "$(wc -l <"$TMP/$name.err")" -ne 1 ] || ! grep -q '^onyx: error: ' "$TMP/$name.err"; then
            fail "$name: expected one 'onyx: error:' line, got: $(cat "$TMP/$name.err")"
            return 1
        fi
    fi
    echo "ok: $name"
}

says() {
    grep -q -- "$2" "$TMP/$1.$3" || fail "$1: $3 lacks '$2': $(cat "$TMP/$1.$3")"
}

# the three files, and their outputs against the model's, bit for bit
expect_rc 0 onyx compile "$MODEL" -o "$TMP/m.onyx" && says onyx "optimized file, optimization all" out
expect_rc 0 twin compile "$MODEL" -o "$TMP/twin.onnx" --external-data 16 && says twin "(ONNX," out
expect_rc 0 basic compile "$MODEL" -o "$TMP/basic.onyx" --opt-level basic --format onyx
[ -f "$TMP/twin.onnx.data" ] || fail "twin: no external data file"
expect_rc 0 run_model run "$MODEL" --seed 3 --output-dir "$TMP/o_model"
for f in m.onyx twin.onnx basic.onyx; do
    expect_rc 0 "run_$f" run "$TMP/$f" --seed 3 --output-dir "$TMP/o_$f"
    for out in "$TMP"/o_model/*.npy; do
        cmp -s "$out" "$TMP/o_$f/$(basename "$out")" || fail "run_$f: $(basename "$out") differs from the model's"
    done
done
expect_rc 0 info_onyx info "$TMP/m.onyx"

# mistakes
expect_rc 1 no_output compile "$MODEL" && says no_output "no output file" err
expect_rc 1 no_model compile -o "$TMP/x.onyx" && says no_model "no model given" err
expect_rc 1 bad_format compile "$MODEL" -o "$TMP/x.bin" --format tflite && says bad_format "onyx or onnx" err
expect_rc 1 bad_level compile "$MODEL" -o "$TMP/x.onyx" --opt-level most && says bad_level "none, basic or all" err
expect_rc 1 external_onyx compile "$MODEL" -o "$TMP/x.onyx" --external-data 16 && says external_onyx "for --format onnx" err
expect_rc 1 from_onyx compile "$TMP/m.onyx" -o "$TMP/y.onyx" && says from_onyx "already an optimized file" err
expect_rc 1 missing compile "$TMP/none.onnx" -o "$TMP/y.onyx" && says missing "cannot open" err
expect_rc 1 unwritable compile "$MODEL" -o "$TMP/no/such/folder/y.onyx" && says unwritable "cannot create" err
# a truncated optimized file is refused before anything runs
head -c 3000 "$TMP/m.onyx" >"$TMP/cut.onyx"
expect_rc 1 truncated run "$TMP/cut.onyx" && says truncated "truncated" err
[ -e "$TMP/y.onyx" ] && fail "a failed compile left y.onyx behind"

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
exit 0
