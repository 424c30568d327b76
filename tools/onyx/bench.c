/* onyx bench: times session creation and runs of one model and reports
 * the process's peak resident memory; bench/compare reads its --json line
 * to set onyx beside ONNX Runtime. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void usage_bench(void) {
    printf("usage: onyx bench [options] MODEL [INPUT...]\n"
           "\n"
           "Times MODEL: session creation, then --warmup untimed runs and --runs\n"
           "timed ones on the same inputs; prints the creation time, the median,\n"
           "min, max and mean latency, and the peak resident memory of the process\n"
           "(VmHWM) with its growth over the resident memory at start. With a device\n"
           "provider, its nodes and its kernels, submits and copies per timed run.\n"
           "\n"
           "INPUT is NAME=FILE (.npy or TensorProto .pb), or FILE alone for a model\n"
           "with one input, as with --input. Inputs not given are generated: floats\n"
           "seeded in [0, 1), integers and booleans zero; open dimensions take their\n"
           "--dim value, else 1.\n"
           "\n"
           "options:\n"
           "  --runs N             timed runs (default 20)\n"
           "  --warmup N           untimed runs before them (default 3)\n"
           "  --threads N          intra-op threads (default 0: one per core)\n"
           "  --providers A,B      execution providers in priority order, with options\n"
           "                       as NAME:KEY=VALUE (see 'onyx run --help')\n"
           "  --opt-level LEVEL    graph optimization: none, basic or all\n"
           "  --input NAME=FILE    an input from a file (same as a positional INPUT)\n"
           "  --dim NAME=SIZE      size of the symbolic dimension NAME in generated inputs\n"
           "  --seed N             seed for generated floats (default 0)\n"
           "  --profile N          after the timed runs, as many more with node timing:\n"
           "                       time per operator type and the N slowest nodes\n"
           "  --json               print one JSON object instead of text\n"
           "  -h, --help           show this help\n");
}

typedef struct bench_args {
    cli_session_args common;
    const char *model;
    int runs, warmup, json, profile;
} bench_args;

static int parse_count(const char *opt, const char *v, int min, int *out) {
    if (cli_parse_int(v, out) != 0 || *out < min)
        return cli_error("bench: %s expects an integer of at least %d, got '%s'", opt, min, v);
    return CLI_OK;
}

static int parse_args(int argc, char **argv, bench_args *a) {
    memset(a, 0, sizeof *a);
    cli_session_args_init(&a->common);
    a->runs = 20;
    a->warmup = 3;
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v = NULL;
        int m;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (!a->model) a->model = arg;
            else if (cli_add_input(&a->common, arg) != CLI_OK) return CLI_FAIL;
            continue;
        }
        if (cli_is_help(arg)) {
            usage_bench();
            return -2;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
        } else if (strcmp(arg, "--json") == 0) {
            a->json = 1;
        } else if ((m = cli_session_option("bench", argc, argv, &i, &a->common)) != 0) {
            if (m < 0) return CLI_FAIL;
        } else if ((m = cli_option_value(argc, argv, &i, "--runs", &v)) != 0) {
            if (m < 0 || parse_count("--runs", v, 1, &a->runs) != CLI_OK) return CLI_FAIL;
        } else if ((m = cli_option_value(argc, argv, &i, "--profile", &v)) != 0) {
            if (m < 0 || parse_count("--profile", v, 1, &a->profile) != CLI_OK) return CLI_FAIL;
        } else if ((m = cli_option_value(argc, argv, &i, "--warmup", &v)) != 0) {
            if (m < 0 || parse_count("--warmup", v, 0, &a->warmup) != CLI_OK) return CLI_FAIL;
        } else {
            return cli_error("bench: unknown option '%s' (see 'onyx bench --help')", arg);
        }
    }
    if (!a->model) return cli_error("bench: no model given (see 'onyx bench --help')");
    if (a->json && a->profile) return cli_error("bench: --profile prints text; it cannot go with --json");
    return CLI_OK;
}

/* A "VmXXX:   1234 kB" field of /proc/self/status in bytes; -1 where the
 * system has no such file (memory is then reported as unknown). */
static int64_t proc_status_bytes(const char *field) {
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    size_t n = strlen(field);
    int64_t bytes = -1;
    while (fgets(line, sizeof line, f)) {
        long long kb;
        if (strncmp(line, field, n) == 0 && line[n] == ':' && sscanf(line + n + 1, "%lld", &kb) == 1) {
            bytes = (int64_t)kb * 1024;
            break;
        }
    }
    fclose(f);
    return bytes;
}

static double mib(int64_t bytes) { return bytes < 0 ? -1.0 : (double)bytes / (1024.0 * 1024.0); }

