/* Run-time memory of a session: the arenas runs take their planned
 * intermediates from, kept between runs so steady-state runs do not
 * allocate, and the account every run-time allocation is reserved
 * against (the session's memory limit). Idle arenas stay counted: they
 * are memory the session holds; when the limit is in the way they are
 * the first thing given up. */
#include <stdlib.h>

#include "runtime/session.h"

/* Idle arenas kept per graph: one per concurrent run is typical. */
#define OX_IDLE_ARENAS 4

void ox_arena_free_idle(onyx_session *s, ox_graph_exec *ge) {
    pthread_mutex_lock(&ge->arena_lock);
    ox_arena *list = ge->free_arenas;
    ge->free_arenas = NULL;
    pthread_mutex_unlock(&ge->arena_lock);
    for (ox_arena *a = list, *next; a; a = next) {
        next = a->next;
        ox_mem_unreserve(&s->mem, a->size);
        free(a->data);
        free(a);
    }
}

void ox_session_trim(onyx_session *s) {
    if (s->main.graph) ox_arena_free_idle(s, &s->main);
    for (int i = 0; i < s->n_subs; i++)
        if (s->subs[i]->graph) ox_arena_free_idle(s, s->subs[i]);
}

int ox_session_reserve(onyx_session *s, size_t bytes, ox_error *err) {
    if (ox_mem_reserve(&s->mem, bytes, NULL) == 0) return 0;
    ox_session_trim(s);
    return ox_mem_reserve(&s->mem, bytes, err);
}

int ox_session_charge_value(onyx_session *s, ox_tensor *value, ox_error *err) {
    size_t bytes = ox_value_charge_bytes(value);
    if (ox_session_reserve(s, bytes, err) != 0) return -1;
    ox_value_attach_charge(value, &s->mem);
    return 0;
}

void *ox_arena_take(onyx_session *s, ox_graph_exec *ge, size_t size, size_t *got, ox_error *err) {
    pthread_mutex_lock(&ge->arena_lock);
    ox_arena **pp = &ge->free_arenas;
    while (*pp && (*pp)->size < size) pp = &(*pp)->next;
    ox_arena *a = *pp;
    if (a) *pp = a->next;
    pthread_mutex_unlock(&ge->arena_lock);
    if (a) { /* already counted while it was idle */
        void *d = a->data;
        *got = a->size;
        free(a);
        return d;
    }
    size_t bytes = size ? size : 64;
    if (ox_session_reserve(s, bytes, err) != 0) return NULL;
    void *d = NULL;
    if (posix_memalign(&d, 64, bytes) != 0) {
        ox_mem_unreserve(&s->mem, bytes);
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory for a %zu-byte arena", size);
        return NULL;
    }
    *got = bytes;
    return d;
}

void ox_arena_give(onyx_session *s, ox_graph_exec *ge, void *data, size_t size) {
    if (!data) return;
    ox_arena *a = malloc(sizeof *a);
    if (a) {
        a->data = data;
        a->size = size;
        pthread_mutex_lock(&ge->arena_lock);
        int n = 0;
        for (ox_arena *it = ge->free_arenas; it; it = it->next) n++;
        if (n < OX_IDLE_ARENAS) {
            a->next = ge->free_arenas;
            ge->free_arenas = a;
            a = NULL;
            data = NULL;
        }
        pthread_mutex_unlock(&ge->arena_lock);
    }
    free(a);
    if (data) {
        ox_mem_unreserve(&s->mem, size);
        free(data);
    }
}
