/* Operator schemas: what an op is, independent of where it runs. Each
 * schema has a shape/type inference function shared by static inference
 * at load and by every provider at run time. Kernels live in the
 * providers (src/ep/<provider>/kernels). */
#ifndef ONYX_OPS_OP_H
#define ONYX_OPS_OP_H

#include "core/checked.h"
#include "core/error.h"
#include "core/tensor.h"
#include "ir/ir.h"

/* Inference context. At load, inputs have static facts (dims may be -1,
 * rank may be -1) and `values[i]` is set only for constants. At run time
 * every shape is concrete and values[i] is set for every host input, so
 * data-dependent shapes (Reshape, Slice, Expand...) resolve. */
typedef struct ox_infer_ctx {
    const ir_node *node;
    int n_inputs;
    const ir_type *const *inputs; /* NULL for omitted optional inputs */
    const ox_tensor *const *values;
    int n_outputs;
    ir_type *outputs; /* to fill: kind, dtype, rank, dims */
    /* Set by inference when output shapes depend on input data that is
     * not shape-like (NonZero, Unique, NMS...): the kernel then allocates
     * its outputs itself with ox_kernel_output. */
    int data_dependent;
    int runtime; /* 1 at run time: all shapes concrete */
    ox_error *err;
} ox_infer_ctx;

typedef int (*ox_infer_fn)(ox_infer_ctx *ctx);

typedef struct ox_op_schema {
    const char *domain; /* "" for ai.onnx */
    const char *name;
    int min_opset; /* first opset version onyx supports for this op */
    int max_opset; /* last one (inclusive) */
    int min_inputs, max_inputs; /* max -1: variadic */
    int min_outputs, max_outputs;
    ox_infer_fn infer;
} ox_op_schema;

/* The ONNX version of op in force at opset (its since_version), or opset
 * itself for domains ONNX does not define. */
int ox_op_since_version(const char *domain, const char *name, int opset);
/* Looks an op up for a node's domain and opset: the schema implementing
 * the operator version in force at that opset; NULL when unknown. */
const ox_op_schema *ox_op_find(const char *domain, const char *name, int opset);
/* Any version known at all (to tell "unknown op" from "unsupported opset"). */
const ox_op_schema *ox_op_find_any(const char *domain, const char *name);

/* ---- helpers for inference functions ---- */
/* Input i's type, or NULL when absent or omitted. */
const ir_type *ox_infer_in(const ox_infer_ctx *c, int i);
/* Input i's element type; UNDEFINED when absent or not known. */
ox_dtype ox_infer_in_dtype(const ox_infer_ctx *c, int i);
/* Input i's rank when it is a tensor of known rank, else -1. */
int ox_infer_in_rank(const ox_infer_ctx *c, int i);
/* Input i's value when it is at hand (constants at load, host inputs at
 * run time), of whatever kind; NULL otherwise. */
const ox_tensor *ox_infer_in_value(const ox_infer_ctx *c, int i);
/* Bad shapes are the caller's fault at run time, the model's at load. */
onyx_code ox_infer_bad_code(const ox_infer_ctx *c);
/* Sets output i to a tensor of dtype with dims (rank -1: shape unknown);
 * fails when rank exceeds OX_MAX_RANK. No-op for omitted outputs. */
int ox_infer_set_output(ox_infer_ctx *c, int i, ox_dtype dtype, const int64_t *dims, int rank);
ir_type *ox_infer_out(ox_infer_ctx *c, int i); /* NULL if output omitted */
void ox_type_set_shape(ir_type *t, ox_dtype dtype, const int64_t *dims, int rank);
void ox_type_set_unknown_shape(ir_type *t, ox_dtype dtype); /* rank -1 */
/* Output i takes input j's type and shape (unary ops). */
int ox_infer_same_as_input(ox_infer_ctx *c, int out, int in);
/* numpy broadcasting of inputs [first, first+count) into out. */
int ox_infer_broadcast(ox_infer_ctx *c, int first, int count, ox_dtype dtype, ir_type *out);
int ox_broadcast_dims(const int64_t *a, int ra, const int64_t *b, int rb, int64_t *out,
                      int *rout);
/* Normalises a possibly negative axis against rank; error names the node. */
int ox_norm_axis(ox_infer_ctx *c, int64_t axis, int rank, int *out);
/* Fails unless input i has a known rank. */
int ox_require_rank(ox_infer_ctx *c, int i, int min_rank, int max_rank);
/* Integer values of a 1-D (or scalar) constant input, as int64; fails
 * when the input is not an integer tensor. Returns 0 and sets *known=0 if
 * the value is not available (static inference). */
int ox_infer_int_list(ox_infer_ctx *c, int i, int64_t *vals, int max, int *count,
                      int *known);

int ox_infer_fail(ox_infer_ctx *c, onyx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Input checks whose messages name the input by its role (`what`). An
 * unknown element type passes the type checks: static facts may lack it.
 * Fails unless input i is present and a tensor: */
int ox_infer_need_tensor(ox_infer_ctx *c, int i, const char *what);
/* Fails when input i's element type is not one of allowed[0..n). */
int ox_infer_check_dtype(ox_infer_ctx *c, int i, const char *what, const ox_dtype *allowed, int n);
/* Whether t is float16/32/64 (or bfloat16 when allow_bf16) or unknown. */
int ox_infer_float_ok(ox_dtype t, int allow_bf16);
/* Fails unless input i's element type passes ox_infer_float_ok. */
int ox_infer_check_float(ox_infer_ctx *c, int i, const char *what, int allow_bf16);
/* Fails when inputs i and j (named a and b) differ in element type. */
int ox_infer_same_dtype(ox_infer_ctx *c, int i, int j, const char *a, const char *b);

/* Elements of a shape; -1 when the rank or any dim is unknown,
 * OX_NUMEL_OVERFLOW when the known dims multiply past int64 (no tensor
 * of that shape can exist; callers report it, see ox_infer_numel_known). */
#define OX_NUMEL_OVERFLOW (-2)
int64_t ox_infer_numel(const int64_t *dims, int rank);
/* The same, except that a zero dim makes it 0 even beside unknown ones. */
int64_t ox_infer_numel_or_zero(const int64_t *dims, int rank);
/* ox_infer_numel into *out (-1 when unknown) that fails, naming `what`
 * and the shape, when the product overflows int64. */
int ox_infer_numel_known(ox_infer_ctx *c, const int64_t *dims, int rank, const char *what,
                         int64_t *out);

/* Checked shape and attribute arithmetic: a model may set any number to
 * INT64_MAX, INT64_MIN or 2^32. Each stores the result in *out and
 * returns 0, or fails with `code` and "<op>: <what> overflows int64
 * (<a> <op> <b>)"; `what` is a printf format naming the quantity.
 * `code`: ONYX_INVALID_MODEL for attributes, ox_infer_bad_code(c) for
 * shapes that come from inputs. */
int ox_infer_add(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) __attribute__((format(printf, 6, 7)));
int ox_infer_sub(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) __attribute__((format(printf, 6, 7)));
int ox_infer_mul(ox_infer_ctx *c, onyx_code code, int64_t a, int64_t b, int64_t *out,
                 const char *what, ...) __attribute__((format(printf, 6, 7)));

/* Schema tables, one per operator family (src/ops/<family>.c). */
typedef struct ox_op_table {
    const ox_op_schema *ops;
    size_t count;
} ox_op_table;

#endif
