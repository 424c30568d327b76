/* onyx check: the captured-value table and the printed reports. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ---- values by name ---- */

static size_t hash_name(const char *s) {
    size_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static size_t *find_slot(const check_table *t, const char *name) {
    size_t mask = t->n_slots - 1;
    for (size_t i = hash_name(name) & mask;; i = (i + 1) & mask) {
        size_t e = t->slots[i];
        if (e == 0 || strcmp(t->entries[e - 1].name, name) == 0) return &t->slots[i];
    }
}

static int grow_slots(check_table *t) {
    size_t n = t->n_slots ? t->n_slots * 2 : 256;
    size_t *slots = calloc(n, sizeof *slots);
    if (!slots) return -1;
    free(t->slots);
    t->slots = slots;
    t->n_slots = n;
    for (size_t e = 0; e < t->n; e++) *find_slot(t, t->entries[e].name) = e + 1;
    return 0;
}

int check_table_put(check_table *t, const char *name, size_t node, onyx_tensor *value,
                    const check_record *rec) {
    if ((t->n + 1) * 2 > t->n_slots && grow_slots(t) != 0) return -1;
    size_t *slot = find_slot(t, name);
    check_entry *e;
    if (*slot) {
        e = &t->entries[*slot - 1];
        onyx_tensor_free(e->value);
    } else {
        if (t->n == t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 256;
            check_entry *grown = realloc(t->entries, cap * sizeof *grown);
            if (!grown) return -1;
            t->entries = grown;
            t->cap = cap;
        }
        e = &t->entries[t->n];
        memset(e, 0, sizeof *e);
        if (!(e->name = strdup(name))) return -1;
        *slot = ++t->n;
    }
    e->node = node;
    e->value = value;
    e->has_record = rec != NULL;
    if (rec) e->record = *rec;
    return 0;
}

const check_entry *check_table_get(const check_table *t, const char *name) {
    if (!t->n_slots) return NULL;
    size_t e = *find_slot(t, name);
    return e ? &t->entries[e - 1] : NULL;
}

void check_table_free(check_table *t) {
    for (size_t e = 0; e < t->n; e++) {
        free(t->entries[e].name);
        onyx_tensor_free(t->entries[e].value);
    }
    free(t->entries);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* ---- reports ---- */

/* Prints s escaped (model text is untrusted). */
static void put_escaped(const char *s) {
    char *e = cli_escape(s ? s : "");
    fputs(e, stdout);
    free(e);
}

static void print_node_line(const onyx_session *s, size_t i) {
    char kernel[256];
    onyx_session_node_kernel(s, i, kernel, sizeof kernel);
    printf("#%zu '", i);
    put_escaped(onyx_session_node_name(s, i));
    printf("' (");
    const char *dom = onyx_session_node_domain(s, i);
    if (dom && dom[0]) {
        put_escaped(dom);
        printf(".");
    }
    put_escaped(onyx_session_node_op_type(s, i));
    printf(") on %s, kernel ", onyx_session_node_provider(s, i));
    put_escaped(kernel);
}

static void print_origins(const onyx_session *s, size_t i, const char *lead) {
    size_t n = onyx_session_node_origin_count(s, i);
    if (!n) return;
    printf("%s", lead);
    for (size_t k = 0; k < n; k++) {
        printf("%s'", k ? ", " : "");
        put_escaped(onyx_session_node_origin(s, i, k));
        printf("'");
    }
    printf("\n");
}

void check_print_plan(const onyx_session *s) {
    size_t n = onyx_session_node_count(s);
    printf("plan: %zu nodes in execution order\n", n);
    for (size_t i = 0; i < n; i++) {
        print_node_line(s, i);
        printf("\n");
        print_origins(s, i, "    fused from: ");
    }
}

static void print_dims(onyx_dtype dt, const int64_t *dims, int rank) {
    cli_buf b = {0};
    cli_format_dims(&b, dims, rank);
    printf("%s %s", onyx_dtype_name(dt), b.s ? b.s : "[]");
    cli_buf_free(&b);
}

const char *check_opt_level_name(int opt_level) {
    static const char *const levels[] = {"none", "basic", "all"};
    return opt_level >= 0 && opt_level <= 2 ? levels[opt_level] : "all";
}

void check_print_header(const char *model, const onyx_session *test, const cli_io *io,
                        const cli_session_args *args, const cmp_rule *rule) {
    char rule_text[160];
    cmp_describe_rule(rule, rule_text, sizeof rule_text);
    printf("model:      ");
    put_escaped(model);
    printf("\nunder test: providers %s, optimization %s\n", args->providers ? args->providers : "cpu",
           check_opt_level_name(args->opt_level));
    printf("reference:  providers cpu, optimization none\n");
    (void)test;
    for (size_t i = 0; i < io->n_in; i++) {
        printf("input:      '");
        put_escaped(io->in_names[i]);
        printf("' ");
        const onyx_tensor *t = io->inputs[i];
        if (onyx_tensor_kind(t) == ONYX_KIND_TENSOR)
            print_dims(onyx_tensor_dtype(t), onyx_tensor_dims(t), onyx_tensor_rank(t));
        printf("\n");
    }
    printf("tolerance:  %s\n", rule_text);
}

/* "max abs err 3.1e-06 at [0,5], max rel err 2e-05 at [0,7]" */
static void print_errors(onyx_dtype dt, const int64_t *dims, int rank, const cmp_result *c) {
    char at_a[128] = "", at_r[128] = "";
    if (c->at_abs >= 0) cmp_format_index(dt, dims, rank, c->at_abs, at_a, sizeof at_a);
    if (c->at_rel >= 0) cmp_format_index(dt, dims, rank, c->at_rel, at_r, sizeof at_r);
    printf("max abs err %.3g%s%s, max rel err %.3g%s%s", c->max_abs, at_a[0] ? " at " : "", at_a,
           c->max_rel, at_r[0] ? " at " : "", at_r);
    if (c->bad) printf(", %lld of %lld outside tolerance", (long long)c->bad, (long long)c->count);
}

int check_print_outputs(const cli_io *io, onyx_tensor *const *test, onyx_tensor *const *ref,
                        const cmp_rule *rule, int *any_fail) {
    *any_fail = 0;
    for (size_t o = 0; o < io->n_out; o++) {
        cmp_result c;
        if (cmp_tensors(test[o], ref[o], rule, &c) != 0) return -1;
        int pass = !c.compared || c.pass;
        if (c.compared && !c.pass) *any_fail = 1;
        printf("output:     '");
        put_escaped(io->out_names[o]);
        printf("' ");
        if (onyx_tensor_kind(test[o]) == ONYX_KIND_TENSOR)
            print_dims(onyx_tensor_dtype(test[o]), onyx_tensor_dims(test[o]), onyx_tensor_rank(test[o]));
        printf(": ");
        if (c.why[0])
            printf("%s", c.why);
        else
            print_errors(onyx_tensor_dtype(test[o]), onyx_tensor_dims(test[o]),
                         onyx_tensor_rank(test[o]), &c);
        printf(": %s\n", !c.compared ? "not compared" : pass ? "pass" : "FAIL");
    }
    return 0;
}

static int is_model_input(const cli_io *io, const char *name) {
    for (size_t i = 0; i < io->n_in; i++)
        if (strcmp(io->in_names[i], name) == 0) return 1;
    return 0;
}

/* One input of the divergent node: where it came from and its error. */
static void print_input(const onyx_session *s, const cli_io *io, const check_run *t,
                        const char *name, size_t *upstream) {
    printf("    input  '");
    put_escaped(name);
    printf("': ");
    const check_entry *e = check_table_get(&t->values, name);
    if (!name[0]) {
        printf("omitted\n");
    } else if (is_model_input(io, name)) {
        printf("model input, the same in both runs\n");
    } else if (!e || !e->has_record) {
        printf("constant (an initializer or folded), the same in both runs\n");
    } else {
        const check_record *r = &e->record;
        if (r->kind == ONYX_KIND_TENSOR) {
            print_dims(r->dtype, r->dims, r->rank);
            printf(", ");
        }
        if (!r->cmp.compared) {
            printf("%s, from #%zu '", r->cmp.why, e->node);
            put_escaped(onyx_session_node_name(s, e->node));
            printf("'\n");
            if (*upstream == (size_t)-1 || e->node > *upstream) *upstream = e->node;
        } else {
            print_errors(r->dtype, r->dims, r->rank, &r->cmp);
            printf(": %s\n", r->cmp.pass ? "within tolerance" : "FAIL");
        }
    }
}

const check_entry *check_first_divergent(const check_run *t, size_t *compared,
                                         size_t *unmatched) {
    const check_entry *first = NULL;
    size_t n_cmp = 0, n_un = 0;
    for (size_t i = 0; i < t->values.n; i++) {
        const check_entry *e = &t->values.entries[i];
        if (!e->has_record) continue;
        if (!e->record.cmp.compared) {
            n_un++;
            continue;
        }
        n_cmp++;
        if (!e->record.cmp.pass && (!first || e->record.node < first->record.node)) first = e;
    }
    if (compared) *compared = n_cmp;
    if (unmatched) *unmatched = n_un;
    return first;
}

void check_print_unfused(const onyx_session *unfused, const check_run *u,
                         const onyx_session *test, size_t group) {
    printf("unfused:    the group re-run unfused (optimization none) on the providers under "
           "test:\n");
    /* the culprit: the failing node that runs first in the unfused plan
     * (a fused input scale's Mul runs before the Conv its group is named
     * after) */
    const char *culprit = NULL;
    size_t culprit_at = 0;
    size_t n_origins = onyx_session_node_origin_count(test, group);
    for (size_t k = 0; k < n_origins; k++) {
        const char *name = onyx_session_node_origin(test, group, k);
        size_t n = onyx_session_node_count(unfused), i = 0;
        while (i < n && strcmp(onyx_session_node_name(unfused, i), name) != 0) i++;
        printf("    '");
        put_escaped(name);
        if (i == n) {
            printf("': not in the unfused plan\n");
            continue;
        }
        printf("' (");
        put_escaped(onyx_session_node_op_type(unfused, i));
        printf(") on %s: ", onyx_session_node_provider(unfused, i));
        const char *out = onyx_session_node_output_name(unfused, i, 0);
        const check_entry *e = out && out[0] ? check_table_get(&u->values, out) : NULL;
        if (!e || !e->has_record || !e->record.cmp.compared) {
            printf("%s\n", e && e->has_record ? e->record.cmp.why : "not captured");
            continue;
        }
        print_errors(e->record.dtype, e->record.dims, e->record.rank, &e->record.cmp);
        printf(": %s\n", e->record.cmp.pass ? "within tolerance" : "FAIL");
        if (!e->record.cmp.pass && (!culprit || i < culprit_at)) {
            culprit = name;
            culprit_at = i;
        }
    }
    if (culprit) {
        printf("verdict:    the unfused nodes diverge too, first at '");
        put_escaped(culprit);
        printf("': a kernel fault, not the fusion\n");
    } else {
        printf("verdict:    unfused, the same nodes agree with the reference: the fusion is at "
               "fault\n");
    }
}

int check_print_bisect(const onyx_session *test, const cli_io *io, const check_run *t,
                        const check_run *r, double ref_ms, double test_ms) {
    size_t compared = 0, unmatched = 0;
    const check_entry *first = check_first_divergent(t, &compared, &unmatched);
    printf("bisect:     one reference run (%.0f ms) and one test run (%.0f ms), capturing "
           "%zu and %zu values; %zu compared, %zu without a reference value (made or renamed "
           "by optimization)\n",
           ref_ms, test_ms, r->values.n, t->values.n, compared, unmatched);
    if (!first) {
        printf("first divergent node: none, every compared value is within tolerance\n");
        return 0;
    }
    size_t node = first->record.node;
    printf("first divergent node: ");
    print_node_line(test, node);
    printf("\n");
    print_origins(test, node, "    fused from: ");
    size_t need = onyx_session_node_attributes(test, node, NULL, 0);
    char *attrs = malloc(need + 1);
    if (attrs && need) {
        onyx_session_node_attributes(test, node, attrs, need + 1);
        printf("    attributes: ");
        put_escaped(attrs);
        printf("\n");
    }
    free(attrs);
    size_t upstream = (size_t)-1;
    size_t n_in = onyx_session_node_input_count(test, node);
    for (size_t k = 0; k < n_in; k++)
        print_input(test, io, t, onyx_session_node_input_name(test, node, k), &upstream);
    size_t n_out = onyx_session_node_output_count(test, node);
    for (size_t k = 0; k < n_out; k++) {
        const char *name = onyx_session_node_output_name(test, node, k);
        const check_entry *e = name && name[0] ? check_table_get(&t->values, name) : NULL;
        if (!e || !e->has_record) continue;
        printf("    output '");
        put_escaped(name);
        printf("': ");
        print_dims(e->record.dtype, e->record.dims, e->record.rank);
        printf(", ");
        if (!e->record.cmp.compared) {
            printf("%s\n", e->record.cmp.why);
            continue;
        }
        print_errors(e->record.dtype, e->record.dims, e->record.rank, &e->record.cmp);
        printf(": %s\n", e->record.cmp.pass ? "within tolerance" : "FAIL");
    }
    if (upstream != (size_t)-1) {
        printf("    note: an input has no reference value to compare; the divergence may start "
               "earlier, at or before #%zu '", upstream);
        put_escaped(onyx_session_node_name(test, upstream));
        printf("'\n");
    }
    return 1;
}
