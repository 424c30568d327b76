/* The Vulkan loader, instance and device: the loader is opened with
 * dlopen so a missing libvulkan is an error at provider creation, not a
 * failure to start; the device is the best suitable one, and its
 * capability record comes from real queries, less what ONYX_VK_DISABLE
 * masks. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/vulkan/vk_internal.h"

const char *ox_vk_result_name(VkResult r) {
    switch (r) {
#define R(x) case x: return #x;
        R(VK_SUCCESS) R(VK_NOT_READY) R(VK_TIMEOUT) R(VK_INCOMPLETE)
        R(VK_ERROR_OUT_OF_HOST_MEMORY) R(VK_ERROR_OUT_OF_DEVICE_MEMORY)
        R(VK_ERROR_INITIALIZATION_FAILED) R(VK_ERROR_DEVICE_LOST) R(VK_ERROR_MEMORY_MAP_FAILED)
        R(VK_ERROR_LAYER_NOT_PRESENT) R(VK_ERROR_EXTENSION_NOT_PRESENT)
        R(VK_ERROR_FEATURE_NOT_PRESENT) R(VK_ERROR_INCOMPATIBLE_DRIVER)
        R(VK_ERROR_TOO_MANY_OBJECTS) R(VK_ERROR_FORMAT_NOT_SUPPORTED)
        R(VK_ERROR_FRAGMENTED_POOL) R(VK_ERROR_UNKNOWN) R(VK_ERROR_OUT_OF_POOL_MEMORY)
        R(VK_ERROR_INVALID_EXTERNAL_HANDLE) R(VK_ERROR_FRAGMENTATION)
        R(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) R(VK_PIPELINE_COMPILE_REQUIRED)
#undef R
    default: return "unknown VkResult";
    }
}

int ox_vk_fail(ox_error *err, const char *call, VkResult r) {
    onyx_code code = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                         ? ONYX_OUT_OF_MEMORY
                         : ONYX_RUNTIME_ERROR;
    return ox_fail(err, code, "vulkan: %s failed: %s (%d)", call, ox_vk_result_name(r), (int)r);
}

int ox_vk_parse_mask(const char *s, unsigned *mask, ox_error *err) {
    static const struct { const char *name; unsigned bit; } NAMES[] = {
        {"int64", OX_VK_MASK_INT64}, {"fp16", OX_VK_MASK_FP16},
        {"subgroup", OX_VK_MASK_SUBGROUP}, {"hostmap", OX_VK_MASK_HOSTMAP}};
    *mask = 0;
    while (s && *s) {
        size_t len = strcspn(s, ", +");
        int found = len == 0;
        for (size_t i = 0; i < sizeof NAMES / sizeof NAMES[0] && !found; i++)
            if (strlen(NAMES[i].name) == len && strncmp(NAMES[i].name, s, len) == 0) {
                *mask |= NAMES[i].bit;
                found = 1;
            }
        if (!found)
            return ox_fail(err, ONYX_INVALID_ARGUMENT,
                           "vulkan: ONYX_VK_DISABLE or the disable option names '%.*s'; known: int64, "
                           "fp16, subgroup, hostmap", (int)len, s);
        s += len;
        s += strspn(s, ", +");
    }
    return 0;
}

static int load_loader(vk_ep *v, ox_error *err) {
    v->lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!v->lib) {
        const char *why = dlerror();
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: no Vulkan loader (libvulkan.so.1: %s)",
                       why ? why : "not found");
    }
    /* dlsym returns void *; the loader's entry point is a function */
    void *sym = dlsym(v->lib, "vkGetInstanceProcAddr");
    if (!sym)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       "vulkan: libvulkan.so.1 has no vkGetInstanceProcAddr");
    memcpy(&v->f.vkGetInstanceProcAddr, &sym, sizeof sym);
#define LOAD(name)                                                                        \
    v->f.name = (PFN_##name)v->f.vkGetInstanceProcAddr(NULL, #name);                      \
    if (!v->f.name)                                                                       \
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: the loader has no %s (Vulkan 1.0 " \
                       "loader; 1.1 is needed)", #name);
    OX_VK_GLOBAL_FNS(LOAD)
#undef LOAD
    return 0;
}

static int make_instance(vk_ep *v, ox_error *err) {
    uint32_t version = 0;
    VkResult r = v->f.vkEnumerateInstanceVersion(&version);
    if (r != VK_SUCCESS) return ox_vk_fail(err, "vkEnumerateInstanceVersion", r);
    if (version < VK_API_VERSION_1_1)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: the loader offers Vulkan %u.%u; 1.1 is needed",
                       VK_API_VERSION_MAJOR(version), VK_API_VERSION_MINOR(version));
    /* the newest version onyx knows the structures of: 1.2 brings the
     * driver properties and the float16 feature into core */
    VkApplicationInfo app = {
        .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
        .pApplicationName = "onyx",
        .pEngineName = "onyx",
        .apiVersion = version >= VK_API_VERSION_1_2 ? VK_API_VERSION_1_2 : VK_API_VERSION_1_1,
    };
    VkInstanceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
                               .pApplicationInfo = &app};
    r = v->f.vkCreateInstance(&ci, NULL, &v->instance);
    if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED,
                       "vulkan: no Vulkan driver (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER; "
                       "is an ICD installed, e.g. mesa-vulkan-drivers?)");
    if (r != VK_SUCCESS) {
        v->instance = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateInstance", r);
    }
