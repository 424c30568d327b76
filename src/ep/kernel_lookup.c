#include <string.h>

#include "ep/ep.h"
#include "ops/op.h"

const ox_kernel_def *ox_kernel_lookup(const ox_kernel_table *tables, size_t n_tables,
                                      const ir_node *node) {
    /* kernels, like schemas, name operator versions (see ox_op_since_version) */
    int version = ox_op_since_version(node->domain, node->op_type, node->opset);
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].count; i++) {
            const ox_kernel_def *k = &tables[t].kernels[i];
            if (strcmp(k->name, node->op_type) == 0 && strcmp(k->domain, node->domain) == 0 &&
                version >= k->min_opset && version <= k->max_opset)
                return k;
        }
    return NULL;
}
