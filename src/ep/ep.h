/* Execution provider interface. A provider owns a device (host = 0), an
 * allocator, copies between its device and the host, and a table of
 * kernels. The partitioner asks each provider, in priority order, whether
 * it supports a node with the node's input types; the executor then calls
 * the chosen provider's kernel. */
#ifndef ONYX_EP_EP_H
#define ONYX_EP_EP_H

#include <stddef.h>

#include "core/error.h"
#include "core/tensor.h"
#include "core/stop.h"
#include "core/threadpool.h"
#include "ir/ir.h"

#define OX_DEVICE_HOST 0

typedef struct ox_kernel_ctx ox_kernel_ctx;

/* Everything a kernel sees for one node execution. Inputs and outputs
 * live on the provider's device. outputs[i] are already allocated with
 * the shapes inference produced, except when inference marked the node
 * data-dependent: then outputs[i] is NULL and the kernel must call
 * ox_kernel_output for each output it produces. */
struct ox_kernel_ctx {
    const ir_node *node;
    int n_inputs;
    ox_tensor *const *inputs; /* NULL for omitted optional inputs */
    int n_outputs;
    ox_tensor **outputs; /* NULL for omitted optional outputs */
    ox_threadpool *pool;
    void *state; /* from ox_kernel_def.init, or NULL */
    struct ox_ep *ep; /* the provider running this kernel */
    /* The run's stream on this provider (from ox_ep_ops.run_begin), into
     * which a device kernel records its work; NULL for providers without
     * one and outside a run. */
    void *stream;
    ox_error *err;
    void *exec; /* executor internals behind ox_kernel_output */
    /* Polled by loops that can run long on small inputs (and passed to
     * gemm): nonzero once the run is cancelled or out of time. Safe from
     * worker threads; NULL outside a run (constant folding). */
    const ox_stop *stop;
    /* Runs a subgraph attribute (If/Loop/Scan); set by the executor. */
    int (*run_subgraph)(ox_kernel_ctx *ctx, const ir_graph *g, ox_tensor *const *inputs,
                        int n_inputs, ox_tensor **outputs, int n_outputs);
};

/* Allocates output i with this type and shape (or returns it when it is
 * already allocated with exactly that shape). NULL with ctx->err set on
 * failure. */
ox_tensor *ox_kernel_output(ox_kernel_ctx *ctx, int i, ox_dtype dtype, const int64_t *dims,
                            int rank);
/* Stores a ready-made value (sequence, optional, owned tensor) as output
 * i; the executor takes ownership. */
