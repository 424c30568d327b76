/* CPU kernel of the image decoding operator (ImageDecoder, opset 20).
 *
 * The kernel recognises the file format by its signature, hands the
 * bytes to that format's decoder (codec_decode.h) and converts the
 * decoded gray or RGB image to the requested pixel_format.
 *
 * Formats: BMP and PNM (PBM/PGM/PPM) are decoded by onyx itself; PNG
 * through libpng and JPEG through libjpeg-turbo when the build found
 * them (codec.cmake), otherwise such a file fails naming the missing
 * library. TIFF, WebP and JPEG 2000, which the operator also lists, are
 * recognised and fail with ONYX_NOT_IMPLEMENTED naming the format.
 *
 * Undecodable data. The operator's definition says that when a stream
 * cannot be decoded "for any reason (e.g. corrupted encoded stream,
 * invalid format)" the result is an empty matrix, so onyx returns an
 * empty [0, 0, C] image (C = 3 or 1 per pixel_format, the rank and
 * channels inference promised) for truncated or corrupted files and for
 * bytes that are no image format at all. That is part of the operator's
 * contract: a model may test the output's size to skip bad inputs, and
 * raising an error would break such models on data they were written to
 * handle. Errors are kept for what the empty image must not hide,
 * because the data may well be a valid image: a format or a feature of a
 * format that onyx does not decode (TIFF, WebP, JPEG 2000, compressed
 * BMP, lossless JPEG, a library missing from the build), an image over
 * OX_IMG_MAX_PIXELS, and out of memory. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/codec_decode.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_codec;

/* ---- helpers shared with the decoders (codec_decode.h) ---- */

ox_img_status ox_img_fail(ox_img *img, ox_img_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->why, sizeof img->why, fmt, ap);
    va_end(ap);
    return st;
}

ox_img_status ox_img_alloc(ox_img *img, int64_t h, int64_t w, int ch) {
    if (h <= 0 || w <= 0)
        return ox_img_fail(img, OX_IMG_CORRUPT, "image size %lld x %lld is empty", (long long)w, (long long)h);
    /* w and h are each at most OX_IMG_MAX_PIXELS after the first test,
     * so the product cannot overflow int64. */
    if (h > OX_IMG_MAX_PIXELS || w > OX_IMG_MAX_PIXELS || h * w > OX_IMG_MAX_PIXELS)
        return ox_img_fail(img, OX_IMG_TOO_LARGE, "image size %lld x %lld exceeds onyx's limit of %lld pixels",
                           (long long)w, (long long)h, (long long)OX_IMG_MAX_PIXELS);
    img->pixels = malloc((size_t)(h * w * ch));
    if (!img->pixels)
        return ox_img_fail(img, OX_IMG_NO_MEMORY, "no memory for a %lld x %lld image", (long long)w, (long long)h);
    img->height = h;
    img->width = w;
    img->channels = ch;
    return OX_IMG_OK;
}

/* ---- format recognition ---- */

typedef enum { FMT_UNKNOWN, FMT_BMP, FMT_PNM, FMT_PNG, FMT_JPEG, FMT_TIFF, FMT_WEBP, FMT_JPEG2000 } img_format;

static int starts_with(const uint8_t *p, size_t n, const void *sig, size_t k) {
    return n >= k && memcmp(p, sig, k) == 0;
}

static img_format sniff(const uint8_t *p, size_t n) {
    if (starts_with(p, n, "\x89PNG\r\n\x1a\n", 8)) return FMT_PNG;
    if (starts_with(p, n, "\xff\xd8\xff", 3)) return FMT_JPEG;
    if (starts_with(p, n, "BM", 2)) return FMT_BMP;
    if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '6') return FMT_PNM;
    if (starts_with(p, n, "II*\0", 4) || starts_with(p, n, "MM\0*", 4)) return FMT_TIFF;
    if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0) return FMT_WEBP;
    /* JP2 signature box, or a bare J2K codestream (SOC then SIZ marker) */
    if (starts_with(p, n, "\0\0\0\x0cjP  \r\n\x87\n", 12) || starts_with(p, n, "\xff\x4f\xff\x51", 4))
        return FMT_JPEG2000;
    return FMT_UNKNOWN;
}

static const char *format_name(img_format f) {
    switch (f) {
    case FMT_BMP: return "BMP";
    case FMT_PNM: return "PNM";
    case FMT_PNG: return "PNG";
    case FMT_JPEG: return "JPEG";
    case FMT_TIFF: return "TIFF";
    case FMT_WEBP: return "WebP";
    case FMT_JPEG2000: return "JPEG 2000";
    default: return "unknown";
    }
}

