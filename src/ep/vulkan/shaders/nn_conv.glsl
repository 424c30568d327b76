#include "grid.glsl"
// The geometry every convolution shader receives: up to three spatial
// axes (depth, height, width; 1-D and 2-D convolutions pass leading axes
// of size 1), channels split into groups, and the window's kernel,
// strides, dilations and leading pads per axis.
layout(push_constant) uniform P {
    uint N, Cg, Mg, G; // images, input and output channels per group, groups
    uint id, ih, iw;   // input extent
    uint od, oh, ow;   // output extent
    uint kd, kh, kw;   // kernel extent
    uint sd, sh, sw;   // strides
    uint dd, dh, dw;   // dilations
    int pd, ph, pw;    // leading pads (negative for ConvTranspose's cropping)
    uint flags;        // 1: bias given; 2 (Conv): 1x1 kernel, stride 1, no pads;
                       // Conv's epilogue from 4 on (conv_epilogue.glsl)
    float alpha, beta; // the epilogue's activation parameters
    OX_GRID_MEMBER
} p;
