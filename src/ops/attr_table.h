/* Attribute names and types of every ONNX operator version (generated
 * table, see tools/gen/gen_op_attrs.py). */
#ifndef ONYX_OPS_ATTR_TABLE_H
#define ONYX_OPS_ATTR_TABLE_H

typedef struct ox_attr_schema {
    const char *domain;
    const char *op;
    int since_version;
    int deprecated;
    const char *attrs; /* "name:type,name:type" with ir_attr_type codes */
} ox_attr_schema;

extern const ox_attr_schema OX_ATTR_SCHEMAS[];
extern const int OX_ATTR_SCHEMA_COUNT;

/* The schema version in force for op at opset, or NULL. */
const ox_attr_schema *ox_attr_schema_find(const char *domain, const char *op, int opset);

#endif
