"""native_binary_flags: what the compiler asks the native code generator for, and what it stores
(intel/intel-xpu-backend-for-triton PR #2148, #2391).

PR #2148 made the XPU backend compile SPIR-V into a native binary with `ocloc` when
TRITON_XPU_GEN_NATIVE_CODE is set (the `generate_native_code` option); #2391 derived the kernel's
`n_regs` from the GRF mode in the build flags and left `-device pvc` hard-coded in the ocloc call.
One small dot tile, compiled with each GRF mode with native code off and on; on CUDA and AMD the
same questions asked of their binaries: the arch it was built for, and registers as the binary
records them against what `ptxas -v` reports.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

BLOCK_M, BLOCK_N, BLOCK_K = 64, 64, 32
# K is a compile-time constant: the Triton 3.6 interpreter cannot take a runtime int in range()
# under NumPy 2.4 (int() of its 1-element array raises).


@triton.jit
def dot_tile(
    a, b, c, M, N, K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr
):
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for start in range(0, K, BLOCK_K):
        ks = start + tl.arange(0, BLOCK_K)
        tile_a = tl.load(a + rows[:, None] * K + ks[None, :], mask=(rows[:, None] < M) & (ks[None, :] < K))
        tile_b = tl.load(b + ks[:, None] * N + cols[None, :], mask=(ks[:, None] < K) & (cols[None, :] < N))
        acc += tl.dot(tile_a, tile_b)
    tl.store(c + rows[:, None] * N + cols[None, :], acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def launch_args() -> dict:
    m = n = k = 256
    return {
        "a": torch.empty(m, k, dtype=torch.float16),
        "b": torch.empty(k, n, dtype=torch.float16),
        "c": torch.empty(m, n, dtype=torch.float32),
        "M": m,
        "N": n,
        "K": k,
        "BLOCK_M": BLOCK_M,
        "BLOCK_N": BLOCK_N,
        "BLOCK_K": BLOCK_K,
    }


tile = TritonKernel(
    fn=dot_tile,
    args=launch_args,
    configs={
        "xpu": [
            {"num_warps": 4, "grf_mode": grf_mode, "generate_native_code": native}
            for grf_mode in ("default", "small", "large")
            for native in (False, True)
        ],
        "cuda": [{"num_warps": 4}, {"num_warps": 4, "maxnreg": 64}],
        "hip": [{"num_warps": 4}],
    },
    cold_cache=True,
)


def check(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The tile itself is sound: C = A @ B against float64."""
    args = launch_args()
    generator = torch.Generator().manual_seed(0)
    a = torch.randn(args["M"], args["K"], generator=generator).to(torch.float16)
    b = torch.randn(args["K"], args["N"], generator=generator).to(torch.float16)
    c = torch.empty(args["M"], args["N"], dtype=torch.float32, device=device)
    grid = (triton.cdiv(args["M"], BLOCK_M), triton.cdiv(args["N"], BLOCK_N))
    dot_tile[grid](a.to(device), b.to(device), c, args["M"], args["N"], args["K"], BLOCK_M, BLOCK_N, BLOCK_K)
    return c.cpu(), a.double() @ b.double()
