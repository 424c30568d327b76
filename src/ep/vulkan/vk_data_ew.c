/* The `data` family's elementwise kernels: binary Pow, Max, Min, Mod
 * (fmod), the comparisons and bool logic (data_binary.comp), one-input
 * float operators and Not (data_unary.comp), Where (data_where.comp) and
 * Cast (data_cast.comp). Their table rows are in vk_kernels_data.c. */
#include <inttypes.h>
#include <string.h>

#include "ep/vulkan/vk_data.h"

OX_VK_SHADER(data_binary)
OX_VK_SHADER(data_unary)
OX_VK_SHADER(data_where)
OX_VK_SHADER(data_cast)

/* data_binary.comp's operator numbers */
enum { B_POW = 0, B_MAX = 1, B_MIN = 2, B_FMOD = 3, B_CMP_F = 16, B_CMP_I = 32, B_LOGIC = 48, B_CMP_L = 64 };
enum { CMP_EQ, CMP_LT, CMP_GT, CMP_LE, CMP_GE };
enum { L_AND, L_OR, L_XOR };

static int check(ox_kernel_ctx *c) {
    if (ox_vk_check_io(c, ox_vk_data_host_inputs(c->node)) != 0) return -1;
    return vkd_have_output(c, 0);
}

static int ranked(const ir_type *t) { return t->rank >= 0 && t->rank <= VKD_MAX_RANK; }

/* ---- placement ---- */

static int both(const ir_type *const *in, int n, ox_dtype t) {
    return n == 2 && ox_vk_is_tensor(in[0], t) && ox_vk_is_tensor(in[1], t) && ranked(in[0]) &&
           ranked(in[1]);
}

int vkd_s_pow(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return both(in, n, ONYX_FLOAT32);
}

/* Max and Min: any number of float32 inputs. */
int vkd_s_minmax(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    if (n < 1) return 0;
    for (int i = 0; i < n; i++)
        if (!ox_vk_is_tensor(in[i], ONYX_FLOAT32) || !ranked(in[i])) return 0;
    return 1;
}

/* Mod on floats only with fmod=1 (the spec requires it there). */
int vkd_s_mod(const ir_node *node, const ir_type *const *in, int n) {
    return both(in, n, ONYX_FLOAT32) && ir_attr_int(node, "fmod", 0) == 1;
}

int vkd_s_compare(const ir_node *node, const ir_type *const *in, int n) {
    if (both(in, n, ONYX_FLOAT32) || both(in, n, ONYX_INT32) || both(in, n, ONYX_INT64)) return 1;
    return !strcmp(node->op_type, "Equal") && both(in, n, ONYX_BOOL);
}

int vkd_s_logical(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return both(in, n, ONYX_BOOL);
}

int vkd_s_not(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 1 && ox_vk_is_tensor(in[0], ONYX_BOOL);
}

int vkd_s_unary(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    return n == 1 && ox_vk_is_tensor(in[0], ONYX_FLOAT32);
}

int vkd_s_where(const ir_node *node, const ir_type *const *in, int n) {
    (void)node;
    if (n != 3 || !ox_vk_is_tensor(in[0], ONYX_BOOL) || !vkd_movable(in[1]) || !in[2] ||
        in[2]->kind != OX_KIND_TENSOR || in[1]->dtype != in[2]->dtype)
        return 0;
    return ranked(in[0]) && ranked(in[1]) && ranked(in[2]);
}

/* data_cast.comp's type codes, -1 for types it does not convert. */
static int cast_code(ox_dtype t) {
    switch (t) {
    case ONYX_FLOAT32: return 0;
    case ONYX_INT32: return 1;
    case ONYX_INT64: return 2;
    case ONYX_BOOL: return 3;
    case ONYX_UINT8: return 4;
    default: return -1;
    }
}

