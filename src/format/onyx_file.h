/* The optimized model file (`.onyx`, docs/FORMAT.md): a fixed header, the
 * weight section (every main-graph weight at a 64-byte aligned offset, as
 * onyx holds it in memory, so a mapped file is used in place), then the
 * optimized graph as ONNX ModelProto bytes whose weights are external data
 * at the reserved location OX_ONYX_WEIGHTS. Little-endian throughout. */
#ifndef ONYX_FORMAT_ONYX_FILE_H
#define ONYX_FORMAT_ONYX_FILE_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "ir/ir.h"

#define OX_ONYX_FORMAT_VERSION 1u
#define OX_ONYX_HEADER_BYTES 256u
#define OX_ONYX_WEIGHTS_OFFSET 4096u /* a page: mappings keep the alignment */
#define OX_ONYX_ALIGN 64u
#define OX_ONYX_WEIGHTS "onyx:weights"
/* metadata_props of an ONNX twin: the level its graph was optimized at
 * and the source model's SHA-256 (hex), so it loads as optimized */
#define OX_ONYX_MARK_LEVEL "onyx.optimized_level"
#define OX_ONYX_MARK_SOURCE "onyx.source_sha256"

/* What the header records besides the sections. */
typedef struct ox_onyx_meta {
    uint32_t format_version;
    uint32_t opt_level;   /* onyx_opt_level the graph was optimized at */
    char onyx_version[32]; /* the onyx that wrote it */
    uint8_t source_sha256[32];
} ox_onyx_meta;

/* A parsed, checked file: slices of the caller's bytes. */
typedef struct ox_onyx_view {
    ox_onyx_meta meta;
    const uint8_t *graph;
    size_t graph_bytes;
    const uint8_t *weights;
    size_t weights_bytes;
} ox_onyx_view;

/* True when the bytes start with the file's magic (enough to choose the
 * reader; ox_onyx_parse checks the rest). */
int ox_onyx_sniff(const void *data, size_t size);

/* Checks magic, format version, header checksum, section bounds against
 * size, and both sections' checksums; fails with ONYX_INVALID_MODEL
 * saying which (truncated, corrupted, written by another format
 * version). mapped: data is a read-only file mapping, whose weight pages
 * are dropped once checked (they are read again where a weight is used),
 * so loading keeps resident only what the session touches. */
int ox_onyx_parse(const void *data, size_t size, int mapped, ox_onyx_view *out, ox_error *err);

/* Recomputes the checksums of a file whose header and sections are
 * otherwise in order (after a deliberate change: tests, fuzzing); leaves
 * other bytes alone. Returns -1 when the sections do not fit. */
int ox_onyx_reseal(uint8_t *data, size_t size);

/* Writes m (already optimized) as an optimized file at path, atomically:
 * a temporary file in the same folder, renamed over path when complete. */
int ox_onyx_write(const ir_model *m, const ox_onyx_meta *meta, const char *path, ox_error *err);

/* Writes m as a plain ONNX model at path; weights of at least
 * external_min bytes go to the external-data file `<path's name>.data`
 * beside it (0: every weight inline). Both atomically. */
int ox_onnx_write_file(const ir_model *m, const char *path, size_t external_min, ox_error *err);

#endif
