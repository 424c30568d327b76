/* onyx check --report: the two drawings, as inline SVG. The plot's
 * colours are fixed so that a test can find them in a rendering: the
 * first divergent node's marker is the only thing drawn in FIRST. */
#include <math.h>
#include <string.h>

#include "check_html.h"

#define PASS_COLOR "#1f77b4"
#define FAIL_COLOR "#ff7f0e"
#define FIRST_COLOR "#d62728"
#define NOREF_COLOR "#999999"
#define TOL_COLOR "#2ca02c"
#define PLOT_BG "#fbfbf7"

/* ---- the error plot ---- */

enum { PW = 1100, PH = 380, PX0 = 80, PX1 = PW - 84, PY0 = 40, PY1 = PH - 64 };
/* Inside [PY0, PY1]: a band at the top for infinite errors and one at the
 * bottom for zero, the log scale between them. */
enum { Y_INF = PY0 + 9, Y_ZERO = PY1 - 9, Y_TOP = PY0 + 28, Y_BOT = PY1 - 28 };

typedef struct axis {
    int lo, hi; /* decades at the ends of the log scale */
    size_t n;   /* nodes */
} axis;

static double x_of(const axis *a, size_t i) {
    return PX0 + 10 + (double)(PX1 - PX0 - 20) * (double)i / (double)(a->n > 1 ? a->n - 1 : 1);
}

static double y_of(const axis *a, double v) {
    if (v == 0.0) return Y_ZERO;
    if (!isfinite(v)) return Y_INF;
    double l = log10(v);
    if (l < a->lo) l = a->lo;
    if (l > a->hi) l = a->hi;
    return Y_BOT - (l - a->lo) / (a->hi - a->lo) * (Y_BOT - Y_TOP);
}

/* Decades around the finite nonzero errors and rtol. */
static axis make_axis(const check_node_err *errs, size_t n, double rtol) {
    double mn = INFINITY, mx = 0.0;
    for (size_t i = 0; i < n; i++) {
        double v = errs[i].max_rel;
        if (!errs[i].n_compared || !(v > 0.0) || !isfinite(v)) continue;
        mn = fmin(mn, v);
        mx = fmax(mx, v);
    }
    if (rtol > 0.0 && isfinite(rtol)) {
        mn = fmin(mn, rtol);
        mx = fmax(mx, rtol);
    }
    if (mx == 0.0) mn = mx = 1e-3;
    axis a = {.lo = (int)floor(log10(mn)), .hi = (int)ceil(log10(mx)), .n = n};
    if (a.lo < -30) a.lo = -30;
    if (a.hi > 30) a.hi = 30;
    if (a.hi - a.lo < 2) a.lo = a.hi - 2;
    return a;
}

static void node_title(FILE *f, const onyx_session *s, size_t i) {
    fprintf(f, "<title>#%zu ", i);
    html_text(f, onyx_session_node_op_type(s, i));
    fputs(" ", f);
    html_text(f, onyx_session_node_name(s, i));
}

/* brief: for a box, a few words */
static void error_text(FILE *f, const check_node_err *e, int brief) {
    if (!e->n_compared)
        fputs(e->n_records ? "no reference value" : "nothing captured", f);
    else
        fprintf(f, "max rel err %.3g%s", e->max_rel,
                !e->fail ? "" : brief ? ", FAIL" : ", outside tolerance");
}

static void write_axes(FILE *f, const axis *a, const cmp_rule *rule) {
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"" PLOT_BG
               "\" stroke=\"#bbb\"/>\n", PX0, PY0, PX1 - PX0, PY1 - PY0);
    /* the axis breaks between the bands and the log scale */
    for (int k = 0; k < 2; k++) {
        int y = k ? PY1 - 18 : PY0 + 18;
        fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#ddd\" "
                   "stroke-dasharray=\"2 4\"/>\n", PX0, y, PX1, y);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">inf</text>\n", PX0 - 6, Y_INF + 4);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", PX0 - 6, Y_ZERO + 4);
    int step = (a->hi - a->lo + 7) / 8;
    for (int d = a->lo; d <= a->hi; d += step) {
        double y = y_of(a, pow(10.0, d));
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#e6e6e6\"/>\n", PX0,
                y, PX1, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">1e%d</text>\n", PX0 - 6, y + 4, d);
    }
    /* x ticks: 1, 2 or 5 times a power of ten, at most about 10 */
    size_t span = a->n > 1 ? a->n - 1 : 1, xs = 1;
    for (size_t base = 1; span / xs > 10; base *= 10)
        xs = span / base <= 10 ? base : span / (2 * base) <= 10 ? 2 * base : 5 * base;
    for (size_t i = 0; i < a->n; i += xs) {
        double x = x_of(a, i);
        /* below the row of no-reference ticks */
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#888\"/>\n", x,
                PY1 + 14, x, PY1 + 20);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%zu</text>\n", x, PY1 + 32, i);
    }
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">node position in execution "
               "order (under test)</text>\n", (PX0 + PX1) / 2, PH - 14);
    fprintf(f, "<text transform=\"translate(16 %d) rotate(-90)\" text-anchor=\"middle\">max "
               "relative error</text>\n", (PY0 + PY1) / 2);
    if (rule->rtol > 0.0) {
        double y = y_of(a, rule->rtol);
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"" TOL_COLOR
                   "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n", PX0, y, PX1, y);
        fprintf(f, "<text x=\"%d\" y=\"%.1f\">rtol %g</text>\n", PX1 + 4, y + 4, rule->rtol);
    }
}

