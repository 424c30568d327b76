#include "format/artefacts.h"

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

#define MAGIC "ONYXPACK"
#define FORMAT 1u
#define HEADER 256u
#define DATA_ALIGN 4096u
#define ENTRY_ALIGN 64u

enum {
    H_VERSION = 8,
    H_HEADER = 12,
    H_KEY = 16,
    H_ENTRIES = 144,
    H_INDEX_OFF = 152,
    H_INDEX_BYTES = 160,
    H_DATA_OFF = 168,
    H_DATA_BYTES = 176,
    H_FILE_BYTES = 184,
    H_INDEX_SUM = 192,
    H_DATA_SUM = 200,
    H_RESERVED = 208,
    H_SUM = 248,
};

typedef struct entry {
    char *name;
    const void *bytes;
    size_t len;
    int used; /* found or added: saved again */
} entry;

struct ox_artefacts {
    char *path;
    char key[OX_ARTEFACT_KEY_BYTES];
    void *map;
    size_t map_size;
    entry *entries;
    size_t n, cap;
    size_t found, added;
};

static int push(ox_artefacts *a, const char *name, const void *bytes, size_t len, int used) {
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        entry *e = realloc(a->entries, cap * sizeof *e);
        if (!e) return -1;
        a->entries = e;
        a->cap = cap;
    }
    char *copy = strdup(name);
    if (!copy) return -1;
    a->entries[a->n++] = (entry){copy, bytes, len, used};
    return 0;
}

/* The file's entries, when every check passes; else a reason. */
static const char *read_entries(ox_artefacts *a, const uint8_t *h, size_t size) {
    if (size < HEADER || memcmp(h, MAGIC, 8) != 0) return "not an artefact file";
    if (ox_get_le32(h + H_VERSION) != FORMAT || ox_get_le32(h + H_HEADER) != HEADER) return "another format version";
    if (ox_checksum64(h, H_SUM) != ox_get_le64(h + H_SUM)) return "corrupted header";
    if (ox_get_le64(h + H_FILE_BYTES) != size) return "truncated or extended";
    for (int i = H_RESERVED; i < H_SUM; i++)
        if (h[i]) return "corrupted header";
    if (memcmp(h + H_KEY, a->key, OX_ARTEFACT_KEY_BYTES) != 0)
        return "written for another model, device or onyx version";
    uint64_t n = ox_get_le64(h + H_ENTRIES), io = ox_get_le64(h + H_INDEX_OFF), ib = ox_get_le64(h + H_INDEX_BYTES);
    uint64_t dof = ox_get_le64(h + H_DATA_OFF), db = ox_get_le64(h + H_DATA_BYTES);
    if (io < HEADER || io > size || ib > size - io || dof % DATA_ALIGN || dof < io + ib || dof > size ||
        db > size - dof || n > ib / 24)
        return "sections do not fit";
    if (ox_checksum64(h + io, ib) != ox_get_le64(h + H_INDEX_SUM) ||
        ox_checksum64_chunked(h + dof, db, ox_drop_mapped_pages, NULL) != ox_get_le64(h + H_DATA_SUM))
        return "corrupted (checksum mismatch)";
    const uint8_t *p = h + io, *end = h + io + ib;
    for (uint64_t i = 0; i < n; i++) {
        if (end - p < 24) return "corrupted index";
        uint32_t nl = ox_get_le32(p);
        uint64_t off = ox_get_le64(p + 8), len = ox_get_le64(p + 16);
        p += 24;
        uint64_t padded = ox_align_up(nl, 8);
        if (nl == 0 || nl > 4096 || (uint64_t)(end - p) < padded || memchr(p, 0, nl) ||
            off % ENTRY_ALIGN || off > db || len > db - off)
            return "corrupted index";
        char name[4097];
        memcpy(name, p, nl);
        name[nl] = 0;
        p += padded;
        if (push(a, name, h + dof + off, (size_t)len, 0) != 0) return "out of memory";
    }
    return NULL;
}

ox_artefacts *ox_artefacts_open(const char *path, const char *key, const char **why) {
    ox_artefacts *a = calloc(1, sizeof *a);
    if (!a || !(a->path = strdup(path))) {
        free(a);
        return NULL;
    }
    snprintf(a->key, sizeof a->key, "%s", key);
    *why = "none yet";
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return a;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        a->map_size = (size_t)st.st_size;
        a->map = mmap(NULL, a->map_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (a->map == MAP_FAILED) a->map = NULL;
    }
    close(fd);
    const char *bad = a->map ? read_entries(a, a->map, a->map_size) : "unreadable";
    if (bad) {
        for (size_t i = 0; i < a->n; i++) free(a->entries[i].name);
        a->n = 0;
        *why = bad;
    } else {
        *why = NULL;
    }
    return a;
}

