#include "format/onyx_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/files.h"
#include "core/hash.h"
#include "core/le.h"
#include "onyx.h"
#include "format/writer.h"

static const uint8_t MAGIC[8] = {0x89, 'O', 'N', 'Y', 'X', 0x0D, 0x0A, 0x1A};

/* Header fields by byte offset (docs/FORMAT.md). */
enum {
    H_MAGIC = 0,
    H_VERSION = 8,
    H_HEADER_BYTES = 12,
    H_OPT_LEVEL = 16,
    H_FLAGS = 20,
    H_ONYX_VERSION = 24,
    H_SOURCE_SHA256 = 56,
    H_WEIGHTS_OFFSET = 88,
    H_WEIGHTS_BYTES = 96,
    H_GRAPH_OFFSET = 104,
    H_GRAPH_BYTES = 112,
    H_FILE_BYTES = 120,
    H_WEIGHTS_SUM = 128,
    H_GRAPH_SUM = 136,
    H_RESERVED = 144,
    H_HEADER_SUM = 248,
};

int ox_onyx_sniff(const void *data, size_t size) {
    return data && size >= sizeof MAGIC && memcmp(data, MAGIC, sizeof MAGIC) == 0;
}

/* ---- reading ---- */

/* A section [off, off + len) inside a file of `size` bytes, after the
 * header. */
static int section_ok(uint64_t off, uint64_t len, uint64_t size) {
    return off >= OX_ONYX_HEADER_BYTES && off <= size && len <= size - off;
}

int ox_onyx_parse(const void *data, size_t size, int mapped, ox_onyx_view *out, ox_error *err) {
    memset(out, 0, sizeof *out);
    const uint8_t *h = data;
    if (!ox_onyx_sniff(data, size))
        return ox_fail(err, ONYX_INVALID_MODEL, "not an onyx optimized file (no magic)");
    if (size < OX_ONYX_HEADER_BYTES)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "optimized file truncated: %zu bytes, shorter than its %u-byte header", size,
                       OX_ONYX_HEADER_BYTES);
    uint32_t version = ox_get_le32(h + H_VERSION);
    char writer[33] = {0};
    memcpy(writer, h + H_ONYX_VERSION, 32);
    for (int i = 0; i < 32; i++)
        if (writer[i] && (writer[i] < 0x20 || writer[i] > 0x7e)) writer[i] = '?';
    if (version != OX_ONYX_FORMAT_VERSION)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "optimized file format version %u (written by onyx '%s'); this onyx (%s) "
                       "reads version %u: compile the model again with `onyx compile`",
                       version, writer, ONYX_VERSION_STRING, OX_ONYX_FORMAT_VERSION);
    if (ox_get_le32(h + H_HEADER_BYTES) != OX_ONYX_HEADER_BYTES)
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file header: size %u, expected %u",
                       ox_get_le32(h + H_HEADER_BYTES), OX_ONYX_HEADER_BYTES);
    if (ox_checksum64(h, H_HEADER_SUM) != ox_get_le64(h + H_HEADER_SUM))
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file header is corrupted (checksum mismatch)");
    uint64_t file_bytes = ox_get_le64(h + H_FILE_BYTES);
    if (file_bytes != size)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "optimized file %s: its header says %llu bytes, the file has %zu",
                       file_bytes > size ? "truncated" : "has extra bytes",
                       (unsigned long long)file_bytes, size);
    for (int i = H_RESERVED; i < H_HEADER_SUM; i++)
        if (h[i]) return ox_fail(err, ONYX_INVALID_MODEL, "optimized file header: reserved byte %d is set", i);
    if (ox_get_le32(h + H_FLAGS) != 0)
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file header: unknown flags 0x%x",
                       ox_get_le32(h + H_FLAGS));
    uint64_t wo = ox_get_le64(h + H_WEIGHTS_OFFSET), wb = ox_get_le64(h + H_WEIGHTS_BYTES);
    uint64_t go = ox_get_le64(h + H_GRAPH_OFFSET), gb = ox_get_le64(h + H_GRAPH_BYTES);
    if (!section_ok(wo, wb, size) || wo % OX_ONYX_ALIGN || !section_ok(go, gb, size) || gb == 0 ||
        (go < wo + wb && wo < go + gb))
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "optimized file header: sections (weights %llu+%llu, graph %llu+%llu) do "
                       "not fit the %zu-byte file",
                       (unsigned long long)wo, (unsigned long long)wb, (unsigned long long)go,
                       (unsigned long long)gb, size);
    if (ox_checksum64(h + go, gb) != ox_get_le64(h + H_GRAPH_SUM))
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file: the graph section is corrupted (checksum mismatch)");
    if (ox_checksum64_chunked(h + wo, wb, mapped ? ox_drop_mapped_pages : NULL, NULL) != ox_get_le64(h + H_WEIGHTS_SUM))
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file: the weight section is corrupted (checksum mismatch)");
    out->meta.format_version = version;
    out->meta.opt_level = ox_get_le32(h + H_OPT_LEVEL);
    memcpy(out->meta.onyx_version, writer, sizeof out->meta.onyx_version - 1);
    memcpy(out->meta.source_sha256, h + H_SOURCE_SHA256, 32);
    if (out->meta.opt_level > 2)
        return ox_fail(err, ONYX_INVALID_MODEL, "optimized file header: unknown optimization level %u",
                       out->meta.opt_level);
    out->graph = h + go;
    out->graph_bytes = gb;
    out->weights = h + wo;
    out->weights_bytes = wb;
    return 0;
}

