#include "ir/op_memo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

int ir_op_memo_init(ir_op_memo *m) {
    m->index = ox_strmap_new();
    m->entries = NULL;
    m->n = m->cap = 0;
    return m->index ? 0 : -1;
}

void ir_op_memo_free(ir_op_memo *m) {
    ox_strmap_free(m->index);
    free(m->entries);
    m->index = NULL;
    m->entries = NULL;
}

static ir_op_lookup look_up(const ir_node *n) {
    ir_op_lookup r = {ox_op_find(n->domain, n->op_type, n->opset),
                      ox_attr_schema_find(n->domain, n->op_type, n->opset)};
    return r;
}

static int remember(ir_op_memo *m, const char *key, ir_op_lookup r) {
    if (m->n == m->cap) {
        int cap = m->cap ? m->cap * 2 : 32;
        ir_op_lookup *ne = realloc(m->entries, (size_t)cap * sizeof *ne);
        if (!ne) return -1;
        m->entries = ne;
        m->cap = cap;
    }
    if (ox_strmap_put(m->index, key, m->n) != 0) return -1;
    m->entries[m->n++] = r;
    return 0;
}

/* Decimal digits of v at p; returns the end. */
static char *put_decimal(char *p, size_t v) {
    char digits[24];
    int n = 0;
    do digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) != 0);
    while (n) *p++ = digits[--n];
    return p;
}

/* "<len>:<domain><len>:<op><opset>": length-prefixed, so no two (domain,
 * op) pairs share a key; written by hand since every node of every
 * inference and validation pass makes one. -1 when it does not fit. */
static int memo_key(char *key, size_t size, const ir_node *n) {
    size_t ld = strlen(n->domain), lo = strlen(n->op_type);
    if (ld + lo + 3 * 24 > size) return -1;
    char *p = put_decimal(key, ld);
    *p++ = ':';
    memcpy(p, n->domain, ld);
    p = put_decimal(p + ld, lo);
    *p++ = ':';
    memcpy(p, n->op_type, lo);
    p += lo;
    if (n->opset < 0) *p++ = '-';
    p = put_decimal(p, n->opset < 0 ? (size_t)-(int64_t)n->opset : (size_t)n->opset);
    *p = '\0';
    return (int)(p - key);
}

ir_op_lookup ir_op_memo_get(ir_op_memo *m, const ir_node *n) {
    char key[256];
    /* operator names too long for the key are looked up every time */
    if (!m->index || memo_key(key, sizeof key, n) < 0) return look_up(n);
    int id;
    if (ox_strmap_get(m->index, key, &id)) return m->entries[id];
    ir_op_lookup r = look_up(n);
    (void)remember(m, key, r); /* without memory, the next node looks up again */
    return r;
}
