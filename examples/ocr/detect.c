#include "detect.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The post-processing follows PaddleOCR's DBPostProcess ("fast" score,
 * quadrilateral boxes) so that its tuned thresholds keep their meaning. */

typedef struct ipoint {
    int x, y;
} ipoint;

typedef struct rrect {
    ocr_point c[4]; /* corners in order around the rectangle */
    double side_a, side_b;
} rrect;

static int cmp_ipoint(const void *a, const void *b)
{
    const ipoint *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    return (p->y > q->y) - (p->y < q->y);
}

static long cross3(ipoint o, ipoint a, ipoint b)
{
    return (long)(a.x - o.x) * (b.y - o.y) - (long)(a.y - o.y) * (b.x - o.x);
}

/* Andrew's monotone chain; pts is sorted in place and hull needs room for
 * n + 1 points. Collinear points are dropped. */
static size_t convex_hull(ipoint *pts, size_t n, ipoint *hull)
{
    qsort(pts, n, sizeof *pts, cmp_ipoint);
    if (n < 3) {
        memcpy(hull, pts, n * sizeof *pts);
        return n;
    }
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        while (k >= 2 && cross3(hull[k - 2], hull[k - 1], pts[i]) <= 0)
            k--;
        hull[k++] = pts[i];
    }
    for (size_t i = n - 1, t = k + 1; i-- > 0;) {
        while (k >= t && cross3(hull[k - 2], hull[k - 1], pts[i]) <= 0)
            k--;
        hull[k++] = pts[i];
    }
    return k - 1;
}

/* Rotating calipers: the minimum-area enclosing rectangle has a side on
 * some hull edge, so trying every edge direction is exact. */
static int min_area_rect(const ipoint *hull, size_t n, rrect *out)
{
    if (n < 3)
        return -1;
    double best = INFINITY;
    for (size_t i = 0; i < n; i++) {
        ipoint a = hull[i], b = hull[(i + 1) % n];
        double ux = b.x - a.x, uy = b.y - a.y;
        double len = hypot(ux, uy);
        if (len == 0)
            continue;
        ux /= len;
        uy /= len;
        double umin = INFINITY, umax = -INFINITY, vmin = INFINITY, vmax = -INFINITY;
        for (size_t j = 0; j < n; j++) {
            double dx = hull[j].x - a.x, dy = hull[j].y - a.y;
            double u = dx * ux + dy * uy, v = -dx * uy + dy * ux;
            umin = fmin(umin, u);
            umax = fmax(umax, u);
            vmin = fmin(vmin, v);
            vmax = fmax(vmax, v);
        }
        double area = (umax - umin) * (vmax - vmin);
        if (area < best) {
            best = area;
            double us[4] = {umin, umax, umax, umin}, vs[4] = {vmin, vmin, vmax, vmax};
            for (int k = 0; k < 4; k++) {
                out->c[k].x = a.x + us[k] * ux - vs[k] * uy;
                out->c[k].y = a.y + us[k] * uy + vs[k] * ux;
            }
            out->side_a = umax - umin;
            out->side_b = vmax - vmin;
        }
    }
    return best < INFINITY ? 0 : -1;
}

/* Grows the box the way PaddleOCR does through pyclipper: vertices
 * truncated to integers, offset by delta with round joins whose arcs are
 * stepped within 0.25 px, every new vertex rounded to an integer. The
 * enclosing rectangle of that polygon is taken afterwards, so reproducing
 * its exact vertices keeps box edges on the same pixels. out needs room
 * for OFFSET_MAX_POINTS points. */
#define OFFSET_MAX_POINTS 4096

static long round_away(double v)
{
    return v < 0 ? (long)(v - 0.5) : (long)(v + 0.5);
}

