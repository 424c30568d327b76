/* Masked device limits and the provider's work bounds (see vk_ep.h):
 * ONYX_VK_LIMITS and the option `limits` ("name=value,..." with names as
 * Vulkan spells them), and the options max_buffer, dispatch_budget and
 * fence_timeout_ms. Applied once the device is open, to its capability
 * record, so every later check (placement, buffer sizes, group counts)
 * sees the masked values. A mask only lowers: a value above what the
 * device offers leaves the device's own (the mask states a ceiling the
 * device already meets), so one setting serves machines of every size. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

/* The default dispatch budget, in estimated work units (one unit: an
 * invocation's basic step, a multiply-add with its loads). The slowest
 * GPU worth serving (an old integrated or low-end card running these
 * simple shaders) manages about 1e9 such steps a second; 2^27 (1.3e8)
 * units then take about 0.13 s, 15 times under the 2-second watchdog of
 * Windows' TDR and of amdgpu's default lockup timeout. */
#define DEFAULT_DISPATCH_BUDGET ((uint64_t)1 << 27)
/* A discrete GPU: even a low-end one (a few hundred lanes at 1 GHz)
 * passes 4e10 steps a second on these memory-bound shaders, so a
 * submission of four 2^31 budgets takes about 0.2 s, still 10 times under
 * the watchdog. The small budget cost a large GPU far more than it
 * protected: on an H200, ResNet-50 at batch 32 made 276 submissions and
 * ran in 62 ms; with no budget, 5 submissions and 21 ms. */
#define DEFAULT_DISPATCH_BUDGET_DISCRETE ((uint64_t)1 << 31)
/* One submission carries at most this many budgets before the stream
 * submits and waits: a command buffer stays well under a watchdog too. */
#define SUBMIT_BUDGETS 4
/* Generous for a GPU: a hung device fails the run after this instead of
 * never. A CPU driver (lavapipe) hangs no GPU and runs as fast as its
 * host's load allows: one submission of a detector's convolutions took
 * lavapipe over 10 s on two busy cores, so it waits ten minutes. */
#define DEFAULT_FENCE_TIMEOUT_MS 10000
#define DEFAULT_FENCE_TIMEOUT_CPU_MS 600000

enum { LIM_U64, LIM_U32, LIM_U32X3, LIM_BUDGET, LIM_TIMEOUT };

typedef struct limit_def {
    const char *name;
    int kind;
    size_t offset; /* into ox_vk_caps (device limits) */
    uint64_t least; /* smallest value accepted */
} limit_def;

static const limit_def LIMITS[] = {
    {"maxStorageBufferRange", LIM_U64, offsetof(ox_vk_caps, max_storage_buffer_range), 4096},
    {"maxMemoryAllocationSize", LIM_U64, offsetof(ox_vk_caps, max_allocation_size), 4096},
    {"maxComputeWorkGroupInvocations", LIM_U32, offsetof(ox_vk_caps, max_workgroup_invocations), 1},
    {"maxComputeWorkGroupSize", LIM_U32X3, offsetof(ox_vk_caps, max_workgroup_size), 1},
    {"maxComputeWorkGroupCount", LIM_U32X3, offsetof(ox_vk_caps, max_workgroup_count), 1},
    {"dispatchBudget", LIM_BUDGET, 0, 1},
    {"fenceTimeoutMs", LIM_TIMEOUT, 0, 0},
};
#define N_LIMITS (sizeof LIMITS / sizeof LIMITS[0])

static const char *KNOWN_NAMES = "maxStorageBufferRange, maxMemoryAllocationSize, "
                                 "maxComputeWorkGroupInvocations, maxComputeWorkGroupSize, "
                                 "maxComputeWorkGroupCount (all three dimensions), dispatchBudget, "
                                 "fenceTimeoutMs";

/* What the settings ask for; UINT64_MAX: not given. */
typedef struct wanted {
    uint64_t value[N_LIMITS];
} wanted;

/* A decimal count in [least, UINT64_MAX). */
static int parse_count(const char *s, size_t len, uint64_t least, uint64_t *out) {
    char buf[32];
    if (len == 0 || len >= sizeof buf || s[0] == '-' || s[0] == '+') return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(buf, &end, 10);
    if (*end || errno || v < least || v == UINT64_MAX) return -1;
    *out = v;
    return 0;
}

/* "name=value,..." into w (later settings replace earlier ones). '+'
 * separates too, as in the disable option: the CLI's provider list
 * (vulkan:limits=...,cpu) already spends the comma. */
static int parse_list(const char *src, const char *text, wanted *w, ox_error *err) {
    for (const char *p = text; *p;) {
        const char *end = strpbrk(p, ",+");
        size_t n = end ? (size_t)(end - p) : strlen(p);
        const char *eq = memchr(p, '=', n);
        if (n == 0 || !eq)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "vulkan: %s: '%.*s' is not name=value (known names: %s)", src, (int)n, p,
                           KNOWN_NAMES);
        size_t nlen = (size_t)(eq - p);
        size_t k = 0;
        while (k < N_LIMITS && !(strlen(LIMITS[k].name) == nlen && !strncmp(LIMITS[k].name, p, nlen)))
            k++;
        if (k == N_LIMITS)
            return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan: %s: unknown limit '%.*s' (known: %s)",
                           src, (int)nlen, p, KNOWN_NAMES);
        if (parse_count(eq + 1, n - nlen - 1, LIMITS[k].least, &w->value[k]) != 0)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "vulkan: %s: %s='%.*s' is not a decimal count of at least %llu", src,
                           LIMITS[k].name, (int)(n - nlen - 1), eq + 1,
                           (unsigned long long)LIMITS[k].least);
        p = end ? end + 1 : p + n;
    }
    return 0;
}

