/* onyx info: a description of a model as written, before optimization. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void usage_info(void) {
    printf("usage: onyx info [options] MODEL\n"
           "\n"
           "Describes MODEL as written (no graph optimization): its inputs and\n"
           "outputs with element type and shape (symbolic dimensions by name,\n"
           "unknown ones as '?'), opset imports, node count, a histogram of\n"
           "operator types and the size of its weights.\n"
           "\n"
           "options:\n"
           "  -h, --help   show this help\n");
}

typedef struct op_count {
    char *op;
    size_t count;
} op_count;

static int by_count_desc(const void *a, const void *b) {
    const op_count *x = a, *y = b;
    if (x->count != y->count) return x->count < y->count ? 1 : -1;
    return strcmp(x->op, y->op);
}

static void print_values(onyx_session *s, int inputs) {
    size_t n = inputs ? onyx_session_input_count(s) : onyx_session_output_count(s);
    printf("%s (%zu):\n", inputs ? "inputs" : "outputs", n);
    onyx_value_info *infos = calloc(n ? n : 1, sizeof *infos);
    if (!infos) {
        cli_error("out of memory");
        exit(CLI_FAIL);
    }
    size_t width = 0;
    for (size_t i = 0; i < n; i++) {
        onyx_status *st = inputs ? onyx_session_input_info(s, i, &infos[i])
                                 : onyx_session_output_info(s, i, &infos[i]);
        if (st) {
            onyx_status_free(st);
            infos[i].name = NULL;
            continue;
        }
        /* shown escaped: a name from the model is untrusted text */
        char *shown = cli_escape(infos[i].name);
        size_t w = strlen(shown);
        free(shown);
        if (w > width) width = w;
    }
    for (size_t i = 0; i < n; i++) {
        if (!infos[i].name) {
            printf("  #%zu  (no description available)\n", i);
            continue;
        }
        cli_buf b = {0};
        cli_format_info_type(&b, &infos[i]);
        cli_buf_printf(&b, " ");
        cli_format_info_shape(&b, &infos[i]);
        char *name = cli_escape(infos[i].name);
        printf("  %-*s  %s\n", (int)width, name, b.s);
        free(name);
        cli_buf_free(&b);
    }
    free(infos);
}

static int histogram(onyx_session *s) {
    size_t nodes = onyx_session_node_count(s);
    op_count *ops = NULL;
    size_t n_ops = 0, width = 0;
    int rc = CLI_OK;
    for (size_t i = 0; i < nodes; i++) {
        const char *op = onyx_session_node_op_type(s, i);
        const char *dom = onyx_session_node_domain(s, i);
        if (!op) op = "?";
        cli_buf key = {0};
        /* ops outside the default domain are shown qualified, since the
         * same name may exist in several domains */
        if (dom && dom[0] && strcmp(dom, "ai.onnx") != 0) {
            cli_buf_escaped(&key, dom);
            cli_buf_printf(&key, ".");
        }
        cli_buf_escaped(&key, op);
        size_t j = 0;
        while (j < n_ops && strcmp(ops[j].op, key.s) != 0) j++;
        if (j < n_ops) {
            ops[j].count++;
            cli_buf_free(&key);
            continue;
        }
        op_count *grown = realloc(ops, (n_ops + 1) * sizeof *ops);
        if (!grown) {
            cli_buf_free(&key);
            rc = cli_error("out of memory");
            goto done;
        }
        ops = grown;
        ops[n_ops].op = key.s; /* ownership moves to the table */
        ops[n_ops].count = 1;
        if (key.len > width) width = key.len;
        n_ops++;
    }
    if (n_ops) qsort(ops, n_ops, sizeof *ops, by_count_desc);
    printf("nodes: %zu\n", nodes);
    printf("operators (%zu):\n", n_ops);
    for (size_t j = 0; j < n_ops; j++) printf("  %-*s  %zu\n", (int)width, ops[j].op, ops[j].count);
done:
    for (size_t j = 0; j < n_ops; j++) free(ops[j].op);
    free(ops);
    return rc;
}

int cmd_info(int argc, char **argv) {
    const char *model = NULL;
    int only_positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!only_positional && cli_is_help(a)) {
            usage_info();
            return CLI_OK;
        }
        if (!only_positional && strcmp(a, "--") == 0) {
            only_positional = 1;
        } else if (!only_positional && a[0] == '-' && a[1] != '\0') {
            return cli_error("info: unknown option '%s' (see 'onyx info --help')", a);
        } else if (model) {
            return cli_error("info: more than one model given ('%s' and '%s')", model, a);
        } else {
            model = a;
        }
    }
    if (!model) return cli_error("info: no model given (see 'onyx info --help')");

    onyx_session_options *opts = NULL;
    onyx_status *st = onyx_session_options_create(&opts);
    if (!st) st = onyx_session_options_set_optimization_level(opts, ONYX_OPT_NONE);
    if (st) {
        if (opts) onyx_session_options_free(opts);
        return cli_status(st);
    }
    onyx_env *env;
    onyx_session *s;
    int rc = cli_open_session(model, opts, &env, &s);
    onyx_session_options_free(opts);
    if (rc != CLI_OK) return rc;

    printf("model: %s\n", model);
    print_values(s, 1);
    print_values(s, 0);

    size_t n_opsets = onyx_session_opset_count(s);
    printf("opset imports (%zu):\n", n_opsets);
    for (size_t i = 0; i < n_opsets; i++) {
        const char *domain = NULL;
        int64_t version = 0;
        st = onyx_session_opset(s, i, &domain, &version);
        if (st) {
            rc = cli_status(st);
            goto out;
        }
        char *shown = cli_escape(domain && domain[0] ? domain : "ai.onnx");
        printf("  %s %" PRId64 "\n", shown, version);
        free(shown);
    }

    rc = histogram(s);
    if (rc != CLI_OK) goto out;

    int64_t params = onyx_session_parameter_count(s);
    int64_t bytes = onyx_session_parameter_bytes(s);
    char hc[32], hb[32];
    cli_human_count(hc, sizeof hc, params);
    cli_human_bytes(hb, sizeof hb, bytes);
    printf("parameters: %" PRId64 " (%s)\n", params, hc);
    printf("parameter bytes: %" PRId64 " (%s)\n", bytes, hb);
out:
    onyx_session_free(s);
    onyx_env_free(env);
    return rc;
}
