/* Operator schemas of the text family. */
#include "ops/op.h"

static const ox_op_schema OPS[] = {
    {"", "", 0, -1, 0, 0, 0, 0, NULL}, /* sentinel: never matches (max < min) */
};

const ox_op_table ox_ops_text = {OPS, 0};
