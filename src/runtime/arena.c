/* Run-time memory of a session: the arenas runs take their planned
 * intermediates from (host memory, and device memory from providers with
 * device arenas), kept between runs so steady-state runs do not
 * allocate, and the account every run-time allocation is reserved
 * against (the session's memory limit). Idle arenas stay counted: they
 * are memory the session holds; when the limit is in the way they are
 * the first thing given up. */
#include <stdlib.h>

#include "runtime/session.h"

/* Idle arenas kept per graph: one per concurrent run is typical. */
#define OX_IDLE_ARENAS 4

/* Frees one arena's memory: host memory, or its provider's device block. */
static void arena_release(onyx_session *s, int ep, void *data) {
    if (ep < 0)
        free(data);
    else
        s->eps[ep]->ops->arena_free(s->eps[ep], data);
}

/* Frees the idle arenas of ge that `which` selects (every one when
 * all_eps), giving back their bytes. */
static void free_idle(onyx_session *s, ox_graph_exec *ge, int all_eps, int ep) {
    pthread_mutex_lock(&ge->arena_lock);
    ox_arena *list = NULL;
    for (ox_arena **pp = &ge->free_arenas; *pp;) {
        ox_arena *a = *pp;
        if (all_eps || a->ep == ep) {
            *pp = a->next;
            a->next = list;
            list = a;
        } else {
            pp = &a->next;
        }
    }
    pthread_mutex_unlock(&ge->arena_lock);
    for (ox_arena *a = list, *next; a; a = next) {
        next = a->next;
        ox_mem_unreserve(&s->mem, a->size);
        arena_release(s, a->ep, a->data);
        free(a);
    }
}

void ox_arena_free_idle(onyx_session *s, ox_graph_exec *ge) { free_idle(s, ge, 1, 0); }

void ox_arena_free_idle_ep(onyx_session *s, ox_graph_exec *ge, int ep) { free_idle(s, ge, 0, ep); }

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

void *ox_arena_take(onyx_session *s, ox_graph_exec *ge, int ep, void *stream, size_t size,
                    size_t *got, ox_error *err) {
    pthread_mutex_lock(&ge->arena_lock);
    ox_arena **pp = &ge->free_arenas;
    while (*pp && ((*pp)->ep != ep || (*pp)->size < size)) pp = &(*pp)->next;
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
    if (ep >= 0) {
        d = s->eps[ep]->ops->arena_new(s->eps[ep], stream, bytes, err);
        if (!d) ox_mem_unreserve(&s->mem, bytes);
    } else if (posix_memalign(&d, 64, bytes) != 0) {
        d = NULL;
        ox_mem_unreserve(&s->mem, bytes);
        ox_fail(err, ONYX_OUT_OF_MEMORY, "out of memory for a %zu-byte arena", size);
    }
    if (d) *got = bytes;
    return d;
}

void ox_arena_give(onyx_session *s, ox_graph_exec *ge, int ep, void *data, size_t size) {
    if (!data) return;
    ox_arena *a = malloc(sizeof *a);
    if (a) {
        a->data = data;
        a->size = size;
        a->ep = ep;
        pthread_mutex_lock(&ge->arena_lock);
        int n = 0;
        for (ox_arena *it = ge->free_arenas; it; it = it->next) n += it->ep == ep;
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
        arena_release(s, ep, data);
    }
}

void ox_arena_destroy_idle(onyx_session *s, ox_graph_exec *ge) {
    for (ox_arena *a = ge->free_arenas, *next; a; a = next) {
        next = a->next;
        arena_release(s, a->ep, a->data);
        free(a);
    }
    ge->free_arenas = NULL;
}
