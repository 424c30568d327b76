/* CPU kernels of If, Loop and Scan. The executor runs the bodies
 * (ctx->run_subgraph) and hands back owned values; these kernels thread
 * loop-carried values from one iteration to the next, slice scan inputs
 * and stack the per-iteration scan outputs. A value is either borrowed
 * (the node's own inputs) or owned by the kernel until it becomes an
 * output, which the `own` flags track. Loop and Scan check between
 * iterations whether the run must stop (a Loop's trip count may be
 * INT64_MAX); the bodies' own nodes are checked by the executor. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_control;

static const ir_graph *body_attr(ox_kernel_ctx *ctx, const char *name) {
    const ir_attr *a = ir_node_attr(ctx->node, name);
    if (!a || !a->g) {
        ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "%s: the '%s' graph attribute is required", ctx->node->op_type, name);
        return NULL;
    }
    if (!ctx->run_subgraph) {
        ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: subgraphs cannot run here", ctx->node->op_type);
        return NULL;
    }
    return a->g;
}

static const ir_type *declared(const ir_graph *g, int value) {
    const ir_value *v = &g->values[value];
    return v->has_type ? &v->type : NULL;
}

static void free_all(ox_tensor **v, int64_t n) {
    for (int64_t i = 0; v && i < n; i++) {
        ox_tensor_free(v[i]);
        v[i] = NULL;
    }
}

/* One element of a condition or trip-count tensor. */
static int read_one(ox_kernel_ctx *ctx, const ox_tensor *t, const char *what, int64_t *out) {
    if (t->kind != OX_KIND_TENSOR || ox_tensor_numel(t) != 1 || t->dtype == ONYX_STRING)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: '%s' must be a tensor of one element",
                              ctx->node->op_type, what);
    if (t->dtype == ONYX_BOOL)
        *out = *(const uint8_t *)t->data != 0;
    else if (ox_dtype_is_float(t->dtype))
        *out = ox_get_f64(t->data, t->dtype, 0) != 0.0;
    else
        *out = ox_get_i64(t->data, t->dtype, 0);
    return 0;
}

/* Writes piece into out as entry `pos` of `npos` along the axis inserted
 * before piece dimension `axis`. */
static int place(ox_kernel_ctx *ctx, ox_tensor *out, const ox_tensor *piece, int axis, int64_t npos, int64_t pos) {
    /* an empty piece copies nothing, and its dims past the zero may
     * multiply past int64; otherwise outer * inner is its element count */
    if (ox_tensor_numel(piece) == 0) return 0;
    int64_t outer = ox_numel(piece->dims, axis), inner = ox_numel(piece->dims + axis, piece->rank - axis);
    for (int64_t o = 0; o < outer; o++)
        if (ox_cpu_copy_elems(ctx, out, (o * npos + pos) * inner, piece, o * inner, inner) != 0)
            return -1;
    return 0;
}

/* The shape of a scan output's element when no iteration ran: the body's
 * declared shape with unknown dimensions taken as 0. */
static void fallback_piece(const ir_graph *g, int out_idx, ox_dtype *dt, int64_t *dims, int *rank) {
    const ir_type *t = declared(g, g->outputs[out_idx]);
    *dt = t && t->dtype != ONYX_UNDEFINED ? t->dtype : ONYX_FLOAT32;
    *rank = t && t->kind == OX_KIND_TENSOR && t->rank >= 0 && t->rank < OX_MAX_RANK - 1 ? t->rank : 0;
    for (int d = 0; d < *rank; d++) dims[d] = t->dims[d] >= 0 ? t->dims[d] : 0;
}

static int same_piece(const ox_tensor *a, const ox_tensor *b) {
    return a->kind == OX_KIND_TENSOR && b->kind == OX_KIND_TENSOR && a->dtype == b->dtype &&
           ox_shape_equal(a->dims, a->rank, b->dims, b->rank);
}

/* Stacks pieces[0..count) into output `oi` along a new axis `axis`
 * (normalised against the output rank); `reverse` puts the first piece
 * last. Consumes nothing. */