static void write_legend(FILE *f, int with_first, double rtol) {
    int x = PX0;
    fprintf(f, "<circle cx=\"%d\" cy=\"16\" r=\"4\" fill=\"" PASS_COLOR "\"/>"
               "<text x=\"%d\" y=\"20\">within tolerance</text>\n", x + 4, x + 12);
    x += 120;
    fprintf(f, "<circle cx=\"%d\" cy=\"16\" r=\"4\" fill=\"" FAIL_COLOR "\"/>"
               "<text x=\"%d\" y=\"20\">outside tolerance</text>\n", x + 4, x + 12);
    x += 125;
    if (with_first) {
        /* outlined, so that FIRST_COLOR fills only the marker in the plot */
        fprintf(f, "<circle cx=\"%d\" cy=\"16\" r=\"5\" fill=\"none\" stroke=\"" FIRST_COLOR
                   "\" stroke-width=\"2\"/><text x=\"%d\" y=\"20\">first divergent node</text>\n",
                x + 5, x + 14);
        x += 140;
    }
    fprintf(f, "<line x1=\"%d\" y1=\"11\" x2=\"%d\" y2=\"21\" stroke=\"" NOREF_COLOR
               "\" stroke-width=\"2\"/><text x=\"%d\" y=\"20\">no reference value</text>\n",
            x + 4, x + 4, x + 12);
    x += 130;
    if (!(rtol > 0.0)) return; /* no line drawn */
    fprintf(f, "<line x1=\"%d\" y1=\"16\" x2=\"%d\" y2=\"16\" stroke=\"" TOL_COLOR
               "\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/><text x=\"%d\" y=\"20\">rtol"
               "</text>\n", x, x + 24, x + 30);
}

void check_svg_plot(FILE *f, const check_html_input *in, const check_node_err *errs, size_t n,
                    size_t first) {
    const onyx_session *s = in->test;
    axis a = make_axis(errs, n, in->rule->rtol);
    fprintf(f, "<svg class=\"plot\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", PW, PH, PW, PH);
    write_legend(f, first != (size_t)-1, in->rule->rtol);
    write_axes(f, &a, in->rule);
    double r = n > 400 ? 2.0 : 3.0;
    for (size_t i = 0; i < n; i++) {
        double x = x_of(&a, i);
        if (!errs[i].n_compared) {
            fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"" NOREF_COLOR
                       "\" stroke-width=\"1.5\">", x, PY1 + 2, x, PY1 + 11);
        } else {
            if (i == first) continue; /* drawn last, on top */
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%.0f\" fill=\"%s\">", x,
                    y_of(&a, errs[i].max_rel), r, errs[i].fail ? FAIL_COLOR : PASS_COLOR);
        }
        node_title(f, s, i);
        fputs(": ", f);
        error_text(f, &errs[i], 0);
        fputs(errs[i].n_compared ? "</title></circle>\n" : "</title></line>\n", f);
    }
    if (first != (size_t)-1) {
        double x = x_of(&a, first), y = y_of(&a, errs[first].max_rel);
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e8a9a9\" "
                   "stroke-dasharray=\"3 3\"/>\n", x, PY0, x, PY1);
        fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"7\" fill=\"" FIRST_COLOR "\">", x, y);
        node_title(f, s, first);
        fputs(": ", f);
        error_text(f, &errs[first], 0);
        fputs("</title></circle>\n", f);
        /* the label on the side with room, below the marker in the inf band */
        int right = x < (PX0 + PX1) / 2;
        double ly = y < Y_TOP ? y + 22 : y - 6;
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" style=\"font-weight:bold;"
                   "fill:#8b1a1a\">first divergent: #%zu ", right ? x + 10 : x - 10, ly,
                right ? "start" : "end", first);
        html_text(f, onyx_session_node_op_type(s, first));
        fprintf(f, "</text>\n<text class=\"mono\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
                   "style=\"fill:#8b1a1a\">", right ? x + 10 : x - 10, ly + 14,
                right ? "start" : "end");
        html_text_tail(f, onyx_session_node_name(s, first), 60);
        fputs("</text>\n", f);
    }
    fputs("</svg>\n<p class=\"note\">Each point is a node's largest max relative error over its "
          "compared outputs (zero on the bottom line, infinite on the top one); its colour "
          "follows the tolerance rule, so a point above the rtol line may pass through atol. "
          "Grey ticks under the axis are nodes without a reference value.</p>\n", f);
}

