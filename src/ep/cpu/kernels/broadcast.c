#include "ep/cpu/kernels/broadcast.h"

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

void ox_contiguous_strides(const int64_t *dims, int rank, int64_t *strides) {
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}
