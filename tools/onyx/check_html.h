/* onyx check --report: the bisect report as one self-contained HTML page
 * (inline CSS and SVG; nothing fetched from anywhere, no scripts). */
#ifndef ONYX_CLI_CHECK_HTML_H
#define ONYX_CLI_CHECK_HTML_H

#include <stdio.h>

#include "check.h"

/* Everything the page shows, as onyx check has it after both runs. */
typedef struct check_html_input {
    int argc;
    char *const *argv; /* the command line as invoked, program first */
    const char *model;
    const onyx_session *test;
    const cli_io *io;
    const cli_session_args *args;
    const cmp_rule *rule;
    const check_run *test_run, *ref_run;
    onyx_tensor *const *test_out, *const *ref_out;
    double ref_ms, test_ms;
} check_html_input;

/* Writes the page to path. Returns 0, or -1 after printing the error
 * (the file cannot be written, out of memory). */
int check_write_html(const char *path, const check_html_input *in);

/* ---- shared by check_html.c and check_svg.c ---- */

/* What the captured values say about one node of the session under test. */
typedef struct check_node_err {
    int n_records;  /* outputs captured */
    int n_compared; /* of those, compared with a reference value */
    int fail;       /* one of them outside tolerance */
    double max_rel; /* largest max relative error of the compared ones */
} check_node_err;

/* The text of the model (names, op types) for a page: terminal control
 * characters as \xNN (as the terminal report shows them), then HTML's
 * special characters as entities. */
void html_text(FILE *f, const char *s);
/* Only the HTML escaping, for text the tool made itself. */
void html_raw(FILE *f, const char *s);
/* s shortened to at most max characters (UTF-8 aware), its end kept,
 * with a leading ellipsis, then written as html_text. */
void html_text_tail(FILE *f, const char *s, size_t max);

/* The error plot along the graph (svg). first: the first divergent node,
 * (size_t)-1 when none. */
void check_svg_plot(FILE *f, const check_html_input *in, const check_node_err *errs, size_t n,
                    size_t first);
/* The first divergent node with its producers and consumers. */
void check_svg_neighbourhood(FILE *f, const check_html_input *in, const check_node_err *errs,
                             size_t n, size_t first);

#endif
