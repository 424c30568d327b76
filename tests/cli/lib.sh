# What the CLI test scripts share; sourced after they set ONYX (the tool
# under test). cli_tmp makes the scratch folder TMP (removed at exit) and
# zeroes the failure count the scripts exit with.

# cli_tmp NAME: TMP, a fresh folder onyx-NAME-XXXXXX under $TMPDIR or /tmp
cli_tmp() {
    TMP=$(mktemp -d "${TMPDIR:-/tmp}/onyx-$1-XXXXXX") || exit 2
    trap 'rm -rf "$TMP"' EXIT INT TERM
    failures=0
}

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

# run_cmd NAME ARGS...: runs onyx, keeping stdout, stderr and the status
# in TMP/NAME.out, .err and .rc.
run_cmd() {
    name=$1
    shift
    "$ONYX" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    echo $? >"$TMP/$name.rc"
}

rc_of() { cat "$TMP/$1.rc"; }
