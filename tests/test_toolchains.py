"""Toolchain environments: built once, reused fast, never half-built, safe under concurrency."""

from __future__ import annotations

import base64
import hashlib
import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

from conftest import run_corpus
from kregress.jobs import child_environment
from kregress.toolchains import EnvironmentCache, Toolchain, ToolchainError


def make_wheel(
    folder: Path,
    name: str = "fakecc",
    version: str = "1.0",
    init: str | None = None,
    requires: tuple[str, ...] = (),
) -> Path:
    """A tiny real wheel: a stand-in compiler package whose module reports its version."""
    folder.mkdir(parents=True, exist_ok=True)
    needs = f"Name: {name}\nVersion: {version}\n" + "".join(f"Requires-Dist: {r}\n" for r in requires)
    files = {
        f"{name}/__init__.py": init if init is not None else f'__version__ = "{version}"\n',
        f"{name}-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\n{needs}",
        f"{name}-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
        "Tag: py3-none-any\n",
    }
    record = [
        f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b'=').decode()},"
        f"{len(text.encode())}"
        for path, text in files.items()
    ]
    files[f"{name}-{version}.dist-info/RECORD"] = (
        "\n".join([*record, f"{name}-{version}.dist-info/RECORD,,"]) + "\n"
    )
    wheel = folder / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture
