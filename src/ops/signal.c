/* Schemas of the signal-processing operators: DFT (17 and 20), STFT,
 * the Hann, Hamming and Blackman windows, and MelWeightMatrix. */
#include <stdint.h>

#include "ops/op.h"

extern const ox_op_table ox_ops_signal;

static int need_tensor(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (!t)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: input %s is required", c->node->op_type, what);
    if (t->kind != OX_KIND_TENSOR)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: input %s must be a tensor",
                             c->node->op_type, what);
    return 0;
}

static int need_float(ox_infer_ctx *c, int i, const char *what) {
    const ir_type *t = ox_infer_in(c, i);
    if (t && t->dtype != ONYX_UNDEFINED && !ox_dtype_is_float(t->dtype))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "%s: %s has element type %s; expected a floating-point type",
                             c->node->op_type, what, ox_dtype_name(t->dtype));
    return 0;
}

/* An optional-or-required scalar integer input (int32 or int64, rank 0
 * or a single element). *known is 0 when its value is not available. */
static int scalar_int(ox_infer_ctx *c, int i, const char *what, int64_t *v, int *known) {
    *known = 0;
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    const char *op = c->node->op_type;
    if (t->dtype != ONYX_UNDEFINED && t->dtype != ONYX_INT32 && t->dtype != ONYX_INT64)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be int32 or int64, got %s", op,
                             what, ox_dtype_name(t->dtype));
    if (t->rank > 1 || (t->rank == 1 && t->dims[0] >= 0 && t->dims[0] != 1))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar", op, what);
    const ox_tensor *val = ox_infer_in_value(c, i);
    if (!val) return 0;
    if (ox_tensor_numel(val) != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar", op, what);
    *v = ox_get_i64(val->data, val->dtype, 0);
    *known = 1;
    return 0;
}

static int scalar_float(ox_infer_ctx *c, int i, const char *what, double *v, int *known) {
    *known = 0;
    const ir_type *t = ox_infer_in(c, i);
    if (!t) return 0;
    if (need_float(c, i, what) != 0) return -1;
    if (t->rank > 1 || (t->rank == 1 && t->dims[0] >= 0 && t->dims[0] != 1))
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar", c->node->op_type,
                             what);
    const ox_tensor *val = ox_infer_in_value(c, i);
    if (!val) return 0;
    if (ox_tensor_numel(val) != 1)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: %s must be a scalar", c->node->op_type,
                             what);
    *v = ox_get_f64(val->data, val->dtype, 0);
    *known = 1;
    return 0;
}

static int check_flag(ox_infer_ctx *c, const char *name, int64_t dflt, int64_t *out) {
    *out = ir_attr_int(c->node, name, dflt);
    if (*out != 0 && *out != 1)
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "%s: attribute %s must be 0 or 1, got %lld",
                             c->node->op_type, name, (long long)*out);
    return 0;
}

/* ---- DFT ---- */

