/* The capability record of a Vulkan device from real queries (the
 * provider's, and onyx devices' for every device), ONYX_VK_FAKE_DEVICE's
 * overrides, and the enumeration of every device without a provider. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ep/devices.h"
#include "ep/vulkan/vk_internal.h"

static void copy_name(char *dst, size_t size, const char *src) {
    snprintf(dst, size, "%s", src);
}

/* Fills the capability record from the device's properties and features. */
static void query_core(vk_ep *v, VkPhysicalDevice pd, unsigned mask, ox_vk_caps *c) {
    memset(c, 0, sizeof *c);
    VkPhysicalDeviceProperties base;
    v->f.vkGetPhysicalDeviceProperties(pd, &base);
    int v12 = base.apiVersion >= VK_API_VERSION_1_2;
    VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
    VkPhysicalDeviceMaintenance3Properties m3 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
    VkPhysicalDeviceSubgroupProperties sg = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES,
                                             .pNext = &m3};
    if (v12) m3.pNext = &drv;
    VkPhysicalDeviceProperties2 props = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2,
                                         .pNext = &sg};
    v->f.vkGetPhysicalDeviceProperties2(pd, &props);

    VkPhysicalDeviceShaderFloat16Int8Features f16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES};
    VkPhysicalDevice8BitStorageFeatures s8 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_8BIT_STORAGE_FEATURES};
    VkPhysicalDevice16BitStorageFeatures s16 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES};
    if (v12) {
        s16.pNext = &f16;
        f16.pNext = &s8;
    }
    VkPhysicalDeviceFeatures2 feats = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2,
                                       .pNext = &s16};
    v->f.vkGetPhysicalDeviceFeatures2(pd, &feats);

    const VkPhysicalDeviceProperties *p = &props.properties;
    c->api_version = p->apiVersion;
    c->driver_version = p->driverVersion;
    c->vendor_id = p->vendorID;
    c->device_id = p->deviceID;
    c->device_type = (int)p->deviceType;
    copy_name(c->device_name, sizeof c->device_name, p->deviceName);
    if (v12) {
        c->driver_id = (uint32_t)drv.driverID;
        copy_name(c->driver_name, sizeof c->driver_name, drv.driverName);
        copy_name(c->driver_info, sizeof c->driver_info, drv.driverInfo);
    }
    c->shader_int64 = feats.features.shaderInt64 && !(mask & OX_VK_MASK_INT64);
    c->shader_float16 = v12 && f16.shaderFloat16 && !(mask & OX_VK_MASK_FP16);
    c->storage_buffer_16bit = s16.storageBuffer16BitAccess && !(mask & OX_VK_MASK_FP16);
    if (!(mask & OX_VK_MASK_SUBGROUP)) {
        c->subgroup_size = sg.subgroupSize;
        c->subgroup_stages = sg.supportedStages;
        c->subgroup_ops = sg.supportedOperations;
    }
    /* the reduction keeps one partial per subgroup in a shared slot per
     * invocation (softmax_subgroup.comp): any subgroup size, any workgroup
     * size the provider picks */
    c->subgroup_reduce = (c->subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) &&
                         (c->subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT) &&
                         (c->subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT) &&
                         c->subgroup_size >= 1;
    memcpy(c->pipeline_cache_uuid, p->pipelineCacheUUID, VK_UUID_SIZE);
    c->max_storage_buffer_range = p->limits.maxStorageBufferRange;
    c->max_allocation_size = m3.maxMemoryAllocationSize;
    c->max_workgroup_invocations = p->limits.maxComputeWorkGroupInvocations;
    for (int i = 0; i < 3; i++) {
        c->max_workgroup_size[i] = p->limits.maxComputeWorkGroupSize[i];
        c->max_workgroup_count[i] = p->limits.maxComputeWorkGroupCount[i];
    }
    c->max_push_constants_size = p->limits.maxPushConstantsSize;
    c->min_storage_offset_alignment = (uint32_t)p->limits.minStorageBufferOffsetAlignment;
    c->masked = mask;
    /* the fuller record: what onyx devices shows (not masked: the device's own) */
    c->conformance_version = v12 ? (uint32_t)drv.conformanceVersion.major << 24 |
                                       (uint32_t)drv.conformanceVersion.minor << 16 |
                                       (uint32_t)drv.conformanceVersion.subminor << 8 |
                                       drv.conformanceVersion.patch
                                 : 0;
    c->shader_int8 = v12 && f16.shaderInt8;
    c->shader_int16 = feats.features.shaderInt16;
    c->shader_float64 = feats.features.shaderFloat64;
    c->storage_buffer_8bit = v12 && s8.storageBuffer8BitAccess;
    c->max_shared_memory = p->limits.maxComputeSharedMemorySize;
    VkPhysicalDeviceMemoryProperties mp;
    v->f.vkGetPhysicalDeviceMemoryProperties(pd, &mp);
    c->n_heaps = mp.memoryHeapCount < 16 ? mp.memoryHeapCount : 16;
    for (uint32_t i = 0; i < c->n_heaps; i++) {
        c->heap_size[i] = mp.memoryHeaps[i].size;
        c->heap_flags[i] = mp.memoryHeaps[i].flags;
    }
    c->n_memory_types = mp.memoryTypeCount < 32 ? mp.memoryTypeCount : 32;
    for (uint32_t i = 0; i < c->n_memory_types; i++) {
        c->type_flags[i] = mp.memoryTypes[i].propertyFlags;
        c->type_heap[i] = mp.memoryTypes[i].heapIndex;
    }
}


