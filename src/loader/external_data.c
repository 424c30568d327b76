#include "loader/external_data.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/checked.h"

static const char *tensor_label(const ox_external_ref *ref) {
    return ref->tensor && ref->tensor[0] ? ref->tensor : "<unnamed>";
}

static int outside(const ox_external_ref *ref, ox_error *err) {
    return ox_fail(err, ONYX_INVALID_MODEL,
                   "tensor '%s': external data location '%s' resolves outside the model folder "
                   "(it leaves the model folder through '..' or a symbolic link)",
                   tensor_label(ref), ref->location);
}

/* Walks the location's components: a `..` that would climb above the
 * folder is refused before the file system is asked anything, so even a
 * location naming a file that does not exist cannot probe outside. Only
 * whole components count: `a..b` is an ordinary name. */
static int lexically_inside(const char *location) {
    long depth = 0;
    const char *p = location;
    while (*p) {
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (n == 2 && p[0] == '.' && p[1] == '.') {
            if (--depth < 0) return 0;
        } else if (!(n == 0 || (n == 1 && p[0] == '.'))) {
            depth++;
        }
        p += n;
        if (*p == '/') p++;
    }
    return 1;
}

/* Component-wise containment of real paths: "/m/dir2" is not inside
 * "/m/dir", "/m/dir/x" is. */
static int path_inside(const char *root, const char *path) {
    size_t rl = strlen(root);
    if (rl == 1 && root[0] == '/') return path[0] == '/';
    return strncmp(path, root, rl) == 0 && (path[rl] == '/' || path[rl] == '\0');
}

/* The real path of base_dir/location; *real is malloc'd. */
static int resolve(const ox_external_ref *ref, const char *base_dir, char **root_out,
                   char **real_out, ox_error *err) {
    *root_out = *real_out = NULL;
    char *root = realpath(base_dir, NULL);
    if (!root)
        return ox_fail(err, ONYX_IO_ERROR,
                       "tensor '%s': cannot resolve the external data folder '%s' (location '%s'): %s",
                       tensor_label(ref), base_dir, ref->location, strerror(errno));
    size_t n = strlen(root) + strlen(ref->location) + 2;
    char *joined = malloc(n);
    if (!joined) {
        free(root);
        return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    }
    snprintf(joined, n, "%s/%s", root, ref->location);
    char *real = realpath(joined, NULL);
    int e = errno;
    free(joined);
    if (!real) {
        free(root);
        return ox_fail(err, ONYX_IO_ERROR,
                       "tensor '%s': cannot open external data file '%s' in '%s': %s",
                       tensor_label(ref), ref->location, base_dir, strerror(e));
    }
    *root_out = root;
    *real_out = real;
    return 0;
}

static int not_regular(const ox_external_ref *ref, ox_error *err) {
    return ox_fail(err, ONYX_INVALID_MODEL,
                   "tensor '%s': external data location '%s' is not a regular file", tensor_label(ref),
                   ref->location);
}

/* Opens the checked real path without following a final symbolic link
 * and without blocking (a FIFO swapped in would otherwise wait for a
 * writer), then requires the descriptor to be the regular file that was
 * checked: a swap between the check and the open is refused. */
static int open_checked(const ox_external_ref *ref, const char *real, ox_external_file *f,
                        ox_error *err) {
    struct stat before, st;
    if (stat(real, &before) != 0)
        return ox_fail(err, ONYX_IO_ERROR, "tensor '%s': cannot open external data file '%s': %s",
                       tensor_label(ref), ref->location, strerror(errno));
    if (!S_ISREG(before.st_mode)) return not_regular(ref, err);
    int fd = open(real, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) {
        if (errno == ELOOP) return outside(ref, err);
        return ox_fail(err, ONYX_IO_ERROR, "tensor '%s': cannot open external data file '%s': %s",
                       tensor_label(ref), ref->location, strerror(errno));
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_dev != before.st_dev ||
        st.st_ino != before.st_ino) {
        close(fd);
        return not_regular(ref, err);
    }
    f->fd = fd;
    f->size = (int64_t)st.st_size;
    return 0;
}

/* offset + nbytes must lie inside the file, in checked arithmetic. */
static int check_extent(const ox_external_ref *ref, const ox_external_file *f, size_t nbytes,
                        ox_error *err) {
    int64_t end;
    if ((uint64_t)nbytes > (uint64_t)INT64_MAX || !ox_add_i64(ref->offset, (int64_t)nbytes, &end) ||
        end > f->size)
        return ox_fail(err, ONYX_IO_ERROR,
                       "tensor '%s': external data file '%s' is too short for %zu bytes at offset "
                       "%lld (it has %lld bytes)",
                       tensor_label(ref), ref->location, nbytes, (long long)ref->offset,
                       (long long)f->size);
    return 0;
}

int ox_external_open(const ox_external_ref *ref, const char *base_dir, size_t nbytes,
                     ox_external_file *f, ox_error *err) {
    f->fd = -1;
    f->size = 0;
    if (!ref->location || !ref->location[0])
        return ox_fail(err, ONYX_INVALID_MODEL, "tensor '%s': external data without a location",
                       tensor_label(ref));
    if (!base_dir)
        return ox_fail(err, ONYX_INVALID_ARGUMENT,
                       "tensor '%s' keeps its data in external file '%s', but the model was "
                       "loaded from memory with no external data folder: set one with "
                       "onyx_session_options_set_external_data_dir",
                       tensor_label(ref), ref->location);
    if (ref->location[0] == '/')
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "tensor '%s': external data location '%s' is an absolute path (it must be "
                       "relative to the model folder)",
                       tensor_label(ref), ref->location);
    if (!lexically_inside(ref->location)) return outside(ref, err);
    if (ref->length >= 0 && (uint64_t)ref->length != (uint64_t)nbytes)
        return ox_fail(err, ONYX_INVALID_MODEL,
                       "tensor '%s': external data length %lld does not match its shape (%zu bytes)",
                       tensor_label(ref), (long long)ref->length, nbytes);
    char *root, *real;
    if (resolve(ref, base_dir, &root, &real, err) != 0) return -1;
    int rc = path_inside(root, real) ? open_checked(ref, real, f, err) : outside(ref, err);
    free(root);
    free(real);
    if (rc == 0 && check_extent(ref, f, nbytes, err) != 0) {
        ox_external_close(f);
        return -1;
    }
    return rc;
}

int ox_external_read(const ox_external_ref *ref, const ox_external_file *f, void *dst,
                     size_t nbytes, ox_error *err) {
    uint8_t *p = dst;
    size_t done = 0;
    while (done < nbytes) {
        size_t chunk = nbytes - done;
        if (chunk > (size_t)1 << 30) chunk = (size_t)1 << 30;
        ssize_t r = pread(f->fd, p + done, chunk, (off_t)(ref->offset + (int64_t)done));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0)
            return ox_fail(err, ONYX_IO_ERROR,
                           "tensor '%s': cannot read %zu bytes at offset %lld of external data "
                           "file '%s': %s",
                           tensor_label(ref), nbytes, (long long)ref->offset, ref->location,
                           r < 0 ? strerror(errno) : "unexpected end of file");
        done += (size_t)r;
    }
    return 0;
}

void ox_external_close(ox_external_file *f) {
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
}