/* ---- the neighbourhood ---- */

enum { GW = 1100, BOX_H = 70, ROW_MAX = 6, GAP = 16 };
enum { ROW_UP = 10, ROW_MID = 135, ROW_DOWN = 260, GH = ROW_DOWN + BOX_H + 10 };

typedef enum box_kind { BOX_NODE, BOX_MODEL_INPUT, BOX_MODEL_OUTPUT, BOX_MORE } box_kind;

typedef struct box {
    box_kind kind;
    size_t node;      /* BOX_NODE; BOX_MORE: how many more */
    const char *name; /* the value, for model inputs and outputs */
} box;

typedef struct row {
    box boxes[ROW_MAX];
    size_t n, more;
} row;

static void row_add(row *r, box b) {
    for (size_t i = 0; i < r->n; i++)
        if (b.kind == BOX_NODE && r->boxes[i].kind == BOX_NODE && r->boxes[i].node == b.node) return;
    if (r->n < ROW_MAX) r->boxes[r->n++] = b;
    else r->more++;
}

static int node_reads(const onyx_session *s, size_t j, const char *name) {
    size_t n = onyx_session_node_input_count(s, j);
    for (size_t k = 0; k < n; k++) {
        const char *v = onyx_session_node_input_name(s, j, k);
        if (v && strcmp(v, name) == 0) return 1;
    }
    return 0;
}

static size_t producer_of(const onyx_session *s, size_t n, const char *name) {
    for (size_t j = 0; j < n; j++) {
        size_t m = onyx_session_node_output_count(s, j);
        for (size_t k = 0; k < m; k++) {
            const char *v = onyx_session_node_output_name(s, j, k);
            if (v && strcmp(v, name) == 0) return j;
        }
    }
    return (size_t)-1;
}

