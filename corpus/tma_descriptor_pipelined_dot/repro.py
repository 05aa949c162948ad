"""tma_descriptor_pipelined_dot: a tensor descriptor made inside a software-pipelined loop that
feeds a `tl.dot` stops the pipeliner on Hopper and Blackwell (triton-lang/triton#10229).

Paged attention scores: each iteration builds a TMA descriptor for the next 64x64 page of keys
(`tl.make_tensor_descriptor` on the page's base address, the page as one block), loads it and
accumulates `q @ page.T`. With `num_stages=3` the dot makes the loop a pipelining candidate, and
the pipeliner must predicate every op it moves into the prologue or epilogue; it had no rule for
`ttng.tensormap_create` (nor the fence that follows it), so compiling failed with
"'ttng.tensormap_create' op pipeliner doesn't know how to predicate this op" and "LLVM ERROR:
Fatal pipeliner error". 3.9.0 predicates both. The same loop summing the pages without a dot
(`paged_sum`) is not pipelined and compiles in every release.
"""

import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

PAGE, D, PAGES = 64, 64, 4


@triton.jit
def paged_scores_kernel(q_ptr, kv_ptr, out_ptr, n_pages, PAGE: tl.constexpr, D: tl.constexpr,
                        DOT: tl.constexpr):  # fmt: skip
    rows = tl.arange(0, PAGE)
    dims = tl.arange(0, D)
    q = tl.load(q_ptr + rows[:, None] * D + dims[None, :])
    acc = tl.zeros([PAGE, PAGE], dtype=tl.float32)
    for i in range(n_pages):
        page = tl.make_tensor_descriptor(
            kv_ptr + i * PAGE * D, shape=[PAGE, D], strides=[D, 1], block_shape=[PAGE, D]
        )
        keys = page.load([0, 0])
        if DOT:
            acc = tl.dot(q, keys.T, acc)
        else:
            acc += keys.to(tl.float32)
    tl.store(out_ptr + rows[:, None] * PAGE + tl.arange(0, PAGE)[None, :], acc)


def operands(device: str = "cpu") -> dict:
    gen = torch.Generator().manual_seed(0)
    tensors = {
        "q_ptr": torch.randn(PAGE, D, generator=gen).half(),
        "kv_ptr": torch.randn(PAGES * PAGE, D, generator=gen).half(),
        "out_ptr": torch.empty(PAGE, PAGE),
    }
    return {k: v.to(device) for k, v in tensors.items()}


def kernel(dot: bool) -> TritonKernel:
    def args() -> dict:
        return {**operands(), "n_pages": PAGES, "PAGE": PAGE, "D": D, "DOT": dot}

    return TritonKernel(paged_scores_kernel, args=args, configs=[{"num_warps": 4, "num_stages": 3}])


paged_dot = kernel(True)
paged_sum = kernel(False)


def check_paged_dot(device: str):
    """q times every page of keys, transposed, summed over the pages, against float64."""
    triton.set_allocator(lambda size, alignment, stream: torch.empty(size, dtype=torch.int8, device=device))
    args = operands(device)
    paged_scores_kernel[(1,)](**args, n_pages=PAGES, PAGE=PAGE, D=D, DOT=True, num_stages=3)
    q = args["q_ptr"].cpu().double().numpy()
    pages = args["kv_ptr"].cpu().double().numpy().reshape(PAGES, PAGE, D)
    return args["out_ptr"].cpu().double().numpy(), sum(q @ page.T for page in pages)