static int infer_dft(ox_infer_ctx *c) {
    if (need_tensor(c, 0, "input") || need_float(c, 0, "input")) return -1;
    const ir_type *x = ox_infer_in(c, 0);
    int64_t onesided, inverse;
    if (check_flag(c, "onesided", 0, &onesided) || check_flag(c, "inverse", 0, &inverse)) return -1;
    /* onesided inverse is IRFFT: a real output, 2 * (bins - 1) long by default */
    int irfft = onesided && inverse;
    int64_t len = 0;
    int len_known = 0;
    if (scalar_int(c, 1, "dft_length", &len, &len_known) != 0) return -1;
    if (len_known && len <= 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "DFT: dft_length must be positive, got %lld",
                             (long long)len);
    /* DFT-20 reads the axis from input 2 (default -2) and has no batch axis */
    int v20 = ox_op_since_version(c->node->domain, c->node->op_type, c->node->opset) >= 20;
    int64_t axis = v20 ? -2 : ir_attr_int(c->node, "axis", 1);
    int axis_known = 1;
    if (v20 && ox_infer_in(c, 2) && scalar_int(c, 2, "axis", &axis, &axis_known) != 0) return -1;
    if (x->rank < 0) return ox_infer_set_output(c, 0, x->dtype, NULL, -1);
    int r = x->rank, min_rank = v20 ? 2 : 3;
    if (r < min_rank)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DFT: input must have rank >= %d (%ssignal dims..., 1 or 2), got rank %d",
                             min_rank, v20 ? "" : "batch, ", r);
    int64_t last = x->dims[r - 1];
    if (last >= 0 && last != 1 && last != 2)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "DFT: the last input dimension must be 1 (real) or 2 (complex), got %lld",
            (long long)last);
    int64_t dims[OX_MAX_RANK];
    for (int k = 0; k < r; k++) dims[k] = x->dims[k];
    dims[r - 1] = irfft ? 1 : 2;
    if (!axis_known) {
        /* any signal axis may be the transformed one */
        for (int k = 0; k < r - 1; k++) dims[k] = -1;
        return ox_infer_set_output(c, 0, x->dtype, dims, r);
    }
    long long given = (long long)axis;
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r - 2)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DFT: axis %lld is out of range for rank %d (the last dimension holds "
                             "the real and imaginary parts)",
                             given, r);
    int64_t in = x->dims[axis];
    int64_t n = ox_infer_in(c, 1) ? (len_known ? len : -1) : in;
    /* a one-sided inverse of `in` bins is 2 * (in - 1) samples long */
    if (irfft && !ox_infer_in(c, 1) && in >= 0 &&
        (ox_infer_sub(c, ox_infer_bad_code(c), in, 1, &n, "the one-sided inverse length 2 * (bins - 1)") ||
         ox_infer_mul(c, ox_infer_bad_code(c), n, 2, &n, "the one-sided inverse length 2 * (bins - 1)")))
        return -1;
    if (irfft && n == 0 && !ox_infer_in(c, 1))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "DFT: an inverse one-sided transform of 1 bin needs dft_length");
    dims[axis] = n < 0 ? -1 : (onesided && !inverse ? n / 2 + 1 : n);
    return ox_infer_set_output(c, 0, x->dtype, dims, r);
}

/* ---- STFT ---- */

static int infer_stft(ox_infer_ctx *c) {
    if (need_tensor(c, 0, "signal") || need_float(c, 0, "signal")) return -1;
    if (need_tensor(c, 1, "frame_step")) return -1;
    const ir_type *x = ox_infer_in(c, 0), *w = ox_infer_in(c, 2);
    int64_t onesided;
    if (check_flag(c, "onesided", 1, &onesided)) return -1;
    int64_t step = 0, flen = 0;
    int step_known, flen_known;
    if (scalar_int(c, 1, "frame_step", &step, &step_known) ||
        scalar_int(c, 3, "frame_length", &flen, &flen_known))
        return -1;
    if (step_known && step <= 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "STFT: frame_step must be positive, got %lld",
                             (long long)step);
    if (flen_known && flen <= 0)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "STFT: frame_length must be positive, got %lld", (long long)flen);
    if (w) {
        if (need_float(c, 2, "window")) return -1;
        if (x->dtype != ONYX_UNDEFINED && w->dtype != ONYX_UNDEFINED && w->dtype != x->dtype)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "STFT: window has element type %s but signal has %s",
                                 ox_dtype_name(w->dtype), ox_dtype_name(x->dtype));
        if (w->rank >= 0 && w->rank != 1)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "STFT: window must have rank 1, got rank %d", w->rank);
    }
    if (!w && !ox_infer_in(c, 3))
        return ox_infer_fail(c, ONYX_INVALID_MODEL, "STFT: either window or frame_length must be given");
    int64_t wlen = w && w->rank == 1 ? w->dims[0] : -1;
    if (wlen >= 0 && flen_known && wlen != flen)
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "STFT: window length %lld differs from frame_length %lld",
                             (long long)wlen, (long long)flen);
    int64_t L = flen_known ? flen : (ox_infer_in(c, 3) ? -1 : wlen);
    if (x->rank >= 0 && x->rank != 3)
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "STFT: signal must have shape [batch, signal_length, 1 or 2], got rank %d", x->rank);
    int64_t batch = -1, slen = -1;
    if (x->rank == 3) {
        batch = x->dims[0];
        slen = x->dims[1];
        if (x->dims[2] >= 0 && x->dims[2] != 1 && x->dims[2] != 2)
            return ox_infer_fail(
                c, ox_infer_bad_code(c),
                "STFT: the last signal dimension must be 1 (real) or 2 (complex), got %lld",
                (long long)x->dims[2]);
    }
    int64_t frames = -1;
    if (slen >= 0 && L >= 0) {
        if (slen < L)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "STFT: signal length %lld is shorter than the frame length %lld",
                                 (long long)slen, (long long)L);
        if (step_known) frames = (slen - L) / step + 1;
    }
    int64_t dims[4] = {batch, frames, L < 0 ? -1 : (onesided ? L / 2 + 1 : L), 2};
    return ox_infer_set_output(c, 0, x->dtype, dims, 4);
}

