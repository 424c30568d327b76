#!/bin/sh
# onyx check --report: the HTML page for an injected fault on the zoo's
# mobilenet_v3_small (self-contained, names the node, renders its plot in
# headless Chromium), for a passing run, for a model whose names are HTML,
# and the option's errors.
# usage: test_check_report.sh ONYX_BINARY ZOO_DIR PYTHON
# PYTHON needs numpy and Pillow (the project's venv). Chromium missing is
# a failure: the rendering is what this test is about.
set -u

if [ $# -ne 3 ]; then
    echo "usage: $0 ONYX_BINARY ZOO_DIR PYTHON" >&2
    exit 2
fi
ONYX=$1
ZOO=$2
PYTHON=$3
HERE=$(cd "$(dirname "$0")" && pwd)
MODEL=$ZOO/mobilenet_v3_small.onnx
# a node the optimizer leaves alone (the Mul after it is fused into the
# next Conv as its input scale); the injected fault gives it infinite
# relative errors
FAULT=/net/features/features.1/block/block.1/avgpool/GlobalAveragePool

. "$HERE/lib.sh"
cli_tmp report

# check_rc NAME EXPECTED [VAR=VALUE...] ONYX ARGS...: runs onyx (through env,
# with the assignments) keeping its output; fails unless the status is
# EXPECTED.
check_rc() {
    name=$1
    expected=$2
    shift 2
    env "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    rc=$?
    if [ "$rc" -ne "$expected" ]; then
        fail "$name: exited $rc, expected $expected: $(cat "$TMP/$name.err")"
        return 1
    fi
    # a finished run writes nothing to stderr (a sanitizer report exits 1 too)
    if [ "$expected" -ne 2 ] && [ -s "$TMP/$name.err" ]; then
        fail "$name: unexpected stderr: $(head -5 "$TMP/$name.err")"
        return 1
    fi
    echo "ok: $name"
}

# self_contained FILE: nothing the page would fetch
self_contained() {
    tail -1 "$1" | grep -q '^</html>$' || fail "$1: the page is not complete"
    if grep -qiE 'https?://' "$1"; then
        fail "$1: names a web address: $(grep -oiE '.{20}https?://.{20}' "$1" | head -1)"
    fi
    if grep -qiE '<[^>]*[[:space:]](src|href|xlink:href)[[:space:]]*=' "$1"; then
        fail "$1: an element refers to another file"
    fi
    if grep -qiE '<(script|link|iframe|object|embed|img)[[:space:]>]|@import|@font-face' "$1"; then
        fail "$1: scripts, links, images or imported styles"
    fi
}

render() {
    rm -f "$2"
    timeout 120 chromium --headless --no-sandbox --disable-gpu --screenshot="$2" \
        --window-size=1200,2000 "file://$1" >"$TMP/chromium.log" 2>&1
    if [ ! -s "$2" ]; then
        fail "chromium wrote no screenshot of $1: $(tail -3 "$TMP/chromium.log")"
        return 1
    fi
}

if ! command -v chromium >/dev/null 2>&1; then
    fail "chromium is not installed (scripts/install-deps.sh installs it)"
fi
if [ ! -f "$MODEL" ]; then
    fail "no zoo model $MODEL"
fi

# ---- usage and write errors: exit status 2, one error line ----
# expect_err NAME PATTERN: the named run's stderr is one line matching PATTERN
expect_err() {
    if [ "$(wc -l <"$TMP/$1.err")" -ne 1 ] || ! grep -q -- "$2" "$TMP/$1.err"; then
        fail "$1: expected one error line matching '$2', got: $(cat "$TMP/$1.err")"
    fi
}
check_rc no_bisect 2 "$ONYX" check --report "$TMP/r.html" "$MODEL" &&
    expect_err no_bisect "^onyx: error: check: --report needs --bisect"
check_rc no_value 2 "$ONYX" check --bisect "$MODEL" --report &&
    expect_err no_value "^onyx: error: option --report needs a value"
check_rc with_plan 2 "$ONYX" check --plan --bisect --report "$TMP/r.html" "$MODEL" &&
    expect_err with_plan "^onyx: error: check: --plan runs nothing"
check_rc unwritable 2 "$ONYX" check --bisect --report "$TMP/no/such/dir/r.html" "$MODEL" &&
    expect_err unwritable "^onyx: error: check: cannot write the report"
[ -e "$TMP/r.html" ] && fail "no_bisect, with_plan: a report was written"

# ---- an injected fault on mobilenet_v3_small ----
if check_rc fault 1 ONYX_INJECT_FAULT=$FAULT "$ONYX" check --bisect --report "$TMP/fault.html" \
    "$MODEL"; then
    self_contained "$TMP/fault.html"
    grep -q "<h2>First divergent node</h2>" "$TMP/fault.html" || fail "fault: no divergent node section"
    grep -qF "#1 <code>$FAULT</code> of 65" "$TMP/fault.html" ||
        fail "fault: the report does not name node #1 $FAULT"
    grep -qF "ONYX_INJECT_FAULT=$FAULT " "$TMP/fault.html" ||
        fail "fault: the command lacks ONYX_INJECT_FAULT"
    grep -qF "check --bisect --report $TMP/fault.html" "$TMP/fault.html" ||
        fail "fault: the command is not the one that ran"
    grep -q "first divergent node: #1 '$FAULT'" "$TMP/fault.out" ||
        fail "fault: the terminal report is missing"
    render "$TMP/fault.html" "$TMP/fault.png" &&
        { "$PYTHON" "$HERE/check_report_image.py" "$TMP/fault.png" divergent || fail "fault: the plot"; }
fi

# ---- a fault in a Mul fused into the next Conv as its input scale: the
# group diverges, and its unfused re-run blames the Mul, which runs before
# the Conv the group is named after ----
SCALE=/net/features/features.1/block/block.1/Mul
if check_rc scale 1 ONYX_INJECT_FAULT=$SCALE "$ONYX" check --bisect "$MODEL"; then
    grep -qF "first divergent node: #4 '/net/features/features.1/block/block.2/block.2.0/Conv'" "$TMP/scale.out" ||
        fail "scale: the fused group is not the first divergent node"
    grep -qF "verdict:    the unfused nodes diverge too, first at '$SCALE'" "$TMP/scale.out" ||
        fail "scale: the unfused re-run does not blame the Mul"
fi

# ---- no fault: passes, no divergent node, no marker ----
if check_rc clean 0 "$ONYX" check --bisect --report "$TMP/clean.html" "$MODEL"; then
    self_contained "$TMP/clean.html"
    grep -q "None: every compared value is within tolerance" "$TMP/clean.html" ||
        fail "clean: the report names a divergent node"
    render "$TMP/clean.html" "$TMP/clean.png" &&
        { "$PYTHON" "$HERE/check_report_image.py" "$TMP/clean.png" clean || fail "clean: the plot"; }
fi

# ---- names that are HTML (fixture from tests/cli/make_fixtures.py) ----
NEG="n\"><img src=x onerror='alert(1)'> & more"
if check_rc names 1 "ONYX_INJECT_FAULT=$NEG" "$ONYX" check --opt-level none --bisect \
    --report "$TMP/names.html" "$HERE/data/html_names.onnx"; then
    self_contained "$TMP/names.html"
    grep -qF '&lt;script&gt;alert(&quot;r&quot;)&lt;/script&gt;' "$TMP/names.html" ||
        fail "names: the Relu's name is not shown escaped"
    grep -qF '#1 <code>n&quot;&gt;&lt;img src=x onerror=&#39;alert(1)&#39;&gt; &amp; more</code>' \
        "$TMP/names.html" || fail "names: the divergent Neg is not named, escaped"
    grep -qF 'y&lt;/td&gt;' "$TMP/names.html" || fail "names: the output's name is not escaped"
    # the command, read back as a shell would, sets the fault to the name
    "$PYTHON" - "$TMP/names.html" "$NEG" <<'EOF' || fail "names: the command does not reproduce"
import html, re, shlex, sys
page = open(sys.argv[1], encoding="utf-8").read()
cmd = html.unescape(re.search(r'<pre class="cmd">(.*?)</pre>', page, re.S).group(1))
words = shlex.split(cmd)
assert words[0] == "ONYX_INJECT_FAULT=" + sys.argv[2], words[0]
assert words[2:7] == ["check", "--opt-level", "none", "--bisect", "--report"], words[2:7]
EOF
fi

# ---- names with terminal control characters: escaped as in the terminal
# report; the command quotes them for bash as $'...' ----
ESC=$(printf '\033')
if check_rc ctl 1 "ONYX_INJECT_FAULT=n${ESC}[1m" "$ONYX" check --bisect \
    --dim "b${ESC}]0;title$(printf '\007')=1" --report "$TMP/ctl.html" "$HERE/data/control_names.onnx"; then
    self_contained "$TMP/ctl.html"
    LC_ALL=C grep -q "$ESC" "$TMP/ctl.html" && fail "ctl: raw ESC in the page"
    grep -qF '#0 <code>n\x1b[1m</code>' "$TMP/ctl.html" || fail "ctl: the node is not named, escaped"
    grep -qF "ONYX_INJECT_FAULT=\$&#39;n\\x1b[1m&#39; " "$TMP/ctl.html" ||
        fail "ctl: the command does not quote the fault as \$'n\\x1b[1m'"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