static int listed(const char *const *names, size_t n, const char *name) {
    for (size_t i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static void draw_box(FILE *f, const check_html_input *in, const check_node_err *errs, const box *b,
                     double x, int y, double w, int is_first) {
    const onyx_session *s = in->test;
    const char *fill = "#ffffff", *stroke = "#888888", *extra = " stroke-dasharray=\"4 3\"";
    if (b->kind == BOX_NODE) {
        const check_node_err *e = &errs[b->node];
        extra = "";
        if (is_first) fill = "#fde0dd", stroke = "#b22222", extra = " stroke-width=\"2.5\"";
        else if (!e->n_compared) fill = "#f0f0f0", stroke = "#aaaaaa";
        else if (e->fail) fill = "#fff1e0", stroke = "#e08a2e";
        else fill = "#eaf2fb", stroke = "#6b9bd1";
    }
    fprintf(f, "<g><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"4\" fill=\"%s\" "
               "stroke=\"%s\"%s/>", x, y, w, BOX_H, fill, stroke, extra);
    size_t chars = w > 24 ? (size_t)((w - 12) / 6.7) : 1;
    double tx = x + 6;
    if (b->kind == BOX_MORE) {
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">and %zu more</text></g>\n", tx, y + 38, b->node);
        return;
    }
    if (b->kind != BOX_NODE) {
        fprintf(f, "<title>model %s ", b->kind == BOX_MODEL_INPUT ? "input" : "output");
        html_text(f, b->name);
        fprintf(f, "</title><text x=\"%.1f\" y=\"%d\" style=\"font-weight:bold\">model %s</text>",
                tx, y + 18, b->kind == BOX_MODEL_INPUT ? "input" : "output");
        fprintf(f, "<text class=\"mono\" x=\"%.1f\" y=\"%d\">", tx, y + 36);
        html_text_tail(f, b->name, chars);
        fputs("</text></g>\n", f);
        return;
    }
    node_title(f, s, b->node);
    fputs("</title>", f);
    fprintf(f, "<text x=\"%.1f\" y=\"%d\" style=\"font-weight:bold\">#%zu ", tx, y + 18, b->node);
    html_text_tail(f, onyx_session_node_op_type(s, b->node), chars > 8 ? chars - 6 : 2);
    fprintf(f, "</text><text class=\"mono\" x=\"%.1f\" y=\"%d\">", tx, y + 36);
    html_text_tail(f, onyx_session_node_name(s, b->node), chars);
    fprintf(f, "</text><text x=\"%.1f\" y=\"%d\">", tx, y + 56);
    error_text(f, &errs[b->node], 1);
    fputs("</text></g>\n", f);
}

/* Draws a row centred; xs receives each box's centre. A full row's last
 * box says how many more there are. */
static void draw_row(FILE *f, const check_html_input *in, const check_node_err *errs, row *r,
                     int y, double *xs) {
    size_t n = r->n;
    if (r->more) r->boxes[n - 1] = (box){.kind = BOX_MORE, .node = r->more + 1};
    double w = n ? (GW - 20.0 - GAP * (double)(n - 1)) / (double)n : 0.0;
    if (w > 240.0) w = 240.0;
    double x = (GW - (w * (double)n + GAP * (double)(n ? n - 1 : 0))) / 2.0;
    for (size_t i = 0; i < n; i++, x += w + GAP) {
        draw_box(f, in, errs, &r->boxes[i], x, y, w, 0);
        xs[i] = x + w / 2.0;
    }
}

void check_svg_neighbourhood(FILE *f, const check_html_input *in, const check_node_err *errs,
                             size_t n, size_t first) {
    const onyx_session *s = in->test;
    const cli_io *io = in->io;
    row up = {0}, down = {0};
    size_t n_in = onyx_session_node_input_count(s, first);
    for (size_t k = 0; k < n_in; k++) {
        const char *v = onyx_session_node_input_name(s, first, k);
        if (!v || !v[0]) continue;
        size_t p = producer_of(s, n, v);
        if (p != (size_t)-1) row_add(&up, (box){.kind = BOX_NODE, .node = p});
        else if (listed(io->in_names, io->n_in, v))
            row_add(&up, (box){.kind = BOX_MODEL_INPUT, .name = v});
        /* constants have no box: the node's table lists them */
    }
    size_t n_out = onyx_session_node_output_count(s, first);
    for (size_t k = 0; k < n_out; k++) {
        const char *v = onyx_session_node_output_name(s, first, k);
        if (!v || !v[0]) continue;
        for (size_t j = 0; j < n; j++)
            if (j != first && node_reads(s, j, v)) row_add(&down, (box){.kind = BOX_NODE, .node = j});
        if (listed(io->out_names, io->n_out, v))
            row_add(&down, (box){.kind = BOX_MODEL_OUTPUT, .name = v});
    }
    fprintf(f, "<svg class=\"graph\" width=\"%d\" "
               "height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n<defs><marker id=\"arrow\" "
               "viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" markerHeight=\"8\" "
               "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#555\"/></marker></defs>\n",
            GW, GH, GW, GH);
    double up_x[ROW_MAX], down_x[ROW_MAX];
    draw_row(f, in, errs, &up, ROW_UP, up_x);
    draw_row(f, in, errs, &down, ROW_DOWN, down_x);
    double mw = 320.0, mx = (GW - mw) / 2.0;
    for (size_t i = 0; i < up.n; i++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#555\" "
                   "marker-end=\"url(#arrow)\"/>\n", up_x[i], ROW_UP + BOX_H, GW / 2.0, ROW_MID);
    for (size_t i = 0; i < down.n; i++)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#555\" "
                   "marker-end=\"url(#arrow)\"/>\n", GW / 2.0, ROW_MID + BOX_H, down_x[i], ROW_DOWN);
    box mid = {.kind = BOX_NODE, .node = first};
    draw_box(f, in, errs, &mid, mx, ROW_MID, mw, 1);
    if (!up.n)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">(its inputs are "
                   "constants)</text>\n", GW / 2.0, ROW_UP + 40);
    if (!down.n)
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">(nothing reads its "
                   "outputs)</text>\n", GW / 2.0, ROW_DOWN + 40);
    fputs("</svg>\n", f);
}
