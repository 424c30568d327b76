#include "runtime/compile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/strmap.h"
#include "format/onyx_file.h"
#include "runtime/session.h"

/* SHA-256 of the file at path; refuses an optimized file as a source. */
static int digest_source(const char *path, uint8_t digest[32], ox_error *err) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ox_fail(err, ONYX_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
        close(fd);
        return ox_fail(err, ONYX_IO_ERROR, "'%s' is not a regular, non-empty file", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return ox_fail(err, ONYX_IO_ERROR, "cannot map '%s': %s", path, strerror(errno));
    int is_onyx = ox_onyx_sniff(map, size);
    if (!is_onyx) ox_sha256_digest(map, size, digest);
    munmap(map, size);
    if (is_onyx)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "'%s' is already an optimized file: compile its source ONNX model", path);
    return 0;
}

int ox_compile_model(onyx_env *env, const char *model_path, const char *out_path,
                     onyx_opt_level level, onyx_model_format format, size_t external_min,
                     ox_error *err) {
    if (format != ONYX_FORMAT_ONYX && format != ONYX_FORMAT_ONNX)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "unknown model format %d", (int)format);
    if (level < ONYX_OPT_NONE || level > ONYX_OPT_ALL)
        return ox_fail(err, ONYX_INVALID_ARGUMENT, "unknown optimization level %d", (int)level);
    ox_onyx_meta meta = {.format_version = OX_ONYX_FORMAT_VERSION, .opt_level = (uint32_t)level};
    if (digest_source(model_path, meta.source_sha256, err) != 0) return -1;
    /* the CPU provider folds constants; portable keeps the graph free of
     * fusions only the CPU runs */
    onyx_session_options opts = {0};
    char cpu[] = "cpu", none[] = "";
    opts.threads = 1;
    opts.n_providers = 1;
    opts.providers[0] = cpu;
    opts.opt_level = level;
    opts.fault_spec = none;
    opts.cache_dir = none;
    opts.portable = 1;
    char *dir = ox_strdup(model_path);
    if (!dir) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    onyx_session *s = NULL;
    int rc = ox_session_create_file(env, model_path, dirname(dir), &opts, &s, err);
    free(dir);
    if (rc != 0) return -1;
    /* the twin says what it is (format/onyx_file.h); the .onyx header does */
    s->model->compiled = 1;
    s->model->compiled_level = (int)level;
    memcpy(s->model->source_sha256, meta.source_sha256, 32);
    rc = format == ONYX_FORMAT_ONYX ? ox_onyx_write(s->model, &meta, out_path, err)
                                    : ox_onnx_write_file(s->model, out_path, external_min, err);
    ox_session_free(s);
    return rc;
}
