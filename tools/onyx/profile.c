/* onyx bench --profile: where a run's time goes, from the node timing of
 * the run options (onyx_run_options_set_node_timing): the time per run of
 * each operator type, then the slowest nodes with the kernel each runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

typedef struct op_total {
    const char *domain, *op;
    uint64_t ns;
    size_t nodes;
} op_total;

typedef struct node_time {
    uint64_t ns;
    size_t index;
} node_time;

static int by_node_ns_desc(const void *a, const void *b) {
    uint64_t x = ((const node_time *)a)->ns, y = ((const node_time *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int by_total_desc(const void *a, const void *b) {
    uint64_t x = ((const op_total *)a)->ns, y = ((const op_total *)b)->ns;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The per-operator totals; NULL when out of memory. */
static op_total *op_totals(const onyx_session *s, const uint64_t *ns, size_t n, size_t *n_ops) {
    op_total *t = calloc(n + 1, sizeof *t);
    if (!t) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        const char *dom = onyx_session_node_domain(s, i), *op = onyx_session_node_op_type(s, i);
        size_t j = 0;
        while (j < k && (strcmp(t[j].op, op) != 0 || strcmp(t[j].domain, dom) != 0)) j++;
        if (j == k) t[k++] = (op_total){dom, op, 0, 0};
        t[j].ns += ns[i];
        t[j].nodes++;
    }
    qsort(t, k, sizeof *t, by_total_desc);
    *n_ops = k;
    return t;
}

int cli_profile_runs(onyx_session *s, int runs, int top,
                     int (*run)(onyx_session *s, onyx_run_options *ro, void *user), void *user) {
    size_t n = onyx_session_node_count(s);
    uint64_t *ns = calloc(n + 1, sizeof *ns);
    node_time *order = calloc(n + 1, sizeof *order);
    onyx_run_options *ro = NULL;
    int rc = CLI_FAIL;
    if (!ns || !order) {
        rc = cli_error("out of memory");
        goto out;
    }
    onyx_status *st = onyx_run_options_create(&ro);
    if (!st) st = onyx_run_options_set_node_timing(ro, ns, n);
    if (st) {
        rc = cli_status(st);
        goto out;
    }
    for (int r = 0; r < runs; r++)
        if ((rc = run(s, ro, user)) != CLI_OK) goto out;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total += ns[i];
    double per = 1e-6 / runs, pct = total ? 100.0 / (double)total : 0.0;
    printf("profile over %d more runs, per run (wall time of each node's kernel; for a device "
           "node, the time to record its work): %.3f ms in %zu nodes\n",
           runs, (double)total * per, n);
    size_t n_ops = 0;
    op_total *ops = op_totals(s, ns, n, &n_ops);
    if (!ops) {
        rc = cli_error("out of memory");
        goto out;
    }
    printf("  by operator:\n");
    for (size_t j = 0; j < n_ops; j++) {
        char label[128];
        snprintf(label, sizeof label, "%s%s%s", ops[j].domain, ops[j].domain[0] ? "." : "", ops[j].op);
        printf("    %-28s %9.3f ms %5.1f%%  %zu node%s\n", label, (double)ops[j].ns * per,
               (double)ops[j].ns * pct, ops[j].nodes, ops[j].nodes == 1 ? "" : "s");
    }
    free(ops);
    for (size_t i = 0; i < n; i++) order[i] = (node_time){ns[i], i};
    qsort(order, n, sizeof *order, by_node_ns_desc);
    size_t show = (size_t)top < n ? (size_t)top : n;
    printf("  slowest %zu nodes:\n", show);
    for (size_t k = 0; k < show; k++) {
        size_t i = order[k].index;
        char kernel[160];
        onyx_session_node_kernel(s, i, kernel, sizeof kernel);
        char *name = cli_escape(onyx_session_node_name(s, i));
        printf("    %9.3f ms %5.1f%%  %s (%s): %s\n", (double)ns[i] * per, (double)ns[i] * pct,
               name ? name : "?", onyx_session_node_op_type(s, i), kernel);
        free(name);
    }
    rc = CLI_OK;
out:
    onyx_run_options_free(ro);
    free(order);
    free(ns);
    return rc;
}
