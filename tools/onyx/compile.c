/* onyx compile: a model optimized once for any provider and saved, as an
 * optimized file (.onyx) or as an ONNX twin, through onyx_compile_model. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"

/* Source models past this size get their ONNX twin's weights as external
 * data unless told otherwise: protobuf stops at 2 GiB. */
#define AUTO_EXTERNAL_SOURCE ((uint64_t)1 << 30)
#define AUTO_EXTERNAL_MIN 1024u

void usage_compile(void) {
    printf("usage: onyx compile MODEL.onnx -o OUT [options]\n"
           "\n"
           "Optimizes the model once, for any provider, and saves it. The optimized\n"
           "file (.onyx, docs/FORMAT.md) holds the optimized graph with its inferred\n"
           "shapes and every weight, 64-byte aligned; a session maps it and uses the\n"
           "weights in place. No provider placement is saved: the same file runs on\n"
           "the CPU and on Vulkan. Every onyx command and onyx_session_create accept\n"
           "it where they accept an .onnx model.\n"
           "\n"
           "options:\n"
           "  -o, --output OUT       the file to write (replaced atomically)\n"
           "  --format onyx|onnx     onyx (the default, unless OUT ends in .onnx): the\n"
           "                         optimized file; onnx: the same graph as a standard\n"
           "                         ONNX model (fused operators in the documented onyx\n"
           "                         domain), viewable in Netron\n"
           "  --opt-level LEVEL      none, basic or all (the default)\n"
           "  --external-data BYTES  onnx format: weights of at least BYTES go to\n"
           "                         OUT.data; 0 keeps every weight inline (default:\n"
           "                         1024 when the source model is past 1 GiB, else 0)\n"
           "  -h, --help             show this help\n");
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && strcmp(s + n - k, suffix) == 0;
}

typedef struct compile_args {
    const char *model, *out;
    int format; /* -1: from OUT's name */
    onyx_opt_level level;
    int external_set;
    uint64_t external_min;
} compile_args;

static int parse(int argc, char **argv, compile_args *a) {
    *a = (compile_args){NULL, NULL, -1, ONYX_OPT_ALL, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *v;
        int m;
        if (cli_is_help(argv[i])) {
            usage_compile();
            return 1;
        }
        if ((m = cli_option_value(argc, argv, &i, "--output", &v)) != 0 ||
            (m = cli_option_value(argc, argv, &i, "-o", &v)) != 0) {
            if (m < 0) return -1;
            a->out = v;
        } else if ((m = cli_option_value(argc, argv, &i, "--format", &v)) != 0) {
            if (m < 0) return -1;
            if (strcmp(v, "onyx") == 0) a->format = ONYX_FORMAT_ONYX;
            else if (strcmp(v, "onnx") == 0) a->format = ONYX_FORMAT_ONNX;
            else return cli_error("compile: --format expects onyx or onnx, got '%s'", v), -1;
        } else if ((m = cli_option_value(argc, argv, &i, "--opt-level", &v)) != 0) {
            if (m < 0) return -1;
            if (strcmp(v, "none") == 0) a->level = ONYX_OPT_NONE;
            else if (strcmp(v, "basic") == 0) a->level = ONYX_OPT_BASIC;
            else if (strcmp(v, "all") == 0) a->level = ONYX_OPT_ALL;
            else return cli_error("compile: --opt-level expects none, basic or all, got '%s'", v), -1;
        } else if ((m = cli_option_value(argc, argv, &i, "--external-data", &v)) != 0) {
            if (m < 0) return -1;
            if (cli_parse_u64(v, &a->external_min) != 0)
                return cli_error("compile: --external-data expects a byte count, got '%s'", v), -1;
            a->external_set = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            return cli_error("compile: unknown option '%s' (see onyx compile --help)", argv[i]), -1;
        } else if (!a->model) {
            a->model = argv[i];
        } else {
            return cli_error("compile: one model only, got '%s' too", argv[i]), -1;
        }
    }
    if (!a->model) return cli_error("compile: no model given (see onyx compile --help)"), -1;
    if (!a->out) return cli_error("compile: no output file given (-o OUT)"), -1;
    if (a->format < 0) a->format = ends_with(a->out, ".onnx") ? ONYX_FORMAT_ONNX : ONYX_FORMAT_ONYX;
    if (a->external_set && a->format != ONYX_FORMAT_ONNX)
        return cli_error("compile: --external-data is for --format onnx (an optimized file holds "
                         "its weights)"),
               -1;
    return 0;
}

int cmd_compile(int argc, char **argv) {
    compile_args a;
    int p = parse(argc, argv, &a);
    if (p != 0) return p > 0 ? CLI_OK : CLI_FAIL;
    if (a.format == ONYX_FORMAT_ONNX && !a.external_set) {
        struct stat st;
        if (stat(a.model, &st) == 0 && (uint64_t)st.st_size > AUTO_EXTERNAL_SOURCE)
            a.external_min = AUTO_EXTERNAL_MIN;
    }
    onyx_env *env = NULL;
    onyx_status *st = onyx_env_create(&env);
    if (st) return cli_status(st);
    double t0 = now_ms();
    st = onyx_compile_model(env, a.model, a.out, a.level, (onyx_model_format)a.format,
                            (size_t)a.external_min);
    double ms = now_ms() - t0;
    onyx_env_free(env);
    if (st) return cli_status(st);
    static const char *levels[] = {"none", "basic", "all"};
    struct stat out;
    long long bytes = stat(a.out, &out) == 0 ? (long long)out.st_size : -1;
    char *shown = cli_escape(a.out);
    printf("wrote %s (%s, optimization %s, %lld bytes) in %.1f ms\n", shown,
           a.format == ONYX_FORMAT_ONYX ? "optimized file" : "ONNX", levels[a.level], bytes, ms);
    free(shown);
    return CLI_OK;
}
