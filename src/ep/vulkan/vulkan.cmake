# The Vulkan compute provider (src/ep/vulkan). Included by the top-level
# CMakeLists.txt after the `onyx` target exists.
#
# Needs the Vulkan headers (Debian: libvulkan-dev) and glslc (glslc) at
# build time; the loader itself (libvulkan.so.1) is opened at run time, so
# a library built with the provider still starts, and falls back to the
# CPU, on a machine without Vulkan. Shaders in shaders/*.comp are compiled
# to SPIR-V by glslc and embedded as C arrays: nothing is read from files
# at run time.
find_path(ONYX_VULKAN_INCLUDE_DIR vulkan/vulkan.h)
find_program(ONYX_GLSLC glslc)
find_library(ONYX_VULKAN_LOADER NAMES vulkan libvulkan.so.1)
if(ONYX_VULKAN_INCLUDE_DIR AND ONYX_GLSLC)
  set(ONYX_VULKAN_DEFAULT ON)
else()
  set(ONYX_VULKAN_DEFAULT OFF)
endif()
option(ONYX_VULKAN "Build the Vulkan compute provider (needs the Vulkan headers and glslc)"
  ${ONYX_VULKAN_DEFAULT})

if(NOT ONYX_VULKAN)
  if(NOT ONYX_VULKAN_DEFAULT)
    message(STATUS "Vulkan provider off: needs vulkan/vulkan.h (libvulkan-dev) and glslc")
  else()
    message(STATUS "Vulkan provider off (ONYX_VULKAN=OFF)")
  endif()
  return()
endif()
if(NOT ONYX_VULKAN_INCLUDE_DIR OR NOT ONYX_GLSLC)
  message(FATAL_ERROR "ONYX_VULKAN=ON needs vulkan/vulkan.h (libvulkan-dev) and glslc")
endif()
if(ONYX_VULKAN_LOADER)
  message(STATUS "Vulkan provider on (loader ${ONYX_VULKAN_LOADER}, opened at run time)")
else()
  message(STATUS "Vulkan provider on; no Vulkan loader found here: it is opened at run time")
endif()

set(ONYX_VK_DIR ${CMAKE_CURRENT_LIST_DIR})
set(ONYX_VK_GEN ${CMAKE_BINARY_DIR}/vulkan)
file(MAKE_DIRECTORY ${ONYX_VK_GEN})
file(GLOB ONYX_VK_SHADERS CONFIGURE_DEPENDS ${ONYX_VK_DIR}/shaders/*.comp)
file(GLOB ONYX_VK_SHADER_INCLUDES CONFIGURE_DEPENDS ${ONYX_VK_DIR}/shaders/*.glsl)
set(ONYX_VK_SPV_SOURCES)
foreach(src ${ONYX_VK_SHADERS})
  get_filename_component(name ${src} NAME_WE)
  set(spv ${ONYX_VK_GEN}/${name}.spv)
  set(csrc ${ONYX_VK_GEN}/spv_${name}.c)
  # Vulkan 1.1 (SPIR-V 1.3): the oldest version whose subgroup operations
  # the softmax reduction may use
  add_custom_command(
    OUTPUT ${csrc}
    COMMAND ${ONYX_GLSLC} --target-env=vulkan1.1 -O -Werror -I ${ONYX_VK_DIR}/shaders
            -o ${spv} ${src}
    COMMAND ${CMAKE_COMMAND} -DSPV=${spv} -DOUT=${csrc} -DNAME=${name}
            -P ${ONYX_VK_DIR}/embed_spirv.cmake
    DEPENDS ${src} ${ONYX_VK_SHADER_INCLUDES} ${ONYX_VK_DIR}/embed_spirv.cmake
    COMMENT "Compiling Vulkan shader ${name}.comp")
  list(APPEND ONYX_VK_SPV_SOURCES ${csrc})
endforeach()

# The driver denylist (docs/VULKAN_DENYLIST.md), embedded as a C string:
# the library reads no file at run time unless ONYX_VK_DENYLIST names one.
set(ONYX_VK_DENYLIST_C ${ONYX_VK_GEN}/denylist_text.c)
add_custom_command(
  OUTPUT ${ONYX_VK_DENYLIST_C}
  COMMAND ${CMAKE_COMMAND} -DIN=${ONYX_VK_DIR}/denylist.txt -DOUT=${ONYX_VK_DENYLIST_C}
          -DNAME=ox_vk_denylist_text -P ${ONYX_VK_DIR}/embed_text.cmake
  DEPENDS ${ONYX_VK_DIR}/denylist.txt ${ONYX_VK_DIR}/embed_text.cmake
  COMMENT "Embedding the Vulkan driver denylist")

file(GLOB ONYX_VK_SOURCES CONFIGURE_DEPENDS ${ONYX_VK_DIR}/*.c)
target_sources(onyx PRIVATE ${ONYX_VK_SOURCES} ${ONYX_VK_SPV_SOURCES} ${ONYX_VK_DENYLIST_C})
target_include_directories(onyx PRIVATE ${ONYX_VULKAN_INCLUDE_DIR})
target_compile_definitions(onyx PRIVATE ONYX_HAVE_VULKAN=1)
target_link_libraries(onyx PRIVATE ${CMAKE_DL_LIBS})
