/* Minimal 8-bit RGB image support for the OCR example. */
#ifndef ONYX_OCR_IMAGE_H
#define ONYX_OCR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

typedef struct ocr_image {
    int width;
    int height;
    uint8_t *rgb; /* width * height * 3 bytes, rows top to bottom */
} ocr_image;

/* Loads a PNG or a binary PPM (P6), chosen by the file's magic bytes.
 * On failure returns -1 and writes a reason into err. */
int ocr_image_load(const char *path, ocr_image *out, char *err, size_t err_size);
int ocr_image_alloc(ocr_image *img, int width, int height);
void ocr_image_free(ocr_image *img);

/* Bilinear resize with the pixel-centre alignment OpenCV uses for
 * INTER_LINEAR, so detections match what the models were tuned on. */
int ocr_image_resize(const ocr_image *src, int width, int height, ocr_image *out);

/* Samples src through the homography h (3x3, row major, mapping output
 * pixel coordinates to source coordinates) with bicubic interpolation and
 * replicated borders. */
int ocr_image_warp(const ocr_image *src, const double h[9], int width, int height,
                   ocr_image *out);

/* Rotates a quarter turn counter-clockwise. */
int ocr_image_rotate_ccw(const ocr_image *src, ocr_image *out);

#endif
