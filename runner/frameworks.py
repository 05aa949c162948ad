"""What each framework can be judged on, declared once: the modules its repros import and the
targets its adapter builds. The plugin plans items from this and the child tells a missing
framework (SKIP) from a broken repro (ERROR) with it; nothing else branches on a framework's name.

Stdlib only: the child imports it inside toolchain environments that hold a compiler, not
kregress's own dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Framework:
    name: str
    label: str  # as people write it
    modules: tuple[str, ...] = ()  # a repro that cannot import one of these cannot run here: SKIP
    target_kinds: frozenset[str] = frozenset({"interpreter", "compile", "device"})
    unsupported_kinds: str = ""  # why the other target kinds do not apply
    compile_backends: frozenset[str] = field(default_factory=frozenset)  # empty: every backend

    def not_applicable(self, kind: str) -> str | None:
        """Why a target of this kind does not apply at all (not collected), or None."""
        return None if kind in self.target_kinds else self.unsupported_kinds

    def cannot_build(self, kind: str, backend: str, target: str) -> str | None:
        """Why a compile target of a backend the adapter does not build SKIPs, or None."""
        if kind == "compile" and self.compile_backends and backend not in self.compile_backends:
            shown = ", ".join(sorted(b.upper() for b in self.compile_backends))
            return f"the {self.label} adapter builds {shown} targets only, not {target}"
        return None


FRAMEWORKS = {
    framework.name: framework
    for framework in (
        Framework("triton", "Triton"),
        Framework(
            "tilelang",
            "TileLang",
            modules=("tilelang", "tvm"),
            target_kinds=frozenset({"compile", "device"}),
            unsupported_kinds="TileLang has no CPU interpreter",
            compile_backends=frozenset({"cuda"}),
        ),
        Framework(
            "nvfuser",
            "nvFuser",
            modules=("nvfuser",),
            target_kinds=frozenset({"device"}),
            unsupported_kinds="nvFuser compiles only at run time on a CUDA device",
        ),
    )
}