/* ---- windows ---- */

static int output_datatype(ox_infer_ctx *c, ox_dtype *dt) {
    int64_t v = ir_attr_int(c->node, "output_datatype", ONYX_FLOAT32);
    switch (v) {
    case ONYX_UINT8:
    case ONYX_UINT16:
    case ONYX_UINT32:
    case ONYX_UINT64:
    case ONYX_INT8:
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT64:
    case ONYX_FLOAT16:
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
    case ONYX_BFLOAT16:
        *dt = (ox_dtype)v;
        return 0;
    default:
        return ox_infer_fail(c, ONYX_INVALID_MODEL,
                             "%s: output_datatype %lld is not a numeric tensor type", c->node->op_type,
                             (long long)v);
    }
}

static int infer_window(ox_infer_ctx *c) {
    if (need_tensor(c, 0, "size")) return -1;
    ox_dtype dt = ONYX_FLOAT32;
    int64_t periodic;
    if (output_datatype(c, &dt) || check_flag(c, "periodic", 1, &periodic)) return -1;
    int64_t size = -1;
    int known;
    if (scalar_int(c, 0, "size", &size, &known) != 0) return -1;
    if (known && size < 0)
        return ox_infer_fail(c, ox_infer_bad_code(c), "%s: size must be non-negative, got %lld",
                             c->node->op_type, (long long)size);
    int64_t dims[1] = {known ? size : -1};
    return ox_infer_set_output(c, 0, dt, dims, 1);
}

/* ---- MelWeightMatrix ---- */

static int infer_mel(ox_infer_ctx *c) {
    static const char *const NAMES[] = {"num_mel_bins", "dft_length", "sample_rate",
                                        "lower_edge_hertz", "upper_edge_hertz"};
    for (int i = 0; i < 5; i++)
        if (need_tensor(c, i, NAMES[i])) return -1;
    ox_dtype dt = ONYX_FLOAT32;
    if (output_datatype(c, &dt)) return -1;
    int64_t iv[3] = {0, 0, 0};
    int ik[3];
    for (int i = 0; i < 3; i++)
        if (scalar_int(c, i, NAMES[i], &iv[i], &ik[i])) return -1;
    double lo = 0, hi = 0;
    int lk, hk;
    if (scalar_float(c, 3, NAMES[3], &lo, &lk) || scalar_float(c, 4, NAMES[4], &hi, &hk)) return -1;
    for (int i = 0; i < 3; i++)
        if (ik[i] && iv[i] <= 0)
            return ox_infer_fail(c, ox_infer_bad_code(c),
                                 "MelWeightMatrix: %s must be positive, got %lld", NAMES[i],
                                 (long long)iv[i]);
    if (lk && !(lo >= 0))
        return ox_infer_fail(c, ox_infer_bad_code(c),
                             "MelWeightMatrix: lower_edge_hertz must be >= 0, got %g", lo);
    if (lk && hk && !(hi > lo))
        return ox_infer_fail(
            c, ox_infer_bad_code(c),
            "MelWeightMatrix: upper_edge_hertz (%g) must exceed lower_edge_hertz (%g)", hi, lo);
    int64_t dims[2] = {ik[1] ? iv[1] / 2 + 1 : -1, ik[0] ? iv[0] : -1};
    return ox_infer_set_output(c, 0, dt, dims, 2);
}

static const ox_op_schema OPS[] = {
    {"", "DFT", 17, 20, 1, 3, 1, 1, infer_dft},
    {"", "STFT", 17, 17, 2, 4, 1, 1, infer_stft},
    {"", "HannWindow", 17, 17, 1, 1, 1, 1, infer_window},
    {"", "HammingWindow", 17, 17, 1, 1, 1, 1, infer_window},
    {"", "BlackmanWindow", 17, 17, 1, 1, 1, 1, infer_window},
    {"", "MelWeightMatrix", 17, 17, 5, 5, 1, 1, infer_mel},
};

const ox_op_table ox_ops_signal = {OPS, sizeof OPS / sizeof OPS[0]};
