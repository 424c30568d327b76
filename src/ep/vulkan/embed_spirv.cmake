# Writes a SPIR-V binary as a C array of 32-bit words:
#   cmake -DSPV=in.spv -DOUT=out.c -DNAME=name -P embed_spirv.cmake
# defines ox_vk_spv_<name> and ox_vk_spv_<name>_size (bytes). glslc writes
# the words little endian; they become values here, so the array holds the
# same words on a host of either byte order.
file(READ ${SPV} hex HEX)
string(LENGTH "${hex}" len)
math(EXPR rem "${len} % 8")
if(len EQUAL 0 OR NOT rem EQUAL 0)
  message(FATAL_ERROR "${SPV}: not a SPIR-V module (${len} hex digits)")
endif()
math(EXPR bytes "${len} / 2")
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "((0x[0-9a-f]+u,){8})" "\\1\n    " words "${words}")
file(WRITE ${OUT}
  "/* Generated from ${NAME}.comp by embed_spirv.cmake; do not edit. */\n"
  "#include <stddef.h>\n#include <stdint.h>\n\n"
  "const uint32_t ox_vk_spv_${NAME}[] = {\n    ${words}\n};\n"
  "const size_t ox_vk_spv_${NAME}_size = ${bytes};\n")