/* A single-count option (max_buffer, dispatch_budget, fence_timeout_ms)
 * into w's entry for `limit`. */
static int count_option(const ox_ep_options *opts, const char *key, const char *limit, uint64_t least,
                        wanted *w, ox_error *err) {
    const char *s = ox_ep_option(opts, key);
    if (!s) return 0;
    size_t k = 0;
    while (strcmp(LIMITS[k].name, limit) != 0) k++;
    if (parse_count(s, strlen(s), least, &w->value[k]) != 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "vulkan: option %s='%s' is not a decimal count of at least %llu", key, s,
                       (unsigned long long)least);
    return 0;
}

static void lower64(uint64_t *cur, uint64_t want) {
    /* 0 in the record means the device states no limit */
    if (want != UINT64_MAX && (*cur == 0 || want < *cur)) *cur = want;
}

static void lower32(uint32_t *cur, uint64_t want) {
    if (want != UINT64_MAX && want < *cur) *cur = (uint32_t)want;
}

int ox_vk_limits_apply(vk_ep *v, const ox_ep_options *opts, ox_error *err) {
    wanted w;
    for (size_t k = 0; k < N_LIMITS; k++) w.value[k] = UINT64_MAX;
    /* the environment first, the options (this session's) after it */
    const char *env = getenv("ONYX_VK_LIMITS");
    if (env && parse_list("ONYX_VK_LIMITS", env, &w, err) != 0) return -1;
    const char *opt = ox_ep_option(opts, "limits");
    if (opt && parse_list("option limits", opt, &w, err) != 0) return -1;
    if (count_option(opts, "max_buffer", "maxStorageBufferRange", 4096, &w, err) != 0 ||
        count_option(opts, "dispatch_budget", "dispatchBudget", 1, &w, err) != 0 ||
        count_option(opts, "fence_timeout_ms", "fenceTimeoutMs", 0, &w, err) != 0)
        return -1;

    ox_vk_caps *c = &v->caps;
    for (size_t k = 0; k < N_LIMITS; k++) {
        uint64_t want = w.value[k];
        char *field = (char *)c + LIMITS[k].offset;
        switch (LIMITS[k].kind) {
        case LIM_U64: lower64((uint64_t *)(void *)field, want); break;
        case LIM_U32: lower32((uint32_t *)(void *)field, want); break;
        case LIM_U32X3:
            for (int d = 0; d < 3; d++) lower32((uint32_t *)(void *)field + d, want);
            break;
        case LIM_BUDGET: {
            /* a budget set before (the driver denylist) is a ceiling the
             * option cannot raise; otherwise the option replaces the default */
            uint64_t ceiling = v->dispatch_budget ? v->dispatch_budget : UINT64_MAX;
            if (want == UINT64_MAX)
                want = v->dispatch_budget ? v->dispatch_budget
                       : c->device_type == VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
                           ? DEFAULT_DISPATCH_BUDGET_DISCRETE
                           : DEFAULT_DISPATCH_BUDGET;
            v->dispatch_budget = want < ceiling ? want : ceiling;
            break;
        }
        case LIM_TIMEOUT: {
            uint64_t ms = want != UINT64_MAX ? want
                          : c->device_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? DEFAULT_FENCE_TIMEOUT_CPU_MS
                                                                        : DEFAULT_FENCE_TIMEOUT_MS;
            /* 0: wait for ever (as before fences had a timeout) */
            v->fence_timeout_ns = ms == 0 || ms > UINT64_MAX / 1000000 ? UINT64_MAX : ms * 1000000;
            break;
        }
        }
    }
    uint64_t sb = v->dispatch_budget;
    v->submit_budget = sb > UINT64_MAX / SUBMIT_BUDGETS ? UINT64_MAX : sb * SUBMIT_BUDGETS;
    /* the workgroup sizes follow the masked limits: chosen once, here, and
     * used by every pipeline and group count of this provider */
    v->wg = ox_vk_pick_wg(c->max_workgroup_invocations, c->max_workgroup_size[0],
                          c->max_workgroup_size[1], &v->tile);
    return 0;
}

static uint32_t pow2_floor(uint32_t n) {
    uint32_t p = 1;
    while (p <= n / 2) p *= 2;
    return p;
}

uint32_t ox_vk_pick_wg(uint32_t invocations, uint32_t size_x, uint32_t size_y, uint32_t *tile) {
    uint32_t lim = invocations < size_x ? invocations : size_x;
    if (lim > VK_WG_MAX) lim = VK_WG_MAX;
    *tile = 0;
    if (lim < VK_WG_MIN) return 0;
    uint32_t wg = pow2_floor(lim);
    /* a square tile of at most wg invocations, as wide and tall as the
     * sizes allow (VK_WG_MIN = 32 leaves at least 4 x 4 when size_y does) */
    uint32_t t = 1;
    while ((t * 2) * (t * 2) <= wg && t * 2 <= size_y) t *= 2;
    if (t < 4) return 0;
    *tile = t;
    return wg;
}

int ox_vk_wg_ok(const vk_ep *v) { return v->wg != 0; }
