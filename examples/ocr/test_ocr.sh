#!/bin/sh
# Usage: test_ocr.sh ONYX_OCR SAMPLE_DIR MODELS_DIR
# Checks the exact text read from the generated samples, in reading order,
# and that failures come back as one error line and exit status 1.
set -u
ocr=$1
dir=$2
models=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
status=0

if [ ! -f "$models/ch_PP-OCRv4_rec_infer.onnx" ]; then
    echo "models not installed in $models: run scripts/install-deps.sh" >&2
    exit 1
fi

expect_text() {
    image=$1
    shift
    if ! "$ocr" --models "$models" "$dir/$image" >"$tmp/out" 2>"$tmp/err"; then
        echo "FAIL: $image: onyx_ocr failed"
        cat "$tmp/err"
        status=1
        return
    fi
    printf '%s\n' "$@" >"$tmp/want"
    cut -f1 "$tmp/out" >"$tmp/got"
    if ! cmp -s "$tmp/want" "$tmp/got"; then
        echo "FAIL: $image: text differs"
        diff "$tmp/want" "$tmp/got"
        status=1
    fi
    # Every line: text, a confidence in [0.5, 1], four integer corners.
    if ! awk -F '\t' 'NF != 3 || $2 < 0.5 || $2 > 1 ||
            $3 !~ /^[0-9]+,[0-9]+ [0-9]+,[0-9]+ [0-9]+,[0-9]+ [0-9]+,[0-9]+$/ { bad = 1 }
            END { exit bad }' "$tmp/out"; then
        echo "FAIL: $image: malformed output"
        cat "$tmp/out"
        status=1
    fi
}

expect_error() {
    what=$1
    shift
    "$ocr" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 1 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
        ! grep -q '^onyx_ocr: error: ' "$tmp/err"; then
        echo "FAIL: $what: want exit 1 and one error line, got exit $rc"
        cat "$tmp/err"
        status=1
    fi
}

expect_text sample.png "quick brown fox" "Invoice" "2026-12-02" "ONNX" "Runtime"
expect_text sample2.ppm "onyx" "reads" "Total" "42.50" "PAID"

printf 'P6\n4 4\n255\nshort' >"$tmp/truncated.ppm"
printf 'not an image' >"$tmp/junk.png"
expect_error "missing image" --models "$models" "$tmp/none.png"
expect_error "truncated PPM" --models "$models" "$tmp/truncated.ppm"
expect_error "not an image" --models "$models" "$tmp/junk.png"
expect_error "missing models" --models "$tmp" "$dir/sample.png"
expect_error "bad option" --threads x "$dir/sample.png"
expect_error "no image" --models "$models"

[ "$status" -eq 0 ] && echo "ocr example: all checks passed"
exit "$status"
