/* Shadow runs (onyx_session_options_set_verify_first_runs): the first N
 * runs of a session also run on its reference session (the CPU provider,
 * no optimization, no fault injection) and their outputs are compared.
 * On a mismatch both are run again with every node's outputs captured,
 * the first divergent node is found, the caller gets the reference's
 * outputs, and the session stops trusting that node: a device node goes
 * to the CPU for every later run (as a declined node does), and a node
 * the CPU runs itself (a wrong optimization) sends every later run to the
 * reference. The verification itself costs one reference run per checked
 * run; the captured re-runs happen only on a mismatch. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "core/strmap.h"
#include "runtime/session.h"
#include "verify/compare.h"

/* ---- captured values of one run ---- */

typedef struct captured {
    size_t node; /* execution position */
    char *name;
    ox_tensor *value; /* host copy */
} captured;

typedef struct capture_set {
    captured *items;
    size_t n, cap;
    ox_strmap *by_name; /* name -> index of its latest capture */
    int failed;         /* out of memory */
} capture_set;

static void on_capture(void *user, size_t node, size_t output, const char *name,
                       const onyx_tensor *value) {
    capture_set *c = user;
    (void)output;
    if (c->failed) return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 256;
        captured *grown = realloc(c->items, cap * sizeof *grown);
        if (!grown) {
            c->failed = 1;
            return;
        }
        c->items = grown;
        c->cap = cap;
    }
    ox_error err = {0};
    captured *it = &c->items[c->n];
    it->node = node;
    it->name = ox_strdup(name);
    it->value = ox_tensor_clone(value, &err);
    if (!it->name || !it->value || ox_strmap_put(c->by_name, name, (int)c->n) != 0) {
        free(it->name);
        ox_tensor_free(it->value);
        c->failed = 1;
        return;
    }
    c->n++;
}

static void capture_set_free(capture_set *c) {
    for (size_t i = 0; i < c->n; i++) {
        free(c->items[i].name);
        ox_tensor_free(c->items[i].value);
    }
    free(c->items);
    ox_strmap_free(c->by_name);
}

