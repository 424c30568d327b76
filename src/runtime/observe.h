/* Watching a run node by node without changing it: the capture hook of
 * run options (each node's outputs, copied to the host for the caller)
 * and fault injection, a testing aid that perturbs one node's outputs so
 * that cross-checking can be shown to find it. */
#ifndef ONYX_RUNTIME_OBSERVE_H
#define ONYX_RUNTIME_OBSERVE_H

#include "core/error.h"
#include "core/tensor.h"
#include "ep/ep.h"
#include "ir/ir.h"
#include "onyx.h"

/* Which node fault injection perturbs: a model node name (a node that
 * optimization merged into another is found through the survivor's
 * origins) and optionally the provider it must run on. */
typedef struct ox_fault_spec {
    char *node;     /* NULL: no injection */
    char *provider; /* NULL: whichever provider runs it */
    int fused_only; /* only where optimization merged the node into another */
} ox_fault_spec;

/* Parses "[fused:]<node name>[@<provider>]"; an empty spec is no
 * injection. The part after the last '@' is a provider only when it names
 * one of providers[0..n). "fused:" selects the node only where it was
 * merged into another (a stand-in for a wrong fusion: the same node run
 * unfused is left alone). */
int ox_fault_spec_parse(ox_fault_spec *f, const char *spec, ox_ep *const *providers, int n,
                        ox_error *err);
void ox_fault_spec_free(ox_fault_spec *f);
/* 1 when the spec selects node n running on provider ep. */
int ox_fault_spec_matches(const ox_fault_spec *f, const ir_node *n, const ox_ep *ep);

/* Moves every element of a host tensor past any tolerance: floats to
 * x + 1 + |x| (NaN stays NaN), integers and booleans by flipping their
 * lowest bit; strings are left alone. */
void ox_fault_perturb(ox_tensor *t);

/* One output of a node that just ran, where the plan keeps it. */
typedef struct ox_observed {
    ox_tensor *value; /* NULL for an omitted output */
    ox_ep *ep;        /* provider whose memory holds it */
    void *stream;     /* that provider's stream in this run */
} ox_observed;

/* After node n of graph g (execution position exec_index) ran:
 * perturbs its outputs when inject is set, then hands each output to the
 * capture callback, if any. Device outputs go through a
 * host copy (the copy waits for the device's recorded work; a perturbed
 * copy is written back). */
int ox_observe_node(const ir_graph *g, const ir_node *n, size_t exec_index, int inject,
                    onyx_capture_fn capture, void *capture_user, const ox_observed *outs,
                    int n_outs, ox_error *err);

#endif
