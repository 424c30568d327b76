/* JPEG decoder of ImageDecoder, through libjpeg-turbo (built in when
 * codec.cmake finds it; ONYX_HAVE_JPEG). The library's defaults are the
 * operator's definition: accurate integer IDCT and "fancy" (triangle
 * filter) chroma upsampling, the method the ONNX spec describes. Gray
 * JPEGs decode to one channel, YCbCr and RGB ones to RGB; CMYK and YCCK
 * (Adobe) JPEGs are converted to RGB as the reference (Pillow) does.
 *
 * libjpeg reports errors through error_exit, which must not return: ours
 * records the message and longjmps back to ox_img_decode_jpeg, which
 * destroys the decompressor and returns. The work between setjmp and
 * longjmp is in read_jpeg, with its state in the jpeg_job struct, so the
 * jump clobbers nothing that is read after it. Warnings are not printed;
 * the one that means the data ended early (libjpeg would pad the image
 * with gray and carry on) is treated as corrupt data, as Pillow does. A
 * progressive JPEG may hold any number of scans, each a full pass over
 * the coefficients, so a progress monitor stops pathological files. */
#include <stdio.h> /* before jpeglib.h, which uses FILE */
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/codec_decode.h"

#ifdef ONYX_HAVE_JPEG

#include <jerror.h>
#include <jpeglib.h>
#include <setjmp.h>

/* Far above the ~10 scans of real progressive files. */
#define MAX_SCANS 1000

typedef struct jpeg_job {
    struct jpeg_decompress_struct cinfo;
    struct jpeg_error_mgr em;
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    ox_img *img;
    ox_img_status status;
    uint8_t *cmyk_row; /* one row of 4-channel samples, for CMYK/YCCK */
} jpeg_job;

static ox_img_status status_of(const struct jpeg_error_mgr *em) {
    switch (em->msg_code) {
    case JERR_BAD_PRECISION: /* 12-bit (and lossless 16-bit) JPEG are valid; other precisions are not */
        return em->msg_parm.i[0] == 12 || em->msg_parm.i[0] == 16 ? OX_IMG_UNSUPPORTED : OX_IMG_CORRUPT;
    case JERR_SOF_UNSUPPORTED: /* lossless and hierarchical JPEG */
    case JERR_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_ARITH_NOTIMPL:
    case JERR_CONVERSION_NOTIMPL: return OX_IMG_UNSUPPORTED;
    case JERR_OUT_OF_MEMORY: return OX_IMG_NO_MEMORY;
    default: return OX_IMG_CORRUPT;
    }
}

/* Records libjpeg's current message with status st and jumps out. */
static void bail(j_common_ptr cinfo, ox_img_status st) {
    jpeg_job *j = cinfo->client_data;
    char msg[JMSG_LENGTH_MAX];
    (*cinfo->err->format_message)(cinfo, msg);
    j->status = ox_img_fail(j->img, st, "libjpeg: %s", msg);
    longjmp(j->jump, 1);
}

static void on_error_exit(j_common_ptr cinfo) { bail(cinfo, status_of(cinfo->err)); }

static void on_emit_message(j_common_ptr cinfo, int level) {
    if (level < 0 && cinfo->err->msg_code == JWRN_JPEG_EOF) bail(cinfo, OX_IMG_CORRUPT);
}

static void on_output_message(j_common_ptr cinfo) { (void)cinfo; }

static void on_progress(j_common_ptr cinfo) {
    const struct jpeg_decompress_struct *d = (const struct jpeg_decompress_struct *)cinfo;
    if (d->input_scan_number > MAX_SCANS) {
        jpeg_job *j = cinfo->client_data;
        j->status = ox_img_fail(j->img, OX_IMG_CORRUPT, "JPEG holds more than %d scans", MAX_SCANS);
        longjmp(j->jump, 1);
    }
}

/* Pillow's CMYK to RGB: each channel is (255 - K) scaled down by its ink. */
static uint8_t mul255(unsigned a, unsigned b) {
    unsigned t = a * b + 128u;
    return (uint8_t)((t + (t >> 8)) >> 8);
}

/* CMYK JPEGs are read as Adobe writes them, inverted (0 = full ink),
 * whether or not an Adobe marker says so, as Pillow assumes. */
