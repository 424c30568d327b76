/* Refusing deeply nested protobuf messages before protobuf-c unpacks them.
 * protobuf-c's unpacker recurses once per nested message with no limit,
 * so a small hostile file (thousands of If bodies nested in each other,
 * or a TypeProto that is a sequence of a sequence of ...) exhausts the
 * stack. The check walks the wire format iteratively, guided by the
 * message descriptors protobuf-c generates, and refuses anything deeper
 * than OX_MAX_MESSAGE_DEPTH (see wire.h for why that limit). */
#ifndef ONYX_LOADER_NESTING_H
#define ONYX_LOADER_NESTING_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"

struct ProtobufCMessageDescriptor;

/* 0 when `data`, read as a message of `desc`, nests at most
 * OX_MAX_MESSAGE_DEPTH levels; -1 with ONYX_INVALID_MODEL naming `what`
 * when deeper. Malformed wire data passes (the unpacker then refuses it,
 * having recursed only through parts this walk already measured). */
int ox_pb_check_nesting(const struct ProtobufCMessageDescriptor *desc, const uint8_t *data,
                        size_t size, const char *what, onyx_code code, ox_error *err);

#endif
