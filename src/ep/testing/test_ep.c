#include "ep/testing/test_ep.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Device memory is host memory that the provider keeps a list of;
 * kernels and copies refuse pointers not on it, so a host tensor reaching
 * a device kernel (or a device one reaching the host) is an error, as it
 * would be on real hardware. A list, not a header before each block: a
 * host pointer must be checkable without reading memory it does not own. */
typedef struct device_block {
    void *data;
    size_t size;
    int arena;   /* an arena: views point inside it (arena_view) */
    int pending; /* recorded work that writes it and has not run yet */
    struct device_block *next;
} device_block;

typedef struct test_ep {
    ox_ep base;
    atomic_long to_host, from_host, runs, live, streams_begun, streams_ended, flushes, submits,
        arenas, views, ordered_uploads;
    char light[128]; /* ",Op,Op," from the light option: operators not worth placing alone */
    pthread_mutex_t lock;
    device_block *blocks;
} test_ep;

/* Deferred execution, as a real device does it: within a run, kernels
 * only record what to compute, and the work runs when the stream is
 * flushed (a copy to the host, the run's end). Tensor headers are copied
 * into the record; the memory they point at must stay valid until the
 * flush, so the stream frees blocks only after it. An executor that reads
 * a result before the flush, or frees memory recorded work still needs,
 * gets wrong values or a use-after-free that the tests and ASan catch. */
enum { OP_ADD, OP_MUL, OP_RELU, OP_COPY };
typedef struct recorded_op {
    int op;
    ox_tensor a, b, y;
} recorded_op;

typedef struct test_stream {
    recorded_op *ops;
    int n_ops, cap_ops;
    void **frees; /* blocks freed by the run, released at the flush */
    int n_frees, cap_frees;
} test_stream;

/* The block p is in: a block's start, or any byte of an arena (its
 * views). Under the lock. */
static device_block *find_block(test_ep *t, const void *p) {
    for (device_block *b = t->blocks; b; b = b->next) {
        if (b->data == p) return b;
        const char *c = p, *d = b->data;
        if (b->arena && c >= d && c < d + b->size) return b;
    }
    return NULL;
}

static int on_device(ox_ep *ep, const void *p) {
    test_ep *t = (test_ep *)ep;
    pthread_mutex_lock(&t->lock);
    int found = find_block(t, p) != NULL;
    pthread_mutex_unlock(&t->lock);
    return found;
}

static void t_release(ox_ep *ep, void *ptr);

static int float_only(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    for (int i = 0; i < n; i++)
        if (!in[i] || in[i]->kind != OX_KIND_TENSOR || in[i]->dtype != ONYX_FLOAT32) return 0;
    return n > 0;
}

static int check_device(ox_kernel_ctx *c) {
    for (int i = 0; i < c->n_inputs; i++)
        if (c->inputs[i] && !on_device(c->ep, c->inputs[i]->data))
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "test device: input %d is not in device memory", i);
    if (!on_device(c->ep, c->outputs[0]->data))
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "test device: output is not in device memory");
    return 0;
}

/* Offset of output element `i` into an input broadcast to out's shape. */
static int64_t bcast_index(const ox_tensor *in, const ox_tensor *out, int64_t i) {
    int64_t idx = 0, stride = 1;
    for (int d = out->rank - 1, di = in->rank - 1; d >= 0; d--, di--) {
        int64_t coord = i % out->dims[d];
        i /= out->dims[d];
        if (di < 0) continue;
        if (in->dims[di] != 1) idx += coord * stride;
        stride *= in->dims[di];
    }
    return idx;
}

static void run_op(const recorded_op *r) {
    const ox_tensor *a = &r->a, *b = &r->b, *y = &r->y;
    int64_t n = ox_tensor_numel(y);
    float *py = y->data;
    const float *pa = a->data, *pb = b->data;
    if (r->op == OP_COPY) {
        if (y->nbytes) memcpy(y->data, a->data, y->nbytes);
    } else if (r->op == OP_RELU) {
        for (int64_t i = 0; i < n; i++) py[i] = pa[i] > 0.0f ? pa[i] : 0.0f;
    } else {
        for (int64_t i = 0; i < n; i++) {
            float x0 = pa[bcast_index(a, y, i)], x1 = pb[bcast_index(b, y, i)];
            py[i] = r->op == OP_MUL ? x0 * x1 : x0 + x1;
        }
    }
}

/* Records the op into the run's stream; every kernel here runs in a run
 * (the partitioner never hands constant folding to a device provider). */
