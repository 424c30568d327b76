/* ImageDecoder through the public API. Images are encoded here, so the
 * repository carries no binaries: BMP and PNM by hand in every layout
 * the decoders handle, PNG and JPEG with libpng and libjpeg when the
 * build has them (ONYX_HAVE_PNG / ONYX_HAVE_JPEG, as for the kernel).
 * Besides exact decoding and the pixel formats, every encoded image is
 * truncated at every length and corrupted byte by byte: each result must
 * be the operator's empty [0, 0, C] image, a well-formed image, or a
 * clean error, and never a crash (this test runs under ASan in CI). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model_builder.h"

#ifdef ONYX_HAVE_PNG
#include <png.h>
#endif
#ifdef ONYX_HAVE_JPEG
#include <jpeglib.h>
#endif

static onyx_env *env;

/* ---- sessions ---- */

static onyx_session *decoder(const char *pixel_format) {
    mb_model *m = mb_new(20);
    int64_t dyn = -1;
    mb_input(m, "x", ONYX_UINT8, &dyn, 1);
    mb_output(m, "y", ONYX_UINT8, NULL, -1);
    mb_node(m, "ImageDecoder", "x", "y");
    if (pixel_format) mb_attr_string(m, "pixel_format", pixel_format);
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    CHECK_OK(onyx_session_create_from_buffer(env, buf, len, NULL, &s));
    free(buf);
    return s;
}

static onyx_status *decode(onyx_session *s, const uint8_t *p, size_t n, onyx_tensor **out) {
    *out = NULL;
    int64_t dims[1] = {(int64_t)n};
    onyx_tensor *x = NULL;
    onyx_status *st = onyx_tensor_create(ONYX_UINT8, dims, 1, &x);
    if (st) return st;
    if (n) memcpy(onyx_tensor_data(x), p, n);
    const char *in = "x", *outn = "y";
    st = onyx_session_run(s, &in, (const onyx_tensor *const *)&x, 1, &outn, out, 1);
    onyx_tensor_free(x);
    return st;
}

/* ---- the test picture and its encoders ---- */

enum { W = 5, H = 3 };

static void pixel(int x, int y, uint8_t rgb[3]) {
    rgb[0] = (uint8_t)(40 * x + 7);
    rgb[1] = (uint8_t)(60 * y + 11);
    rgb[2] = (uint8_t)((x * y * 13 + 100) & 255);
}

typedef struct buf {
    uint8_t p[8192];
    size_t n;
} buf;

static void put(buf *b, const void *d, size_t n) {
    if (b->n + n > sizeof b->p) abort();
    memcpy(b->p + b->n, d, n);
    b->n += n;
}
static void put8(buf *b, unsigned v) { put(b, (uint8_t[]){(uint8_t)v}, 1); }
static void put16(buf *b, unsigned v) { put(b, (uint8_t[]){(uint8_t)v, (uint8_t)(v >> 8)}, 2); }
static void put32(buf *b, uint32_t v) {
    put(b, (uint8_t[]){(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)}, 4);
}
static void putf(buf *b, const char *fmt, int a, int c, int d) {
    char s[64];
    int n = snprintf(s, sizeof s, fmt, a, c, d);
    put(b, s, (size_t)n);
}

/* BMP kinds: 24, 32 (BI_RGB), 32 with BITFIELDS masks (BGRA order
 * swapped to test the masks), 16 (5-5-5), 8 and 4 with a palette of the
 * picture's colours (4 bits: of the first 16), 1 (two colours), core
 * header with 24 bits, RLE8 and RLE4 (bottom row a literal run, the next
 * one starting with a delta over two pixels, the others runs of 1). */
enum { BMP24, BMP32, BMP32_MASKS, BMP16, BMP8, BMP4, BMP1, BMP_CORE, BMP_RLE8, BMP_RLE4 };

