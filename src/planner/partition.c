/* Node placement: each node goes to the highest-priority provider that
 * supports it with its input types. The CPU provider is always last and
 * is the reference, so an unsupported node falls back to it. Then groups
 * of connected device nodes that hold no node worth a copy (see
 * ox_ep_ops.worth_placing) move back to the CPU: each would cost a copy
 * to the device and one back for work the CPU does as fast. Last, a light
 * device node that reads data the host made and whose results only the
 * host reads moves to the CPU too: on the device it is a round trip, its
 * input sent over and its results waited for (a wait ends everything the
 * device has queued), where on the CPU it only reads device data that an
 * earlier wait has usually brought over already. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan.h"

static void describe_inputs(const ir_graph *g, const ir_node *n, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = '\0';
    for (int k = 0; k < n->n_inputs && off + 1 < size; k++) {
        int v = n->inputs[k];
        const char *t = v < 0 ? "-" : ox_dtype_name(g->values[v].type.dtype);
        off += (size_t)snprintf(buf + off, size - off, "%s%s", k ? ", " : "", t);
    }
}

static int place_nodes(ir_graph *g, ox_ep *const *eps, int n_eps, const ox_place_veto *veto,
                       const ir_type **types, ox_error *err);

static int drop_light_groups(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types,
                             ox_error *err);

static int drop_round_trips(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types, ox_error *err);

int ox_partition(ir_graph *g, ox_ep *const *eps, int n_eps, const ox_place_veto *veto,
                 ox_error *err) {
    /* one buffer for the widest node: nodes have no cap on their inputs */
    const ir_type **types = calloc((size_t)ir_graph_max_inputs(g) + 1, sizeof *types);
    if (!types) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    int rc = place_nodes(g, eps, n_eps, veto, types, err);
    if (rc == 0) rc = drop_light_groups(g, eps, n_eps, types, err);
    if (rc == 0) rc = drop_round_trips(g, eps, n_eps, types, err);
    free(types);
    return rc;
}

