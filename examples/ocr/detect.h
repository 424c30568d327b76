/* Text-box geometry for the OCR example: turning a DBNet probability map
 * into boxes, ordering them, and mapping a box onto an upright crop. */
#ifndef ONYX_OCR_DETECT_H
#define ONYX_OCR_DETECT_H

#include <stddef.h>

typedef struct ocr_point {
    double x, y;
} ocr_point;

/* Corners clockwise from the top-left, in whole pixels of the original
 * image. */
typedef struct ocr_box {
    ocr_point p[4];
    double score;
} ocr_box;

typedef struct ocr_db_params {
    float thresh;        /* probability above which a pixel is text */
    double box_thresh;   /* minimum mean probability inside a box */
    double unclip_ratio; /* how far a shrunk text kernel is grown back */
    int max_candidates;
} ocr_db_params;

/* prob is the detector's map_h x map_w output for an image of
 * img_w x img_h that was resized to the map size. On success *boxes is a
 * malloc'ed array the caller frees (possibly NULL when *count is 0).
 * Returns -1 when out of memory. */
int ocr_db_boxes(const float *prob, int map_w, int map_h, int img_w, int img_h,
                 const ocr_db_params *params, ocr_box **boxes, size_t *count);

/* Reading order: top to bottom, and left to right within a line. */
void ocr_sort_boxes(ocr_box *boxes, size_t count);

/* The homography (row major) taking the crop rectangle
 * (0,0)-(width,height) onto the box corners, plus the crop's size. */
void ocr_box_crop_transform(const ocr_box *box, double h[9], int *width, int *height);

#endif
