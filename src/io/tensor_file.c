/* Public entry points for reading and writing tensor files. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/status.h"
#include "core/error.h"
#include "core/tensor.h"
#include "io/npy.h"
#include "loader/tensor_proto.h"
#include "loader/wire.h"
#include "onyx.h"

/* Protobuf bytes do not name their message type, and SequenceProto and
 * OptionalProto even share field numbers, so the kind is inferred from
 * the top-level wire fields. The containers only ever carry field 2
 * (elem_type, varint) and length-delimited fields 1 (name), 3, 5 and 7
 * (their values); a TensorProto nearly always has a varint dims field,
 * a fixed-width or varint data field, or a field past 7. */
typedef struct pb_shape {
    int container_like;
    int values;         /* fields 3, 5 and 7 */
    uint64_t elem_type; /* 0 undefined, 1 tensor, 3 sequence, ... */
} pb_shape;

static pb_shape sniff_pb(const unsigned char *p, size_t size) {
    pb_shape s = {1, 0, 0};
    ox_wire_reader r = {p, p, p + size};
    while (r.p < r.end) {
        ox_wire_field f;
        if (ox_wire_next(&r, &f) != 0) goto no;
        if (f.number == 2 && f.wt == 0) {
            ox_wire_reader v = {p, f.payload, f.payload + f.len};
            if (ox_wire_varint(&v, &s.elem_type) != 0) goto no;
        } else if ((f.number == 1 || f.number == 3 || f.number == 5 || f.number == 7) && f.wt == 2) {
            if (f.number != 1) s.values++;
        } else {
            goto no;
        }
    }
    return s;
no:
    s.container_like = 0;
    return s;
}

/* Which container the sniffed fields most plausibly are. In the ONNX
 * suite an empty value with no elem_type is an empty optional and a
 * single nested sequence is an optional's payload; anything else is
 * taken as a sequence (a lone tensor is ambiguous on the wire). */
static ox_kind container_kind(const pb_shape *s) {
    if (s->values == 0) return s->elem_type == 0 ? OX_KIND_OPTIONAL : OX_KIND_SEQUENCE;
    if (s->values == 1 && s->elem_type == 3) return OX_KIND_OPTIONAL;
    return OX_KIND_SEQUENCE;
}

#define KIND_AUTO (-1)

/* kind: the value kind the caller expects, or KIND_AUTO to guess. */
static int read_bytes(const void *data, size_t size, int kind, ox_tensor **out, ox_error *err) {
    *out = NULL;
    if (size == 0) return ox_fail(err, ONYX_INVALID_ARGUMENT, "empty tensor file");
    if (!data) return ox_fail(err, ONYX_INVALID_ARGUMENT, "data is NULL");
    if (size >= OX_NPY_MAGIC_LEN && memcmp(data, OX_NPY_MAGIC, OX_NPY_MAGIC_LEN) == 0) {
        if (kind != KIND_AUTO && kind != OX_KIND_TENSOR)
            return ox_fail(err, ONYX_INVALID_ARGUMENT, ".npy files hold tensors, not sequences or optionals");
        return ox_npy_read(data, size, out, err);
    }
    if (kind != KIND_AUTO) return ox_value_from_pb_bytes(data, size, (ox_kind)kind, out, err);
    /* containers go first: read as a TensorProto, a container's name
     * bytes would pose as dims */
    pb_shape s = sniff_pb(data, size);
    if (s.container_like) {
        /* too deep is final: the tensor reading below would only hide it */
        if (ox_pb_container_check(data, size, err) != 0) return -1;
        if (ox_value_from_pb_bytes(data, size, container_kind(&s), out, err) == 0) return 0;
        *out = NULL;
        ox_error_clear(err);
    }
    if (ox_value_from_pb_bytes(data, size, OX_KIND_TENSOR, out, err) != 0) {
        *out = NULL;
        return -1;
    }
    return 0;
}

/* A failing internal call always sets a code; this guards the public
 * contract (non-NULL on failure) should one ever forget. */
static onyx_status *failure(const ox_error *err) {
    onyx_status *st = ox_status_from_error(err);
    return st ? st : ox_status_new(ONYX_RUNTIME_ERROR, "unknown error reading tensor");
}

