#version 450
// binding 1 holds float16 weights (weights.glsl)
#define OX_W16
#include "nn_convt.glsl"
