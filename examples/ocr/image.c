#include "image.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Generous for documents, yet small enough that width * height * 3 and
 * every later float buffer stay far from overflow. */
#define MAX_SIDE 32768
#define MAX_PIXELS (64L * 1024 * 1024)
#define MAX_FILE_BYTES (512L * 1024 * 1024)

static int fail(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

int ocr_image_alloc(ocr_image *img, int width, int height)
{
    img->width = width;
    img->height = height;
    img->rgb = NULL;
    if (width <= 0 || height <= 0 || width > MAX_SIDE || height > MAX_SIDE ||
        (long)width * height > MAX_PIXELS)
        return -1;
    img->rgb = malloc((size_t)width * (size_t)height * 3);
    return img->rgb ? 0 : -1;
}

void ocr_image_free(ocr_image *img)
{
    free(img->rgb);
    img->rgb = NULL;
    img->width = img->height = 0;
}

static int read_file(const char *path, uint8_t **data, size_t *size, char *err, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return fail(err, n, "cannot open %s: %s", path, strerror(errno));
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 65536;
            if (cap > (size_t)MAX_FILE_BYTES) {
                free(buf);
                fclose(f);
                return fail(err, n, "%s: file too large", path);
            }
            uint8_t *grown = realloc(buf, cap);
            if (!grown) {
                free(buf);
                fclose(f);
                return fail(err, n, "out of memory reading %s", path);
            }
            buf = grown;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return fail(err, n, "cannot read %s", path);
    }
    *data = buf;
    *size = len;
    return 0;
}

static int load_png(const uint8_t *data, size_t size, ocr_image *out, char *err, size_t n)
{
    png_image png;
    memset(&png, 0, sizeof png);
    png.version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(&png, data, size))
        return fail(err, n, "bad PNG: %s", png.message);
    if (png.width == 0 || png.height == 0 || png.width > MAX_SIDE || png.height > MAX_SIDE ||
        (long)png.width * (long)png.height > MAX_PIXELS) {
        png_image_free(&png);
        return fail(err, n, "PNG size %ux%u is not supported", png.width, png.height);
    }
    png.format = PNG_FORMAT_RGB;
    if (ocr_image_alloc(out, (int)png.width, (int)png.height) != 0) {
        png_image_free(&png);
        return fail(err, n, "out of memory for a %ux%u image", png.width, png.height);
    }
    /* Transparent areas become white: dark text on a transparent page is
     * common, and compositing on black would hide it. */
    png_color white = {255, 255, 255};
    if (!png_image_finish_read(&png, &white, out->rgb, 0, NULL)) {
        ocr_image_free(out);
        return fail(err, n, "bad PNG: %s", png.message);
    }
    return 0;
}

/* Netpbm header whitespace may hold '#' comments running to end of line. */
static size_t ppm_skip_space(const uint8_t *d, size_t size, size_t i)
{
    while (i < size) {
        if (d[i] == '#') {
            while (i < size && d[i] != '\n' && d[i] != '\r')
                i++;
        } else if (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r' ||
                   d[i] == '\v' || d[i] == '\f') {
            i++;
        } else {
            break;
        }
    }
    return i;
}

static int ppm_number(const uint8_t *d, size_t size, size_t *pos, long limit, long *value)
{
    size_t i = ppm_skip_space(d, size, *pos);
    if (i == *pos || i >= size || d[i] < '0' || d[i] > '9')
        return -1;
    long v = 0;
    while (i < size && d[i] >= '0' && d[i] <= '9') {
        v = v * 10 + (d[i] - '0');
        if (v > limit)
            return -1;
        i++;
    }
    *pos = i;
    *value = v;
    return 0;
}

static int load_ppm(const uint8_t *d, size_t size, ocr_image *out, char *err, size_t n)
{
    size_t pos = 2;
    long w, h, maxval;
    if (ppm_number(d, size, &pos, MAX_SIDE, &w) != 0 || ppm_number(d, size, &pos, MAX_SIDE, &h) != 0 ||
        ppm_number(d, size, &pos, 65535, &maxval) != 0)
        return fail(err, n, "bad PPM header");
    if (w < 1 || h < 1 || maxval < 1 || w * h > MAX_PIXELS)
        return fail(err, n, "bad PPM header: %ldx%ld, maxval %ld", w, h, maxval);
    /* Exactly one whitespace byte separates the header from the samples. */
    if (pos >= size || !(d[pos] == ' ' || d[pos] == '\t' || d[pos] == '\n' || d[pos] == '\r'))
        return fail(err, n, "bad PPM header");
    pos++;
    size_t bytes = maxval > 255 ? 2 : 1;
    size_t need = (size_t)w * (size_t)h * 3 * bytes;
    if (size - pos < need)
        return fail(err, n, "truncated PPM: %zu of %zu sample bytes", size - pos, need);
    if (ocr_image_alloc(out, (int)w, (int)h) != 0)
        return fail(err, n, "out of memory for a %ldx%ld image", w, h);
    const uint8_t *s = d + pos;
    for (size_t i = 0; i < (size_t)w * (size_t)h * 3; i++) {
        long v = bytes == 2 ? (long)s[2 * i] << 8 | s[2 * i + 1] : s[i];
        if (v > maxval) {
            ocr_image_free(out);
            return fail(err, n, "bad PPM: sample %ld exceeds maxval %ld", v, maxval);
        }
        out->rgb[i] = (uint8_t)((v * 255 + maxval / 2) / maxval);
    }
    return 0;
}

