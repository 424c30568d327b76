/* Tensor comparison for onyx check (see compare.h). */
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cmp_parse_stat(const char *s, cmp_rule *rule) {
    if (strcmp(s, "elementwise") == 0) rule->stat = CMP_ELEMENTWISE;
    else if (strcmp(s, "max") == 0) rule->stat = CMP_MAX;
    else if (strcmp(s, "mean") == 0) rule->stat = CMP_MEAN;
    else if (strcmp(s, "median") == 0) rule->stat = CMP_MEDIAN;
    else if (strncmp(s, "quantile:", 9) == 0) {
        char *end = NULL;
        double q = strtod(s + 9, &end);
        if (end == s + 9 || *end || !(q >= 0.0 && q <= 1.0)) return -1;
        rule->stat = CMP_QUANTILE;
        rule->q = q;
    } else {
        return -1;
    }
    return 0;
}

void cmp_describe_rule(const cmp_rule *r, char *buf, size_t size) {
    static const char *const names[] = {"", "max", "mean", "median", "quantile"};
    if (r->stat == CMP_ELEMENTWISE)
        snprintf(buf, size, "|test - ref| <= %g + %g * |ref| for every element", r->atol, r->rtol);
    else if (r->stat == CMP_QUANTILE)
        snprintf(buf, size, "%g-quantile of abs error <= %g, or of rel error <= %g", r->q, r->atol,
                 r->rtol);
    else
        snprintf(buf, size, "%s abs error <= %g, or %s rel error <= %g", names[r->stat], r->atol,
                 names[r->stat], r->rtol);
}

/* Element i of a numeric tensor as a double; complex tensors are read as
 * their interleaved parts. */
static double elem(const onyx_tensor *t, int64_t i) {
    const void *d = onyx_tensor_data((onyx_tensor *)t);
    onyx_dtype dt = onyx_tensor_dtype(t);
    switch (dt) {
    case ONYX_FLOAT32:
    case ONYX_COMPLEX64: return ((const float *)d)[i];
    case ONYX_FLOAT64:
    case ONYX_COMPLEX128: return ((const double *)d)[i];
    case ONYX_FLOAT16: return cli_half_to_float(((const uint16_t *)d)[i]);
    case ONYX_BFLOAT16: return cli_bf16_to_float(((const uint16_t *)d)[i]);
    case ONYX_INT8:
    case ONYX_INT4:
    case ONYX_INT2: return ((const int8_t *)d)[i];
    case ONYX_INT16: return ((const int16_t *)d)[i];
    case ONYX_UINT16: return ((const uint16_t *)d)[i];
    case ONYX_INT32: return ((const int32_t *)d)[i];
    case ONYX_UINT32: return ((const uint32_t *)d)[i];
    case ONYX_INT64: return (double)((const int64_t *)d)[i];
    case ONYX_UINT64: return (double)((const uint64_t *)d)[i];
    default:
        if (cli_is_narrow_float(dt)) return cli_narrow_to_float(dt, ((const uint8_t *)d)[i]);
        return ((const uint8_t *)d)[i]; /* uint8, bool, uint4, uint2 */
    }
}

static int is_complex(onyx_dtype t) { return t == ONYX_COMPLEX64 || t == ONYX_COMPLEX128; }

/* Absolute and relative error of one element pair; NaN against NaN and
 * equal infinities are no error. */
