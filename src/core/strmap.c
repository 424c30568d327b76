#include "core/strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct slot {
    char *key;
    int value;
} slot;

struct ox_strmap {
    slot *slots;
    size_t cap; /* power of two */
    size_t size;
};

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ULL; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

char *ox_strdup(const char *s) {
    if (!s) return NULL;
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

ox_strmap *ox_strmap_new(void) {
    ox_strmap *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->cap = 16;
    m->slots = calloc(m->cap, sizeof *m->slots);
    if (!m->slots) {
        free(m);
        return NULL;
    }
    return m;
}

void ox_strmap_free(ox_strmap *m) {
    if (!m) return;
    for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
    free(m->slots);
    free(m);
}

static slot *find_slot(slot *slots, size_t cap, const char *key) {
    size_t i = hash_str(key) & (cap - 1);
    while (slots[i].key && strcmp(slots[i].key, key) != 0) i = (i + 1) & (cap - 1);
    return &slots[i];
}

static int grow(ox_strmap *m) {
    size_t ncap = m->cap * 2;
    slot *ns = calloc(ncap, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key) *find_slot(ns, ncap, m->slots[i].key) = m->slots[i];
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    return 0;
}

int ox_strmap_put(ox_strmap *m, const char *key, int value) {
    if ((m->size + 1) * 2 > m->cap && grow(m) != 0) return -1;
    slot *s = find_slot(m->slots, m->cap, key);
    if (!s->key) {
        s->key = ox_strdup(key);
        if (!s->key) return -1;
        m->size++;
    }
    s->value = value;
    return 0;
}

int ox_strmap_get(const ox_strmap *m, const char *key, int *value) {
    slot *s = find_slot(m->slots, m->cap, key);
    if (!s->key) return 0;
    if (value) *value = s->value;
    return 1;
}
