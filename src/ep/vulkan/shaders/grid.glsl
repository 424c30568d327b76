// The whole dispatch's workgroup counts, for grid-stride loops. The
// provider may record one dispatch as several over slices of its grid
// (vkCmdDispatchBase, to bound the work one dispatch carries), and then
// gl_NumWorkGroups is the slice's count while gl_WorkGroupID stays global:
// every shader strides by OX_NUM_GROUPS instead, which ox_vk_record pushes
// for every dispatch as three uints {z, y, x} at bytes 116..127 of the
// push constants (VK_GRID_OFFSET). Each push-constant block ends with
// OX_GRID_MEMBER, its own members ending by byte 116. A shader with a
// one-dimensional grid whose members need more room (up to byte 124)
// defines OX_GRID_X_ONLY before including this file: it then receives x
// alone, at byte 124, and the host checks its grid is one-dimensional.
#ifndef OX_GRID_GLSL
#define OX_GRID_GLSL
#ifdef OX_GRID_X_ONLY
#define OX_GRID_MEMBER layout(offset = 124) uint ox_grid_x;
#define OX_NUM_GROUPS uvec3(p.ox_grid_x, 1u, 1u)
#else
#define OX_GRID_MEMBER layout(offset = 116) uint ox_grid_z; uint ox_grid_y; uint ox_grid_x;
#define OX_NUM_GROUPS uvec3(p.ox_grid_x, p.ox_grid_y, p.ox_grid_z)
#endif
#endif
