"""The build cache on a compiler built for real (a C library compiled by cc, Python parts, a pin):
each commit built at most once, a commit that changes only Python made from a kept build and equal
to what a build gives, failures kept, LRU pruning, concurrent builders safe; `kregress build`."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
from compiled_fixture import BASE, CORE, RECIPE, SCALING, Commit, add_commit, make_kcc_repo

from kregress.builds import BuildCache, BuildFailed, BuildRecipe
from kregress.matrix import Matrix, load_matrix

PYTHON_ONLY = Commit(
    "Scale twice", {"kcc/scaling.py": SCALING + "\n\ndef twice(x):\n    return scale(scale(x))\n"}
)
DOCS_ONLY = Commit("Document kcc", {"docs/notes.md": "kcc scales\n", "README.md": "kcc, a compiler\n"})
COMPILED = Commit("Factor 3", {"csrc/core.c": CORE % "3.0"})
PIN = Commit("Move the pinned LLVM", {"deps/pin.txt": "llvm-2222\n"})
NEW_MODULE = Commit("A module more", {"kcc/extra.py": "X = 1\n"})


def recipe(url: str = "file:///unused") -> BuildRecipe:
    matrix_text = "[targets.'cpu:interpreter']\nkind = 'interpreter'\nbackend = 'cpu'\n[backends.cpu]\n"
    matrix_text += "targets = ['cpu:interpreter']\n" + RECIPE.format(url=url)
    return BuildRecipe.of(Matrix.model_validate(toml_loads(matrix_text)).repositories["kcc"])


def toml_loads(text: str) -> dict:
    import tomllib

    return tomllib.loads(text)


def builds_run(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def wheel_files(spec: str) -> dict[str, bytes]:
    (wheel,) = spec.split()
    with zipfile.ZipFile(wheel) as archive:
        return {n: archive.read(n) for n in archive.namelist() if not n.endswith("RECORD")}


@pytest.fixture
def kcc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KCC_BUILD_LOG", str(tmp_path / "builds.log"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{__import__('os').environ['PATH']}")
    repo, (base,) = make_kcc_repo(tmp_path / "kcc", [BASE])
    return repo, base, tmp_path / "builds.log"


@pytest.mark.slow  # twelve real builds
def test_each_commit_is_built_once_and_python_only_commits_are_made_from_a_kept_build(
    kcc, tmp_path: Path
) -> None:
    repo, base, log = kcc
    shas = [base] + [add_commit(repo, c) for c in (PYTHON_ONLY, DOCS_ONLY, COMPILED, PIN, NEW_MODULE)]
    cache = BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc")
    specs = [cache.build(sha) for sha in shas]
    # Real builds: the first commit, the compiled change and the pin; the rest are made from them.
    assert builds_run(log) == 3
    made = [cache.record(sha)["made_from"] for sha in shas]
    assert made == [None, shas[0], shas[1], None, None, shas[4]]
    assert [cache.record(sha)["uncompiled_files"] for sha in shas] == [0, 1, 0, 0, 0, 1]
    # Again, across nights and bisects: nothing is built twice.
    assert [cache.build(sha) for sha in shas] == specs
    assert builds_run(log) == 3
    # What was made from a kept build is exactly what a build of that commit gives (a cache that
    # knows no uncompiled files builds every commit).
    fresh = BuildCache(
        Path(repo.working_dir), BuildRecipe(recipe().build_cmd), tmp_path / "fresh", name="kcc"
    )
    for sha, spec in zip(shas, specs, strict=True):
        assert wheel_files(spec) == wheel_files(fresh.build(sha)), sha
    assert builds_run(log) == 3 + 6


def test_a_made_wheel_installs_and_runs_the_commits_python(kcc, tmp_path: Path) -> None:
    repo, base, _ = kcc
    python_only = add_commit(repo, PYTHON_ONLY)
    cache = BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc")
    cache.build(base)
    spec = cache.build(python_only)
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target),
                    spec], check=True)  # fmt: skip
    code = "import kcc.scaling as s; print(s.twice(1.5))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=target, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "6.0"


def test_a_failed_build_is_kept_and_not_tried_again(kcc, tmp_path: Path) -> None:
    repo, _, log = kcc
    broken = add_commit(repo, Commit("Break the C", {"csrc/core.c": "double factor(void) { return }\n"}))
    cache = BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc")
    with pytest.raises(BuildFailed, match=r"core\.c"):
        cache.build(broken)
    with pytest.raises(BuildFailed, match=r"core\.c"):
        cache.build(broken)
    assert cache.failed(broken) and builds_run(log) == 0


def test_concurrent_builders_build_a_commit_once(kcc, tmp_path: Path) -> None:
    repo, base, log = kcc
    specs: list[str] = []
    caches = [BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc") for _ in range(3)]
    threads = [threading.Thread(target=lambda c=c: specs.append(c.build(base))) for c in caches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(specs)) == 1 and len(specs) == 3
    assert builds_run(log) == 1


def test_least_recently_used_builds_are_pruned_to_the_bound(kcc, tmp_path: Path) -> None:
    repo, base, _ = kcc
    first, second = add_commit(repo, COMPILED), add_commit(repo, PIN)
    cache = BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc")
    for sha in (base, first, second):
        cache.build(sha)
    cache.build(base)  # used again: now the newest
    one = sum(p.stat().st_size for p in cache.folder(base).rglob("*") if p.is_file())
    removed = cache.prune(limit_bytes=int(one * 2.5))
    assert removed == [first]
    assert cache.built(base) and cache.built(second) and cache.built(first) is None


def test_kregress_build_pins_a_head_and_takes_the_kept_build(kcc, tmp_path: Path) -> None:
    repo, base, log = kcc
    matrix = tmp_path / "matrix.toml"
    text = (Path(__file__).parents[1] / "runner" / "matrix.toml").read_text()
    matrix.write_text(text + RECIPE.format(url=Path(repo.working_dir).as_uri()))
    load_matrix(matrix)
    env = {**__import__("os").environ, "KREGRESS_CACHE_DIR": str(tmp_path / "kcache")}
    command = [sys.executable, "-m", "kregress.cli", "--matrix", str(matrix), "build", "kcc@main", "--json"]
    first = json.loads(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)
    assert first["commit"] == base and first["made"] == "built"
    add_commit(repo, PYTHON_ONLY)
    second = json.loads(subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout)
    assert second["commit"] == repo.head.commit.hexsha
    assert second["made"] == f"built from {base[:12]}'s build + 1 uncompiled files"
    assert builds_run(log) == 1
    assert (
        json.loads((Path(second["toolchain"]).parent / "kregress-build.json").read_text())["commit"]
        == (second["commit"])
    )
    wrong = subprocess.run([*command[:-2], "nope@main"], env=env, capture_output=True, text=True, check=False)
    assert wrong.returncode == 64 and "[repositories.nope]" in wrong.stderr


@pytest.mark.slow
def test_a_judgement_under_a_built_commit_names_the_commit(kcc, tmp_path: Path) -> None:
    """The record of every item judged under a build says which commit it was (history, the page and
    the reports read it from there)."""
    from conftest import run_corpus

    repo, base, _ = kcc
    cache = BuildCache(Path(repo.working_dir), recipe(), tmp_path / "cache", name="kcc")
    spec = cache.build(base)
    env = {"KREGRESS_CACHE_DIR": str(tmp_path / "kcache")}
    args = ("--target", "cpu:interpreter", "--toolchain", spec)
    run = run_corpus(tmp_path / "run", "builds/kcc_factor", args=args, env=env)
    item = run.item("kcc_factor::numerics[cpu:interpreter]")
    assert item["outcome"] == "PASS", item["message"]
    assert item["toolchain"]["kcc commit"] == base
    assert item["toolchain_spec"] == spec


@pytest.mark.slow  # two real builds and a bisect
def test_a_head_bisect_without_repo_searches_the_build_caches_clone(kcc, tmp_path: Path) -> None:
    """`kregress bisect CASE --good kcc@A --bad kcc@B` with no --repo: the build cache's clone of the
    matrix's [repositories.kcc] (cloned, then fetched for a commit made since) is searched, the
    culprit named; a commit the repository does not have is named with what to do."""
    import os
    import shutil

    from conftest import CORPORA

    repo, base, _ = kcc
    matrix = tmp_path / "matrix.toml"
    text = (Path(__file__).parents[1] / "runner" / "matrix.toml").read_text()
    matrix.write_text(text + RECIPE.format(url=Path(repo.working_dir).as_uri()))
    corpus = tmp_path / "corpus"
    shutil.copytree(CORPORA / "builds" / "kcc_factor", corpus / "kcc_factor")
    env = {**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path / "kcache")}
    pinned = [sys.executable, "-m", "kregress.cli", "--matrix", str(matrix), "build", f"kcc@{base}"]
    subprocess.run(pinned, env=env, capture_output=True, text=True, check=True)  # the cache's clone exists
    culprit = add_commit(repo, COMPILED)  # made after the clone: only a fetch brings it
    add_commit(repo, DOCS_ONLY)
    head = repo.head.commit.hexsha

    def bisect(bad: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "kregress.cli", "--matrix", str(matrix), "bisect", "kcc_factor",
                   "--corpus", str(corpus), "-t", "cpu:interpreter", "--good", f"kcc@{base}", "--bad", bad,
                   "--confidence", "0"]  # fmt: skip
        return subprocess.run(command, env=env, capture_output=True, text=True, timeout=1200, check=False)

    found = bisect(f"kcc@{head}")
    assert found.returncode == 0, found.stdout + found.stderr
    assert "into the build cache's clone of kcc" in found.stderr
    assert culprit[:10] in found.stdout + found.stderr and "Factor 3" in found.stdout + found.stderr
    missing = bisect("kcc@" + "0" * 40)
    assert missing.returncode == 64
    assert f"'{'0' * 40}' is not a commit of {Path(repo.working_dir).as_uri()}" in missing.stderr


def test_a_head_is_judged_in_one_command(kcc, tmp_path: Path) -> None:
    """`pytest corpus/ --toolchain kcc@main`: the head pinned to its commit, built through the build
    cache and judged, every worker under the build the controller made, the commit said."""
    import os

    from conftest import run_corpus

    repo, base, log = kcc
    matrix = tmp_path / "matrix.toml"
    text = (Path(__file__).parents[1] / "runner" / "matrix.toml").read_text()
    matrix.write_text(text + RECIPE.format(url=Path(repo.working_dir).as_uri()))
    env = {"KREGRESS_CACHE_DIR": str(tmp_path / "kcache"), "KCC_BUILD_LOG": os.environ["KCC_BUILD_LOG"]}
    args = ("--matrix", str(matrix), "--target", "cpu:interpreter", "--toolchain", "kcc@main", "-n", "2")
    run = run_corpus(tmp_path / "run", "builds/kcc_factor", args=args, env=env)
    item = run.item("kcc_factor::numerics[cpu:interpreter]")
    assert item["outcome"] == "PASS", run.output[-3000:]
    assert item["toolchain"]["kcc commit"] == base
    assert f"--toolchain kcc@main: {base} (built)" in run.output
    assert builds_run(log) == 1  # built once, by the controller
    wrong = run_corpus(tmp_path / "wrong", "builds/kcc_factor", args=("--toolchain", "nope@main"), env=env)
    assert wrong.returncode == 4 and "[repositories.nope]" in wrong.output  # a usage error, said
