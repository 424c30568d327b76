/* BMP decoder of ImageDecoder: Windows bitmaps, uncompressed, with the
 * OS/2 core header (12 bytes) or a BITMAPINFOHEADER and its later
 * versions (40..124 bytes); 1, 4 and 8 bits per pixel through a palette,
 * 16 and 32 bits through channel masks (BI_BITFIELDS, or the default
 * 5-5-5 and 8-8-8 layouts), 24 bits as B, G, R. Rows are bottom-up unless
 * the height is negative, and padded to 4 bytes. Alpha is dropped.
 * RLE8 and RLE4 compressed bitmaps are decoded too; BMPs wrapping JPEG
 * or PNG data are reported as unsupported.
 *
 * Everything in the header is untrusted: offsets and sizes are checked
 * against the buffer in 64-bit arithmetic before any pixel is read. */
#include <string.h>

#include "ep/cpu/kernels/codec_decode.h"

static uint32_t rd16(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8; }
static uint32_t rd32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* One colour channel of a 16/32-bit pixel: the bits under mask, scaled
 * to 0..255 (truncating, as the reference decoder does). */
typedef struct chan {
    uint32_t mask;
    int shift;
    uint32_t max; /* mask >> shift; 0 when the channel is absent */
} chan;

static int chan_init(chan *c, uint32_t mask) {
    c->mask = mask;
    c->shift = 0;
    c->max = 0;
    if (!mask) return 0;
    while (!((mask >> c->shift) & 1u)) c->shift++;
    c->max = mask >> c->shift;
    /* contiguous: max is 2^k - 1 */
    return (c->max & (c->max + 1u)) == 0 ? 0 : -1;
}

static uint8_t chan_get(const chan *c, uint32_t px) {
    if (!c->max) return 0;
    uint64_t v = (px & c->mask) >> c->shift;
    return (uint8_t)(v * 255u / c->max);
}

/* Writes palette colour idx at (x, row from the bottom) unless outside
 * the image: RLE streams may point anywhere, and what falls outside is
 * dropped. */
static void rle_put(ox_img *img, const uint8_t pal[][3], int64_t x, int64_t row, unsigned idx) {
    if (x < img->width && row < img->height)
        memcpy(img->pixels + (size_t)(((img->height - 1 - row) * img->width + x) * 3), pal[idx], 3);
}

/* RLE8 / RLE4 pixel data (bpp 8 or 4): pairs (count, value) repeat value
 * count times (RLE4: its two nibbles in turn); count 0 escapes: 0 ends
 * the line, 1 the bitmap, 2 moves by (dx, dy), n >= 3 gives n literal
 * pixels padded to 16 bits. Pixels the stream never sets take palette
 * entry 0, as in the ONNX reference (Pillow). A stream that runs out
 * before the end-of-bitmap escape and before the last row is corrupt. */
static ox_img_status decode_rle(const uint8_t *s, size_t n, int bpp, const uint8_t pal[][3], ox_img *img) {
    size_t total = (size_t)(img->height * img->width);
    for (size_t k = 0; k < total; k++) memcpy(img->pixels + 3 * k, pal[0], 3);
    int64_t x = 0, row = 0; /* row 0 is the bottom one */
    size_t i = 0;
    for (;;) {
        if (i + 2 > n) {
            if (row >= img->height) return OX_IMG_OK;
            return ox_img_fail(img, OX_IMG_CORRUPT, "BMP RLE data ends at row %lld of %lld without an end marker",
                               (long long)row, (long long)img->height);
        }
        unsigned c = s[i], v = s[i + 1];
        i += 2; /* i <= n from here */
        if (c) {
            for (unsigned k = 0; k < c; k++) rle_put(img, pal, x + k, row, bpp == 8 ? v : k & 1 ? v & 15u : v >> 4);
            x += c;
        } else if (v == 0) {
            x = 0;
            row++;
        } else if (v == 1) {
            return OX_IMG_OK;
        } else if (v == 2) {
            if (n - i < 2) return ox_img_fail(img, OX_IMG_CORRUPT, "BMP RLE delta escape is truncated");
            x += s[i];
            row += s[i + 1];
            i += 2;
        } else {
            size_t bytes = bpp == 8 ? v : (v + 1) / 2;
            if (bytes > n - i)
                return ox_img_fail(img, OX_IMG_CORRUPT, "BMP RLE literal run of %u pixels is truncated", v);
            for (unsigned k = 0; k < v; k++)
                rle_put(img, pal, x + k, row, bpp == 8 ? s[i + k] : k & 1 ? s[i + k / 2] & 15u : s[i + k / 2] >> 4);
            x += v;
            i += bytes + (bytes & 1); /* may pass n by one: the test at the top stops */
        }
    }
}