const void *ox_artefacts_find(ox_artefacts *a, const char *name, size_t len) {
    for (size_t i = 0; a && i < a->n; i++)
        if (strcmp(a->entries[i].name, name) == 0) {
            if (a->entries[i].len != len) return NULL;
            if (!a->entries[i].used) a->found++;
            a->entries[i].used = 1;
            return a->entries[i].bytes;
        }
    return NULL;
}

int ox_artefacts_add(ox_artefacts *a, const char *name, const void *bytes, size_t len) {
    if (!a) return 0;
    /* a stale entry of the same name is replaced */
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->entries[i].name, name) == 0) {
            a->entries[i].bytes = bytes;
            a->entries[i].len = len;
            a->entries[i].used = 1;
            a->added++;
            return 0;
        }
    if (push(a, name, bytes, len, 1) != 0) return -1;
    a->added++;
    return 0;
}

size_t ox_artefacts_found(const ox_artefacts *a) { return a ? a->found : 0; }
size_t ox_artefacts_added(const ox_artefacts *a) { return a ? a->added : 0; }

int ox_artefacts_save(ox_artefacts *a, ox_error *err) {
    if (!a || a->added == 0) return 0;
    char *dir = strdup(a->path);
    if (!dir) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    int made = !slash || ox_mkdir_p(dir) == 0;
    free(dir);
    if (!made) return ox_fail(err, ONYX_IO_ERROR, "cannot make the folder of '%s'", a->path);
    /* the index, then each used entry at its aligned offset */
    uint64_t ib = 0, db = 0, n = 0;
    for (size_t i = 0; i < a->n; i++) {
        if (!a->entries[i].used) continue;
        n++;
        ib += 24 + ox_align_up(strlen(a->entries[i].name), 8);
        db = ox_align_up(db, ENTRY_ALIGN) + a->entries[i].len;
    }
    uint8_t *index = calloc(1, ib ? ib : 1);
    if (!index) return ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory");
    ox_temp_file t;
    if (ox_temp_open(&t, a->path, err) != 0) {
        free(index);
        return -1;
    }
    uint64_t io = HEADER, dof = ox_align_up(io + ib, DATA_ALIGN), at = 0;
    uint8_t *p = index;
    int rc = 0;
    for (size_t i = 0; i < a->n && rc == 0; i++) {
        entry *e = &a->entries[i];
        if (!e->used) continue;
        size_t nl = strlen(e->name);
        at = ox_align_up(at, ENTRY_ALIGN);
        ox_put_le32(p, (uint32_t)nl);
        ox_put_le64(p + 8, at);
        ox_put_le64(p + 16, e->len);
        memcpy(p + 24, e->name, nl);
        p += 24 + ox_align_up(nl, 8);
        rc = ox_temp_write_at(&t, e->bytes, e->len, dof + at, err);
        at += e->len;
    }
    uint64_t size = dof + db;
    uint8_t h[HEADER] = {0};
    if (rc == 0) rc = ox_temp_write_at(&t, index, ib, io, err);
    if (rc == 0 && ftruncate(t.fd, (off_t)size) != 0)
        rc = ox_fail(err, ONYX_IO_ERROR, "cannot size '%s'", a->path);
    void *map = rc == 0 ? mmap(NULL, size, PROT_READ, MAP_SHARED, t.fd, 0) : MAP_FAILED;
    if (rc == 0 && map == MAP_FAILED) rc = ox_fail(err, ONYX_IO_ERROR, "cannot map '%s'", a->path);
    if (rc == 0) {
        memcpy(h, MAGIC, 8);
        ox_put_le32(h + H_VERSION, FORMAT);
        ox_put_le32(h + H_HEADER, HEADER);
        memcpy(h + H_KEY, a->key, OX_ARTEFACT_KEY_BYTES);
        ox_put_le64(h + H_ENTRIES, n);
        ox_put_le64(h + H_INDEX_OFF, io);
        ox_put_le64(h + H_INDEX_BYTES, ib);
        ox_put_le64(h + H_DATA_OFF, dof);
        ox_put_le64(h + H_DATA_BYTES, db);
        ox_put_le64(h + H_FILE_BYTES, size);
        ox_put_le64(h + H_INDEX_SUM, ox_checksum64(index, ib));
        /* the new file's pages are only read to sum them */
        ox_put_le64(h + H_DATA_SUM, ox_checksum64_chunked((const uint8_t *)map + dof, db, ox_drop_mapped_pages, NULL));
        ox_put_le64(h + H_SUM, ox_checksum64(h, H_SUM));
        munmap(map, size);
        rc = ox_temp_write_at(&t, h, sizeof h, 0, err);
    }
    free(index);
    if (rc != 0) {
        ox_temp_discard(&t);
        return -1;
    }
    return ox_temp_commit(&t, err);
}

void ox_artefacts_free(ox_artefacts *a) {
    if (!a) return;
    for (size_t i = 0; i < a->n; i++) free(a->entries[i].name);
    free(a->entries);
    if (a->map) munmap(a->map, a->map_size);
    free(a->path);
    free(a);
}