static int find_root(int *parent, int x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* types[k]: input k's type (NULL when omitted), as supports() takes them. */
static void input_types(const ir_graph *g, const ir_node *n, const ir_type **types) {
    for (int k = 0; k < n->n_inputs; k++) types[k] = n->inputs[k] >= 0 ? &g->values[n->inputs[k]].type : NULL;
}

/* Whether the CPU (the last provider) takes node n. */
static int host_takes(const ir_graph *g, ox_ep *host, const ir_node *n, const ir_type **types) {
    input_types(g, n, types);
    return host->ops->supports(host, n, types, n->n_inputs);
}

/* Whether a device provider says which nodes are worth their copies:
 * without one, placement stays first fit. */
static int any_worth_rule(ox_ep *const *eps, int n_eps) {
    for (int e = 0; e < n_eps - 1; e++)
        if (eps[e]->device != OX_DEVICE_HOST && eps[e]->ops->worth_placing) return 1;
    return 0;
}

/* Groups: device nodes of one provider joined by a value one produces
 * and the other reads on the device. */
static int drop_light_groups(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types,
                             ox_error *err) {
    int host = n_eps - 1;
    if (!any_worth_rule(eps, n_eps) || g->n_nodes == 0) return 0;
    int *parent = malloc((size_t)g->n_nodes * sizeof *parent);
    char *worth = calloc((size_t)g->n_nodes, 1);
    if (!parent || !worth) {
        free(parent);
        free(worth);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    for (int i = 0; i < g->n_nodes; i++) parent[i] = i;
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        ox_ep *ep = eps[n->ep];
        if (ep->device == OX_DEVICE_HOST) continue;
        uint32_t host_read = ep->ops->host_inputs ? ep->ops->host_inputs(ep, n) : 0;
        for (int k = 0; k < n->n_inputs; k++) {
            int v = n->inputs[k];
            if (v < 0 || (k < 32 && (host_read >> k & 1u))) continue;
            int p = g->values[v].producer;
            if (p >= 0 && g->nodes[p].ep == n->ep) parent[find_root(parent, i)] = find_root(parent, p);
        }
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        ox_ep *ep = eps[n->ep];
        if (ep->device == OX_DEVICE_HOST) continue;
        if (!ep->ops->worth_placing || ep->ops->worth_placing(ep, n)) worth[find_root(parent, i)] = 1;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        if (eps[n->ep]->device == OX_DEVICE_HOST || worth[find_root(parent, i)]) continue;
        if (host_takes(g, eps[host], n, types)) n->ep = host;
    }
    free(parent);
    free(worth);
    return 0;
}

/* A light device node that reads a value the host computes (or the
 * caller gives: not a weight, which stays on the device) and whose every
 * output only host nodes read (or the caller, on the host): see the top.
 * Each move can make its neighbours such nodes, so until none is left. */
static int drop_round_trips(ir_graph *g, ox_ep *const *eps, int n_eps, const ir_type **types, ox_error *err) {
    int host = n_eps - 1;
    if (!any_worth_rule(eps, n_eps) || g->n_nodes == 0) return 0;
    /* per value, the device nodes that read it */
    int *dev_readers = calloc((size_t)g->n_values + 1, sizeof *dev_readers);
    if (!dev_readers) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < g->n_nodes; i++) {
        const ir_node *n = &g->nodes[i];
        if (eps[n->ep]->device == OX_DEVICE_HOST) continue;
        for (int k = 0; k < ir_node_dep_count(n); k++) {
            int v = ir_node_dep(n, k);
            if (v >= 0) dev_readers[v]++;
        }
    }
    for (int moved = 1; moved;) {
        moved = 0;
        for (int i = g->n_nodes - 1; i >= 0; i--) {
            ir_node *n = &g->nodes[i];
            ox_ep *ep = eps[n->ep];
            if (ep->device == OX_DEVICE_HOST || !ep->ops->worth_placing || ep->ops->worth_placing(ep, n)) continue;
            uint32_t host_read = ep->ops->host_inputs ? ep->ops->host_inputs(ep, n) : 0;
            int from_host = 0, to_device = 0;
            for (int k = 0; k < n->n_inputs && !from_host; k++) {
                int v = n->inputs[k];
                if (v < 0 || (k < 32 && (host_read >> k & 1u))) continue;
                const ir_value *val = &g->values[v];
                int p = val->producer;
                from_host = p >= 0 ? eps[g->nodes[p].ep]->device == OX_DEVICE_HOST : val->is_input || val->outer;
            }
            for (int k = 0; k < n->n_outputs && !to_device; k++)
                to_device = n->outputs[k] >= 0 && dev_readers[n->outputs[k]] > 0;
            if (!from_host || to_device || !host_takes(g, eps[host], n, types)) continue;
            n->ep = host;
            for (int k = 0; k < ir_node_dep_count(n); k++) {
                int v = ir_node_dep(n, k);
                if (v >= 0) dev_readers[v]--;
            }
            moved = 1;
        }
    }
    free(dev_readers);
    return 0;
}

static int place_nodes(ir_graph *g, ox_ep *const *eps, int n_eps, const ox_place_veto *veto,
                       const ir_type **types, ox_error *err) {
    for (int i = 0; i < g->n_nodes; i++) {
        ir_node *n = &g->nodes[i];
        input_types(g, n, types);
        n->ep = -1;
        for (int e = 0; e < n_eps && n->ep < 0; e++)
            if (eps[e]->ops->supports(eps[e], n, types, n->n_inputs) &&
                (e == n_eps - 1 || !veto || !veto->fn(veto->user, n, e)))
                n->ep = e;
        if (n->ep < 0) {
            char label[300], ins[512];
            ir_node_label(n, label, sizeof label);
            describe_inputs(g, n, ins, sizeof ins);
            return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                           "%s: no execution provider supports %s (opset %d) with input types (%s)",
                           label, n->op_type, n->opset, ins);
        }
    }
    return 0;
}
