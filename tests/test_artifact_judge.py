"""The artifact judge on measured values: `where` scopes, `{arch}`/`{property}` templates, and
properties a target cannot have (a SKIP with the reason, never a silent pass)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from kregress.adapters import MeasurementError, cubin_arch, cubin_figures, ptxas_figures
from kregress.adapters.triton_aot import ocloc_front
from kregress.child_results import ConfigResult
from kregress.judge import Outcome, Verdict
from kregress.kinds.artifact import Artifact
from kregress.matrix import load_matrix

DG2 = load_matrix().target("xpu:dg2")
SM90 = load_matrix().target("cuda:sm_90")


def judge_artifact(expectation: Artifact, target, configs: list[ConfigResult]) -> Verdict:
    return expectation.judge_configs(target, configs, Path("."))


def artifact(**fields) -> Artifact:
    return Artifact(kind="artifact", kernel="tile", **fields)


def config(label: str, options: dict, unavailable: dict | None = None, **artifacts) -> ConfigResult:
    return ConfigResult(label, options, artifacts=artifacts, unavailable=unavailable or {})


XPU_CONFIGS = [
    config("large", {"grf_mode": "large"}, build_flags="-cl-intel-256-GRF-per-thread", native_device="pvc"),
    config("small", {"grf_mode": "small"}, build_flags="-cl-intel-128-GRF-per-thread", native_device="dg2"),
]


def test_where_scopes_the_check_to_matching_configs() -> None:
    holds = artifact(property="build_flags", where={"grf_mode": "small"}, contains="128-GRF")
    assert judge_artifact(holds, DG2, XPU_CONFIGS).outcome == Outcome.PASS
    broken = artifact(property="build_flags", where={"grf_mode": "large"}, contains="128-GRF")
    verdict = judge_artifact(broken, DG2, XPU_CONFIGS)
    assert verdict.outcome == Outcome.FAIL
    assert "'-cl-intel-256-GRF-per-thread' does not contain '128-GRF'" in verdict.message
    none = judge_artifact(
        artifact(property="build_flags", where={"grf_mode": "auto"}, equals=""), DG2, XPU_CONFIGS
    )
    assert none.outcome == Outcome.SKIP and "no config of tile on xpu:dg2 has grf_mode=auto" in none.message


def test_arch_template_is_the_targets_arch() -> None:
    verdict = judge_artifact(artifact(property="native_device", equals="{arch}"), DG2, XPU_CONFIGS)
    assert verdict.outcome == Outcome.FAIL
    assert "[large] native_device is 'pvc', expected 'dg2' (= {arch})" in verdict.message
    assert "[small]" not in verdict.message


def test_arch_template_on_a_device_target_is_the_devices_own() -> None:
    """The matrix cannot know which GPU a device target runs on: the job records it."""
    device = load_matrix().target("cuda:device")
    configs = [config("default", {}, arch="sm_90a", binary_arch="sm_90", device_arch="sm_90")]
    assert (
        judge_artifact(artifact(property="binary_arch", equals="{arch}"), device, configs).outcome
        == Outcome.PASS
    )
    assert (
        judge_artifact(artifact(property="arch", contains="{arch}"), device, configs).outcome == Outcome.PASS
    )
    configs[0].artifacts["binary_arch"] = "sm_80"
    failed = judge_artifact(artifact(property="binary_arch", equals="{arch}"), device, configs)
    assert failed.outcome == Outcome.FAIL and "expected 'sm_90' (= {arch})" in failed.message


def test_property_template_holds_one_measurement_against_another() -> None:
    configs = [config("a", {}, binary_registers=40, registers=40, arch="sm_90a"),
               config("b", {}, binary_registers=38, registers=40, arch="sm_90a")]  # fmt: skip
    verdict = judge_artifact(artifact(property="binary_registers", equals="{registers}"), SM90, configs)
    assert verdict.outcome == Outcome.FAIL
    assert verdict.message.endswith("[b] binary_registers is 38, expected 40 (= {registers})")
    # `{arch}` is the target's even when the artifacts have an `arch` of their own.
    assert judge_artifact(artifact(property="arch", contains="{arch}"), SM90, configs).outcome == Outcome.PASS
    unknown = judge_artifact(artifact(property="binary_registers", equals="{regs}"), SM90, configs)
    assert unknown.outcome == Outcome.ERROR and "{regs}" in unknown.message


def test_a_property_the_target_cannot_have_skips_with_its_reason() -> None:
    why = {"n_regs": "n_regs is set by the driver when it loads the binary"}
    configs = [config("a", {}, why, n_regs=None)]
    verdict = judge_artifact(artifact(property="n_regs", equals=256), DG2, configs)
    assert verdict.outcome == Outcome.SKIP and "set by the driver" in verdict.message


@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_cubin_figures_agree_with_ptxas(arch: str, tmp_path: Path) -> None:
    """The register count the driver reads from the cubin is the one `ptxas -v` prints."""
    from kregress.adapters.triton_aot import ptxas_path

    (tmp_path / "compile_scale.py").write_text(f"""
import json, torch, triton, triton.language as tl
from kregress.adapters.triton_aot import compiling_for, gpu_target
@triton.jit
def scale(x, y, n, B: tl.constexpr):
    o = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(y + o, tl.load(x + o, mask=o < n) * 2, mask=o < n)
with compiling_for(gpu_target("cuda", "{arch}", 32)):
    c = scale.warmup(torch.empty(16), torch.empty(16), 16, B=128, grid=(1,))
