/* onyx check --report: the page, its tables and the command that makes
 * it again (the two drawings are in check_svg.c). Every string from the
 * model goes through html_text: names are untrusted. */
#include "check_html.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- escaping ---- */

void html_raw(FILE *f, const char *s) {
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f); break;
        }
    }
}

void html_text(FILE *f, const char *s) {
    char *e = cli_escape(s ? s : "");
    html_raw(f, e);
    free(e);
}

void html_text_tail(FILE *f, const char *s, size_t max) {
    char *e = cli_escape(s ? s : "");
    size_t chars = 0;
    for (const char *p = e; *p; p++) chars += ((unsigned char)*p & 0xc0) != 0x80;
    const char *start = e;
    if (chars > max && max > 1) {
        /* skip to the character that leaves max - 1 after the ellipsis */
        size_t skip = chars - (max - 1);
        for (; *start; start++) {
            if (((unsigned char)*start & 0xc0) != 0x80) {
                if (skip == 0) break;
                skip--;
            }
        }
        fputs("\xe2\x80\xa6", f); /* U+2026 */
    }
    html_raw(f, start);
    free(e);
}

/* ---- the command ---- */

static int shell_plain(const char *s) {
    if (!*s) return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%^", *s))
            return 0;
    return 1;
}

void check_shell_word(cli_buf *b, const char *s) {
    if (shell_plain(s)) {
        cli_buf_printf(b, "%s", s);
        return;
    }
    int controls = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) controls = 1;
    if (!controls) {
        cli_buf_printf(b, "'");
        for (; *s; s++) cli_buf_printf(b, *s == '\'' ? "'\\''" : "%c", *s);
        cli_buf_printf(b, "'");
        return;
    }
    cli_buf_printf(b, "$'");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p < 0x20 || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)) {
            cli_buf_printf(b, "\\x%02x", *p);
            if (*p == 0xc2) cli_buf_printf(b, "\\x%02x", *++p);
        } else if (*p == '\\' || *p == '\'') {
            cli_buf_printf(b, "\\%c", *p);
        } else {
            cli_buf_printf(b, "%c", *p);
        }
    }
    cli_buf_printf(b, "'");
}

/* The environment that changes the session under test, then argv. */
static void write_command(FILE *f, const check_html_input *in) {
    static const char *const vars[] = {"ONYX_INJECT_FAULT", "ONYX_CPU_ISA", "ONYX_VK_DISABLE",
                                       "ONYX_VK_REFUSE_SHADERS"};
    cli_buf b = {0};
    for (size_t i = 0; i < sizeof vars / sizeof *vars; i++) {
        const char *v = getenv(vars[i]);
        if (!v) continue;
        cli_buf_printf(&b, "%s=", vars[i]);
        check_shell_word(&b, v);
        cli_buf_printf(&b, " ");
    }
    for (int i = 0; i < in->argc; i++) {
        if (i) cli_buf_printf(&b, " ");
        check_shell_word(&b, in->argv[i]);
    }
    fputs("<h2>Command</h2>\n<p>Run from the same directory, this makes the same report:</p>\n"
          "<pre class=\"cmd\">", f);
    html_raw(f, b.s ? b.s : "");
    fputs("</pre>\n", f);
    cli_buf_free(&b);
}

/* ---- tables ---- */

static void write_type(FILE *f, onyx_dtype dt, const int64_t *dims, int rank) {
    cli_buf b = {0};
    cli_format_dims(&b, dims, rank);
    fprintf(f, "%s ", onyx_dtype_name(dt));
    html_raw(f, b.s ? b.s : "[]");
    cli_buf_free(&b);
}

/* "3.41e+03 at [0,984]" */
static void write_err(FILE *f, double v, onyx_dtype dt, const int64_t *dims, int rank, int64_t at) {
    char idx[128] = "";
    if (at >= 0) cmp_format_index(dt, dims, rank, at, idx, sizeof idx);
    fprintf(f, "%.3g%s%s", v, idx[0] ? " at " : "", idx);
}

/* The cells of one compared value: type, max abs, max rel, outside
 * tolerance, verdict (5 cells). */
