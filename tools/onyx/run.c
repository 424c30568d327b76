/* onyx run: runs a model once on inputs from files or on reproducible
 * random data, prints a summary of each output and optionally saves the
 * outputs as .npy. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cli.h"

void usage_run(void) {
    printf("usage: onyx run [options] MODEL\n"
           "\n"
           "Runs MODEL once. Inputs not given with --input get random data from a\n"
           "seeded generator: floats uniform in [0, 1), integers in [0, 10), random\n"
           "booleans; symbolic dimensions take their --dim value, others that are\n"
           "unknown are set to 1. One summary line is printed per output.\n"
           "\n"
           "options:\n"
           "  --input NAME=FILE    bind input NAME to a .npy or TensorProto .pb file\n"
           "                       (NAME= may be left out when the model has one input)\n"
           "  --output-dir DIR     save each output as DIR/<output name>.npy, with\n"
           "                       characters other than letters, digits, '.', '_'\n"
           "                       and '-' replaced by '_' (without it nothing is saved)\n"
           "  --dim NAME=SIZE      size of the symbolic dimension NAME in random inputs\n"
           "  --seed N             seed for random inputs (default 0)\n"
           "  --threads N          intra-op threads (default 0: one per core)\n"
           "  --providers A,B      execution providers in priority order, each with\n"
           "                       options as NAME:KEY=VALUE[:KEY=VALUE] (vulkan:\n"
           "                       device=N, disable=int64+fp16+subgroup+hostmap,\n"
           "                       place=dense|all, pipeline_cache=FILE, max_buffer=BYTES,\n"
           "                       limits=NAME=N+NAME=N, dispatch_budget=N,\n"
           "                       fence_timeout_ms=N)\n"
           "  --opt-level LEVEL    graph optimization: none, basic or all\n"
           "  --log-level LEVEL    diagnostics on stderr: error (default), warning,\n"
           "                       info (placement, memory plan) or verbose\n"
           "  --time-limit-ms N    stop the run after N milliseconds (default 0: none)\n"
           "  --repeat N           after the first run, run N more times on the same\n"
           "                       inputs and print their min and median latency\n"
           "  --verify N           shadow runs: the first N runs (of 1 + --repeat) also\n"
           "                       run on the reference (CPU, no optimization) and must\n"
           "                       match it within 1e-4 + 1e-3 * |ref| per element; a\n"
           "                       mismatch is reported with the first divergent node,\n"
           "                       the reference's outputs are used, and that node no\n"
           "                       longer runs on its device (see onyx check)\n"
           "  --memory-limit BYTES cap the run-time memory of the session, weights\n"
           "                       excluded (default 0: unlimited)\n"
           "  -h, --help           show this help\n");
}

typedef struct run_args {
    cli_session_args common; /* --input, --dim, --seed, --threads, --providers, --opt-level */
    const char *model;
    const char *out_dir;
    int log_level; /* -1: errors only */
    uint64_t time_limit_ms; /* 0: none */
    uint64_t memory_limit;  /* 0: unlimited */
    uint64_t repeat;        /* extra timed runs after the first */
    uint64_t verify;        /* shadow runs: the first N runs are checked */
} run_args;

