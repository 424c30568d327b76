#version 450
// FusedConv with an input scale S (conv_epilogue.glsl)
#define OX_CONV_SCALE
#include "nn_conv_gemm.glsl"