static void write_cmp_cells(FILE *f, onyx_value_kind kind, onyx_dtype dt, const int64_t *dims,
                            int rank, const cmp_result *c) {
    fputs("<td>", f);
    if (kind == ONYX_KIND_TENSOR) write_type(f, dt, dims, rank);
    fputs("</td>", f);
    if (!c->compared || c->why[0]) {
        fputs("<td colspan=\"3\">", f);
        html_text(f, c->why);
        fprintf(f, "</td><td class=\"%s\">%s</td></tr>\n", c->compared ? "bad" : "na",
                c->compared ? "FAIL" : "not compared");
        return;
    }
    fputs("<td>", f);
    write_err(f, c->max_abs, dt, dims, rank, c->at_abs);
    fputs("</td><td>", f);
    write_err(f, c->max_rel, dt, dims, rank, c->at_rel);
    fprintf(f, "</td><td>%lld of %lld</td>", (long long)c->bad, (long long)c->count);
    fprintf(f, "<td class=\"%s\">%s</td></tr>\n", c->pass ? "ok" : "bad", c->pass ? "pass" : "FAIL");
}

static const char *const CMP_HEAD = "<th>type</th><th>max abs err</th><th>max rel err</th>"
                                    "<th>outside atol + rtol&#183;|ref|</th><th>verdict</th>";

static void write_header(FILE *f, const check_html_input *in) {
    char rule[160];
    cmp_describe_rule(in->rule, rule, sizeof rule);
    fputs("<table class=\"facts\">\n<tr><th>model</th><td>", f);
    html_text(f, in->model);
    fputs("</td></tr>\n<tr><th>under test</th><td>providers ", f);
    html_text(f, in->args->providers ? in->args->providers : "cpu");
    fprintf(f, ", optimization %s</td></tr>\n", check_opt_level_name(in->args->opt_level));
    fputs("<tr><th>reference</th><td>providers cpu, optimization none</td></tr>\n", f);
    for (size_t i = 0; i < in->io->n_in; i++) {
        const onyx_tensor *t = in->io->inputs[i];
        fputs("<tr><th>input</th><td><code>", f);
        html_text(f, in->io->in_names[i]);
        fputs("</code> ", f);
        if (onyx_tensor_kind(t) == ONYX_KIND_TENSOR)
            write_type(f, onyx_tensor_dtype(t), onyx_tensor_dims(t), onyx_tensor_rank(t));
        fputs("</td></tr>\n", f);
    }
    fputs("<tr><th>tolerance</th><td>", f);
    html_raw(f, rule);
    fputs("</td></tr>\n", f);
    const check_run *t = in->test_run, *r = in->ref_run;
    fprintf(f, "<tr><th>runs</th><td>reference %.0f ms, under test %.0f ms, capturing %zu and "
               "%zu values</td></tr>\n</table>\n", in->ref_ms, in->test_ms, r->values.n, t->values.n);
}

static int write_outputs(FILE *f, const check_html_input *in) {
    fprintf(f, "<h2>Outputs</h2>\n<table>\n<tr><th>output</th>%s</tr>\n", CMP_HEAD);
    for (size_t o = 0; o < in->io->n_out; o++) {
        cmp_result c;
        onyx_tensor *t = in->test_out[o];
        if (cmp_tensors(t, in->ref_out[o], in->rule, &c) != 0) return -1;
        fputs("<tr><td><code>", f);
        html_text(f, in->io->out_names[o]);
        fputs("</code></td>", f);
        int tensor = onyx_tensor_kind(t) == ONYX_KIND_TENSOR;
        write_cmp_cells(f, onyx_tensor_kind(t), onyx_tensor_dtype(t),
                        tensor ? onyx_tensor_dims(t) : NULL, tensor ? onyx_tensor_rank(t) : 0, &c);
    }
    fputs("</table>\n", f);
    return 0;
}

static int is_model_input(const cli_io *io, const char *name) {
    for (size_t i = 0; i < io->n_in; i++)
        if (strcmp(io->in_names[i], name) == 0) return 1;
    return 0;
}

static void write_node_ref(FILE *f, const onyx_session *s, size_t node) {
    fprintf(f, "#%zu <code>", node);
    html_text(f, onyx_session_node_name(s, node));
    fputs("</code>", f);
}

