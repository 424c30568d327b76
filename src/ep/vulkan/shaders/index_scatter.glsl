// Writing one 32-bit word of a scatter's output with its reduction. The
// including shader declares the output `uint y[]` (read-write).
//
// reduction: 0 none, 1 add, 2 mul, 3 max, 4 min; is_int: int32 words,
// else float32. Reductions go through a compare-and-swap loop on the
// word, so updates that meet on one element all land (in some order:
// add and mul round differently from the CPU's sequential order, max and
// min do not). max and min keep the CPU's a > b ? a : b, NaN included.
uint ox_combine(uint red, uint is_int, uint a, uint b) {
    if (is_int != 0u) {
        int x = int(a), z = int(b);
        int r = red == 1u ? x + z : red == 2u ? x * z : red == 3u ? (x > z ? x : z) : (x < z ? x : z);
        return uint(r);
    }
    float x = uintBitsToFloat(a), z = uintBitsToFloat(b);
    float r = red == 1u ? x + z : red == 2u ? x * z : red == 3u ? (x > z ? x : z) : (x < z ? x : z);
    return floatBitsToUint(r);
}

void ox_scatter_word(uint pos, uint v, uint red, uint is_int) {
    if (red == 0u) {
        y[pos] = v;
        return;
    }
    uint old = y[pos];
    for (;;) {
        uint prev = atomicCompSwap(y[pos], old, ox_combine(red, is_int, old, v));
        if (prev == old) break;
        old = prev;
    }
}
