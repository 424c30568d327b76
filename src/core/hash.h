/* Digests onyx computes itself: SHA-256 (FIPS 180-4), which names a
 * source model in an optimized file and in cache keys, and a fast 64-bit
 * checksum that guards an optimized file's sections against truncation
 * and corruption (not against tampering: anyone can recompute it). */
#ifndef ONYX_CORE_HASH_H
#define ONYX_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct ox_sha256 {
    uint32_t state[8];
    uint64_t bytes;
    uint8_t block[64];
    size_t fill;
} ox_sha256;

void ox_sha256_init(ox_sha256 *h);
void ox_sha256_update(ox_sha256 *h, const void *data, size_t len);
void ox_sha256_final(ox_sha256 *h, uint8_t digest[32]);
void ox_sha256_digest(const void *data, size_t len, uint8_t digest[32]);
/* The digest as 64 lowercase hex digits and a NUL. */
void ox_sha256_hex(const uint8_t digest[32], char hex[65]);

/* A 64-bit checksum of len bytes: four independent multiply-rotate lanes
 * over 32-byte stripes (so it runs at several bytes per cycle), the tail
 * folded in, then avalanched. Equal bytes give equal sums on every host. */
uint64_t ox_checksum64(const void *data, size_t len);

/* The checksum of a large section, chunk by chunk: acc = len, then for
 * each OX_CHECKSUM_CHUNK bytes (the last chunk may be shorter)
 * acc = ox_checksum64 of the 16 bytes acc, chunk sum (little-endian).
 * after(chunk, n, user), when not NULL, is called once a chunk is read:
 * a caller that maps a file only to check it drops the pages there, so
 * checking a section does not keep all of it resident. */
#define OX_CHECKSUM_CHUNK ((size_t)1 << 20)
uint64_t ox_checksum64_chunked(const void *data, size_t len,
                               void (*after)(const void *chunk, size_t n, void *user), void *user);

#endif
