"""tilelang_gemm_ragged_k: a pipelined GEMM whose K is one past a multiple of its K tile stops in
the copy lowering (tile-ai/tilelang#2365).

With K = BLOCK_K + 1 the last K tile holds one float16 column. On sm_80 the pipelined copies into
shared memory are lowered to `cp.async`, which moves 4, 8 or 16 bytes; guarding the ragged tail
left a copy of 2 bytes, which the lowering refuses: `InternalError: Check failed:
(IsValidCPAsyncTransferBytes(total_bytes)) is false`. 0.1.12 compiles it (tile-ai/tilelang#2444).
The same GEMM with K a multiple of the tile (`gemm_even_k`) compiles in every release.
"""

import tilelang.language as T

from kregress.case import TileLangKernel

M = N = 64
BLOCK_M = BLOCK_N = 64
BLOCK_K = 32


def build(k: int):
    def make():
        @T.prim_func
        def gemm(
            A: T.Tensor((M, k), "float16"),  # type: ignore[valid-type]
            B: T.Tensor((k, N), "float16"),  # type: ignore[valid-type]
            C: T.Tensor((M, N), "float32"),  # type: ignore[valid-type]
        ):
            with T.Kernel(T.ceildiv(N, BLOCK_N), T.ceildiv(M, BLOCK_M), threads=128) as (bx, by):
                A_shared = T.alloc_shared((BLOCK_M, BLOCK_K), "float16")
                B_shared = T.alloc_shared((BLOCK_K, BLOCK_N), "float16")
                C_local = T.alloc_fragment((BLOCK_M, BLOCK_N), "float32")
                T.clear(C_local)
                for ko in T.Pipelined(T.ceildiv(k, BLOCK_K), num_stages=2):
                    T.copy(A[by * BLOCK_M, ko * BLOCK_K], A_shared)
                    T.copy(B[ko * BLOCK_K, bx * BLOCK_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
                T.copy(C_local, C[by * BLOCK_M, bx * BLOCK_N])

        return gemm

    return make


gemm_ragged_k = TileLangKernel(build(BLOCK_K + 1))
gemm_even_k = TileLangKernel(build(2 * BLOCK_K))
