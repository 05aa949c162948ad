"""xpu_atomic_add_bf16: the embedding-gradient scatter of a bf16 model on Intel GPUs
(intel/intel-xpu-backend-for-triton#4191).

Backward of an embedding lookup: every token adds its gradient row into the row of its id, and
repeated ids collide, hence `tl.atomic_add`. With bf16 weights the add is a bf16 atomic, which
upstream Triton learned in 3.4 (triton-lang/triton#6519) and the Intel backend had to port on its
own (SPIR-V has no bf16 atomic fadd without an extension): the released triton-xpu refuses to
compile the kernel for PVC and DG2.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

TOKENS, VOCAB, DIM = 64, 16, 128


@triton.jit
def embedding_grad_kernel(ids_ptr, grad_out_ptr, grad_weight_ptr, DIM: tl.constexpr):
    token = tl.program_id(0)
    row = tl.load(ids_ptr + token)
    cols = tl.arange(0, DIM)
    grad = tl.load(grad_out_ptr + token * DIM + cols)
    tl.atomic_add(grad_weight_ptr + row * DIM + cols, grad, sem="relaxed")


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(0, VOCAB, (TOKENS,), generator=gen, dtype=torch.int32)
    grad = torch.randint(-4, 4, (TOKENS, DIM), generator=gen).to(torch.bfloat16)  # exact sums
    weight = torch.zeros(VOCAB, DIM, dtype=torch.bfloat16)
    return {"ids_ptr": ids.to(device), "grad_out_ptr": grad.to(device), "grad_weight_ptr": weight.to(device)}


embedding_grad = TritonKernel(
    embedding_grad_kernel, args=lambda: {**operands(), "DIM": DIM}, configs=[{"num_warps": 4}]
)


def check_embedding_grad(device: str):
    x = operands(device)
    embedding_grad_kernel[(TOKENS,)](**x, DIM=DIM)
    expected = torch.zeros(VOCAB, DIM, dtype=torch.float64)
    expected.index_add_(0, x["ids_ptr"].cpu().long(), x["grad_out_ptr"].cpu().double())
    return x["grad_weight_ptr"].cpu().double().numpy(), expected.numpy()
