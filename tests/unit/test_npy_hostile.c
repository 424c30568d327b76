/* .npy headers crafted to make the reader overflow or allocate far more
 * than the file holds (found by fuzz/fuzz_npy): each is refused with
 * ONYX_INVALID_ARGUMENT and a message that says why, and ordinary unicode
 * arrays still read. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* A version 1.0 image: the header dict padded with spaces to a multiple
 * of 64 bytes and ended by a newline, then `data`. */
static unsigned char *npy_image(const char *dict, const void *data, size_t data_len,
                                size_t *size) {
    size_t dlen = strlen(dict), hlen = (10 + dlen + 1 + 63) / 64 * 64 - 10;
    *size = 10 + hlen + data_len;
    unsigned char *b = malloc(*size);
    if (!b) return NULL;
    memcpy(b, "\x93NUMPY\x01\x00", 8);
    b[8] = (unsigned char)(hlen & 0xff);
    b[9] = (unsigned char)(hlen >> 8);
    memset(b + 10, ' ', hlen);
    memcpy(b + 10, dict, dlen);
    b[10 + hlen - 1] = '\n';
    if (data_len) memcpy(b + 10 + hlen, data, data_len);
    return b;
}

static onyx_status *read_dict(const char *dict, const void *data, size_t data_len,
                              onyx_tensor **out) {
    size_t size;
    unsigned char *b = npy_image(dict, data, data_len, &size);
    onyx_status *st = onyx_tensor_read(b, size, out);
    free(b);
    return st;
}

int main(void) {
    onyx_tensor *t = NULL;
    /* the element count 3 * INT64_MAX overflows int64 */
    CHECK_FAILS(read_dict("{'descr': '<U4', 'fortran_order': False, 'shape': (3, 9223372036854775807), }",
                          NULL, 0, &t),
                ONYX_INVALID_ARGUMENT, "overflows");
    CHECK(t == NULL);
    /* '<U0' strings take no bytes: 317 million of them from 128 bytes */
    CHECK_FAILS(read_dict("{'descr': '<U0', 'fortran_order': False, 'shape': (317203175,), }",
                          NULL, 0, &t),
                ONYX_INVALID_ARGUMENT, "holds no characters");
    CHECK(t == NULL);
    /* a '<U2' array of two strings, "ab" and "c" */
    const uint32_t utf32[] = {'a', 'b', 'c', 0};
    CHECK_OK(read_dict("{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", utf32,
                       sizeof utf32, &t));
    if (t) {
        CHECK(onyx_tensor_dtype(t) == ONYX_STRING && onyx_tensor_numel(t) == 2);
        CHECK(strcmp(onyx_tensor_string(t, 0), "ab") == 0);
        CHECK(strcmp(onyx_tensor_string(t, 1), "c") == 0);
        onyx_tensor_free(t);
    }
    CHECK_DONE();
}