#define LOAD(name)                                                                     \
    v->f.name = (PFN_##name)v->f.vkGetInstanceProcAddr(v->instance, #name);             \
    if (!v->f.name) return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: no %s", #name);
    OX_VK_INSTANCE_FNS(LOAD)
#undef LOAD
    return 0;
}

int ox_vk_instance_open(vk_ep *v, ox_error *err) {
    return load_loader(v, err) != 0 || make_instance(v, err) != 0 ? -1 : 0;
}

/* Why a device cannot serve, or NULL when it can (vk_internal.h). */
const char *ox_vk_unsuitable(vk_ep *v, VkPhysicalDevice pd, const VkPhysicalDeviceProperties *p,
                              uint32_t *family) {
    if (p->apiVersion < VK_API_VERSION_1_1) return "Vulkan 1.0 only (1.1 is needed)";
    const VkPhysicalDeviceLimits *l = &p->limits;
    uint32_t tile;
    if (!ox_vk_pick_wg(l->maxComputeWorkGroupInvocations, l->maxComputeWorkGroupSize[0],
                       l->maxComputeWorkGroupSize[1], &tile))
        return "workgroups smaller than 32 invocations (or tiles smaller than 4 x 4)";
    if (l->maxPushConstantsSize < VK_PUSH_BYTES) return "fewer than 128 bytes of push constants";
    if (l->maxBoundDescriptorSets < 1 || l->maxPerStageDescriptorStorageBuffers < VK_BINDINGS)
        return "fewer than 4 storage buffers per stage";
    uint32_t n = 0;
    v->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
    VkQueueFamilyProperties q[64];
    if (n > 64) n = 64;
    v->f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, q);
    /* a compute-only family when there is one: it does not wait behind
     * graphics work */
    int best = -1;
    for (uint32_t i = 0; i < n; i++) {
        if (!(q[i].queueFlags & VK_QUEUE_COMPUTE_BIT) || q[i].queueCount == 0) continue;
        if (best < 0 || !(q[i].queueFlags & VK_QUEUE_GRAPHICS_BIT)) best = (int)i;
    }
    if (best < 0) return "no compute queue";
    *family = (uint32_t)best;
    return NULL;
}

static int type_rank(VkPhysicalDeviceType t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return 3;
    default: return 4;
    }
}

static int pick_device(vk_ep *v, int want, ox_error *err) {
    uint32_t n = 0;
    VkResult r = v->f.vkEnumeratePhysicalDevices(v->instance, &n, NULL);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return ox_vk_fail(err, "vkEnumeratePhysicalDevices", r);
    if (n == 0) return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: no Vulkan device");
    VkPhysicalDevice devs[16];
    if (n > 16) n = 16;
    r = v->f.vkEnumeratePhysicalDevices(v->instance, &n, devs);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return ox_vk_fail(err, "vkEnumeratePhysicalDevices", r);
    char why[4096] = "";
    size_t off = 0;
    int best = -1, best_rank = 99, usable = 0;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        uint32_t family = 0;
        v->f.vkGetPhysicalDeviceProperties(devs[i], &p);
        const char *no = ox_vk_unsuitable(v, devs[i], &p, &family);
        char denied[1600];
        if (!no) {
            /* a device the driver denylist disables entirely is skipped
             * like an unsuitable one, so another may serve */
            ox_vk_caps c;
            if (ox_vk_query_caps(v, devs[i], 0, &c, err) != 0) return -1;
            for (int k = 0; k < v->denylist.n && !no; k++) {
                const ox_vk_deny_rule *rule = &v->denylist.rules[k];
                if (!ox_vk_deny_matches(rule, &c)) continue;
                for (int a = 0; a < rule->n_actions; a++)
                    if (rule->actions[a].kind == OX_VK_DENY_DEVICE) {
                        snprintf(denied, sizeof denied, "disabled by the driver denylist, rule '%s' (%s:%d): %s (%s)",
                                 rule->name, v->denylist.source, rule->line, rule->reason, rule->ref);
                        no = denied;
                        break;
                    }
            }
        }
        if (no) {
            if (off < sizeof why)
                off += (size_t)snprintf(why + off, sizeof why - off, "%s%s: %s", off ? "; " : "",
                                        p.deviceName, no);
            continue;
        }
        /* the caller's index, or else the best kind */
        if (want >= 0 ? usable == want : type_rank(p.deviceType) < best_rank) {
            best = (int)i;
            best_rank = type_rank(p.deviceType);
            v->queue_family = family;
        }
        usable++;
    }
    if (want >= 0 && best < 0)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "vulkan: device %d was asked for; %d usable device(s)%s%s",
                       want, usable, why[0] ? ", unusable: " : "", why);
    if (best < 0) return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: no suitable device (%s)", why);
    v->phys = devs[best];
    return 0;
}

