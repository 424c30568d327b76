#include "ir/op_memo.h"

#include <stdio.h>
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

ir_op_lookup ir_op_memo_get(ir_op_memo *m, const ir_node *n) {
    /* length-prefixed, so no two (domain, op) pairs share a key */
    char key[256];
    int len = snprintf(key, sizeof key, "%zu:%s%zu:%s%d", strlen(n->domain), n->domain,
                       strlen(n->op_type), n->op_type, n->opset);
    /* operator names too long for the key are looked up every time */
    if (!m->index || len < 0 || (size_t)len >= sizeof key) return look_up(n);
    int id;
    if (ox_strmap_get(m->index, key, &id)) return m->entries[id];
    ir_op_lookup r = look_up(n);
    (void)remember(m, key, r); /* without memory, the next node looks up again */
    return r;
}