/* The picture as the given BMP kind stores it (quantised or paletted). */
static void bmp_expected(int kind, int x, int y, uint8_t rgb[3]) {
    pixel(x, y, rgb);
    if (kind == BMP16)
        for (int k = 0; k < 3; k++) rgb[k] = (uint8_t)((rgb[k] >> 3) * 255 / 31);
    if (kind == BMP4 && y * W + x >= 16) pixel(0, 0, rgb); /* index 0 */
    if ((kind == BMP_RLE8 || kind == BMP_RLE4) && y == H - 2 && x < 2) pixel(0, 0, rgb); /* skipped: index 0 */
    if (kind == BMP1) {
        if ((x + y) & 1) rgb[0] = 255, rgb[1] = 255, rgb[2] = 255;
        else rgb[0] = 0, rgb[1] = 0, rgb[2] = 0;
    }
}

static void bmp(buf *b, int kind, int top_down) {
    static const int BPP[] = {24, 32, 32, 16, 8, 4, 1, 24, 8, 4};
    int bpp = BPP[kind], core = kind == BMP_CORE, rle = kind >= BMP_RLE8;
    int pal = bpp <= 8 ? (bpp == 8 ? W * H : 1 << bpp) : 0;
    if (bpp == 8 && pal > 256) abort();
    uint32_t stride = (uint32_t)((W * bpp + 31) / 32 * 4);
    uint32_t hsz = core ? 12 : 40, masks = kind == BMP32_MASKS ? 12 : 0;
    uint32_t off = 14 + hsz + masks + (uint32_t)pal * (core ? 3 : 4);
    b->n = 0;
    put(b, "BM", 2);
    put32(b, off + stride * H);
    put32(b, 0);
    put32(b, off);
    put32(b, hsz);
    if (core) {
        put16(b, W), put16(b, H), put16(b, 1), put16(b, (unsigned)bpp);
    } else {
        put32(b, W), put32(b, top_down ? (uint32_t)-H : H), put16(b, 1), put16(b, (unsigned)bpp);
        put32(b, masks ? 3 : rle ? (kind == BMP_RLE8 ? 1 : 2) : 0); /* compression */
        put32(b, stride * H), put32(b, 2835), put32(b, 2835);
        put32(b, (uint32_t)pal), put32(b, 0);
    }
    if (masks) put32(b, 0x0000ff00u), put32(b, 0x00ff0000u), put32(b, 0xff000000u); /* R, G, B */
    for (int i = 0; i < pal; i++) {
        uint8_t c[3];
        if (bpp == 1) c[0] = c[1] = c[2] = (uint8_t)(i ? 255 : 0);
        else pixel(i % W, i / W, c);
        put8(b, c[2]), put8(b, c[1]), put8(b, c[0]);
        if (!core) put8(b, 0);
    }
    if (rle) {
        int four = kind == BMP_RLE4;
        for (int r = 0; r < H; r++) {
            int y = H - 1 - r, x0 = 0;
            if (r == 0) {
                put8(b, 0), put8(b, W);
                size_t start = b->n;
                for (int x = 0; x < W; x += four ? 2 : 1) {
                    int i0 = y * W + x, i1 = x + 1 < W ? i0 + 1 : 0;
                    put8(b, four ? (unsigned)(i0 << 4 | i1) : (unsigned)i0);
                }
                if ((b->n - start) & 1) put8(b, 0);
            } else {
                if (r == 1) put8(b, 0), put8(b, 2), put8(b, 2), put8(b, 0), x0 = 2;
                for (int x = x0; x < W; x++) put8(b, 1), put8(b, (unsigned)(y * W + x) << (four ? 4 : 0));
            }
            put8(b, 0), put8(b, r == H - 1 ? 1 : 0);
        }
        return;
    }
    for (int r = 0; r < H; r++) {
        int y = top_down ? r : H - 1 - r;
        uint8_t row[64] = {0};
        for (int x = 0; x < W; x++) {
            uint8_t c[3];
            pixel(x, y, c);
            int idx = y * W + x;
            switch (kind) {
            case BMP24:
            case BMP_CORE: row[3 * x] = c[2], row[3 * x + 1] = c[1], row[3 * x + 2] = c[0]; break;
            case BMP32: row[4 * x] = c[2], row[4 * x + 1] = c[1], row[4 * x + 2] = c[0], row[4 * x + 3] = 0x55; break;
            case BMP32_MASKS:
                row[4 * x] = 0x55, row[4 * x + 1] = c[0], row[4 * x + 2] = c[1], row[4 * x + 3] = c[2];
                break;
            case BMP16: {
                unsigned v = (unsigned)(c[0] >> 3) << 10 | (unsigned)(c[1] >> 3) << 5 | (c[2] >> 3);
                row[2 * x] = (uint8_t)v, row[2 * x + 1] = (uint8_t)(v >> 8);
                break;
            }
            case BMP8: row[x] = (uint8_t)idx; break;
            case BMP4: row[x / 2] |= (uint8_t)((idx < 16 ? idx : 0) << (x % 2 ? 0 : 4)); break;
            default: row[x / 8] |= (uint8_t)(((x + y) & 1) << (7 - x % 8)); break;
            }
        }
        put(b, row, stride);
    }
}