open("out.ptx", "w").write(c.asm["ptx"]); open("out.cubin", "wb").write(c.asm["cubin"])
""")
    subprocess.run([sys.executable, "compile_scale.py"], cwd=tmp_path, check=True,
                   env={**os.environ, "TRITON_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    figures = cubin_figures((tmp_path / "out.cubin").read_bytes(), "scale")
    assert figures["arch"] == arch
    number = int(arch.removeprefix("sm_"))
    assert (
        figures["registers"]
        == ptxas_figures(ptxas_path(number), (tmp_path / "out.ptx").read_text(), arch)["registers"]
    )


PTX_STORE_SEVEN = """
.version 7.0
.target sm_80
.address_size 64
.visible .entry store_seven(.param .u64 out)
{
    .reg .b64 %rd<2>;
    .reg .b32 %r<2>;
    ld.param.u64 %rd1, [out];
    mov.u32 %r1, 7;
    st.global.u32 [%rd1], %r1;
    ret;
}
"""


def test_ptxas_figures_are_kept_by_ptxas_gpu_and_ptx(tmp_path: Path, monkeypatch) -> None:
    """A second ask for the same PTX, GPU and ptxas reads the kept figures (a planted record shows
    it is read); another PTX, another GPU name or another ptxas file runs ptxas again."""
    from kregress.adapters.triton_aot import ptxas_path

    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    ptxas = ptxas_path(80)
    first = ptxas_figures(ptxas, PTX_STORE_SEVEN, "sm_80")
    assert first["spill_bytes"] == 0 and first["registers"] > 0
    (record,) = (tmp_path / "cache" / "ptxas-figures").glob("*.json")
    planted = {**first, "registers": 999}
    record.write_text(json.dumps(planted))
    assert ptxas_figures(ptxas, PTX_STORE_SEVEN, "sm_80") == planted

    assert ptxas_figures(ptxas, PTX_STORE_SEVEN + "\n// another kernel text\n", "sm_80") == first
    assert ptxas_figures(ptxas, PTX_STORE_SEVEN, "sm_90")["registers"] != 999
    copy = tmp_path / "ptxas"
    shutil.copy2(ptxas, copy)
    os.utime(copy, ns=(1, 1))
    assert ptxas_figures(str(copy), PTX_STORE_SEVEN, "sm_80") == first
    assert len(list((tmp_path / "cache" / "ptxas-figures").glob("*.json"))) == 4


def test_ocloc_front_records_and_stands_in_when_no_ocloc_builds(tmp_path: Path, monkeypatch) -> None:
    """Without a real ocloc the front records the call and leaves the SPIR-V; with one that builds
    native code it passes the call through."""
    spirv = b"\x03\x02\x23\x07" + bytes(60)
    for variable in ("KREGRESS_OCLOC_LOG", "KREGRESS_OCLOC_REAL"):  # restored after the test
        monkeypatch.setenv(variable, "")
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("KREGRESS_OCLOC_CANDIDATES", raising=False)
    monkeypatch.delenv("KREGRESS_OCLOC_PROVISIONED", raising=False)
    (tmp_path / "none").mkdir()
    front = ocloc_front(tmp_path / "none", "dg2", spirv)
    assert front.chosen.why_not == "there is no ocloc on this machine"
    (tmp_path / "in.spv").write_bytes(spirv)
    args = ["compile", "-file", "in.spv", "-o", "out.bin", "-spirv_input", "-device", "pvc", "-options", "-x"]
    subprocess.run([str(front.folder / "ocloc"), *args], cwd=tmp_path, check=True)
    assert front.invocations() == [args]
    assert (tmp_path / "out.bin").read_bytes() == spirv

    real = tmp_path / "bin" / "ocloc"
    real.parent.mkdir()
    real.write_text(
        '#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = -o ] && printf \'\\177ELF\' > "$2"; shift; done\n'
    )
    real.chmod(real.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(real.parent))
    (tmp_path / "real").mkdir()
    front = ocloc_front(tmp_path / "real", "dg2", spirv)
    assert front.chosen.why_not is None and front.chosen.path == str(real)
    subprocess.run([str(front.folder / "ocloc"), *args], cwd=tmp_path, check=True)
    assert (tmp_path / "out.bin").read_bytes() == b"\x7fELF"


def elf_header(osabi: int, abi_version: int, flags: int) -> bytes:
    header = bytearray(64)
    header[:4], header[7], header[8] = b"\x7fELF", osabi, abi_version
    header[0x30:0x34] = flags.to_bytes(4, "little")
    return bytes(header)


@pytest.mark.parametrize(
    ("osabi", "abi_version", "flags", "arch"),
    [
        (0x33, 7, 0x5A0D5A, "sm_90"),  # ptxas of CUDA 12.x (Triton 3.6-3.8, sm_90)
        (0x33, 7, 0x500550, "sm_80"),  # the same ptxas for sm_80 (Triton 3.9 too)
        (0x41, 8, 0x9005A04, "sm_90"),  # CUDA 13's ptxas, which Triton 3.9 uses for sm_90: was 'sm_4'
    ],
)
def test_cubin_arch_under_both_elf_abis(osabi: int, abi_version: int, flags: int, arch: str) -> None:
    """The headers are those of real cubins of each Triton release (measured with its ptxas)."""
    assert cubin_arch(elf_header(osabi, abi_version, flags)) == arch


def test_a_cubin_abi_kregress_does_not_know_is_a_measurement_error() -> None:
    with pytest.raises(MeasurementError, match=r"binary_arch: .*OS/ABI 0x42, ABI version 9"):
        cubin_arch(elf_header(0x42, 9, 0x5A))
