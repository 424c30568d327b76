/* File-system helpers the library shares: folders made on demand, the
 * cache folder's location, and files replaced atomically (written to a
 * temporary file beside the target, renamed over it when complete, so a
 * reader in another process never sees half a file). */
#ifndef ONYX_CORE_FILES_H
#define ONYX_CORE_FILES_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

/* mkdir -p with mode 0755; 0 when the folder exists afterwards, else -1
 * with errno set. */
int ox_mkdir_p(const char *dir);

/* The cache folder: the option when given, else $ONYX_CACHE_DIR, else
 * $XDG_CACHE_HOME/onyx, else $HOME/.cache/onyx. NULL when it resolves to
 * "" (caching off) or nothing; malloc'd otherwise. Not created here. */
char *ox_cache_dir_resolve(const char *option);

/* Drops the whole pages inside [p, p + n) of a read-only file mapping
 * from this process's resident memory (MADV_DONTNEED): a later read
 * brings them back from the page cache. Never on anonymous or written
 * memory, whose contents it would lose. The signature serves as
 * ox_checksum64_chunked's `after` (user unused). */
void ox_drop_mapped_pages(const void *p, size_t n, void *user);

/* A temporary file beside `path`, to be committed over it. */
typedef struct ox_temp_file {
    const char *path; /* the final path (borrowed) */
    char *tmp;        /* NULL once committed or discarded */
    int fd;
} ox_temp_file;

/* Creates the temporary file (mode 0644); ONYX_IO_ERROR on failure. */
int ox_temp_open(ox_temp_file *t, const char *path, ox_error *err);
/* pwrite of len bytes at off, retried until complete. */
int ox_temp_write_at(ox_temp_file *t, const void *data, size_t len, uint64_t off, ox_error *err);
/* Closes and renames over the final path (the temporary is removed on
 * failure). */
int ox_temp_commit(ox_temp_file *t, ox_error *err);
/* Closes and removes; safe on a zeroed or already finished file with
 * fd -1. */
void ox_temp_discard(ox_temp_file *t);

#endif