def offline_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Installers look only in this folder (no package index), for uv and pip alike."""
    links = tmp_path / "links"
    links.mkdir()
    for variable, value in {"UV_FIND_LINKS": str(links), "UV_NO_INDEX": "1", "PIP_FIND_LINKS": str(links),
                            "PIP_NO_INDEX": "1", "UV_OFFLINE": "1"}.items():  # fmt: skip
        monkeypatch.setenv(variable, value)
    return links


def python_reports(environment_python: Path, module: str) -> str:
    code = f"import {module}; print({module}.__version__)"
    return subprocess.run(
        [str(environment_python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


def test_specs_parse_and_key(tmp_path: Path) -> None:
    one = Toolchain.parse("triton==3.2.0")
    assert one.requirements == ("triton==3.2.0",)
    assert Toolchain.parse("triton==3.2.0").key() == one.key()
    assert Toolchain.parse("triton==3.3.1").key() != one.key()
    wheel = make_wheel(tmp_path / "w")
    assert Toolchain.parse(str(wheel)).requirements == (str(wheel.resolve()),)


def test_bad_specs_name_themselves() -> None:
    with pytest.raises(
        ToolchainError, match=r"toolchain 'triton=3\.2': 'triton=3\.2' is neither a requirement"
    ):
        Toolchain.parse("triton=3.2")
    with pytest.raises(ToolchainError, match="empty toolchain spec"):
        Toolchain.parse("  ")


def test_old_releases_get_their_companions() -> None:
    assert Toolchain.parse("triton==3.1.0").companions() == ["numpy<2"]
    assert Toolchain.parse("triton==3.2.0").companions() == []
    assert Toolchain.parse("triton==3.0.0 numpy==1.26.4").companions() == []
    # measured: each TileLang release with the apache-tvm-ffi it imports with
    assert Toolchain.parse("tilelang==0.1.7").companions() == []  # its own pin (<=0.1.1) holds
    assert Toolchain.parse("tilelang==0.1.7.post3").companions() == ["apache-tvm-ffi==0.1.6"]
    assert Toolchain.parse("tilelang==0.1.9").companions() == ["apache-tvm-ffi==0.1.6"]
    assert Toolchain.parse("tilelang==0.1.11").companions() == ["apache-tvm-ffi==0.1.10"]
    assert Toolchain.parse("tilelang==0.1.12").companions() == []


def test_two_versions_two_environments_each_its_own(tmp_path: Path, offline_index: Path) -> None:
    make_wheel(offline_index, version="1.0")
    make_wheel(offline_index, version="2.0")
    cache = EnvironmentCache(tmp_path / "envs")
    old, new = cache.get(Toolchain.parse("fakecc==1.0")), cache.get(Toolchain.parse("fakecc==2.0"))
    assert old.root != new.root
    assert python_reports(old.python, "fakecc") == "1.0"
    assert python_reports(new.python, "fakecc") == "2.0"
    assert old.versions["python"] == sys.version.split()[0]


def test_an_environment_built_once_is_reused_not_built_again(tmp_path: Path, offline_index: Path) -> None:
    """Reuse is the cache's point: the second ask builds nothing (said by what it logs, not by a
    time that a loaded machine would stretch) and hands back the same folder."""
    make_wheel(offline_index)
    cache = EnvironmentCache(tmp_path / "envs")
    said: list[str] = []
    first = cache.get(Toolchain.parse("fakecc==1.0"), log=said.append)
    assert any("building toolchain environment" in line for line in said)
    said.clear()
    again = cache.get(Toolchain.parse("fakecc==1.0"), log=said.append)
    assert said == [] and again.root == first.root
    assert python_reports(again.python, "fakecc") == "1.0"


def test_torch_is_lent_not_installed(tmp_path: Path, offline_index: Path) -> None:
    make_wheel(offline_index)
    environment = EnvironmentCache(tmp_path / "envs").get(Toolchain.parse("fakecc==1.0"))
    assert "torch" in environment.meta["lent"]
    assert not list(environment.root.glob("lib/python*/site-packages/torch"))


def test_failed_install_leaves_nothing_and_a_retry_is_clean(tmp_path: Path, offline_index: Path) -> None:
    cache = EnvironmentCache(tmp_path / "envs")
    toolchain = Toolchain.parse("fakecc==1.0")
    with pytest.raises(ToolchainError) as failed:
        cache.get(toolchain)
    message = str(failed.value)
    assert message.startswith("toolchain 'fakecc==1.0': installing failed")
    assert "fakecc" in message.split("\n", 1)[1]  # the installer's own last lines
    assert cache.entries() == []
    assert not [p for p in (tmp_path / "envs").iterdir() if p.is_dir()]
    make_wheel(offline_index)  # the package appears: the same spec now installs
    assert python_reports(cache.get(toolchain).python, "fakecc") == "1.0"


def test_concurrent_requests_build_once(tmp_path: Path, offline_index: Path) -> None:
    make_wheel(offline_index)
    go = tmp_path / "go"
    script = (
        "import os, sys, time, pathlib\n"
        "from kregress.toolchains import EnvironmentCache, Toolchain\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.005)\n"
        f"built = []\nenv = EnvironmentCache(pathlib.Path({str(tmp_path / 'envs')!r}))"
        ".get(Toolchain.parse('fakecc==1.0'), log=built.append)\n"
        "print(env.root, any(m.startswith('building') for m in built))\n"
    )
    command = [sys.executable, "-c", script]
    racers = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(3)]
    time.sleep(1.0)  # all three are waiting at the starting line
    go.touch()
    results = [racer.communicate(timeout=120)[0].split() for racer in racers]
    assert len({root for root, _ in results}) == 1
    assert sorted(built for _, built in results) == ["False", "False", "True"]


def test_list_and_prune(tmp_path: Path, offline_index: Path) -> None:
    make_wheel(offline_index)
    cache = EnvironmentCache(tmp_path / "envs")
    environment = cache.get(Toolchain.parse("fakecc==1.0"))
    [entry] = cache.entries()
    assert entry["key"] == environment.root.name
    assert entry["toolchain"] == "fakecc==1.0"
    assert entry["bytes"] + entry["shared_bytes"] > 0
    assert cache.prune(older_than_days=1) == []
    old = time.time() - 3 * 86400
    os.utime(environment.root / "kregress-env.json", (old, old))
    assert cache.prune(older_than_days=2) == [environment.root.name]
    assert cache.entries() == []


def test_a_toolchain_that_cannot_install_stops_the_run(tmp_path: Path, offline_index: Path) -> None:
    """Exit 3 (infrastructure), the spec named, the installer's own last lines shown."""
    from conftest import run_corpus

    run = run_corpus(tmp_path, "kinds/vector_add", args=("--toolchain", "fakecc==9.9"),
                     env={"KREGRESS_CACHE_DIR": str(tmp_path / "cache")})  # fmt: skip
    assert run.returncode == 3
    assert "kregress: toolchain 'fakecc==9.9': installing failed" in run.output
    assert "fakecc" in run.output.split("installing failed", 1)[1]