static int stack_output(ox_kernel_ctx *ctx, const ir_graph *g, int body_out, int oi, ox_tensor *const *pieces,
                        int64_t count, int64_t axis, int reverse) {
    if (ctx->node->outputs[oi] < 0) return 0;
    ox_dtype dt;
    int64_t pdims[OX_MAX_RANK];
    int prank;
    if (count > 0) {
        dt = pieces[0]->dtype;
        prank = pieces[0]->rank;
        memcpy(pdims, pieces[0]->dims, sizeof pdims);
        for (int64_t t = 1; t < count; t++)
            if (!same_piece(pieces[t], pieces[0])) {
                char a[160], b[160];
                return ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR,
                                      "%s: scan output %d changes from %s %s to %s %s at iteration %" PRId64,
                                      ctx->node->op_type, oi, ox_dtype_name(dt),
                                      ox_shape_str(pdims, prank, a, sizeof a), ox_dtype_name(pieces[t]->dtype),
                                      ox_shape_str(pieces[t]->dims, pieces[t]->rank, b, sizeof b), t);
            }
    } else {
        fallback_piece(g, body_out, &dt, pdims, &prank);
    }
    if (prank + 1 > OX_MAX_RANK)
        return ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "%s: scan output rank %d exceeds onyx's limit of %d",
                              ctx->node->op_type, prank + 1, OX_MAX_RANK);
    if (axis < -(prank + 1) || axis > prank)
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "%s: scan output axis %" PRId64 " is out of range for rank %d",
                              ctx->node->op_type, axis, prank + 1);
    if (axis < 0) axis += prank + 1;
    int64_t dims[OX_MAX_RANK];
    for (int d = 0, s = 0; d <= prank; d++) dims[d] = d == axis ? count : pdims[s++];
    ox_tensor *out = ox_kernel_output(ctx, oi, dt, dims, prank + 1);
    if (!out) return -1;
    for (int64_t t = 0; t < count; t++)
        if (place(ctx, out, pieces[t], (int)axis, count, reverse ? count - 1 - t : t) != 0) return -1;
    return 0;
}

/* Hands value over as output i, copying it first when it is borrowed. */
static int emit(ox_kernel_ctx *ctx, int i, ox_tensor *value, int owned) {
    if (ctx->node->outputs[i] < 0) {
        if (owned) ox_tensor_free(value);
        return 0;
    }
    if (!owned) {
        value = ox_tensor_clone(value, ctx->err);
        if (!value) return -1;
    }
    return ox_kernel_set_output(ctx, i, value);
}

/* Hands the n state values over as outputs 0..n-1, leaving values and
 * own cleared; after a failure the remaining owned values are freed. */
static int emit_states(ox_kernel_ctx *ctx, ox_tensor **values, unsigned char *own, int n) {
    int rc = 0;
    for (int i = 0; i < n; i++) {
        ox_tensor *v = values[i];
        int o = own[i];
        values[i] = NULL;
        own[i] = 0;
        if (rc == 0)
            rc = emit(ctx, i, v, o);
        else if (o)
            ox_tensor_free(v);
    }
    return rc;
}

/* ---- If ---- */

static int k_if(ox_kernel_ctx *ctx) {
    int64_t cond;
    if (!ctx->inputs[0]) return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "If: 'cond' is required");
    if (read_one(ctx, ctx->inputs[0], "cond", &cond) != 0) return -1;
    const ir_graph *g = body_attr(ctx, cond ? "then_branch" : "else_branch");
    if (!g) return -1;
    int n = ctx->n_outputs;
    ox_tensor **res = calloc((size_t)n + 1, sizeof *res);
    if (!res) return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = ctx->run_subgraph(ctx, g, NULL, 0, res, n);
    for (int i = 0; i < n; i++) {
        ox_tensor *v = res[i];
        res[i] = NULL;
        if (rc == 0)
            rc = emit(ctx, i, v, 1);
        else
            ox_tensor_free(v);
    }
    free(res);
    return rc;
}

/* Calloc'ed array of a * b * c value slots (plus one), *n set to the
 * count; fails naming `what` when the count overflows int64. */
