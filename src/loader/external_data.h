/* Reading a tensor's external data safely. A model file is untrusted: its
 * external-data locations may try to reach files outside the model's
 * folder (`..`, absolute paths, symbolic links to files or folders
 * elsewhere) or name things that are not files at all (a FIFO would block
 * a plain open forever, a directory reads as garbage). Every external-data
 * read in onyx (initializers, node tensor attributes, tensors inside
 * subgraphs) goes through ox_external_open, which admits only a regular
 * file whose real path lies inside the real path of the external-data
 * folder. */
#ifndef ONYX_LOADER_EXTERNAL_DATA_H
#define ONYX_LOADER_EXTERNAL_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* A tensor's TensorProto.external_data entries, parsed. */
typedef struct ox_external_ref {
    const char *tensor;   /* tensor name, for messages */
    const char *location; /* relative to the external-data folder */
    int64_t offset;       /* 0 when not given */
    int64_t length;       /* -1 when not given */
} ox_external_ref;

/* An opened, checked external-data file. */
typedef struct ox_external_file {
    int fd;
    int64_t size; /* st_size of the opened descriptor */
} ox_external_file;

/* Opens ref's file under base_dir and checks that `nbytes` bytes at
 * ref->offset lie inside it (and match ref->length when given). Fails
 * with ONYX_INVALID_MODEL (location absolute, outside the folder, not a
 * regular file, length mismatch), ONYX_INVALID_ARGUMENT (base_dir NULL)
 * or ONYX_IO_ERROR (missing or too short); each message names the tensor
 * and the location. On success the caller reads with ox_external_read and
 * closes with ox_external_close. */
int ox_external_open(const ox_external_ref *ref, const char *base_dir, size_t nbytes,
                     ox_external_file *f, ox_error *err);

/* Reads nbytes at ref->offset into dst (pread, retried on short reads). */
int ox_external_read(const ox_external_ref *ref, const ox_external_file *f, void *dst,
                     size_t nbytes, ox_error *err);

void ox_external_close(ox_external_file *f);

#endif
