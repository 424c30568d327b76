#include "loader/nesting.h"

#include <protobuf-c/protobuf-c.h>

#include "loader/wire.h"
#include "onnx.pb-c.h"

/* A field's message descriptor, from protobuf-c's generated tables. */
static const void *descriptor_child(const void *schema, uint64_t number) {
    if (number == 0 || number > UINT32_MAX) return NULL;
    const ProtobufCFieldDescriptor *f =
        protobuf_c_message_descriptor_get_field(schema, (unsigned)number);
    return f && f->type == PROTOBUF_C_TYPE_MESSAGE ? f->descriptor : NULL;
}

int ox_pb_check_nesting(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t size,
                        const char *what, onyx_code code, ox_error *err) {
    int depth = 0;
    if (ox_wire_nesting_depth(desc, descriptor_child, data, size, OX_MAX_MESSAGE_DEPTH, &depth) != 0)
        return 0;
    if (depth <= OX_MAX_MESSAGE_DEPTH) return 0;
    return ox_fail(err, code, "%s nests messages deeper than %d levels%s", what,
                   OX_MAX_MESSAGE_DEPTH,
                   desc == &onnx__model_proto__descriptor
                       ? " (graph -> node -> attribute -> graph ...)"
                       : "");
}
