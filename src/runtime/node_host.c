/* Host execution of single nodes outside the plan (node_host.h). */
#include <stdlib.h>
#include <string.h>

#include "core/checked.h"
#include "ops/op.h"
#include "runtime/node_host.h"

void ox_value_type(const ox_tensor *t, ir_type *ty) {
    memset(ty, 0, sizeof *ty);
    ty->kind = t->kind;
    ty->dtype = t->kind == OX_KIND_TENSOR ? t->dtype : t->elem_dtype;
    ty->rank = t->kind == OX_KIND_TENSOR ? t->rank : -1;
    if (t->kind == OX_KIND_TENSOR) memcpy(ty->dims, t->dims, (size_t)t->rank * sizeof *t->dims);
}

static size_t scratch_bytes(size_t ni, size_t no) {
    return ni * (sizeof(ox_tensor *) + sizeof(ir_type) + sizeof(ir_type *) + sizeof(ox_tensor *)) +
           no * (sizeof(ox_tensor *) + sizeof(ir_type));
}

void *ox_node_scratch_new(ox_node_scratch *ns, int n_in, int n_out) {
    return ox_node_scratch_in(ns, n_in, n_out, NULL, 0);
}

void *ox_node_scratch_in(ox_node_scratch *ns, int n_in, int n_out, void *buf, size_t cap) {
    size_t ni = (size_t)(n_in > 0 ? n_in : 1), no = (size_t)(n_out > 0 ? n_out : 1);
    size_t bytes = scratch_bytes(ni, no);
    char *p = bytes <= cap ? memset(buf, 0, bytes) : calloc(1, bytes);
    if (!p) return NULL;
    /* ir_type first: it has the strictest alignment */
    ns->in_types_store = (ir_type *)p;
    ns->out_types = ns->in_types_store + ni;
    ns->ins = (ox_tensor **)(ns->out_types + no);
    ns->outs = ns->ins + ni;
    ns->in_types = (const ir_type **)(ns->outs + no);
    ns->in_vals = (const ox_tensor **)(ns->in_types + ni);
    return p;
}

int ox_outputs_all_empty(const ir_node *node, const ir_type *outs) {
    int used = 0;
    for (int k = 0; k < node->n_outputs; k++) {
        if (node->outputs[k] < 0) continue;
        int64_t numel;
        if (outs[k].kind != OX_KIND_TENSOR || !ox_numel_checked(outs[k].dims, outs[k].rank, &numel) ||
            numel != 0)
            return 0;
        used = 1;
    }
    return used;
}

/* Whether the inferred outputs of a host run fit in max_bytes (0: any);
 * fails with err set when they do not or their size overflows. */
static int host_outputs_fit(const ir_node *node, const ir_type *outs, int n_outputs, int data_dependent,
                            size_t max_bytes, ox_error *err) {
    size_t total = 0;
    if (!max_bytes || data_dependent) return 0;
    for (int i = 0; i < n_outputs; i++) {
        if (outs[i].kind != OX_KIND_TENSOR || node->outputs[i] < 0) continue;
        int64_t numel;
        size_t bytes;
        if (!ox_numel_checked(outs[i].dims, outs[i].rank, &numel) ||
            !ox_nbytes_checked(numel, ox_dtype_size(outs[i].dtype), &bytes) ||
            !ox_add_size(total, bytes, &total) || total > max_bytes)
            return ox_fail(err, ONYX_OUT_OF_MEMORY,
                           "%s '%s': outputs exceed %zu bytes, the cap for running it at load",
                           node->op_type, node->name ? node->name : "", max_bytes);
    }
    return 0;
}