int ox_onyx_reseal(uint8_t *h, size_t size) {
    if (!ox_onyx_sniff(h, size) || size < OX_ONYX_HEADER_BYTES) return -1;
    uint64_t wo = ox_get_le64(h + H_WEIGHTS_OFFSET), wb = ox_get_le64(h + H_WEIGHTS_BYTES);
    uint64_t go = ox_get_le64(h + H_GRAPH_OFFSET), gb = ox_get_le64(h + H_GRAPH_BYTES);
    if (!section_ok(wo, wb, size) || !section_ok(go, gb, size)) return -1;
    ox_put_le64(h + H_WEIGHTS_SUM, ox_checksum64_chunked(h + wo, wb, NULL, NULL));
    ox_put_le64(h + H_GRAPH_SUM, ox_checksum64(h + go, gb));
    ox_put_le64(h + H_HEADER_SUM, ox_checksum64(h, H_HEADER_SUM));
    return 0;
}

/* ---- writing ---- */

/* The weight sink: bytes at aligned offsets of a file region. */
typedef struct file_sink {
    ox_temp_file *file;
    uint64_t base; /* where the region starts in the file */
    uint64_t used; /* bytes of the region in use */
} file_sink;

static int sink_store(void *ctx, const void *bytes, size_t len, uint64_t *offset, ox_error *err) {
    file_sink *s = ctx;
    uint64_t off = ox_align_up(s->used, OX_ONYX_ALIGN);
    if (ox_temp_write_at(s->file, bytes, len, s->base + off, err) != 0) return -1;
    *offset = off;
    s->used = off + len;
    return 0;
}

/* Checksums of the written sections, read back through a mapping. */
static int file_sums(int fd, uint64_t size, uint64_t wo, uint64_t wb, uint64_t go, uint64_t gb,
                     uint64_t *wsum, uint64_t *gsum, const char *path, ox_error *err) {
    void *map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED)
        return ox_fail(err, ONYX_IO_ERROR, "cannot map '%s' to checksum it: %s", path, strerror(errno));
    *wsum = ox_checksum64_chunked((const uint8_t *)map + wo, wb, NULL, NULL);
    *gsum = ox_checksum64((const uint8_t *)map + go, gb);
    munmap(map, size);
    return 0;
}

