"""`kregress new`: a case folder to start from, valid before its author writes a line, so the first
thing they run (`kregress check`, then pytest on it) already works and shows what to change."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from string import Template

from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS
from kregress.manifest import CASE_ID, UPSTREAM_BUG

DRAFT = "draft: not shown yet"  # the guard of a case whose bad and good releases are not named


class ScaffoldError(KregressError):
    """The case cannot be written as asked (name, issue URL, framework, folder): a usage error."""


@dataclass(frozen=True)
class Starter:
    """What a framework's starting case judges, and where its bug is shown by default."""

    target: str  # reproduce.targets when --target is not given
    kernel: str  # the repro's kernel, which the manifest's "compiles" expectation names
    expectations: str  # the [[expect]] tables after that one
    repro: str  # repro.py


TRITON_EXPECT = """\
[[expect]]
name = "numerics"
kind = "numerics"
check = "check_scaled_add"
rtol = 1e-6
atol = 1e-6
"""

TRITON_REPRO = '''\
"""$name: $title ($issue).

Replace the kernel below with the smallest one that shows the bug, written for this case; keep a
float64 reference computed without the compiler under test.
"""

import numpy as np
import torch
import triton
import triton.language as tl

from kregress.case import TritonKernel

SIZE, BLOCK = 1000, 256


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, alpha, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


def operands(device: str = "cpu", seed: int = 0) -> dict:
    gen = torch.Generator().manual_seed(seed)
    x, y = torch.randn(SIZE, generator=gen), torch.randn(SIZE, generator=gen)
    return {"x_ptr": x.to(device), "y_ptr": y.to(device), "out_ptr": torch.empty(SIZE, device=device)}


scaled_add = TritonKernel(
    scaled_add_kernel, args=lambda: {**operands(), "alpha": 0.5, "n": SIZE, "BLOCK": BLOCK}
)


def reference(x: torch.Tensor, y: torch.Tensor, alpha: float) -> np.ndarray:
    return alpha * x.double().numpy() + y.double().numpy()


def check_scaled_add(device: str):
    """(actual, float64 expected) on `device`: the interpreter on cpu, the GPU elsewhere."""
    args = operands(device)
    scaled_add_kernel[(triton.cdiv(SIZE, BLOCK),)](**args, alpha=0.5, n=SIZE, BLOCK=BLOCK)
    return args["out_ptr"].cpu().double().numpy(), reference(args["x_ptr"].cpu(), args["y_ptr"].cpu(), 0.5)
'''

TILELANG_EXPECT = """\
[[expect]]
name = "vector-copies"
kind = "ir"
kernel = "scaled_copy"
stage = "cuda_source"
pattern = 'float4'
min_count = 1
"""

TILELANG_REPRO = '''\
"""$name: $title ($issue).

Replace the kernel below with the smallest one that shows the bug, written for this case. TileLang
builds CUDA source here (nvcc makes the cubin); its numerics need a device target.
"""

from __future__ import annotations

import tilelang.language as T

from kregress.case import TileLangKernel

ROWS, COLS, BLOCK = 128, 128, 64


def build():
    @T.prim_func
    def scaled_copy(
        A: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
        B: T.Tensor((ROWS, COLS), "float32"),  # type: ignore[valid-type]
    ):
        with T.Kernel(ROWS // BLOCK, threads=128) as bx:
            tile = T.alloc_fragment((BLOCK, COLS), "float32")
            T.copy(A[bx * BLOCK : (bx + 1) * BLOCK, :], tile)
            for i, j in T.Parallel(BLOCK, COLS):
                tile[i, j] = tile[i, j] * 2.0
            T.copy(tile, B[bx * BLOCK : (bx + 1) * BLOCK, :])

    return scaled_copy


scaled_copy = TileLangKernel(build)
'''

STARTERS = {
    "triton": Starter("cpu:interpreter", "scaled_add", TRITON_EXPECT, TRITON_REPRO),
    "tilelang": Starter("cuda:sm_90", "scaled_copy", TILELANG_EXPECT, TILELANG_REPRO),
}

MANIFEST = """\
title = $title_toml
framework = "$framework"

[upstream]
repo = "$repo"
issue = "$issue"

# What must hold. Replace these with what the bug breaks: `kregress new --help` lists the kinds.
[[expect]]
name = "compiles"
kind = "compiles"
kernel = "$kernel"

$expectations
# The bug, where it is known (uncomment once `kregress bisect` has found the range):
# [[known_bad]]
# link = "$issue"
# reason = "what the compiler gets wrong, in one line"
# expect = ["numerics"]
# targets = ["$target"]
# versions = "<X.Y.Z"

# How the case shows that it catches its bug: FAIL under each `bad` release, PASS under each `good`
# one, on `targets` (`kregress verify $name` runs exactly this).
[reproduce]
targets = ["$target"]
$levels
"""


def toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_case(
    corpus: Path,
    name: str,
    framework: str,
    issue: str,
    title: str | None = None,
    target: str | None = None,
    bad: list[str] | None = None,
    good: list[str] | None = None,
) -> Path:
    """Write corpus/NAME/{case.toml,repro.py}; never over an existing folder."""
    if not CASE_ID.match(name):
        raise ScaffoldError(f"case name {name!r} must match {CASE_ID.pattern} (it is the folder's name)")
    if framework not in STARTERS:
        known = ", ".join(sorted(STARTERS))
        why = (
            FRAMEWORKS[framework].no_adapter if framework in FRAMEWORKS else "not a framework kregress knows"
        )
        raise ScaffoldError(f"--framework {framework}: no starting case ({why}); choose one of {known}")
    if not UPSTREAM_BUG.match(issue):
        raise ScaffoldError(
            f"--issue {issue!r} must be the bug's issue or pull request: "
            "https://github.com/OWNER/REPO/issues/N or https://github.com/OWNER/REPO/pull/N"
        )
    folder = corpus / name
    if folder.exists():
        raise ScaffoldError(f"{folder} already exists; pick another name or edit it")
    if good and not bad:
        raise ScaffoldError("--good needs --bad: a fixed release says nothing without one that had the bug")
    starter = STARTERS[framework]
    repo = re.sub(r"^https://github\.com/([^/]+/[^/]+)/.*$", r"\1", issue)
    title = title or f"{repo.split('/')[1]} #{issue.rsplit('/', 1)[1]}: what breaks, in a line"
    if bad:
        levels = f"bad = {list(bad)!r}".replace("'", '"') + "\n"
        levels += (
            f"good = {list(good)!r}".replace("'", '"')
            if good
            else 'no_good = "why no release without the bug can be named (still open upstream?)"'
        )
    else:
        levels = (
            f'guard = "{DRAFT}: replace this guard with bad and good releases, then run '
            f'kregress verify {name}"'
        )
    values = {
        "name": name,
        "title": title,
        "title_toml": toml_string(title),
        "framework": framework,
        "repo": repo,
        "issue": issue,
        "target": target or starter.target,
        "kernel": starter.kernel,
        "expectations": starter.expectations,
        "levels": levels,
    }
    folder.mkdir(parents=True)
    (folder / "case.toml").write_text(Template(MANIFEST).substitute(values))
    (folder / "repro.py").write_text(Template(starter.repro).substitute(values))
    return folder


__all__ = ["DRAFT", "STARTERS", "ScaffoldError", "write_case"]