enum { BI_RGB = 0, BI_RLE8 = 1, BI_RLE4 = 2, BI_BITFIELDS = 3, BI_JPEG = 4, BI_PNG = 5, BI_ALPHABITFIELDS = 6 };

ox_img_status ox_img_decode_bmp(const uint8_t *p, size_t size, ox_img *img) {
    if (size < 18) return ox_img_fail(img, OX_IMG_CORRUPT, "BMP file of %zu bytes is shorter than its headers", size);
    uint64_t pix_off = rd32(p + 10);
    uint64_t hsz = rd32(p + 14);
    if (hsz != 12 && hsz < 40)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP header size %llu is not a known bitmap header",
                           (unsigned long long)hsz);
    if (14 + hsz > size)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP header of %llu bytes runs past the file's %zu bytes",
                           (unsigned long long)hsz, size);
    const uint8_t *h = p + 14;
    int64_t width, height;
    uint32_t bpp, compression = BI_RGB, colors_used = 0;
    int pal_entry; /* bytes per palette entry */
    if (hsz == 12) {
        width = rd16(h + 4);
        height = rd16(h + 6);
        bpp = rd16(h + 10);
        pal_entry = 3;
    } else {
        width = (int32_t)rd32(h + 4);
        height = (int32_t)rd32(h + 8);
        bpp = rd16(h + 14);
        compression = rd32(h + 16);
        colors_used = rd32(h + 32);
        pal_entry = 4;
    }
    int top_down = 0;
    if (height < 0) {
        top_down = 1;
        height = -height; /* int64: no overflow even for INT32_MIN */
    }
    if (width <= 0 || height <= 0)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP size %lld x %lld is not positive", (long long)width,
                           (long long)(top_down ? -height : height));
    if (compression == BI_JPEG || compression == BI_PNG)
        return ox_img_fail(img, OX_IMG_UNSUPPORTED, "BMP with embedded %s data is not supported",
                           compression == BI_JPEG ? "JPEG" : "PNG");
    if (compression > BI_ALPHABITFIELDS)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP compression %u is not a known method", compression);
    int rle = compression == BI_RLE8 || compression == BI_RLE4;
    if (rle && (bpp != (compression == BI_RLE8 ? 8u : 4u) || top_down))
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP %s compression needs %d bits per pixel and bottom-up rows",
                           compression == BI_RLE8 ? "RLE8" : "RLE4", compression == BI_RLE8 ? 8 : 4);
    if (bpp != 1 && bpp != 4 && bpp != 8 && bpp != 16 && bpp != 24 && bpp != 32)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP depth of %u bits per pixel is not valid", bpp);
    int masked = compression == BI_BITFIELDS || compression == BI_ALPHABITFIELDS;
    if (masked && bpp != 16 && bpp != 32)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP channel masks need 16 or 32 bits per pixel, not %u", bpp);

    /* Channel masks: in the header from version 2 (52 bytes) on, after a
     * 40-byte header otherwise (12 bytes; 16 with an alpha mask). */
    uint64_t after_header = 14 + hsz;
    chan cr = {0, 0, 0}, cg = {0, 0, 0}, cb = {0, 0, 0}; /* set for 16/32 bits, the only depths that read them */
    if (bpp == 16 || bpp == 32) {
        uint32_t m[3];
        if (masked) {
            const uint8_t *mp = h + 40;
            if (hsz < 52) {
                if (after_header + 12 > size) return ox_img_fail(img, OX_IMG_CORRUPT, "BMP channel masks are missing");
                mp = p + after_header;
                after_header += compression == BI_ALPHABITFIELDS ? 16 : 12;
            }
            for (int i = 0; i < 3; i++) m[i] = rd32(mp + 4 * i);
        } else if (bpp == 16) {
            m[0] = 0x7c00u, m[1] = 0x03e0u, m[2] = 0x001fu;
        } else {
            m[0] = 0xff0000u, m[1] = 0x00ff00u, m[2] = 0x0000ffu;
        }
        if (chan_init(&cr, m[0]) || chan_init(&cg, m[1]) || chan_init(&cb, m[2]))
            return ox_img_fail(img, OX_IMG_CORRUPT, "BMP channel masks %#x/%#x/%#x are not contiguous bit runs", m[0],
                               m[1], m[2]);
    }

    /* Palette for 1/4/8 bits: colors_used entries, 0 meaning 2^bpp. An
     * index past the palette reads as black. */
    uint8_t pal[256][3];
    memset(pal, 0, sizeof pal);
    if (bpp <= 8) {
        uint64_t n = colors_used ? colors_used : 1u << bpp;
        if (n > (1u << bpp)) n = 1u << bpp; /* entries no index can reach */
        if (after_header + n * (uint64_t)pal_entry > size)
            return ox_img_fail(img, OX_IMG_CORRUPT, "BMP palette of %llu colours runs past the end of the file",
                               (unsigned long long)n);
        for (uint64_t i = 0; i < n; i++) {
            const uint8_t *e = p + after_header + i * (uint64_t)pal_entry;
            pal[i][0] = e[2], pal[i][1] = e[1], pal[i][2] = e[0];
        }
    }

    if (pix_off > size)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP pixel offset %llu is past the end of the file (%zu bytes)",
                           (unsigned long long)pix_off, size);
    uint64_t avail = size - pix_off;
    if (rle) {
        ox_img_status st = ox_img_alloc(img, height, width, 3);
        if (st != OX_IMG_OK) return st;
        return decode_rle(p + pix_off, (size_t)avail, (int)bpp, (const uint8_t(*)[3])pal, img);
    }
    /* Rows are padded to 4 bytes; the last row's padding may be missing. */
    uint64_t row_bytes = ((uint64_t)width * bpp + 7) / 8;
    uint64_t stride = ((uint64_t)width * bpp + 31) / 32 * 4;
    if ((uint64_t)(height - 1) > avail / stride || (uint64_t)(height - 1) * stride + row_bytes > avail)
        return ox_img_fail(img, OX_IMG_CORRUPT, "BMP pixel data is truncated: %lld rows of %llu bytes need more than "
                           "the %llu bytes after offset %llu",
                           (long long)height, (unsigned long long)stride, (unsigned long long)avail,
                           (unsigned long long)pix_off);
    ox_img_status st = ox_img_alloc(img, height, width, 3);
    if (st != OX_IMG_OK) return st;

    for (int64_t y = 0; y < height; y++) {
        const uint8_t *row = p + pix_off + (uint64_t)(top_down ? y : height - 1 - y) * stride;
        uint8_t *out = img->pixels + (size_t)(y * width * 3);
        for (int64_t x = 0; x < width; x++, out += 3) {
            switch (bpp) {
            case 1:
            case 4:
            case 8: {
                /* pixels packed from the most significant bits */
                uint64_t bit = (uint64_t)x * bpp;
                unsigned idx = (row[bit / 8] >> (8 - bpp - bit % 8)) & ((1u << bpp) - 1u);
                memcpy(out, pal[idx], 3);
                break;
            }
            case 24:
                out[0] = row[3 * x + 2], out[1] = row[3 * x + 1], out[2] = row[3 * x];
                break;
            default: {
                uint32_t px = bpp == 16 ? rd16(row + 2 * x) : rd32(row + 4 * x);
                out[0] = chan_get(&cr, px), out[1] = chan_get(&cg, px), out[2] = chan_get(&cb, px);
                break;
            }
            }
        }
    }
    return OX_IMG_OK;
}
