/* onyx_ocr: reads the text in an image with PaddleOCR's PP-OCRv4 models,
 * using nothing but the public onyx API. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "detect.h"
#include "image.h"
#include "onyx.h"

#ifndef ONYX_OCR_MODELS
#define ONYX_OCR_MODELS "models"
#endif

#define DET_MODEL "ch_PP-OCRv4_det_infer.onnx"
#define REC_MODEL "ch_PP-OCRv4_rec_infer.onnx"
#define DICT_FILE "ppocr_keys_v1.txt"

/* PaddleOCR's inference defaults for these models. */
#define DET_LIMIT_SIDE 960
#define REC_HEIGHT 48
#define REC_MIN_WIDTH 320
/* Beyond this the recogniser's attention cost explodes; longer crops are
 * squeezed instead. */
#define REC_MAX_WIDTH 2560
#define DROP_SCORE 0.5

typedef struct dictionary {
    char *text;   /* the file, with line ends replaced by NULs */
    char **entry; /* entry[i] is class i + 1 */
    size_t count;
} dictionary;

typedef struct ocr_context {
    onyx_env *env;
    onyx_session *det, *rec;
    const char *det_in, *det_out, *rec_in, *rec_out;
    dictionary dict;
} ocr_context;

static char g_error[1024];

static int set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g_error, sizeof g_error, fmt, ap);
    va_end(ap);
    return -1;
}

static int status_error(onyx_status *st, const char *what)
{
    set_error("%s: %s", what, onyx_status_message(st));
    onyx_status_free(st);
    return -1;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *join_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static int load_dictionary(const char *path, dictionary *d)
{
    memset(d, 0, sizeof *d);
    FILE *f = fopen(path, "rb");
    if (!f)
        return set_error("cannot open %s: %s", path, strerror(errno));
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || size > 64L * 1024 * 1024 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return set_error("cannot read %s", path);
    }
    d->text = malloc((size_t)size + 1);
    if (!d->text || fread(d->text, 1, (size_t)size, f) != (size_t)size) {
        fclose(f);
        free(d->text);
        d->text = NULL;
        return set_error("cannot read %s", path);
    }
    fclose(f);
    d->text[size] = '\0';
    size_t lines = 1;
    for (long i = 0; i < size; i++)
        lines += d->text[i] == '\n';
    d->entry = malloc(lines * sizeof *d->entry);
    if (!d->entry)
        return set_error("out of memory");
    /* One entry per line; a final line end does not start another. */
    char *p = d->text, *end = d->text + size;
    while (p < end) {
        char *nl = memchr(p, '\n', (size_t)(end - p));
        char *stop = nl ? nl : end;
        *stop = '\0';
        if (stop > p && stop[-1] == '\r')
            stop[-1] = '\0';
        d->entry[d->count++] = p;
        p = stop + 1;
    }
    if (d->count == 0)
        return set_error("%s is empty", path);
    return 0;
}

static void free_dictionary(dictionary *d)
{
    free(d->text);
    free(d->entry);
}

static int open_session(ocr_context *c, const char *dir, const char *file,
                        const onyx_session_options *opts, onyx_session **out, const char **in_name,
                        const char **out_name)
{
    char *path = join_path(dir, file);
    if (!path)
        return set_error("out of memory");
    onyx_status *st = onyx_session_create(c->env, path, opts, out);
    if (st) {
        set_error("cannot load %s: %s", path, onyx_status_message(st));
        onyx_status_free(st);
        free(path);
        return -1;
    }
    free(path);
    onyx_value_info in, outi;
    if (onyx_session_input_count(*out) != 1 || onyx_session_output_count(*out) < 1)
        return set_error("%s: expected one input and an output", file);
    if ((st = onyx_session_input_info(*out, 0, &in)) != NULL)
        return status_error(st, file);
    if ((st = onyx_session_output_info(*out, 0, &outi)) != NULL)
        return status_error(st, file);
    if (in.dtype != ONYX_FLOAT32 || in.rank != 4)
        return set_error("%s: expected a float32 NCHW input", file);
    *in_name = in.name;
    *out_name = outi.name;
    return 0;
}

