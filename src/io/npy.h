/* NumPy .npy files: the format the CLI and tests use to exchange tensors
 * with Python without depending on protobuf on the other side. */
#ifndef ONYX_IO_NPY_H
#define ONYX_IO_NPY_H

#include <stddef.h>

#include "core/error.h"
#include "core/tensor.h"

#define OX_NPY_MAGIC "\x93NUMPY"
#define OX_NPY_MAGIC_LEN 6

/* Parses a whole .npy image (any of versions 1.0, 2.0 and 3.0). Data in
 * either byte order and in Fortran order is converted to a native,
 * C-ordered tensor that owns its storage. Unicode arrays ('<U{n}') become
 * string tensors (UTF-8, each ending at its first NUL); 'V1'/'V2' records
 * (ml_dtypes' bfloat16, float8, int4...) read as uint8/uint16 bits. */
int ox_npy_read(const void *data, size_t size, ox_tensor **out, ox_error *err);

/* Serialises a dense tensor as a version 1.0 image in a malloc'd buffer
 * the caller frees. float16 is '<f2', bfloat16 its raw bits as '<u2',
 * strings '<U{n}' (UTF-32LE), the narrow types one byte per element (see
 * onyx_tensor_save_npy in onyx.h). */
int ox_npy_encode(const ox_tensor *t, void **out, size_t *out_size, ox_error *err);

/* ox_npy_encode written to path; a partial file is removed on failure. */
int ox_npy_write(const ox_tensor *t, const char *path, ox_error *err);

#endif
