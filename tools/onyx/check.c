/* onyx check: runs a configuration under test (providers, optimization
 * level) and the reference (the CPU provider, no optimization) on the
 * same inputs, compares every output, and with --bisect finds the first
 * node whose outputs diverge, from one capturing run of each: the plan
 * under test runs unchanged while the capture hook copies its values
 * aside. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "check_html.h"
#include "cli.h"

#define CHECK_FAIL 1  /* an output (or, with --bisect, a node) diverges */
#define CHECK_ERROR 2 /* usage, model or run errors */

void usage_check(void) {
    printf("usage: onyx check [options] MODEL\n"
           "\n"
           "Runs MODEL in the configuration under test and in the reference (the CPU\n"
           "provider, no graph optimization, no fault injection) on the same inputs\n"
           "and compares every output. Exit status: 0 when all outputs pass, 1 when\n"
           "one fails (with --bisect, also when any node's value diverges), 2 on\n"
           "usage, model or run errors.\n"
           "\n"
           "options:\n"
           "  --providers A,B      providers under test, in priority order, with\n"
           "                       NAME:KEY=VALUE options as for onyx run (default cpu)\n"
           "  --opt-level LEVEL    optimization under test: none, basic or all (default)\n"
           "  --input NAME=FILE    bind input NAME to a .npy or TensorProto .pb file;\n"
           "                       other inputs get seeded random data as in onyx run\n"
           "                       (integers and booleans of inputs named *mask* are\n"
           "                       0 or 1)\n"
           "  --dim NAME=SIZE      size of the symbolic dimension NAME in random inputs\n"
           "  --seed N             seed for random inputs (default 0)\n"
           "  --threads N          intra-op threads of both sessions\n"
           "  --atol A, --rtol R   tolerances (default 1e-4 and 1e-3)\n"
           "  --stat S             what must stay within them: elementwise (default:\n"
           "                       |test - ref| <= atol + rtol * |ref| for every\n"
           "                       element), or max, mean, median or quantile:Q of\n"
           "                       the absolute errors <= atol or of the relative\n"
           "                       errors <= rtol\n"
           "  --bisect             capture every node's outputs in both runs and report\n"
           "                       the first node (in execution order) whose outputs\n"
           "                       diverge, with its inputs' errors, kernel and the\n"
           "                       model nodes it was fused from; a fused group is\n"
           "                       re-run unfused on the same providers to tell a\n"
           "                       wrong fusion from a wrong kernel\n"
           "  --report FILE        with --bisect: also write the report as one\n"
           "                       self-contained HTML page (the error of every node\n"
           "                       along the graph, the divergent node's neighbourhood\n"
           "                       and tables, the command that reproduces it)\n"
           "  --save-subgraph FILE with --bisect: write the first divergent node (the\n"
           "                       model nodes of a fused group) as a runnable ONNX\n"
           "                       model, its inputs as captured in the run under test\n"
           "                       as .npy files in FILE's name + _inputs/, and print\n"
           "                       the onyx check command that reproduces it\n"
           "  --plan               print placement, kernel and fusions of every node\n"
           "                       under test, and run nothing\n"
           "  -h, --help           show this help\n"
           "\n"
           "ONYX_INJECT_FAULT=[fused:]NODE[@PROVIDER] perturbs NODE's outputs in the\n"
           "sessions under test (never the reference): a testing aid for --bisect;\n"
           "with fused: only where optimization merged NODE into another node.\n");
}

typedef struct check_args {
    cli_session_args common; /* --input, --dim, --seed, --threads, --providers, --opt-level */
    const char *model;
    const char *report; /* --report FILE */
    const char *save_subgraph; /* --save-subgraph FILE */
    int argc;           /* the command line, program first, for the report */
    char **argv;
    cmp_rule rule;
    int bisect, plan;
} check_args;

