/* PNG decoder of ImageDecoder, through libpng (built in when codec.cmake
 * finds it; ONYX_HAVE_PNG). Every PNG colour type and depth decodes to 8
 * bits: palettes expand to RGB, gray below 8 bits widens, 16-bit samples
 * keep their high byte (as the ONNX reference, Pillow, reads 16-bit RGB),
 * alpha and transparency are dropped. Interlaced images are handled.
 *
 * libpng reports errors by calling its error function, which must not
 * return: ours records the message and longjmps back to the setjmp in
 * ox_img_decode_png, which frees everything and returns. All the work
 * between setjmp and longjmp happens in read_png, whose state lives in
 * the png_job struct (memory, not registers), so nothing the handler
 * reads is clobbered by the jump. Warnings are silenced: libpng's
 * default prints them to stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/codec_decode.h"

#ifdef ONYX_HAVE_PNG

#include <png.h>

typedef struct png_job {
    const uint8_t *p;
    size_t size, pos;
    ox_img *img;
    ox_img_status status;
    png_bytep *rows;
} png_job;

static void on_error(png_structp png, png_const_charp msg) {
    png_job *j = png_get_error_ptr(png);
    /* libpng's allocation failures are the only errors not caused by the data */
    j->status = strstr(msg, "memory") ? OX_IMG_NO_MEMORY : OX_IMG_CORRUPT;
    ox_img_fail(j->img, j->status, "libpng: %s", msg);
    png_longjmp(png, 1);
}

static void on_warning(png_structp png, png_const_charp msg) {
    (void)png;
    (void)msg;
}

/* libpng's input: the tensor's bytes, refusing to read past them. */
static void on_read(png_structp png, png_bytep out, size_t n) {
    png_job *j = png_get_io_ptr(png);
    if (n > j->size - j->pos) png_error(png, "the PNG data is truncated");
    memcpy(out, j->p + j->pos, n);
    j->pos += n;
}

static void read_png(png_structp png, png_infop info, png_job *j) {
    png_set_read_fn(png, j, on_read);
    /* lift libpng's own 1e6 x 1e6 limit: the pixel count below decides,
     * and a valid image over it is an error, not corrupt data */
    png_set_user_limits(png, 0x7fffffffu, 0x7fffffffu);
    png_read_info(png, info);
    png_uint_32 w, h;
    int depth, color, interlace;
    png_get_IHDR(png, info, &w, &h, &depth, &color, &interlace, NULL, NULL);
    if ((uint64_t)w * h > (uint64_t)OX_IMG_MAX_PIXELS) {
        j->status = ox_img_fail(j->img, OX_IMG_TOO_LARGE, "image size %u x %u exceeds onyx's limit of %lld pixels",
                                (unsigned)w, (unsigned)h, (long long)OX_IMG_MAX_PIXELS);
        return;
    }
    if (color == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (depth == 16) png_set_strip_16(png);
    png_set_strip_alpha(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    int channels = png_get_channels(png, info);
    if ((channels != 1 && channels != 3) || png_get_rowbytes(png, info) != (size_t)w * (size_t)channels)
        png_error(png, "unexpected row layout after conversion to 8-bit gray or RGB");
    if ((j->status = ox_img_alloc(j->img, h, w, channels)) != OX_IMG_OK) return;
    j->status = OX_IMG_CORRUPT; /* until the rows are read */
    j->rows = malloc(sizeof(png_bytep) * h);
    if (!j->rows) png_error(png, "out of memory for the row table");
    for (png_uint_32 y = 0; y < h; y++) j->rows[y] = j->img->pixels + (size_t)y * w * (size_t)channels;
    png_read_image(png, j->rows);
    j->status = OX_IMG_OK;
}

ox_img_status ox_img_decode_png(const uint8_t *p, size_t size, ox_img *img) {
    png_job j = {p, size, 0, img, OX_IMG_CORRUPT, NULL};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &j, on_error, on_warning);
    if (!png) return ox_img_fail(img, OX_IMG_NO_MEMORY, "libpng: cannot create a reader");
    png_infop info = png_create_info_struct(png);
    if (!info) {
        png_destroy_read_struct(&png, NULL, NULL);
        return ox_img_fail(img, OX_IMG_NO_MEMORY, "libpng: cannot create a reader");
    }
    if (setjmp(png_jmpbuf(png)) == 0) read_png(png, info, &j);
    free(j.rows);
    png_destroy_read_struct(&png, &info, NULL);
    return j.status;
}

#else

ox_img_status ox_img_decode_png(const uint8_t *p, size_t size, ox_img *img) {
    (void)p;
    (void)size;
    return ox_img_fail(img, OX_IMG_UNSUPPORTED,
                       "onyx was built without libpng, which it decodes PNG with (install libpng-dev and rebuild)");
}

#endif
