/* Fuzz target: onyx_tensor_read on .npy bytes, then the save/read round
 * trip of whatever it accepts: the tensor written as .npy (the encoder
 * behind onyx_tensor_save_npy, in memory) must read back identical, and
 * writing that again must give the same bytes. Inputs without the .npy
 * magic would be read as TensorProto; fuzz_tensor_proto covers those. */
#include <stdlib.h>
#include <string.h>

#include "core/tensor.h"
#include "fuzz_common.h"
#include "io/npy.h"

static void check_same(const onyx_tensor *a, const onyx_tensor *b) {
    if (a->dtype != b->dtype || !ox_shape_equal(a->dims, a->rank, b->dims, b->rank))
        fuzz_fail("round trip changed dtype %d -> %d or rank %d -> %d", a->dtype, b->dtype,
                  a->rank, b->rank);
    if (a->dtype == ONYX_STRING) {
        for (int64_t i = 0; i < onyx_tensor_numel(a); i++)
            if (strcmp(onyx_tensor_string(a, i), onyx_tensor_string(b, i)) != 0)
                fuzz_fail("round trip changed string %lld", (long long)i);
        return;
    }
    if (a->nbytes != b->nbytes || (a->nbytes && memcmp(a->data, b->data, a->nbytes) != 0))
        fuzz_fail("round trip changed the data (%zu -> %zu bytes)", a->nbytes, b->nbytes);
}

static void *encode(const onyx_tensor *t, size_t *size) {
    void *buf = NULL;
    ox_error err = {0};
    if (ox_npy_encode(t, &buf, size, &err) != 0)
        fuzz_fail("cannot write back a tensor that was read: %s", err.msg);
    return buf;
}

static void round_trip(const onyx_tensor *t) {
    size_t n1 = 0, n2 = 0;
    void *b1 = encode(t, &n1);
    onyx_tensor *back = NULL;
    onyx_status *st = onyx_tensor_read(b1, n1, &back);
    if (st) fuzz_fail("cannot read back what was written: %s", onyx_status_message(st));
    check_same(t, back);
    void *b2 = encode(back, &n2);
    if (n1 != n2 || memcmp(b1, b2, n1) != 0) fuzz_fail("writing twice gave different bytes");
    free(b2);
    onyx_tensor_free(back);
    free(b1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < OX_NPY_MAGIC_LEN || memcmp(data, OX_NPY_MAGIC, OX_NPY_MAGIC_LEN) != 0) return 0;
    onyx_tensor *t = NULL;
    onyx_status *st = onyx_tensor_read(data, size, &t);
    if (st) {
        if (t) fuzz_fail("read failed but returned a tensor");
        fuzz_check_status(st, "onyx_tensor_read");
        return 0;
    }
    if (onyx_tensor_kind(t) != ONYX_KIND_TENSOR) fuzz_fail(".npy read as a non-tensor");
    round_trip(t);
    onyx_tensor_free(t);
    return 0;
}