static onyx_status *read_as(const void *data, size_t size, int kind, onyx_tensor **out) {
    if (!out) return ox_status_new(ONYX_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    ox_error err;
    ox_error_clear(&err);
    if (read_bytes(data, size, kind, out, &err) != 0) {
        *out = NULL;
        return failure(&err);
    }
    return NULL;
}

/* Reads the whole file with read(2) so a directory or a short read is
 * reported precisely instead of surfacing as a parse error. */
static int slurp(const char *path, unsigned char **out, size_t *out_size, ox_error *err) {
    *out = NULL;
    *out_size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ox_fail(err, ONYX_IO_ERROR, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return ox_fail(err, ONYX_IO_ERROR, "cannot stat '%s': %s", path, strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        return ox_fail(err, ONYX_IO_ERROR, "cannot read '%s': is a directory", path);
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > SIZE_MAX / 2) {
        close(fd);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "'%s' is too large to load", path);
    }
    /* one spare byte lets the read that sees EOF on a regular file land
     * without growing the buffer; pipes and the like grow it as needed */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory reading '%s' (%zu bytes)", path,
                       cap);
    }
    size_t len = 0;
    for (;;) {
        if (len == cap) {
            size_t ncap = cap * 2;
            unsigned char *nb = ncap > cap ? realloc(buf, ncap) : NULL;
            if (!nb) {
                free(buf);
                close(fd);
                return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory reading '%s'", path);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            free(buf);
            close(fd);
            return ox_fail(err, ONYX_IO_ERROR, "cannot read '%s': %s", path, strerror(e));
        }
        if (r == 0) break;
        len += (size_t)r;
    }
    close(fd);
    *out = buf;
    *out_size = len;
    return 0;
}

onyx_status *onyx_tensor_read(const void *data, size_t size, onyx_tensor **out) {
    return read_as(data, size, KIND_AUTO, out);
}

static int valid_kind(onyx_value_kind kind) {
    return kind == ONYX_KIND_TENSOR || kind == ONYX_KIND_SEQUENCE || kind == ONYX_KIND_OPTIONAL;
}

onyx_status *onyx_tensor_read_kind(const void *data, size_t size, onyx_value_kind kind,
                                   onyx_tensor **out) {
    if (!valid_kind(kind)) return ox_status_new(ONYX_INVALID_ARGUMENT, "unknown value kind %d", (int)kind);
    return read_as(data, size, (int)kind, out);
}

static onyx_status *load_as(const char *path, int kind, onyx_tensor **out) {
    if (!out) return ox_status_new(ONYX_INVALID_ARGUMENT, "out is NULL");
    *out = NULL;
    if (!path) return ox_status_new(ONYX_INVALID_ARGUMENT, "path is NULL");
    ox_error err;
    ox_error_clear(&err);
    unsigned char *buf;
    size_t size;
    if (slurp(path, &buf, &size, &err) != 0) return failure(&err);
    int rc = read_bytes(buf, size, kind, out, &err);
    free(buf);
    if (rc != 0) {
        *out = NULL;
        ox_error_prefix(&err, "%s", path);
        return failure(&err);
    }
    return NULL;
}

onyx_status *onyx_tensor_load(const char *path, onyx_tensor **out) {
    return load_as(path, KIND_AUTO, out);
}

onyx_status *onyx_tensor_load_kind(const char *path, onyx_value_kind kind, onyx_tensor **out) {
    if (!valid_kind(kind)) return ox_status_new(ONYX_INVALID_ARGUMENT, "unknown value kind %d", (int)kind);
    return load_as(path, (int)kind, out);
}

onyx_status *onyx_tensor_save_npy(const onyx_tensor *tensor, const char *path) {
    if (!tensor) return ox_status_new(ONYX_INVALID_ARGUMENT, "tensor is NULL");
    if (!path) return ox_status_new(ONYX_INVALID_ARGUMENT, "path is NULL");
    ox_error err;
    ox_error_clear(&err);
    if (ox_npy_write(tensor, path, &err) != 0) {
        /* encoding errors do not name the file; I/O errors already do */
        if (err.code != ONYX_IO_ERROR) ox_error_prefix(&err, "%s", path);
        return failure(&err);
    }
    return NULL;
}