/* PNM kinds: P1..P6, and P5 with 16-bit samples (maxval 1000). */
enum { PNM_P5_WIDE = 7 };

static void pnm_expected(int kind, int x, int y, uint8_t rgb[3]) {
    pixel(x, y, rgb);
    if (kind == 1 || kind == 4) rgb[0] = rgb[1] = rgb[2] = (uint8_t)((x + y) & 1 ? 0 : 255);
    if (kind == 2 || kind == 5) rgb[1] = rgb[2] = rgb[0];
    if (kind == PNM_P5_WIDE) {
        /* stored as r * 1000 / 255, scaled back with rounding */
        unsigned v = rgb[0] * 1000u / 255u;
        rgb[0] = rgb[1] = rgb[2] = (uint8_t)((v * 255u * 2 + 1000u) / 2000u);
    }
}

static void pnm(buf *b, int kind) {
    b->n = 0;
    int magic = kind == PNM_P5_WIDE ? 5 : kind, bitmap = magic == 1 || magic == 4;
    putf(b, "P%d\n# onyx test\n%d %d\n", magic, W, H);
    if (!bitmap) putf(b, "%d\n", kind == PNM_P5_WIDE ? 1000 : 255, 0, 0);
    for (int y = 0; y < H; y++) {
        uint8_t bits = 0;
        for (int x = 0; x < W; x++) {
            uint8_t c[3];
            pixel(x, y, c);
            int black = (x + y) & 1;
            switch (kind) {
            case 1: putf(b, "%d", black, 0, 0); break; /* no separators: allowed */
            case 2: putf(b, "%d ", c[0], 0, 0); break;
            case 3: putf(b, "%d %d %d\n", c[0], c[1], c[2]); break;
            case 4: bits |= (uint8_t)(black << (7 - x)); break;
            case 5: put8(b, c[0]); break;
            case 6: put(b, c, 3); break;
            default: {
                unsigned v = c[0] * 1000u / 255u;
                put8(b, v >> 8), put8(b, v & 255);
            }
            }
        }
        if (kind == 4) put8(b, bits);
    }
}

#ifdef ONYX_HAVE_PNG
/* PNG's CRC-32 (ISO 3309), to re-seal an edited chunk. */
static uint32_t crc32_of(const uint8_t *p, size_t n) {
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = c & 1u ? 0xedb88320u ^ (c >> 1) : c >> 1;
    }
    return c ^ 0xffffffffu;
}

static void png_write_buf(png_structp png, png_bytep d, size_t n) { put(png_get_io_ptr(png), d, n); }
static void png_flush_buf(png_structp png) { (void)png; }