static void elem_error(double a, double r, double *abs_err, double *rel_err) {
    if ((isnan(a) && isnan(r)) || a == r) {
        *abs_err = *rel_err = 0.0;
        return;
    }
    double d = fabs(a - r);
    if (isnan(d)) d = INFINITY;
    *abs_err = d;
    *rel_err = r != 0.0 ? d / fabs(r) : INFINITY;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (nearest rank) of v[0..n); sorts v. */
static double quantile(double *v, int64_t n, double q) {
    if (n <= 0) return 0.0;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    int64_t k = (int64_t)ceil(q * (double)n) - 1;
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return v[k];
}

static int compare_strings(const onyx_tensor *t, const onyx_tensor *ref, cmp_result *out) {
    int64_t n = onyx_tensor_numel(ref);
    for (int64_t i = 0; i < n; i++) {
        if (strcmp(onyx_tensor_string(t, i), onyx_tensor_string(ref, i)) != 0) {
            out->bad++;
            if (out->at_abs < 0) out->at_abs = out->at_rel = i;
        }
    }
    out->count = n;
    out->max_abs = out->max_rel = out->stat_abs = out->stat_rel = out->bad ? 1.0 : 0.0;
    out->pass = out->bad == 0;
    return 0;
}

int cmp_tensors(const onyx_tensor *t, const onyx_tensor *ref, const cmp_rule *rule,
                cmp_result *out) {
    memset(out, 0, sizeof *out);
    out->at_abs = out->at_rel = -1;
    if (onyx_tensor_kind(t) != ONYX_KIND_TENSOR || onyx_tensor_kind(ref) != ONYX_KIND_TENSOR) {
        snprintf(out->why, sizeof out->why, "sequences and optionals are not compared");
        return 0;
    }
    out->compared = 1;
    onyx_dtype dt = onyx_tensor_dtype(t);
    int rank = onyx_tensor_rank(t);
    if (dt != onyx_tensor_dtype(ref) || rank != onyx_tensor_rank(ref) ||
        memcmp(onyx_tensor_dims(t), onyx_tensor_dims(ref), (size_t)rank * sizeof(int64_t)) != 0) {
        cli_buf a = {0}, b = {0};
        cli_format_dims(&a, onyx_tensor_dims(t), rank);
        cli_format_dims(&b, onyx_tensor_dims(ref), onyx_tensor_rank(ref));
        snprintf(out->why, sizeof out->why, "is %s %s, the reference %s %s", onyx_dtype_name(dt),
                 a.s ? a.s : "", onyx_dtype_name(onyx_tensor_dtype(ref)), b.s ? b.s : "");
        cli_buf_free(&a);
        cli_buf_free(&b);
        out->max_abs = out->max_rel = INFINITY;
        return 0;
    }
    if (dt == ONYX_STRING) return compare_strings(t, ref, out);
    int64_t n = onyx_tensor_numel(ref) * (is_complex(dt) ? 2 : 1);
    int keep = rule->stat != CMP_ELEMENTWISE && rule->stat != CMP_MAX;
    double *abs_v = keep ? malloc(((size_t)n + 1) * sizeof *abs_v) : NULL;
    double *rel_v = keep ? malloc(((size_t)n + 1) * sizeof *rel_v) : NULL;
    if (keep && (!abs_v || !rel_v)) {
        free(abs_v);
        free(rel_v);
        return -1;
    }
    double sum_abs = 0.0, sum_rel = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double r = elem(ref, i), a = elem(t, i), ea, er;
        elem_error(a, r, &ea, &er);
        if (ea > out->max_abs || (out->at_abs < 0 && ea > 0)) {
            out->max_abs = ea;
            out->at_abs = i;
        }
        if (er > out->max_rel || (out->at_rel < 0 && er > 0)) {
            out->max_rel = er;
            out->at_rel = i;
        }
        if (!(ea <= rule->atol + rule->rtol * fabs(r))) out->bad++;
        sum_abs += ea;
        sum_rel += er;
        if (keep) {
            abs_v[i] = ea;
            rel_v[i] = er;
        }
    }
    out->count = n;
    switch (rule->stat) {
    case CMP_ELEMENTWISE:
    case CMP_MAX:
        out->stat_abs = out->max_abs;
        out->stat_rel = out->max_rel;
        break;
    case CMP_MEAN:
        out->stat_abs = n ? sum_abs / (double)n : 0.0;
        out->stat_rel = n ? sum_rel / (double)n : 0.0;
        break;
    case CMP_MEDIAN:
    case CMP_QUANTILE: {
        double q = rule->stat == CMP_MEDIAN ? 0.5 : rule->q;
        out->stat_abs = quantile(abs_v, n, q);
        out->stat_rel = quantile(rel_v, n, q);
        break;
    }
    }
    free(abs_v);
    free(rel_v);
    if (rule->stat == CMP_ELEMENTWISE)
        out->pass = out->bad == 0;
    else
        out->pass = out->stat_abs <= rule->atol || out->stat_rel <= rule->rtol;
    return 0;
}

onyx_tensor *cmp_clone(const onyx_tensor *t) {
    if (onyx_tensor_kind(t) != ONYX_KIND_TENSOR) return NULL;
    onyx_tensor *c = NULL;
    onyx_status *st = onyx_tensor_create(onyx_tensor_dtype(t), onyx_tensor_dims(t),
                                         onyx_tensor_rank(t), &c);
    if (st) {
        onyx_status_free(st);
        return NULL;
    }
    if (onyx_tensor_dtype(t) == ONYX_STRING) {
        int64_t n = onyx_tensor_numel(t);
        for (int64_t i = 0; i < n; i++) {
            if ((st = onyx_tensor_set_string(c, i, onyx_tensor_string(t, i))) != NULL) {
                onyx_status_free(st);
                onyx_tensor_free(c);
                return NULL;
            }
        }
        return c;
    }
    size_t nb = onyx_tensor_nbytes(t);
    if (nb) memcpy(onyx_tensor_data(c), onyx_tensor_data((onyx_tensor *)t), nb);
    return c;
}

void cmp_format_index(onyx_dtype dtype, const int64_t *dims, int rank, int64_t i, char *buf,
                      size_t size) {
    if (is_complex(dtype)) i /= 2;
    int64_t idx[64];
    for (int d = rank - 1; d >= 0 && d < 64; d--) {
        idx[d] = dims[d] > 0 ? i % dims[d] : 0;
        i = dims[d] > 0 ? i / dims[d] : 0;
    }
    size_t off = 0;
    off += (size_t)snprintf(buf, size, "[");
    for (int d = 0; d < rank && d < 64 && off < size; d++)
        off += (size_t)snprintf(buf + off, size - off, "%s%lld", d ? "," : "", (long long)idx[d]);
    if (off < size) snprintf(buf + off, size - off, "]");
}
