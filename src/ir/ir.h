/* The in-memory graph onyx plans and runs: values, nodes, attributes and
 * nested subgraphs. Built by the loader, rewritten by optimizer passes,
 * read by the planner and the providers. */
#ifndef ONYX_IR_H
#define ONYX_IR_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/tensor.h"

typedef struct ir_graph ir_graph;

/* Shape facts known without running: dims[i] >= 0 known, -1 unknown.
 * dim_params[i] keeps a symbolic name from the model (or NULL). */
typedef struct ir_type {
    ox_kind kind;
    ox_dtype dtype; /* element type (of the elements for sequences) */
    int rank;       /* -1: rank unknown */
    int64_t dims[OX_MAX_RANK];
    char *dim_params[OX_MAX_RANK];
} ir_type;

typedef enum ir_attr_type {
    IR_ATTR_UNDEFINED = 0,
    IR_ATTR_FLOAT = 1,
    IR_ATTR_INT = 2,
    IR_ATTR_STRING = 3,
    IR_ATTR_TENSOR = 4,
    IR_ATTR_GRAPH = 5,
    IR_ATTR_FLOATS = 6,
    IR_ATTR_INTS = 7,
    IR_ATTR_STRINGS = 8,
    IR_ATTR_TENSORS = 9,
    IR_ATTR_GRAPHS = 10,
    IR_ATTR_SPARSE_TENSOR = 11,
    IR_ATTR_TYPE_PROTO = 13,
} ir_attr_type;

typedef struct ir_attr {
    char *name;
    ir_attr_type type;
    float f;
    int64_t i;
    char *s; /* NUL-terminated; s_len excludes the NUL */
    size_t s_len;
    ox_tensor *t;
    ir_graph *g;
    size_t n; /* element count of the list kinds below */
    float *floats;
    int64_t *ints;
    char **strings;
    ox_tensor **tensors;
    ir_graph **graphs;
    ir_type type_proto; /* for TYPE_PROTO (e.g. Optional's type) */
} ir_attr;

typedef struct ir_node {
    char *name;
    char *op_type;
    char *domain; /* "" for ai.onnx */
    int opset;    /* resolved from the model's opset_import for domain */
    int n_inputs;
    int *inputs; /* value ids; -1 for an omitted optional input */
    int n_outputs;
    int *outputs; /* value ids; -1 for an omitted optional output */
    int n_attrs;
    ir_attr *attrs;
    /* Values of this graph that the node's subgraphs read by name (outer
     * scope): dependencies for scheduling and lifetimes like inputs. */
    int n_implicit;
    int *implicit;
    int ep; /* provider index chosen by the partitioner */
    /* When optimization merged other nodes into this one (a fusion, a
     * folded BatchNormalization, a duplicate removed): the names of the
     * model's nodes it now computes, its own first. Empty otherwise.
     * Cross-checking reports them, fault injection matches them. */
    int n_origins;
    char **origins;
} ir_node;

typedef struct ir_value {
    char *name;
    ir_type type;
    int has_type;     /* type came from the model or inference */
    int producer;     /* node index, or -1 */
    int is_input;     /* graph input (fed at run time) */
    int is_output;    /* graph output */
    ox_tensor *init;  /* initializer or folded constant, owned by the graph */
    int outer;        /* defined in an enclosing graph (subgraph capture) */
    /* The value whose channel-blocked form this is (core/layout.h), as
     * the block_channels pass made it, or -1: captures of a run report
     * it in that value's layout and under its name. */
    int blocked_of;
} ir_value;

struct ir_graph {
    char *name;
    int n_values, cap_values;
    ir_value *values;
    int n_nodes, cap_nodes;
    ir_node *nodes;
    int n_inputs;
    int *inputs; /* value ids of graph inputs (may include initializers) */
    int n_outputs;
    int *outputs;
    ir_graph *parent;   /* enclosing graph for subgraphs */
    void *name_index;   /* ox_strmap: name -> value id */
};

typedef struct ir_opset {
    char *domain;
    int64_t version;
} ir_opset;

typedef struct ir_model {
    int64_t ir_version;
    char *producer_name;
    char *producer_version;
    int n_opsets;
    ir_opset *opsets;
    ir_graph *graph;
    /* Loaded from an optimized file (compiled set): the level it was
     * optimized at, its source model's digest, and the bytes its weights
     * point into (the file's mapping, or a copy of the caller's buffer;
     * NULL when borrowed from the caller), released with the model. */
    int compiled;
    int compiled_level;
    uint8_t source_sha256[32];
    void *backing;
    size_t backing_size;
    int backing_mapped; /* munmap rather than free */
} ir_model;

