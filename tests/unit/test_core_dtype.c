/* The bulk float16 -> float32 conversion (F16C where the CPU has it)
 * gives the scalar conversion's bits for every one of the 65536 patterns,
 * signalling NaNs included, at every alignment and ragged length. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/dtype.h"

static uint32_t bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int main(void) {
    enum { N = 65536 };
    uint16_t *h = malloc(sizeof(uint16_t) * (N + 8));
    float *f = malloc(sizeof(float) * (N + 8));
    CHECK(h && f);
    if (!h || !f) return 1;
    for (int i = 0; i < N; i++) h[i] = (uint16_t)i;
    ox_half_to_float_n(h, f, N);
    int64_t bad = 0;
    for (int i = 0; i < N; i++) bad += bits(f[i]) != bits(ox_half_to_float(h[i]));
    CHECK(bad == 0);
    /* the scalar conversion's own values, so both cannot be wrong alike */
    CHECK(f[0x3c00] == 1.0f && f[0xc000] == -2.0f && f[0x7bff] == 65504.0f);
    CHECK(f[0x0001] == 5.9604644775390625e-08f && bits(f[0x8000]) == 0x80000000u);
    CHECK(bits(f[0x7c00]) == 0x7f800000u && bits(f[0x7c01]) == 0x7f802000u); /* inf; sNaN kept */
    /* ragged lengths and offsets: the tail loop and unaligned loads */
    for (int off = 0; off < 8; off++)
        for (int n = 0; n < 40; n++) {
            float out[48];
            ox_half_to_float_n(h + 0x7bf0 + off, out, n);
            int ok = 1;
            for (int i = 0; i < n; i++) ok &= bits(out[i]) == bits(ox_half_to_float(h[0x7bf0 + off + i]));
            CHECK(ok);
        }
    free(h);
    free(f);
    CHECK_DONE();
}