/* Runs a one-input, one-output model over an NCHW float buffer. */
static int run_model(onyx_session *s, const char *in_name, const char *out_name, float *data,
                     const int64_t dims[4], onyx_tensor **out, const char *what)
{
    size_t n = (size_t)(dims[0] * dims[1] * dims[2] * dims[3]);
    onyx_tensor *in = NULL;
    onyx_status *st = onyx_tensor_wrap(ONYX_FLOAT32, dims, 4, data, n * sizeof(float), &in);
    if (st)
        return status_error(st, what);
    *out = NULL;
    st = onyx_session_run(s, &in_name, (const onyx_tensor *const *)&in, 1, &out_name, out, 1);
    onyx_tensor_free(in);
    if (st)
        return status_error(st, what);
    if (onyx_tensor_dtype(*out) != ONYX_FLOAT32) {
        onyx_tensor_free(*out);
        *out = NULL;
        return set_error("%s: output is not float32", what);
    }
    return 0;
}

/* DetResizeForTest: cap the long side, then snap each side to a multiple
 * of 32 with Python's round (halves to even). */
static int det_side(int side, double ratio)
{
    int scaled = (int)(side * ratio);
    int snapped = (int)nearbyint(scaled / 32.0) * 32;
    return snapped < 32 ? 32 : snapped;
}

static int detect(ocr_context *c, const ocr_image *img, ocr_box **boxes, size_t *count)
{
    int long_side = img->width > img->height ? img->width : img->height;
    double ratio = long_side > DET_LIMIT_SIDE ? (double)DET_LIMIT_SIDE / long_side : 1.0;
    int w = det_side(img->width, ratio), h = det_side(img->height, ratio);
    ocr_image small;
    if (ocr_image_resize(img, w, h, &small) != 0)
        return set_error("out of memory");
    size_t plane = (size_t)w * h;
    float *x = malloc(plane * 3 * sizeof *x);
    if (!x) {
        ocr_image_free(&small);
        return set_error("out of memory");
    }
    /* The models were trained on BGR images with ImageNet statistics
     * applied in that channel order. */
    static const float mean[3] = {0.485f, 0.456f, 0.406f}, std[3] = {0.229f, 0.224f, 0.225f};
    for (size_t i = 0; i < plane; i++)
        for (int ch = 0; ch < 3; ch++)
            x[ch * plane + i] = (small.rgb[i * 3 + (2 - ch)] / 255.0f - mean[ch]) / std[ch];
    ocr_image_free(&small);
    int64_t dims[4] = {1, 3, h, w};
    onyx_tensor *prob;
    int rc = run_model(c->det, c->det_in, c->det_out, x, dims, &prob, "detection");
    free(x);
    if (rc != 0)
        return rc;
    const int64_t *od = onyx_tensor_dims(prob);
    if (onyx_tensor_rank(prob) != 4 || od[0] != 1 || od[1] != 1 || od[2] != h || od[3] != w) {
        onyx_tensor_free(prob);
        return set_error("detection: unexpected output shape");
    }
    ocr_db_params params = {.thresh = 0.3f, .box_thresh = 0.6, .unclip_ratio = 1.5,
                            .max_candidates = 1000};
    rc = ocr_db_boxes(onyx_tensor_data(prob), w, h, img->width, img->height, &params, boxes,
                      count);
    onyx_tensor_free(prob);
    if (rc != 0)
        return set_error("out of memory");
    ocr_sort_boxes(*boxes, *count);
    return 0;
}

static int crop_box(const ocr_image *img, const ocr_box *box, ocr_image *out)
{
    double hm[9];
    int w, h;
    ocr_box_crop_transform(box, hm, &w, &h);
    if (w < 1 || h < 1)
        return 1;
    if (ocr_image_warp(img, hm, w, h, out) != 0)
        return set_error("out of memory");
    /* Tall crops are most likely vertical lines of text. */
    if (h >= 1.5 * w) {
        ocr_image turned;
        int rc = ocr_image_rotate_ccw(out, &turned);
        ocr_image_free(out);
        if (rc != 0)
            return set_error("out of memory");
        *out = turned;
    }
    return 0;
}

