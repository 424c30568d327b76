/* Operator schema lookups remembered for one pass over a graph: a graph
 * of a million nodes has a few dozen distinct operators, and each lookup
 * scans the registry's tables. */
#ifndef ONYX_IR_OP_MEMO_H
#define ONYX_IR_OP_MEMO_H

#include "ir/ir.h"
#include "ops/attr_table.h"
#include "ops/op.h"

typedef struct ir_op_lookup {
    const ox_op_schema *op;       /* ox_op_find at the node's opset, or NULL */
    const ox_attr_schema *attrs;  /* ox_attr_schema_find likewise, or NULL */
} ir_op_lookup;

typedef struct ir_op_memo {
    void *index; /* ox_strmap: domain, op and opset -> entry */
    ir_op_lookup *entries;
    int n, cap;
} ir_op_memo;

int ir_op_memo_init(ir_op_memo *m);
void ir_op_memo_free(ir_op_memo *m);
/* The node's lookups, from the memo when its operator was seen before.
 * Never fails: without memory it looks up directly. */
ir_op_lookup ir_op_memo_get(ir_op_memo *m, const ir_node *n);

#endif
