/* Value comparison under tolerances (see compare.h). */
#include "verify/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"

static int is_complex(ox_dtype t) { return t == ONYX_COMPLEX64 || t == ONYX_COMPLEX128; }

/* Element i as a double; complex tensors are read as their interleaved
 * float parts. */
static double elem(const ox_tensor *t, int64_t i) {
    if (t->dtype == ONYX_COMPLEX64) return ((const float *)t->data)[i];
    if (t->dtype == ONYX_COMPLEX128) return ((const double *)t->data)[i];
    return ox_get_f64(t->data, t->dtype, (size_t)i);
}

static int tensors_match(const ox_tensor *t, const ox_tensor *ref, double atol, double rtol,
                         ox_compare *out) {
    if (t->dtype != ref->dtype || !ox_shape_equal(t->dims, t->rank, ref->dims, ref->rank)) {
        char a[96], b[96];
        snprintf(out->why, sizeof out->why, "is %s %s, the reference %s %s",
                 ox_dtype_name(t->dtype), ox_shape_str(t->dims, t->rank, a, sizeof a),
                 ox_dtype_name(ref->dtype), ox_shape_str(ref->dims, ref->rank, b, sizeof b));
        out->max_abs = INFINITY;
        return 0;
    }
    int64_t n = ox_tensor_numel(ref) * (is_complex(ref->dtype) ? 2 : 1);
    out->count += n;
    if (ref->dtype == ONYX_STRING) {
        const char *const *a = t->data, *const *b = ref->data;
        for (int64_t i = 0; i < n; i++)
            if (strcmp(a[i], b[i]) != 0) {
                if (!out->bad++) out->at = i;
                out->max_abs = INFINITY;
            }
        return out->bad == 0;
    }
    for (int64_t i = 0; i < n; i++) {
        double x = elem(t, i), r = elem(ref, i);
        if (x == r || (isnan(x) && isnan(r))) continue;
        double d = fabs(x - r);
        if (isnan(d)) d = INFINITY;
        if (d > out->max_abs || out->at < 0) {
            out->max_abs = d;
            out->at = i;
        }
        if (!(d <= atol + rtol * fabs(r))) out->bad++;
    }
    return out->bad == 0;
}

static int match_into(const ox_tensor *t, const ox_tensor *ref, double atol, double rtol,
                      ox_compare *out) {
    if (t->kind != ref->kind) {
        snprintf(out->why, sizeof out->why, "is another kind of value than the reference");
        return 0;
    }
    if (t->kind == OX_KIND_TENSOR) return tensors_match(t, ref, atol, rtol, out);
    if (t->n_items != ref->n_items) {
        snprintf(out->why, sizeof out->why, "has %d items, the reference %d", t->n_items,
                 ref->n_items);
        return 0;
    }
    int ok = 1;
    for (int i = 0; i < t->n_items; i++) ok &= match_into(t->items[i], ref->items[i], atol, rtol, out);
    return ok;
}

int ox_values_match(const ox_tensor *t, const ox_tensor *ref, double atol, double rtol,
                    ox_compare *out) {
    memset(out, 0, sizeof *out);
    out->at = -1;
    return match_into(t, ref, atol, rtol, out) && out->why[0] == '\0';
}
