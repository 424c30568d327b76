/* Helpers shared by the optimizer passes: who reads each value, which
 * values must keep their names, value forwarding, node rewriting and a
 * quiet shape inference for passes that look at static shapes. */
#ifndef ONYX_OPTIMIZER_OPT_UTIL_H
#define ONYX_OPTIMIZER_OPT_UTIL_H

#include <string.h>

#include "ir/ir.h"

/* Per value: how many node inputs (and subgraph captures) read it, and
 * one node that does (the last in node order). Arrays of n_values + 1. */
typedef struct ox_readers {
    int *count;
    int *node;
} ox_readers;
int ox_readers_init(ox_readers *r, const ir_graph *g);
void ox_readers_free(ox_readers *r);

/* Every reader of every value, as lists: the nodes reading value v are
 * node[start[v] .. start[v + 1]), once per input slot (a node reading v
 * twice is listed twice), a subgraph's captures (implicit inputs)
 * counted after its explicit inputs. */
typedef struct ox_reader_lists {
    int *start, *node;
} ox_reader_lists;
int ox_reader_lists_init(ox_reader_lists *r, const ir_graph *g);
void ox_reader_lists_free(ox_reader_lists *r);
static inline int ox_reader_count(const ox_reader_lists *r, int v) { return r->start[v + 1] - r->start[v]; }

/* n is operator op of the default domain */
static inline int ox_is_op(const ir_node *n, const char *op) { return !n->domain[0] && strcmp(n->op_type, op) == 0; }
/* n is a convolution: Conv, or the optimizer's onyx FusedConv (the same
 * attributes and first inputs) */
static inline int ox_is_conv(const ir_node *n) {
    return ox_is_op(n, "Conv") || (strcmp(n->domain, "onyx") == 0 && strcmp(n->op_type, "FusedConv") == 0);
}

/* 1 for values whose name someone outside the node list sees: graph
 * outputs and values that subgraph bodies read by name. Passes never
 * rename or drop them. Array of n_values + 1, or NULL when out of memory. */
unsigned char *ox_pinned_values(const ir_graph *g);

/* What a pattern-matching pass keeps while it rewrites: the readers of
 * every value, the pinned values, and a per-node "removed" flag (zeroed).
 * On failure (out of memory) all three are freed and -1 is returned. */
int ox_match_state_init(const ir_graph *g, ox_readers *r, unsigned char **pinned,
                        unsigned char **dead);
void ox_match_state_free(ox_readers *r, unsigned char *pinned, unsigned char *dead);

/* Gives Conv node ci new constant weights: nw (NULL keeps W) and the bias
 * nb, both taken over, named after the node ("<conv>/W_<tag>.0"); a Conv
 * without a bias input grows one. On failure both are freed. */
int ox_conv_replace_weights(ir_graph *g, int ci, ox_tensor *nw, ox_tensor *nb, const char *tag,
                            ox_error *err);

/* The constant tensor behind value v (an initializer that is not a graph
 * input, or a folded constant), or NULL. */
const ox_tensor *ox_const_value(const ir_graph *g, int v);
/* The entries of node n's input k when it is a constant int32 or int64
 * scalar or vector of at most max entries: out[0 .. *count), 0; else -1. */
int ox_const_ints(const ir_graph *g, const ir_node *n, int k, int64_t *out, int max, int *count);

/* For the passes that match written-out patterns (the normalizations):
 * n is operator op of the default domain with one output and a first
 * input, both present */
static inline int ox_is_op_chain(const ir_node *n, const char *op) {
    return ox_is_op(n, op) && n->n_outputs == 1 && n->outputs[0] >= 0 && n->n_inputs >= 1 && n->inputs[0] >= 0;
}
/* A matched normalization's rewrite: node i becomes operator op of the
 * default domain at the model's opset, reading x and the params (-1: an
 * omitted input; trailing ones are dropped), with attributes epsilon and
 * axis -1, writing out; nodes[1..count) are merged into it (marked dead).
 * Returns 1 when done, 0 when one of nodes[0..count) is dead already (an
 * overlapping match made earlier), -1 on error. */
int ox_rewrite_normalization(ir_graph *g, int64_t opset, int i, const char *op, int x, const int *params,
                             int n_params, float eps, int out, const int *nodes, int count, unsigned char *dead,
                             ox_error *err);
/* The only reader of v when v keeps no name (pinned) and that reader
 * captures no subgraph values; else -1. */
int ox_sole_reader(const ir_graph *g, const ox_readers *r, const unsigned char *pinned, int v);
/* The input of two-input node n that is not v; -1 when n reads v in
 * neither slot or has another number of inputs. */
int ox_other_input(const ir_node *n, int v);
/* v as a one-element float32 constant, or NULL. */
const ox_tensor *ox_const_scalar_f32(const ir_graph *g, int v);
/* 1 when ReduceMean node n averages its input (of rank `rank`) over the
 * last axis only, keeping dimensions (the axis as -1 or rank - 1, in the
 * attribute before opset 18 and a constant input from 18). */
int ox_mean_over_last_axis(const ir_graph *g, const ir_node *n, int rank);

/* forward[v] >= 0: readers of v read forward[v] instead. Follows chains
 * and shortens them. */
int ox_forward_resolve(int *forward, int v);
/* Rewrites every node input through forward. */
void ox_forward_apply(ir_graph *g, int *forward);

/* A new value named base/what.N (a fresh name); its id or -1. */
int ox_add_value(ir_graph *g, const char *base, const char *what, ox_error *err);
/* The same, made a constant holding t (taken, also on failure). */
int ox_add_constant(ir_graph *g, const char *base, const char *what, ox_tensor *t, ox_error *err);

/* Runs static shape inference for a pass that reads value types; returns
 * 0 or -1 when it failed (the error is dropped: the session's own
 * inference after the passes reports it with its context). */
int ox_infer_quietly(ir_graph *g);

/* Registers domain at version in the model's opset imports when absent,
 * so that a saved optimized graph declares the operators it uses. */
int ox_model_import_domain(ir_model *m, const char *domain, int64_t version, ox_error *err);

/* ---- node rewriting ---- */
/* Sets (adding or replacing) a string / float-list attribute of n. */
int ox_node_set_string(ir_node *n, const char *name, const char *s, ox_error *err);
int ox_node_set_float(ir_node *n, const char *name, float v, ox_error *err);
int ox_node_set_int(ir_node *n, const char *name, int64_t v, ox_error *err);
int ox_node_set_floats(ir_node *n, const char *name, const float *v, size_t count, ox_error *err);
int ox_node_set_ints(ir_node *n, const char *name, const int64_t *v, size_t count, ox_error *err);
/* Gives n another operator: op_type, domain and opset. */
int ox_node_retype(ir_node *n, const char *op_type, const char *domain, int opset, ox_error *err);
/* Sets n's input k (growing the input list with omitted slots). */
int ox_node_set_input(ir_node *n, int k, int v, ox_error *err);
/* Makes node i of g produce value v as its output k (v's old producer,
 * if any, loses it; the value n produced there loses its producer). */
void ox_node_set_output(ir_graph *g, int i, int k, int v);
/* Node `from` is merged into node `into`: marked removed in dead, and its
 * name joins into's origins (ir_node_absorb). */
int ox_merge_node(ir_graph *g, unsigned char *dead, int into, int from, ox_error *err);
#endif