static ox_tensor **slot_array(ox_kernel_ctx *ctx, int64_t a, int64_t b, int64_t c, const char *what, int64_t *n) {
    if (!ox_mul_i64(a, b, n) || !ox_mul_i64(*n, c, n)) {
        ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                       "%s: %s overflows int64 (%" PRId64 " * %" PRId64 " * %" PRId64 ")", ctx->node->op_type, what,
                       a, b, c);
        return NULL;
    }
    size_t bytes;
    ox_tensor **v = ox_mul_size((size_t)*n + 1, sizeof *v, &bytes) ? calloc((size_t)*n + 1, sizeof *v) : NULL;
    if (!v) ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
    return v;
}

/* ---- Loop ---- */

/* Growable list of one scan output's per-iteration values. */
typedef struct piece_list {
    ox_tensor **v;
    int64_t n, cap;
} piece_list;

static int piece_push(ox_kernel_ctx *ctx, piece_list *l, ox_tensor *t) {
    if (l->n == l->cap) {
        int64_t cap = 16;
        size_t bytes = 0;
        ox_tensor **v = NULL;
        if ((!l->cap || ox_mul_i64(l->cap, 2, &cap)) && ox_mul_size((size_t)cap, sizeof *v, &bytes))
            v = realloc(l->v, bytes);
        if (!v) {
            ox_tensor_free(t);
            return ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = t;
    return 0;
}

static void piece_free(piece_list *l) {
    if (!l->v) return;
    free_all(l->v, l->n);
    free(l->v);
    l->v = NULL;
    l->n = l->cap = 0;
}

/* A bool or int64 scalar shaped like the body declares its input: some
 * exporters declare [1] rather than a scalar. */
static ox_tensor *counter(ox_kernel_ctx *ctx, const ir_graph *g, int in_idx, ox_dtype dt) {
    const ir_type *t = declared(g, g->inputs[in_idx]);
    int64_t one = 1;
    int rank = t && t->kind == OX_KIND_TENSOR && t->rank == 1 ? 1 : 0;
    return ox_tensor_new(dt, &one, rank, ctx->err);
}

static int k_loop(ox_kernel_ctx *ctx) {
    const ir_graph *g = body_attr(ctx, "body");
    if (!g) return -1;
    int n = ctx->n_inputs - 2, k = ctx->n_outputs - n;
    if (n < 0 || k < 0 || g->n_inputs != 2 + n || g->n_outputs != 1 + n + k)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "Loop: the body does not match the node's inputs and outputs");
    int64_t trips = INT64_MAX, cond = 1;
    const ox_tensor *mt = ctx->inputs[0], *ct = ctx->inputs[1];
    if (mt && read_one(ctx, mt, "M", &trips) != 0) return -1;
    if (ct && read_one(ctx, ct, "cond", &cond) != 0) return -1;
    for (int i = 0; i < n; i++)
        if (!ctx->inputs[2 + i])
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Loop: loop-carried input %d has no value", i);

    int rc = -1;
    int n_args = 2 + n, n_res = 1 + n + k;
    ox_tensor **args = calloc((size_t)n_args, sizeof *args);
    ox_tensor **res = calloc((size_t)n_res, sizeof *res);
    ox_tensor **carried = calloc((size_t)n + 1, sizeof *carried);
    unsigned char *own = calloc((size_t)n + 1, 1);
    piece_list *scans = calloc((size_t)k + 1, sizeof *scans);
    ox_tensor *iter = counter(ctx, g, 0, ONYX_INT64);
    ox_tensor *flag = iter ? counter(ctx, g, 1, ONYX_BOOL) : NULL;
    if (!args || !res || !carried || !own || !scans) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    if (!iter || !flag) goto done;
    for (int i = 0; i < n; i++) carried[i] = ctx->inputs[2 + i];
    for (int64_t it = 0; it < trips && cond; it++) {
        ox_kernel_set_iteration(ctx, it);
        if (ox_kernel_should_stop(ctx)) goto done;
        *(int64_t *)iter->data = it;
        *(uint8_t *)flag->data = (uint8_t)(cond != 0);
        args[0] = iter;
        args[1] = flag;
        for (int i = 0; i < n; i++) args[2 + i] = carried[i];
        if (ctx->run_subgraph(ctx, g, args, n_args, res, n_res) != 0) goto done;
        /* The spec's table calls the body's condition ignored when the
         * cond input is omitted, but ONNX Runtime and the ONNX reference
         * implementation stop on it in every mode; models are validated
         * against those, so onyx does the same. */
        int r = read_one(ctx, res[0], "cond (body output)", &cond);
        ox_tensor_free(res[0]);
        res[0] = NULL;
        for (int i = 0; i < n; i++) {
            if (own[i]) ox_tensor_free(carried[i]);
            carried[i] = res[1 + i];
            own[i] = 1;
            res[1 + i] = NULL;
        }
        for (int j = 0; j < k; j++) {
            ox_tensor *p = res[1 + n + j];
            res[1 + n + j] = NULL;
            if (r == 0 && p->kind != OX_KIND_TENSOR) {
                ox_tensor_free(p);
                r = ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "Loop: scan output %d must be a tensor", j);
                continue;
            }
            if (r == 0)
                r = piece_push(ctx, &scans[j], p);
            else
                ox_tensor_free(p);
        }
        if (r != 0) goto done;
    }
    ox_kernel_set_iteration(ctx, -1);
    for (int j = 0; j < k; j++)
        if (stack_output(ctx, g, 1 + n + j, n + j, scans[j].v, scans[j].n, 0, 0) != 0) goto done;
    rc = emit_states(ctx, carried, own, n);
done:
    for (int i = 0; carried && own && i < n; i++)
        if (own[i]) ox_tensor_free(carried[i]);
    free_all(res, n_res);
    for (int j = 0; scans && j < k; j++) piece_free(&scans[j]);
    ox_tensor_free(iter);
    ox_tensor_free(flag);
    free(args);
    free(res);
    free(carried);
    free(own);
    free(scans);
    return rc;
}

