/* Unit tests for the .npy reader and writer. Images are built by hand so
 * the tests need no NumPy; the byte layouts follow the format spec in
 * numpy/lib/format.py. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* mkdtemp, truncate */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/error.h"
#include "core/tensor.h"
#include "io/npy.h"
#include "onyx.h"

#define CHECK(cond)                                                                      \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);      \
            return 1;                                                                    \
        }                                                                                \
    } while (0)

/* Builds an image with the given version, header text and payload. */
static unsigned char *make_npy(int major, const char *header, const void *payload,
                               size_t payload_size, size_t *out_size) {
    size_t hlen = strlen(header);
    size_t pre = major == 1 ? 10 : 12;
    size_t size = pre + hlen + payload_size;
    unsigned char *b = malloc(size ? size : 1);
    if (!b) return NULL;
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    for (size_t i = 0; i < pre - 8; i++) b[8 + i] = (unsigned char)(hlen >> (8 * i));
    memcpy(b + pre, header, hlen);
    if (payload_size) memcpy(b + pre + hlen, payload, payload_size);
    *out_size = size;
    return b;
}

/* Reads an image built from header and payload; returns the read status
 * and fills err / out. */
static int read_img(int major, const char *header, const void *payload, size_t n,
                    ox_tensor **out, ox_error *err) {
    size_t size;
    unsigned char *img = make_npy(major, header, payload, n, &size);
    if (!img) return -2;
    ox_error_clear(err);
    int rc = ox_npy_read(img, size, out, err);
    free(img);
    return rc;
}

static int expect_error(const char *header, const void *payload, size_t n, onyx_code code,
                        const char *needle) {
    ox_tensor *t = NULL;
    ox_error err;
    int rc = read_img(1, header, payload, n, &t, &err);
    if (rc == 0) {
        ox_tensor_free(t);
        fprintf(stderr, "header %s was accepted\n", header);
        return 1;
    }
    if (t != NULL || err.code != code || (needle && !strstr(err.msg, needle))) {
        fprintf(stderr, "header %s: code %d, message '%s'\n", header, (int)err.code, err.msg);
        return 1;
    }
    return 0;
}

static int test_round_trip_all_dtypes(void) {
    static const onyx_dtype types[] = {
        ONYX_FLOAT32, ONYX_UINT8,  ONYX_INT8,   ONYX_UINT16,    ONYX_INT16,
        ONYX_INT32,   ONYX_INT64,  ONYX_BOOL,   ONYX_FLOAT16,   ONYX_FLOAT64,
        ONYX_UINT32,  ONYX_UINT64, ONYX_COMPLEX64, ONYX_COMPLEX128, ONYX_BFLOAT16,
    };
    for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
        ox_error err;
        ox_error_clear(&err);
        int64_t dims[3] = {2, 3, 4};
        ox_tensor *t = ox_tensor_new(types[k], dims, 3, &err);
        CHECK(t != NULL);
        unsigned char *p = t->data;
        for (size_t i = 0; i < t->nbytes; i++)
            p[i] = types[k] == ONYX_BOOL ? (unsigned char)(i % 3 == 0) : (unsigned char)(i * 7 + 1);
        void *img;
        size_t size;
        CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
        ox_tensor *back = NULL;
        CHECK(ox_npy_read(img, size, &back, &err) == 0);
        onyx_dtype want = types[k] == ONYX_BFLOAT16 ? ONYX_UINT16 : types[k];
        CHECK(back->dtype == want);
        CHECK(back->kind == OX_KIND_TENSOR);
        CHECK(ox_shape_equal(back->dims, back->rank, dims, 3));
        CHECK(back->nbytes == t->nbytes);
        CHECK(memcmp(back->data, t->data, t->nbytes) == 0);
        free(img);
        ox_tensor_free(back);
        ox_tensor_free(t);
    }
    return 0;
}

