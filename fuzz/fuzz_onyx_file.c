/* Fuzz target: optimized model files (.onyx) -> session creation from a
 * buffer. The first input byte chooses: bit 0, reseal (recompute the
 * checksums after mutation, so changes reach the graph parser and the
 * weight references instead of stopping at a checksum); bit 1, borrow the
 * buffer instead of copying it. The rest is the file, placed in a 64-byte
 * aligned buffer as a caller that borrows would. Seeds are the ONNX
 * suite's small models compiled by `onyx compile` (scripts/fuzz.sh). */
#include <string.h>

#include "format/onyx_file.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t n = size - 1;
    uint8_t *buf = aligned_alloc(64, (n + 64) / 64 * 64);
    if (!buf) return 0;
    memcpy(buf, data + 1, n);
    if (data[0] & 1) (void)ox_onyx_reseal(buf, n);
    onyx_session_options *o = fuzz_options(ONYX_OPT_ALL);
    onyx_status_free(onyx_session_options_set_borrow_buffer(o, data[0] & 2));
    onyx_session *s = NULL;
    onyx_status *st = onyx_session_create_from_buffer(fuzz_env(), buf, n, o, &s);
    onyx_session_options_free(o);
    if (st && s) fuzz_fail("session create failed but returned a session");
    fuzz_check_status(st, "onyx_session_create_from_buffer");
    for (size_t i = 0; s && i < onyx_session_input_count(s); i++) {
        onyx_value_info info;
        if (onyx_session_input_info(s, i, &info) != NULL || !info.name)
            fuzz_fail("input %zu has no description", i);
    }
    onyx_session_free(s);
    free(buf);
    return 0;
}
