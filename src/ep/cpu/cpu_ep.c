/* The CPU provider: host memory, the reference kernels of every family. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/cpu/kernels/conv_fast.h"
#include "ep/ep.h"

extern const ox_kernel_table ox_cpu_kernels_elementwise;
extern const ox_kernel_table ox_cpu_kernels_reduce;
extern const ox_kernel_table ox_cpu_kernels_conv;
extern const ox_kernel_table ox_cpu_kernels_linalg;
extern const ox_kernel_table ox_cpu_kernels_pool;
extern const ox_kernel_table ox_cpu_kernels_normalization;
extern const ox_kernel_table ox_cpu_kernels_transform;
extern const ox_kernel_table ox_cpu_kernels_index;
extern const ox_kernel_table ox_cpu_kernels_image;
extern const ox_kernel_table ox_cpu_kernels_recurrent;
extern const ox_kernel_table ox_cpu_kernels_signal;
extern const ox_kernel_table ox_cpu_kernels_quantize;
extern const ox_kernel_table ox_cpu_kernels_loss;
extern const ox_kernel_table ox_cpu_kernels_random;
extern const ox_kernel_table ox_cpu_kernels_text;
extern const ox_kernel_table ox_cpu_kernels_control;
extern const ox_kernel_table ox_cpu_kernels_sequence;
extern const ox_kernel_table ox_cpu_kernels_attention;
extern const ox_kernel_table ox_cpu_kernels_ml;
extern const ox_kernel_table ox_cpu_kernels_contrib;
extern const ox_kernel_table ox_cpu_kernels_codec;
extern const ox_kernel_table ox_cpu_kernels_cast;
extern const ox_kernel_table ox_cpu_kernels_onyx_matmul;
extern const ox_kernel_table ox_cpu_kernels_onyx_attention;
extern const ox_kernel_table ox_cpu_kernels_nchwc;
extern const ox_kernel_table ox_cpu_kernels_conv_chain;

#define N_FAMILIES 26

typedef struct cpu_ep {
    ox_ep base;
    ox_kernel_table tables[N_FAMILIES];
    ox_kernel_index index;
    char device_key[64];
} cpu_ep;

static const ox_kernel_def *cpu_find_kernel(ox_ep *ep, const ir_node *node) {
    cpu_ep *c = (cpu_ep *)ep;
    return ox_kernel_index_find(&c->index, node);
}

static int cpu_supports(ox_ep *ep, const ir_node *node, const ir_type *const *inputs, int n) {
    const ox_kernel_def *k = cpu_find_kernel(ep, node);
    return k && (!k->supports || k->supports(node, inputs, n));
}

static void *cpu_alloc(ox_ep *ep, void *stream, size_t bytes) {
    (void)ep;
    (void)stream;
    void *p = NULL;
    return posix_memalign(&p, 64, bytes ? bytes : 1) == 0 ? p : NULL;
}

static void cpu_free(ox_ep *ep, void *stream, void *p) {
    (void)ep;
    (void)stream;
    free(p);
}

static int cpu_copy(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                    ox_error *err) {
    (void)ep;
    (void)stream;
    (void)err;
    if (bytes) memcpy(dst, src, bytes);
    return 0;
}

static void cpu_destroy(ox_ep *ep) {
    ox_kernel_index_free(&((cpu_ep *)ep)->index);
    free(ep);
}

/* The machine and the kernel variant the convolutions choose (the
 * instruction-set level, capped by ONYX_CPU_ISA): what keys the artefacts
 * the CPU provider saves. */
static const char *cpu_device_key(ox_ep *ep) {
    cpu_ep *c = (cpu_ep *)ep;
    ox_cpu_isa isa;
    ox_error ignored = {0};
    const char *name = ox_cpu_isa_choose(&isa, &ignored) == 0 ? ox_cpu_isa_name(isa) : "unknown";
#if defined(__x86_64__)
    snprintf(c->device_key, sizeof c->device_key, "x86_64-%s", name);
#elif defined(__aarch64__)
    snprintf(c->device_key, sizeof c->device_key, "aarch64-%s", name);
#else
    snprintf(c->device_key, sizeof c->device_key, "other-%s", name);
#endif
    return c->device_key;
}

static int cpu_output_views_input(ox_ep *ep, const ir_node *node) {
    (void)ep;
    return ox_op_output_is_reshape(node);
}

static const ox_ep_ops CPU_OPS = {
    .supports = cpu_supports,
    .find_kernel = cpu_find_kernel,
    .output_views_input = cpu_output_views_input,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_to_host = cpu_copy,
    .copy_from_host = cpu_copy,
    .destroy = cpu_destroy,
    .device_key = cpu_device_key,
};

ox_ep *ox_cpu_ep_create(const ox_ep_options *opts, ox_error *err) {
    if (ox_ep_options_allow(opts, "cpu", NULL, 0, err) != 0) return NULL;
    cpu_ep *c = calloc(1, sizeof *c);
    if (!c) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    const ox_kernel_table *families[N_FAMILIES] = {
        &ox_cpu_kernels_elementwise, &ox_cpu_kernels_reduce, &ox_cpu_kernels_conv,
        &ox_cpu_kernels_linalg,      &ox_cpu_kernels_pool,   &ox_cpu_kernels_normalization,
        &ox_cpu_kernels_transform,   &ox_cpu_kernels_index,  &ox_cpu_kernels_image,
        &ox_cpu_kernels_recurrent,   &ox_cpu_kernels_signal, &ox_cpu_kernels_quantize,
        &ox_cpu_kernels_loss,        &ox_cpu_kernels_random, &ox_cpu_kernels_text,
        &ox_cpu_kernels_control,     &ox_cpu_kernels_sequence, &ox_cpu_kernels_attention,
        &ox_cpu_kernels_ml,          &ox_cpu_kernels_contrib,   &ox_cpu_kernels_codec,
        &ox_cpu_kernels_cast,
        &ox_cpu_kernels_onyx_matmul, &ox_cpu_kernels_onyx_attention,
        &ox_cpu_kernels_nchwc,       &ox_cpu_kernels_conv_chain,
    };
    for (int i = 0; i < N_FAMILIES; i++) c->tables[i] = *families[i];
    if (ox_kernel_index_build(&c->index, c->tables, N_FAMILIES, err) != 0) {
        free(c);
        return NULL;
    }
    c->base.name = "cpu";
    c->base.device = OX_DEVICE_HOST;
    c->base.ops = &CPU_OPS;
    return &c->base;
}
