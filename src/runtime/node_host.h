/* Running single nodes on the host, outside the plan's slots: constant
 * folding at load, and a device node that declined at run time (see
 * ox_kernel_decline in ep/ep.h). Also the per-node scratch both the
 * executor and these paths use. */
#ifndef ONYX_RUNTIME_NODE_HOST_H
#define ONYX_RUNTIME_NODE_HOST_H

#include <stddef.h>

#include "core/error.h"
#include "core/tensor.h"
#include "core/threadpool.h"
#include "ep/ep.h"
#include "ir/ir.h"

/* The inference type of a run-time value (tensor, sequence, optional). */
void ox_value_type(const ox_tensor *t, ir_type *ty);

/* Per-node scratch for inference and kernel arguments, one allocation
 * sized to the node: a node may have any number of inputs and outputs
 * (Concat of hundreds of tensors), and subgraph bodies recurse through
 * the executor, so neither a fixed cap nor stack arrays will do. */
typedef struct ox_node_scratch {
    ox_tensor **ins, **outs;
    ir_type *in_types_store, *out_types;
    const ir_type **in_types;
    const ox_tensor **in_vals;
} ox_node_scratch;

/* Whether every output the node declares is a tensor with no elements
 * (outs: the inferred output types; an unknown shape counts as not
 * empty). The node then has nothing to compute, ONNX nodes having no side
 * effects, and a kernel would only walk the other axes of empty tensors,
 * which may be long ([2^40, 0] is a valid shape). */
int ox_outputs_all_empty(const ir_node *node, const ir_type *outs);

/* Returns the block to free, or NULL when out of memory. */
void *ox_node_scratch_new(ox_node_scratch *ns, int n_in, int n_out);
/* The same in buf (cap bytes, aligned for ir_type) when it fits: returns
 * buf, which is not to be freed; else as ox_node_scratch_new. */
void *ox_node_scratch_in(ox_node_scratch *ns, int n_in, int n_out, void *buf, size_t cap);

/* Runs one node with the CPU provider on host tensors. outputs[i]
 * receive owned values. Fails with ONYX_OUT_OF_MEMORY before allocating
 * when the outputs, as inferred from the inputs' values, would take more
 * than max_out_bytes (0: no cap); outputs the kernel sizes itself
 * (data-dependent) are not capped. */
int ox_run_node_on_host(ox_ep *cpu, const ir_node *node, ox_tensor *const *inputs, int n_inputs,
                        ox_tensor **outputs, int n_outputs, size_t max_out_bytes,
                        ox_threadpool *pool, ox_error *err);

/* The host half of a device node that declined at run time: copies each
 * device input to a host tensor (through in_eps[k], in its stream
 * in_streams[k], which waits for the work recorded before), then runs
 * the node as ox_run_node_on_host does, with no cap on its outputs. */
int ox_run_declined_on_host(ox_ep *cpu, const ir_node *node, ox_tensor *const *inputs,
                            ox_ep *const *in_eps, void *const *in_streams, int n_inputs,
                            ox_tensor **outputs, int n_outputs, ox_threadpool *pool,
                            ox_error *err);

#endif