int vkd_s_cast(const ir_node *node, const ir_type *const *in, int n) {
    const ir_attr *to = ir_node_attr(node, "to");
    return n == 1 && in[0] && in[0]->kind == OX_KIND_TENSOR && cast_code(in[0]->dtype) >= 0 && to &&
           to->type == IR_ATTR_INT && cast_code((ox_dtype)to->i) >= 0;
}

/* ---- broadcasting ---- */

/* The output's shape folded with up to three inputs' broadcast strides:
 * dimensions of 1 dropped, neighbours every input walks as one merged. */
typedef struct bcast {
    int rank;
    int64_t dims[OX_MAX_RANK], st[3][OX_MAX_RANK];
} bcast;

static int bcast_fold(ox_kernel_ctx *c, const ox_tensor *y, const ox_tensor *const *ins, int n_in,
                      bcast *b) {
    memset(b, 0, sizeof *b);
    int r = y->rank;
    int64_t st[3][OX_MAX_RANK];
    for (int k = 0; k < n_in; k++) {
        if (ins[k]->rank > r)
            return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan %s: input rank above the output's",
                                  c->node->op_type);
        vkd_bcast_strides(ins[k], r, st[k]);
    }
    int m = 0;
    for (int d = 0; d < r; d++) {
        if (y->dims[d] == 1) continue;
        int merge = m > 0;
        for (int k = 0; k < n_in && merge; k++) merge = b->st[k][m - 1] == st[k][d] * y->dims[d];
        if (merge) {
            b->dims[m - 1] *= y->dims[d];
            for (int k = 0; k < n_in; k++) b->st[k][m - 1] = st[k][d];
            continue;
        }
        b->dims[m] = y->dims[d];
        for (int k = 0; k < n_in; k++) b->st[k][m] = st[k][d];
        m++;
    }
    if (m > VKD_MAX_RANK)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan %s: the broadcast needs %d dimensions (at most %d)",
                              c->node->op_type, m, VKD_MAX_RANK);
    b->rank = m;
    return 0;
}

/* ---- two inputs ---- */

typedef struct binary_push {
    uint32_t n, rank, op, pad_;
    uint32_t dims[VKD_MAX_RANK], sa[VKD_MAX_RANK], sb[VKD_MAX_RANK];
} binary_push;

