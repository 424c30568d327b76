#version 450
// FusedConv with an input scale S (conv_epilogue.glsl); binding 1 holds
// float16 weights (weights.glsl)
#define OX_CONV_SCALE
#define OX_W16
#include "nn_conv_gemm.glsl"
