#include "ep/cpu/kernels/broadcast.h"

#include <stdlib.h>
#include <string.h>

int ox_bcast_shape(int n, const int64_t *const dims[], const int ranks[], int64_t *out,
                   int *out_rank, int *bad_axis) {
    int r = 0;
    for (int k = 0; k < n; k++)
        if (ranks[k] > r) r = ranks[k];
    if (r > OX_MAX_RANK) return -1;
    for (int i = 0; i < r; i++) out[i] = 1;
    for (int k = 0; k < n; k++) {
        int lead = r - ranks[k];
        for (int j = 0; j < ranks[k]; j++) {
            int64_t d = dims[k][j];
            int64_t *o = &out[lead + j];
            if (d == *o || d == 1) continue;
            if (*o == 1) {
                *o = d;
                continue;
            }
            if (bad_axis) *bad_axis = lead + j;
            return -1;
        }
    }
    *out_rank = r;
    return 0;
}

int ox_bcast_plan(ox_bcast *b, int n, const int64_t *const dims[], const int ranks[],
                  const int64_t *out_dims, int out_rank) {
    if (n < 1 || n > OX_BCAST_MAX_INPUTS || out_rank < 0 || out_rank > OX_MAX_RANK) return -1;
    memset(b, 0, sizeof *b);
    b->n_in = n;
    int64_t full[OX_BCAST_MAX_INPUTS][OX_MAX_RANK];
    for (int k = 0; k < n; k++) {
        if (ranks[k] < 0 || ranks[k] > out_rank) return -1;
        int lead = out_rank - ranks[k];
        int64_t s = 1;
        for (int i = out_rank - 1; i >= 0; i--) {
            if (i < lead) {
                full[k][i] = 0;
                continue;
            }
            int64_t d = dims[k][i - lead];
            if (d == out_dims[i])
                full[k][i] = d == 1 ? 0 : s;
            else if (d == 1)
                full[k][i] = 0;
            else
                return -1;
            s *= d;
        }
    }
    int64_t numel = 1;
    for (int i = 0; i < out_rank; i++) numel *= out_dims[i];
    b->numel = numel;

    /* Size-1 output dims carry no iteration; a dim merges into the one
     * before it when every input steps through both as one flat run. */
    int r = 0;
    for (int i = 0; i < out_rank; i++) {
        if (out_dims[i] == 1) continue;
        int merge = r > 0;
        for (int k = 0; merge && k < n; k++)
            if (b->strides[k][r - 1] != full[k][i] * out_dims[i]) merge = 0;
        if (merge) {
            b->dims[r - 1] *= out_dims[i];
            for (int k = 0; k < n; k++) b->strides[k][r - 1] = full[k][i];
        } else {
            b->dims[r] = out_dims[i];
            for (int k = 0; k < n; k++) b->strides[k][r] = full[k][i];
            r++;
        }
    }
    if (r == 0) {
        b->dims[0] = 1;
        r = 1;
    }
    b->rank = r;
    return 0;
}

/* Input m's strides over the dims [j, rank) are those of a dense block */
static int dense_from(const ox_bcast *b, int m, int j) {
    int64_t s = 1;
    for (int d = b->rank - 1; d >= j; d--) {
        if (b->strides[m][d] != s) return 0;
        s *= b->dims[d];
    }
    return 1;
}

/* Elements of input k's copy over the inner dims [j, rank): the block
 * times the outer dims along which k changes */
static int64_t wide_elems(const ox_bcast *b, int k, int j, int64_t cap) {
    int64_t n = 1;
    for (int d = 0; d < b->rank && n <= cap; d++)
        if (d >= j || b->strides[k][d] != 0) n *= b->dims[d];
    return n;
}

int ox_bcast_widen_plan(const ox_bcast *b, int64_t cap, ox_bcast_wide *w) {
    const int r = b->rank;
    if (r < 3 || b->dims[r - 1] >= 16) return -1;
    for (int k = 0; k < b->n_in; k++) {
        for (int j = 1; j <= r - 2; j++) {
            int dense = 1;
            for (int m = 0; m < b->n_in && dense; m++)
                if (m != k && !dense_from(b, m, j)) dense = 0;
            const int64_t n = dense ? wide_elems(b, k, j, cap) : cap + 1;
            if (n > cap) continue;
            w->k = k;
            w->j = j;
            w->elems = n;
            return 0;
        }
    }
    return -1;
}

