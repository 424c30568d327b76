/* CPU kernels of onyx's own attention operators (src/ops/onyx_attention.c):
 * onyx.RotaryEmbedding runs RotaryEmbedding-23's kernel, which also takes
 * the caches one table for every batch entry when the node is of domain
 * onyx. */
#include "ep/cpu/kernels/attention_ops.h"
#include "ep/cpu/kernels/kernel_util.h"
#include "ep/ep.h"

static int supports_rotary(const ir_node *node, const ir_type *const *inputs, int n_inputs) {
    (void)node;
    for (int i = 0; i < 3 && i < n_inputs; i++)
        if (inputs[i] && inputs[i]->dtype != ONYX_UNDEFINED && inputs[i]->dtype != ONYX_FLOAT32 &&
            inputs[i]->dtype != ONYX_FLOAT16 && inputs[i]->dtype != ONYX_BFLOAT16)
            return 0;
    return 1;
}

static const ox_kernel_def KERNELS[] = {
    {"onyx", "RotaryEmbedding", 1, 1, ox_rotary_embedding_compute, supports_rotary, NULL, NULL, NULL},
};

const ox_kernel_table ox_cpu_kernels_onyx_attention = {KERNELS, sizeof KERNELS / sizeof KERNELS[0]};
