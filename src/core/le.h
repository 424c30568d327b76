/* Little-endian integers in byte buffers, whatever the host's order: the
 * fixed headers of onyx's own files (format/onyx_file.c, format/artefacts.c)
 * and the checksum's words (core/hash.c). */
#ifndef ONYX_CORE_LE_H
#define ONYX_CORE_LE_H

#include <stdint.h>

static inline void ox_put_le32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void ox_put_le64(uint8_t *p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t ox_get_le32(const uint8_t *p) {
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static inline uint64_t ox_get_le64(const uint8_t *p) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
/* v rounded up to a multiple of a (a > 0). */
static inline uint64_t ox_align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

#endif