static size_t offset_polygon(const ocr_point corners[4], double delta, ipoint *out)
{
    ipoint p[4];
    int n = 0;
    for (int k = 0; k < 4; k++) {
        ipoint q = {(int)trunc(corners[k].x), (int)trunc(corners[k].y)};
        if (n == 0 || q.x != p[n - 1].x || q.y != p[n - 1].y)
            p[n++] = q;
    }
    while (n > 1 && p[0].x == p[n - 1].x && p[0].y == p[n - 1].y)
        n--;
    if (n < 3)
        return 0;
    double area2 = 0;
    for (int i = 0, j = n - 1; i < n; j = i++)
        area2 += (double)p[j].x * p[i].y - (double)p[i].x * p[j].y;
    if (area2 < 0)
        for (int i = 0; i < n / 2; i++) {
            ipoint t = p[i];
            p[i] = p[n - 1 - i];
            p[n - 1 - i] = t;
        }
    double nx[4], ny[4];
    for (int j = 0; j < n; j++) {
        double dx = p[(j + 1) % n].x - p[j].x, dy = p[(j + 1) % n].y - p[j].y;
        double f = 1.0 / sqrt(dx * dx + dy * dy);
        nx[j] = dy * f;
        ny[j] = -dx * f;
    }
    const double pi = 3.14159265358979323846, two_pi = 2 * pi;
    double tol = delta * 0.25 < 0.25 ? delta * 0.25 : 0.25;
    double steps = pi / acos(1 - tol / delta);
    if (steps > delta * pi)
        steps = delta * pi;
    double sn = sin(two_pi / steps), cs = cos(two_pi / steps), per_rad = steps / two_pi;
    size_t m = 0;
    for (int j = 0, k = n - 1; j < n; k = j++) {
        double sin_a = nx[k] * ny[j] - nx[j] * ny[k];
        double cos_a = nx[k] * nx[j] + ny[k] * ny[j];
        if (fabs(sin_a * delta) < 1.0 && cos_a > 0) {
            /* Nearly straight: one vertex suffices. */
            if (m < OFFSET_MAX_POINTS)
                out[m++] = (ipoint){(int)round_away(p[j].x + nx[k] * delta),
                                    (int)round_away(p[j].y + ny[k] * delta)};
            continue;
        }
        sin_a = sin_a > 1 ? 1 : sin_a < -1 ? -1 : sin_a;
        int nsteps = (int)round_away(per_rad * fabs(atan2(sin_a, cos_a)));
        if (nsteps < 1)
            nsteps = 1;
        double x = nx[k], y = ny[k];
        for (int i = 0; i < nsteps && m < OFFSET_MAX_POINTS; i++) {
            out[m++] = (ipoint){(int)round_away(p[j].x + x * delta),
                                (int)round_away(p[j].y + y * delta)};
            double x2 = x;
            x = x * cs - sn * y;
            y = x2 * sn + y * cs;
        }
        if (m < OFFSET_MAX_POINTS)
            out[m++] = (ipoint){(int)round_away(p[j].x + nx[j] * delta),
                                (int)round_away(p[j].y + ny[j] * delta)};
    }
    return m;
}

/* Mean probability over the pixels the (truncated) quadrilateral covers,
 * boundary included, like cv2.fillPoly followed by cv2.mean. */
static double box_score(const float *prob, int w, int h, const ocr_point c[4])
{
    double minx = c[0].x, maxx = c[0].x, miny = c[0].y, maxy = c[0].y;
    for (int k = 1; k < 4; k++) {
        minx = fmin(minx, c[k].x);
        maxx = fmax(maxx, c[k].x);
        miny = fmin(miny, c[k].y);
        maxy = fmax(maxy, c[k].y);
    }
    int x0 = (int)fmin(fmax(floor(minx), 0), w - 1), x1 = (int)fmin(fmax(ceil(maxx), 0), w - 1);
    int y0 = (int)fmin(fmax(floor(miny), 0), h - 1), y1 = (int)fmin(fmax(ceil(maxy), 0), h - 1);
    double q[4][2];
    for (int k = 0; k < 4; k++) {
        q[k][0] = trunc(c[k].x - x0) + x0;
        q[k][1] = trunc(c[k].y - y0) + y0;
    }
    double sum = 0;
    long cnt = 0;
    for (int y = y0; y <= y1; y++) {
        for (int x = x0; x <= x1; x++) {
            int pos = 0, neg = 0;
            for (int k = 0; k < 4; k++) {
                const double *a = q[k], *b = q[(k + 1) % 4];
                double cr = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
                pos += cr > 1e-9;
                neg += cr < -1e-9;
            }
            if (pos == 0 || neg == 0) {
                sum += prob[(size_t)y * w + x];
                cnt++;
            }
        }
    }
    return cnt ? sum / cnt : 0.0;
}

/* PaddleOCR's clockwise order: top-left has the smallest x + y, bottom-
 * right the largest; of the other two, top-right has the smaller y - x. */
static void order_clockwise(ocr_point p[4])
{
    int imin = 0, imax = 0;
    for (int k = 1; k < 4; k++) {
        if (p[k].x + p[k].y < p[imin].x + p[imin].y)
            imin = k;
        if (p[k].x + p[k].y > p[imax].x + p[imax].y)
            imax = k;
    }
    if (imin == imax)
        imax = imin == 3 ? 2 : 3;
    int rest[2], n = 0;
    for (int k = 0; k < 4; k++)
        if (k != imin && k != imax)
            rest[n++] = k;
    ocr_point r[4];
    r[0] = p[imin];
    r[2] = p[imax];
    double d0 = p[rest[0]].y - p[rest[0]].x, d1 = p[rest[1]].y - p[rest[1]].x;
    r[1] = d1 < d0 ? p[rest[1]] : p[rest[0]];
    r[3] = d1 < d0 ? p[rest[0]] : p[rest[1]];
    memcpy(p, r, sizeof r);
}

