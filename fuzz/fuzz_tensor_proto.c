/* Fuzz target: onyx_tensor_read_kind on TensorProto, SequenceProto and
 * OptionalProto bytes. The first input byte chooses the kind (byte % 3:
 * tensor, sequence, optional); the rest is the message. What is accepted
 * must be a value of that kind whose sizes agree with its shape. */
#include "core/dtype.h"
#include "core/tensor.h"
#include "fuzz_common.h"

/* A tensor's byte count must be what its dtype and dims say, and its
 * elements must be readable (ASan checks the reads). */
static void check_value(const onyx_tensor *t, int depth) {
    if (depth > 64) fuzz_fail("value nested %d deep", depth);
    if (t->kind != OX_KIND_TENSOR) {
        for (int i = 0; i < t->n_items; i++)
            if (t->items[i]) check_value(t->items[i], depth + 1);
        return;
    }
    size_t nbytes = 0;
    ox_error err = {0};
    if (ox_bytes_for(t->dtype, t->dims, t->rank, &nbytes, &err) != 0)
        fuzz_fail("accepted a tensor whose size overflows: %s", err.msg);
    if (nbytes != t->nbytes) fuzz_fail("nbytes %zu, expected %zu", t->nbytes, nbytes);
    int64_t n = onyx_tensor_numel(t);
    if (t->dtype == ONYX_STRING) {
        for (int64_t i = 0; i < n; i++)
            if (!onyx_tensor_string(t, i)) fuzz_fail("string %lld missing", (long long)i);
    } else if (nbytes) {
        volatile uint8_t sum = 0;
        const uint8_t *p = t->data;
        for (size_t i = 0; i < nbytes; i++) sum ^= p[i];
        (void)sum;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    onyx_value_kind kind = (onyx_value_kind)(data[0] % 3);
    onyx_tensor *t = NULL;
    onyx_status *st = onyx_tensor_read_kind(data + 1, size - 1, kind, &t);
    if (st) {
        if (t) fuzz_fail("read failed but returned a value");
        fuzz_check_status(st, "onyx_tensor_read_kind");
        return 0;
    }
    if (onyx_tensor_kind(t) != kind)
        fuzz_fail("read a kind %d value when kind %d was asked", onyx_tensor_kind(t), kind);
    check_value(t, 0);
    onyx_tensor_free(t);
    return 0;
}