/* ONYX_VK_FAKE_DEVICE=VENDOR:DEVICE:DRIVER:VERSION[:DRIVER_ID] (vk_ep.h). */
static int apply_fake(ox_vk_caps *c, ox_error *err) {
    const char *spec = getenv("ONYX_VK_FAKE_DEVICE");
    if (!spec || !spec[0]) return 0;
    char buf[512], *f[6] = {0};
    int n = 0;
    if (strlen(spec) >= sizeof buf) goto bad;
    snprintf(buf, sizeof buf, "%s", spec);
    for (char *p = buf; n < 6;) {
        f[n++] = p;
        char *colon = strchr(p, ':');
        if (!colon) break;
        *colon = '\0';
        p = colon + 1;
    }
    uint32_t vendor, device, id = c->driver_id, ver[4];
    char *end;
    errno = 0;
    if (n < 4 || n > 5 || !f[2][0] || strlen(f[2]) >= sizeof c->driver_name) goto bad;
    unsigned long x = strtoul(f[0], &end, 0);
    if (!f[0][0] || *end || errno || x > 0xffffffffUL) goto bad;
    vendor = (uint32_t)x;
    x = strtoul(f[1], &end, 0);
    if (!f[1][0] || *end || errno || x > 0xffffffffUL) goto bad;
    device = (uint32_t)x;
    if (ox_vk_parse_version(f[3], ver) != 0) goto bad;
    if (n == 5) {
        x = strtoul(f[4], &end, 0);
        if (!f[4][0] || *end || errno || x > 0xffffffffUL) goto bad;
        id = (uint32_t)x;
    }
    c->faked = 1;
    c->real_vendor_id = c->vendor_id;
    c->real_device_id = c->device_id;
    c->real_driver_version = c->driver_version;
    c->real_driver_id = c->driver_id;
    memcpy(c->real_driver_name, c->driver_name, sizeof c->driver_name);
    c->vendor_id = vendor;
    c->device_id = device;
    c->driver_id = id;
    snprintf(c->driver_name, sizeof c->driver_name, "%s", f[2]);
    c->driver_version = ox_vk_driver_version_encode(vendor, id, ver);
    return 0;
bad:
    return ox_fail(err, ONYX_INVALID_ARGUMENT,
                   "vulkan: ONYX_VK_FAKE_DEVICE='%s' is not VENDOR:DEVICE:DRIVER:VERSION[:DRIVER_ID] "
                   "(e.g. 0x1002:0x67df:radv:21.0.0:3)", spec);
}

int ox_vk_query_caps(vk_ep *v, VkPhysicalDevice pd, unsigned mask, ox_vk_caps *c, ox_error *err) {
    query_core(v, pd, mask, c);
    return apply_fake(c, err);
}

/* ---- enumeration ---- */

static const char *type_name(int t) {
    switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
    }
}

static const char *vendor_name(uint32_t id) {
    switch (id) {
    case 0x1002: return "AMD";
    case 0x10DE: return "NVIDIA";
    case 0x8086: return "Intel";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x1010: return "Imagination";
    case 0x10005: return "Mesa";
    case 0x106B: return "Apple";
    default: return "unknown";
    }
}