typedef struct pt_list {
    ipoint *v;
    size_t n, cap;
} pt_list;

static int pt_push(pt_list *l, int x, int y)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 256;
        ipoint *v = realloc(l->v, cap * sizeof *v);
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n].x = x;
    l->v[l->n].y = y;
    l->n++;
    return 0;
}

static int box_push(ocr_box **boxes, size_t *n, size_t *cap, const ocr_box *b)
{
    if (*n == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        ocr_box *v = realloc(*boxes, c * sizeof *v);
        if (!v)
            return -1;
        *boxes = v;
        *cap = c;
    }
    (*boxes)[(*n)++] = *b;
    return 0;
}

/* Turns one component's boundary pixels into a box; returns 1 when the
 * component is kept, 0 when rejected. */
static int component_box(const float *prob, int mw, int mh, int img_w, int img_h,
                         const ocr_db_params *pr, pt_list *edge, ipoint *hull, ocr_box *out)
{
    size_t hn = convex_hull(edge->v, edge->n, hull);
    rrect r;
    if (min_area_rect(hull, hn, &r) != 0)
        return 0;
    const double min_side = 3;
    if (fmin(r.side_a, r.side_b) < min_side)
        return 0;
    double score = box_score(prob, mw, mh, r.c);
    if (score < pr->box_thresh)
        return 0;
    double area = r.side_a * r.side_b, perimeter = 2 * (r.side_a + r.side_b);
    ipoint grown[OFFSET_MAX_POINTS], grown_hull[OFFSET_MAX_POINTS + 1];
    size_t gn = offset_polygon(r.c, area * pr->unclip_ratio / perimeter, grown);
    if (gn == 0)
        return 0;
    gn = convex_hull(grown, gn, grown_hull);
    if (min_area_rect(grown_hull, gn, &r) != 0 || fmin(r.side_a, r.side_b) < min_side + 2)
        return 0;
    for (int k = 0; k < 4; k++) {
        /* nearbyint rounds halves to even, as NumPy's round does. */
        double x = nearbyint(r.c[k].x / mw * img_w), y = nearbyint(r.c[k].y / mh * img_h);
        out->p[k].x = fmin(fmax(x, 0), img_w);
        out->p[k].y = fmin(fmax(y, 0), img_h);
    }
    order_clockwise(out->p);
    for (int k = 0; k < 4; k++) {
        out->p[k].x = fmin(out->p[k].x, img_w - 1);
        out->p[k].y = fmin(out->p[k].y, img_h - 1);
    }
    double bw = hypot(out->p[0].x - out->p[1].x, out->p[0].y - out->p[1].y);
    double bh = hypot(out->p[0].x - out->p[3].x, out->p[0].y - out->p[3].y);
    if (floor(bw) <= 3 || floor(bh) <= 3)
        return 0;
    out->score = score;
    return 1;
}

int ocr_db_boxes(const float *prob, int mw, int mh, int img_w, int img_h,
                 const ocr_db_params *pr, ocr_box **boxes, size_t *count)
{
    *boxes = NULL;
    *count = 0;
    size_t npx = (size_t)mw * (size_t)mh;
    uint8_t *state = calloc(npx, 1); /* 0 background, 1 text, 2 visited */
    pt_list stack = {0}, edge = {0};
    ipoint *hull = NULL;
    size_t hull_cap = 0, cap = 0;
    int rc = -1, candidates = 0;
    if (!state)
        goto done;
    for (size_t i = 0; i < npx; i++)
        state[i] = prob[i] > pr->thresh;
#define IS_TEXT(xx, yy)                                                                     \
    ((xx) >= 0 && (yy) >= 0 && (xx) < mw && (yy) < mh && state[(size_t)(yy) * mw + (xx)] != 0)
    for (int y = 0; y < mh; y++) {
        for (int x = 0; x < mw; x++) {
            if (state[(size_t)y * mw + x] != 1)
                continue;
            if (candidates++ >= pr->max_candidates)
                goto finished;
            /* Eight-connected flood fill, as contour tracing would see the
             * blob; only its boundary pixels can be hull vertices. */
            stack.n = edge.n = 0;
            state[(size_t)y * mw + x] = 2;
            if (pt_push(&stack, x, y) != 0)
                goto done;
            while (stack.n) {
                ipoint p = stack.v[--stack.n];
                if (!IS_TEXT(p.x - 1, p.y) || !IS_TEXT(p.x + 1, p.y) || !IS_TEXT(p.x, p.y - 1) ||
                    !IS_TEXT(p.x, p.y + 1))
                    if (pt_push(&edge, p.x, p.y) != 0)
                        goto done;
                for (int dy = -1; dy <= 1; dy++) {
                    for (int dx = -1; dx <= 1; dx++) {
                        int qx = p.x + dx, qy = p.y + dy;
                        if (qx < 0 || qy < 0 || qx >= mw || qy >= mh)
                            continue;
                        uint8_t *s = &state[(size_t)qy * mw + qx];
                        if (*s == 1) {
                            *s = 2;
                            if (pt_push(&stack, qx, qy) != 0)
                                goto done;
                        }
                    }
                }
            }
            if (edge.n + 1 > hull_cap) {
                ipoint *h = realloc(hull, (edge.n + 1) * sizeof *h);
                if (!h)
                    goto done;
                hull = h;
                hull_cap = edge.n + 1;
            }
            ocr_box b;
            if (component_box(prob, mw, mh, img_w, img_h, pr, &edge, hull, &b) &&
                box_push(boxes, count, &cap, &b) != 0)
                goto done;
        }
    }
#undef IS_TEXT
finished:
    rc = 0;
done:
    if (rc != 0) {
        free(*boxes);
        *boxes = NULL;
        *count = 0;
    }
    free(state);
    free(stack.v);
    free(edge.v);
    free(hull);
    return rc;
}