static int test_header_layout(void) {
    ox_error err;
    ox_error_clear(&err);
    int64_t dims[1] = {5};
    ox_tensor *t = ox_tensor_new(ONYX_FLOAT32, dims, 1, &err);
    CHECK(t != NULL);
    void *img;
    size_t size;
    CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
    const unsigned char *b = img;
    CHECK(memcmp(b, "\x93NUMPY\x01\x00", 8) == 0);
    size_t hlen = (size_t)b[8] | ((size_t)b[9] << 8);
    CHECK((10 + hlen) % 64 == 0);
    CHECK(size == 10 + hlen + 20);
    CHECK(b[10 + hlen - 1] == '\n');
    char hdr[256];
    CHECK(hlen < sizeof hdr);
    memcpy(hdr, b + 10, hlen);
    hdr[hlen] = '\0';
    CHECK(strstr(hdr, "'descr': '<f4'") != NULL);
    CHECK(strstr(hdr, "'fortran_order': False") != NULL);
    CHECK(strstr(hdr, "'shape': (5,)") != NULL);
    free(img);
    ox_tensor_free(t);

    /* float16 and bool keep numpy's own codes; bfloat16 travels as bits */
    static const struct {
        onyx_dtype t;
        const char *descr;
    } codes[] = {{ONYX_FLOAT16, "'<f2'"}, {ONYX_BOOL, "'|b1'"}, {ONYX_BFLOAT16, "'<u2'"},
                 {ONYX_INT64, "'<i8'"},   {ONYX_UINT8, "'|u1'"}, {ONYX_COMPLEX128, "'<c16'"}};
    for (size_t k = 0; k < sizeof codes / sizeof codes[0]; k++) {
        int64_t d2[2] = {2, 3};
        t = ox_tensor_new(codes[k].t, d2, 2, &err);
        CHECK(t != NULL);
        CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
        b = img;
        hlen = (size_t)b[8] | ((size_t)b[9] << 8);
        CHECK(hlen < sizeof hdr);
        memcpy(hdr, b + 10, hlen);
        hdr[hlen] = '\0';
        CHECK(strstr(hdr, codes[k].descr) != NULL);
        CHECK(strstr(hdr, "'shape': (2, 3)") != NULL);
        free(img);
        ox_tensor_free(t);
    }
    return 0;
}

static int test_scalar_and_empty(void) {
    ox_error err;
    ox_error_clear(&err);
    ox_tensor *t = ox_tensor_new(ONYX_FLOAT64, NULL, 0, &err);
    CHECK(t != NULL);
    *(double *)t->data = 3.25;
    void *img;
    size_t size;
    CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
    CHECK(strstr((const char *)img + 10, "'shape': ()") != NULL);
    ox_tensor *back = NULL;
    CHECK(ox_npy_read(img, size, &back, &err) == 0);
    CHECK(back->rank == 0);
    CHECK(back->dtype == ONYX_FLOAT64);
    CHECK(*(double *)back->data == 3.25);
    free(img);
    ox_tensor_free(back);
    ox_tensor_free(t);

    int64_t dims[3] = {0, 3, 2};
    t = ox_tensor_new(ONYX_INT32, dims, 3, &err);
    CHECK(t != NULL);
    CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
    CHECK(ox_npy_read(img, size, &back, &err) == 0);
    CHECK(back->rank == 3 && back->dims[0] == 0 && back->dims[1] == 3 && back->dims[2] == 2);
    CHECK(back->nbytes == 0);
    free(img);
    ox_tensor_free(back);
    ox_tensor_free(t);

    /* a scalar header written by hand, without the trailing comma */
    float one = 1.0f;
    CHECK(read_img(1, "{'descr': '<f4', 'fortran_order': False, 'shape': ()}\n", &one, 4, &back,
                   &err) == 0);
    CHECK(back->rank == 0 && *(float *)back->data == 1.0f);
    ox_tensor_free(back);
    return 0;
}