static int record(ox_kernel_ctx *c, int op, const ox_tensor *a, const ox_tensor *b, ox_tensor *y) {
    test_ep *t = (test_ep *)c->ep;
    test_stream *s = c->stream;
    if (!s) return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "test device: kernel called without the run's stream");
    if (s->n_ops == s->cap_ops) {
        int ncap = s->cap_ops ? s->cap_ops * 2 : 16;
        recorded_op *no = realloc(s->ops, (size_t)ncap * sizeof *no);
        if (!no) return ox_kernel_fail(c, ONYX_OUT_OF_MEMORY, "out of memory");
        s->ops = no;
        s->cap_ops = ncap;
    }
    recorded_op *r = &s->ops[s->n_ops++];
    memset(r, 0, sizeof *r);
    r->op = op;
    r->a = *a;
    if (b) r->b = *b;
    r->y = *y;
    pthread_mutex_lock(&t->lock);
    device_block *blk = find_block(t, y->data);
    if (blk) blk->pending++;
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_add(&t->runs, 1);
    return 0;
}

/* Runs what the stream recorded, then frees what the run freed. */
static void flush(test_ep *t, test_stream *s) {
    for (int i = 0; i < s->n_ops; i++) run_op(&s->ops[i]);
    pthread_mutex_lock(&t->lock);
    for (int i = 0; i < s->n_ops; i++) {
        device_block *blk = find_block(t, s->ops[i].y.data);
        if (blk) blk->pending--;
    }
    pthread_mutex_unlock(&t->lock);
    if (s->n_ops) atomic_fetch_add(&t->submits, 1);
    s->n_ops = 0;
    atomic_fetch_add(&t->flushes, 1);
    for (int i = 0; i < s->n_frees; i++) t_release(&t->base, s->frees[i]);
    s->n_frees = 0;
}

static int binary(ox_kernel_ctx *c, int mul) {
    if (check_device(c) != 0) return -1;
    return record(c, mul ? OP_MUL : OP_ADD, c->inputs[0], c->inputs[1], c->outputs[0]);
}

static int k_add(ox_kernel_ctx *c) { return binary(c, 0); }
static int k_mul(ox_kernel_ctx *c) { return binary(c, 1); }

static int k_relu(ox_kernel_ctx *c) {
    if (check_device(c) != 0) return -1;
    return record(c, OP_RELU, c->inputs[0], NULL, c->outputs[0]);
}

/* Reshape reads its shape on the host (host_inputs), as a real device
 * provider must: the executor infers the output shape from those values
 * before the kernel runs. The data moves device to device. */
static int k_reshape(ox_kernel_ctx *c) {
    if (!on_device(c->ep, c->inputs[0]->data) || !on_device(c->ep, c->outputs[0]->data))
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "test device: Reshape data is not in device memory");
    if (on_device(c->ep, c->inputs[1]->data))
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "test device: Reshape's shape was copied to the device");
    return record(c, OP_COPY, c->inputs[0], NULL, c->outputs[0]);
}

static int reshape_types(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 2 && in[0] && in[0]->kind == OX_KIND_TENSOR && in[0]->dtype == ONYX_FLOAT32 && in[1] &&
           in[1]->dtype == ONYX_INT64;
}

static const ox_kernel_def KERNELS[] = {
    {"", "Add", 7, 17, k_add, float_only, NULL, NULL, NULL},
    {"", "Mul", 7, 17, k_mul, float_only, NULL, NULL, NULL},
    {"", "Relu", 6, 17, k_relu, float_only, NULL, NULL, NULL},
    {"", "Reshape", 5, 17, k_reshape, reshape_types, NULL, NULL, NULL},
};
static const ox_kernel_table TABLE = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};

static const ox_kernel_def *t_find(ox_ep *ep, const ir_node *node) {
    (void)ep;
    return ox_kernel_lookup(&TABLE, 1, node);
}

static uint32_t t_host_inputs(ox_ep *ep, const ir_node *node) {
    (void)ep;
    return strcmp(node->op_type, "Reshape") == 0 ? 1u << 1 : 0;
}

static int t_supports(ox_ep *ep, const ir_node *node, const ir_type *const *in, int n) {
    const ox_kernel_def *k = t_find(ep, node);
    return k && k->supports(node, in, n);
}