/* Names of the set bits of `bits`, comma-separated ("none" when 0). */
static void bit_names(uint32_t bits, const char *const *names, int n, char *buf, size_t size) {
    size_t off = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && off < size; i++)
        if (bits & (1u << i))
            off += (size_t)snprintf(buf + off, size - off, "%s%s", off ? "," : "", names[i]);
    if (!buf[0]) snprintf(buf, size, "none");
}

static const char *const SUBGROUP_OPS[] = {"basic", "vote", "arithmetic", "ballot", "shuffle",
                                           "shuffle_relative", "clustered", "quad"};
static const char *const STAGES[] = {"vertex", "tess_control", "tess_eval", "geometry", "fragment", "compute"};
static const char *const MEM_FLAGS[] = {"device_local", "host_visible", "host_coherent", "host_cached",
                                        "lazily_allocated", "protected"};

static const char *yes(int b) { return b ? "yes" : "no"; }

/* One device's record as key/value pairs. */
static int list_one(ox_device_list *out, const ox_vk_caps *c, int index, int usable_index,
                    const char *unusable, const ox_vk_denylist *rules, ox_error *err) {
    char t[1024], u[64];
#define SET(k, ...) do { if (ox_devlist_set(out, err, k, __VA_ARGS__) != 0) return -1; } while (0)
    if (ox_devlist_add_device(out, err) != 0) return -1;
    SET("provider", "vulkan");
    SET("index", "%d", index);
    SET("name", "%s", c->device_name);
    SET("usable", "%s", unusable ? "no" : "yes");
    if (unusable) SET("unusable_reason", "%s", unusable);
    else SET("device_option", "%d", usable_index);
    SET("type", "%s", type_name(c->device_type));
    SET("vendor_id", "0x%04x (%s)", c->vendor_id, vendor_name(c->vendor_id));
    SET("device_id", "0x%04x", c->device_id);
    SET("api_version", "%u.%u.%u", VK_API_VERSION_MAJOR(c->api_version), VK_API_VERSION_MINOR(c->api_version),
        VK_API_VERSION_PATCH(c->api_version));
    SET("driver_name", "%s", c->driver_name[0] ? c->driver_name : "(unknown before Vulkan 1.2)");
    SET("driver_info", "%s", c->driver_info);
    SET("driver_id", "%u", c->driver_id);
    ox_vk_driver_version_text(c->vendor_id, c->driver_id, c->driver_version, t, sizeof t);
    SET("driver_version", "%s (0x%08x)", t, c->driver_version);
    if (c->faked) {
        ox_vk_driver_version_text(c->real_vendor_id, c->real_driver_id, c->real_driver_version, t, sizeof t);
        SET("faked", "yes: ONYX_VK_FAKE_DEVICE replaced vendor 0x%04x, device 0x%04x, driver %s %s (id %u)",
            c->real_vendor_id, c->real_device_id, c->real_driver_name, t, c->real_driver_id);
    }
    SET("conformance_version", "%u.%u.%u.%u", c->conformance_version >> 24, (c->conformance_version >> 16) & 0xff,
        (c->conformance_version >> 8) & 0xff, c->conformance_version & 0xff);
    for (int i = 0; i < 16; i++) snprintf(u + 2 * i, 3, "%02x", c->pipeline_cache_uuid[i]);
    SET("pipeline_cache_uuid", "%s", u);
    SET("shader_int64", "%s", yes(c->shader_int64));
    SET("shader_float16", "%s", yes(c->shader_float16));
    SET("shader_int8", "%s", yes(c->shader_int8));
    SET("shader_int16", "%s", yes(c->shader_int16));
    SET("shader_float64", "%s", yes(c->shader_float64));
    SET("storage_buffer_16bit_access", "%s", yes(c->storage_buffer_16bit));
    SET("storage_buffer_8bit_access", "%s", yes(c->storage_buffer_8bit));
    SET("subgroup_size", "%u", c->subgroup_size);
    bit_names(c->subgroup_stages, STAGES, 6, t, sizeof t);
    SET("subgroup_stages", "%s", t);
    bit_names(c->subgroup_ops, SUBGROUP_OPS, 8, t, sizeof t);
    SET("subgroup_ops", "%s", t);
    SET("max_compute_shared_memory_size", "%u", c->max_shared_memory);
    SET("max_compute_workgroup_count", "%u,%u,%u", c->max_workgroup_count[0], c->max_workgroup_count[1],
        c->max_workgroup_count[2]);
    SET("max_compute_workgroup_size", "%u,%u,%u", c->max_workgroup_size[0], c->max_workgroup_size[1],
        c->max_workgroup_size[2]);
    SET("max_compute_workgroup_invocations", "%u", c->max_workgroup_invocations);
    SET("max_storage_buffer_range", "%llu", (unsigned long long)c->max_storage_buffer_range);
    SET("max_memory_allocation_size", "%llu", (unsigned long long)c->max_allocation_size);
    SET("min_storage_buffer_offset_alignment", "%u", c->min_storage_offset_alignment);
    SET("max_push_constants_size", "%u", c->max_push_constants_size);
    for (uint32_t i = 0; i < c->n_heaps; i++) {
        char k[32];
        snprintf(k, sizeof k, "memory_heap.%u", i);
        SET(k, "%llu bytes%s", (unsigned long long)c->heap_size[i],
            c->heap_flags[i] & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT ? ", device_local" : "");
    }
    for (uint32_t i = 0; i < c->n_memory_types; i++) {
        char k[32];
        snprintf(k, sizeof k, "memory_type.%u", i);
        bit_names(c->type_flags[i], MEM_FLAGS, 6, t, sizeof t);
        SET(k, "heap %u: %s", c->type_heap[i], t);
    }
    if (rules->n) {
        ox_vk_denylist_describe(rules, t, sizeof t);
        SET("denylist", "%s", t);
    } else {
        SET("denylist", "no rule matches (%s)", rules->source);
    }
#undef SET
    return 0;
}