static int test_big_endian(void) {
    ox_error err;
    ox_tensor *t = NULL;
    const unsigned char i4[] = {0x00, 0x00, 0x01, 0x02, 0xff, 0xff, 0xff, 0xfe};
    CHECK(read_img(1, "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n", i4,
                   sizeof i4, &t, &err) == 0);
    CHECK(t->dtype == ONYX_INT32);
    CHECK(((int32_t *)t->data)[0] == 0x102 && ((int32_t *)t->data)[1] == -2);
    ox_tensor_free(t);

    /* 1.5 as a big-endian double: 0x3FF8000000000000 */
    const unsigned char f8[] = {0x3f, 0xf8, 0, 0, 0, 0, 0, 0};
    CHECK(read_img(1, "{'descr': '>f8', 'fortran_order': False, 'shape': (), }\n", f8,
                   sizeof f8, &t, &err) == 0);
    CHECK(t->dtype == ONYX_FLOAT64 && *(double *)t->data == 1.5);
    ox_tensor_free(t);

    /* complex parts are swapped one by one: 1+2j as two >f4 */
    const unsigned char c8[] = {0x3f, 0x80, 0, 0, 0x40, 0x00, 0, 0};
    CHECK(read_img(1, "{'descr': '>c8', 'fortran_order': False, 'shape': (1,), }\n", c8,
                   sizeof c8, &t, &err) == 0);
    CHECK(t->dtype == ONYX_COMPLEX64);
    CHECK(((float *)t->data)[0] == 1.0f && ((float *)t->data)[1] == 2.0f);
    ox_tensor_free(t);

    /* float16 1.0 = 0x3C00 */
    const unsigned char f2[] = {0x3c, 0x00};
    CHECK(read_img(1, "{'descr': '>f2', 'fortran_order': False, 'shape': (1,), }\n", f2,
                   sizeof f2, &t, &err) == 0);
    CHECK(t->dtype == ONYX_FLOAT16 && *(uint16_t *)t->data == 0x3c00);
    ox_tensor_free(t);

    /* single bytes have no order; '>' on them changes nothing */
    const unsigned char u1[] = {7, 200};
    CHECK(read_img(1, "{'descr': '>u1', 'fortran_order': False, 'shape': (2,), }\n", u1,
                   sizeof u1, &t, &err) == 0);
    CHECK(t->dtype == ONYX_UINT8 && ((uint8_t *)t->data)[1] == 200);
    ox_tensor_free(t);
    return 0;
}

static int test_fortran_order(void) {
    ox_error err;
    ox_tensor *t = NULL;
    /* C order [[0,1,2],[3,4,5]] stored column by column */
    const int16_t f[] = {0, 3, 1, 4, 2, 5};
    CHECK(read_img(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3), }\n", f,
                   sizeof f, &t, &err) == 0);
    for (int i = 0; i < 6; i++) CHECK(((int16_t *)t->data)[i] == i);
    ox_tensor_free(t);

    /* 2x3x4: element (i,j,k) has value 100i+10j+k; Fortran offset
     * i + 2j + 6k */
    int32_t f3[24];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) f3[i + 2 * j + 6 * k] = 100 * i + 10 * j + k;
    CHECK(read_img(1, "{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3, 4), }\n", f3,
                   sizeof f3, &t, &err) == 0);
    const int32_t *c = t->data;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) CHECK(c[(i * 3 + j) * 4 + k] == 100 * i + 10 * j + k);
    ox_tensor_free(t);

    /* 1-D and empty Fortran arrays are the same as C order */
    const int16_t one[] = {9, 8};
    CHECK(read_img(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (2,), }\n", one,
                   sizeof one, &t, &err) == 0);
    CHECK(((int16_t *)t->data)[0] == 9);
    ox_tensor_free(t);
    CHECK(read_img(1, "{'descr': '<i2', 'fortran_order': True, 'shape': (3, 0), }\n", NULL, 0,
                   &t, &err) == 0);
    CHECK(t->nbytes == 0);
    ox_tensor_free(t);
    return 0;
}