int ox_onyx_write(const ir_model *m, const ox_onyx_meta *meta, const char *path, ox_error *err) {
    ox_temp_file f;
    if (ox_temp_open(&f, path, err) != 0) return -1;
    file_sink sink = {&f, OX_ONYX_WEIGHTS_OFFSET, 0};
    ox_weight_sink ws = {sink_store, &sink, OX_ONYX_WEIGHTS, 1, OX_WEIGHTS_MEMORY};
    uint8_t *graph = NULL;
    size_t gb = 0;
    if (ox_model_write_with(m, &ws, &graph, &gb, err) != 0) goto fail;
    uint64_t wo = OX_ONYX_WEIGHTS_OFFSET, wb = sink.used;
    uint64_t go = ox_align_up(wo + wb, OX_ONYX_ALIGN), size = go + gb;
    if (ox_temp_write_at(&f, graph, gb, go, err) != 0) goto fail;
    free(graph);
    graph = NULL;
    uint8_t h[OX_ONYX_HEADER_BYTES] = {0};
    memcpy(h + H_MAGIC, MAGIC, sizeof MAGIC);
    ox_put_le32(h + H_VERSION, OX_ONYX_FORMAT_VERSION);
    ox_put_le32(h + H_HEADER_BYTES, OX_ONYX_HEADER_BYTES);
    ox_put_le32(h + H_OPT_LEVEL, meta->opt_level);
    snprintf((char *)h + H_ONYX_VERSION, 32, "%s", ONYX_VERSION_STRING);
    memcpy(h + H_SOURCE_SHA256, meta->source_sha256, 32);
    ox_put_le64(h + H_WEIGHTS_OFFSET, wo);
    ox_put_le64(h + H_WEIGHTS_BYTES, wb);
    ox_put_le64(h + H_GRAPH_OFFSET, go);
    ox_put_le64(h + H_GRAPH_BYTES, gb);
    ox_put_le64(h + H_FILE_BYTES, size);
    /* the gap between header and weights, and between sections, is zeros:
     * a file written by pwrite past its end reads zeros there */
    uint64_t wsum = 0, gsum = 0;
    if (file_sums(f.fd, size, wo, wb, go, gb, &wsum, &gsum, path, err) != 0) goto fail;
    ox_put_le64(h + H_WEIGHTS_SUM, wsum);
    ox_put_le64(h + H_GRAPH_SUM, gsum);
    ox_put_le64(h + H_HEADER_SUM, ox_checksum64(h, H_HEADER_SUM));
    if (ox_temp_write_at(&f, h, sizeof h, 0, err) != 0) goto fail;
    return ox_temp_commit(&f, err);
fail:
    free(graph);
    ox_temp_discard(&f);
    return -1;
}

/* The last component of path. */
static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

int ox_onnx_write_file(const ir_model *m, const char *path, size_t external_min, ox_error *err) {
    ox_temp_file f, d = {NULL, NULL, -1};
    char *data_path = NULL, *location = NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    int rc = -1;
    if (ox_temp_open(&f, path, err) != 0) return -1;
    file_sink sink = {&d, 0, 0};
    ox_weight_sink ws = {sink_store, &sink, NULL, external_min, OX_WEIGHTS_ONNX};
    if (external_min) {
        size_t n = strlen(path) + sizeof ".data";
        data_path = malloc(n);
        location = malloc(n);
        if (!data_path || !location) {
            ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        snprintf(data_path, n, "%s.data", path);
        snprintf(location, n, "%s.data", base_name(path));
        ws.location = location;
        if (ox_temp_open(&d, data_path, err) != 0) goto done;
    }
    if (ox_model_write_with(m, external_min ? &ws : NULL, &bytes, &len, err) != 0) goto done;
    if (ox_temp_write_at(&f, bytes, len, 0, err) != 0) goto done;
    /* the weights first: a reader that sees the new model sees its data */
    if (external_min) {
        if (sink.used == 0)
            ox_temp_discard(&d);
        else if (ox_temp_commit(&d, err) != 0)
            goto done;
    }
    rc = ox_temp_commit(&f, err);
done:
    if (rc != 0) {
        ox_temp_discard(&f);
        ox_temp_discard(&d);
    }
    free(bytes);
    free(data_path);
    free(location);
    return rc;
}
