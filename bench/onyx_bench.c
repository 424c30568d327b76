/* Times onyx_session_run on one model: warm-up runs, then N timed runs;
 * prints the median and minimum in milliseconds as one JSON line.
 *
 * With --providers (e.g. vulkan,cpu), also prints per device provider the
 * nodes it took and its kernels, submits and copies per timed run.
 *
 * --opt-level none|basic|all sets the graph optimization level (default:
 * the library's, all), to time what the optimizer's passes gain.
 *
 * usage: onyx_bench MODEL [--threads N] [--runs N] [--warmup N] [--providers A,B]
 *                   [--opt-level LEVEL] NAME=FILE.npy ... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onyx.h"

#define MAX_INPUTS 16

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int fail(onyx_status *st) {
    fprintf(stderr, "onyx_bench: error: %s\n", onyx_status_message(st));
    onyx_status_free(st);
    return 1;
}

int main(int argc, char **argv) {
    const char *model = NULL, *names[MAX_INPUTS];
    onyx_tensor *inputs[MAX_INPUTS];
    int n_in = 0, threads = 1, runs = 20, warmup = 3;
    char *providers = NULL;
    int opt_level = -1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--providers") && i + 1 < argc) providers = argv[++i];
        else if (!strcmp(argv[i], "--opt-level") && i + 1 < argc) {
            const char *l = argv[++i];
            opt_level = !strcmp(l, "none") ? 0 : !strcmp(l, "basic") ? 1 : !strcmp(l, "all") ? 2 : -2;
            if (opt_level == -2) {
                fprintf(stderr, "onyx_bench: --opt-level must be none, basic or all\n");
                return 1;
            }
        }
        else if (strchr(argv[i], '=') && model && n_in < MAX_INPUTS) {
            char *eq = strchr(argv[i], '=');
            *eq = '\0';
            names[n_in] = argv[i];
            onyx_status *st = onyx_tensor_load(eq + 1, &inputs[n_in]);
            if (st) return fail(st);
            n_in++;
        } else if (!model) model = argv[i];
        else {
            fprintf(stderr, "usage: onyx_bench MODEL [--threads N] [--runs N] [--warmup N] NAME=FILE ...\n");
            return 1;
        }
    }
    if (!model || runs < 1) {
        fprintf(stderr, "usage: onyx_bench MODEL [--threads N] [--runs N] [--warmup N] NAME=FILE ...\n");
        return 1;
    }
    onyx_env *env;
    onyx_session_options *opts;
    onyx_session *s;
    onyx_status *st = onyx_env_create(&env);
    if (!st) st = onyx_session_options_create(&opts);
    if (!st) st = onyx_session_options_set_threads(opts, threads);
    if (!st && opt_level >= 0)
        st = onyx_session_options_set_optimization_level(opts, (onyx_opt_level)opt_level);
    const char *pnames[8];
    size_t n_prov = 0;
    for (char *save = NULL, *p = providers ? strtok_r(providers, ",", &save) : NULL; p && n_prov < 8;
         p = strtok_r(NULL, ",", &save))
        pnames[n_prov++] = p;
    if (!st && n_prov) st = onyx_session_options_set_providers(opts, pnames, n_prov);
    if (!st) st = onyx_session_create(env, model, opts, &s);
    if (st) return fail(st);
    size_t n_out = onyx_session_output_count(s);
    const char **out_names = calloc(n_out, sizeof *out_names);
    onyx_tensor **outs = calloc(n_out, sizeof *outs);
    for (size_t i = 0; i < n_out; i++) {
        onyx_value_info info;
        st = onyx_session_output_info(s, i, &info);
        if (st) return fail(st);
        out_names[i] = info.name;
    }
    double *times = calloc((size_t)runs, sizeof *times);
    onyx_provider_stats before[8] = {{0}};
    for (int r = -warmup; r < runs; r++) {
        if (r == 0)
            for (size_t p = 0; p < n_prov; p++) {
                onyx_status *e = onyx_session_provider_stats(s, pnames[p], &before[p]);
                if (e) return fail(e);
            }
        double t0 = now_ms();
        st = onyx_session_run(s, names, (const onyx_tensor *const *)inputs, (size_t)n_in, out_names,
                              outs, n_out);
        double t1 = now_ms();
        if (st) return fail(st);
        for (size_t i = 0; i < n_out; i++) {
            onyx_tensor_free(outs[i]);
            outs[i] = NULL;
        }
        if (r >= 0) times[r] = t1 - t0;
    }
    qsort(times, (size_t)runs, sizeof *times, cmp_double);
    printf("{\"runtime\": \"onyx\", \"median_ms\": %.3f, \"min_ms\": %.3f, \"runs\": %d, \"threads\": %d",
           times[runs / 2], times[0], runs, threads);
    for (size_t p = 0; p < n_prov; p++) {
        onyx_provider_stats now;
        onyx_status *e = onyx_session_provider_stats(s, pnames[p], &now);
        if (e) return fail(e);
        size_t on = 0, total = onyx_session_node_count(s);
        for (size_t i = 0; i < total; i++) on += strcmp(onyx_session_node_provider(s, i), pnames[p]) == 0;
        double r = (double)runs;
        printf(", \"%s\": {\"nodes\": %zu, \"of\": %zu, \"kernels\": %.1f, \"submits\": %.1f, "
               "\"to_host\": %.1f, \"from_host\": %.1f, \"weight_uploads_after_first_run\": %llu}",
               pnames[p], on, total, (double)(now.kernel_launches - before[p].kernel_launches) / r,
               (double)(now.submits - before[p].submits) / r,
               (double)(now.copies_to_host - before[p].copies_to_host) / r,
               (double)(now.copies_from_host - before[p].copies_from_host) / r,
               (unsigned long long)(now.weight_uploads - before[p].weight_uploads));
    }
    printf("}\n");
    free(times);
    free(outs);
    free(out_names);
    for (int i = 0; i < n_in; i++) onyx_tensor_free(inputs[i]);
    onyx_session_free(s);
    onyx_session_options_free(opts);
    onyx_env_free(env);
    return 0;
}
