#include "core/files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int ox_mkdir_p(const char *dir) {
    char *p = strdup(dir);
    if (!p) return -1;
    for (char *c = p + 1; *c; c++) {
        if (*c != '/') continue;
        *c = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            free(p);
            return -1;
        }
        *c = '/';
    }
    int r = mkdir(p, 0755) != 0 && errno != EEXIST ? -1 : 0;
    free(p);
    return r;
}

char *ox_cache_dir_resolve(const char *option) {
    const char *dir = option ? option : getenv("ONYX_CACHE_DIR");
    char buf[4096];
    if (!dir) {
        const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
        int n;
        if (xdg && xdg[0] == '/') n = snprintf(buf, sizeof buf, "%s/onyx", xdg);
        else if (home && home[0] == '/') n = snprintf(buf, sizeof buf, "%s/.cache/onyx", home);
        else return NULL;
        if (n < 0 || (size_t)n >= sizeof buf) return NULL;
        dir = buf;
    }
    return dir[0] ? strdup(dir) : NULL;
}

int ox_temp_open(ox_temp_file *t, const char *path, ox_error *err) {
    t->path = path;
    t->fd = -1;
    size_t n = strlen(path) + sizeof ".XXXXXX";
    t->tmp = malloc(n);
    if (!t->tmp) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    snprintf(t->tmp, n, "%s.XXXXXX", path);
    t->fd = mkstemp(t->tmp);
    if (t->fd < 0) {
        int e = errno;
        free(t->tmp);
        t->tmp = NULL;
        return ox_fail(err, ONYX_IO_ERROR, "cannot create '%s': %s", path, strerror(e));
    }
    (void)fchmod(t->fd, 0644); /* mkstemp makes 0600; models and caches are for others to read */
    return 0;
}

int ox_temp_write_at(ox_temp_file *t, const void *data, size_t len, uint64_t off, ox_error *err) {
    const unsigned char *p = data;
    while (len) {
        ssize_t n = pwrite(t->fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return ox_fail(err, ONYX_IO_ERROR, "cannot write '%s': %s", t->path,
                           n < 0 ? strerror(errno) : "no progress");
        p += n;
        len -= (size_t)n;
        off += (uint64_t)n;
    }
    return 0;
}

int ox_temp_commit(ox_temp_file *t, ox_error *err) {
    int rc = 0;
    if (close(t->fd) != 0) rc = ox_fail(err, ONYX_IO_ERROR, "cannot write '%s': %s", t->path, strerror(errno));
    t->fd = -1;
    if (rc == 0 && rename(t->tmp, t->path) != 0)
        rc = ox_fail(err, ONYX_IO_ERROR, "cannot rename into '%s': %s", t->path, strerror(errno));
    if (rc != 0) unlink(t->tmp);
    free(t->tmp);
    t->tmp = NULL;
    return rc;
}

void ox_temp_discard(ox_temp_file *t) {
    if (t->fd >= 0) close(t->fd);
    t->fd = -1;
    if (t->tmp) {
        unlink(t->tmp);
        free(t->tmp);
        t->tmp = NULL;
    }
}

void ox_drop_mapped_pages(const void *p, size_t n, void *user) {
    (void)user;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return;
    uintptr_t b = ((uintptr_t)p + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    uintptr_t e = ((uintptr_t)p + n) & ~((uintptr_t)page - 1);
    if (e > b) madvise((void *)b, e - b, MADV_DONTNEED);
}
