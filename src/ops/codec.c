/* Schema of the image decoding operator (ImageDecoder, opset 20).
 *
 * ImageDecoder turns the bytes of an encoded image file (a 1-D uint8
 * tensor) into a uint8 [height, width, channels] image: 3 channels for
 * pixel_format RGB or BGR, 1 for Grayscale. Height and width come from
 * the file's header, so the output shape is data-dependent: inference
 * fixes the rank and the channel count and the kernel allocates the
 * output once it has read the header. */
#include <string.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_codec;

/* Channels of the decoded image for a pixel_format, or 0 when the
 * attribute names no format the operator defines. */
static int64_t format_channels(const char *fmt) {
    if (strcmp(fmt, "RGB") == 0 || strcmp(fmt, "BGR") == 0) return 3;
    if (strcmp(fmt, "Grayscale") == 0) return 1;
    return 0;
}

static int infer_image_decoder(ox_infer_ctx *c) {
    static const ox_dtype U8[] = {ONYX_UINT8};
    if (ox_infer_need_tensor(c, 0, "encoded_stream") || ox_infer_check_dtype(c, 0, "encoded_stream", U8, 1))
        return -1;
    int r = ox_infer_in_rank(c, 0);
    if (r >= 0 && r != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "ImageDecoder: encoded_stream must be a 1-D uint8 tensor of the file's bytes, got rank %d",
                             r);
    const char *fmt = ir_attr_string(c->node, "pixel_format", "RGB");
    int64_t ch = format_channels(fmt);
    if (ch == 0)
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "ImageDecoder: pixel_format '%s' is not one of RGB, BGR, Grayscale", fmt);
    /* Height and width are only known once the header has been read. */
    c->data_dependent = 1;
    int64_t dims[3] = {-1, -1, ch};
    return ox_infer_set_output(c, 0, ONYX_UINT8, dims, 3);
}

static const ox_op_schema SCHEMAS[] = {
    {"", "ImageDecoder", 20, 20, 1, 1, 1, 1, infer_image_decoder},
};

const ox_op_table ox_ops_codec = {SCHEMAS, sizeof SCHEMAS / sizeof SCHEMAS[0]};