/* Runs s with every node's outputs captured into c; outputs are dropped. */
static int captured_run(onyx_session *s, const ox_run_control *ctl, capture_set *c,
                        const char *const *in_names, const ox_tensor *const *ins, size_t n_in,
                        const char *const *out_names, size_t n_out, ox_error *err) {
    ox_tensor **outs = calloc(n_out + 1, sizeof *outs);
    if (!outs || !(c->by_name = ox_strmap_new())) {
        free(outs);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    ox_run_control cc = *ctl;
    cc.capture = on_capture;
    cc.capture_user = c;
    int r = ox_session_run_ctl(s, &cc, in_names, ins, n_in, out_names, outs, n_out, err);
    for (size_t i = 0; i < n_out; i++) ox_tensor_free(outs[i]);
    free(outs);
    if (r == 0 && c->failed) r = ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory capturing values");
    return r;
}

/* ---- the report ---- */

typedef struct report {
    char text[1024];
    size_t len;
} report;

static void say(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(report *r, const char *fmt, ...) {
    if (r->len >= sizeof r->text) return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(r->text + r->len, sizeof r->text - r->len, fmt, ap);
    va_end(ap);
    if (w > 0) r->len += (size_t)w;
}

static void describe_mismatch(report *r, const ox_compare *c) {
    if (c->why[0])
        say(r, "%s", c->why);
    else
        say(r, "%lld of %lld elements outside tolerance, max abs err %.3g at element %lld",
            (long long)c->bad, (long long)c->count, c->max_abs, (long long)c->at);
}

/* Finds the first node of s whose captured value diverges from the
 * reference's value of the same name, and acts on it. */
static void bisect_and_act(onyx_session *s, const capture_set *t, const capture_set *ref,
                           report *r) {
    for (size_t i = 0; i < t->n; i++) {
        int k;
        if (!ox_strmap_get(ref->by_name, t->items[i].name, &k)) continue;
        ox_compare c;
        if (ox_values_match(t->items[i].value, ref->items[k].value, s->verify_atol,
                            s->verify_rtol, &c))
            continue;
        int node = s->main.exec_nodes[t->items[i].node];
        const ir_node *n = &s->graph->nodes[node];
        const ox_ep *ep = s->eps[n->ep];
        char label[300];
        say(r, "; the first divergent node is #%zu, %s on %s (its output '%s': ", t->items[i].node,
            ir_node_label(n, label, sizeof label), ep->name, t->items[i].name);
        describe_mismatch(r, &c);
        say(r, ")");
        if (n->ep != s->n_eps - 1) {
            if (!atomic_exchange(&s->main.force_host[node], 1))
                atomic_fetch_add(&s->verify_disabled, 1);
            say(r, ": its %s kernel is disabled for this session, the CPU runs it", ep->name);
        } else {
            atomic_store(&s->on_reference, 1);
            say(r, ": it runs on the CPU, so every later run of this session uses the reference");
        }
        return;
    }
    say(r, "; no single node diverges in a captured re-run (the results vary between runs)");
}

/* Replaces the test run's outputs with the reference's: caller buffers
 * get the bytes, others the reference's tensors. */
static int hand_over(ox_tensor **outs, ox_tensor **ref_outs, const unsigned char *caller_buf,
                     size_t n_out, ox_error *err) {
    for (size_t i = 0; i < n_out; i++) {
        if (caller_buf[i]) {
            if (outs[i]->nbytes != ref_outs[i]->nbytes || outs[i]->dtype == ONYX_STRING)
                return ox_fail(err, ONYX_RUNTIME_ERROR,
                               "output %zu: the reference's value does not fit the caller's buffer", i);
            memcpy(outs[i]->data, ref_outs[i]->data, outs[i]->nbytes);
            continue;
        }
        ox_tensor_free(outs[i]);
        outs[i] = ref_outs[i];
        ref_outs[i] = NULL;
    }
    return 0;
}

/* The run's outputs diverged from the reference's: bisect, act, tell. */
static int on_mismatch(onyx_session *s, const ox_run_control *ctl, uint64_t run, report *r,
                       const char *const *in_names, const ox_tensor *const *ins, size_t n_in,
                       const char *const *out_names, size_t n_out, ox_error *err) {
    atomic_fetch_add(&s->verify_mismatches, 1);
    capture_set t = {0}, ref = {0};
    int rc = captured_run(s, ctl, &t, in_names, ins, n_in, out_names, n_out, err);
    if (rc == 0) rc = captured_run(s->reference, ctl, &ref, in_names, ins, n_in, out_names, n_out, err);
    if (rc == 0) bisect_and_act(s, &t, &ref, r);
    capture_set_free(&t);
    capture_set_free(&ref);
    if (rc != 0) return -1;
    ox_log(s->log_level, ONYX_LOG_WARNING, "verified run %llu: %s", (unsigned long long)run + 1,
           r->text);
    pthread_mutex_lock(&s->verify_lock);
    /* the report is cut to the buffer, as reports are */
    int w = snprintf(s->verify_report, sizeof s->verify_report, "run %llu: ",
                     (unsigned long long)run + 1);
    if (w > 0 && (size_t)w < sizeof s->verify_report)
        memcpy(s->verify_report + w, r->text,
               strnlen(r->text, sizeof s->verify_report - (size_t)w - 1) + 1);
    s->verify_report[sizeof s->verify_report - 1] = '\0';
    pthread_mutex_unlock(&s->verify_lock);
    return 0;
}

int ox_shadow_run(onyx_session *s, const ox_run_control *ctl, const char *const *in_names,
                  const ox_tensor *const *ins, size_t n_in, const char *const *out_names,
                  ox_tensor **outs, size_t n_out, ox_error *err) {
    if (atomic_load(&s->on_reference))
        return ox_session_run_ctl(s->reference, ctl, in_names, ins, n_in, out_names, outs, n_out,
                                  err);
    uint64_t run = atomic_fetch_add(&s->verify_claimed, 1);
    if (run >= s->verify_runs)
        return ox_session_run_ctl(s, ctl, in_names, ins, n_in, out_names, outs, n_out, err);
    unsigned char *caller_buf = calloc(n_out + 1, 1);
    ox_tensor **ref_outs = calloc(n_out + 1, sizeof *ref_outs);
    int rc = -1;
    if (!caller_buf || !ref_outs) {
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n_out; i++) caller_buf[i] = outs && outs[i] != NULL;
    if (ox_session_run_ctl(s, ctl, in_names, ins, n_in, out_names, outs, n_out, err) != 0) goto done;
    if (ox_session_run_ctl(s->reference, ctl, in_names, ins, n_in, out_names, ref_outs, n_out,
                           err) != 0) {
        ox_error_prefix(err, "the reference run of shadow run %llu", (unsigned long long)run + 1);
        goto fail_outputs;
    }
    report r = {.len = 0};
    for (size_t i = 0; i < n_out; i++) {
        ox_compare c;
        if (ox_values_match(outs[i], ref_outs[i], s->verify_atol, s->verify_rtol, &c)) continue;
        if (!r.len) {
            say(&r, "output '%s' differs from the reference (", out_names[i]);
            describe_mismatch(&r, &c);
            say(&r, ")");
        }
    }
    if (r.len) {
        if (on_mismatch(s, ctl, run, &r, in_names, ins, n_in, out_names, n_out, err) != 0 ||
            hand_over(outs, ref_outs, caller_buf, n_out, err) != 0)
            goto fail_outputs;
    }
    atomic_fetch_add(&s->verify_done, 1);
    rc = 0;
    goto done;
fail_outputs:
    /* a failed run leaves the outputs it allocated NULL, as any run does */
    for (size_t i = 0; i < n_out; i++)
        if (!caller_buf[i]) {
            ox_tensor_free(outs[i]);
            outs[i] = NULL;
        }
done:
    for (size_t i = 0; ref_outs && i < n_out; i++) ox_tensor_free(ref_outs[i]);
    free(ref_outs);
    free(caller_buf);
    return rc;
}