/* ---- Scan ---- */

/* One scan over `len` steps: states start from init[] (borrowed) and end
 * in st[] (own[] says which are owned); scan input j is sliced along
 * axes[j], reversed when dirs[j]; each body scan output lands in
 * pieces[j * len + t]. */
typedef struct scan_job {
    const ir_graph *g;
    int n, m, k;
    const ox_tensor *const *scan_in;
    const int *axes;
    const int *dirs;
    int64_t len;
    ox_tensor **st;
    unsigned char *own;
    ox_tensor **pieces;
} scan_job;

static int scan_run(ox_kernel_ctx *ctx, scan_job *j) {
    int n = j->n, m = j->m, k = j->k;
    int rc = -1;
    ox_tensor **args = calloc((size_t)(n + m) + 1, sizeof *args);
    ox_tensor **res = calloc((size_t)(n + k) + 1, sizeof *res);
    ox_tensor **slices = calloc((size_t)m + 1, sizeof *slices);
    if (!args || !res || !slices) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int64_t t = 0; t < j->len; t++) {
        ox_kernel_set_iteration(ctx, t);
        if (ox_kernel_should_stop(ctx)) goto done;
        for (int s = 0; s < m; s++) {
            int64_t idx = j->dirs[s] ? j->len - 1 - t : t;
            slices[s] = ox_cpu_slab(ctx, j->scan_in[s], j->axes[s], idx, 1, 0);
            if (!slices[s]) goto done;
        }
        for (int i = 0; i < n; i++) args[i] = j->st[i];
        for (int s = 0; s < m; s++) args[n + s] = slices[s];
        int r = ctx->run_subgraph(ctx, j->g, args, n + m, res, n + k);
        free_all(slices, m);
        if (r != 0) goto done;
        for (int i = 0; i < n; i++) {
            if (j->own[i]) ox_tensor_free(j->st[i]);
            j->st[i] = res[i];
            j->own[i] = 1;
            res[i] = NULL;
        }
        for (int q = 0; q < k; q++) {
            j->pieces[(int64_t)q * j->len + t] = res[n + q];
            res[n + q] = NULL;
            if (j->pieces[(int64_t)q * j->len + t]->kind != OX_KIND_TENSOR) {
                ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "Scan: scan output %d must be a tensor", q);
                goto done;
            }
        }
    }
    rc = 0;
done:
    ox_kernel_set_iteration(ctx, -1);
    if (slices) free_all(slices, m);
    if (res) free_all(res, n + k);
    free(args);
    free(res);
    free(slices);
    return rc;
}