/* Memory types: tensors in device-local memory; when that memory is also
 * host-visible and coherent on a device sharing the host's memory
 * (integrated GPUs, CPU drivers) copies are plain memcpy. A discrete GPU's
 * host-visible device memory (a PCI BAR) is slow to read from the host, so
 * there tensors always go through a staging buffer. */
static int pick_memory(vk_ep *v, ox_error *err) {
    VkPhysicalDeviceMemoryProperties mp;
    v->f.vkGetPhysicalDeviceMemoryProperties(v->phys, &mp);
    const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT |
                                       VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    int dev = -1, mapped = -1, staging = -1, cached = -1;
    for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
        VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && dev < 0) dev = (int)i;
        if ((f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT) && (f & host) == host && mapped < 0)
            mapped = (int)i;
        if ((f & host) == host && staging < 0) staging = (int)i;
        if ((f & host) == host && (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) && cached < 0)
            cached = (int)i;
    }
    if (staging < 0)
        return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: %s has no host-visible coherent memory",
                       v->caps.device_name);
    if (dev < 0) dev = staging;
    int unified = v->caps.device_type != VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU;
    v->caps.host_mapped = unified && mapped >= 0 && !(v->caps.masked & OX_VK_MASK_HOSTMAP);
    v->mem_type_device = (uint32_t)(v->caps.host_mapped ? mapped : dev);
    /* staged reads back to the host are faster from cached memory */
    v->mem_type_staging = (uint32_t)(cached >= 0 ? cached : staging);
    return 0;
}

static int make_device(vk_ep *v, ox_error *err) {
    float prio = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = v->queue_family, .queueCount = 1,
                                 .pQueuePriorities = &prio};
    /* fp32 kernels only: no optional feature is enabled */
    VkDeviceCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
                             .queueCreateInfoCount = 1, .pQueueCreateInfos = &q};
    VkResult r = v->f.vkCreateDevice(v->phys, &ci, NULL, &v->device);
    if (r != VK_SUCCESS) {
        v->device = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreateDevice", r);
    }
#define LOAD(name)                                                                     \
    v->f.name = (PFN_##name)v->f.vkGetDeviceProcAddr(v->device, #name);                 \
    if (!v->f.name) return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: no %s", #name);
    OX_VK_DEVICE_FNS(LOAD)
#undef LOAD
    v->f.vkGetDeviceQueue(v->device, v->queue_family, 0, &v->queue);
    return 0;
}

int ox_vk_device_open(vk_ep *v, int device, const char *disable, const char *denylist, ox_error *err) {
    unsigned mask = 0, more = 0;
    if (ox_vk_parse_mask(getenv("ONYX_VK_DISABLE"), &mask, err) != 0 ||
        ox_vk_parse_mask(disable, &more, err) != 0)
        return -1;
    mask |= more;
    /* the denylist first: device choice skips devices it disables */
    if (ox_vk_denylist_load(denylist, &v->denylist, err) != 0) return -1;
    if (ox_vk_instance_open(v, err) != 0 || pick_device(v, device, err) != 0) return -1;
    if (ox_vk_query_caps(v, v->phys, mask, &v->caps, err) != 0) return -1;
    ox_vk_denylist_select(&v->denylist, &v->caps, err);
    unsigned denied = ox_vk_deny_features(&v->denylist) & ~mask;
    if (denied && ox_vk_query_caps(v, v->phys, mask | denied, &v->caps, err) != 0) return -1;
    if (pick_memory(v, err) != 0 || make_device(v, err) != 0) return -1;
    return 0;
}

void ox_vk_device_close(vk_ep *v) {
    /* each destroy function loads first in its list: NULL only when the
     * loader offered none of them, and then the handle is left behind */
    if (v->device && v->f.vkDestroyDevice) v->f.vkDestroyDevice(v->device, NULL);
    if (v->instance && v->f.vkDestroyInstance) v->f.vkDestroyInstance(v->instance, NULL);
    if (v->lib) dlclose(v->lib);
    v->device = VK_NULL_HANDLE;
    v->instance = VK_NULL_HANDLE;
    v->lib = NULL;
}

int ox_vk_device_remake(vk_ep *v, ox_error *err) {
    if (v->device && v->f.vkDestroyDevice) v->f.vkDestroyDevice(v->device, NULL);
    v->device = VK_NULL_HANDLE;
    return make_device(v, err);
}