/* The copy's next element: the odometer over dims[0, n), off the source
 * offset (uses dims, src, idx, n) */
#define WIDEN_NEXT(off)                           \
    for (int d_ = n - 1; d_ >= 0; d_--) {         \
        (off) += src[d_];                         \
        if (++idx[d_] < dims[d_]) break;          \
        (off) -= src[d_] * dims[d_];              \
        idx[d_] = 0;                              \
    }
/* The copy in elements of type T, the innermost dim as one loop */
#define WIDEN_COPY(T)                                                               \
    do {                                                                            \
        const T *from_ = data;                                                      \
        T *to_ = buf;                                                               \
        const int64_t len_ = dims[n - 1], step_ = src[n - 1];                       \
        int64_t off_ = 0;                                                           \
        for (int64_t i_ = 0; i_ < w->elems; i_ += len_) {                           \
            for (int64_t t_ = 0; t_ < len_; t_++) to_[i_ + t_] = from_[off_ + t_ * step_]; \
            idx[n - 1] = len_ - 1;                                                  \
            off_ += step_ * (len_ - 1);                                             \
            WIDEN_NEXT(off_)                                                        \
        }                                                                           \
    } while (0)

void ox_bcast_widen(ox_bcast *b, const ox_bcast_wide *w, const void *data, size_t elem, void *buf) {
    const int r = b->rank, k = w->k, j = w->j;
    /* the copy's dims, outermost first: the outer dims along which k
     * changes, then the block; src: k's strides along them */
    int64_t dims[OX_MAX_RANK], src[OX_MAX_RANK], idx[OX_MAX_RANK] = {0};
    int n = 0;
    for (int d = 0; d < r; d++)
        if (d >= j || b->strides[k][d] != 0) {
            dims[n] = b->dims[d];
            src[n++] = b->strides[k][d];
        }
    switch (elem) {
    case 1: WIDEN_COPY(uint8_t); break;
    case 2: WIDEN_COPY(uint16_t); break;
    case 4: WIDEN_COPY(uint32_t); break;
    case 8: WIDEN_COPY(uint64_t); break;
    default: {
        const unsigned char *from = data;
        unsigned char *to = buf;
        int64_t off = 0;
        for (int64_t i = 0; i < w->elems; i++) {
            memcpy(to + (size_t)i * elem, from + (size_t)off * elem, elem);
            WIDEN_NEXT(off);
        }
    }
    }
    /* k's new strides: dense over the copy's dims */
    int64_t block = 1;
    for (int d = j; d < r; d++) block *= b->dims[d];
    int64_t s = block;
    for (int d = j - 1; d >= 0; d--)
        if (b->strides[k][d] != 0) {
            b->strides[k][d] = s;
            s *= b->dims[d];
        }
    b->dims[j] = block;
    for (int m = 0; m < b->n_in; m++) b->strides[m][j] = 1;
    b->rank = j + 1;
}

int ox_bcast_plan_tensors(ox_bcast *b, int n, const ox_tensor *const ins[],
                          const ox_tensor *out) {
    const int64_t *dims[OX_BCAST_MAX_INPUTS];
    int ranks[OX_BCAST_MAX_INPUTS];
    if (n < 1 || n > OX_BCAST_MAX_INPUTS) return -1;
    for (int k = 0; k < n; k++) {
        dims[k] = ins[k]->dims;
        ranks[k] = ins[k]->rank;
    }
    return ox_bcast_plan(b, n, dims, ranks, out->dims, out->rank);
}

