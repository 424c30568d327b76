/* Device faults on the Vulkan provider: recording them for the session
 * (which reruns the failed run on the CPU), remaking the device, the
 * memory budget, and the ONYX_VK_INJECT testing aid that makes a chosen
 * node's dispatch fail as a lost, out-of-memory or hung device would, so
 * every recovery path runs on lavapipe in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/log.h"
#include "ep/vulkan/vk_internal.h"

static const char *kind_name(int kind) {
    switch (kind) {
    case VK_FAULT_LOST: return "device lost";
    case VK_FAULT_OOM: return "out of device memory";
    default: return "timeout";
    }
}

static VkResult kind_result(int kind) {
    switch (kind) {
    case VK_FAULT_LOST:
    case VK_FAULT_GONE: return VK_ERROR_DEVICE_LOST;
    case VK_FAULT_OOM: return VK_ERROR_OUT_OF_DEVICE_MEMORY;
    default: return VK_TIMEOUT;
    }
}

int ox_vk_is_fault(VkResult r) {
    return r == VK_ERROR_DEVICE_LOST || r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_TIMEOUT;
}

/* "device_lost@node,oom@other": each kind at one node (by name, or a
 * model node it computes after fusion). */
static int parse_injects(vk_ep *v, const char *spec, const char *from, ox_error *err) {
    static const struct { const char *name; int kind; } KINDS[] = {
        {"device_lost", VK_FAULT_LOST}, {"oom", VK_FAULT_OOM}, {"timeout", VK_FAULT_TIMEOUT},
        {"device_gone", VK_FAULT_GONE}};
    while (spec && *spec) {
        size_t len = strcspn(spec, ",");
        const char *at = memchr(spec, '@', len);
        int kind = 0;
        for (size_t i = 0; at && i < sizeof KINDS / sizeof KINDS[0]; i++)
            if (strlen(KINDS[i].name) == (size_t)(at - spec) &&
                strncmp(KINDS[i].name, spec, (size_t)(at - spec)) == 0)
                kind = KINDS[i].kind;
        if (!kind || at + 1 == spec + len)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "vulkan: %s '%.*s' is not KIND@NODE (KIND: device_lost, oom, timeout, "
                           "device_gone)",
                           from, (int)len, spec);
        if (v->n_injects == (int)(sizeof v->injects / sizeof v->injects[0]))
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan: %s names more than %d faults", from,
                           (int)(sizeof v->injects / sizeof v->injects[0]));
        size_t nlen = (size_t)(spec + len - (at + 1));
        char *node = malloc(nlen + 1);
        if (!node) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        memcpy(node, at + 1, nlen);
        node[nlen] = '\0';
        v->injects[v->n_injects].kind = kind;
        v->injects[v->n_injects++].node = node;
        spec += len;
        if (*spec == ',') spec++;
    }
    return 0;
}

int ox_vk_fault_setup(vk_ep *v, const ox_ep_options *opts, ox_error *err) {
    pthread_rwlockattr_t ra;
    pthread_rwlockattr_init(&ra);
    /* a recovery waiting for the lock goes before runs that come later:
     * they would only find the device lost */
    pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&v->use_lock, &ra);
    pthread_rwlockattr_destroy(&ra);
    pthread_mutex_init(&v->fault_lock, NULL);
    atomic_init(&v->fault_count, 0);
    atomic_init(&v->lost, 0);
    atomic_init(&v->dead, 0);
    atomic_init(&v->gone, 0);
    atomic_init(&v->live_bytes, 0);
    atomic_init(&v->kept_buffers, 0);
    atomic_init(&v->allocations, 0);
    atomic_init(&v->recoveries, 0);
    const char *opt = ox_ep_option(opts, "inject");
    if (parse_injects(v, getenv("ONYX_VK_INJECT"), "ONYX_VK_INJECT", err) != 0 ||
        parse_injects(v, opt, "option inject", err) != 0)
        return -1;
    const char *budget = ox_ep_option(opts, "memory_budget");
    if (budget) {
        char *end = NULL;
        unsigned long long b = strtoull(budget, &end, 10);
        if (!budget[0] || budget[0] == '-' || *end || b == 0)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "vulkan: option memory_budget='%s' is not a positive byte count", budget);
        v->memory_budget = b;
    }
    return 0;
}

void ox_vk_fault_free(vk_ep *v) {
    for (int i = 0; i < v->n_injects; i++) free(v->injects[i].node);
    v->n_injects = 0;
    pthread_rwlock_destroy(&v->use_lock);
    pthread_mutex_destroy(&v->fault_lock);
}