static int dispatch_binary(ox_kernel_ctx *c, uint32_t op, const ox_tensor *a, const ox_tensor *b,
                           ox_tensor *y) {
    int64_t n = ox_tensor_numel(y);
    if (n == 0) return 0;
    const ox_tensor *ins[2] = {a, b};
    bcast f;
    if (bcast_fold(c, y, ins, 2, &f) != 0) return -1;
    binary_push q = {.n = (uint32_t)n, .rank = (uint32_t)f.rank, .op = op};
    for (int d = 0; d < f.rank; d++) {
        q.dims[d] = (uint32_t)f.dims[d];
        q.sa[d] = (uint32_t)f.st[0][d];
        q.sb[d] = (uint32_t)f.st[1][d];
    }
    int64_t items = op < B_CMP_F ? n : (n + 3) / 4;
    vk_dispatch d = {.shader = &VK_SHADER_data_binary, .bufs = {ox_vk_buf(a), ox_vk_buf(b), ox_vk_buf(y)},
                     .push = &q, .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), items, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

static int run_binary(ox_kernel_ctx *c, uint32_t op) {
    if (check(c) != 0) return -1;
    return dispatch_binary(c, op, c->inputs[0], c->inputs[1], c->outputs[0]);
}

/* Max/Min over any number of inputs: the first two into the output, then
 * each further one folded in place (the output read as input a). One
 * input is the operator with itself. */
static int run_variadic(ox_kernel_ctx *c, uint32_t op) {
    if (check(c) != 0) return -1;
    ox_tensor *y = c->outputs[0];
    int n = c->n_inputs;
    for (int i = 0; i < n; i++)
        if (!c->inputs[i]) return ox_kernel_fail(c, ONYX_INVALID_ARGUMENT, "%s: input %d missing", c->node->op_type, i);
    if (dispatch_binary(c, op, c->inputs[0], c->inputs[n > 1 ? 1 : 0], y) != 0) return -1;
    for (int i = 2; i < n; i++)
        if (dispatch_binary(c, op, y, c->inputs[i], y) != 0) return -1;
    return 0;
}

int vkd_k_pow(ox_kernel_ctx *c) { return run_binary(c, B_POW); }
int vkd_k_max(ox_kernel_ctx *c) { return run_variadic(c, B_MAX); }
int vkd_k_min(ox_kernel_ctx *c) { return run_variadic(c, B_MIN); }
int vkd_k_mod(ox_kernel_ctx *c) {
    if (ir_attr_int(c->node, "fmod", 0) != 1)
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan Mod: floats need fmod=1");
    return run_binary(c, B_FMOD);
}

static int run_compare(ox_kernel_ctx *c, uint32_t k) {
    if (check(c) != 0) return -1;
    ox_dtype t = c->inputs[0]->dtype;
    uint32_t base = t == ONYX_FLOAT32 ? B_CMP_F : t == ONYX_INT32 ? B_CMP_I : t == ONYX_INT64 ? B_CMP_L : B_LOGIC;
    /* bool Equal is "not Xor": logic op 3 */
    if (base == B_LOGIC) k = 3;
    return dispatch_binary(c, base + k, c->inputs[0], c->inputs[1], c->outputs[0]);
}

int vkd_k_equal(ox_kernel_ctx *c) { return run_compare(c, CMP_EQ); }
int vkd_k_less(ox_kernel_ctx *c) { return run_compare(c, CMP_LT); }
int vkd_k_greater(ox_kernel_ctx *c) { return run_compare(c, CMP_GT); }
int vkd_k_less_equal(ox_kernel_ctx *c) { return run_compare(c, CMP_LE); }
int vkd_k_greater_equal(ox_kernel_ctx *c) { return run_compare(c, CMP_GE); }
int vkd_k_and(ox_kernel_ctx *c) { return run_binary(c, B_LOGIC + L_AND); }
int vkd_k_or(ox_kernel_ctx *c) { return run_binary(c, B_LOGIC + L_OR); }
int vkd_k_xor(ox_kernel_ctx *c) { return run_binary(c, B_LOGIC + L_XOR); }

/* ---- one input ---- */

typedef struct unary_push {
    uint32_t n, op;
    float alpha, beta, gamma;
} unary_push;

static const struct {
    const char *op;
    uint32_t code;
    float alpha, beta, gamma; /* the attributes' defaults */
} UNARY[] = {
    {"Reciprocal", 0, 0, 0, 0}, {"Log", 1, 0, 0, 0},    {"Floor", 2, 0, 0, 0},
    {"Ceil", 3, 0, 0, 0},       {"Round", 4, 0, 0, 0},  {"Sin", 5, 0, 0, 0},
    {"Cos", 6, 0, 0, 0},        {"HardSigmoid", 7, 0.2f, 0.5f, 0},
    {"HardSwish", 8, 0, 0, 0},  {"Softplus", 9, 0, 0, 0}, {"Sign", 10, 0, 0, 0},
    {"Elu", 11, 1.0f, 0, 0},    {"Selu", 12, 1.67326319217681884765625f, 0, 1.05070102214813232421875f},
};
#define OP_NOT 13u

static int dispatch_unary(ox_kernel_ctx *c, const unary_push *q) {
    int64_t items = q->op == OP_NOT ? ((int64_t)q->n + 3) / 4 : q->n;
    if (q->n == 0) return 0;
    vk_dispatch d = {.shader = &VK_SHADER_data_unary, .bufs = {ox_vk_buf(c->inputs[0]), ox_vk_buf(c->outputs[0])},
                     .push = q, .push_bytes = sizeof *q,
                     .groups = {ox_vk_groups(ox_vk_of(c), items, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

int vkd_k_unary(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    if (x->dtype != ONYX_FLOAT32 || y->dtype != ONYX_FLOAT32 || ox_tensor_numel(x) != ox_tensor_numel(y))
        return ox_kernel_fail(c, ONYX_RUNTIME_ERROR, "vulkan %s: input and output differ", c->node->op_type);
    for (size_t k = 0; k < sizeof UNARY / sizeof UNARY[0]; k++) {
        if (strcmp(UNARY[k].op, c->node->op_type)) continue;
        unary_push q = {(uint32_t)ox_tensor_numel(y), UNARY[k].code,
                        ir_attr_float(c->node, "alpha", UNARY[k].alpha),
                        ir_attr_float(c->node, "beta", UNARY[k].beta),
                        ir_attr_float(c->node, "gamma", UNARY[k].gamma)};
        return dispatch_unary(c, &q);
    }
    return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan: no unary kernel for %s", c->node->op_type);
}

int vkd_k_not(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    unary_push q = {(uint32_t)ox_tensor_numel(c->outputs[0]), OP_NOT, 0, 0, 0};
    return dispatch_unary(c, &q);
}

/* ---- Where ---- */

typedef struct where_push {
    uint32_t n, rank, words, pad_;
    uint32_t dims[VKD_MAX_RANK], sc[VKD_MAX_RANK], sx[VKD_MAX_RANK], sy[VKD_MAX_RANK];
} where_push;

int vkd_k_where(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *const *ins = (const ox_tensor *const *)c->inputs;
    ox_tensor *y = c->outputs[0];
    int64_t n = ox_tensor_numel(y);
    if (n == 0) return 0;
    bcast f;
    if (bcast_fold(c, y, ins, 3, &f) != 0) return -1;
    int eb = vkd_elem_bytes(y->dtype);
    where_push q = {.n = (uint32_t)n, .rank = (uint32_t)f.rank, .words = eb == 1 ? 0u : (uint32_t)eb / 4};
    for (int d = 0; d < f.rank; d++) {
        q.dims[d] = (uint32_t)f.dims[d];
        q.sc[d] = (uint32_t)f.st[0][d];
        q.sx[d] = (uint32_t)f.st[1][d];
        q.sy[d] = (uint32_t)f.st[2][d];
    }
    vk_dispatch d = {.shader = &VK_SHADER_data_where,
                     .bufs = {ox_vk_buf(ins[0]), ox_vk_buf(ins[1]), ox_vk_buf(ins[2]), ox_vk_buf(y)},
                     .push = &q, .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), eb == 1 ? (n + 3) / 4 : n, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}

/* ---- Cast ---- */

int vkd_k_cast(ox_kernel_ctx *c) {
    if (check(c) != 0) return -1;
    const ox_tensor *x = c->inputs[0];
    ox_tensor *y = c->outputs[0];
    int from = cast_code(x->dtype), to = cast_code(y->dtype);
    int64_t n = ox_tensor_numel(y);
    if (from < 0 || to < 0 || n != ox_tensor_numel(x))
        return ox_kernel_fail(c, ONYX_NOT_IMPLEMENTED, "vulkan Cast: %s to %s", ox_dtype_name(x->dtype),
                              ox_dtype_name(y->dtype));
    if (n == 0) return 0;
    struct { uint32_t n, from, to; } q = {(uint32_t)n, (uint32_t)from, (uint32_t)to};
    vk_dispatch d = {.shader = &VK_SHADER_data_cast, .bufs = {ox_vk_buf(x), ox_vk_buf(y)}, .push = &q,
                     .push_bytes = sizeof q,
                     .groups = {ox_vk_groups(ox_vk_of(c), to >= 3 ? (n + 3) / 4 : n, ox_vk_of(c)->wg, 0), 1, 1}};
    return ox_vk_run(c, &d);
}