void ox_bcast_walk(const ox_bcast *b, int64_t begin, int64_t end, ox_bcast_fn fn, void *arg) {
    if (begin >= end || b->numel == 0) return;
    const int r = b->rank, n = b->n_in;
    const int64_t inner = b->dims[r - 1];
    int64_t idx[OX_MAX_RANK] = {0};
    int64_t off[OX_BCAST_MAX_INPUTS], step[OX_BCAST_MAX_INPUTS];
    int64_t rest = begin / inner, pos = begin % inner;
    for (int d = r - 2; d >= 0; d--) {
        idx[d] = rest % b->dims[d];
        rest /= b->dims[d];
    }
    for (int k = 0; k < n; k++) step[k] = b->strides[k][r - 1];
    int64_t cur = begin;
    while (cur < end) {
        for (int k = 0; k < n; k++) {
            int64_t o = pos * step[k];
            for (int d = 0; d < r - 1; d++) o += idx[d] * b->strides[k][d];
            off[k] = o;
        }
        int64_t len = inner - pos;
        if (len > end - cur) len = end - cur;
        fn(arg, cur, off, step, len);
        cur += len;
        pos = 0;
        for (int d = r - 2; d >= 0; d--) {
            if (++idx[d] < b->dims[d]) break;
            idx[d] = 0;
        }
    }
}

typedef struct bcast_job {
    const ox_bcast *b;
    ox_bcast_fn fn;
    void *arg;
} bcast_job;

static void bcast_range(void *p, int64_t begin, int64_t end) {
    const bcast_job *j = p;
    ox_bcast_walk(j->b, begin, end, j->fn, j->arg);
}

void ox_bcast_run(const ox_bcast *b, ox_threadpool *pool, int64_t grain, ox_bcast_fn fn,
                  void *arg) {
    bcast_job j = {b, fn, arg};
    if (b->numel <= grain || !pool)
        ox_bcast_walk(b, 0, b->numel, fn, arg);
    else
        ox_parallel_for(pool, b->numel, grain, bcast_range, &j);
}

typedef struct copy_ctx {
    const void *x;
    void *y;
    int failed; /* string copies only; those run on one thread */
} copy_ctx;

typedef struct u128_t {
    uint64_t lo, hi;
} u128_t;

#define COPY_FN(T)                                                                        \
    static void copy_##T(void *arg, int64_t oo, const int64_t *io, const int64_t *is,     \
                         int64_t n) {                                                     \
        const copy_ctx *p = arg;                                                          \
        const T *X = (const T *)p->x + io[0];                                             \
        T *Y = (T *)p->y + oo;                                                            \
        if (is[0] == 1) {                                                                 \
            memcpy(Y, X, (size_t)n * sizeof(T));                                          \
        } else if (is[0] == 0) {                                                          \
            const T v = X[0];                                                             \
            for (int64_t i = 0; i < n; i++) Y[i] = v;                                     \
        } else {                                                                          \
            for (int64_t i = 0; i < n; i++) Y[i] = X[i * is[0]];                          \
        }                                                                                 \
    }
COPY_FN(uint8_t)
COPY_FN(uint16_t)
COPY_FN(uint32_t)
COPY_FN(uint64_t)
COPY_FN(u128_t)

static void copy_string(void *arg, int64_t oo, const int64_t *io, const int64_t *is,
                        int64_t n) {
    copy_ctx *p = arg;
    char *const *X = p->x;
    char **Y = p->y;
    for (int64_t i = 0; i < n && !p->failed; i++) {
        const char *s = X[io[0] + i * is[0]];
        char *dup = strdup(s ? s : "");
        if (!dup) {
            p->failed = 1;
            return;
        }
        free(Y[oo + i]);
        Y[oo + i] = dup;
    }
}

int ox_bcast_copy(const ox_tensor *x, ox_tensor *y, ox_threadpool *pool) {
    ox_bcast plan;
    if (x->dtype != y->dtype || ox_bcast_plan_tensors(&plan, 1, &x, y) != 0) return -1;
    copy_ctx ctx = {x->data, y->data, 0};
    if (x->dtype == ONYX_STRING) {
        ox_bcast_walk(&plan, 0, plan.numel, copy_string, &ctx);
        return ctx.failed ? -1 : 0;
    }
    ox_bcast_fn fn;
    switch (ox_dtype_size(x->dtype)) {
    case 1: fn = copy_uint8_t; break;
    case 2: fn = copy_uint16_t; break;
    case 4: fn = copy_uint32_t; break;
    case 8: fn = copy_uint64_t; break;
    case 16: fn = copy_u128_t; break;
    default: return -1;
    }
    ox_bcast_run(&plan, pool, 32768, fn, &ctx);
    return 0;
}
