"""nvFuser: a fusion defined through its own frontend (`nvfuser_direct.FusionDefinition`), scheduled
and compiled at run time on a CUDA device. Its source stage is the CUDA kernel nvFuser generates
for the fusion's inputs; its numerics are the repro's checks, run on the device.

This module is the whole framework: the declaration, the kernel wrapper a repro binds, the adapter
the child runs (`compile_session`, `compile_kernel`, `toolchain_versions`), the starting case, and
what a toolchain for it refuses.

The wheels, as published on PyPI (read 2026-11-23): real binary wheels come in lines named
`nvfuser-cu{118,126,128}-torch{27,28,29,210}`, each built against one torch release, for CPython
3.10 and 3.12 only, and depending on no torch at all; the unsuffixed `nvfuser-cu1xx` are stubs that
fetch the real wheel from NVIDIA's own index at install time. So a toolchain names a line, brings
the torch it was built for, and is refused under another Python or beside another torch.
"""

from __future__ import annotations

import importlib.metadata
import re
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kregress.frameworks.base import Companion, Framework, Starter

LINE = re.compile(r"^nvfuser-(cu\d+)-torch(\d)(\d+)$")
STUB = re.compile(r"^nvfuser-cu\d+$")
PYTHONS = ("3.10", "3.12")  # the CPython tags of every line's wheels
CUDA_LINES, TORCH_LINES = ("cu118", "cu126", "cu128"), ("27", "28", "29", "210")
SOURCE_STAGE = "cuda_source"


@dataclass(frozen=True)
class NvFuserFusion:
    """A fusion and the inputs it is compiled for. `define(fd)` adds the fusion's inputs, ops and
    outputs to a `FusionDefinition`; `inputs(device)` returns the tensors (and scalars) it runs on.
    nvFuser schedules per input shape, so the generated kernel is the one for these inputs."""

    define: Callable[[Any], None]
    inputs: Callable[[str], Sequence[Any]]
    options: dict[str, Any] = field(default_factory=dict)  # passed to FusionDefinition.execute


def requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ @]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def pinned(requirement: str) -> str | None:
    found = re.search(r"==\s*([^\s;,]+)", requirement)
    return found.group(1) if found else None


def torch_of(line: re.Match[str]) -> str:
    return f"{line.group(2)}.{line.group(3)}"


class NvFuserFramework(Framework):
    def refuses(self, requirements: tuple[str, ...], python: str) -> str | None:
        names = {requirement_name(r): r for r in requirements}
        for name, requirement in names.items():
            if STUB.match(name):
                return (
                    f"{requirement}: the unsuffixed nvFuser packages are stubs that download the real "
                    "wheel from NVIDIA's own index at install time; name a line built for one torch, "
                    "e.g. nvfuser-cu128-torch210==0.2.36.dev20260301"
                )
            line = LINE.match(name)
            if line is None:
                continue
            if python not in PYTHONS:
                return (
                    f"{requirement}: nvFuser's wheels are built for CPython {' and '.join(PYTHONS)} only, "
                    f"and this environment's Python is {python}"
                )
            torch = names.get("torch")
            wanted = torch_of(line)
            if torch is not None and not (pinned(torch) or wanted).startswith(wanted):
                return (
                    f"{requirement} is built for torch {wanted}.x only, and the toolchain also names {torch}"
                )
        return None

    def why_missing(self, module: str) -> str:
        """What this environment lacks to import nvFuser, in terms a runner can act on."""
        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        try:
            torch = importlib.metadata.version("torch")
        except importlib.metadata.PackageNotFoundError:
            torch = "none"
        return (
            f"nvFuser's wheels need CPython {' or '.join(PYTHONS)} and the torch release their line names "
            f"(this environment: Python {python}, torch {torch}); judge under a line such as "
            "--toolchain nvfuser-cu128-torch210==0.2.36.dev20260301"
        )


