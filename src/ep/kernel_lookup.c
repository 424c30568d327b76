#include <string.h>

#include "ep/ep.h"

const ox_kernel_def *ox_kernel_lookup(const ox_kernel_table *tables, size_t n_tables,
                                      const ir_node *node) {
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].count; i++) {
            const ox_kernel_def *k = &tables[t].kernels[i];
            if (strcmp(k->name, node->op_type) == 0 && strcmp(k->domain, node->domain) == 0 &&
                node->opset >= k->min_opset && node->opset <= k->max_opset)
                return k;
        }
    return NULL;
}
