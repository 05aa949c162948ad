"""What a culprit changed beneath the compiler: pins bumped by a commit (a real git repository made
here), the LLVM a real Triton wheel bundles, and the upstream compare view between two releases."""

from __future__ import annotations

import sys
from pathlib import Path

import git

from kregress.bisect.dependencies import bundled_llvm, compare_link, dependency_bumps


def test_a_commit_that_moves_a_pin_names_both_versions_and_one_that_does_not_names_none(
    tmp_path: Path,
) -> None:
    repo = git.Repo.init(tmp_path, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "llvm-hash.txt").write_text("1" * 40 + "\n")
    (tmp_path / "lib.cpp").write_text("int f();\n")
    repo.index.add(["cmake/llvm-hash.txt", "lib.cpp"])
    first = repo.index.commit("start").hexsha
    (tmp_path / "lib.cpp").write_text("int f(); int g();\n")
    repo.index.add(["lib.cpp"])
    plain = repo.index.commit("code only").hexsha
    (tmp_path / "cmake" / "llvm-hash.txt").write_text("2" * 40 + "\n")
    (tmp_path / "cmake" / "nvidia-toolchain-version.json").write_text('{"ptxas": "12.9.86"}\n')
    repo.index.add(["cmake/llvm-hash.txt", "cmake/nvidia-toolchain-version.json"])
    bump = repo.index.commit("Bump LLVM").hexsha
    assert dependency_bumps(tmp_path, first) == []  # no parent
    assert dependency_bumps(tmp_path, plain) == []
    assert dependency_bumps(tmp_path, bump) == [
        f"LLVM (cmake/llvm-hash.txt): {'1' * 12} → {'2' * 12}",
        "the NVIDIA toolchain (ptxas, cuobjdump) (cmake/nvidia-toolchain-version.json): "
        'none → {"ptxas": "12.9.86"}',
    ]


def test_the_installed_triton_wheel_names_its_llvm() -> None:
    said = bundled_llvm(Path(sys.prefix))
    assert said is not None and said.startswith("LLVM ") and said[5].isdigit(), said
    assert bundled_llvm(Path(sys.prefix) / "nowhere") is None


def test_the_compare_view_runs_oldest_first_and_skips_what_has_no_tag() -> None:
    link = compare_link("triton-lang/triton", "triton==3.8.0", "triton==3.7.1")  # a fix search's order
    assert link == "https://github.com/triton-lang/triton/compare/v3.7.1...v3.8.0"
    assert compare_link(None, "triton==3.7.1", "triton==3.8.0") is None
    assert compare_link("NVIDIA/Fuser", "nvfuser-cu128==0.2.36.dev20260301", "nvfuser-cu128==0.2.37") is None