static int list_all(vk_ep *v, const ox_vk_denylist *all, ox_device_list *out, ox_error *err) {
    if (ox_vk_instance_open(v, err) != 0) return -1;
    uint32_t n = 0;
    VkResult r = v->f.vkEnumeratePhysicalDevices(v->instance, &n, NULL);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return ox_vk_fail(err, "vkEnumeratePhysicalDevices", r);
    if (n == 0) return ox_fail(err, ONYX_NOT_IMPLEMENTED, "vulkan: the driver offers no Vulkan device");
    VkPhysicalDevice devs[16];
    if (n > 16) n = 16;
    r = v->f.vkEnumeratePhysicalDevices(v->instance, &n, devs);
    if (r != VK_SUCCESS && r != VK_INCOMPLETE) return ox_vk_fail(err, "vkEnumeratePhysicalDevices", r);
    int usable = 0;
    for (uint32_t i = 0; i < n; i++) {
        VkPhysicalDeviceProperties p;
        uint32_t family;
        v->f.vkGetPhysicalDeviceProperties(devs[i], &p);
        const char *no = ox_vk_unsuitable(v, devs[i], &p, &family);
        ox_vk_caps c;
        if (ox_vk_query_caps(v, devs[i], 0, &c, err) != 0) return -1;
        /* the rules matching this device: a copy of the list, narrowed */
        ox_vk_denylist rules = *all;
        rules.rules = all->n ? malloc((size_t)all->n * sizeof *rules.rules) : NULL;
        if (all->n && !rules.rules) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
        if (all->n) memcpy(rules.rules, all->rules, (size_t)all->n * sizeof *rules.rules);
        ox_vk_denylist_select(&rules, &c, err);
        const ox_vk_deny_rule *dr = ox_vk_deny_device_rule(&rules);
        char why[1200];
        if (!no && dr) {
            snprintf(why, sizeof why, "disabled by the driver denylist, rule '%s': %s (%s)", dr->name,
                     dr->reason, dr->ref);
            no = why;
        }
        int rc = list_one(out, &c, (int)i, usable, no, &rules, err);
        ox_vk_denylist_free(&rules);
        if (rc != 0) return -1;
        if (!no) usable++;
    }
    return 0;
}

int ox_vulkan_list_devices(ox_device_list *out, ox_error *err) {
    /* a provider record that is never completed: only its loader and
     * instance are used, and closed here */
    ox_vk_denylist all;
    if (ox_vk_denylist_load(NULL, &all, err) != 0) return -1;
    vk_ep *v = calloc(1, sizeof *v);
    if (!v) {
        ox_vk_denylist_free(&all);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    int rc = list_all(v, &all, out, err);
    ox_vk_device_close(v);
    free(v);
    ox_vk_denylist_free(&all);
    return rc;
}