static int test_versions_and_variants(void) {
    ox_error err;
    ox_tensor *t = NULL;
    const int64_t v[] = {5, -6};
    for (int major = 2; major <= 3; major++) {
        CHECK(read_img(major, "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n", v,
                       sizeof v, &t, &err) == 0);
        CHECK(t->dtype == ONYX_INT64 && ((int64_t *)t->data)[1] == -6);
        ox_tensor_free(t);
    }
    /* double quotes, Python 2 long suffix, keys in another order, no
     * trailing comma or newline */
    CHECK(read_img(1, "{\"shape\":(2L,),\"fortran_order\":False,\"descr\":\"<i8\"}", v, sizeof v,
                   &t, &err) == 0);
    CHECK(t->dims[0] == 2);
    ox_tensor_free(t);
    /* '=' is native order and '|?' numpy's other spelling of bool */
    CHECK(read_img(1, "{'descr': '=i8', 'fortran_order': False, 'shape': (2,), }\n", v, sizeof v,
                   &t, &err) == 0);
    ox_tensor_free(t);
    const unsigned char bools[] = {0, 1, 2};
    CHECK(read_img(1, "{'descr': '|?', 'fortran_order': False, 'shape': (3,), }\n", bools,
                   sizeof bools, &t, &err) == 0);
    CHECK(t->dtype == ONYX_BOOL);
    /* any non-zero byte is True and is stored as 1 */
    CHECK(((uint8_t *)t->data)[2] == 1);
    ox_tensor_free(t);
    return 0;
}

static int test_malformed(void) {
    const float two[2] = {1, 2};
    int bad = 0;
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False}\n", two, 8,
                        ONYX_INVALID_ARGUMENT, "no 'shape'");
    bad |= expect_error("{'fortran_order': False, 'shape': (2,)}\n", two, 8,
                        ONYX_INVALID_ARGUMENT, "no 'descr'");
    bad |= expect_error("{'descr': '<f4', 'shape': (2,)}\n", two, 8, ONYX_INVALID_ARGUMENT,
                        "no 'fortran_order'");
    bad |= expect_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}",
                        two, 8, ONYX_INVALID_ARGUMENT, "duplicate");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'x': 1}", two,
                        8, ONYX_INVALID_ARGUMENT, "unexpected key 'x'");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "not a tuple");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': [2]}", two, 8,
                        ONYX_INVALID_ARGUMENT, "shape must be a tuple");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "negative");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': false, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "True or False");
    bad |= expect_error("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "invalid .npy header");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x", two, 8,
                        ONYX_INVALID_ARGUMENT, "after '}'");
    bad |= expect_error("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "expected ',' or '}'");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)", two, 8,
                        ONYX_INVALID_ARGUMENT, "invalid .npy header");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2 3)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "expected ',' or ')'");
    bad |= expect_error("{'descr': '<q4', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "bad descr");
    bad |= expect_error("{'descr': '<f', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "bad descr");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}\xc3\xa9", two, 8,
                        ONYX_INVALID_ARGUMENT, "non-ASCII");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "truncated");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "after the");
    /* a shape far beyond the data must fail before anything is allocated */
    bad |= expect_error("{'descr': '<f8', 'fortran_order': False, "
                        "'shape': (4294967296, 4294967296, 4294967296)}",
                        two, 8, ONYX_OUT_OF_MEMORY, NULL);
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (99999999999999999999,)}",
                        two, 8, ONYX_INVALID_ARGUMENT, "too large");
    bad |= expect_error("{'descr': '<f4', 'fortran_order': False, 'shape': "
                        "(1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)}",
                        two, 4, ONYX_NOT_IMPLEMENTED, "rank");
    /* valid numpy that onyx does not take */
    bad |= expect_error("{'descr': '|S3', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_NOT_IMPLEMENTED, "byte-string");
    /* unicode arrays must hold exactly their 4-byte code units */
    bad |= expect_error("{'descr': '<U3', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_INVALID_ARGUMENT, "needs 24 bytes");
    bad |= expect_error("{'descr': '<V3', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_NOT_IMPLEMENTED, "not supported");
    bad |= expect_error("{'descr': '|O', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_NOT_IMPLEMENTED, "object");
    bad |= expect_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,)}", two,
                        8, ONYX_NOT_IMPLEMENTED, "structured");
    bad |= expect_error("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,)}", two, 8,
                        ONYX_NOT_IMPLEMENTED, "not supported");
    bad |= expect_error("{'descr': '<f16', 'fortran_order': False, 'shape': (2,)}", two, 8,
                        ONYX_NOT_IMPLEMENTED, "not supported");
    CHECK(!bad);
    return 0;
}

