/* The pipeline cache file (option pipeline_cache=PATH; by default
 * `<cache folder>/vulkan/pipelines-<vendor>-<device>-<driver version>-
 * <pipeline cache UUID>-onyx-<version>.bin`, one per device and driver
 * build, when the session has a cache folder). Compiling a
 * compute pipeline costs milliseconds to tens of milliseconds on some
 * drivers, paid again by every new session; the cache file keeps the
 * driver's compiled pipelines between processes.
 *
 * The file is onyx's header, then the driver's cache data:
 *   "ONYXVKPC" | format version (u32) | onyx version (16 bytes, NUL padded)
 *   | vendor id | device id | driver version (u32 each)
 *   | pipelineCacheUUID (16 bytes) | data size (u64) | data
 * A file whose header does not match this device, driver build and onyx
 * version, or that is short, is ignored (the cache starts empty and the
 * file is rewritten); the driver validates its own data again. Nothing in
 * the file is trusted beyond that: a bad file costs compile time, never a
 * failure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/files.h"
#include "ep/vulkan/vk_internal.h"
#include "onyx.h"

#define MAGIC "ONYXVKPC"
#define FORMAT 1u
/* a cache bigger than this is not one of ours */
#define MAX_DATA ((uint64_t)256 << 20)

typedef struct file_header {
    char magic[8];
    uint32_t format;
    char version[16];
    uint32_t vendor, device, driver;
    uint8_t uuid[16];
    uint64_t size;
} file_header;

static void header_for(const vk_ep *v, file_header *h, uint64_t size) {
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MAGIC, 8);
    h->format = FORMAT;
    snprintf(h->version, sizeof h->version, "%s", ONYX_VERSION_STRING);
    h->vendor = v->caps.vendor_id;
    h->device = v->caps.device_id;
    h->driver = v->caps.driver_version;
    memcpy(h->uuid, v->caps.pipeline_cache_uuid, 16);
    h->size = size;
}

/* The driver data of a matching file, or NULL (size 0). */
static void *read_file(const vk_ep *v, size_t *size) {
    *size = 0;
    FILE *f = fopen(v->pipeline_cache_path, "rb");
    if (!f) return NULL;
    file_header got, want;
    void *data = NULL;
    if (fread(&got, sizeof got, 1, f) == 1) {
        header_for(v, &want, got.size);
        if (memcmp(&got, &want, sizeof got) == 0 && got.size > 0 && got.size <= MAX_DATA) {
            data = malloc((size_t)got.size);
            if (data && fread(data, 1, (size_t)got.size, f) == (size_t)got.size) {
                *size = (size_t)got.size;
            } else {
                free(data);
                data = NULL;
            }
        }
    }
    fclose(f);
    return data;
}

/* The default file in the session's cache folder, once the device (and
 * so its key) is known. */
static int default_path(vk_ep *v, ox_error *err) {
    if (v->pipeline_cache_path || !v->cache_dir) return 0;
    char path[4096];
    int n = snprintf(path, sizeof path, "%s/vulkan/pipelines-%s-onyx-%s.bin", v->cache_dir,
                     ox_vk_device_key(&v->base), ONYX_VERSION_STRING);
    if (n < 0 || (size_t)n >= sizeof path) return 0; /* no cache: only time is lost */
    if (!(v->pipeline_cache_path = strdup(path))) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    return 0;
}

int ox_vk_pipeline_cache_open(vk_ep *v, ox_error *err) {
    if (default_path(v, err) != 0) return -1;
    size_t size = 0;
    void *data = v->pipeline_cache_path ? read_file(v, &size) : NULL;
    VkPipelineCacheCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO,
                                    .initialDataSize = size, .pInitialData = data};
    VkResult r = v->f.vkCreatePipelineCache(v->device, &ci, NULL, &v->pipeline_cache);
    if (r != VK_SUCCESS && data) {
        /* data the driver refuses: start empty */
        ci.initialDataSize = 0;
        ci.pInitialData = NULL;
        size = 0;
        r = v->f.vkCreatePipelineCache(v->device, &ci, NULL, &v->pipeline_cache);
    }
    free(data);
    if (r != VK_SUCCESS) {
        v->pipeline_cache = VK_NULL_HANDLE;
        return ox_vk_fail(err, "vkCreatePipelineCache", r);
    }
    v->pipeline_cache_loaded = size > 0;
    return 0;
}

/* Writes header and data to a temporary file renamed over the target, so
 * a reader never sees half a file (two sessions closing at once each
 * write their own temporary file; the last rename wins). Failures are
 * silent: the cache only saves time. */
static void write_file(const vk_ep *v, const void *data, size_t size) {
    char *dir = strdup(v->pipeline_cache_path);
    char *slash = dir ? strrchr(dir, '/') : NULL;
    if (slash) *slash = 0;
    int made = dir && (!slash || ox_mkdir_p(dir) == 0);
    free(dir);
    ox_temp_file t;
    ox_error ignored = {0};
    if (!made || ox_temp_open(&t, v->pipeline_cache_path, &ignored) != 0) return;
    file_header h;
    header_for(v, &h, size);
    if (ox_temp_write_at(&t, &h, sizeof h, 0, &ignored) != 0 ||
        ox_temp_write_at(&t, data, size, sizeof h, &ignored) != 0 || ox_temp_commit(&t, &ignored) != 0)
        ox_temp_discard(&t);
}

void ox_vk_pipeline_cache_close(vk_ep *v) {
    if (!v->pipeline_cache) return;
    size_t size = 0;
    if (v->pipeline_cache_path &&
        v->f.vkGetPipelineCacheData(v->device, v->pipeline_cache, &size, NULL) == VK_SUCCESS &&
        size > 0 && size <= MAX_DATA) {
        void *data = malloc(size);
        if (data && v->f.vkGetPipelineCacheData(v->device, v->pipeline_cache, &size, data) == VK_SUCCESS)
            write_file(v, data, size);
        free(data);
    }
    v->f.vkDestroyPipelineCache(v->device, v->pipeline_cache, NULL);
    v->pipeline_cache = VK_NULL_HANDLE;
}
