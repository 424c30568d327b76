/* Optimized model files: a model optimized once for any provider and
 * saved (src/format/onyx_file.h), as `.onyx` or as an ONNX twin. */
#ifndef ONYX_RUNTIME_COMPILE_H
#define ONYX_RUNTIME_COMPILE_H

#include <stddef.h>

#include "core/error.h"
#include "onyx.h"

/* Loads model_path, optimizes it at `level` for any provider (what the
 * CPU provider alone would gain more is done again when such a session
 * loads the file), infers shapes and writes out_path in `format`. For
 * ONNX, weights of at least external_min bytes go to `out_path.data`
 * (0: all inline). No provider placement is saved. */
int ox_compile_model(onyx_env *env, const char *model_path, const char *out_path,
                     onyx_opt_level level, onyx_model_format format, size_t external_min,
                     ox_error *err);

#endif