/* ---- construction ---- */
ir_graph *ir_graph_new(const char *name, ir_graph *parent);
void ir_graph_free(ir_graph *g);
void ir_model_free(ir_model *m);
/* Value id for name, creating the value when absent. */
int ir_graph_value(ir_graph *g, const char *name, ox_error *err);
int ir_graph_find(const ir_graph *g, const char *name); /* -1 when absent */
/* Appends a node; returns its index or -1. Strings are copied. */
int ir_graph_add_node(ir_graph *g, const char *name, const char *op_type, const char *domain,
                      ox_error *err);
void ir_attr_clear(ir_attr *a);
/* Drops nodes with dead[i] != 0, keeping the others' order; values they
 * produced lose their producer. Returns -1 when out of memory. */
int ir_graph_remove_nodes(ir_graph *g, const unsigned char *dead);
/* Records that node `into` now also computes node `from` (its name and
 * its own origins join into's origins; see ir_node.origins). */
int ir_node_absorb(ir_node *into, const ir_node *from, ox_error *err);
/* The node's attributes as text for people ("axis=1 pads=[1,1,1,1]"),
 * snprintf-style: returns the length the whole text needs. Long lists,
 * strings and tensors are shortened. */
size_t ir_node_format_attrs(const ir_node *n, char *buf, size_t size);
/* 1 when n is the model node `name` or computes it (origins). */
int ir_node_computes(const ir_node *n, const char *name);
void ir_type_clear(ir_type *t);
int ir_type_copy(ir_type *dst, const ir_type *src);

/* Domain canonicalisation: "ai.onnx" and "" are the same domain. */
const char *ir_canonical_domain(const char *domain);
int64_t ir_model_opset(const ir_model *m, const char *domain); /* -1 when not imported */

/* ---- attribute lookup (NULL / default when absent) ---- */
const ir_attr *ir_node_attr(const ir_node *n, const char *name);
int64_t ir_attr_int(const ir_node *n, const char *name, int64_t dflt);
float ir_attr_float(const ir_node *n, const char *name, float dflt);
const char *ir_attr_string(const ir_node *n, const char *name, const char *dflt);
/* Returns the list and its length in *count, or NULL and 0. */
const int64_t *ir_attr_ints(const ir_node *n, const char *name, size_t *count);
const float *ir_attr_floats(const ir_node *n, const char *name, size_t *count);

/* Number of inputs actually given (trailing omitted ones excluded). */
int ir_node_input_count(const ir_node *n);
static inline int ir_node_has_input(const ir_node *n, int i) {
    return i < n->n_inputs && n->inputs[i] >= 0;
}

/* ---- analysis ---- */
/* A node depends on its inputs and on the outer values its subgraphs
 * read (implicit): value k of the ir_node_dep_count(n) it reads, -1 for
 * an omitted input. */
static inline int ir_node_dep_count(const ir_node *n) { return n->n_inputs + n->n_implicit; }
static inline int ir_node_dep(const ir_node *n, int k) {
    return k < n->n_inputs ? n->inputs[k] : n->implicit[k - n->n_inputs];
}

/* Node indices in a topological order; fails with a cycle error. */
int ir_graph_toposort(const ir_graph *g, int *order, ox_error *err);
/* The same, choosing among the nodes ready to run the earliest ready of
 * the lowest class (class_of(user, node), in [0, n_classes)); with one
 * class, ir_graph_toposort's order. */
int ir_graph_toposort_by(const ir_graph *g, int *order, int n_classes,
                         int (*class_of)(void *user, int node), void *user, ox_error *err);
/* Full structural validation: duplicate names, missing producers,
 * cycles, known operators, attribute types; recurses into subgraphs. */
int ir_validate(ir_model *m, ox_error *err);
/* Fills node->implicit for nodes with subgraphs (after ir_validate). */
int ir_resolve_implicit_inputs(ir_graph *g, ox_error *err);
/* Static type and shape inference over the whole graph (best effort:
 * unknown stays unknown; contradictions are errors). */
int ir_infer_shapes(ir_graph *g, ox_error *err);

/* "node 'conv1' (Conv)" for error messages. */
const char *ir_node_label(const ir_node *n, char *buf, size_t size);

/* Makes value v a constant holding t (the graph takes t) with t's type. */
void ir_value_set_constant(ir_graph *g, int v, ox_tensor *t);

/* The most inputs (and the most of inputs or outputs) any node of g has,
 * for sizing per-node argument arrays once per graph. */
int ir_graph_max_inputs(const ir_graph *g);
int ir_graph_max_io(const ir_graph *g);

#endif