static int cmp_box(const void *a, const void *b)
{
    const ocr_box *p = a, *q = b;
    if (p->p[0].y != q->p[0].y)
        return p->p[0].y < q->p[0].y ? -1 : 1;
    return (p->p[0].x > q->p[0].x) - (p->p[0].x < q->p[0].x);
}

void ocr_sort_boxes(ocr_box *boxes, size_t count)
{
    if (count < 2)
        return;
    qsort(boxes, count, sizeof *boxes, cmp_box);
    /* Boxes whose tops are within a few pixels share a line: there the
     * left one reads first even if it sits slightly lower. */
    for (size_t i = 0; i + 1 < count; i++) {
        for (size_t j = i + 1; j-- > 0;) {
            ocr_box *a = &boxes[j], *b = &boxes[j + 1];
            if (fabs(b->p[0].y - a->p[0].y) < 10 && b->p[0].x < a->p[0].x) {
                ocr_box t = *a;
                *a = *b;
                *b = t;
            } else {
                break;
            }
        }
    }
}

/* Solves the 8x8 system for the homography sending src[k] to dst[k]. */
static void homography(const ocr_point src[4], const ocr_point dst[4], double h[9])
{
    double a[8][9];
    for (int k = 0; k < 4; k++) {
        double x = src[k].x, y = src[k].y, u = dst[k].x, v = dst[k].y;
        double r0[9] = {x, y, 1, 0, 0, 0, -u * x, -u * y, u};
        double r1[9] = {0, 0, 0, x, y, 1, -v * x, -v * y, v};
        memcpy(a[2 * k], r0, sizeof r0);
        memcpy(a[2 * k + 1], r1, sizeof r1);
    }
    for (int c = 0; c < 8; c++) {
        int piv = c;
        for (int r = c + 1; r < 8; r++)
            if (fabs(a[r][c]) > fabs(a[piv][c]))
                piv = r;
        if (piv != c)
            for (int k = 0; k < 9; k++) {
                double t = a[c][k];
                a[c][k] = a[piv][k];
                a[piv][k] = t;
            }
        if (fabs(a[c][c]) < 1e-12)
            continue;
        for (int r = 0; r < 8; r++) {
            if (r == c)
                continue;
            double f = a[r][c] / a[c][c];
            for (int k = c; k < 9; k++)
                a[r][k] -= f * a[c][k];
        }
    }
    for (int k = 0; k < 8; k++)
        h[k] = fabs(a[k][k]) < 1e-12 ? 0 : a[k][8] / a[k][k];
    h[8] = 1;
}

void ocr_box_crop_transform(const ocr_box *box, double h[9], int *width, int *height)
{
    const ocr_point *p = box->p;
    double w = fmax(hypot(p[0].x - p[1].x, p[0].y - p[1].y), hypot(p[2].x - p[3].x, p[2].y - p[3].y));
    double ht = fmax(hypot(p[0].x - p[3].x, p[0].y - p[3].y), hypot(p[1].x - p[2].x, p[1].y - p[2].y));
    *width = (int)w;
    *height = (int)ht;
    ocr_point rect[4] = {{0, 0}, {*width, 0}, {*width, *height}, {0, *height}};
    homography(rect, box->p, h);
}