/* Scan from opset 9: no batch axis, per-input axes and directions. */
static int scan9(ox_kernel_ctx *ctx, const ir_graph *g, int n, int m, int k) {
    const ox_tensor *const *scan_in = (const ox_tensor *const *)ctx->inputs + n;
    size_t cnt = 0;
    const int64_t *ia = ir_attr_ints(ctx->node, "scan_input_axes", &cnt);
    if (ia && cnt != (size_t)m) ia = NULL;
    const int64_t *id = ir_attr_ints(ctx->node, "scan_input_directions", &cnt);
    if (id && cnt != (size_t)m) id = NULL;
    const int64_t *oa = ir_attr_ints(ctx->node, "scan_output_axes", &cnt);
    if (oa && cnt != (size_t)k) oa = NULL;
    const int64_t *od = ir_attr_ints(ctx->node, "scan_output_directions", &cnt);
    if (od && cnt != (size_t)k) od = NULL;
    int rc = -1;
    int *axes = calloc((size_t)m + 1, sizeof *axes);
    int *dirs = calloc((size_t)m + 1, sizeof *dirs);
    ox_tensor **st = calloc((size_t)n + 1, sizeof *st);
    unsigned char *own = calloc((size_t)n + 1, 1);
    ox_tensor **pieces = NULL;
    int64_t len = -1, n_pieces = 0;
    if (!axes || !dirs || !st || !own) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int s = 0; s < m; s++) {
        const ox_tensor *x = scan_in[s];
        if (!x || x->kind != OX_KIND_TENSOR || x->rank < 1) {
            ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Scan: scan input %d must be a tensor of rank >= 1", s);
            goto done;
        }
        int64_t a = ia ? ia[s] : 0;
        if (a < -x->rank || a >= x->rank) {
            ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Scan: axis %" PRId64 " of scan input %d is out of range for rank %d",
                           a, s, x->rank);
            goto done;
        }
        axes[s] = (int)(a < 0 ? a + x->rank : a);
        dirs[s] = id ? id[s] != 0 : 0;
        if (len >= 0 && x->dims[axes[s]] != len) {
            ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                           "Scan: scan input %d has sequence length %" PRId64 " but scan input 0 has %" PRId64, s,
                           x->dims[axes[s]], len);
            goto done;
        }
        len = x->dims[axes[s]];
    }
    for (int i = 0; i < n; i++) {
        if (!ctx->inputs[i]) {
            ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT, "Scan: state input %d has no value", i);
            goto done;
        }
        st[i] = ctx->inputs[i];
    }
    pieces = slot_array(ctx, k, len, 1, "the scan outputs times the sequence length", &n_pieces);
    if (!pieces) goto done;
    scan_job job = {g, n, m, k, scan_in, axes, dirs, len, st, own, pieces};
    if (scan_run(ctx, &job) != 0) goto done;
    for (int q = 0; q < k; q++)
        if (stack_output(ctx, g, n + q, n + q, pieces + (int64_t)q * len, len, oa ? oa[q] : 0, od ? od[q] != 0 : 0) != 0)
            goto done;
    rc = emit_states(ctx, st, own, n);
done:
    for (int i = 0; st && own && i < n; i++)
        if (own[i]) ox_tensor_free(st[i]);
    if (pieces) free_all(pieces, n_pieces);
    free(pieces);
    free(axes);
    free(dirs);
    free(st);
    free(own);
    return rc;
}

/* Scan of opset 8: axis 0 of every input is a batch, axis 1 of the scan
 * inputs is time; each batch entry runs its own scan of
 * sequence_lens[b] steps and short scan outputs are zero-padded. */
