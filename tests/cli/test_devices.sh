#!/bin/sh
# onyx devices: the table and --json (parsed by Python's json module) for
# the CPU and Vulkan's devices (lavapipe here), a faked record
# (ONYX_VK_FAKE_DEVICE), the embedded denylist's matches, and the errors
# (unknown provider, bad option, no driver, malformed denylist).
# usage: test_devices.sh ONYX_BINARY PYTHON WITH_VULKAN(0|1)
set -u

if [ $# -ne 3 ]; then
    echo "usage: $0 ONYX_BINARY PYTHON WITH_VULKAN" >&2
    exit 2
fi
ONYX=$1
PY=$2
VK=$3
. "$(dirname "$0")/lib.sh"
cli_tmp devices
unset ONYX_VK_FAKE_DEVICE ONYX_VK_DENYLIST ONYX_VK_DISABLE
# Under the sanitizers: Mesa's lavapipe leaks once each time it is
# loaded, and the tool unloads it before exiting, so its frames cannot be
# named in a suppression; runs that load it turn leak checks off (as
# fault_bisect.py does). unit.vulkan_denylist checks the same listing
# code for leaks with the driver kept loaded.
NOLEAK="ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0"

# run_env NAME VAR=VALUE [VAR=VALUE] -- ARGS...: run_cmd with one or two
# variables set for that command only (through env, so none outlives it)
run_env() {
    name=$1
    a1=$2
    shift 2
    a2=""
    if [ "$1" != "--" ]; then
        a2=$1
        shift
    fi
    shift
    if [ -n "$a2" ]; then
        env "$a1" "$a2" "$ONYX" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    else
        env "$a1" "$ONYX" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err"
    fi
    echo $? >"$TMP/$name.rc"
}
expect_rc() {
    [ "$(rc_of "$1")" -eq "$2" ] || fail "$1: exit $(rc_of "$1"), expected $2: $(cat "$TMP/$1.err")"
}
expect_out() {
    grep -q -- "$2" "$TMP/$1.out" || fail "$1: stdout lacks '$2'"
}
expect_err() {
    grep -q -- "$2" "$TMP/$1.err" || fail "$1: stderr lacks '$2': $(cat "$TMP/$1.err")"
}
# json NAME PYTHON-EXPRESSION: stdout parses as JSON (d) and the
# expression holds
json() {
    "$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))
assert isinstance(d, list) and all(isinstance(x, dict) for x in d), 'not an array of objects'
ok = $2
sys.exit(0 if ok else 1)" "$TMP/$1.out" || fail "$1: JSON check failed: $2"
}

run_cmd help devices --help
expect_rc help 0
expect_out help "usage: onyx devices"
run_cmd bad_option devices --frobnicate
expect_rc bad_option 1
expect_err bad_option "onyx: error: unknown option '--frobnicate'"
run_cmd unknown devices --provider tpu
expect_rc unknown 1
expect_err unknown "unknown execution provider 'tpu'"
run_cmd missing devices --provider
expect_rc missing 1

run_cmd cpu devices --provider cpu
expect_rc cpu 0
expect_out cpu "^cpu device 0: "
expect_out cpu "isa_levels  *portable"
# on AVX-512 machines: whether 512-bit operations run whole or split,
# which ONYX_CPU_512 overrides (and a bad value is named)
if grep -q avx512f /proc/cpuinfo; then
    run_env v512 ONYX_CPU_512=split -- devices --provider cpu
    expect_rc v512 0
    expect_out v512 "vector_512  *split (two 256-bit halves)"
    run_env v512_full ONYX_CPU_512=full -- devices --provider cpu
    expect_out v512_full "vector_512  *full"
    run_env v512_bad ONYX_CPU_512=half -- devices --provider cpu
    expect_err v512_bad "ONYX_CPU_512 is 'half'; expected full or split"
fi
run_cmd cpu_json devices --provider cpu --json
expect_rc cpu_json 0
json cpu_json "len(d) == 1 and d[0]['provider'] == 'cpu' and d[0]['usable'] == 'yes' and int(d[0]['cores_online']) >= 1"

if [ "$VK" = 1 ]; then
    run_env vk "$NOLEAK" -- devices --provider vulkan
    expect_rc vk 0
    expect_out vk "^vulkan device 0: llvmpipe"
    expect_out vk "driver_name  *llvmpipe"
    expect_out vk "usable  *yes"
    expect_out vk "memory_heap.0  *[0-9]* bytes"
    expect_out vk "denylist  *no rule matches (embedded)"
    run_env all_json "$NOLEAK" -- devices --json
    expect_rc all_json 0
    json all_json "[x['provider'] for x in d][:1] == ['cpu'] and any(x['provider'] == 'vulkan' and x['driver_name'] == 'llvmpipe' and x['usable'] == 'yes' and x['type'] == 'CPU' and 'faked' not in x and x['vendor_id'].startswith('0x10005') for x in d)"

    # a faked RX 580 on RADV 21.0: the embedded GCN rules match
    run_env fake "$NOLEAK" ONYX_VK_FAKE_DEVICE=0x1002:0x67df:radv:21.0.0:3 -- devices --provider vulkan --json
    expect_rc fake 0
    json fake "d[0]['vendor_id'] == '0x1002 (AMD)' and d[0]['device_id'] == '0x67df' and d[0]['driver_name'] == 'radv' and d[0]['driver_version'].startswith('21.0.0 ') and d[0]['faked'].startswith('yes') and 'amd-polaris-int64' in d[0]['denylist'] and 'amd-polaris-fp16' in d[0]['denylist'] and d[0]['usable'] == 'yes'"
    # ... and on AMDVLK the device is disabled, with the rule's reason
    run_env fake_off "$NOLEAK" "ONYX_VK_FAKE_DEVICE=0x1002:0x67df:AMD open-source driver:2023.1.0:2" -- devices --provider vulkan
    expect_rc fake_off 0
    expect_out fake_off "usable  *no"
    expect_out fake_off "unusable_reason  *disabled by the driver denylist, rule 'amd-polaris-amdvlk'"
    expect_out fake_off "faked  *yes: ONYX_VK_FAKE_DEVICE replaced vendor 0x10005"

    run_env fake_bad "$NOLEAK" ONYX_VK_FAKE_DEVICE=nonsense -- devices --provider vulkan
    expect_rc fake_bad 1
    expect_err fake_bad "ONYX_VK_FAKE_DEVICE='nonsense' is not VENDOR:DEVICE:DRIVER:VERSION"

    printf 'rule a\nvendor 0x1002\ndisable op=Relu\nreason r\nref https://example.org/x\nbogus line\n' >"$TMP/bad.txt"
    run_env bad_denylist ONYX_VK_DENYLIST="$TMP/bad.txt" -- devices --provider vulkan
    expect_rc bad_denylist 1
    expect_err bad_denylist "bad.txt:6: unknown key"

    # no driver: a clean error for --provider vulkan; the CPU still listed otherwise
    run_env no_driver VK_ICD_FILENAMES="$TMP/none.json" VK_DRIVER_FILES="$TMP/none.json" -- devices --provider vulkan
    expect_rc no_driver 1
    expect_err no_driver "onyx: error: vulkan: no Vulkan driver"
    run_env no_driver_all VK_ICD_FILENAMES="$TMP/none.json" VK_DRIVER_FILES="$TMP/none.json" -- devices --json
    expect_rc no_driver_all 0
    json no_driver_all "d[0]['provider'] == 'cpu' and d[1]['provider'] == 'vulkan' and 'no Vulkan driver' in d[1]['error']"
else
    run_cmd no_vulkan devices --provider vulkan
    expect_rc no_vulkan 1
    expect_err no_vulkan "unknown execution provider 'vulkan'"
fi

if [ "$failures" -ne 0 ]; then
    echo "$failures check(s) failed"
    exit 1
fi
echo "all checks passed"
exit 0
