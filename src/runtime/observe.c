/* Capture and fault injection (see observe.h). */
#include "runtime/observe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/layout.h"
#include "core/strmap.h"
#include "runtime/run_control.h"

int ox_fault_spec_parse(ox_fault_spec *f, const char *spec, ox_ep *const *providers, int n,
                        ox_error *err) {
    memset(f, 0, sizeof *f);
    if (!spec || !spec[0]) return 0;
    if (strncmp(spec, "fused:", 6) == 0) {
        f->fused_only = 1;
        spec += 6;
    }
    const char *at = strrchr(spec, '@');
    size_t name_len = strlen(spec);
    if (at) {
        int known = 0;
        for (int e = 0; e < n && !known; e++) known = strcmp(providers[e]->name, at + 1) == 0;
        if (known) {
            name_len = (size_t)(at - spec);
            if (!(f->provider = ox_strdup(at + 1))) goto oom;
        }
    }
    if (!(f->node = malloc(name_len + 1))) goto oom;
    memcpy(f->node, spec, name_len);
    f->node[name_len] = '\0';
    return 0;
oom:
    ox_fault_spec_free(f);
    return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
}

void ox_fault_spec_free(ox_fault_spec *f) {
    free(f->node);
    free(f->provider);
    memset(f, 0, sizeof *f);
}

int ox_fault_spec_matches(const ox_fault_spec *f, const ir_node *n, const ox_ep *ep) {
    if (!f || !f->node) return 0;
    if (f->provider && strcmp(f->provider, ep->name) != 0) return 0;
    if (f->fused_only && n->n_origins < 2) return 0;
    return ir_node_computes(n, f->node);
}

void ox_fault_perturb(ox_tensor *t) {
    if (!t || t->kind != OX_KIND_TENSOR || t->dtype == ONYX_STRING || !t->data) return;
    size_t n = (size_t)ox_tensor_numel(t);
    if (ox_dtype_is_float(t->dtype)) {
        for (size_t i = 0; i < n; i++) {
            double v = ox_get_f64(t->data, t->dtype, i);
            ox_set_f64(t->data, t->dtype, i, v + 1.0 + fabs(v));
        }
        return;
    }
    /* integers (little-endian), booleans, and the narrow formats held one
     * per byte: flipping bit 0 changes every value and keeps it in range */
    size_t width = ox_dtype_size(t->dtype);
    if (!width) return;
    unsigned char *b = t->data;
    for (size_t i = 0; i < n; i++) b[i * width] ^= 1u;
}

/* A host tensor with t's type and shape holding t's bytes. */
static ox_tensor *host_copy(const ox_observed *o, ox_error *err) {
    const ox_tensor *t = o->value;
    ox_tensor *h = ox_tensor_new(t->dtype, t->dims, t->rank, err);
    if (!h) return NULL;
    if (o->ep->ops->copy_to_host(o->ep, o->stream, h->data, t->data, t->nbytes, err) != 0) {
        ox_tensor_free(h);
        return NULL;
    }
    return h;
}

/* Hands output k of node n (h, on the host) to the capture callback. A
 * channel-blocked value goes as the model has it: in its planar twin's
 * layout and under its name, so that a comparison with a run without the
 * blocked layout meets it; the UnblockChannels node that turns it back
 * then reports nothing, the value having been reported where it was
 * computed. */
static void report(const ir_graph *g, const ir_node *n, int k, size_t exec_index, onyx_capture_fn capture,
                   void *capture_user, const ox_tensor *h) {
    const int out = n->outputs[k];
    if (n->n_inputs == 1 && n->inputs[0] >= 0 && g->values[n->inputs[0]].blocked_of == out) return;
    const ir_value *v = &g->values[out];
    const ir_value *planar = v->blocked_of >= 0 ? &g->values[v->blocked_of] : NULL;
    ox_error local = {0};
    ox_tensor *p = planar && planar->has_type && planar->type.rank >= 2
                       ? ox_layout_unblocked_copy(h, planar->type.dims[1], &local)
                       : NULL;
    ox_error_clear(&local); /* without the copy, the value goes as it is */
    capture(capture_user, exec_index, (size_t)k, p ? planar->name : v->name, p ? p : h);
    ox_tensor_free(p);
}

int ox_observe_node(const ir_graph *g, const ir_node *n, size_t exec_index, int inject,
                    onyx_capture_fn capture, void *capture_user, const ox_observed *outs,
                    int n_outs, ox_error *err) {
    if (!capture && !inject) return 0;
    for (int k = 0; k < n_outs; k++) {
        const ox_observed *o = &outs[k];
        ox_tensor *t = o->value;
        if (!t) continue;
        int on_device = t->device != OX_DEVICE_HOST;
        if (on_device && (t->kind != OX_KIND_TENSOR || t->dtype == ONYX_STRING)) continue;
        ox_tensor *h = on_device ? host_copy(o, err) : t;
        if (!h) return -1;
        int r = 0;
        if (inject) {
            ox_fault_perturb(h);
            if (on_device)
                r = o->ep->ops->copy_from_host(o->ep, o->stream, t->data, h->data, t->nbytes, err);
        }
        if (r == 0 && capture) report(g, n, k, exec_index, capture, capture_user, h);
        if (on_device) ox_tensor_free(h);
        if (r != 0) return -1;
    }
    return 0;
}