static int test_truncated_preamble(void) {
    ox_error err;
    ox_tensor *t = NULL;
    const unsigned char *cases[] = {(const unsigned char *)"", (const unsigned char *)"\x93NUM",
                                    (const unsigned char *)"\x93NUMPY",
                                    (const unsigned char *)"\x93NUMPY\x01\x00\x40",
                                    (const unsigned char *)"\x93NUMPY\x01\x00\x40\x00{",
                                    (const unsigned char *)"PK\x03\x04 not npy"};
    const size_t sizes[] = {0, 4, 6, 9, 11, 13};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        ox_error_clear(&err);
        CHECK(ox_npy_read(cases[i], sizes[i], &t, &err) != 0);
        CHECK(t == NULL);
        CHECK(err.code == ONYX_INVALID_ARGUMENT);
    }
    /* a full file cut short anywhere must fail cleanly */
    int64_t dims[2] = {3, 5};
    ox_tensor *src = ox_tensor_new(ONYX_INT16, dims, 2, &err);
    CHECK(src != NULL);
    void *img;
    size_t size;
    CHECK(ox_npy_encode(src, &img, &size, &err) == 0);
    for (size_t cut = 0; cut < size; cut++) {
        ox_error_clear(&err);
        CHECK(ox_npy_read(img, cut, &t, &err) != 0);
        CHECK(t == NULL && err.code != ONYX_OK);
    }
    free(img);
    ox_tensor_free(src);

    const unsigned char v4[] = "\x93NUMPY\x04\x00\x00\x00";
    ox_error_clear(&err);
    CHECK(ox_npy_read(v4, 10, &t, &err) != 0);
    CHECK(err.code == ONYX_NOT_IMPLEMENTED && strstr(err.msg, "version 4.0"));
    return 0;
}

/* Strings save as numpy's '<U{n}' (UTF-32LE, NUL-padded to the longest
 * element) and read back as UTF-8, as np.save / np.load do. */
