"""gather_small_codebook: `tl.gather` from a 4-entry table by 4096 indices fails in the layout pass
(triton-lang/triton#6958).

Dequantizing 2-bit codes through a codebook: 4 float values, gathered by a long index tensor. The
pass that picks a warp-local layout for gathers assumed the index tensor was no longer than the
source along the gather axis; with a 4-entry source and 4096 indices its assertion
(`GatherLoweringHelper(op).isWarpLocal()`) failed and compilation stopped (`PassManager::run
failed`) under 3.3.0 and 3.3.1, the first releases with `tl.gather`. A gather whose source is as
long as its index (`permute`, 256 of each) compiles in every release that has `tl.gather`.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

CODES = 4096


@triton.jit
def lookup_kernel(table_ptr, code_ptr, out_ptr, ENTRIES: tl.constexpr, CODES: tl.constexpr):
    table = tl.load(table_ptr + tl.arange(0, ENTRIES))
    codes = tl.load(code_ptr + tl.arange(0, CODES))
    tl.store(out_ptr + tl.arange(0, CODES), tl.gather(table, codes, 0))


def operands(entries: int, codes: int = CODES, device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {"table_ptr": torch.linspace(-1.5, 1.5, entries),
               "code_ptr": torch.randint(0, entries, (codes,), generator=gen, dtype=torch.int32),
               "out_ptr": torch.zeros(codes)}  # fmt: skip
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(entries: int, codes: int) -> TritonKernel:
    def args() -> dict:
        return {**operands(entries, codes), "ENTRIES": entries, "CODES": codes}

    return TritonKernel(lookup_kernel, args=args, configs=[{"num_warps": 4}])


dequantize = kernel(4, CODES)
permute = kernel(256, 256)


def check_dequantize(device: str):
    args = operands(4, CODES, device)
    lookup_kernel[(1,)](**args, ENTRIES=4, CODES=CODES)
    table, codes = args["table_ptr"].cpu().double().numpy(), args["code_ptr"].cpu().numpy()
    return args["out_ptr"].cpu().double().numpy(), np.take(table, codes)
