"""The memo answers only for the same case files and the same environment: an edited manifest or
repro, or a release beside other lent packages, is judged afresh (kregress's own code: test_judging_code)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kregress import toolchains
from kregress.judging_service import CaseRun, Memo, Observation, judgement_key


def test_memo_is_keyed_by_the_case_files_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))  # no environment built here
    case = a_case(tmp_path, "scalar_mask")
    run = CaseRun(tmp_path / "corpus", "scalar_mask", "numerics", "cpu:interpreter")
    memo = Memo(tmp_path / "memo.json")
    seen = Observation.from_parts({"numerics[cpu:interpreter]": "ERROR"})
    memo.add(judgement_key(run, "tilelang==0.1.9"), seen)
    assert memo.get(run, "tilelang==0.1.9") == [seen]
    assert memo.get(run, "tilelang==0.1.8") == []
    assert memo.get(run, None) == []  # kregress's own environment
    with monkeypatch.context() as patched:  # what the environment lends it changed (another numpy)
        patched.setattr(toolchains, "distribution_version", lambda name: "0.0.1")
        assert memo.get(run, "tilelang==0.1.9") == []
    assert memo.get(run, "tilelang==0.1.9") == [seen]
    (case / "case.toml").write_text("title = 'x'\n[[known_bad]]\n")
    assert memo.get(run, "tilelang==0.1.9") == []  # the manifest changed


def a_case(tmp_path: Path, name: str) -> Path:
    """A case with nothing in it but files whose digest keys its judgements."""
    case = tmp_path / "corpus" / name
    case.mkdir(parents=True)
    (case / "case.toml").write_text("title = 'x'\n")
    (case / "repro.py").write_text("X = 1\n")
    return case


def test_a_judgement_on_an_amd_target_keys_on_the_linker_this_machine_has(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Triton up to 3.4 links AMD code with an external ld.lld; without one those items SKIP, so a
    judgement made without it (or with another) is not reused where one is found."""
    from kregress.amd_linker import identity as hip_linker_identity

    a_case(tmp_path, "amd_case")
    hip = CaseRun(tmp_path / "corpus", "amd_case", None, "hip:gfx942")
    cuda = CaseRun(tmp_path / "corpus", "amd_case", None, "cuda:sm_90")
    keys = []
    for version in ("LLD 19.1.7", "LLD 14.0.6"):
        linker = tmp_path / f"ld.lld-{version.split()[1]}"
        linker.write_text(f"#!/bin/sh\necho '{version}'\n")
        linker.chmod(0o755)
        monkeypatch.setenv("TRITON_HIP_LLD_PATH", str(linker))
        hip_linker_identity.cache_clear()
        keys.append((judgement_key(hip, "triton==3.2.0"), judgement_key(cuda, "triton==3.2.0")))
    hip_linker_identity.cache_clear()
    assert keys[0][0] != keys[1][0] and "LLD 14.0.6" in keys[1][0]
    assert keys[0][1] == keys[1][1]  # a CUDA target links nothing with it