/* Greedy CTC: best class per step, repeats merged, blanks (class 0)
 * dropped. The last class, one past the dictionary, is a space. */
static int ctc_decode(const dictionary *d, const float *probs, int64_t steps, int64_t classes,
                      char **text, double *confidence)
{
    size_t cap = 64, len = 0;
    char *s = malloc(cap);
    if (!s)
        return set_error("out of memory");
    double sum = 0;
    int64_t kept = 0, prev = -1;
    for (int64_t t = 0; t < steps; t++) {
        const float *row = probs + t * classes;
        int64_t best = 0;
        for (int64_t k = 1; k < classes; k++)
            if (row[k] > row[best])
                best = k;
        int repeat = best == prev;
        prev = best;
        if (best == 0 || repeat)
            continue;
        const char *piece = (size_t)best <= d->count ? d->entry[best - 1] : " ";
        size_t n = strlen(piece);
        if (len + n + 1 > cap) {
            while (len + n + 1 > cap)
                cap *= 2;
            char *g = realloc(s, cap);
            if (!g) {
                free(s);
                return set_error("out of memory");
            }
            s = g;
        }
        memcpy(s + len, piece, n);
        len += n;
        sum += row[best];
        kept++;
    }
    s[len] = '\0';
    *text = s;
    *confidence = kept ? sum / kept : 0.0;
    return 0;
}

static int recognise(ocr_context *c, const ocr_image *crop, char **text, double *confidence)
{
    /* PaddleOCR's resize_norm_img for a batch of one: the input is at least
     * 320 wide, the line keeps its aspect ratio, and the rest is padding. */
    double wh = (double)crop->width / crop->height;
    double max_wh = fmax((double)REC_MIN_WIDTH / REC_HEIGHT, wh);
    int width = (int)(REC_HEIGHT * max_wh);
    if (width > REC_MAX_WIDTH)
        width = REC_MAX_WIDTH;
    double want = ceil(REC_HEIGHT * wh);
    int resized_w = want > width ? width : (int)want;
    if (resized_w < 1)
        resized_w = 1;
    ocr_image line;
    if (ocr_image_resize(crop, resized_w, REC_HEIGHT, &line) != 0)
        return set_error("out of memory");
    size_t plane = (size_t)width * REC_HEIGHT;
    float *x = calloc(plane * 3, sizeof *x);
    if (!x) {
        ocr_image_free(&line);
        return set_error("out of memory");
    }
    for (int y = 0; y < REC_HEIGHT; y++)
        for (int i = 0; i < resized_w; i++)
            for (int ch = 0; ch < 3; ch++) {
                uint8_t v = line.rgb[((size_t)y * resized_w + i) * 3 + (2 - ch)];
                x[ch * plane + (size_t)y * width + i] = (v / 255.0f - 0.5f) / 0.5f;
            }
    ocr_image_free(&line);
    int64_t dims[4] = {1, 3, REC_HEIGHT, width};
    onyx_tensor *probs;
    int rc = run_model(c->rec, c->rec_in, c->rec_out, x, dims, &probs, "recognition");
    free(x);
    if (rc != 0)
        return rc;
    const int64_t *od = onyx_tensor_dims(probs);
    if (onyx_tensor_rank(probs) != 3 || od[0] != 1 || od[2] != (int64_t)c->dict.count + 2) {
        onyx_tensor_free(probs);
        return set_error("recognition: output does not match the %zu-entry dictionary",
                         c->dict.count);
    }
    rc = ctc_decode(&c->dict, onyx_tensor_data(probs), od[1], od[2], text, confidence);
    onyx_tensor_free(probs);
    return rc;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: onyx_ocr [--models DIR] [--threads N] [--timing] IMAGE\n"
            "Prints one line per text line found in IMAGE (PNG or binary PPM):\n"
            "  text<TAB>confidence<TAB>x1,y1 x2,y2 x3,y3 x4,y4\n"
            "  --models DIR  folder with the PP-OCRv4 models (default %s)\n"
            "  --threads N   intra-op threads, 0 for one per core (default 0)\n"
            "  --timing      report stage timings on stderr\n",
            ONYX_OCR_MODELS);
}

