"""tilelang_device_assert: a plain `assert` in a kernel body emits a host-only error call into
device code (tile-ai/tilelang#3019).

A bounds check on a thread's row, written as Python's `assert` (TVMScript maps it to
`T.Assert`). The CUDA codegen printed the host runtime's error reporting,
`TVMFFIErrorSetRaisedFromCStrParts`, inside the `__global__` function, and nvcc stopped at
`identifier ... is undefined`. The same kernel without the assert (`unchecked`) compiles.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

N = 64


def build(checked: bool):
    def make():
        @T.prim_func
        def scale(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):  # type: ignore[valid-type]
            with T.Kernel(1, threads=N) as _:
                i = T.get_thread_binding()
                if checked:
                    assert i < N, "row out of range"
                C[i] = A[i] * 2.0

        return scale

    return make


checked = TileLangKernel(build(True))
unchecked = TileLangKernel(build(False))
