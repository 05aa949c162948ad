"""xpu_gather_codebook_4bit: on Intel GPUs, `tl.gather` from a 16-entry codebook by 2048 indices
fails in the shared gather layout pass (triton-lang/triton#6958, as shipped in triton-xpu).

Dequantizing 4-bit codes: 16 float values gathered by 2048 code indices. triton-xpu 3.3.0b1 carries
Triton's gather layout pass from before triton-lang/triton#6959, which assumed the index no longer
than the source along the axis: compilation stops ("PassManager::run failed") for PVC and DG2. A
gather as long as its source (`permute`, 256 of each) compiles. The fix reached upstream triton
3.4.0; no triton-xpu release since 3.3.0b1 carries it.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel


@triton.jit
def dequantize_kernel(codebook_ptr, code_ptr, out_ptr, ENTRIES: tl.constexpr, CODES: tl.constexpr):
    codebook = tl.load(codebook_ptr + tl.arange(0, ENTRIES))
    codes = tl.load(code_ptr + tl.arange(0, CODES))
    tl.store(out_ptr + tl.arange(0, CODES), tl.gather(codebook, codes, 0))


def operands(entries: int, codes: int, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(1)
    tensors = {"codebook_ptr": torch.linspace(-1.0, 1.0, entries),
               "code_ptr": torch.randint(0, entries, (codes,), generator=gen, dtype=torch.int32),
               "out_ptr": torch.zeros(codes)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(entries: int, codes: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(entries, codes), "ENTRIES": entries, "CODES": codes}

    return TritonKernel(dequantize_kernel, args=args)


dequantize = kernel(16, 2048)
permute = kernel(256, 256)


def check_dequantize(device: str):
    args = operands(16, 2048, device)
    dequantize_kernel[(1,)](**args, ENTRIES=16, CODES=2048)
    codebook, codes = args["codebook_ptr"].cpu().double().numpy(), args["code_ptr"].cpu().numpy()
    return args["out_ptr"].cpu().double().numpy(), np.take(codebook, codes)