@contextmanager
def compile_session(target_spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """nvFuser compiles when a fusion first runs: only a CUDA device target can build one."""
    from kregress.case import Unsupported

    if target_spec["backend"] != "cuda" or target_spec["kind"] != "device":
        raise Unsupported(f"nvFuser compiles at run time on a CUDA device, not on {target_spec['name']}")
    yield target_spec


def compile_kernel(
    kernel: Any, target_spec: dict[str, Any], out_dir: Path, trace_passes: bool = False
) -> list:
    """Run the fusion once on the device, and keep the CUDA kernel nvFuser generated for it."""
    from kregress.adapters import ConfigResult
    from kregress.case import Unsupported

    if not isinstance(kernel, NvFuserFusion):
        raise Unsupported(
            f"an nvFuser case binds its kernel with NvFuserFusion(...), not {type(kernel).__name__}"
        )
    from nvfuser_direct import FusionDefinition

    result = ConfigResult(label="default")
    if trace_passes:
        result.unavailable["passes"] = "nvFuser has no pass-by-pass dump kregress reads"
    started = time.perf_counter()
    device = "cuda"
    with FusionDefinition() as fd:
        kernel.define(fd)
    inputs = list(kernel.inputs(device))
    try:
        fd.execute(inputs, **kernel.options)
        source = fd.fec.get_cuda_kernel(inputs)
    except Exception as exc:  # the scheduler or the code generator refused the fusion
        result.status = "compile_error"
        result.error_type = type(exc).__name__
        result.message = str(exc)[-4000:]
    else:
        (out_dir / "config0.cu").write_text(source)
        result.ir[SOURCE_STAGE] = "config0.cu"
    result.unavailable.update(
        dict.fromkeys(("registers", "spill_bytes"), "nvFuser does not report its cubin's figures")
    )
    result.seconds = time.perf_counter() - started
    return [result]


def toolchain_versions() -> dict[str, str]:
    import nvfuser_direct

    return {"nvfuser": str(nvfuser_direct.__version__)}


EXPECT = """\
[[expect]]
name = "numerics"
kind = "numerics"
check = "check_row_sum"
rtol = 1e-5
atol = 1e-5

[[expect]]
name = "one-kernel"
kind = "ir"
kernel = "row_sum"
stage = "cuda_source"
pattern = '__global__'
max_count = 1
"""

REPRO = '''\
"""$name: $title ($issue).

Replace the fusion below with the smallest one that shows the bug, written for this case through
nvFuser's own frontend; keep a float64 reference computed without nvFuser.
"""

import torch
from nvfuser_direct import DataType, FusionDefinition

from kregress.case import NvFuserFusion

ROWS, COLS = 256, 1000


def define(fd: FusionDefinition) -> None:
    x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
    fd.add_output(fd.ops.sum(fd.ops.mul(x, x), [1]))


def operands(device: str) -> list:
    return [torch.randn(ROWS, COLS, generator=torch.Generator().manual_seed(0)).to(device)]


row_sum = NvFuserFusion(define, operands)


def check_row_sum(device: str):
    """(actual, float64 expected) on the CUDA device nvFuser compiles for."""
    (x,) = operands(device)
    with FusionDefinition() as fd:
        define(fd)
    (actual,) = fd.execute([x])
    return actual.cpu().double().numpy(), (x.cpu().double() ** 2).sum(dim=1).numpy()
'''

FRAMEWORK = NvFuserFramework(
    "nvfuser",
    "nvFuser",
    modules=("nvfuser_direct", "nvfuser"),
    imports=("nvfuser_direct", "nvfuser"),
    target_kinds=frozenset({"device"}),
    unsupported_kinds="nvFuser compiles only at run time on a CUDA device",
    compiles_on="device",
    compile_backends=frozenset({"cuda"}),
    adapter=__name__,
    ir_stages=(SOURCE_STAGE,),
    wrappers=(NvFuserFusion,),
    preload=("torch",),  # nvfuser imports it
    companions=tuple(
        Companion(
            f"nvfuser-{cuda}-torch{torch}",
            "",
            (f"torch=={torch[0]}.{torch[1:]}.*",),
            why="each nvFuser line is built against one torch release and declares none",
        )
        for cuda in CUDA_LINES
        for torch in TORCH_LINES
    ),
    starter=Starter("cuda:device", "row_sum", EXPECT, REPRO),
    repositories={"nvfuser-*": "NVIDIA/Fuser"},
)
