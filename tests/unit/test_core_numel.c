/* ox_numel on dimensions straight from a model file: products that
 * overflow int64 are -1, never undefined behaviour (UBSan checks it in
 * the sanitizer build), and ordinary shapes keep their element count. */
#include <stdint.h>

#include "check.h"
#include "core/tensor.h"

int main(void) {
    const int64_t small[] = {2, 3, 4};
    CHECK(ox_numel(small, 3) == 24);
    CHECK(ox_numel(small, 0) == 1); /* a scalar */
    const int64_t empty[] = {5, 0, 7};
    CHECK(ox_numel(empty, 3) == 0);
    const int64_t max[] = {INT64_MAX, 1};
    CHECK(ox_numel(max, 2) == INT64_MAX);
    /* what fuzz_infer found through MatMulInteger's zero-point check */
    const int64_t big[] = {INT64_MAX, 2};
    CHECK(ox_numel(big, 2) == -1);
    const int64_t half[] = {(int64_t)1 << 62, 2, 1};
    CHECK(ox_numel(half, 3) == -1);
    const int64_t neg[] = {INT64_MIN, -1};
    CHECK(ox_numel(neg, 2) == -1);
    /* an empty shape counts only when its non-zero axes fit int64: kernels
     * form their partial products (strides, outer counts) */
    const int64_t empty_long[] = {0, (int64_t)1 << 40, (int64_t)1 << 20};
    CHECK(ox_numel(empty_long, 3) == 0);
    const int64_t empty_huge[] = {0, (int64_t)1 << 40, (int64_t)1 << 40};
    CHECK(ox_numel(empty_huge, 3) == -1);
    const int64_t huge_empty[] = {(int64_t)1 << 40, (int64_t)1 << 40, 0};
    CHECK(ox_numel(huge_empty, 3) == -1);
    size_t bytes = 1;
    CHECK(ox_bytes_for(ONYX_FLOAT32, empty_long, 3, &bytes, NULL) == 0 && bytes == 0);
    CHECK(ox_bytes_for(ONYX_FLOAT32, empty_huge, 3, &bytes, NULL) != 0);
    CHECK_DONE();
}
