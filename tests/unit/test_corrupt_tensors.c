/* Corrupted tensor files: deterministic mutations of a real TensorProto
 * (.pb) and of the same tensor saved as .npy must each parse or fail with
 * a status, for every value kind a caller may ask for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

#define MUTANTS 4000

static uint64_t next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static uint8_t *read_all(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = malloc((size_t)len + 1);
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = (size_t)len;
    return buf;
}

static size_t mutate(const uint8_t *src, size_t n, uint8_t *dst, uint64_t *rng) {
    memcpy(dst, src, n);
    size_t pos = (size_t)(next(rng) % n);
    switch (next(rng) % 4) {
    case 0: dst[pos] ^= (uint8_t)(1u << (next(rng) % 8)); return n;
    case 1: dst[pos] = (uint8_t)next(rng); return n;
    case 2: return pos;
    default: {
        size_t k = 0;
        while (k < 9 && pos + k < n) dst[pos + k++] = 0xff;
        return n;
    }
    }
}

static size_t element_size(onyx_dtype t) {
    switch (t) {
    case ONYX_UINT8: case ONYX_INT8: case ONYX_BOOL: return 1;
    case ONYX_UINT16: case ONYX_INT16: case ONYX_FLOAT16: case ONYX_BFLOAT16: return 2;
    case ONYX_FLOAT32: case ONYX_INT32: case ONYX_UINT32: return 4;
    case ONYX_FLOAT64: case ONYX_INT64: case ONYX_UINT64: case ONYX_COMPLEX64: return 8;
    case ONYX_COMPLEX128: return 16;
    default: return 0;
    }
}

static void fuzz(const uint8_t *orig, size_t n, uint64_t seed, const char *what) {
    uint8_t *buf = malloc(n);
    int parsed = 0, rejected = 0;
    for (int i = 0; i < MUTANTS; i++) {
        size_t len = mutate(orig, n, buf, &seed);
        onyx_value_kind kind = (onyx_value_kind)(i % 4 == 3 ? ONYX_KIND_SEQUENCE : ONYX_KIND_TENSOR);
        onyx_tensor *t = NULL;
        onyx_status *st = i % 2 ? onyx_tensor_read(buf, len, &t) : onyx_tensor_read_kind(buf, len, kind, &t);
        if (st) {
            CHECK(t == NULL);
            CHECK(onyx_status_message(st)[0] != '\0');
            onyx_status_free(st);
            rejected++;
        } else {
            /* whatever parsed must be self-consistent */
            if (onyx_tensor_kind(t) == ONYX_KIND_TENSOR && onyx_tensor_dtype(t) != ONYX_STRING)
                CHECK(onyx_tensor_nbytes(t) ==
                      (size_t)onyx_tensor_numel(t) * element_size(onyx_tensor_dtype(t)));
            onyx_tensor_free(t);
            parsed++;
        }
    }
    printf("%s: %d mutants, %d parsed, %d rejected\n", what, MUTANTS, parsed, rejected);
    CHECK(rejected > 0);
    free(buf);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: test_corrupt_tensors TENSOR.pb\n");
        return 2;
    }
    size_t n;
    uint8_t *pb = read_all(argv[1], &n);
    CHECK(pb != NULL && n > 0);
    if (!pb) CHECK_DONE();
    fuzz(pb, n, 0x9e3779b97f4a7c15ULL, "TensorProto");

    onyx_tensor *t = NULL;
    CHECK_OK(onyx_tensor_read(pb, n, &t));
    char path[] = "/tmp/onyx_corrupt_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd >= 0) close(fd);
    if (t) CHECK_OK(onyx_tensor_save_npy(t, path));
    size_t m = 0;
    uint8_t *npy = read_all(path, &m);
    unlink(path);
    CHECK(npy != NULL && m > 0);
    if (npy) fuzz(npy, m, 0xd1b54a32d192ed03ULL, "npy");
    onyx_tensor_free(t);
    free(npy);
    free(pb);
    CHECK_DONE();
}