/* A JSON string; the model path is the caller's and may hold anything. */
static void json_string(cli_buf *b, const char *s) {
    cli_buf_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') cli_buf_printf(b, "\\%c", *p);
        else if (*p < 0x20 || *p == 0x7f) cli_buf_printf(b, "\\u%04x", *p);
        else cli_buf_printf(b, "%c", *p);
    }
    cli_buf_printf(b, "\"");
}

typedef struct bench_result {
    double create_ms, median_ms, min_ms, max_ms, mean_ms;
    int64_t rss_start, peak_rss;
    cli_provider_use before[8], after[8];
    size_t n_prov;
} bench_result;

static void print_text(const bench_args *a, const bench_result *r, const onyx_session *s) {
    char *model = cli_escape(a->model);
    printf("model: %s\n", model);
    free(model);
    if (a->common.has_threads && a->common.threads > 0) printf("threads: %d\n", a->common.threads);
    else printf("threads: one per core\n");
    printf("session create: %.2f ms\n", r->create_ms);
    printf("latency over %d runs after %d warm-up: median %.3f ms, min %.3f ms, max %.3f ms, "
           "mean %.3f ms\n",
           a->runs, a->warmup, r->median_ms, r->min_ms, r->max_ms, r->mean_ms);
    if (r->peak_rss < 0) {
        printf("peak resident memory: unknown (no /proc/self/status)\n");
    } else {
        char peak[32], growth[32], start[32];
        cli_human_bytes(peak, sizeof peak, r->peak_rss);
        cli_human_bytes(growth, sizeof growth, r->peak_rss - r->rss_start);
        cli_human_bytes(start, sizeof start, r->rss_start);
        printf("peak resident memory: %s (VmHWM), %s above the %s at start\n", peak, growth, start);
    }
    double runs = (double)a->runs;
    for (size_t p = 0; p < r->n_prov; p++) {
        const onyx_provider_stats *b = &r->before[p].stats, *e = &r->after[p].stats;
        printf("provider %s: %zu of %zu nodes; per timed run %.1f kernels, %.1f submits, %.1f "
               "copies to the host and %.1f from it; %llu weight uploads after the first run; "
               "%.1f nodes declined to the CPU; %llu bytes held on the device\n",
               r->after[p].name, r->after[p].nodes, onyx_session_node_count(s),
               (double)(e->kernel_launches - b->kernel_launches) / runs,
               (double)(e->submits - b->submits) / runs,
               (double)(e->copies_to_host - b->copies_to_host) / runs,
               (double)(e->copies_from_host - b->copies_from_host) / runs,
               (unsigned long long)(e->weight_uploads - b->weight_uploads),
               (double)(e->cpu_fallbacks - b->cpu_fallbacks) / runs,
               (unsigned long long)e->device_bytes);
    }
}

static void print_json(const bench_args *a, const bench_result *r, const onyx_session *s) {
    cli_buf b = {0};
    cli_buf_printf(&b, "{\"runtime\": \"onyx\", \"version\": ");
    json_string(&b, onyx_version());
    cli_buf_printf(&b, ", \"model\": ");
    json_string(&b, a->model);
    cli_buf_printf(&b,
                   ", \"threads\": %d, \"runs\": %d, \"warmup\": %d, \"create_ms\": %.3f, "
                   "\"median_ms\": %.3f, \"min_ms\": %.3f, \"max_ms\": %.3f, \"mean_ms\": %.3f, "
                   "\"peak_rss_mib\": %.1f, \"rss_start_mib\": %.1f, \"rss_growth_mib\": %.1f",
                   a->common.has_threads ? a->common.threads : 0, a->runs, a->warmup, r->create_ms,
                   r->median_ms, r->min_ms, r->max_ms, r->mean_ms, mib(r->peak_rss),
                   mib(r->rss_start),
                   r->peak_rss < 0 || r->rss_start < 0 ? -1.0 : mib(r->peak_rss - r->rss_start));
    cli_buf_printf(&b, ", \"providers\": {");
    double runs = (double)a->runs;
    for (size_t p = 0; p < r->n_prov; p++) {
        const onyx_provider_stats *o = &r->before[p].stats, *e = &r->after[p].stats;
        cli_buf_printf(&b, "%s", p ? ", " : "");
        json_string(&b, r->after[p].name);
        cli_buf_printf(&b,
                       ": {\"nodes\": %zu, \"of\": %zu, \"kernels\": %.1f, \"submits\": %.1f, "
                       "\"to_host\": %.1f, \"from_host\": %.1f, \"weight_uploads_after_first_run\": "
                       "%llu, \"cpu_fallbacks\": %.1f, \"device_bytes\": %llu}",
                       r->after[p].nodes, onyx_session_node_count(s),
                       (double)(e->kernel_launches - o->kernel_launches) / runs,
                       (double)(e->submits - o->submits) / runs,
                       (double)(e->copies_to_host - o->copies_to_host) / runs,
                       (double)(e->copies_from_host - o->copies_from_host) / runs,
                       (unsigned long long)(e->weight_uploads - o->weight_uploads),
                       (double)(e->cpu_fallbacks - o->cpu_fallbacks) / runs,
                       (unsigned long long)e->device_bytes);
    }
    cli_buf_printf(&b, "}}\n");
    fputs(b.s, stdout);
    cli_buf_free(&b);
}

