#version 450
#include "nn_convt.glsl"
