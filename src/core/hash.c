#include "core/hash.h"

#include <string.h>

#include "core/le.h"

/* ---- SHA-256 ---- */

static const uint32_t K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror32(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256_block(uint32_t s[8], const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 |
               p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ror32(w[i - 15], 7) ^ ror32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror32(w[i - 2], 17) ^ ror32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s[0], b = s[1], c = s[2], d = s[3], e = s[4], f = s[5], g = s[6], h = s[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ror32(e, 6) ^ ror32(e, 11) ^ ror32(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i];
        uint32_t t2 = (ror32(a, 2) ^ ror32(a, 13) ^ ror32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s[0] += a;
    s[1] += b;
    s[2] += c;
    s[3] += d;
    s[4] += e;
    s[5] += f;
    s[6] += g;
    s[7] += h;
}

void ox_sha256_init(ox_sha256 *h) {
    static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(h->state, iv, sizeof iv);
    h->bytes = 0;
    h->fill = 0;
}

void ox_sha256_update(ox_sha256 *h, const void *data, size_t len) {
    const uint8_t *p = data;
    h->bytes += len;
    if (h->fill) {
        size_t take = 64 - h->fill < len ? 64 - h->fill : len;
        memcpy(h->block + h->fill, p, take);
        h->fill += take;
        p += take;
        len -= take;
        if (h->fill < 64) return;
        sha256_block(h->state, h->block);
        h->fill = 0;
    }
    for (; len >= 64; p += 64, len -= 64) sha256_block(h->state, p);
    memcpy(h->block, p, len);
    h->fill = len;
}

void ox_sha256_final(ox_sha256 *h, uint8_t digest[32]) {
    uint64_t bits = h->bytes * 8;
    uint8_t pad[72] = {0x80};
    size_t n = h->fill < 56 ? 56 - h->fill : 120 - h->fill;
    for (int i = 0; i < 8; i++) pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
    uint64_t keep = h->bytes;
    ox_sha256_update(h, pad, n + 8);
    h->bytes = keep;
    for (int i = 0; i < 8; i++) {
        digest[4 * i] = (uint8_t)(h->state[i] >> 24);
        digest[4 * i + 1] = (uint8_t)(h->state[i] >> 16);
        digest[4 * i + 2] = (uint8_t)(h->state[i] >> 8);
        digest[4 * i + 3] = (uint8_t)h->state[i];
    }
}

void ox_sha256_digest(const void *data, size_t len, uint8_t digest[32]) {
    ox_sha256 h;
    ox_sha256_init(&h);
    ox_sha256_update(&h, data, len);
    ox_sha256_final(&h, digest);
}

void ox_sha256_hex(const uint8_t digest[32], char hex[65]) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        hex[2 * i] = digits[digest[i] >> 4];
        hex[2 * i + 1] = digits[digest[i] & 15];
    }
    hex[64] = 0;
}

/* ---- 64-bit checksum ---- */

#define M1 0x9e3779b185ebca87ULL
#define M2 0xc2b2ae3d27d4eb4fULL
#define M3 0x165667b19e3779f9ULL

static uint64_t rol64(uint64_t x, int n) { return (x << n) | (x >> (64 - n)); }

static uint64_t mix(uint64_t acc, uint64_t word) { return rol64(acc + word * M2, 31) * M1; }

uint64_t ox_checksum64(const void *data, size_t len) {
    const uint8_t *p = data;
    uint64_t lane[4] = {M1 + M2, M2, 0, (uint64_t)0 - M1};
    size_t stripes = len / 32;
    for (size_t s = 0; s < stripes; s++, p += 32)
        for (int k = 0; k < 4; k++) lane[k] = mix(lane[k], ox_get_le64(p + 8 * k));
    uint64_t h = rol64(lane[0], 1) + rol64(lane[1], 7) + rol64(lane[2], 12) + rol64(lane[3], 18);
    h ^= (uint64_t)len * M3;
    size_t rest = len % 32;
    for (; rest >= 8; rest -= 8, p += 8) h = rol64(h ^ mix(0, ox_get_le64(p)), 27) * M1 + M3;
    for (; rest; rest--, p++) h = rol64(h ^ (*p * M1), 11) * M2;
    h ^= h >> 33;
    h *= M2;
    h ^= h >> 29;
    h *= M3;
    h ^= h >> 32;
    return h;
}

uint64_t ox_checksum64_chunked(const void *data, size_t len,
                               void (*after)(const void *chunk, size_t n, void *user), void *user) {
    const uint8_t *p = data;
    uint64_t acc = (uint64_t)len;
    for (size_t at = 0; at < len; at += OX_CHECKSUM_CHUNK) {
        size_t n = len - at < OX_CHECKSUM_CHUNK ? len - at : OX_CHECKSUM_CHUNK;
        uint64_t sum = ox_checksum64(p + at, n);
        if (after) after(p + at, n, user);
        uint8_t pair[16];
        ox_put_le64(pair, acc);
        ox_put_le64(pair + 8, sum);
        acc = ox_checksum64(pair, sizeof pair);
    }
    return acc;
}
