# Image codecs of the ImageDecoder kernel (src/ep/cpu/kernels/codec*.c).
# Included by the top-level CMakeLists.txt after the `onyx` target exists.
# libpng decodes PNG and libjpeg-turbo JPEG; both are optional: without
# one, that format fails at run time with an error naming the library
# (Debian: libpng-dev, libjpeg62-turbo-dev).
find_package(PNG)
find_package(JPEG)
set(ONYX_CODEC_DIR ${CMAKE_CURRENT_LIST_DIR})
if(PNG_FOUND)
  target_link_libraries(onyx PRIVATE PNG::PNG)
  set_property(SOURCE ${ONYX_CODEC_DIR}/codec_png.c APPEND PROPERTY COMPILE_DEFINITIONS ONYX_HAVE_PNG=1)
else()
  message(STATUS "libpng not found: ImageDecoder will not decode PNG")
endif()
if(JPEG_FOUND)
  target_link_libraries(onyx PRIVATE JPEG::JPEG)
  set_property(SOURCE ${ONYX_CODEC_DIR}/codec_jpeg.c APPEND PROPERTY COMPILE_DEFINITIONS ONYX_HAVE_JPEG=1)
else()
  message(STATUS "libjpeg not found: ImageDecoder will not decode JPEG")
endif()