/* Runs once (under run options ro, or none); the outputs are dropped at
 * once so that every run allocates them as a caller's run would. */
static int run_once_with(onyx_session *s, onyx_run_options *ro, const cli_io *io,
                         onyx_tensor **outs, double *ms) {
    double t0 = cli_now_ms();
    onyx_status *st = onyx_session_run_with_options(
        s, ro, io->in_names, (const onyx_tensor *const *)io->inputs, io->n_in, io->out_names, outs,
        io->n_out);
    *ms = cli_now_ms() - t0;
    for (size_t i = 0; i < io->n_out; i++) {
        onyx_tensor_free(outs[i]);
        outs[i] = NULL;
    }
    return st ? cli_status(st) : CLI_OK;
}

static int run_once(onyx_session *s, const cli_io *io, onyx_tensor **outs, double *ms) {
    return run_once_with(s, NULL, io, outs, ms);
}

typedef struct profile_user {
    const cli_io *io;
    onyx_tensor **outs;
} profile_user;

static int profiled_run(onyx_session *s, onyx_run_options *ro, void *user) {
    profile_user *u = user;
    double ignored;
    return run_once_with(s, ro, u->io, u->outs, &ignored);
}

int cmd_bench(int argc, char **argv) {
    bench_result r = {0};
    /* before anything of onyx is loaded: the growth is what the model costs */
    r.rss_start = proc_status_bytes("VmRSS");
    bench_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK) {
        cli_session_args_free(&a.common);
        return rc == -2 ? CLI_OK : CLI_FAIL;
    }
    onyx_env *env = NULL;
    onyx_session *s = NULL;
    onyx_session_options *opts = NULL;
    onyx_tensor **outs = NULL;
    double *ms = NULL;
    cli_io io = {0};

    onyx_status *st = onyx_session_options_create(&opts);
    if (st) {
        rc = cli_status(st);
        goto out;
    }
    if ((rc = cli_apply_session_args("bench", &a.common, opts)) != CLI_OK) goto out;
    double t0 = cli_now_ms();
    if ((rc = cli_open_session(a.model, opts, &env, &s)) != CLI_OK) goto out;
    r.create_ms = cli_now_ms() - t0;
    if ((rc = cli_prepare_io("bench", s, &a.common, CLI_FILL_ZERO_INTS, &io)) != CLI_OK) goto out;
    outs = calloc(io.n_out + 1, sizeof *outs);
    ms = calloc((size_t)a.runs, sizeof *ms);
    if (!outs || !ms) {
        rc = cli_error("out of memory");
        goto out;
    }
    for (int w = 0; w < a.warmup && rc == CLI_OK; w++) {
        double ignored;
        rc = run_once(s, &io, outs, &ignored);
    }
    r.n_prov = cli_device_providers(env, s, r.before, 8);
    for (int i = 0; i < a.runs && rc == CLI_OK; i++) rc = run_once(s, &io, outs, &ms[i]);
    if (rc != CLI_OK) goto out;
    cli_device_providers(env, s, r.after, 8);
    r.peak_rss = proc_status_bytes("VmHWM");

    double sum = 0;
    for (int i = 0; i < a.runs; i++) sum += ms[i];
    qsort(ms, (size_t)a.runs, sizeof *ms, cli_cmp_double);
    int n = a.runs;
    r.median_ms = n % 2 ? ms[n / 2] : (ms[n / 2 - 1] + ms[n / 2]) / 2;
    r.min_ms = ms[0];
    r.max_ms = ms[n - 1];
    r.mean_ms = sum / n;
    if (a.json) print_json(&a, &r, s);
    else print_text(&a, &r, s);
    if (a.profile) {
        fflush(stdout);
        profile_user u = {&io, outs};
        rc = cli_profile_runs(s, a.runs, a.profile, profiled_run, &u);
    }

out:
    free(ms);
    free(outs);
    cli_io_free(&io);
    if (s) onyx_session_free(s);
    if (env) onyx_env_free(env);
    if (opts) onyx_session_options_free(opts);
    cli_session_args_free(&a.common);
    if (rc == CLI_OK) cli_flush_notes();
    return rc;
}
