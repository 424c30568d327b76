/* The per-device artefact file: what a session computed from an
 * optimized model for this machine and can reuse next time (today the
 * CPU provider's prepacked convolution weights), in the cache folder.
 *
 * A file is written for one key (the source model's SHA-256, the
 * optimization level, the CPU's kernel variant, onyx's version: see
 * session.c) and holds named entries, each 64-byte aligned. It is
 * mapped read-only and its entries are used in place. A file that is
 * missing, short, corrupted (checksums), written for another key or by
 * another format is ignored, never trusted: the session computes what it
 * needs again and the file is rewritten, atomically.
 *
 * Layout (little-endian): a 256-byte header
 *   0 magic "ONYXPACK" | 8 format version u32 | 12 header size u32 (256)
 *   | 16 key, 128 bytes NUL-padded | 144 entries u64 | 152 index offset
 *   | 160 index bytes | 168 data offset | 176 data bytes | 184 file bytes
 *   | 192 index checksum | 200 data checksum | 208..247 zero
 *   | 248 header checksum (of bytes 0..247)
 * then the index (per entry: name length u32, zero u32, offset u64 from
 * the data section, length u64, the name padded to 8 bytes), then the
 * data section at a page boundary. Checksums are ox_checksum64. */
#ifndef ONYX_FORMAT_ARTEFACTS_H
#define ONYX_FORMAT_ARTEFACTS_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

#define OX_ARTEFACT_KEY_BYTES 128

typedef struct ox_artefacts ox_artefacts;

/* The artefacts of path for key: the file's entries when it is valid for
 * key, else none (*why says what was wrong, or "none yet"). NULL only when
 * out of memory. */
ox_artefacts *ox_artefacts_open(const char *path, const char *key, const char **why);
/* Entry `name` when the file holds it with exactly len bytes; NULL
 * otherwise. Valid while the artefacts live. */
const void *ox_artefacts_find(ox_artefacts *a, const char *name, size_t len);
/* Records bytes to save under name (borrowed: they must stay valid until
 * ox_artefacts_save). A later find of the same name counts as used. */
int ox_artefacts_add(ox_artefacts *a, const char *name, const void *bytes, size_t len);
/* Entries found in the file / added this time. */
size_t ox_artefacts_found(const ox_artefacts *a);
size_t ox_artefacts_added(const ox_artefacts *a);
/* When something was added: writes every found and added entry to the
 * path (folder made if needed), atomically. 0 when nothing needed
 * writing. */
int ox_artefacts_save(ox_artefacts *a, ox_error *err);
void ox_artefacts_free(ox_artefacts *a);

#endif