int ox_vk_fault(vk_ep *v, VkResult r, const char *call, const ir_node *node, int injected,
                int remake, ox_error *err) {
    int kind = r == VK_ERROR_DEVICE_LOST ? VK_FAULT_LOST
               : r == VK_TIMEOUT        ? VK_FAULT_TIMEOUT
                                        : VK_FAULT_OOM;
    char label[300] = "";
    if (node) ir_node_label(node, label, sizeof label);
    pthread_mutex_lock(&v->fault_lock);
    ox_ep_fault *f = &v->last_fault;
    f->count = atomic_fetch_add(&v->fault_count, 1) + 1;
    f->kind = kind_name(kind);
    f->node = node;
    f->injected = injected;
    /* a long device or node name shortens the message, nothing more */
    int len = snprintf(f->message, sizeof f->message, "vulkan: %s on %s (%s: %s)%s%s%s", f->kind,
                       v->caps.device_name, call, ox_vk_result_name(r), node ? " running " : "",
                       label, injected ? " [injected by ONYX_VK_INJECT]" : "");
    (void)len;
    if (remake) atomic_store(&v->lost, 1);
    ox_fail(err, kind == VK_FAULT_OOM ? ONYX_OUT_OF_MEMORY : ONYX_RUNTIME_ERROR, "%s", f->message);
    pthread_mutex_unlock(&v->fault_lock);
    return -1;
}

int ox_vk_check_usable(vk_ep *v, ox_error *err) {
    if (!atomic_load(&v->lost)) return 0;
    return ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: %s is %s after a device fault",
                   v->caps.device_name, atomic_load(&v->dead) ? "unusable" : "being recovered");
}

void ox_vk_inject_arm(vk_ep *v, vk_stream *s, const ir_node *node) {
    s->node = node;
    for (int i = 0; i < v->n_injects && node && !s->inject; i++)
        if (ir_node_computes(node, v->injects[i].node)) {
            s->inject = v->injects[i].kind;
            s->inject_node = node;
        }
}

int ox_vk_inject_fire(vk_ep *v, vk_stream *s, ox_error *err) {
    int kind = s->inject;
    s->inject = 0;
    if (kind == VK_FAULT_GONE) atomic_store(&v->gone, 1);
    return ox_vk_fault(v, kind_result(kind), kind == VK_FAULT_TIMEOUT ? "vkWaitForFences" : "vkQueueSubmit",
                       s->inject_node, 1, 1, err);
}

uint64_t ox_vk_fault_count(ox_ep *ep) { return atomic_load(&((vk_ep *)ep)->fault_count); }

int ox_vk_last_fault(ox_ep *ep, ox_ep_fault *out) {
    vk_ep *v = (vk_ep *)ep;
    pthread_mutex_lock(&v->fault_lock);
    *out = v->last_fault;
    out->count = atomic_load(&v->fault_count);
    pthread_mutex_unlock(&v->fault_lock);
    return atomic_load(&v->lost);
}

/* Everything made on the device goes, then the device itself, and both
 * are made again: what the provider made at creation (ox_vk_exec_init). */
static int remake(vk_ep *v, ox_error *err) {
    ox_vk_exec_free(v);
    memset(v->pipes, 0, sizeof v->pipes);
    v->n_pipes = 0;
    v->cmd_pool = VK_NULL_HANDLE;
    v->cmd = VK_NULL_HANDLE;
    v->fence = VK_NULL_HANDLE;
    v->set_layout = VK_NULL_HANDLE;
    v->pipe_layout = VK_NULL_HANDLE;
    free(v->refused_shaders);
    v->refused_shaders = NULL;
    if (ox_vk_device_remake(v, err) != 0) return -1;
    return ox_vk_exec_init(v, err);
}

int ox_vk_recover(ox_ep *ep, void (*drop)(void *user, ox_ep *ep), void *user, ox_error *err) {
    vk_ep *v = (vk_ep *)ep;
    pthread_rwlock_wrlock(&v->use_lock);
    int rc = 0;
    /* a failed allocation (lost unset) needs nothing remade */
    if (atomic_load(&v->dead)) {
        rc = ox_fail(err, ONYX_RUNTIME_ERROR, "vulkan: %s could not be remade earlier",
                     v->caps.device_name);
    } else if (atomic_load(&v->lost)) {
        /* the session's weights on the device go with it */
        if (drop) drop(user, ep);
        if (atomic_load(&v->gone)) {
            rc = ox_fail(err, ONYX_RUNTIME_ERROR,
                         "vulkan: %s did not come back [injected by ONYX_VK_INJECT]",
                         v->caps.device_name);
            atomic_store(&v->dead, 1);
        } else if (remake(v, err) != 0) {
            atomic_store(&v->dead, 1);
            rc = -1;
        } else {
            atomic_store(&v->lost, 0);
            atomic_fetch_add(&v->recoveries, 1);
        }
    }
    pthread_rwlock_unlock(&v->use_lock);
    return rc;
}

const char *ox_vk_device_key(ox_ep *ep) {
    vk_ep *v = (vk_ep *)ep;
    const ox_vk_caps *c = &v->caps;
    char uuid[33];
    for (int i = 0; i < 16; i++) snprintf(uuid + 2 * i, 3, "%02x", c->pipeline_cache_uuid[i]);
    snprintf(v->device_key, sizeof v->device_key, "%04x-%04x-%08x-%s", c->vendor_id, c->device_id,
             c->driver_version, uuid);
    return v->device_key;
}
