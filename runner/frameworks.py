"""What each framework can be judged on, declared once: the modules its repros import, its
adapter, the targets that adapter builds and the resource figures it reads on each backend. The
plugin plans items from this, the child finds the adapter and tells a missing framework (SKIP)
from a broken repro (ERROR) with it; nothing else branches on a framework's name.

Stdlib only: the child imports it inside toolchain environments that hold a compiler, not
kregress's own dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PTXAS_FIGURES = frozenset({"registers", "stack_bytes", "spill_bytes", "scratch_bytes"})
PER_BLOCK = frozenset({"shared_bytes", "scratch_bytes_per_block"})  # from the compiled kernel's launch


@dataclass(frozen=True)
class Framework:
    name: str
    label: str  # as people write it
    modules: tuple[str, ...] = ()  # a repro that cannot import one of these cannot run here: SKIP
    target_kinds: frozenset[str] = frozenset({"interpreter", "compile", "device"})
    unsupported_kinds: str = ""  # why the other target kinds do not apply
    compile_backends: frozenset[str] = field(default_factory=frozenset)  # empty: every backend
    adapter: str | None = None  # module that compiles ahead of time; None: only at run time
    no_adapter: str = ""  # why there is none
    # backend -> the resource figures the adapter reads there (at best: a figure may still be
    # unavailable on one machine, and the child says why)
    figures: dict[str, frozenset[str]] = field(default_factory=dict)
    loaded_binaries: bool = False  # artifacts can be read from the binary loaded on a device

    def not_applicable(self, kind: str) -> str | None:
        """Why a target of this kind does not apply at all (not collected), or None."""
        return None if kind in self.target_kinds else self.unsupported_kinds

    def cannot_build(self, kind: str, backend: str, target: str) -> str | None:
        """Why a compile target of a backend the adapter does not build SKIPs, or None."""
        if kind == "compile" and self.compile_backends and backend not in self.compile_backends:
            shown = ", ".join(sorted(b.upper() for b in self.compile_backends))
            return f"the {self.label} adapter builds {shown} targets only, not {target}"
        return None

    def cannot_measure(self, figure: str, backend: str) -> str | None:
        """Why this framework's adapter never reads `figure` on `backend` (a SKIP), or None."""
        if figure in self.figures.get(backend, frozenset()):
            return None
        return f"the {self.label} adapter does not read {figure} on {backend} targets"


FRAMEWORKS = {
    framework.name: framework
    for framework in (
        Framework(
            "triton",
            "Triton",
            adapter="kregress.adapters.triton_aot",
            figures={
                "cuda": PTXAS_FIGURES | PER_BLOCK,  # ptxas -v on the PTX
                "hip": PTXAS_FIGURES | PER_BLOCK,  # the AMDGCN kernel descriptor
                "xpu": PTXAS_FIGURES - {"stack_bytes"} | PER_BLOCK,  # IGC's figures from ocloc
            },
            loaded_binaries=True,
        ),
        Framework(
            "tilelang",
            "TileLang",
            modules=("tilelang", "tvm"),
            target_kinds=frozenset({"compile", "device"}),
            unsupported_kinds="TileLang has no CPU interpreter",
            compile_backends=frozenset({"cuda"}),
            adapter="kregress.adapters.tilelang_aot",
            figures={"cuda": PTXAS_FIGURES},
        ),
        Framework(
            "nvfuser",
            "nvFuser",
            modules=("nvfuser",),
            target_kinds=frozenset({"device"}),
            unsupported_kinds="nvFuser compiles only at run time on a CUDA device",
            no_adapter="nvFuser compiles at run time on a device, and its binary wheels come only "
            "from NVIDIA's own index, which this machine cannot reach",
        ),
    )
}