static ox_img_status decode(img_format f, const uint8_t *p, size_t n, ox_img *img) {
    switch (f) {
    case FMT_BMP: return ox_img_decode_bmp(p, n, img);
    case FMT_PNM: return ox_img_decode_pnm(p, n, img);
    case FMT_PNG: return ox_img_decode_png(p, n, img);
    case FMT_JPEG: return ox_img_decode_jpeg(p, n, img);
    case FMT_TIFF:
    case FMT_WEBP:
    case FMT_JPEG2000:
        return ox_img_fail(img, OX_IMG_UNSUPPORTED, "onyx does not decode %s images (it decodes BMP, JPEG, PNG, PNM)",
                           format_name(f));
    default:
        return ox_img_fail(img, OX_IMG_CORRUPT,
                           "the data starts with no known image signature "
                           "(BMP, JPEG, JPEG 2000, PNG, PNM, TIFF, WebP)");
    }
}

/* ---- pixel formats ---- */

enum { PF_RGB, PF_BGR, PF_GRAY };

/* Gray from RGB with the ITU-R BT.601 weights in 16-bit fixed point,
 * rounded: 0.299 R + 0.587 G + 0.114 B. This is the conversion of the
 * ONNX reference implementation (Pillow's convert("L")), to the bit. */
static uint8_t luma(const uint8_t *rgb) {
    return (uint8_t)((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
}

static void convert(const ox_img *img, int pf, uint8_t *out) {
    size_t n = (size_t)(img->height * img->width);
    const uint8_t *in = img->pixels;
    if (img->channels == 1) {
        if (pf == PF_GRAY) memcpy(out, in, n);
        else
            for (size_t i = 0; i < n; i++) out[3 * i] = out[3 * i + 1] = out[3 * i + 2] = in[i];
        return;
    }
    switch (pf) {
    case PF_RGB: memcpy(out, in, 3 * n); break;
    case PF_BGR:
        for (size_t i = 0; i < n; i++) {
            out[3 * i] = in[3 * i + 2];
            out[3 * i + 1] = in[3 * i + 1];
            out[3 * i + 2] = in[3 * i];
        }
        break;
    default:
        for (size_t i = 0; i < n; i++) out[i] = luma(in + 3 * i);
        break;
    }
}

/* ---- ImageDecoder ---- */

static int k_image_decoder(ox_kernel_ctx *ctx) {
    const ox_tensor *x = ox_cpu_input(ctx, 0);
    if (!x || x->kind != OX_KIND_TENSOR || x->dtype != ONYX_UINT8 || x->rank != 1)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "ImageDecoder: encoded_stream must be a 1-D uint8 tensor of the file's bytes");
    const char *fmt = ir_attr_string(ctx->node, "pixel_format", "RGB");
    int pf;
    if (strcmp(fmt, "RGB") == 0) pf = PF_RGB;
    else if (strcmp(fmt, "BGR") == 0) pf = PF_BGR;
    else if (strcmp(fmt, "Grayscale") == 0) pf = PF_GRAY;
    else
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL,
                              "ImageDecoder: pixel_format '%s' is not one of RGB, BGR, Grayscale", fmt);
    int64_t ch = pf == PF_GRAY ? 1 : 3;

    const uint8_t *p = x->data;
    size_t n = (size_t)x->dims[0];
    img_format f = sniff(p, n);
    ox_img img;
    memset(&img, 0, sizeof img);
    ox_img_status st = decode(f, p, n, &img);
    if (st == OX_IMG_CORRUPT) {
        /* The empty image of the operator's definition (see the top). */
        free(img.pixels);
        int64_t dims[3] = {0, 0, ch};
        return ox_kernel_output(ctx, 0, ONYX_UINT8, dims, 3) ? 0 : -1;
    }
    if (st != OX_IMG_OK) {
        free(img.pixels);
        onyx_code code = st == OX_IMG_UNSUPPORTED ? ONYX_NOT_IMPLEMENTED
                         : st == OX_IMG_NO_MEMORY ? ONYX_OUT_OF_MEMORY
                                                  : ONYX_INVALID_ARGUMENT;
        return ox_kernel_fail(ctx, code, "ImageDecoder: cannot decode the %s image (%zu bytes): %s",
                              format_name(f), n, img.why);
    }
    int64_t dims[3] = {img.height, img.width, ch};
    ox_tensor *y = ox_kernel_output(ctx, 0, ONYX_UINT8, dims, 3);
    if (y) convert(&img, pf, y->data);
    free(img.pixels);
    return y ? 0 : -1;
}

static const ox_kernel_def KERNELS[] = {
    {"", "ImageDecoder", 20, 20, k_image_decoder, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_codec = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