static void cmyk_to_rgb(const uint8_t *in, uint8_t *out, size_t n) {
    for (size_t i = 0; i < n; i++, in += 4, out += 3) {
        unsigned c[4];
        for (int k = 0; k < 4; k++) c[k] = 255u - in[k];
        unsigned nk = 255u - c[3];
        for (int k = 0; k < 3; k++) out[k] = (uint8_t)(nk - mul255(c[k], nk));
    }
}

static void read_jpeg(jpeg_job *j, const uint8_t *p, size_t size) {
    struct jpeg_decompress_struct *d = &j->cinfo;
    jpeg_create_decompress(d);
    d->progress = &j->progress;
    jpeg_mem_src(d, p, (unsigned long)size);
    jpeg_read_header(d, TRUE);
    /* before jpeg_start_decompress, which allocates for the whole image */
    if ((uint64_t)d->image_width * d->image_height > (uint64_t)OX_IMG_MAX_PIXELS) {
        j->status = ox_img_fail(j->img, OX_IMG_TOO_LARGE, "image size %u x %u exceeds onyx's limit of %lld pixels",
                                (unsigned)d->image_width, (unsigned)d->image_height, (long long)OX_IMG_MAX_PIXELS);
        return;
    }
    int cmyk = 0;
    switch (d->jpeg_color_space) {
    case JCS_GRAYSCALE: d->out_color_space = JCS_GRAYSCALE; break;
    case JCS_YCbCr:
    case JCS_RGB: d->out_color_space = JCS_RGB; break;
    case JCS_CMYK:
    case JCS_YCCK:
        d->out_color_space = JCS_CMYK;
        cmyk = 1;
        break;
    default:
        j->status = ox_img_fail(j->img, OX_IMG_UNSUPPORTED, "JPEG with %d components in an unknown colour space",
                                d->num_components);
        return;
    }
    jpeg_start_decompress(d);
    int channels = cmyk ? 3 : d->output_components;
    if ((channels != 1 && channels != 3) || (cmyk && d->output_components != 4)) {
        j->status = ox_img_fail(j->img, OX_IMG_CORRUPT, "JPEG decodes to %d components", d->output_components);
        return;
    }
    if ((j->status = ox_img_alloc(j->img, d->output_height, d->output_width, channels)) != OX_IMG_OK) return;
    j->status = OX_IMG_CORRUPT; /* until every row is read */
    size_t w = d->output_width;
    if (cmyk && !(j->cmyk_row = malloc(w * 4))) {
        j->status = ox_img_fail(j->img, OX_IMG_NO_MEMORY, "no memory for a JPEG row");
        return;
    }
    while (d->output_scanline < d->output_height) {
        uint8_t *row = j->img->pixels + (size_t)d->output_scanline * w * (size_t)channels;
        JSAMPROW rp = cmyk ? j->cmyk_row : row;
        if (jpeg_read_scanlines(d, &rp, 1) != 1) {
            j->status = ox_img_fail(j->img, OX_IMG_CORRUPT, "JPEG row %u could not be read", d->output_scanline);
            return;
        }
        if (cmyk) cmyk_to_rgb(j->cmyk_row, row, w);
    }
    /* No jpeg_finish_decompress: it only reads on to the EOI marker, and
     * a file whose image is complete is not rejected for a missing one. */
    j->status = OX_IMG_OK;
}

ox_img_status ox_img_decode_jpeg(const uint8_t *p, size_t size, ox_img *img) {
    jpeg_job *j = calloc(1, sizeof *j);
    if (!j) return ox_img_fail(img, OX_IMG_NO_MEMORY, "no memory for a JPEG decoder");
    j->img = img;
    j->status = OX_IMG_CORRUPT;
    j->cinfo.err = jpeg_std_error(&j->em);
    j->em.error_exit = on_error_exit;
    j->em.emit_message = on_emit_message;
    j->em.output_message = on_output_message;
    j->progress.progress_monitor = on_progress;
    j->cinfo.client_data = j; /* kept by jpeg_create_decompress */
    if (setjmp(j->jump) == 0) read_jpeg(j, p, size);
    jpeg_destroy_decompress(&j->cinfo); /* safe on a half-created decompressor */
    free(j->cmyk_row);
    ox_img_status st = j->status;
    free(j);
    return st;
}

#else

ox_img_status ox_img_decode_jpeg(const uint8_t *p, size_t size, ox_img *img) {
    (void)p;
    (void)size;
    return ox_img_fail(img, OX_IMG_UNSUPPORTED,
                       "onyx was built without libjpeg-turbo, which it decodes JPEG with (install "
                       "libjpeg62-turbo-dev and rebuild)");
}

#endif
