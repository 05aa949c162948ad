"""A TileLang accumulation through atomic adds: generated CUDA source and ptxas figures on sm_90."""

import tilelang.language as T

from kregress.case import TileLangKernel


def build(n: int = 1024, block: int = 128):
    @T.prim_func
    def accumulate(src: T.Tensor((n,), "float32"), dst: T.Tensor((n,), "float32")):
        with T.Kernel(n // block, threads=block) as bx:
            for i in T.Parallel(block):
                T.atomic_add(dst[bx * block + i], src[bx * block + i])

    return accumulate


accumulate = TileLangKernel(build)
