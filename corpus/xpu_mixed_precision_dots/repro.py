"""xpu_mixed_precision_dots: an exact fp32 dot next to an fp16 dot in one kernel is given the
fp16 dot's DPAS layout, and the Intel backend cannot lower it (intel/intel-xpu-backend-for-triton#4034).

A two-term product: a float32 part multiplied exactly (`input_precision="ieee"`, which no Intel
systolic array can do) and a float16 correction on the tensor cores. AccelerateMatmul decided
DPAS per function from a map of its dots, and missed the ieee dot's "not applicable" entry when
another dot could use DPAS, so the ieee dot was given a DPAS layout too; lowering then stops
with "Unsupported dpas type found" for PVC. The exact dot alone compiles, and DG2 (no DPAS in its
target description) never takes that path.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

N = 64


@triton.jit
def two_term_kernel(a_ptr, b_ptr, da_ptr, db_ptr, exact_ptr, correction_ptr, N: tl.constexpr):
    rows = tl.arange(0, N)
    tile = rows[:, None] * N + rows[None, :]
    exact = tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile), input_precision="ieee")
    correction = tl.dot(tl.load(da_ptr + tile), tl.load(db_ptr + tile))
    tl.store(exact_ptr + tile, exact)
    tl.store(correction_ptr + tile, correction)


@triton.jit
def exact_only_kernel(a_ptr, b_ptr, exact_ptr, N: tl.constexpr):
    """The control: the ieee dot alone."""
    rows = tl.arange(0, N)
    tile = rows[:, None] * N + rows[None, :]
    tl.store(exact_ptr + tile, tl.dot(tl.load(a_ptr + tile), tl.load(b_ptr + tile), input_precision="ieee"))


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "a_ptr": torch.randn(N, N, generator=gen),
        "b_ptr": torch.randn(N, N, generator=gen),
        "da_ptr": (torch.randn(N, N, generator=gen) / 64).half(),
        "db_ptr": (torch.randn(N, N, generator=gen) / 64).half(),
        "exact_ptr": torch.zeros(N, N),
        "correction_ptr": torch.zeros(N, N),
    }
    return {k: v.to(device) for k, v in tensors.items()}


two_terms = TritonKernel(two_term_kernel, args=lambda: {**operands(), "N": N}, configs=[{"num_warps": 4}])
exact_only = TritonKernel(
    exact_only_kernel,
    args=lambda: {
        k: v for k, v in {**operands(), "N": N}.items() if k in ("a_ptr", "b_ptr", "exact_ptr", "N")
    },
    configs=[{"num_warps": 4}],
)


def check_two_terms(device: str):
    """Both products against float64: the ieee one within fp32 rounding of a 64-term sum, the
    fp16 one (fp32 accumulation) well within the tolerance too."""
    args = operands(device)
    two_term_kernel[(1,)](**args, N=N)
    a, b, da, db = (args[k].cpu().double() for k in ("a_ptr", "b_ptr", "da_ptr", "db_ptr"))
    actual = {
        "exact": args["exact_ptr"].cpu().double().numpy(),
        "correction": args["correction_ptr"].cpu().double().numpy(),
    }
    return actual, {"exact": (a @ b).numpy(), "correction": (da @ db).numpy()}
