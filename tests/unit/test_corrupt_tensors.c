/* Corrupted tensor files: deterministic mutations of a real TensorProto
 * (.pb) and of the same tensor saved as .npy must each parse or fail with
 * a status, for every value kind a caller may ask for. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "mutate.h"

#define MUTANTS 4000

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
        size_t len = mutate_bytes(orig, n, buf, &seed);
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
    uint8_t *pb = mutate_read_file(argv[1], &n);
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
    uint8_t *npy = mutate_read_file(path, &m);
    unlink(path);
    CHECK(npy != NULL && m > 0);
    if (npy) fuzz(npy, m, 0xd1b54a32d192ed03ULL, "npy");
    onyx_tensor_free(t);
    free(npy);
    free(pb);
    CHECK_DONE();
}