def test_a_compiler_that_cannot_import_here_is_an_error(tmp_path: Path, offline_index: Path) -> None:
    """Like triton-xpu 3.0.0b2, which downloads at import: ERROR with the cause, never a SKIP (a
    nightly whose compiler stopped importing would otherwise look like a quiet night) nor a FAIL
    (bisect would blame the compiler's code)."""
    from conftest import run_corpus

    failing_import = "import urllib.error\nraise urllib.error.URLError('Name or service not known')\n"
    # A version no companion rule matches: triton < 3.2 would add numpy<2, which an offline index
    # can only serve from a package cache that an earlier run happened to fill.
    make_wheel(offline_index, name="triton", version="99.0.1", init=failing_import)
    args = ("--toolchain", "triton==99.0.1", "--target", "cuda:sm_90", "-k", "compiles")
    run = run_corpus(
        tmp_path, "kinds/vector_add", args=args, env={"KREGRESS_CACHE_DIR": str(tmp_path / "cache")}
    )
    item = run.item("vector_add::compiles-add[cuda:sm_90]")
    assert item["outcome"] == "ERROR", run.output[-3000:]
    assert item["message"].startswith(
        "the compiler does not work here: triton in this toolchain does not import here: URLError"
    )
    assert "Name or service not known" in run.output


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.0.0", "3.2.0", "3.5.1", "3.9.0"])
def test_cases_run_inside_real_triton_releases(tmp_path: Path, version: str) -> None:
    """Real Triton releases from PyPI, 3.0 to the newest: compiled for sm_90 and run on the
    interpreter inside each, every record naming the version that judged it."""
    from conftest import run_corpus

    run = run_corpus(tmp_path, "kinds/vector_add", args=("--toolchain", f"triton=={version}", "--target",
                     "cuda:sm_90", "--target", "cpu:interpreter", "-k", "compiles or numerics"))  # fmt: skip
    for name in ("vector_add::compiles-add[cuda:sm_90]", "vector_add::numerics-check_add[cpu:interpreter]"):
        item = run.item(name)
        assert item["outcome"] == "PASS", run.output[-3000:]
        assert item["toolchain"]["triton"] == version
    assert run.document["toolchain"] == f"triton=={version}"


def test_a_new_companion_rule_means_a_new_environment(monkeypatch) -> None:
    from kregress import toolchains

    before = Toolchain.parse("triton==3.2.0").key()
    rule = toolchains.Companion("triton", "==3.2.0", ("numpy<3",), why="a rule measured later")
    monkeypatch.setattr(toolchains, "COMPANIONS", (*toolchains.COMPANIONS, rule))
    assert Toolchain.parse("triton==3.2.0").companions() == ["numpy<3"]
    assert Toolchain.parse("triton==3.2.0").key() != before


def test_a_new_rule_for_native_libraries_means_a_new_environment(monkeypatch) -> None:
    """An environment built before a rule provided a library its release links (TileLang 0.1.7.post2's
    libnvrtc.so.13) is never reused under the new rule: it would SKIP "cannot load here"."""
    from kregress import toolchains

    tilelang, triton = Toolchain.parse("tilelang==0.1.7.post2"), Toolchain.parse("triton==3.2.0")
    before = tilelang.key(), tilelang.verdict_key(), triton.key()
    later = {"libnvJitLink.so.13": ("nvidia-nvjitlink>=13,<14", "nvidia/cu13/lib")}
    wheels = {**toolchains.CUDA_RUNTIME_WHEELS, **later}
    monkeypatch.setattr(toolchains, "CUDA_RUNTIME_WHEELS", wheels)
    assert tilelang.key() != before[0] and tilelang.verdict_key() != before[1]
    assert triton.key() == before[2]  # Triton links no library kregress provides