static int test_strings(void) {
    ox_error err;
    ox_error_clear(&err);
    int64_t dims[2] = {2, 2};
    ox_tensor *s = ox_tensor_new(ONYX_STRING, dims, 2, &err);
    CHECK(s != NULL);
    const char *vals[4] = {"ab", "", "x\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "abcde"};
    char **d = s->data;
    for (int i = 0; i < 4; i++) {
        free(d[i]);
        d[i] = strdup(vals[i]);
        CHECK(d[i] != NULL);
    }
    void *img = NULL;
    size_t size = 0;
    CHECK(ox_npy_encode(s, &img, &size, &err) == 0);
    const unsigned char *b = img;
    size_t hlen = (size_t)b[8] | ((size_t)b[9] << 8);
    CHECK(strstr((const char *)b + 10, "'descr': '<U5'") != NULL);
    CHECK(size == 10 + hlen + 4 * 5 * 4);
    /* "x" then U+00E9 U+20AC U+1F600 as little-endian code units */
    const unsigned char *e2 = b + 10 + hlen + 2 * 5 * 4;
    CHECK(e2[0] == 'x' && e2[4] == 0xe9 && e2[8] == 0xac && e2[9] == 0x20);
    CHECK(e2[12] == 0x00 && e2[13] == 0xf6 && e2[14] == 0x01 && e2[16] == 0);
    ox_tensor *back = NULL;
    CHECK(ox_npy_read(img, size, &back, &err) == 0);
    CHECK(back->dtype == ONYX_STRING && ox_shape_equal(back->dims, back->rank, dims, 2));
    for (int i = 0; i < 4; i++) CHECK(strcmp(((char **)back->data)[i], vals[i]) == 0);
    ox_tensor_free(back);
    free(img);
    ox_tensor_free(s);

    /* big-endian and Fortran-ordered unicode, as numpy may write them */
    const unsigned char be[] = {0, 0, 0, 'h', 0, 0, 0, 'i', 0, 0, 0, 'y', 0, 0, 0, 0};
    CHECK(read_img(1, "{'descr': '>U2', 'fortran_order': False, 'shape': (2,), }\n", be,
                   sizeof be, &back, &err) == 0);
    CHECK(strcmp(((char **)back->data)[0], "hi") == 0 && strcmp(((char **)back->data)[1], "y") == 0);
    ox_tensor_free(back);
    const unsigned char fo[] = {'a', 0, 0, 0, 'b', 0, 0, 0, 'c', 0, 0, 0, 'd', 0, 0, 0};
    CHECK(read_img(1, "{'descr': '<U1', 'fortran_order': True, 'shape': (2, 2), }\n", fo,
                   sizeof fo, &back, &err) == 0);
    /* column-major a b c d is the matrix [[a, c], [b, d]] */
    CHECK(strcmp(((char **)back->data)[1], "c") == 0 && strcmp(((char **)back->data)[2], "b") == 0);
    ox_tensor_free(back);
    return 0;
}

/* The narrow types save one element per byte: int4/int2 as int8 values,
 * uint4/uint2 and the narrow floats as uint8; ml_dtypes' opaque 'V1'/'V2'
 * records read as uint8/uint16 bits. */
static int test_narrow_types(void) {
    ox_error err;
    ox_error_clear(&err);
    static const struct {
        onyx_dtype t;
        const char *descr;
        onyx_dtype back;
    } cases[] = {{ONYX_INT4, "'|i1'", ONYX_INT8},        {ONYX_INT2, "'|i1'", ONYX_INT8},
                 {ONYX_UINT4, "'|u1'", ONYX_UINT8},      {ONYX_UINT2, "'|u1'", ONYX_UINT8},
                 {ONYX_FLOAT8E4M3FN, "'|u1'", ONYX_UINT8}, {ONYX_FLOAT8E5M2FNUZ, "'|u1'", ONYX_UINT8},
                 {ONYX_FLOAT4E2M1, "'|u1'", ONYX_UINT8}, {ONYX_FLOAT8E8M0, "'|u1'", ONYX_UINT8},
                 {ONYX_FLOAT6E3M2, "'|u1'", ONYX_UINT8}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int64_t dims[1] = {3};
        ox_tensor *t = ox_tensor_new(cases[k].t, dims, 1, &err);
        CHECK(t != NULL && t->nbytes == 3);
        ((int8_t *)t->data)[0] = -1;
        ((int8_t *)t->data)[2] = 1;
        void *img;
        size_t size;
        CHECK(ox_npy_encode(t, &img, &size, &err) == 0);
        CHECK(strstr((const char *)img + 10, cases[k].descr) != NULL);
        ox_tensor *back = NULL;
        CHECK(ox_npy_read(img, size, &back, &err) == 0);
        CHECK(back->dtype == cases[k].back && memcmp(back->data, t->data, 3) == 0);
        ox_tensor_free(back);
        free(img);
        ox_tensor_free(t);
    }
    ox_tensor *t = NULL;
    const unsigned char v[4] = {0x38, 0xb8, 0x80, 0x3f};
    CHECK(read_img(1, "{'descr': '<V1', 'fortran_order': False, 'shape': (4,), }\n", v, 4, &t,
                   &err) == 0);
    CHECK(t->dtype == ONYX_UINT8 && memcmp(t->data, v, 4) == 0);
    ox_tensor_free(t);
    CHECK(read_img(1, "{'descr': '<V2', 'fortran_order': False, 'shape': (2,), }\n", v, 4, &t,
                   &err) == 0);
    CHECK(t->dtype == ONYX_UINT16 && ((uint16_t *)t->data)[1] == 0x3f80);
    ox_tensor_free(t);
    return 0;
}

static int test_encode_rejects(void) {
    ox_error err;
    ox_error_clear(&err);
    void *img = NULL;
    size_t size = 0;
    ox_tensor *seq = ox_sequence_new(ONYX_FLOAT32, &err);
    CHECK(seq != NULL);
    ox_error_clear(&err);
    CHECK(ox_npy_encode(seq, &img, &size, &err) != 0);
    CHECK(strstr(err.msg, "sequence"));
    ox_tensor_free(seq);
    return 0;
}

static int make_tmpdir(char *buf, size_t n) {
    const char *base = getenv("TMPDIR");
    snprintf(buf, n, "%s/onyx-npy-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(buf) ? 0 : -1;
}

static int test_files(void) {
    char dir[512], path[600];
    CHECK(make_tmpdir(dir, sizeof dir) == 0);
    snprintf(path, sizeof path, "%s/t.npy", dir);
    ox_error err;
    ox_error_clear(&err);
    int64_t dims[2] = {2, 2};
    ox_tensor *t = ox_tensor_new(ONYX_FLOAT32, dims, 2, &err);
    CHECK(t != NULL);
    for (int i = 0; i < 4; i++) ((float *)t->data)[i] = (float)i * 0.5f;
    CHECK(ox_npy_write(t, path, &err) == 0);

    /* through the public API: load dispatches on the magic */
    onyx_tensor *back = NULL;
    onyx_status *st = onyx_tensor_load(path, &back);
    CHECK(st == NULL);
    CHECK(onyx_tensor_dtype(back) == ONYX_FLOAT32 && onyx_tensor_numel(back) == 4);
    CHECK(memcmp(onyx_tensor_data(back), t->data, 16) == 0);
    onyx_tensor_free(back);

    char path2[700];
    snprintf(path2, sizeof path2, "%s/u.npy", dir);
    CHECK(onyx_tensor_save_npy(t, path2) == NULL);
    CHECK(onyx_tensor_load(path2, &back) == NULL);
    onyx_tensor_free(back);

    /* errors name the file */
    char missing[700];
    snprintf(missing, sizeof missing, "%s/no/such/dir/x.npy", dir);
    st = onyx_tensor_save_npy(t, missing);
    CHECK(st != NULL && onyx_status_code(st) == ONYX_IO_ERROR);
    CHECK(strstr(onyx_status_message(st), missing) != NULL);
    onyx_status_free(st);
    back = (onyx_tensor *)1;
    st = onyx_tensor_load(missing, &back);
    CHECK(st != NULL && onyx_status_code(st) == ONYX_IO_ERROR && back == NULL);
    CHECK(strstr(onyx_status_message(st), missing) != NULL);
    onyx_status_free(st);
    st = onyx_tensor_load(dir, &back);
    CHECK(st != NULL && onyx_status_code(st) == ONYX_IO_ERROR);
    onyx_status_free(st);

    /* a truncated file on disk reports the path and the cause */
    CHECK(truncate(path, 100) == 0);
    st = onyx_tensor_load(path, &back);
    CHECK(st != NULL && strstr(onyx_status_message(st), path) != NULL);
    CHECK(strstr(onyx_status_message(st), "truncated") != NULL);
    onyx_status_free(st);

    /* in-memory reads: empty input and junk both fail without a tensor */
    st = onyx_tensor_read("", 0, &back);
    CHECK(st != NULL && back == NULL);
    onyx_status_free(st);
    const unsigned char junk[] = {0xff, 0xfe, 0x13, 0x99, 0x07, 0x42, 0x00, 0x81};
    st = onyx_tensor_read(junk, sizeof junk, &back);
    CHECK(st != NULL && back == NULL);
    onyx_status_free(st);
    st = onyx_tensor_save_npy(NULL, path);
    CHECK(st != NULL);
    onyx_status_free(st);

    ox_tensor_free(t);
    unlink(path);
    unlink(path2);
    CHECK(rmdir(dir) == 0);
    return 0;
}

int main(void) {
    struct {
        const char *name;
        int (*fn)(void);
    } tests[] = {
        {"round_trip_all_dtypes", test_round_trip_all_dtypes},
        {"header_layout", test_header_layout},
        {"scalar_and_empty", test_scalar_and_empty},
        {"big_endian", test_big_endian},
        {"fortran_order", test_fortran_order},
        {"versions_and_variants", test_versions_and_variants},
        {"malformed", test_malformed},
        {"truncated_preamble", test_truncated_preamble},
        {"encode_rejects", test_encode_rejects},
        {"strings", test_strings},
        {"narrow_types", test_narrow_types},
        {"files", test_files},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
        int rc = tests[i].fn();
        printf("%s %s\n", rc ? "FAIL" : "ok  ", tests[i].name);
        failed += rc != 0;
    }
    if (failed) fprintf(stderr, "%d test(s) failed\n", failed);
    return failed ? 1 : 0;
}