/* One input or output row of the divergent node; *upstream as in the
 * terminal report (the latest producer without a reference value). */
static void write_value_row(FILE *f, const check_html_input *in, const char *name, int is_input,
                            size_t *upstream) {
    const onyx_session *s = in->test;
    const check_entry *e = name[0] ? check_table_get(&in->test_run->values, name) : NULL;
    fputs("<tr><td><code>", f);
    html_text(f, name);
    fputs(is_input ? "</code></td><td>" : "</code></td>", f);
    if (!name[0]) {
        fputs(is_input ? "omitted</td><td colspan=\"5\"></td></tr>\n"
                       : "<td colspan=\"6\">omitted</td></tr>\n", f);
        return;
    }
    if (is_input && is_model_input(in->io, name)) {
        fputs("model input</td><td colspan=\"4\">the same in both runs</td><td class=\"ok\">"
              "same</td></tr>\n", f);
        return;
    }
    if (!e || !e->has_record) {
        fputs(is_input ? "constant</td><td colspan=\"4\">an initializer or folded, the same in "
                         "both runs</td><td class=\"ok\">same</td></tr>\n"
                       : "<td colspan=\"4\">not captured</td><td class=\"na\">-</td></tr>\n",
              f);
        return;
    }
    if (is_input) {
        write_node_ref(f, s, e->node);
        fputs("</td>", f);
    }
    const check_record *r = &e->record;
    if (is_input && !r->cmp.compared && (*upstream == (size_t)-1 || e->node > *upstream))
        *upstream = e->node;
    write_cmp_cells(f, r->kind, r->dtype, r->dims, r->rank, &r->cmp);
}

static void write_divergent(FILE *f, const check_html_input *in, size_t node) {
    const onyx_session *s = in->test;
    char kernel[256];
    onyx_session_node_kernel(s, node, kernel, sizeof kernel);
    fputs("<h2>First divergent node</h2>\n<table class=\"facts\">\n<tr><th>node</th><td>", f);
    write_node_ref(f, s, node);
    fprintf(f, " of %zu, in execution order</td></tr>\n<tr><th>operator</th><td>",
            onyx_session_node_count(s));
    const char *dom = onyx_session_node_domain(s, node);
    if (dom && dom[0]) {
        html_text(f, dom);
        fputs(".", f);
    }
    html_text(f, onyx_session_node_op_type(s, node));
    fputs("</td></tr>\n<tr><th>provider</th><td>", f);
    html_text(f, onyx_session_node_provider(s, node));
    fputs("</td></tr>\n<tr><th>kernel</th><td>", f);
    html_text(f, kernel);
    fputs("</td></tr>\n", f);
    size_t n_orig = onyx_session_node_origin_count(s, node);
    if (n_orig) {
        fputs("<tr><th>fused from</th><td>", f);
        for (size_t k = 0; k < n_orig; k++) {
            fputs(k ? ", <code>" : "<code>", f);
            html_text(f, onyx_session_node_origin(s, node, k));
            fputs("</code>", f);
        }
        fputs("</td></tr>\n", f);
    }
    size_t need = onyx_session_node_attributes(s, node, NULL, 0);
    char *attrs = need ? malloc(need + 1) : NULL;
    if (attrs) {
        onyx_session_node_attributes(s, node, attrs, need + 1);
        fputs("<tr><th>attributes</th><td><code>", f);
        html_text(f, attrs);
        fputs("</code></td></tr>\n", f);
    }
    free(attrs);
    fputs("</table>\n", f);
    size_t upstream = (size_t)-1;
    for (int is_input = 1; is_input >= 0; is_input--) {
        fprintf(f, "<h3>%s</h3>\n<table>\n<tr><th>value</th>%s%s</tr>\n",
                is_input ? "Inputs" : "Outputs", is_input ? "<th>from</th>" : "", CMP_HEAD);
        size_t n = is_input ? onyx_session_node_input_count(s, node)
                            : onyx_session_node_output_count(s, node);
        for (size_t k = 0; k < n; k++) {
            const char *name = is_input ? onyx_session_node_input_name(s, node, k)
                                        : onyx_session_node_output_name(s, node, k);
            write_value_row(f, in, name ? name : "", is_input, &upstream);
        }
        fputs("</table>\n", f);
    }
    if (upstream != (size_t)-1) {
        fputs("<p class=\"note\">An input has no reference value to compare: the divergence may "
              "start earlier, at or before ", f);
        write_node_ref(f, s, upstream);
        fputs(".</p>\n", f);
    }
}

