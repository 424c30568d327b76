#version 450
#include "nn_conv_gemm.glsl"
