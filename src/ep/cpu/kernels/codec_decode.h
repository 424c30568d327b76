/* Image decoders behind the ImageDecoder kernel (kernels/codec.c), one
 * file per format: codec_bmp.c, codec_pnm.c (written here), codec_png.c
 * (libpng) and codec_jpeg.c (libjpeg-turbo). Every decoder reads an
 * untrusted, possibly truncated or hostile byte buffer: it checks each
 * header field against the buffer before using it, computes sizes with
 * overflow checks, never reads past `size`, and reports failure through
 * its return value (never exit/abort). */
#ifndef ONYX_EP_CPU_KERNELS_CODEC_DECODE_H
#define ONYX_EP_CPU_KERNELS_CODEC_DECODE_H

#include <stddef.h>
#include <stdint.h>

typedef enum ox_img_status {
    OX_IMG_OK = 0,
    OX_IMG_CORRUPT,     /* not a valid image of the format (truncated, bad header...) */
    OX_IMG_UNSUPPORTED, /* a valid image that onyx cannot decode (format, feature, missing library) */
    OX_IMG_TOO_LARGE,   /* larger than OX_IMG_MAX_PIXELS */
    OX_IMG_NO_MEMORY,
} ox_img_status;

/* Images above this many pixels are refused: a few header bytes can
 * declare gigapixels, and PNG/JPEG streams expand far beyond their size.
 * 2^28 pixels is 768 MiB as RGB, above any photograph in practice. */
#define OX_IMG_MAX_PIXELS ((int64_t)1 << 28)

/* A decoded image, row-major, channels interleaved. */
typedef struct ox_img {
    int64_t height, width;
    int channels;    /* 1 (gray) or 3 (R, G, B) */
    uint8_t *pixels; /* malloc'd height * width * channels bytes; freed by the caller */
    char why[192];   /* what went wrong, for every status but OX_IMG_OK */
} ox_img;

/* Allocates img->pixels for h x w x ch after checking the dimensions
 * (positive, at most OX_IMG_MAX_PIXELS); sets why on failure. */
ox_img_status ox_img_alloc(ox_img *img, int64_t h, int64_t w, int ch);
/* Formats img->why and returns st (for `return ox_img_fail(...)`). */
ox_img_status ox_img_fail(ox_img *img, ox_img_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The decoders. On success img holds the image; otherwise img->why says
 * why and img->pixels is whatever the caller must free (may be NULL). */
ox_img_status ox_img_decode_bmp(const uint8_t *p, size_t size, ox_img *img);
ox_img_status ox_img_decode_pnm(const uint8_t *p, size_t size, ox_img *img);
ox_img_status ox_img_decode_png(const uint8_t *p, size_t size, ox_img *img);
ox_img_status ox_img_decode_jpeg(const uint8_t *p, size_t size, ox_img *img);

#endif
