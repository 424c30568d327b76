#include "core/log.h"
#include "optimizer/optimizer.h"

static const ox_pass PASSES[] = {
    /* first: the passes after it see the float32 graph the CPU runs */
    {"promote_float16", ONYX_OPT_BASIC, ox_pass_promote_float16, 0},
    {"fold_constants", ONYX_OPT_BASIC, ox_pass_fold_constants, 0},
    {"eliminate_identity", ONYX_OPT_BASIC, ox_pass_eliminate_identity, 0},
    {"eliminate_common", ONYX_OPT_BASIC, ox_pass_eliminate_common, 0},
    {"fold_shapes", ONYX_OPT_BASIC, ox_pass_fold_shapes, 0},
    {"cancel_transforms", ONYX_OPT_BASIC, ox_pass_cancel_transforms, 0},
    {"fold_pad", ONYX_OPT_ALL, ox_pass_fold_pad, 0},
    {"fuse_conv_bn", ONYX_OPT_ALL, ox_pass_fuse_conv_bn, 0},
    {"fold_conv_affine", ONYX_OPT_ALL, ox_pass_fold_conv_affine, 0},
    {"fuse_conv_activation", ONYX_OPT_ALL, ox_pass_fuse_conv_activation, 1},
    /* after the activations are in the convolutions */
    {"fuse_conv_depthwise", ONYX_OPT_ALL, ox_pass_fuse_conv_depthwise, 1},
    {"fuse_layernorm", ONYX_OPT_ALL, ox_pass_fuse_layernorm, 0},
    {"fuse_rmsnorm", ONYX_OPT_ALL, ox_pass_fuse_rmsnorm, 1},
    {"fuse_rotary", ONYX_OPT_ALL, ox_pass_fuse_rotary, 1},
    {"fuse_gelu", ONYX_OPT_ALL, ox_pass_fuse_gelu, 1},
    {"fold_matmul_scale", ONYX_OPT_ALL, ox_pass_fold_matmul_scale, 0},
    {"fuse_matmul", ONYX_OPT_ALL, ox_pass_fuse_matmul, 1},
    /* after the fusions: it takes their FusedConvs as they are */
    {"block_channels", ONYX_OPT_ALL, ox_pass_block_channels, 1},
    {"eliminate_dead", ONYX_OPT_BASIC, ox_pass_eliminate_dead, 1},
    {"prune_constants", ONYX_OPT_BASIC, ox_pass_prune_constants, 1},
};

int ox_graph_has_subgraphs(const ir_graph *g) {
    for (int i = 0; i < g->n_nodes; i++)
        for (int a = 0; a < g->nodes[i].n_attrs; a++)
            if (g->nodes[i].attrs[a].g || g->nodes[i].attrs[a].graphs) return 1;
    return 0;
}

int ox_optimize(ir_model *m, onyx_opt_level level, ox_ep *cpu, ox_threadpool *pool, ox_error *err) {
    return ox_optimize_logged(m, level, cpu, NULL, 0, 0, pool, ONYX_LOG_ERROR, err);
}

int ox_pass_may_fuse(const ox_pass_ctx *ctx, const char *domain, const char *op_type) {
    if (ctx->cpu_only) return 1;
    if (ctx->n_devices == 0) return 0; /* portable: any provider may load it */
    ir_node probe = {.op_type = (char *)op_type, .domain = (char *)domain, .opset = 1, .ep = -1};
    for (int i = 0; i < ctx->n_devices; i++)
        if (!ctx->devices[i]->ops->find_kernel(ctx->devices[i], &probe)) return 0;
    return 1;
}

int ox_optimize_logged(ir_model *m, onyx_opt_level level, ox_ep *cpu, ox_ep *const *devices,
                       int n_devices, int portable, ox_threadpool *pool, onyx_log_level log_level,
                       ox_error *err) {
    ox_pass_ctx ctx = {m, cpu, pool, err, log_level, !portable && n_devices == 0,
                       portable ? NULL : devices, portable ? 0 : n_devices};
    int nodes_before = m->graph->n_nodes;
    /* an optimized file at this level or above: only what the providers
     * of this session add (nothing for a portable compile) */
    int compiled = m->compiled && m->compiled_level >= (int)level;
    if (compiled && portable) return 0;
    /* Passes enable each other (folding exposes identities and vice
     * versa); a few rounds reach the fixed point on real models. */
    for (int round = 0; round < 4; round++) {
        int changes = 0;
        for (size_t i = 0; i < sizeof PASSES / sizeof PASSES[0]; i++) {
            if (PASSES[i].level > level || (compiled && !PASSES[i].after_compile)) continue;
            int before = m->graph->n_nodes;
            int c = PASSES[i].run(&ctx, m->graph);
            if (c > 0)
                ox_log(log_level, ONYX_LOG_VERBOSE, "optimizer round %d: %s made %d changes, nodes %d -> %d",
                       round + 1, PASSES[i].name, c, before, m->graph->n_nodes);
            if (c < 0) {
                ox_error_prefix(err, "optimizer pass %s", PASSES[i].name);
                return -1;
            }
            changes += c;
        }
        if (!changes) break;
    }
    static const char *const LEVELS[] = {"none", "basic", "all"};
    ox_log(log_level, ONYX_LOG_INFO, "optimizer (level %s): %d nodes -> %d nodes",
           LEVELS[level >= ONYX_OPT_NONE && level <= ONYX_OPT_ALL ? level : ONYX_OPT_ALL], nodes_before,
           m->graph->n_nodes);
    return 0;
}