int ox_run_node_on_host(ox_ep *cpu, const ir_node *node, ox_tensor *const *inputs, int n_inputs,
                        ox_tensor **outputs, int n_outputs, size_t max_out_bytes,
                        ox_threadpool *pool, ox_error *err) {
    const ox_kernel_def *k = cpu->ops->find_kernel(cpu, node);
    const ox_op_schema *schema = ox_op_find(node->domain, node->op_type, node->opset);
    if (!k || !schema || !schema->infer)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "no CPU kernel for %s", node->op_type);
    ox_node_scratch ns;
    void *block = ox_node_scratch_new(&ns, n_inputs, n_outputs);
    if (!block) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    ir_type *store = ns.in_types_store, *outs = ns.out_types;
    const ir_type **types = ns.in_types;
    for (int i = 0; i < n_inputs; i++) {
        types[i] = NULL;
        if (inputs[i]) {
            ox_value_type(inputs[i], &store[i]);
            types[i] = &store[i];
        }
    }
    memset(outs, 0, (size_t)n_outputs * sizeof *outs);
    ox_infer_ctx ic = {.node = node, .n_inputs = n_inputs, .inputs = types,
                       .values = (const ox_tensor *const *)inputs, .n_outputs = n_outputs,
                       .outputs = outs, .runtime = 1, .err = err};
    for (int i = 0; i < n_outputs; i++) outputs[i] = NULL;
    if (schema->infer(&ic) != 0 ||
        host_outputs_fit(node, outs, n_outputs, ic.data_dependent, max_out_bytes, err) != 0) {
        free(block);
        return -1;
    }
    for (int i = 0; i < n_outputs; i++) {
        if (ic.data_dependent || outs[i].kind != OX_KIND_TENSOR || node->outputs[i] < 0) continue;
        outputs[i] = ox_tensor_new(outs[i].dtype, outs[i].dims, outs[i].rank, err);
        if (!outputs[i]) goto fail;
    }
    if (!ic.data_dependent && ox_outputs_all_empty(node, outs)) {
        free(block);
        return 0;
    }
    void *state = NULL;
    ox_kernel_init in = {node, (const ox_tensor *const *)inputs, n_inputs, NULL, NULL, NULL};
    if (k->init && k->init(&in, &state, err) != 0) goto fail;
    ox_kernel_ctx kc = {.node = node, .n_inputs = n_inputs, .inputs = inputs,
                        .n_outputs = n_outputs, .outputs = outputs, .pool = pool, .state = state,
                        .ep = cpu, .err = err, .exec = NULL};
    int r = k->compute(&kc);
    if (k->release && state) k->release(state);
    if (r != 0) goto fail;
    free(block);
    return 0;
fail:
    free(block);
    for (int i = 0; i < n_outputs; i++) {
        ox_tensor_free(outputs[i]);
        outputs[i] = NULL;
    }
    return -1;
}


int ox_run_declined_on_host(ox_ep *cpu, const ir_node *node, ox_tensor *const *inputs,
                            ox_ep *const *in_eps, void *const *in_streams, int n_inputs,
                            ox_tensor **outputs, int n_outputs, ox_threadpool *pool,
                            ox_error *err) {
    ox_tensor **host = calloc((size_t)(n_inputs > 0 ? n_inputs : 1), sizeof *host);
    unsigned char *owned = calloc((size_t)(n_inputs > 0 ? n_inputs : 1), 1);
    int r = -1;
    if (!host || !owned) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int k = 0; k < n_inputs; k++) {
        const ox_tensor *t = inputs[k];
        if (!t || t->device == OX_DEVICE_HOST) {
            host[k] = (ox_tensor *)t;
            continue;
        }
        if (t->kind != OX_KIND_TENSOR || !in_eps[k]) {
            ox_fail(err, ONYX_RUNTIME_ERROR, "input %d is not a tensor the CPU can read", k);
            goto done;
        }
        host[k] = ox_tensor_new(t->dtype, t->dims, t->rank, err);
        if (!host[k]) goto done;
        owned[k] = 1;
        if (in_eps[k]->ops->copy_to_host(in_eps[k], in_streams[k], host[k]->data, t->data, t->nbytes,
                                         err) != 0)
            goto done;
    }
    r = ox_run_node_on_host(cpu, node, host, n_inputs, outputs, n_outputs, 0, pool, err);
done:
    for (int k = 0; host && k < n_inputs; k++)
        if (owned[k]) ox_tensor_free(host[k]);
    free(host);
    free(owned);
    return r;
}