static int parse_args(int argc, char **argv, run_args *a) {
    memset(a, 0, sizeof *a);
    cli_session_args_init(&a->common);
    a->log_level = -1;
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        const char *v = NULL;
        int m;
        if (only_positional || arg[0] != '-' || arg[1] == '\0') {
            if (a->model) return cli_error("run: more than one model given ('%s' and '%s')",
                                           a->model, arg);
            a->model = arg;
            continue;
        }
        if (cli_is_help(arg)) {
            usage_run();
            return -2;
        }
        if (strcmp(arg, "--") == 0) {
            only_positional = 1;
        } else if ((m = cli_session_option("run", argc, argv, &i, &a->common)) != 0) {
            if (m < 0) return CLI_FAIL;
        } else if ((m = cli_option_value(argc, argv, &i, "--output-dir", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (!*v) return cli_error("run: --output-dir needs a folder");
            a->out_dir = v;
        } else if ((m = cli_option_value(argc, argv, &i, "--log-level", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            static const char *const LEVELS[] = {"error", "warning", "info", "verbose"};
            a->log_level = -1;
            for (int k = 0; k < 4; k++)
                if (strcmp(v, LEVELS[k]) == 0) a->log_level = k;
            if (a->log_level < 0)
                return cli_error("run: --log-level expects error, warning, info or verbose, got '%s'", v);
        } else if ((m = cli_option_value(argc, argv, &i, "--time-limit-ms", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (cli_parse_u64(v, &a->time_limit_ms) != 0)
                return cli_error("run: --time-limit-ms expects a non-negative integer, got '%s'", v);
        } else if ((m = cli_option_value(argc, argv, &i, "--repeat", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (cli_parse_u64(v, &a->repeat) != 0 || a->repeat > 1000000)
                return cli_error("run: --repeat expects a count of runs, got '%s'", v);
        } else if ((m = cli_option_value(argc, argv, &i, "--verify", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (cli_parse_u64(v, &a->verify) != 0)
                return cli_error("run: --verify expects a count of runs, got '%s'", v);
        } else if ((m = cli_option_value(argc, argv, &i, "--memory-limit", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (cli_parse_u64(v, &a->memory_limit) != 0 ||
                (uint64_t)(size_t)a->memory_limit != a->memory_limit)
                return cli_error("run: --memory-limit expects a number of bytes, got '%s'", v);
        } else {
            return cli_error("run: unknown option '%s' (see 'onyx run --help')", arg);
        }
    }
    if (!a->model) return cli_error("run: no model given (see 'onyx run --help')");
    return CLI_OK;
}

/* ---- output summaries ---- */

static double get_float(const void *d, onyx_dtype t, int64_t i) {
    switch (t) {
    case ONYX_FLOAT32: return ((const float *)d)[i];
    case ONYX_FLOAT64: return ((const double *)d)[i];
    case ONYX_FLOAT16: return cli_half_to_float(((const uint16_t *)d)[i]);
    case ONYX_BFLOAT16: return cli_bf16_to_float(((const uint16_t *)d)[i]);
    default: return cli_narrow_to_float(t, ((const uint8_t *)d)[i]);
    }
}

static int64_t get_signed(const void *d, onyx_dtype t, int64_t i) {
    switch (t) {
    case ONYX_INT8:
    case ONYX_INT4: /* narrow ints: one sign-extended byte each */
    case ONYX_INT2: return ((const int8_t *)d)[i];
    case ONYX_INT16: return ((const int16_t *)d)[i];
    case ONYX_INT32: return ((const int32_t *)d)[i];
    default: return ((const int64_t *)d)[i];
    }
}

static uint64_t get_unsigned(const void *d, onyx_dtype t, int64_t i) {
    switch (t) {
    case ONYX_UINT8:
    case ONYX_UINT4:
    case ONYX_UINT2: return ((const uint8_t *)d)[i];
    case ONYX_UINT16: return ((const uint16_t *)d)[i];
    case ONYX_UINT32: return ((const uint32_t *)d)[i];
    default: return ((const uint64_t *)d)[i];
    }
}

static void tensor_stats(cli_buf *b, const onyx_tensor *ct) {
    /* read only; the API's data accessor is not const-qualified */
    onyx_tensor *t = (onyx_tensor *)ct;
    onyx_dtype dt = onyx_tensor_dtype(t);
    int64_t n = onyx_tensor_numel(t);
    cli_buf_printf(b, "%s ", onyx_dtype_name(dt));
    cli_format_dims(b, onyx_tensor_dims(t), onyx_tensor_rank(t));
    if (n == 0) {
        cli_buf_printf(b, " (empty)");
        return;
    }
    const void *d = onyx_tensor_data(t);
    switch (dt) {
    case ONYX_BOOL: {
        int64_t on = 0;
        for (int64_t i = 0; i < n; i++) on += ((const uint8_t *)d)[i] != 0;
        cli_buf_printf(b, " true=%" PRId64 "/%" PRId64, on, n);
        return;
    }
    case ONYX_INT8:
    case ONYX_INT16:
    case ONYX_INT32:
    case ONYX_INT64:
    case ONYX_INT4:
    case ONYX_INT2: {
        int64_t lo = INT64_MAX, hi = INT64_MIN;
        long double sum = 0;
        for (int64_t i = 0; i < n; i++) {
            int64_t v = get_signed(d, dt, i);
            if (v < lo) lo = v;
            if (v > hi) hi = v;
            sum += v;
        }
        cli_buf_printf(b, " min=%" PRId64 " max=%" PRId64 " mean=%.6g", lo, hi,
                       (double)(sum / n));
        return;
    }
    case ONYX_UINT8:
    case ONYX_UINT16:
    case ONYX_UINT32:
    case ONYX_UINT64:
    case ONYX_UINT4:
    case ONYX_UINT2: {
        uint64_t lo = UINT64_MAX, hi = 0;
        long double sum = 0;
        for (int64_t i = 0; i < n; i++) {
            uint64_t v = get_unsigned(d, dt, i);
            if (v < lo) lo = v;
            if (v > hi) hi = v;
            sum += v;
        }
        cli_buf_printf(b, " min=%" PRIu64 " max=%" PRIu64 " mean=%.6g", lo, hi,
                       (double)(sum / n));
        return;
    }
    case ONYX_FLOAT32:
    case ONYX_FLOAT64:
    case ONYX_FLOAT16:
    case ONYX_BFLOAT16:
    case ONYX_FLOAT8E4M3FN:
    case ONYX_FLOAT8E4M3FNUZ:
    case ONYX_FLOAT8E5M2:
    case ONYX_FLOAT8E5M2FNUZ:
    case ONYX_FLOAT4E2M1:
    case ONYX_FLOAT8E8M0:
    case ONYX_FLOAT6E2M3:
    case ONYX_FLOAT6E3M2: {
        double lo = INFINITY, hi = -INFINITY;
        long double sum = 0;
        int64_t nans = 0;
        for (int64_t i = 0; i < n; i++) {
            double v = get_float(d, dt, i);
            if (isnan(v)) {
                nans++;
                continue;
            }
            if (v < lo) lo = v;
            if (v > hi) hi = v;
            sum += v;
        }
        if (nans == n) {
            cli_buf_printf(b, " min=nan max=nan mean=nan nan=%" PRId64, nans);
            return;
        }
        /* min, max and mean are over the non-NaN values */
        cli_buf_printf(b, " min=%.6g max=%.6g mean=%.6g", lo, hi, (double)(sum / (n - nans)));
        if (nans) cli_buf_printf(b, " nan=%" PRId64, nans);
        return;
    }
    default: return; /* strings and complex numbers: type and shape only */
    }
}

/* Small outputs (class scores, a handful of boxes) are printed in full so a
 * person can read the result without opening the .npy file. */
#define PRINT_VALUES_MAX 16

static void tensor_values(cli_buf *b, const onyx_tensor *ct) {
    onyx_tensor *t = (onyx_tensor *)ct;
    onyx_dtype dt = onyx_tensor_dtype(t);
    int64_t n = onyx_tensor_numel(t);
    if (n == 0 || n > PRINT_VALUES_MAX) return;
    const void *d = onyx_tensor_data(t);
    cli_buf_printf(b, " values=[");
    for (int64_t i = 0; i < n; i++) {
        const char *sep = i ? ", " : "";
        switch (dt) {
        case ONYX_BOOL: cli_buf_printf(b, "%s%s", sep, ((const uint8_t *)d)[i] ? "true" : "false"); break;
        case ONYX_INT8:
        case ONYX_INT16:
        case ONYX_INT32:
        case ONYX_INT64:
        case ONYX_INT4:
        case ONYX_INT2: cli_buf_printf(b, "%s%" PRId64, sep, get_signed(d, dt, i)); break;
        case ONYX_UINT8:
        case ONYX_UINT16:
        case ONYX_UINT32:
        case ONYX_UINT64:
        case ONYX_UINT4:
        case ONYX_UINT2: cli_buf_printf(b, "%s%" PRIu64, sep, get_unsigned(d, dt, i)); break;
        case ONYX_FLOAT32:
        case ONYX_FLOAT64:
        case ONYX_FLOAT16:
        case ONYX_BFLOAT16: cli_buf_printf(b, "%s%.6g", sep, get_float(d, dt, i)); break;
        default:
            if (cli_is_narrow_float(dt))
                cli_buf_printf(b, "%s%.6g", sep, get_float(d, dt, i));
            else
                cli_buf_printf(b, "%s?", sep);
            break;
        }
    }
    cli_buf_printf(b, "]");
}

static void tensor_summary(cli_buf *b, const onyx_tensor *t) {
    tensor_stats(b, t);
    onyx_dtype dt = onyx_tensor_dtype((onyx_tensor *)t);
    if (dt != ONYX_STRING && dt != ONYX_COMPLEX64 && dt != ONYX_COMPLEX128) tensor_values(b, t);
}

/* qual is "" or "optional " for a sequence reached through an optional */
static int report_output(const char *raw_name, const char *qual, const onyx_tensor *t,
                         const char *dir, cli_name_set *used) {
    /* raw_name names the saved files (sanitized there); name is printed */
    char *name = cli_escape(raw_name);
    cli_buf line = {0};
    int rc = CLI_OK;
    onyx_value_kind kind = onyx_tensor_kind(t);
    if (kind == ONYX_KIND_TENSOR) {
        tensor_summary(&line, t);
        if (dir) rc = cli_save_npy(t, dir, raw_name, used);
        if (rc == CLI_OK) printf("%s: %s\n", name, line.s);
    } else if (kind == ONYX_KIND_OPTIONAL) {
        size_t n = onyx_tensor_item_count(t);
        const onyx_tensor *item = n ? onyx_tensor_item(t, 0) : NULL;
        if (item && onyx_tensor_kind(item) == ONYX_KIND_TENSOR) {
            tensor_summary(&line, item);
            if (dir) rc = cli_save_npy(item, dir, raw_name, used);
            if (rc == CLI_OK) printf("%s: optional %s\n", name, line.s);
        } else if (item) {
            rc = report_output(raw_name, "optional ", item, dir, used);
        } else {
            printf("%s: optional (none)\n", name);
        }
    } else {
        size_t n = onyx_tensor_item_count(t);
        printf("%s: %ssequence of %zu\n", name, qual, n);
        for (size_t i = 0; i < n && rc == CLI_OK; i++) {
            cli_buf item_name = {0};
            cli_buf_printf(&item_name, "%s_%zu", raw_name, i);
            const onyx_tensor *item = onyx_tensor_item(t, i);
            if (onyx_tensor_kind(item) == ONYX_KIND_TENSOR) {
                line.len = 0;
                tensor_summary(&line, item);
                if (dir) rc = cli_save_npy(item, dir, item_name.s, used);
                if (rc == CLI_OK) printf("  [%zu]: %s\n", i, line.s);
            } else {
                rc = report_output(item_name.s, "", item, dir, used);
            }
            cli_buf_free(&item_name);
        }
    }
    cli_buf_free(&line);
    free(name);
    return rc;
}

/* ---- timing and provider counters ---- */

/* n more runs on the same inputs; prints their min and median. */
static int timed_runs(onyx_session *s, const onyx_run_options *ro, const char **in_names,
                      onyx_tensor **inputs, size_t n_in, const char **out_names, size_t n_out,
                      uint64_t n) {
    double *ms = malloc((size_t)n * sizeof *ms);
    onyx_tensor **outs = calloc(n_out + 1, sizeof *outs);
    int rc = CLI_OK;
    if (!ms || !outs) rc = cli_error("out of memory");
    for (uint64_t r = 0; rc == CLI_OK && r < n; r++) {
        double t0 = cli_now_ms();
        onyx_status *st = onyx_session_run_with_options(s, ro, in_names, (const onyx_tensor *const *)inputs,
                                                        n_in, out_names, outs, n_out);
        ms[r] = cli_now_ms() - t0;
        for (size_t i = 0; i < n_out; i++) {
            onyx_tensor_free(outs[i]);
            outs[i] = NULL;
        }
        if (st) rc = cli_status(st);
    }
    if (rc == CLI_OK) {
        qsort(ms, (size_t)n, sizeof *ms, cli_cmp_double);
        printf("latency over %llu runs: min %.2f ms, median %.2f ms\n", (unsigned long long)n,
               ms[0], ms[n / 2]);
    }
    free(ms);
    free(outs);
    return rc;
}

/* Per device provider: kernels, submissions and copies per run. */
static void report_provider_stats(const onyx_env *env, const onyx_session *s, uint64_t runs) {
    cli_provider_use used[8];
    size_t n = cli_device_providers(env, s, used, 8);
    for (size_t p = 0; p < n; p++) {
        const onyx_provider_stats *st = &used[p].stats;
        if (!st->runs) continue;
        fprintf(stderr,
                "onyx [info] provider %s over %llu runs: %.1f kernels, %.1f submits, %.1f copies "
                "to the host and %.1f from it per run; %llu weights uploaded once; %llu node runs "
                "declined to the CPU; %llu dispatches split into %llu slices\n",
                used[p].name, (unsigned long long)runs, (double)st->kernel_launches / (double)runs,
                (double)st->submits / (double)runs, (double)st->copies_to_host / (double)runs,
                (double)st->copies_from_host / (double)runs, (unsigned long long)st->weight_uploads,
                (unsigned long long)st->cpu_fallbacks, (unsigned long long)st->split_dispatches,
                (unsigned long long)st->dispatch_slices);
        if (st->device_faults || st->nodes_denied)
            fprintf(stderr,
                    "onyx [info] provider %s: %llu device faults, %llu runs completed on the CPU "
                    "after one, %llu device recoveries, %llu nodes moved to the CPU for a fault\n",
                    used[p].name, (unsigned long long)st->device_faults,
                    (unsigned long long)st->runs_rescued, (unsigned long long)st->device_recoveries,
                    (unsigned long long)st->nodes_denied);
    }
}

/* What shadow runs found (--verify). */
static void report_verification(onyx_session *s) {
    onyx_verify_stats v;
    onyx_status *st = onyx_session_verify_stats(s, &v);
    if (st) {
        onyx_status_free(st);
        return;
    }
    printf("verify: %llu run%s checked against the reference, %llu mismatch%s, %llu node%s moved "
           "to the CPU%s\n",
           (unsigned long long)v.runs_verified, v.runs_verified == 1 ? "" : "s",
           (unsigned long long)v.mismatches, v.mismatches == 1 ? "" : "es",
           (unsigned long long)v.nodes_disabled, v.nodes_disabled == 1 ? "" : "s",
           v.on_reference ? ", every later run uses the reference" : "");
    size_t need = onyx_session_verify_report(s, NULL, 0);
    char *text = need ? malloc(need + 1) : NULL;
    if (text) {
        onyx_session_verify_report(s, text, need + 1);
        char *safe = cli_escape(text);
        printf("verify: %s\n", safe);
        free(safe);
    }
    free(text);
}

/* ---- the command ---- */

int cmd_run(int argc, char **argv) {
    run_args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != CLI_OK) {
        cli_session_args_free(&a.common);
        return rc == -2 ? CLI_OK : CLI_FAIL;
    }

    onyx_env *env = NULL;
    onyx_session *s = NULL;
    onyx_session_options *opts = NULL;
    onyx_run_options *run_opts = NULL;
    onyx_tensor **outputs = NULL;
    cli_io io = {0};
    cli_name_set used = {0};

    onyx_status *st = onyx_session_options_create(&opts);
    if (!st && a.log_level >= 0)
        st = onyx_session_options_set_log_level(opts, (onyx_log_level)a.log_level);
    if (!st && a.memory_limit)
        st = onyx_session_options_set_memory_limit(opts, (size_t)a.memory_limit);
    if (!st && a.verify) st = onyx_session_options_set_verify_first_runs(opts, a.verify, 1e-4, 1e-3);
    if (!st) st = onyx_run_options_create(&run_opts);
    if (!st && a.time_limit_ms) st = onyx_run_options_set_time_limit_ms(run_opts, a.time_limit_ms);
    if (st) {
        rc = cli_status(st);
        goto out;
    }
    if ((rc = cli_apply_session_args("run", &a.common, opts)) != CLI_OK) goto out;
    if ((rc = cli_open_session(a.model, opts, &env, &s)) != CLI_OK) goto out;

    /* a bad output folder should fail before the model runs */
    if (a.out_dir && (rc = cli_mkdir_p(a.out_dir)) != CLI_OK) goto out;

    if ((rc = cli_prepare_io("run", s, &a.common, CLI_FILL_RANDOM, &io)) != CLI_OK) goto out;
    outputs = calloc(io.n_out + 1, sizeof *outputs);
    if (!outputs) {
        rc = cli_error("out of memory");
        goto out;
    }

    st = onyx_session_run_with_options(s, run_opts, io.in_names, (const onyx_tensor *const *)io.inputs,
                                       io.n_in, io.out_names, outputs, io.n_out);
    if (st) {
        rc = cli_status(st);
        goto out;
    }
    for (size_t i = 0; i < io.n_out && rc == CLI_OK; i++)
        rc = report_output(io.out_names[i], "", outputs[i], a.out_dir, &used);
    if (rc == CLI_OK && a.repeat)
        rc = timed_runs(s, run_opts, io.in_names, io.inputs, io.n_in, io.out_names, io.n_out, a.repeat);
    if (rc == CLI_OK && a.log_level >= ONYX_LOG_INFO) report_provider_stats(env, s, a.repeat + 1);
    if (rc == CLI_OK && a.verify) report_verification(s);

out:
    for (size_t i = 0; outputs && i < io.n_out; i++)
        if (outputs[i]) onyx_tensor_free(outputs[i]);
    cli_name_set_free(&used);
    free(outputs);
    cli_io_free(&io);
    if (s) onyx_session_free(s);
    if (env) onyx_env_free(env);
    if (opts) onyx_session_options_free(opts);
    onyx_run_options_free(run_opts);
    cli_session_args_free(&a.common);
    if (rc == CLI_OK) cli_flush_notes();
    return rc;
}