/* PNG of the picture: color PNG_COLOR_TYPE_RGB or _RGB_ALPHA or _GRAY. */
static void png(buf *b, int color, int interlace) {
    b->n = 0;
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    if (setjmp(png_jmpbuf(png))) abort();
    png_set_write_fn(png, b, png_write_buf, png_flush_buf);
    png_set_IHDR(png, info, W, H, 8, color, interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    int ch = color == PNG_COLOR_TYPE_RGB ? 3 : color == PNG_COLOR_TYPE_GRAY ? 1 : 4;
    uint8_t rows[H][W * 4];
    png_bytep rp[H];
    for (int y = 0; y < H; y++) {
        for (int x = 0; x < W; x++) {
            uint8_t c[3];
            pixel(x, y, c);
            memcpy(rows[y] + x * ch, c, ch == 4 ? 3 : (size_t)ch);
            if (ch == 4) rows[y][x * 4 + 3] = (uint8_t)(x * 50);
        }
        rp[y] = rows[y];
    }
    png_write_image(png, rp);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
}
#endif

#ifdef ONYX_HAVE_JPEG
/* A smooth 16 x 16 JPEG at high quality, color or gray, baseline or
 * progressive; decoded pixels must come within a few levels of it. */
enum { JW = 16, JH = 16 };

static void jpeg_pixel(int x, int y, uint8_t c[3]) {
    c[0] = (uint8_t)(x * 12 + 20), c[1] = (uint8_t)(y * 10 + 40), c[2] = (uint8_t)(200 - x * 4 - y * 4);
}

static void jpeg(buf *b, int gray, int progressive) {
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr em;
    c.err = jpeg_std_error(&em);
    jpeg_create_compress(&c);
    unsigned char *mem = NULL;
    unsigned long len = 0;
    jpeg_mem_dest(&c, &mem, &len);
    c.image_width = JW, c.image_height = JH;
    c.input_components = gray ? 1 : 3;
    c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, 95, TRUE);
    if (progressive) jpeg_simple_progression(&c);
    jpeg_start_compress(&c, TRUE);
    for (int y = 0; y < JH; y++) {
        uint8_t row[JW * 3];
        for (int x = 0; x < JW; x++) {
            uint8_t px[3];
            jpeg_pixel(x, y, px);
            if (gray) row[x] = px[0];
            else memcpy(row + 3 * x, px, 3);
        }
        JSAMPROW rp = row;
        jpeg_write_scanlines(&c, &rp, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    b->n = 0;
    put(b, mem, len);
    free(mem);
}
#endif

/* ---- checks ---- */

static int dims_are(const onyx_tensor *t, int64_t h, int64_t w, int64_t c) {
    if (!t || onyx_tensor_rank(t) != 3) return 0;
    const int64_t *d = onyx_tensor_dims(t);
    return d[0] == h && d[1] == w && d[2] == c;
}

typedef void (*expect_fn)(int kind, int x, int y, uint8_t rgb[3]);

/* Decodes b with RGB, BGR and Grayscale and compares with expect
 * (kind's picture) within tol levels. */
static void check_image(onyx_session *const s[3], const buf *b, int w, int h, expect_fn expect, int kind, int tol,
                        const char *what) {
    for (int f = 0; f < 3; f++) {
        onyx_tensor *y = NULL;
        onyx_status *st = decode(s[f], b->p, b->n, &y);
        if (st) {
            fprintf(stderr, "%s (format %d): %s\n", what, f, onyx_status_message(st));
            onyx_status_free(st);
            check_failures++;
            continue;
        }
        int ch = f == 2 ? 1 : 3;
        if (!dims_are(y, h, w, ch)) {
            fprintf(stderr, "%s (format %d): wrong shape\n", what, f);
            check_failures++;
            onyx_tensor_free(y);
            continue;
        }
        const uint8_t *d = onyx_tensor_data(y);
        int bad = 0;
        for (int yy = 0; yy < h && !bad; yy++)
            for (int x = 0; x < w && !bad; x++) {
                uint8_t e[3];
                expect(kind, x, yy, e);
                uint8_t want[3] = {e[0], e[1], e[2]};
                if (f == 1) want[0] = e[2], want[2] = e[0];
                if (f == 2) want[0] = (uint8_t)((e[0] * 19595u + e[1] * 38470u + e[2] * 7471u + 0x8000u) >> 16);
                for (int k = 0; k < ch; k++) {
                    int got = d[(yy * w + x) * ch + k];
                    if (abs(got - want[k]) > tol) {
                        fprintf(stderr, "%s (format %d): pixel (%d, %d) channel %d is %d, expected %d\n", what, f, x,
                                yy, k, got, want[k]);
                        bad = 1;
                    }
                }
            }
        if (bad) check_failures++;
        onyx_tensor_free(y);
    }
}

/* A damaged stream must decode to the empty image or a well-formed one,
 * or fail cleanly with a "cannot decode" error (a damaged header may
 * name an unsupported feature or a huge size). Truncated streams
 * (truncated = 1) must never fail with an error. */
static long damaged_runs;

static void check_damaged(onyx_session *s, const uint8_t *p, size_t n, int truncated, const char *what, size_t at) {
    damaged_runs++;
    onyx_tensor *y = NULL;
    onyx_status *st = decode(s, p, n, &y);
    if (st) {
        onyx_code code = onyx_status_code(st);
        if (truncated || (code != ONYX_NOT_IMPLEMENTED && code != ONYX_INVALID_ARGUMENT) ||
            !strstr(onyx_status_message(st), "cannot decode")) {
            fprintf(stderr, "%s damaged at %zu: unexpected error %d: %s\n", what, at, (int)code,
                    onyx_status_message(st));
            check_failures++;
        }
        onyx_status_free(st);
        return;
    }
    const int64_t *d = y ? onyx_tensor_dims(y) : NULL;
    if (!y || onyx_tensor_rank(y) != 3 || d[2] != 3 || d[0] < 0 || d[1] < 0 || (d[0] == 0) != (d[1] == 0) ||
        onyx_tensor_numel(y) != d[0] * d[1] * 3) {
        fprintf(stderr, "%s damaged at %zu: malformed output\n", what, at);
        check_failures++;
    }
    onyx_tensor_free(y);
}

/* Every truncation, and every byte xor-ed with a few patterns. */
static void damage_all(onyx_session *s, const buf *b, const char *what) {
    static uint8_t tmp[sizeof((buf *)0)->p];
    for (size_t n = 0; n < b->n; n++) check_damaged(s, b->p, n, 1, what, n);
    static const uint8_t XOR[] = {0xff, 0x80, 0x01, 0x7f};
    for (size_t i = 0; i < b->n; i++)
        for (size_t k = 0; k < sizeof XOR; k++) {
            memcpy(tmp, b->p, b->n);
            tmp[i] ^= XOR[k];
            check_damaged(s, tmp, b->n, 0, what, i);
        }
}

static void expect_empty(onyx_session *s, const void *p, size_t n, const char *what) {
    onyx_tensor *y = NULL;
    onyx_status *st = decode(s, p, n, &y);
    if (st) {
        fprintf(stderr, "%s: expected the empty image, got: %s\n", what, onyx_status_message(st));
        onyx_status_free(st);
        check_failures++;
        return;
    }
    if (!dims_are(y, 0, 0, 3)) {
        fprintf(stderr, "%s: expected the empty image [0, 0, 3]\n", what);
        check_failures++;
    }
    onyx_tensor_free(y);
}

static void test_bmp(onyx_session *const s[3]) {
    buf b;
    static const char *const NAMES[] = {"BMP 24", "BMP 32", "BMP 32 masks", "BMP 16", "BMP 8",
                                        "BMP 4",  "BMP 1",  "BMP core",     "BMP RLE8", "BMP RLE4"};
    for (int kind = BMP24; kind <= BMP_RLE4; kind++)
        for (int td = 0; td < (kind >= BMP_CORE ? 1 : 2); td++) {
            bmp(&b, kind, td);
            check_image(s, &b, W, H, bmp_expected, kind, 0, NAMES[kind]);
            damage_all(s[0], &b, NAMES[kind]);
        }
    /* a BMP wrapping PNG data is valid BMP onyx does not decode: an
     * error, not "corrupt" */
    bmp(&b, BMP24, 0);
    b.p[30] = 5;
    CHECK_FAILS(decode(s[0], b.p, b.n, &(onyx_tensor *){NULL}), ONYX_NOT_IMPLEMENTED, "PNG");
}

static void test_pnm(onyx_session *const s[3]) {
    buf b;
    char name[32];
    for (int kind = 1; kind <= PNM_P5_WIDE; kind++) {
        pnm(&b, kind);
        snprintf(name, sizeof name, "PNM kind %d", kind);
        check_image(s, &b, W, H, pnm_expected, kind, 0, name);
        damage_all(s[0], &b, name);
    }
    expect_empty(s[0], "P6\n5 3\n255\n\x01\x02", 14, "P6 short raster");
    expect_empty(s[0], "P3\n1 1\n255\n1 2 300\n", 20, "P3 sample above maxval");
    expect_empty(s[0], "P6\n99999999999 1\n255\n", 21, "P6 width overflow");
    expect_empty(s[0], "P6\n2147483647 2147483647\n255\n", 28, "P6 huge size, no data");
}

static void test_unsupported(onyx_session *s) {
    static const struct {
        const char *sig;
        size_t n;
        const char *name;
    } CASES[] = {
        {"II*\0\x08\0\0\0", 8, "TIFF"},
        {"MM\0*\0\0\0\x08", 8, "TIFF"},
        {"RIFF\x10\0\0\0WEBPVP8 ", 16, "WebP"},
        {"\0\0\0\x0cjP  \r\n\x87\n", 12, "JPEG 2000"},
        {"\xff\x4f\xff\x51\0\0", 6, "JPEG 2000"},
    };
    for (size_t i = 0; i < sizeof CASES / sizeof CASES[0]; i++)
        CHECK_FAILS(decode(s, (const uint8_t *)CASES[i].sig, CASES[i].n, &(onyx_tensor *){NULL}), ONYX_NOT_IMPLEMENTED,
                    CASES[i].name);
    expect_empty(s, "", 0, "no bytes");
    expect_empty(s, "GIF89a\x01\0\x01\0", 10, "GIF (not in the operator's list)");
    expect_empty(s, "hello, world", 12, "text");
    expect_empty(s, "BM", 2, "BMP signature alone");
#ifdef ONYX_HAVE_PNG
    expect_empty(s, "\x89PNG\r\n\x1a\n", 8, "PNG signature alone");
#endif
#ifdef ONYX_HAVE_JPEG
    expect_empty(s, "\xff\xd8\xff", 3, "JPEG signature alone");
#endif
}

#ifdef ONYX_HAVE_PNG
static void expect_png(int kind, int x, int y, uint8_t rgb[3]) {
    pixel(x, y, rgb);
    if (kind == PNG_COLOR_TYPE_GRAY) rgb[1] = rgb[2] = rgb[0];
}

static void test_png(onyx_session *const s[3]) {
    buf b;
    static const int COLORS[] = {PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA, PNG_COLOR_TYPE_GRAY};
    for (int i = 0; i < 3; i++)
        for (int il = 0; il < 2; il++) {
            png(&b, COLORS[i], il);
            check_image(s, &b, W, H, expect_png, COLORS[i], 0, "PNG");
            if (il == 0) damage_all(s[0], &b, "PNG");
        }
    /* an IHDR of 100000 x 100000 is a valid header over the pixel limit;
     * the CRC is recomputed so that libpng accepts the chunk */
    png(&b, PNG_COLOR_TYPE_RGB, 0);
    uint8_t *ihdr = b.p + 12;
    for (int k = 0; k < 2; k++) {
        ihdr[4 + 4 * k] = 0, ihdr[5 + 4 * k] = 1, ihdr[6 + 4 * k] = 0x86, ihdr[7 + 4 * k] = 0xa0;
    }
    uint32_t crc = crc32_of(ihdr, 17);
    for (int k = 0; k < 4; k++) b.p[29 + k] = (uint8_t)(crc >> (24 - 8 * k));
    CHECK_FAILS(decode(s[0], b.p, b.n, &(onyx_tensor *){NULL}), ONYX_INVALID_ARGUMENT, "limit");
}
#endif

#ifdef ONYX_HAVE_JPEG
static void expect_jpeg(int gray, int x, int y, uint8_t rgb[3]) {
    jpeg_pixel(x, y, rgb);
    if (gray) rgb[1] = rgb[2] = rgb[0];
}

static void test_jpeg(onyx_session *const s[3]) {
    buf b;
    for (int gray = 0; gray < 2; gray++)
        for (int prog = 0; prog < 2; prog++) {
            jpeg(&b, gray, prog);
            /* 4:2:0 chroma on a colour ramp: a level or ten off at the edges */
            check_image(s, &b, JW, JH, expect_jpeg, gray, 16, gray ? "gray JPEG" : "JPEG");
            damage_all(s[0], &b, prog ? "progressive JPEG" : "JPEG");
        }
    /* a SOF0 of 60000 x 60000 is over the pixel limit: an error */
    jpeg(&b, 0, 0);
    for (size_t i = 2; i + 9 < b.n; i++)
        if (b.p[i] == 0xff && b.p[i + 1] == 0xc0) {
            b.p[i + 5] = 0xea, b.p[i + 6] = 0x60, b.p[i + 7] = 0xea, b.p[i + 8] = 0x60;
            break;
        }
    CHECK_FAILS(decode(s[0], b.p, b.n, &(onyx_tensor *){NULL}), ONYX_INVALID_ARGUMENT, "limit");
}
#endif

static void test_model_checks(void) {
    mb_model *m = mb_new(20);
    int64_t dyn = -1;
    mb_input(m, "x", ONYX_UINT8, &dyn, 1);
    mb_output(m, "y", ONYX_UINT8, NULL, -1);
    mb_node(m, "ImageDecoder", "x", "y");
    mb_attr_string(m, "pixel_format", "CMYK");
    size_t len;
    uint8_t *buf = mb_serialize(m, &len);
    mb_free(m);
    onyx_session *s = NULL;
    CHECK_FAILS(onyx_session_create_from_buffer(env, buf, len, NULL, &s), ONYX_INVALID_MODEL, "pixel_format");
    onyx_session_free(s);
    free(buf);
}

int main(void) {
    CHECK_OK(onyx_env_create(&env));
    onyx_session *s[3] = {decoder(NULL), decoder("BGR"), decoder("Grayscale")};
    if (s[0] && s[1] && s[2]) {
        test_bmp(s);
        test_pnm(s);
        test_unsupported(s[0]);
#ifdef ONYX_HAVE_PNG
        test_png(s);
#else
        CHECK_FAILS(decode(s[0], (const uint8_t *)"\x89PNG\r\n\x1a\n", 8, &(onyx_tensor *){NULL}), ONYX_NOT_IMPLEMENTED,
                    "libpng");
#endif
#ifdef ONYX_HAVE_JPEG
        test_jpeg(s);
#else
        CHECK_FAILS(decode(s[0], (const uint8_t *)"\xff\xd8\xff\xe0", 4, &(onyx_tensor *){NULL}), ONYX_NOT_IMPLEMENTED,
                    "libjpeg");
#endif
        test_model_checks();
    }
    printf("%ld damaged streams checked\n", damaged_runs);
    for (int i = 0; i < 3; i++) onyx_session_free(s[i]);
    onyx_env_free(env);
    CHECK_DONE();
}