int ocr_image_load(const char *path, ocr_image *out, char *err, size_t err_size)
{
    uint8_t *data = NULL;
    size_t size = 0;
    out->rgb = NULL;
    out->width = out->height = 0;
    if (read_file(path, &data, &size, err, err_size) != 0)
        return -1;
    static const uint8_t png_magic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    int rc;
    if (size >= 8 && memcmp(data, png_magic, 8) == 0)
        rc = load_png(data, size, out, err, err_size);
    else if (size >= 2 && data[0] == 'P' && data[1] == '6')
        rc = load_ppm(data, size, out, err, err_size);
    else
        rc = fail(err, err_size, "%s: not a PNG or binary PPM (P6) image", path);
    free(data);
    return rc;
}

static int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Per output column (or row): first source index and the two 11-bit
 * fixed-point weights, computed exactly as OpenCV does for INTER_LINEAR
 * (in float, rounded to nearest). OpenCV clamps the fraction at the
 * horizontal borders but only clamps the row index vertically; copying
 * that keeps the result bit-identical. */
static void linear_taps(int src, int dst, int clamp_fraction, int *first, int16_t (*w)[2])
{
    double scale = 1.0 / ((double)dst / src);
    for (int d = 0; d < dst; d++) {
        float f = (float)((d + 0.5) * scale - 0.5);
        int s = (int)floorf(f);
        f -= (float)s;
        if (clamp_fraction && s < 0) {
            s = 0;
            f = 0;
        }
        if (clamp_fraction && s >= src - 1) {
            s = src - 1;
            f = 0;
        }
        first[d] = s;
        w[d][0] = (int16_t)lrintf((1.0f - f) * 2048.0f);
        w[d][1] = (int16_t)lrintf(f * 2048.0f);
    }
}

int ocr_image_resize(const ocr_image *src, int width, int height, ocr_image *out)
{
    if (ocr_image_alloc(out, width, height) != 0)
        return -1;
    int sw = src->width, sh = src->height;
    int *xs = malloc(sizeof(int) * (size_t)width), *ys = malloc(sizeof(int) * (size_t)height);
    int16_t(*xw)[2] = malloc(sizeof *xw * (size_t)width);
    int16_t(*yw)[2] = malloc(sizeof *yw * (size_t)height);
    int32_t *rows = malloc(sizeof(int32_t) * (size_t)width * 3 * 2);
    if (!xs || !ys || !xw || !yw || !rows) {
        free(xs);
        free(ys);
        free(xw);
        free(yw);
        free(rows);
        ocr_image_free(out);
        return -1;
    }
    linear_taps(sw, width, 1, xs, xw);
    linear_taps(sh, height, 0, ys, yw);
    int32_t *r0 = rows, *r1 = rows + (size_t)width * 3;
    for (int y = 0; y < height; y++) {
        int s0 = clampi(ys[y], 0, sh - 1), s1 = clampi(ys[y] + 1, 0, sh - 1);
        const uint8_t *in[2] = {src->rgb + (size_t)s0 * sw * 3, src->rgb + (size_t)s1 * sw * 3};
        int32_t *acc[2] = {r0, r1};
        for (int k = 0; k < 2; k++)
            for (int x = 0; x < width; x++) {
                int a = xs[x] * 3, b = (xs[x] + 1 < sw ? xs[x] + 1 : xs[x]) * 3;
                for (int c = 0; c < 3; c++)
                    acc[k][x * 3 + c] = in[k][a + c] * xw[x][0] + in[k][b + c] * xw[x][1];
            }
        /* OpenCV's SIMD rounding: each product pre-shifted to fit 16 bits. */
        uint8_t *o = out->rgb + (size_t)y * width * 3;
        int32_t b0 = yw[y][0], b1 = yw[y][1];
        for (int i = 0; i < width * 3; i++) {
            int32_t v = (((b0 * (r0[i] >> 4)) >> 16) + ((b1 * (r1[i] >> 4)) >> 16) + 2) >> 2;
            o[i] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
        }
    }
    free(xs);
    free(ys);
    free(xw);
    free(yw);
    free(rows);
    return 0;
}

/* Keys' cubic kernel with a = -0.75, the coefficient OpenCV's INTER_CUBIC
 * uses; PaddleOCR crops text lines with it. */
static void cubic_weights(float t, float w[4])
{
    const float a = -0.75f;
    float t1 = t + 1.0f, t2 = 1.0f - t;
    w[0] = ((a * t1 - 5 * a) * t1 + 8 * a) * t1 - 4 * a;
    w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
    w[2] = ((a + 2) * t2 - (a + 3)) * t2 * t2 + 1;
    w[3] = 1.0f - w[0] - w[1] - w[2];
}

