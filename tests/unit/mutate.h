/* Deterministic byte mutations for the corrupted-input tests: the same
 * seed always yields the same mutants, so a failure reproduces. */
#ifndef ONYX_TESTS_MUTATE_H
#define ONYX_TESTS_MUTATE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline uint64_t mutate_next(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static inline uint8_t *mutate_read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *buf = len > 0 ? malloc((size_t)len) : NULL;
    if (buf && fread(buf, 1, (size_t)len, f) != (size_t)len) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    *n = buf ? (size_t)len : 0;
    return buf;
}

/* Copies src into dst with one mutation (a flipped bit, a random byte, a
 * truncation, a forged huge varint, or bytes spliced from elsewhere) and
 * returns the mutant's length. */
static inline size_t mutate_bytes(const uint8_t *src, size_t n, uint8_t *dst, uint64_t *rng) {
    memcpy(dst, src, n);
    size_t pos = (size_t)(mutate_next(rng) % n);
    switch (mutate_next(rng) % 5) {
    case 0: dst[pos] ^= (uint8_t)(1u << (mutate_next(rng) % 8)); return n;
    case 1: dst[pos] = (uint8_t)mutate_next(rng); return n;
    case 2: return pos;
    case 3: {
        size_t k = 0;
        while (k < 9 && pos + k < n) dst[pos + k++] = 0xff;
        if (pos + k < n) dst[pos + k] = 0x01;
        return n;
    }
    default: {
        size_t from = (size_t)(mutate_next(rng) % n), len = 1 + (size_t)(mutate_next(rng) % 16);
        for (size_t k = 0; k < len && pos + k < n && from + k < n; k++) dst[pos + k] = src[from + k];
        return n;
    }
    }
}

#endif
