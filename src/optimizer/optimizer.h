/* Graph optimization: a pipeline of passes chosen by optimization level.
 * Every pass preserves the model's outputs exactly (up to the kernels'
 * own rounding) and keeps every value name that a subgraph or the caller
 * can see. */
#ifndef ONYX_OPTIMIZER_OPTIMIZER_H
#define ONYX_OPTIMIZER_OPTIMIZER_H

#include "core/threadpool.h"
#include "ep/ep.h"
#include "ir/ir.h"
#include "onyx.h"

typedef struct ox_pass_ctx {
    ir_model *model;
    ox_ep *cpu; /* evaluates constant subgraphs */
    ox_threadpool *pool;
    ox_error *err;
    onyx_log_level log_level; /* for passes that report what they did */
    /* 1 when the CPU is the session's only provider. Else the session's
     * other providers (none for a portable compile, which serves any):
     * a fusion into an operator of the onyx domain or com.microsoft is
     * made only where each of them runs that operator too (ox_pass_may_fuse),
     * so a device provider keeps the nodes it can take */
    int cpu_only;
    ox_ep *const *devices;
    int n_devices;
} ox_pass_ctx;

/* 1 when a pass may write a node of (domain, op_type): the CPU is the
 * only provider, or every other provider of the session has a kernel for
 * it (the fused operators the CPU runs are all the passes write). */
int ox_pass_may_fuse(const ox_pass_ctx *ctx, const char *domain, const char *op_type);

typedef struct ox_pass {
    const char *name;
    onyx_opt_level level; /* runs at this level and above */
    /* Returns the number of changes, or -1 on error. */
    int (*run)(ox_pass_ctx *ctx, ir_graph *g);
    /* Still has work on an optimized file's graph (compiled for any
     * provider): it does more when the CPU is the only provider, or it
     * cleans up after such passes. The others found their fixed point at
     * compile time and are skipped. */
    int after_compile;
} ox_pass;

int ox_optimize(ir_model *m, onyx_opt_level level, ox_ep *cpu, ox_threadpool *pool, ox_error *err);
/* The same, logging node counts (info: before and after; verbose: per
 * pass and round) at the session's log level, for a session whose
 * providers are devices (n_devices, the CPU not among them) and the CPU,
 * or, with portable set, for any providers (ox_optimize: the CPU alone). */
int ox_optimize_logged(ir_model *m, onyx_opt_level level, ox_ep *cpu, ox_ep *const *devices,
                       int n_devices, int portable, ox_threadpool *pool, onyx_log_level log_level,
                       ox_error *err);

/* Passes (src/optimizer/<name>.c). */
int ox_pass_fold_constants(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_eliminate_identity(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_prune_constants(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_conv_bn(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fold_conv_affine(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_conv_activation(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_conv_depthwise(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_eliminate_common(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fold_shapes(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_eliminate_dead(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_matmul(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fold_matmul_scale(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_gelu(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_cancel_transforms(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_layernorm(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_rmsnorm(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fuse_rotary(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_promote_float16(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_block_channels(ox_pass_ctx *ctx, ir_graph *g);
int ox_pass_fold_pad(ox_pass_ctx *ctx, ir_graph *g);

/* 1 when a graph has nodes with subgraph attributes (whose bodies refer
 * to outer values by name, so renaming passes must leave it alone). */
int ox_graph_has_subgraphs(const ir_graph *g);

#endif
