// Workgroup sizes, set per device as specialization constants when the
// provider makes each pipeline (vk_exec.c; the values it chose from the
// device's, possibly masked, limits are vk_ep.wg and vk_ep.tile). The
// defaults below are what a device with 256 invocations gets; a smaller
// device gets a smaller power of two, so nothing here may assume 256.
// A one-dimensional shader includes this file for OX_WG invocations
// (constant 0). A tiled shader (MatMul, the convolution GEMM) defines
// OX_WG_TILED first: its workgroup is then OX_TILE x OX_TILE (constants
// 1 and 2, both set to the tile side).
#ifndef OX_WG_GLSL
#define OX_WG_GLSL
#ifdef OX_WG_TILED
layout(local_size_x = 16, local_size_y = 16, local_size_x_id = 1, local_size_y_id = 2) in;
const uint OX_TILE = gl_WorkGroupSize.x;
#else
layout(local_size_x = 256, local_size_x_id = 0) in;
const uint OX_WG = gl_WorkGroupSize.x;
#endif
#endif
