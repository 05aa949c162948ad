"""tilelang_fill_var_range: `T.fill` of a slice whose bounds are `T.alloc_var`s fails to compile
(tile-ai/tilelang#1008, 0.1.6.post2, fixed in 0.1.7).

Zeroing a run of a tensor whose start and end the kernel holds in int variables (`x[lo:hi]`, as a
kernel zeroing the tokens past a length it computed would). TileLang 0.1.6.post2's frontend
rejects the slice with a diagnostic ("one or more error diagnostics were emitted"); 0.1.7 lowers
it. The same kernel filling the same run by constant bounds (`const_range`, the variables still
declared and set) compiles in 0.1.6.post2, so a FAIL of `var_range` is the variable bounds.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 128


def build(var_bounds: bool):
    def make():
        @T.prim_func
        def zero_run(x: T.Tensor((N,), "int64")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=128) as _:
                lo = T.alloc_var("int32")
                hi = T.alloc_var("int32")
                lo = 16
                hi = 48
                if var_bounds:
                    T.fill(x[lo:hi], 0)
                else:
                    T.fill(x[16:48], 0)

        return zero_run

    return make


var_range = TileLangKernel(build(var_bounds=True))
const_range = TileLangKernel(build(var_bounds=False))