static void *new_block(test_ep *t, size_t bytes, int arena) {
    device_block *b = calloc(1, sizeof *b);
    void *p = malloc(bytes ? bytes : 1);
    if (!b || !p) {
        free(b);
        free(p);
        return NULL;
    }
    b->data = p;
    b->size = bytes;
    b->arena = arena;
    pthread_mutex_lock(&t->lock);
    b->next = t->blocks;
    t->blocks = b;
    pthread_mutex_unlock(&t->lock);
    atomic_fetch_add(&t->live, 1);
    return p;
}

static void *t_alloc(ox_ep *ep, void *stream, size_t bytes) {
    (void)stream; /* never reused within a run: every block is fresh */
    return new_block((test_ep *)ep, bytes, 0);
}

/* Arenas: one block, views at the planned offsets. The offsets must be
 * multiples of TEST_ARENA_ALIGN (above the host arena's 64, so the
 * planner's rounding for a device is exercised): the view of a misaligned
 * one is NULL and the run allocates that slot on its own, which the
 * stats tell (views counts the good ones). */
#define TEST_ARENA_ALIGN 256

static void *t_arena_new(ox_ep *ep, void *stream, size_t bytes, ox_error *err) {
    (void)stream; /* it keeps nothing between runs */
    test_ep *t = (test_ep *)ep;
    void *p = new_block(t, bytes, 1);
    if (!p) ox_fail(err, ONYX_OUT_OF_MEMORY, "test device: out of memory for a %zu-byte arena", bytes);
    else atomic_fetch_add(&t->arenas, 1);
    return p;
}

static void *t_arena_view(ox_ep *ep, void *arena, size_t offset, size_t bytes, void *storage) {
    (void)storage;
    test_ep *t = (test_ep *)ep;
    pthread_mutex_lock(&t->lock);
    device_block *b = find_block(t, arena);
    int ok = b && b->data == arena && b->arena && offset % TEST_ARENA_ALIGN == 0 &&
             offset <= b->size && bytes <= b->size - offset;
    pthread_mutex_unlock(&t->lock);
    if (!ok) return NULL;
    atomic_fetch_add(&t->views, 1);
    return (char *)arena + offset;
}

static size_t t_arena_align(ox_ep *ep) {
    (void)ep;
    return TEST_ARENA_ALIGN;
}

static void t_release(ox_ep *ep, void *ptr) {
    test_ep *t = (test_ep *)ep;
    device_block *gone = NULL;
    pthread_mutex_lock(&t->lock);
    for (device_block **b = &t->blocks; *b; b = &(*b)->next)
        if ((*b)->data == ptr) {
            gone = *b;
            *b = gone->next;
            break;
        }
    pthread_mutex_unlock(&t->lock);
    if (!gone) return; /* not ours: leave it alone rather than free a stranger's block */
    free(gone->data);
    free(gone);
    atomic_fetch_sub(&t->live, 1);
}

/* Within a run, a block is freed at the next flush: recorded work may
 * still read it. */
static int defer_free(test_stream *s, void *ptr) {
    if (s->n_frees == s->cap_frees) {
        int ncap = s->cap_frees ? s->cap_frees * 2 : 16;
        void **nf = realloc(s->frees, (size_t)ncap * sizeof *nf);
        if (!nf) return -1;
        s->frees = nf;
        s->cap_frees = ncap;
    }
    s->frees[s->n_frees++] = ptr;
    return 0;
}

static void t_free(ox_ep *ep, void *stream, void *ptr) {
    if (!ptr) return;
    if (stream) {
        if (defer_free(stream, ptr) == 0) return;
        flush((test_ep *)ep, stream); /* no room to defer: run what is recorded first */
    }
    t_release(ep, ptr);
}

static int t_to_host(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                     ox_error *err) {
    test_ep *t = (test_ep *)ep;
    if (!on_device(ep, src)) return ox_fail(err, ONYX_RUNTIME_ERROR, "test device: copy source is not device memory");
    if (stream) flush(t, stream);
    pthread_mutex_lock(&t->lock);
    device_block *blk = find_block(t, src);
    int pending = blk && blk->pending;
    pthread_mutex_unlock(&t->lock);
    if (pending)
        return ox_fail(err, ONYX_RUNTIME_ERROR,
                       "test device: read of a tensor whose recorded work has not run");
    if (bytes) memcpy(dst, src, bytes);
    atomic_fetch_add(&t->to_host, 1);
    return 0;
}

static int overlaps(const ox_tensor *t, const char *p, size_t bytes) {
    const char *d = t->data;
    return d && bytes && t->nbytes && p < d + t->nbytes && d < p + bytes;
}