int ox_kernel_set_output(ox_kernel_ctx *ctx, int i, ox_tensor *value);
int ox_kernel_fail(ox_kernel_ctx *ctx, onyx_code code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* For device kernels: this node cannot run on the device after all, for
 * a reason found only at run time (a tensor, its shape now known, larger
 * than one device buffer; a pipeline the driver would not build). The
 * executor then runs the node with the CPU provider: it copies the device
 * inputs to the host, runs the CPU kernel, copies the outputs back to
 * where the plan wants them, logs a warning with this reason the first
 * time per node, and counts it in the provider's stats (cpu_fallbacks).
 * Work the kernel recorded before declining stays ordered before the
 * CPU's result on the stream, so it may decline at any point, provided it
 * never writes its inputs. Returns -1, which the kernel returns. Outside a
 * planned run it is a plain failure. */
int ox_kernel_decline(ox_kernel_ctx *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Nonzero when the run must stop (cancelled through its run options, or
 * past its time limit), with ctx->err saying why and where; the kernel
 * then frees what it holds and returns -1. Loop and Scan call it between
 * iterations. Calling thread only: loops on worker threads poll ctx->stop
 * instead and simply return early. Cheap: an atomic load and a coarse
 * clock read. */
int ox_kernel_should_stop(ox_kernel_ctx *ctx);
/* Iterating kernels (Loop, Scan, SequenceMap) say which iteration runs,
 * so a stop inside the body names it; -1 when not iterating. */
void ox_kernel_set_iteration(ox_kernel_ctx *ctx, int64_t iteration);

typedef int (*ox_kernel_fn)(ox_kernel_ctx *ctx);

struct ox_artefacts;

/* What a kernel's init sees: the node, its constant inputs (consts[i] set
 * for a constant input i) and, when the session has one, the artefact
 * file of this model on this machine (src/format/artefacts.h), where
 * init finds what an earlier session computed (prepacked weights) and
 * adds what it computes; NULL otherwise. */
typedef struct ox_kernel_init {
    const ir_node *node;
    const ox_tensor *const *consts;
    int n_inputs;
    struct ox_artefacts *artefacts;
    const char *key; /* names the node in the artefacts: its first output's name */
    /* the first output's type as inference left it (dims -1 where not
     * known until run time), or NULL: a kernel may choose its variant by
     * the sizes it will see, and must still run any other */
    const ir_type *out_type;
} ox_kernel_init;

typedef struct ox_kernel_def {
    const char *domain; /* "" for ai.onnx */
    const char *name;
    int min_opset, max_opset;
    ox_kernel_fn compute;
    /* Optional: 1 if this kernel handles these input types/shapes. NULL
     * means any type the op allows. Shapes may be partly unknown. */
    int (*supports)(const ir_node *node, const ir_type *const *inputs, int n_inputs);
    /* Optional: per-node state built once at session creation (e.g.
     * prepacked weights). */
    int (*init)(const struct ox_kernel_init *in, void **state, ox_error *err);
    void (*release)(void *state);
    /* Optional: which variant init chose for this node, for people
     * ("im2col gemm, avx2"); a static string. */
    const char *(*describe)(const void *state);
} ox_kernel_def;

typedef struct ox_kernel_table {
    const ox_kernel_def *kernels;
    size_t count;
} ox_kernel_table;

typedef struct ox_ep ox_ep;

/* A device fault: the device was lost, ran out of memory, or stopped
 * answering (a fence wait timed out). Not a fault: a bad input, an index
 * out of range, a node the provider declined. */
typedef struct ox_ep_fault {
    uint64_t count; /* faults the provider has seen, this one included */
    const char *kind; /* "device lost", "out of device memory", "timeout" */
    /* the node whose dispatch failed (NULL when the fault names none: an
     * allocation, a copy); only meaningful while the session lives */
    const ir_node *node;
    int injected; /* ONYX_VK_INJECT-style testing aid, not the device */
    char message[512];
} ox_ep_fault;

typedef struct ox_ep_ops {
    /* 1 if the provider will run this node with these input types. */
    int (*supports)(ox_ep *ep, const ir_node *node, const ir_type *const *inputs, int n_inputs);
    const ox_kernel_def *(*find_kernel)(ox_ep *ep, const ir_node *node);
    /* Optional (NULL: none). Bit k set: the provider's kernel for this
     * node reads input k on the host (a shape, axes, a count: values that
     * shape inference and the kernel's set-up need) although the node runs
     * on the device; the planner keeps such inputs in host memory instead
     * of copying them over. Inputs past 31 are never host-read. */
    uint32_t (*host_inputs)(ox_ep *ep, const ir_node *node);
    /* Optional (NULL: every node is). Whether this node alone repays the
     * copies that placing it on the device may cost (a convolution or a
     * matrix product does; an Add does not). The partitioner moves every
     * group of connected device nodes without such a node back to the
     * CPU, so a light node between CPU nodes is no island of two copies. */
    int (*worth_placing)(ox_ep *ep, const ir_node *node);
    /* Optional (NULL: never). 1 when this node's output 0 is exactly the
     * bytes of its input 0 under another shape (Reshape, Flatten, Squeeze,
     * Unsqueeze, Identity on a tensor): the planner may then make the
     * output a view of the input's memory, and the executor skips the
     * kernel. A view stays read-only like every value; the input's block
     * lives until the view's last reader. */
    int (*output_views_input)(ox_ep *ep, const ir_node *node);
    /* Run lifecycle (both optional, NULL for providers that compute
     * synchronously). run_begin makes the stream one run records its work
     * into (NULL with err set on failure); kernels find it in ctx->stream.
     * Recorded work runs later, at the stream's synchronization points: a
     * copy to the host, a kernel reading a result back, run_end. run_end
     * waits for everything recorded, reports a failure the device found
     * (an index out of range) through err, and releases the stream; it is
     * called once for every stream run_begin made, failed run or not. */
    void *(*run_begin)(ox_ep *ep, ox_error *err);
    int (*run_end)(ox_ep *ep, void *stream, ox_error *err);
    /* Memory for one tensor. With a stream, the block may be one the run
     * freed earlier (reuse is safe: a stream's work runs in order), and
     * free may hand it back only once the device is done with it. With
     * stream NULL (weights kept across runs), plain allocation. */
    void *(*alloc)(ox_ep *ep, void *stream, size_t bytes);
    void (*free)(ox_ep *ep, void *stream, void *ptr);
    /* Device arenas (the first three together, or none: then each device
     * slot comes from alloc). Once a run has shown the sizes, the memory
     * plan packs the provider's intermediates into one block per run, as
     * it packs the host's. arena_new gives the run whose stream it is
     * passed a block of at least `bytes` (one the stream kept from an
     * earlier run, or a new one, made after freeing what the stream keeps
     * for reuse, which the arena replaces); NULL with err set when the
     * device cannot, and the run allocates per tensor instead (no fault
     * is recorded). arena_free hands it back at the end of that run,
     * before run_end: the provider may keep it for the stream's next run
     * and must not reuse or release it before the device is done with the
     * run's work (with stream NULL, at once). arena_view gives the data
     * pointer of the `bytes` at `offset` into it (a multiple of
     * arena_align(ep), a power of two; 64 when the op is NULL). A view
     * needs no release: `storage` is view_bytes of the run's memory, owned
     * by that slot for the run, where the provider may describe the view
     * (a buffer handle and an offset) and return a pointer to it. Blocks
     * of the arena serve one slot after another within a run, in step
     * order, so a provider with deferred work must order copy_from_host
     * after recorded work that still reads those bytes. */
    void *(*arena_new)(ox_ep *ep, void *stream, size_t bytes, ox_error *err);
    void (*arena_free)(ox_ep *ep, void *stream, void *arena);
    void *(*arena_view)(ox_ep *ep, void *arena, size_t offset, size_t bytes, void *storage);
    size_t (*arena_align)(ox_ep *ep);
    size_t view_bytes;
    /* Weights in a compact form (both optional). reads_compact: 1 when
     * this node's kernel reads its input k in the provider's compact form
     * as well as in full. The planner asks it of every node reading a
     * weight's device copy; when all say yes, upload_weight makes that copy
     * with `compact` set, and the provider may then store the weight
     * compactly where its device allows and every value survives exactly
     * (Vulkan: float32 weights that float16 holds, as float16). Either
     * way upload_weight returns data for a tensor of the host tensor's
     * type and shape, made outside any run and freed with free(ep, NULL,
     * data); copy_to_host of it gives the host tensor's bytes back. NULL
     * with err set on failure. Without upload_weight, alloc and
     * copy_from_host make the copy. */
    int (*reads_compact)(ox_ep *ep, const ir_node *node, int input);
    void *(*upload_weight)(ox_ep *ep, const ox_tensor *host, int compact, ox_error *err);
    /* Optional (NULL: none). Bit k set: the provider may read input k of
     * this node after the node ran, until the run's end (a device-side
     * index check naming the bad value once the work is waited for); the
     * planner keeps that slot's bytes unshared until then. */
    uint32_t (*inputs_read_late)(ox_ep *ep, const ir_node *node);
    /* Copies. With a stream, copy_to_host first waits for the stream's
     * recorded work (a synchronization point) and copy_from_host may be
     * recorded (src is read before it returns). Stream NULL: both
     * complete before returning. */
    int (*copy_to_host)(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                        ox_error *err);
    int (*copy_from_host)(ox_ep *ep, void *stream, void *dst, const void *src, size_t bytes,
                          ox_error *err);
    /* Device faults (all four optional; NULL: the device never fails as
     * a whole). fault_count: faults seen so far; the session snapshots it
     * before a run and, when the run fails and the count moved (or the
     * device is still unusable), completes the run on the CPU
     * (runtime/recover.c). last_fault: the latest; returns 1 while the
     * device is unusable until recover. recover: waits until no run uses
     * the device, calls drop(user) so the caller frees what it keeps
     * there (resident weights), and remakes the device; nothing when no
     * fault happened since the last recovery. Fails when the device
     * cannot be remade. device_key: a file-name-safe string naming the
     * device and driver (vendor, device, driver version, pipeline-cache
     * UUID), for caches kept per device. */
    uint64_t (*fault_count)(ox_ep *ep);
    int (*last_fault)(ox_ep *ep, ox_ep_fault *out);
    int (*recover)(ox_ep *ep, void (*drop)(void *user, ox_ep *ep), void *user, ox_error *err);
    const char *(*device_key)(ox_ep *ep);
    /* Optional: the provider's counters (onyx_provider_stats). */
    void (*get_stats)(ox_ep *ep, onyx_provider_stats *out);
    void (*destroy)(ox_ep *ep);
    /* Optional: what the session logs once, at info level, when it
     * creates the provider (e.g. what a driver denylist disabled); NULL
     * when there is nothing to say. Owned by the provider. */
    const char *(*notice)(ox_ep *ep);
} ox_ep_ops;

struct ox_ep {
    const char *name;
    int device; /* OX_DEVICE_HOST for providers that compute on host memory */
    const ox_ep_ops *ops;
    void *impl;
};

/* The ONNX operators whose output 0 is input 0's bytes reshaped; what
 * most providers answer for output_views_input. */
int ox_op_output_is_reshape(const ir_node *node);

/* Shared kernel lookup over tables, by domain, op and opset: the first
 * kernel in table order whose operator versions cover the node. */
const ox_kernel_def *ox_kernel_lookup(const ox_kernel_table *tables, size_t n_tables,
                                      const ir_node *node);

/* The same lookup through a hash of (domain, op), for providers with many
 * kernels: a graph of a million nodes looks every node up at placement and
 * again at kernel set-up. Built once when the provider is created, then
 * read only, so any number of threads may search it. */
typedef struct ox_kernel_index {
    struct ox_strmap *heads;   /* "domain\x1fop" -> first kernel with that key */
    const ox_kernel_def **defs; /* all kernels, in table order */
    int *next;                  /* next kernel with the same key, or -1 */
    const ox_kernel_table *tables;
    size_t n_tables;
} ox_kernel_index;

int ox_kernel_index_build(ox_kernel_index *ix, const ox_kernel_table *tables, size_t n_tables,
                          ox_error *err);
const ox_kernel_def *ox_kernel_index_find(const ox_kernel_index *ix, const ir_node *node);
void ox_kernel_index_free(ox_kernel_index *ix);

/* Options the caller gave one provider, as strings (ep_options.c). */
typedef struct ox_ep_options {
    int n;
    const char *const *keys;
    const char *const *values;
    /* the session's cache folder (onyx_session_options_set_cache_dir and
     * its defaults), where a provider keeps what it saves per device (the
     * Vulkan pipeline cache); NULL when caching is off */
    const char *cache_dir;
} ox_ep_options;

/* The value of `key`, or NULL. */
const char *ox_ep_option(const ox_ep_options *opts, const char *key);
/* Fails naming the provider, the unknown key and the known ones when an
 * option is not among `known`. Every factory calls it first. */
int ox_ep_options_allow(const ox_ep_options *opts, const char *provider, const char *const *known,
                        int n_known, ox_error *err);

/* Provider constructors; opts may be NULL (no options). */
ox_ep *ox_cpu_ep_create(const ox_ep_options *opts, ox_error *err);
/* Test-only provider on its own simulated device (see ep/testing). */
ox_ep *ox_test_ep_create(const ox_ep_options *opts, ox_error *err);

#endif