/* OpenCV samples at 1/32 pixel with a 4x4 table of 15-bit weights whose
 * sum is forced to exactly 1.0 by nudging its largest or smallest entry
 * near the centre. */
#define SUBPIX 32
typedef struct cubic_table {
    int16_t w[SUBPIX * SUBPIX][16];
} cubic_table;

static void cubic_table_init(cubic_table *t)
{
    for (int iy = 0; iy < SUBPIX; iy++)
        for (int ix = 0; ix < SUBPIX; ix++) {
            float wy[4], wx[4];
            cubic_weights((float)iy / SUBPIX, wy);
            cubic_weights((float)ix / SUBPIX, wx);
            int16_t *e = t->w[iy * SUBPIX + ix];
            int sum = 0;
            for (int j = 0; j < 4; j++)
                for (int i = 0; i < 4; i++) {
                    long v = lrintf(wy[j] * wx[i] * 32768.0f);
                    e[j * 4 + i] = (int16_t)(v > INT16_MAX ? INT16_MAX : v);
                    sum += e[j * 4 + i];
                }
            if (sum != 32768) {
                int lo_j = 2, lo_i = 2, hi_j = 2, hi_i = 2;
                for (int j = 2; j < 4; j++)
                    for (int i = 2; i < 4; i++) {
                        if (e[j * 4 + i] < e[lo_j * 4 + lo_i]) {
                            lo_j = j;
                            lo_i = i;
                        } else if (e[j * 4 + i] > e[hi_j * 4 + hi_i]) {
                            hi_j = j;
                            hi_i = i;
                        }
                    }
                int diff = sum - 32768;
                if (diff < 0)
                    e[hi_j * 4 + hi_i] = (int16_t)(e[hi_j * 4 + hi_i] - diff);
                else
                    e[lo_j * 4 + lo_i] = (int16_t)(e[lo_j * 4 + lo_i] - diff);
            }
        }
}

int ocr_image_warp(const ocr_image *src, const double h[9], int width, int height,
                   ocr_image *out)
{
    static cubic_table table;
    static int table_ready;
    if (!table_ready) {
        cubic_table_init(&table);
        table_ready = 1;
    }
    if (ocr_image_alloc(out, width, height) != 0)
        return -1;
    int sw = src->width, sh = src->height;
    for (int y = 0; y < height; y++) {
        uint8_t *o = out->rgb + (size_t)y * width * 3;
        for (int x = 0; x < width; x++) {
            double wz = h[6] * x + h[7] * y + h[8];
            wz = wz != 0 ? SUBPIX / wz : 0;
            double fx = (h[0] * x + h[1] * y + h[2]) * wz, fy = (h[3] * x + h[4] * y + h[5]) * wz;
            /* Far-off samples only replicate the border; the clamp keeps
             * the int conversion defined. */
            fx = fx < -1e8 ? -1e8 : fx > 1e8 ? 1e8 : fx;
            fy = fy < -1e8 ? -1e8 : fy > 1e8 ? 1e8 : fy;
            long qx = lrint(fx), qy = lrint(fy);
            long ix = qx >= 0 ? qx / SUBPIX : -((-qx + SUBPIX - 1) / SUBPIX);
            long iy = qy >= 0 ? qy / SUBPIX : -((-qy + SUBPIX - 1) / SUBPIX);
            const int16_t *wt = table.w[(qy - iy * SUBPIX) * SUBPIX + (qx - ix * SUBPIX)];
            int cols[4];
            for (int i = 0; i < 4; i++)
                cols[i] = (int)(ix - 1 + i < 0 ? 0 : ix - 1 + i > sw - 1 ? sw - 1 : ix - 1 + i) * 3;
            int acc[3] = {0, 0, 0};
            for (int j = 0; j < 4; j++) {
                long ry = iy - 1 + j;
                const uint8_t *row = src->rgb + (size_t)(ry < 0 ? 0 : ry > sh - 1 ? sh - 1 : ry) * sw * 3;
                for (int i = 0; i < 4; i++) {
                    const uint8_t *p = row + cols[i];
                    int wgt = wt[j * 4 + i];
                    acc[0] += wgt * p[0];
                    acc[1] += wgt * p[1];
                    acc[2] += wgt * p[2];
                }
            }
            for (int c = 0; c < 3; c++) {
                int v = (acc[c] + (1 << 14)) >> 15;
                o[x * 3 + c] = (uint8_t)(v < 0 ? 0 : v > 255 ? 255 : v);
            }
        }
    }
    return 0;
}

int ocr_image_rotate_ccw(const ocr_image *src, ocr_image *out)
{
    if (ocr_image_alloc(out, src->height, src->width) != 0)
        return -1;
    /* Output row i comes from source column width-1-i. */
    for (int y = 0; y < out->height; y++)
        for (int x = 0; x < out->width; x++)
            memcpy(out->rgb + ((size_t)y * out->width + x) * 3,
                   src->rgb + ((size_t)x * src->width + (src->width - 1 - y)) * 3, 3);
    return 0;
}