def test_a_judgement_on_an_xpu_target_keys_on_the_igc_packages_it_built_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Intel's ocloc and IGC come from Debian's development suite, unpinned: a new IGC is judged
    again, never read back as the old verdict (native figures and build failures are IGC's)."""
    import json

    from kregress import xpu_native

    a_case(tmp_path, "xpu_case")
    xpu = CaseRun(tmp_path / "corpus", "xpu_case", None, "xpu:bmg")
    cuda = CaseRun(tmp_path / "corpus", "xpu_case", None, "cuda:sm_90")
    keys = []
    for igc in ("2.40.14-1", "2.41.0-1"):
        versions = {"intel-ocloc": "26.27.39122.14-1", "libigc2": igc}
        monkeypatch.setattr(xpu_native, "provision", lambda versions=versions: {"versions": versions})
        monkeypatch.setattr(xpu_native.shutil, "which", lambda name: None)
        xpu_native.identity.cache_clear()
        keys.append((judgement_key(xpu, "triton-xpu==3.3.0b1"), judgement_key(cuda, "triton==3.6.0")))
    xpu_native.identity.cache_clear()
    assert keys[0][0] != keys[1][0]
    assert json.loads(json.loads(keys[1][0])["machine_tool"])["libigc2"] == "2.41.0-1"
    assert keys[0][1] == keys[1][1]  # a CUDA target builds nothing with IGC


def test_a_fix_search_over_a_whole_case_waits_until_every_expectation_holds() -> None:
    """Fixed ("bad" for the search) only where the whole case holds: a release that made the bug's
    check pass by breaking the case's positive control is still broken."""
    from kregress.bisect.search import PointVerdict
    from kregress.judging_service import observation_verdict

    def seen(**outcomes: str) -> Observation:
        return Observation.from_parts(
            outcomes={f"{name.replace('_', '-')}[cuda:sm_90]": o for name, o in outcomes.items()}
        )

    bug_shows = seen(no_vector="XFAIL", vector_contiguous="PASS")
    control_broke = seen(no_vector="PASS", vector_contiguous="FAIL")
    holds = seen(no_vector="PASS", vector_contiguous="PASS", numerics="SKIP")
    nothing_ran = seen(no_vector="SKIP")
    whole = [
        observation_verdict(o, "pass", whole_case=True)
        for o in (bug_shows, control_broke, holds, nothing_ran)
    ]
    assert whole == [PointVerdict.GOOD, PointVerdict.GOOD, PointVerdict.BAD, PointVerdict.SKIP]
    # Narrowed to items (as with -e), any passing item reads as fixed: what the whole-case rule prevents.
    assert observation_verdict(control_broke, "pass") == PointVerdict.BAD
    assert observation_verdict(bug_shows, "fail", whole_case=True) == PointVerdict.BAD


def test_an_unstable_perf_item_never_decides_a_bisect_step() -> None:
    """Noise is not a regression: UNSTABLE reads as "cannot tell" for every kind of search."""
    from kregress.bisect.search import PointVerdict
    from kregress.judging_service import REGRESSIONS, observation_verdict

    unstable = Observation.from_parts(outcomes={"perf-1k[cuda:device]": "UNSTABLE"})
    for regress in REGRESSIONS:
        assert observation_verdict(unstable, regress) == PointVerdict.SKIP, regress
    assert observation_verdict(unstable, "pass", whole_case=True) == PointVerdict.SKIP
    beside = Observation.from_parts(
        outcomes={"perf-1k[cuda:device]": "UNSTABLE", "numerics[cuda:device]": "FAIL"}
    )
    assert observation_verdict(beside, "fail") == PointVerdict.BAD


def test_a_judgement_on_a_device_keys_on_the_gpu_model_and_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A device verdict holds for the GPU and driver that gave it: another model, or a new driver,
    is judged again; a compile target's key does not depend on the machine's GPU."""
    from kregress import devices, judging_service

    a_case(tmp_path, "gpu_case")
    device = CaseRun(tmp_path / "corpus", "gpu_case", None, "cuda:device")
    compiled = CaseRun(tmp_path / "corpus", "gpu_case", None, "cuda:sm_90")
    keys = []
    for name, driver in (("NVIDIA H100 80GB HBM3", "580.65"), ("NVIDIA H200", "580.65"),
                         ("NVIDIA H200", "590.10")):  # fmt: skip
        shown = {"index": "0", "name": name, "driver": driver, "uuid": "GPU-0"}
        monkeypatch.setattr(devices, "describe", lambda backend, env, shown=shown: shown)
        judging_service.device_identity.cache_clear()
        keys.append((judgement_key(device, "triton==3.6.0"), judgement_key(compiled, "triton==3.6.0")))
    judging_service.device_identity.cache_clear()
    assert len({k for k, _ in keys}) == 3 and "NVIDIA H200, driver 590.10" in keys[2][0]
    assert len({k for _, k in keys}) == 1