static int scan8(ox_kernel_ctx *ctx, const ir_graph *g, int n, int m, int k) {
    const ox_tensor *lens = ctx->inputs[0];
    const ox_tensor *const *states = (const ox_tensor *const *)ctx->inputs + 1;
    const ox_tensor *const *scan_in = (const ox_tensor *const *)ctx->inputs + 1 + n;
    size_t cnt = 0;
    const int64_t *id = ir_attr_ints(ctx->node, "directions", &cnt);
    if (id && cnt != (size_t)m) id = NULL;
    int64_t batch = -1, tmax = -1;
    for (int s = 0; s < m; s++) {
        const ox_tensor *x = scan_in[s];
        if (!x || x->kind != OX_KIND_TENSOR || x->rank < 2)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Scan: scan input %d must be a tensor of rank >= 2 [batch, sequence, ...]", s);
        if ((batch >= 0 && x->dims[0] != batch) || (tmax >= 0 && x->dims[1] != tmax))
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Scan: scan inputs must agree on batch size and sequence length");
        batch = x->dims[0];
        tmax = x->dims[1];
    }
    for (int i = 0; i < n; i++) {
        const ox_tensor *x = states[i];
        if (!x || x->kind != OX_KIND_TENSOR || x->rank < 1 || x->dims[0] != batch)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Scan: state input %d must be a tensor whose first axis is the batch (%" PRId64 ")",
                                  i, batch);
    }
    if (lens && (lens->kind != OX_KIND_TENSOR || !ox_dtype_is_integer(lens->dtype) ||
                 ox_tensor_numel(lens) != batch))
        return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                              "Scan: 'sequence_lens' must be an integer tensor of %" PRId64 " entries", batch);
    for (int64_t b = 0; lens && b < batch; b++) {
        int64_t l = ox_get_i64(lens->data, lens->dtype, (size_t)b);
        if (l < 0 || l > tmax)
            return ox_kernel_fail(ctx, ONYX_INVALID_ARGUMENT,
                                  "Scan: sequence_lens[%" PRId64 "] = %" PRId64 " is outside 0..%" PRId64, b, l, tmax);
    }
    int rc = -1;
    int *axes = calloc((size_t)m + 1, sizeof *axes);
    int *dirs = calloc((size_t)m + 1, sizeof *dirs);
    ox_tensor **bin = calloc((size_t)m + 1, sizeof *bin);     /* this batch's scan inputs */
    ox_tensor **binit = calloc((size_t)n + 1, sizeof *binit); /* this batch's initial states */
    ox_tensor **st = calloc((size_t)n + 1, sizeof *st);
    unsigned char *own = calloc((size_t)n + 1, 1);
    ox_tensor **finals = NULL, **pieces = NULL;
    int64_t n_finals = 0, n_pieces = 0;
    if (!axes || !dirs || !bin || !binit || !st || !own) {
        ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    finals = slot_array(ctx, n, batch, 1, "the states times the batch size", &n_finals);
    if (!finals) goto done;
    pieces = slot_array(ctx, k, batch, tmax, "the scan outputs times the batch size and sequence length", &n_pieces);
    if (!pieces) goto done;
    for (int s = 0; s < m; s++) dirs[s] = id ? id[s] != 0 : 0;
    for (int64_t b = 0; b < batch; b++) {
        int64_t len = lens ? ox_get_i64(lens->data, lens->dtype, (size_t)b) : tmax;
        for (int s = 0; s < m; s++) {
            bin[s] = ox_cpu_slab(ctx, scan_in[s], 0, b, 1, 0);
            if (!bin[s]) goto done;
        }
        for (int i = 0; i < n; i++) {
            binit[i] = ox_cpu_slab(ctx, states[i], 0, b, 1, 0);
            if (!binit[i]) goto done;
            st[i] = binit[i];
            own[i] = 0;
        }
        /* pieces of this batch go to slots [q][b][t] via a scratch row. */
        ox_tensor **row = calloc((size_t)(k * len) + 1, sizeof *row);
        if (!row) {
            ox_kernel_fail(ctx, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        scan_job job = {g, n, m, k, (const ox_tensor *const *)bin, axes, dirs, len, st, own, row};
        int r = scan_run(ctx, &job);
        for (int q = 0; q < k; q++)
            for (int64_t t = 0; t < len; t++) pieces[((int64_t)q * batch + b) * tmax + t] = row[(int64_t)q * len + t];
        free(row);
        for (int i = 0; i < n; i++) {
            finals[(int64_t)i * batch + b] = own[i] ? st[i] : ox_tensor_clone(st[i], ctx->err);
            own[i] = 0;
            st[i] = NULL;
            if (!finals[(int64_t)i * batch + b]) r = -1;
        }
        free_all(bin, m);
        free_all(binit, n);
        if (r != 0) goto done;
    }
    /* Final states stack the per-batch states on axis 0. */
    for (int i = 0; i < n; i++) {
        if (ctx->node->outputs[i] < 0) continue;
        ox_tensor *const *f = finals + (int64_t)i * batch;
        int64_t dims[OX_MAX_RANK];
        int rank = states[i]->rank;
        memcpy(dims, states[i]->dims, sizeof dims);
        for (int64_t b = 0; b < batch; b++)
            if (f[b]->kind != OX_KIND_TENSOR || f[b]->dtype != states[i]->dtype || f[b]->rank != rank - 1 ||
                !ox_shape_equal(f[b]->dims, f[b]->rank, dims + 1, rank - 1)) {
                ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Scan: state %d changed its type or shape", i);
                goto done;
            }
        ox_tensor *out = ox_kernel_output(ctx, i, states[i]->dtype, dims, rank);
        if (!out) goto done;
        for (int64_t b = 0; b < batch; b++)
            if (place(ctx, out, f[b], 0, batch, b) != 0) goto done;
    }
    /* Scan outputs are [batch, tmax, ...]; steps past a batch's length
     * stay zero. */
    for (int q = 0; q < k; q++) {
        int oi = n + q;
        if (ctx->node->outputs[oi] < 0) continue;
        ox_tensor *const *pq = pieces + (int64_t)q * batch * tmax;
        const ox_tensor *ref = NULL;
        for (int64_t x = 0; x < batch * tmax && !ref; x++) ref = pq[x];
        ox_dtype dt;
        int64_t dims[OX_MAX_RANK];
        int prank;
        if (ref) {
            dt = ref->dtype;
            prank = ref->rank;
            memcpy(dims + 2, ref->dims, (size_t)prank * sizeof *dims);
        } else {
            fallback_piece(g, n + q, &dt, dims + 2, &prank);
        }
        if (prank + 2 > OX_MAX_RANK) {
            ox_kernel_fail(ctx, ONYX_NOT_IMPLEMENTED, "Scan: scan output rank exceeds onyx's limit");
            goto done;
        }
        for (int64_t x = 0; x < batch * tmax; x++)
            if (pq[x] && !same_piece(pq[x], ref)) {
                ox_kernel_fail(ctx, ONYX_RUNTIME_ERROR, "Scan: scan output %d changes type or shape between iterations", q);
                goto done;
            }
        dims[0] = batch;
        dims[1] = tmax;
        ox_tensor *out = ox_kernel_output(ctx, oi, dt, dims, prank + 2);
        if (!out) goto done;
        if (dt != ONYX_STRING && out->nbytes) memset(out->data, 0, out->nbytes);
        for (int64_t x = 0; x < batch * tmax; x++)
            if (pq[x] && place(ctx, out, pq[x], 0, batch * tmax, x) != 0) goto done;
    }
    rc = 0;
done:
    if (bin) free_all(bin, m);
    if (binit) free_all(binit, n);
    for (int i = 0; st && own && i < n; i++)
        if (own[i]) ox_tensor_free(st[i]);
    if (finals) free_all(finals, n_finals);
    if (pieces) free_all(pieces, n_pieces);
    free(axes);
    free(dirs);
    free(bin);
    free(binit);
    free(st);
    free(own);
    free(finals);
    free(pieces);
    return rc;
}

static int k_scan(ox_kernel_ctx *ctx) {
    const ir_graph *g = body_attr(ctx, "body");
    if (!g) return -1;
    int v8 = ctx->node->opset < 9;
    int64_t m = ir_attr_int(ctx->node, "num_scan_inputs", -1);
    int64_t n = ctx->n_inputs - v8 - m, k = ctx->n_outputs - n;
    if (m < 1 || n < 0 || k < 0 || g->n_inputs != n + m || g->n_outputs != n + k)
        return ox_kernel_fail(ctx, ONYX_INVALID_MODEL, "Scan: the body does not match the node's inputs and outputs");
    return v8 ? scan8(ctx, g, (int)n, (int)m, (int)k) : scan9(ctx, g, (int)n, (int)m, (int)k);
}

static const ox_kernel_def KERNELS[] = {
    {"", "If", 1, 25, k_if, NULL, NULL, NULL, NULL},
    {"", "Loop", 1, 25, k_loop, NULL, NULL, NULL, NULL},
    {"", "Scan", 8, 25, k_scan, NULL, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_control = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