/* Whether recorded work still reads or writes any of these bytes: an
 * arena's bytes serve one slot after another within a run, so an upload
 * into them must wait for that work, as a real device orders it. */
static int recorded_touches(const test_stream *s, const void *dst, size_t bytes) {
    for (int i = 0; i < s->n_ops; i++) {
        const recorded_op *r = &s->ops[i];
        if (overlaps(&r->a, dst, bytes) || overlaps(&r->b, dst, bytes) || overlaps(&r->y, dst, bytes))
            return 1;
    }
    return 0;
}

static int t_from_host(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                       ox_error *err) {
    test_ep *t = (test_ep *)ep;
    if (!on_device(ep, dst)) return ox_fail(err, ONYX_RUNTIME_ERROR, "test device: copy target is not device memory");
    if (stream && recorded_touches(stream, dst, bytes)) {
        flush(t, stream);
        atomic_fetch_add(&t->ordered_uploads, 1);
    }
    if (bytes) memcpy(dst, src, bytes);
    atomic_fetch_add(&((test_ep *)ep)->from_host, 1);
    return 0;
}

static void *t_run_begin(ox_ep *ep, ox_error *err) {
    test_stream *s = calloc(1, sizeof *s);
    if (!s) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    atomic_fetch_add(&((test_ep *)ep)->streams_begun, 1);
    return s;
}

static int t_run_end(ox_ep *ep, void *stream, ox_error *err) {
    (void)err;
    test_stream *s = stream;
    flush((test_ep *)ep, s);
    free(s->ops);
    free(s->frees);
    free(s);
    atomic_fetch_add(&((test_ep *)ep)->streams_ended, 1);
    return 0;
}

static void t_destroy(ox_ep *ep) {
    test_ep *t = (test_ep *)ep;
    for (device_block *b = t->blocks, *next; b; b = next) {
        next = b->next;
        free(b->data);
        free(b);
    }
    pthread_mutex_destroy(&t->lock);
    free(t);
}

/* Every node is, unless the light option names its operator. */
static int t_worth_placing(ox_ep *ep, const ir_node *node) {
    const test_ep *t = (const test_ep *)ep;
    char key[64];
    snprintf(key, sizeof key, ",%s,", node->op_type);
    return strstr(t->light, key) == NULL;
}

static const ox_ep_ops TEST_OPS = {
    .supports = t_supports,
    .worth_placing = t_worth_placing,
    .find_kernel = t_find,
    .host_inputs = t_host_inputs,
    .run_begin = t_run_begin,
    .run_end = t_run_end,
    .alloc = t_alloc,
    .free = t_free,
    .arena_new = t_arena_new,
    .arena_free = t_free,
    .arena_view = t_arena_view,
    .arena_align = t_arena_align,
    .copy_to_host = t_to_host,
    .copy_from_host = t_from_host,
    .destroy = t_destroy,
};

ox_ep *ox_test_ep_create(const ox_ep_options *opts, ox_error *err) {
    static const char *const KNOWN[] = {"light"};
    if (ox_ep_options_allow(opts, "test", KNOWN, 1, err) != 0) return NULL;
    const char *light = opts ? ox_ep_option(opts, "light") : NULL;
    if (light && strlen(light) + 3 > sizeof ((test_ep *)0)->light) {
        ox_fail(err, ONYX_INVALID_ARGUMENT, "test provider: option light is too long");
        return NULL;
    }
    test_ep *t = calloc(1, sizeof *t);
    if (!t) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    if (light) snprintf(t->light, sizeof t->light, ",%s,", light);
    t->base.name = "test";
    t->base.device = OX_TEST_DEVICE;
    t->base.ops = &TEST_OPS;
    pthread_mutex_init(&t->lock, NULL);
    return &t->base;
}

void ox_test_ep_get_stats(ox_ep *ep, ox_test_ep_stats *out) {
    test_ep *t = (test_ep *)ep;
    out->copies_to_host = atomic_load(&t->to_host);
    out->copies_from_host = atomic_load(&t->from_host);
    out->kernel_runs = atomic_load(&t->runs);
    out->live_allocations = atomic_load(&t->live);
    out->streams_begun = atomic_load(&t->streams_begun);
    out->streams_ended = atomic_load(&t->streams_ended);
    out->flushes = atomic_load(&t->flushes);
    out->submits = atomic_load(&t->submits);
    out->arenas = atomic_load(&t->arenas);
    out->arena_views = atomic_load(&t->views);
    out->ordered_uploads = atomic_load(&t->ordered_uploads);
}