static int parse_double(const char *s, double *out) {
    char *end = NULL;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0.0) || isinf(v)) return -1;
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, check_args *a) {
    memset(a, 0, sizeof *a);
    cli_session_args_init(&a->common);
    a->rule = (cmp_rule){.atol = 1e-4, .rtol = 1e-3, .stat = CMP_ELEMENTWISE};
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int m;
        if (arg[0] != '-' || arg[1] == '\0') {
            if (a->model)
                return cli_error("check: more than one model given ('%s' and '%s')", a->model, arg);
            a->model = arg;
            continue;
        }
        if (cli_is_help(arg)) {
            usage_check();
            return -2;
        }
        if ((m = cli_session_option("check", argc, argv, &i, &a->common)) != 0) {
            if (m < 0) return CLI_FAIL;
        } else if ((m = cli_option_value(argc, argv, &i, "--atol", &v)) != 0 ||
                   (m = cli_option_value(argc, argv, &i, "--rtol", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            int is_atol = strncmp(arg, "--atol", 6) == 0;
            if (parse_double(v, is_atol ? &a->rule.atol : &a->rule.rtol) != 0)
                return cli_error("check: %s expects a non-negative number, got '%s'",
                                 is_atol ? "--atol" : "--rtol", v);
        } else if ((m = cli_option_value(argc, argv, &i, "--stat", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            if (cmp_parse_stat(v, &a->rule) != 0)
                return cli_error("check: --stat expects elementwise, max, mean, median or "
                                 "quantile:Q with Q in [0, 1], got '%s'", v);
        } else if (strcmp(arg, "--bisect") == 0) {
            a->bisect = 1;
        } else if ((m = cli_option_value(argc, argv, &i, "--report", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            a->report = v;
        } else if ((m = cli_option_value(argc, argv, &i, "--save-subgraph", &v)) != 0) {
            if (m < 0) return CLI_FAIL;
            a->save_subgraph = v;
        } else if (strcmp(arg, "--plan") == 0) {
            a->plan = 1;
        } else {
            return cli_error("check: unknown option '%s' (see 'onyx check --help')", arg);
        }
    }
    if (!a->model) return cli_error("check: no model given (see 'onyx check --help')");
    if (a->report && !a->bisect)
        return cli_error("check: --report needs --bisect (see 'onyx check --help')");
    if (a->report && a->plan)
        return cli_error("check: --plan runs nothing, so there is no report to write");
    if (a->save_subgraph && (!a->bisect || a->plan))
        return cli_error("check: --save-subgraph needs --bisect (and not --plan)");
    return CLI_OK;
}

/* ---- progress on a terminal ---- */

static void progress(check_run *r, size_t node_index) {
    if (!r->show_progress || r->n_nodes == 0) return;
    size_t pct = (node_index + 1) * 100 / r->n_nodes;
    if (pct == r->last_pct) return;
    r->last_pct = pct;
    fprintf(stderr, "\r\033[Kcheck: %s run, node %zu of %zu", r->label, node_index + 1, r->n_nodes);
    fflush(stderr);
}

static void progress_done(check_run *r) {
    if (r->show_progress) fprintf(stderr, "\r\033[K");
}

/* ---- capture callbacks ---- */

static void capture_reference(void *user, size_t node_index, size_t output_index,
                              const char *value_name, const onyx_tensor *value) {
    check_run *r = user;
    (void)output_index;
    progress(r, node_index);
    if (r->failed) return;
    onyx_tensor *copy = cmp_clone(value);
    if (!copy && onyx_tensor_kind(value) == ONYX_KIND_TENSOR) {
        r->failed = 1; /* out of memory: reported after the run */
        return;
    }
    if (check_table_put(&r->values, value_name, node_index, copy, NULL) != 0) {
        onyx_tensor_free(copy);
        r->failed = 1;
    }
}

static void capture_test(void *user, size_t node_index, size_t output_index,
                         const char *value_name, const onyx_tensor *value) {
    check_run *r = user;
    progress(r, node_index);
    if (r->failed) return;
    check_record rec = {.node = node_index, .output = output_index};
    const check_entry *ref = check_table_get(&r->reference->values, value_name);
    if (ref && ref->value) {
        if (cmp_tensors(value, ref->value, r->rule, &rec.cmp) != 0) {
            r->failed = 1;
            return;
        }
    } else {
        snprintf(rec.cmp.why, sizeof rec.cmp.why, "%s",
                 ref ? "not a tensor" : "no reference value of that name (renamed by optimization)");
    }
    rec.dtype = onyx_tensor_dtype(value);
    rec.kind = onyx_tensor_kind(value);
    rec.rank = onyx_tensor_kind(value) == ONYX_KIND_TENSOR ? onyx_tensor_rank(value) : 0;
    if (rec.rank > 0) memcpy(rec.dims, onyx_tensor_dims(value), (size_t)rec.rank * sizeof *rec.dims);
    onyx_tensor *keep = r->keep_values ? cmp_clone(value) : NULL;
    if (check_table_put(&r->values, value_name, node_index, keep, &rec) != 0) {
        onyx_tensor_free(keep);
        r->failed = 1;
    }
}

/* ---- sessions ---- */

static onyx_status *reference_options(const check_args *a, onyx_session_options **out) {
    onyx_session_options *o = NULL;
    const char *cpu[] = {"cpu"};
    onyx_status *st = onyx_session_options_create(&o);
    if (!st) st = onyx_session_options_set_providers(o, cpu, 1);
    if (!st) st = onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE);
    if (!st) st = onyx_session_options_set_fault_injection(o, "");
    if (!st && a->common.has_threads) st = onyx_session_options_set_threads(o, a->common.threads);
    if (st) {
        onyx_session_options_free(o);
        return st;
    }
    *out = o;
    return NULL;
}

/* Runs one session on the inputs with capture into r (NULL: no capture);
 * outs receives the outputs. */
static int run_once(onyx_session *s, const cli_io *io, check_run *r, onyx_capture_fn fn,
                    onyx_tensor **outs) {
    onyx_run_options *ro = NULL;
    onyx_status *st = onyx_run_options_create(&ro);
    if (!st && fn) st = onyx_run_options_set_capture(ro, fn, r);
    if (!st)
        st = onyx_session_run_with_options(s, ro, io->in_names, (const onyx_tensor *const *)io->inputs,
                                           io->n_in, io->out_names, outs, io->n_out);
    if (r) progress_done(r);
    onyx_run_options_free(ro);
    if (st) {
        cli_status(st);
        return CHECK_ERROR;
    }
    if (r && r->failed) {
        cli_error("check: out of memory keeping the %s run's values", r->label);
        return CHECK_ERROR;
    }
    return CLI_OK;
}

/* The value the run under test gave `name`: its capture, else the
 * reference's (a value optimization renamed), else a model input. */
static const onyx_tensor *input_value(const check_run *t, const check_run *r, const cli_io *io,
                                      const char *name) {
    const check_entry *e = check_table_get(&t->values, name);
    if (e && e->value) return e->value;
    e = check_table_get(&r->values, name);
    if (e && e->value) return e->value;
    for (size_t i = 0; i < io->n_in; i++)
        if (strcmp(io->in_names[i], name) == 0) return io->inputs[i];
    return NULL;
}

/* --save-subgraph: the first divergent node as the model's own nodes
 * (from the reference session, which runs the model unoptimized), its
 * inputs as captured, and the command that reproduces the divergence. */
static int save_subgraph(const check_args *a, onyx_env *env, const cli_io *io,
                         const check_run *ref_run, const check_run *test_run,
                         const onyx_session *test, const onyx_session *ref) {
    const check_entry *first = check_first_divergent(test_run, NULL, NULL);
    if (!first) return CLI_OK;
    size_t node = first->record.node, n = onyx_session_node_origin_count(test, node);
    const char *own = onyx_session_node_name(test, node);
    const char **names = calloc(n ? n : 1, sizeof *names);
    if (!names) return cli_error("check: out of memory");
    for (size_t k = 0; k < n; k++) names[k] = onyx_session_node_origin(test, node, k);
    if (!n) names[0] = own;
    onyx_status *st = onyx_session_save_subgraph(ref, names, n ? n : 1, a->save_subgraph);
    free(names);
    if (st) return cli_status(st);
    /* the saved model's inputs, in its order, from the captured values */
    onyx_session_options *o = NULL;
    onyx_session *sub = NULL;
    cli_buf dir = {0}, cmd = {0};
    cli_name_set used = {0};
    int rc = CHECK_ERROR;
    size_t len = strlen(a->save_subgraph);
    if (len > 5 && strcmp(a->save_subgraph + len - 5, ".onnx") == 0) len -= 5;
    cli_buf_printf(&dir, "%.*s_inputs", (int)len, a->save_subgraph);
    if ((st = onyx_session_options_create(&o)) || (st = onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE)) ||
        (st = onyx_session_create(env, a->save_subgraph, o, &sub))) {
        cli_status(st);
        goto done;
    }
    if (cli_mkdir_p(dir.s) != CLI_OK) goto done;
    const char *fault = getenv("ONYX_INJECT_FAULT");
    if (fault) {
        cli_buf_printf(&cmd, "ONYX_INJECT_FAULT=");
        check_shell_word(&cmd, fault);
        cli_buf_printf(&cmd, " ");
    }
    cli_buf_printf(&cmd, "onyx check ");
    check_shell_word(&cmd, a->save_subgraph);
    if (a->common.providers) {
        cli_buf_printf(&cmd, " --providers ");
        check_shell_word(&cmd, a->common.providers);
    }
    if (a->common.opt_level >= 0) cli_buf_printf(&cmd, " --opt-level %s", check_opt_level_name(a->common.opt_level));
    for (size_t i = 0; i < onyx_session_input_count(sub); i++) {
        onyx_value_info info;
        if ((st = onyx_session_input_info(sub, i, &info))) {
            cli_status(st);
            goto done;
        }
        const onyx_tensor *v = input_value(test_run, ref_run, io, info.name);
        if (!v) {
            cli_error("check: no captured value for the subgraph's input '%s'", info.name);
            goto done;
        }
        char *path = cli_npy_path(dir.s, info.name, &used);
        if (!path) {
            cli_error("check: out of memory");
            goto done;
        }
        st = onyx_tensor_save_npy(v, path);
        if (!st) {
            cli_buf_printf(&cmd, " --input ");
            cli_buf word = {0};
            cli_buf_printf(&word, "%s=%s", info.name, path);
            check_shell_word(&cmd, word.s);
            cli_buf_free(&word);
        }
        free(path);
        if (st) {
            cli_status(st);
            goto done;
        }
    }
    printf("subgraph:   '");
    char *e = cli_escape(a->save_subgraph);
    printf("%s' (%zu node%s of the model), its inputs as the run under test made them in '", e,
           onyx_session_node_count(sub), onyx_session_node_count(sub) == 1 ? "" : "s");
    free(e);
    e = cli_escape(dir.s);
    printf("%s'\nreproduce:  ", e);
    free(e);
    e = cli_escape(cmd.s);
    printf("%s\n", e);
    free(e);
    rc = CLI_OK;
done:
    cli_name_set_free(&used);
    cli_buf_free(&dir);
    cli_buf_free(&cmd);
    onyx_session_free(sub);
    onyx_session_options_free(o);
    return rc;
}

/* A fused group diverged: the same providers run the model unfused, with
 * capture, to tell a wrong fusion from a wrong kernel. */
static int check_unfused(const check_args *a, onyx_env *env, const cli_io *io,
                         const check_run *ref_run, const check_run *test_run,
                         const onyx_session *test) {
    const check_entry *first = check_first_divergent(test_run, NULL, NULL);
    if (!first || onyx_session_node_origin_count(test, first->record.node) < 2) return CLI_OK;
    onyx_session_options *o = NULL;
    onyx_session *s = NULL;
    onyx_tensor **outs = calloc(io->n_out + 1, sizeof *outs);
    check_run u = {.label = "unfused", .show_progress = isatty(2), .last_pct = (size_t)-1,
                   .rule = test_run->rule, .reference = ref_run};
    int rc = CHECK_ERROR;
    onyx_status *st = onyx_session_options_create(&o);
    if (st || !outs) {
        if (st) cli_status(st);
        else cli_error("check: out of memory");
        goto done;
    }
    if (cli_apply_session_args("check", &a->common, o) != CLI_OK) goto done;
    if ((st = onyx_session_options_set_optimization_level(o, ONYX_OPT_NONE)) ||
        (st = onyx_session_create(env, a->model, o, &s))) {
        cli_status(st);
        goto done;
    }
    u.n_nodes = onyx_session_node_count(s);
    if (run_once(s, io, &u, capture_test, outs) != CLI_OK) goto done;
    check_print_unfused(s, &u, test, first->record.node);
    rc = CLI_OK;
done:
    for (size_t k = 0; outs && k < io->n_out; k++) onyx_tensor_free(outs[k]);
    free(outs);
    check_table_free(&u.values);
    onyx_session_free(s);
    onyx_session_options_free(o);
    return rc;
}

static int check_main(check_args *a) {
    onyx_env *env = NULL;
    onyx_session *test = NULL, *ref = NULL;
    onyx_session_options *test_opts = NULL, *ref_opts = NULL;
    cli_io io = {0};
    onyx_tensor **test_out = NULL, **ref_out = NULL;
    check_run ref_run = {.label = "reference"}, test_run = {.label = "test"};
    int rc = CHECK_ERROR;
    onyx_status *st = onyx_session_options_create(&test_opts);
    if (st) {
        cli_status(st);
        goto done;
    }
    if (cli_apply_session_args("check", &a->common, test_opts) != CLI_OK) goto done;
    if (cli_open_session(a->model, test_opts, &env, &test) != CLI_OK) goto done;
    if (a->plan) {
        check_print_plan(test);
        rc = CLI_OK;
        goto done;
    }
    if ((st = reference_options(a, &ref_opts)) || (st = onyx_session_create(env, a->model, ref_opts, &ref))) {
        cli_status(st);
        goto done;
    }
    if (cli_prepare_io("check", test, &a->common, CLI_FILL_RANDOM, &io) != CLI_OK) goto done;
    test_out = calloc(io.n_out + 1, sizeof *test_out);
    ref_out = calloc(io.n_out + 1, sizeof *ref_out);
    if (!test_out || !ref_out) {
        cli_error("check: out of memory");
        goto done;
    }
    int tty = isatty(2);
    ref_run = (check_run){.label = "reference", .n_nodes = onyx_session_node_count(ref),
                          .show_progress = tty, .last_pct = (size_t)-1};
    test_run = (check_run){.label = "test", .n_nodes = onyx_session_node_count(test),
                           .show_progress = tty, .last_pct = (size_t)-1, .rule = &a->rule,
                           .reference = &ref_run, .keep_values = a->save_subgraph != NULL};
    double t0 = cli_now_ms();
    if (run_once(ref, &io, &ref_run, a->bisect ? capture_reference : NULL, ref_out) != CLI_OK)
        goto done;
    double t1 = cli_now_ms();
    if (run_once(test, &io, &test_run, a->bisect ? capture_test : NULL, test_out) != CLI_OK)
        goto done;
    double t2 = cli_now_ms();
    check_print_header(a->model, test, &io, &a->common, &a->rule);
    int outputs_fail = 0;
    if (check_print_outputs(&io, test_out, ref_out, &a->rule, &outputs_fail) != 0) {
        cli_error("check: out of memory comparing outputs");
        goto done;
    }
    int node_fails = 0;
    if (a->bisect) {
        node_fails = check_print_bisect(test, &io, &test_run, &ref_run, t1 - t0, t2 - t1);
        if (node_fails && check_unfused(a, env, &io, &ref_run, &test_run, test) != CLI_OK)
            goto done;
        if (node_fails && a->save_subgraph &&
            save_subgraph(a, env, &io, &ref_run, &test_run, test, ref) != CLI_OK)
            goto done;
    }
    if (a->report) {
        check_html_input h = {.argc = a->argc, .argv = a->argv, .model = a->model, .test = test,
                              .io = &io, .args = &a->common, .rule = &a->rule,
                              .test_run = &test_run, .ref_run = &ref_run, .test_out = test_out,
                              .ref_out = ref_out, .ref_ms = t1 - t0, .test_ms = t2 - t1};
        fflush(stdout); /* the terminal report first, then a write error */
        if (check_write_html(a->report, &h) != 0) goto done;
    }
    rc = outputs_fail || node_fails ? CHECK_FAIL : CLI_OK;
done:
    for (size_t o = 0; o < io.n_out; o++) {
        if (test_out) onyx_tensor_free(test_out[o]);
        if (ref_out) onyx_tensor_free(ref_out[o]);
    }
    free(test_out);
    free(ref_out);
    check_table_free(&ref_run.values);
    check_table_free(&test_run.values);
    cli_io_free(&io);
    onyx_session_free(test);
    onyx_session_free(ref);
    onyx_session_options_free(test_opts);
    onyx_session_options_free(ref_opts);
    onyx_env_free(env);
    return rc;
}

int cmd_check(int argc, char **argv) {
    check_args a;
    int r = parse_args(argc, argv, &a);
    /* main passes argv + 1: argv[-1] is the program as invoked */
    a.argc = argc + 1;
    a.argv = argv - 1;
    if (r == -2) {
        cli_session_args_free(&a.common);
        return CLI_OK;
    }
    if (r == CLI_OK) r = check_main(&a);
    else r = CHECK_ERROR;
    cli_session_args_free(&a.common);
    return r;
}