/* ---- the page ---- */

static const char *const STYLE =
    "body{font:14px/1.4 sans-serif;color:#222;margin:16px auto;max-width:1140px;padding:0 12px}"
    "h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}"
    "h3{font-size:15px}table{border-collapse:collapse;margin:6px 0}"
    "th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}table.facts th{width:110px}code,pre{font-family:monospace}"
    "code{word-break:break-all}td.ok{color:#1a6e1a}td.bad{color:#b00;font-weight:bold}"
    "td.na{color:#777}pre.cmd{background:#f4f4f4;padding:8px;white-space:pre-wrap;"
    "word-break:break-all}p.note{color:#555}svg{display:block;margin:8px 0}"
    "svg text{font:11px sans-serif;fill:#222}svg text.mono{font:11px monospace}";

/* Per node: how many outputs were captured and compared, the worst. */
static check_node_err *node_errors(const check_run *t, size_t n) {
    check_node_err *errs = calloc(n ? n : 1, sizeof *errs);
    if (!errs) return NULL;
    for (size_t i = 0; i < t->values.n; i++) {
        const check_entry *e = &t->values.entries[i];
        if (!e->has_record || e->record.node >= n) continue;
        check_node_err *ne = &errs[e->record.node];
        ne->n_records++;
        if (!e->record.cmp.compared) continue;
        if (!ne->n_compared || e->record.cmp.max_rel > ne->max_rel) ne->max_rel = e->record.cmp.max_rel;
        ne->n_compared++;
        if (!e->record.cmp.pass) ne->fail = 1;
    }
    return errs;
}

static int write_page(FILE *f, const check_html_input *in) {
    size_t n = onyx_session_node_count(in->test), first = (size_t)-1;
    check_node_err *errs = node_errors(in->test_run, n);
    if (!errs) return -1;
    size_t compared = 0, failed = 0;
    for (size_t i = 0; i < n; i++) {
        compared += errs[i].n_compared > 0;
        failed += errs[i].fail;
        if (errs[i].fail && first == (size_t)-1) first = i;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>onyx "
          "check: ", f);
    html_text(f, in->model);
    fprintf(f, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>onyx check: <code>", STYLE);
    html_text(f, in->model);
    fputs("</code></h1>\n", f);
    write_header(f, in);
    if (write_outputs(f, in) != 0) {
        free(errs);
        return -1;
    }
    fprintf(f, "<h2>Error along the graph</h2>\n<p>%zu nodes in execution order under test; %zu "
               "with outputs compared, %zu of them outside tolerance, %zu without a reference "
               "value (made or renamed by optimization).</p>\n",
            n, compared, failed, n - compared);
    check_svg_plot(f, in, errs, n, first);
    if (first == (size_t)-1) {
        fputs("<h2>First divergent node</h2>\n<p>None: every compared value is within "
              "tolerance.</p>\n", f);
    } else {
        fputs("<h2>Neighbourhood</h2>\n<p>Producers of its inputs and consumers of its outputs "
              "under test, with the largest max relative error of each node's outputs.</p>\n", f);
        check_svg_neighbourhood(f, in, errs, n, first);
        write_divergent(f, in, first);
    }
    write_command(f, in);
    fputs("</body>\n</html>\n", f);
    free(errs);
    return 0;
}

int check_write_html(const char *path, const check_html_input *in) {
    FILE *f = fopen(path, "w");
    if (!f) {
        cli_error("check: cannot write the report '%s': %s", path, strerror(errno));
        return -1;
    }
    if (write_page(f, in) != 0) {
        fclose(f);
        cli_error("check: out of memory writing the report");
        return -1;
    }
    int bad = ferror(f), err = bad ? errno : 0;
    if (fclose(f) != 0) {
        bad = 1;
        err = errno;
    }
    if (bad) {
        cli_error("check: cannot write the report '%s': %s", path, strerror(err ? err : EIO));
        return -1;
    }
    return 0;
}