static int parse_threads(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 4096)
        return -1;
    *out = (int)v;
    return 0;
}

static int run(int argc, char **argv)
{
    const char *models = ONYX_OCR_MODELS, *image_path = NULL;
    int threads = 0, timing = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--models") && i + 1 < argc) {
            models = argv[++i];
        } else if (!strcmp(a, "--threads") && i + 1 < argc) {
            if (parse_threads(argv[++i], &threads) != 0)
                return set_error("bad thread count '%s'", argv[i]);
        } else if (!strcmp(a, "--timing")) {
            timing = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            return set_error("unknown or incomplete option '%s' (see --help)", a);
        } else if (image_path) {
            return set_error("only one image may be given");
        } else {
            image_path = a;
        }
    }
    if (!image_path)
        return set_error("no image given (see --help)");

    double t0 = now_ms();
    ocr_image img;
    char err[512];
    if (ocr_image_load(image_path, &img, err, sizeof err) != 0)
        return set_error("%s", err);

    ocr_context c;
    memset(&c, 0, sizeof c);
    onyx_session_options *opts = NULL;
    ocr_box *boxes = NULL;
    size_t nboxes = 0;
    int rc = -1;
    char *dict_path = join_path(models, DICT_FILE);
    if (!dict_path) {
        set_error("out of memory");
        goto out;
    }
    rc = load_dictionary(dict_path, &c.dict);
    free(dict_path);
    if (rc != 0)
        goto out;
    rc = -1;
    onyx_status *st;
    if ((st = onyx_env_create(&c.env)) != NULL) {
        status_error(st, "environment");
        goto out;
    }
    if ((st = onyx_session_options_create(&opts)) != NULL ||
        (st = onyx_session_options_set_threads(opts, threads)) != NULL) {
        status_error(st, "session options");
        goto out;
    }
    if (open_session(&c, models, DET_MODEL, opts, &c.det, &c.det_in, &c.det_out) != 0 ||
        open_session(&c, models, REC_MODEL, opts, &c.rec, &c.rec_in, &c.rec_out) != 0)
        goto out;
    double t1 = now_ms();
    if (detect(&c, &img, &boxes, &nboxes) != 0)
        goto out;
    double t2 = now_ms();
    for (size_t i = 0; i < nboxes; i++) {
        ocr_image crop;
        int cr = crop_box(&img, &boxes[i], &crop);
        if (cr < 0)
            goto out;
        if (cr > 0)
            continue;
        char *text = NULL;
        double conf = 0;
        int r = recognise(&c, &crop, &text, &conf);
        ocr_image_free(&crop);
        if (r != 0)
            goto out;
        if (conf >= DROP_SCORE && text[0]) {
            const ocr_point *p = boxes[i].p;
            printf("%s\t%.4f\t%d,%d %d,%d %d,%d %d,%d\n", text, conf, (int)p[0].x, (int)p[0].y,
                   (int)p[1].x, (int)p[1].y, (int)p[2].x, (int)p[2].y, (int)p[3].x, (int)p[3].y);
        }
        free(text);
    }
    if (fflush(stdout) != 0) {
        set_error("cannot write the results");
        goto out;
    }
    if (timing)
        fprintf(stderr, "onyx_ocr: load %.1f ms, detect %.1f ms, recognise %.1f ms (%zu boxes)\n",
                t1 - t0, t2 - t1, now_ms() - t2, nboxes);
    rc = 0;
out:
    free(boxes);
    onyx_session_free(c.det);
    onyx_session_free(c.rec);
    onyx_session_options_free(opts);
    onyx_env_free(c.env);
    free_dictionary(&c.dict);
    ocr_image_free(&img);
    return rc;
}

int main(int argc, char **argv)
{
    if (run(argc, argv) == 0)
        return 0;
    /* Keep the report on one line even when a message spans several. */
    for (char *p = g_error; *p; p++)
        if (*p == '\n' || *p == '\r')
            *p = ' ';
    fprintf(stderr, "onyx_ocr: error: %s\n", g_error);
    return 1;
}
