/* Session creation on long graphs: times each stage of creating a session
 * for a chain of N unary nodes (Neg, which no pass removes), then the
 * public API's whole session creation and its first and second runs (the
 * first run records intermediate sizes and packs the arena).
 *
 *   graph_scale [N ...]      (default: 100000 200000 1000000)
 *
 * Each stage runs on the result of the one before, in session order:
 * load, validate (with implicit inputs), topological sort, optimizer
 * passes, shape inference, partition, plan, arena packing. "kernel init"
 * is the public API's creation time minus those stages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loader/loader.h"
#include "model_builder.h"
#include "optimizer/optimizer.h"
#include "planner/plan.h"
#include "runtime/session.h"

#define WIDTH 4

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* x -> Neg -> t0 -> Neg -> ... -> y, every value of shape [1, WIDTH]. */
static uint8_t *chain_model(long n, size_t *len) {
    mb_model *m = mb_new(13);
    int64_t d[] = {1, WIDTH};
    mb_input(m, "x", ONYX_FLOAT32, d, 2);
    mb_output(m, "y", ONYX_FLOAT32, d, 2);
    char in[32] = "x", out[32];
    for (long i = 0; i < n; i++) {
        snprintf(out, sizeof out, i == n - 1 ? "y" : "t%ld", i);
        mb_node(m, "Neg", in, out);
        memcpy(in, out, sizeof in);
    }
    uint8_t *buf = mb_serialize(m, len);
    mb_free(m);
    return buf;
}

static int report(const char *stage, double t0, int rc, const ox_error *err) {
    printf("  %-22s %9.3f s\n", stage, now() - t0);
    if (rc != 0) fprintf(stderr, "%s failed: %s\n", stage, err->msg);
    return rc;
}

/* The session's stages one by one, on our own model and providers. */
static int time_stages(const uint8_t *buf, size_t len, double *sum) {
    ox_error err = {0};
    ir_model *model = NULL;
    ox_threadpool *pool = ox_threadpool_create(1);
    ox_ep *cpu = ox_cpu_ep_create(NULL, &err);
    ox_plan plan;
    int planned = 0, rc = -1;
    double start = now(), t;
    *sum = 0;
    if (!pool || !cpu) goto done;
    t = now();
    if (report("load", t, ox_load_model(buf, len, NULL, &model, &err), &err)) goto done;
    t = now();
    if (report("validate", t,
               ir_validate(model, &err) || ir_resolve_implicit_inputs(model->graph, &err), &err))
        goto done;
    ir_graph *g = model->graph;
    int *order = malloc(((size_t)g->n_nodes + 1) * sizeof *order);
    t = now();
    rc = report("topological sort", t, order ? ir_graph_toposort(g, order, &err) : -1, &err);
    free(order);
    if (rc) goto done;
    rc = -1;
    t = now();
    if (report("optimizer passes", t, ox_optimize(model, ONYX_OPT_ALL, cpu, pool, &err), &err))
        goto done;
    t = now();
    if (report("shape inference", t, ir_infer_shapes(g, &err), &err)) goto done;
    t = now();
    if (report("partition", t, ox_partition(g, &cpu, 1, NULL, &err), &err)) goto done;
    t = now();
    if (report("plan", t, ox_plan_build(g, &cpu, 1, &plan, &err), &err)) goto done;
    planned = 1;
    *sum = now() - start; /* the stages session creation runs */
    /* what the first run records: every planned slot WIDTH floats */
    size_t *sizes = calloc((size_t)plan.n_slots + 1, sizeof *sizes);
    for (int s = 0; sizes && s < plan.n_slots; s++)
        sizes[s] = plan.slots[s].planned ? WIDTH * sizeof(float) : 0;
    int64_t sig[] = {2, 1, WIDTH};
    t = now();
    const ox_mem_plan *mem = sizes ? ox_plan_add_mem(&plan, sig, 3, sizes) : NULL;
    rc = report("arena packing", t, mem ? 0 : -1, &err);
    if (mem) printf("  %-22s %9zu bytes (%zu without reuse)\n", "arena", mem->arena_bytes,
                    mem->naive_bytes);
    ox_plan_release_mem(&plan, mem);
    free(sizes);
done:
    if (planned) ox_plan_free(&plan);
    ir_model_free(model);
    if (cpu) cpu->ops->destroy(cpu);
    ox_threadpool_free(pool);
    return rc;
}

/* The public API end to end: creation, then two runs. */
static int time_session(const uint8_t *buf, size_t len, long n, double stages) {
    onyx_env *env = NULL;
    onyx_session_options *opts = NULL;
    onyx_session *s = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (!st) st = onyx_session_options_create(&opts);
    if (!st) st = onyx_session_options_set_threads(opts, 1);
    double t = now();
    if (!st) st = onyx_session_create_from_buffer(env, buf, len, opts, &s);
    double create = now() - t;
    if (!st) {
        printf("  %-22s %9.3f s\n", "session create (API)", create);
        printf("  %-22s %9.3f s\n", "kernel init and rest", create - stages);
    }
    float x[WIDTH] = {1, -2, 3, -4};
    int64_t d[] = {1, WIDTH};
    onyx_tensor *tx = NULL;
    if (!st) st = onyx_tensor_wrap(ONYX_FLOAT32, d, 2, x, sizeof x, &tx);
    const char *in = "x", *out = "y";
    for (int r = 0; r < 2 && !st; r++) {
        onyx_tensor *ty = NULL;
        t = now();
        st = onyx_session_run(s, &in, (const onyx_tensor *const *)&tx, 1, &out, &ty, 1);
        if (!st) {
            const float *y = onyx_tensor_data(ty);
            float sign = n % 2 ? -1.0f : 1.0f;
            printf("  %-22s %9.3f s   y[0] = %g (expected %g)\n", r ? "second run" : "first run",
                   now() - t, y[0], sign * x[0]);
        }
        onyx_tensor_free(ty);
    }
    int rc = 0;
    if (st) {
        fprintf(stderr, "session: %s\n", onyx_status_message(st));
        onyx_status_free(st);
        rc = -1;
    }
    onyx_tensor_free(tx);
    onyx_session_free(s);
    onyx_session_options_free(opts);
    onyx_env_free(env);
    return rc;
}

int main(int argc, char **argv) {
    long defaults[] = {100000, 200000, 1000000};
    int count = argc > 1 ? argc - 1 : 3;
    int rc = 0;
    for (int i = 0; i < count; i++) {
        long n = argc > 1 ? strtol(argv[i + 1], NULL, 10) : defaults[i];
        if (n < 1) {
            fprintf(stderr, "usage: graph_scale [N ...] (N >= 1 nodes)\n");
            return 2;
        }
        size_t len;
        double t = now();
        uint8_t *buf = chain_model(n, &len);
        printf("chain of %ld Neg nodes (%zu-byte model, built in %.3f s)\n", n, len, now() - t);
        double stages = 0;
        if (time_stages(buf, len, &stages) != 0 || time_session(buf, len, n, stages) != 0) rc = 1;
        free(buf);
    }
    return rc;
}
