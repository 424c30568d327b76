/* PNM decoder of ImageDecoder: the Netpbm formats PBM (P1 plain, P4
 * raw), PGM (P2, P5) and PPM (P3, P6). Raw samples are one byte when
 * maxval < 256 and two big-endian bytes otherwise; samples are scaled
 * from 0..maxval to 0..255, rounding halves to even as the ONNX reference
 * (Pillow) does. PBM's 1 is black. A sample above maxval is corrupt.
 *
 * The header is a sequence of whitespace-separated decimal numbers with
 * '#' comments running to the end of a line; raw rasters follow a single
 * whitespace byte. Sizes are checked against the bytes left before any
 * allocation, so a short file cannot ask for a large image. */
#include <string.h>

#include "ep/cpu/kernels/codec_decode.h"

typedef struct reader {
    const uint8_t *p;
    size_t size, pos;
} reader;

static int is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

/* Skips whitespace and comments. */
static void skip_blank(reader *r) {
    while (r->pos < r->size) {
        uint8_t c = r->p[r->pos];
        if (c == '#') {
            while (r->pos < r->size && r->p[r->pos] != '\n' && r->p[r->pos] != '\r') r->pos++;
        } else if (is_space(c)) {
            r->pos++;
        } else {
            return;
        }
    }
}

/* An unsigned decimal after optional blanks, at most `max`; -1 when
 * there is none, it is larger, or it runs into a byte that is neither a
 * digit nor a separator. */
static int64_t read_uint(reader *r, int64_t max) {
    skip_blank(r);
    if (r->pos >= r->size || r->p[r->pos] < '0' || r->p[r->pos] > '9') return -1;
    int64_t v = 0;
    while (r->pos < r->size && r->p[r->pos] >= '0' && r->p[r->pos] <= '9') {
        v = v * 10 + (r->p[r->pos++] - '0');
        if (v > max) return -1;
    }
    if (r->pos < r->size && !is_space(r->p[r->pos]) && r->p[r->pos] != '#') return -1;
    return v;
}

/* v in 0..maxval to 0..255, rounding halves to even. */
static uint8_t scale(uint32_t v, uint32_t maxval) {
    if (maxval == 255) return (uint8_t)v;
    uint32_t num = v * 255u; /* v <= 65535: fits */
    uint32_t q = num / maxval, rem = num % maxval;
    if (2 * rem > maxval || (2 * rem == maxval && (q & 1u))) q++;
    return (uint8_t)q;
}

ox_img_status ox_img_decode_pnm(const uint8_t *p, size_t size, ox_img *img) {
    reader r = {p, size, 2};
    int kind = p[1] - '0'; /* 1..6, checked by the caller's signature test */
    int bitmap = kind == 1 || kind == 4, plain = kind <= 3;
    int channels = kind == 3 || kind == 6 ? 3 : 1;
    static const char *const NAMES[] = {"", "PBM (P1)", "PGM (P2)", "PPM (P3)", "PBM (P4)", "PGM (P5)", "PPM (P6)"};
    const char *name = NAMES[kind];
    if (size < 3 || !is_space(p[2]))
        return ox_img_fail(img, OX_IMG_CORRUPT, "%s: the magic number is not followed by whitespace", name);
    int64_t width = read_uint(&r, INT32_MAX), height = width < 0 ? -1 : read_uint(&r, INT32_MAX);
    if (width <= 0 || height <= 0)
        return ox_img_fail(img, OX_IMG_CORRUPT, "%s: the header has no valid positive width and height", name);
    int64_t maxval = 1;
    if (!bitmap) {
        maxval = read_uint(&r, 65535);
        if (maxval <= 0) return ox_img_fail(img, OX_IMG_CORRUPT, "%s: maxval is missing or not in 1..65535", name);
    }
    /* Bytes needed at least: raw rasters exactly, plain ones one byte
     * per bitmap sample and two (digit and separator) per other sample,
     * but for the last. Checked before allocating. */
    uint64_t samples = (uint64_t)width * (uint64_t)height * (uint64_t)channels; /* < 3 * 2^62 */
    if (!plain) {
        if (r.pos >= size || !is_space(p[r.pos]))
            return ox_img_fail(img, OX_IMG_CORRUPT, "%s: the header is not followed by a whitespace byte", name);
        r.pos++;
    }
    uint64_t left = size - r.pos, need;
    int wide = maxval > 255;
    if (kind == 4) need = ((uint64_t)width + 7) / 8 * (uint64_t)height;
    else if (samples > left) need = samples; /* one byte each at least: too short already */
    else if (!plain) need = samples * (wide ? 2u : 1u); /* samples <= left: cannot overflow */
    else need = bitmap ? samples : 2 * samples - 1;
    if (need > left)
        return ox_img_fail(img, OX_IMG_CORRUPT, "%s: %lld x %lld image needs %s%llu bytes of data, %llu are left", name,
                           (long long)width, (long long)height, plain ? "at least " : "", (unsigned long long)need,
                           (unsigned long long)left);
    ox_img_status st = ox_img_alloc(img, height, width, channels);
    if (st != OX_IMG_OK) return st;
    uint8_t *out = img->pixels;
    const uint8_t *d = p + r.pos;

    if (kind == 4) {
        size_t row = ((size_t)width + 7) / 8;
        for (int64_t y = 0; y < height; y++)
            for (int64_t x = 0; x < width; x++)
                *out++ = (d[(size_t)y * row + (size_t)x / 8] >> (7 - x % 8)) & 1u ? 0 : 255;
        return OX_IMG_OK;
    }
    if (!plain) {
        for (uint64_t i = 0; i < samples; i++) {
            uint32_t v = wide ? (uint32_t)d[2 * i] << 8 | d[2 * i + 1] : d[i];
            if (v > (uint32_t)maxval)
                return ox_img_fail(img, OX_IMG_CORRUPT, "%s: sample %llu is %u, above maxval %lld", name,
                                   (unsigned long long)i, v, (long long)maxval);
            out[i] = scale(v, (uint32_t)maxval);
        }
        return OX_IMG_OK;
    }
    for (uint64_t i = 0; i < samples; i++) {
        int64_t v;
        if (bitmap) {
            /* plain PBM digits need no separators */
            skip_blank(&r);
            v = r.pos < size && (p[r.pos] == '0' || p[r.pos] == '1') ? p[r.pos++] - '0' : -1;
        } else {
            v = read_uint(&r, maxval);
        }
        if (v < 0)
            return ox_img_fail(img, OX_IMG_CORRUPT, "%s: sample %llu is missing, malformed or above maxval %lld", name,
                               (unsigned long long)i, (long long)maxval);
        out[i] = bitmap ? (v ? 0 : 255) : scale((uint32_t)v, (uint32_t)maxval);
    }
    return OX_IMG_OK;
}
