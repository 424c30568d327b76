# Writes a text file as a C string (bytes as hex escapes, so any content
# survives), for data the library embeds instead of reading at run time:
#   cmake -DIN=denylist.txt -DOUT=out.c -DNAME=ox_vk_denylist_text -P embed_text.cmake
# defines `const char NAME[]`, NUL-terminated.
file(READ ${IN} hex HEX)
string(REGEX REPLACE "(..)" "\\\\x\\1" escaped "${hex}")
string(REGEX REPLACE "((\\\\x..){32})" "\\1\"\n    \"" escaped "${escaped}")
get_filename_component(base ${IN} NAME)
file(WRITE ${OUT}
  "/* Generated from ${base} by embed_text.cmake; do not edit. */\n"
  "const char ${NAME}[] =\n    \"${escaped}\";\n")
