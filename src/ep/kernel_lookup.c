#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

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

/* "domain\x1fop" into buf; 0 when it does not fit (the caller then scans). */
static int index_key(char *buf, size_t size, const char *domain, const char *op) {
    int n = snprintf(buf, size, "%s\x1f%s", domain, op);
    return n > 0 && (size_t)n < size;
}

int ox_kernel_index_build(ox_kernel_index *ix, const ox_kernel_table *tables, size_t n_tables,
                          ox_error *err) {
    memset(ix, 0, sizeof *ix);
    ix->tables = tables;
    ix->n_tables = n_tables;
    size_t n = 0;
    for (size_t t = 0; t < n_tables; t++) n += tables[t].count;
    ix->heads = ox_strmap_new();
    ix->defs = malloc((n + 1) * sizeof *ix->defs);
    ix->next = malloc((n + 1) * sizeof *ix->next);
    if (!ix->heads || !ix->defs || !ix->next) goto oom;
    size_t k = 0;
    for (size_t t = 0; t < n_tables; t++)
        for (size_t i = 0; i < tables[t].count; i++) ix->defs[k++] = &tables[t].kernels[i];
    /* pushed to the front from the last one, so each chain keeps table order */
    for (size_t i = n; i-- > 0;) {
        char key[256];
        int head = -1;
        if (!index_key(key, sizeof key, ix->defs[i]->domain, ix->defs[i]->name)) continue;
        if (!ox_strmap_get(ix->heads, key, &head)) head = -1;
        ix->next[i] = head;
        if (ox_strmap_put(ix->heads, key, (int)i) != 0) goto oom;
    }
    return 0;
oom:
    ox_kernel_index_free(ix);
    return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
}

const ox_kernel_def *ox_kernel_index_find(const ox_kernel_index *ix, const ir_node *node) {
    char key[256];
    int i;
    if (!index_key(key, sizeof key, node->domain, node->op_type))
        return ox_kernel_lookup(ix->tables, ix->n_tables, node);
    if (!ox_strmap_get(ix->heads, key, &i)) return NULL;
    int version = ox_op_since_version(node->domain, node->op_type, node->opset);
    for (; i >= 0; i = ix->next[i])
        if (version >= ix->defs[i]->min_opset && version <= ix->defs[i]->max_opset) return ix->defs[i];
    return NULL;
}

void ox_kernel_index_free(ox_kernel_index *ix) {
    ox_strmap_free(ix->heads);
    free(ix->defs);
    free(ix->next);
    memset(ix, 0, sizeof *ix);
}

int ox_op_output_is_reshape(const ir_node *node) {
    static const char *const RESHAPES[] = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"};
    if (node->domain[0] != '\0' || node->n_inputs < 1 || node->n_outputs < 1) return 0;
    for (size_t i = 0; i < sizeof RESHAPES / sizeof RESHAPES[0]; i++)
        if (strcmp(node->op_type, RESHAPES[i]) == 0) return 1;
    return 0;
}