def test_an_environment_that_brings_its_torch_borrows_only_what_the_child_needs(
    tmp_path: Path, offline_index: Path
) -> None:
    """Naming torch, the environment lends nothing of kregress's (no torch, no numpy) but the modules
    a kind's measure() imports in the child (pydantic and its own), linked so the environment
    survives its rename into place."""
    make_wheel(offline_index)
    make_wheel(offline_index, name="torch", version="9.0")
    environment = EnvironmentCache(tmp_path / "envs").get(Toolchain.parse("fakecc==1.0 torch==9.0"))
    assert environment.meta["versions"]["torch"] == "9.0" and "numpy" not in environment.meta["lent"]
    interpreter = environment.interpreter()
    probe = "import kregress.kinds, pydantic, torch; print(torch.__version__, pydantic.VERSION)"
    env = child_environment(interpreter)
    done = subprocess.run([interpreter.python, "-c", probe], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "9.0"
    numpy = subprocess.run([interpreter.python, "-c", "import numpy"], env=env, capture_output=True)
    assert numpy.returncode != 0  # not lent


@pytest.mark.slow
@pytest.mark.parametrize("version", ["3.0.0", "3.3.1"])
def test_amd_targets_of_releases_that_link_externally_get_a_linker(tmp_path: Path, version: str) -> None:
    """Up to 3.4 a release links its AMD code object with ld.lld: the newest LLVM one here is handed
    to it (and reported in the item's toolchain), or, where the machine has none, the one kregress
    provisions from Debian's packages (the skip this test had on such a machine hid that); pointed
    at none (3.3.1), the items SKIP saying what to install."""
    args = ("--target", "hip:gfx942", "--toolchain", f"triton=={version}", "-k", "compiles")
    (item,) = run_corpus(tmp_path / "found", "kinds/vector_add", args=args).document["items"]
    assert item["outcome"] == "PASS", item["message"]
    from kregress import amd_linker

    if amd_linker.machine_linker():  # the machine's own is reported; one kregress provisioned is not yet
        assert item["toolchain"]["hip_lld"].endswith("/bin/ld.lld")
    else:
        assert amd_linker.linker()[0].endswith("/bin/ld.lld")  # type: ignore[union-attr]
    if version == "3.0.0":
        return  # 3.0.0 also looks for ld.lld on PATH itself
    none = {"TRITON_HIP_LLD_PATH": str(tmp_path / "no-such-ld.lld")}
    (item,) = run_corpus(tmp_path / "none", "kinds/vector_add", args=args, env=none).document["items"]
    assert item["outcome"] == "SKIP" and "apt-get install lld-19" in item["message"], item["message"]


def test_a_verdict_outlives_the_folder_its_environment_lends_from(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fresh clone's kregress lends from another folder: a new environment (its .pth would point
    at the old one), but the same verdicts; a different lent version is a different verdict."""
    from kregress import toolchains

    spec = toolchains.Toolchain.parse("triton==3.2.0")
    key, verdict = spec.key(), spec.verdict_key()
    monkeypatch.setattr(toolchains, "base_layer_paths", lambda: ["/elsewhere/.venv/lib/site-packages"])
    assert spec.key() != key
    assert spec.verdict_key() == verdict
    monkeypatch.setattr(toolchains, "distribution_version", lambda name: "0.0-other")
    assert spec.verdict_key() != verdict


def test_a_dependency_upgraded_under_the_same_requirement_is_judged_again(
    tmp_path: Path, offline_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """fakecc==1.0 leaves its dependency unpinned: its environment built again after fakedep 1.1
    came out holds other code under the same requirement, so what the memo or the ledger remember
    of the old one is judged again, never read back (the judgement's key is the same)."""
    from kregress.bisect.triage.ledger import LedgerEntry
    from kregress.judging_service import CaseRun, Memo, Observation, installed_now, judgement_key

    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "cache"))
    make_wheel(offline_index, name="fakedep", version="1.0")
    make_wheel(offline_index, version="1.0", requires=("fakedep",))
    case = tmp_path / "corpus" / "some_case"
    case.mkdir(parents=True)
    (case / "case.toml").write_text("title = 'x'\n")
    run, spec = CaseRun(tmp_path / "corpus", "some_case", None, "cpu:interpreter"), "fakecc==1.0"
    memo = Memo(tmp_path / "memo.json")
    assert installed_now(run, spec) is None  # not built here: nothing to hold a judgement to
    EnvironmentCache().get(Toolchain.parse(spec))
    before = installed_now(run, spec)
    assert before == {"fakecc": "1.0", "fakedep": "1.0"}
    seen = Observation.from_parts({"numerics[cpu:interpreter]": "FAIL"}, installed=before)
    memo.add(judgement_key(run, spec), seen)
    entry = LedgerEntry.of(run, spec, seen)
    assert memo.get(run, spec) == [seen] and entry.observation().judged_with(before)

    key = judgement_key(run, spec)
    EnvironmentCache().prune(keys=[Toolchain.parse(spec).key()])
    make_wheel(offline_index, name="fakedep", version="1.1")
    EnvironmentCache().get(Toolchain.parse(spec))
    now = installed_now(run, spec)
    assert now == {"fakecc": "1.0", "fakedep": "1.1"} and judgement_key(run, spec) == key
    assert memo.get(run, spec) == []
    assert not entry.observation().judged_with(now)
    assert entry.observation().installed_change(now) == "fakedep 1.0 -> 1.1"


def test_the_environment_a_parent_resolved_is_used_by_its_child_as_it_is(
    tmp_path: Path, offline_index: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bisect's point is resolved once: the pytest it starts takes the environment handed to it
    (KREGRESS_ENVIRONMENT) and builds nothing, unless it is another toolchain's."""
    from kregress.item import toolchain_interpreter
    from kregress.toolchains import HANDED_ENVIRONMENT

    make_wheel(offline_index, version="1.0")
    make_wheel(offline_index, version="2.0")
    handed = EnvironmentCache(tmp_path / "parent").get(Toolchain.parse("fakecc==1.0"))
    monkeypatch.setenv("KREGRESS_CACHE_DIR", str(tmp_path / "child"))
    monkeypatch.setenv(HANDED_ENVIRONMENT, str(handed.root))
    assert toolchain_interpreter("fakecc==1.0", print).python == str(handed.python)
    assert not (tmp_path / "child").exists()
    other = toolchain_interpreter("fakecc==2.0", print)  # not what was handed: resolved here
    assert other.python != str(handed.python) and (tmp_path / "child" / "envs").is_dir()
