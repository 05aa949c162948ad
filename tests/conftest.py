"""Shared helpers: run the plugin on a copy of a fixture corpus in a real pytest child process."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

CORPORA = Path(__file__).parent / "corpora"
REPO = Path(__file__).resolve().parent.parent

# The fixture corpora are data for these tests, not items of the test run itself.
collect_ignore = ["corpora"]

# Seconds each test took (setup, call and teardown), written by `pytest tests/ -n auto
# --store-durations` and `pytest tests/ -m slow -n auto --store-durations`: a run starts the
# longest first.
DURATIONS = Path(__file__).parent / "durations.json"


def stored_durations() -> dict[str, float]:
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        help=f"write how long each test of this run took to tests/{DURATIONS.name} (the order runs take)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest first, so xdist's workers end together instead of one running the last long test
    alone while the other waits (a run ended 25 s on one worker, judging a fixture corpus). Slow
    tests one by one (a slow test with no stored time counts as the longest: a new one usually is);
    fast tests by module, the module with the most stored seconds first and each module's tests in
    their order, so a module's fixtures are set up once per worker, not again each time it comes back."""
    known = stored_durations()

    def seconds(item: pytest.Item) -> float:
        return known.get(item.nodeid, math.inf if item.get_closest_marker("slow") else 0.0)

    slow = sorted((i for i in items if i.get_closest_marker("slow")), key=seconds, reverse=True)
    fast = [i for i in items if not i.get_closest_marker("slow")]

    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    per_module: dict[str, float] = {}
    for item in fast:
        per_module[module(item)] = per_module.get(module(item), 0.0) + seconds(item)
    fast.sort(key=lambda item: per_module[module(item)], reverse=True)
    items[:] = slow + fast


class DurationStore:
    """Adds up each test's phases as reports reach the controller, and writes them at the end."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        stored = stored_durations()
        stored.update({nodeid: round(s, 1) for nodeid, s in self.seconds.items()})
        DURATIONS.write_text(json.dumps(dict(sorted(stored.items())), indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--store-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationStore(), "kregress-durations")


# Plugins of this suite's own tests (property tests, the fake GitHub server) that no corpus run a
# test starts ever uses: loading them cost each child pytest 0.8 s, a fifth of a small run.
UNUSED_IN_CHILD_RUNS = ("-p", "no:hypothesispytest", "-p", "no:pytest_httpserver")


@pytest.fixture(autouse=True, scope="session")
def child_runs_without_this_suites_plugins() -> Iterator[None]:
    """Every pytest a test starts, directly or through kregress (verify, bisect, reduce), leaves
    them out; the run of the tests themselves keeps them (the environment is read at its start)."""
    before = os.environ.get("PYTEST_ADDOPTS")
    os.environ["PYTEST_ADDOPTS"] = " ".join((*UNUSED_IN_CHILD_RUNS, before or "")).strip()
    yield
    if before is None:
        os.environ.pop("PYTEST_ADDOPTS", None)
    else:
        os.environ["PYTEST_ADDOPTS"] = before


@dataclass
class CorpusRun:
    returncode: int
    output: str
    document: dict

    def outcomes(self) -> dict[str, str]:
        """case::expectation[target] -> outcome."""
        return {f"{i['case']}::{i['nodeid'].split('::')[-1]}": i["outcome"] for i in self.document["items"]}

    def item(self, name: str) -> dict:
        """The record of one item, named case::expectation[target]."""
        case, rest = name.split("::")
        matches = [i for i in self.document["items"] if i["case"] == case and i["nodeid"].endswith(rest)]
        assert len(matches) == 1, f"{name} not found once in:\n{self.output[-4000:]}"
        return matches[0]


def made_once_across_workers(
    tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], dict]
) -> dict:
    """What `make` returns for a folder of its own, made once per test run however many xdist
    workers take the tests that need it, or however often a module's fixture is set up again: the
    first to ask makes it under a lock in the run's temporary folder (above each worker's), the
    others read what it kept (the folder stays until the run ends)."""
    from filelock import FileLock

    basetemp = tmp_path_factory.getbasetemp()
    run_folder = basetemp.parent if "PYTEST_XDIST_WORKER" in os.environ else basetemp  # the run's
    kept = run_folder / f"{name}.json"
    with FileLock(str(kept) + ".lock"):
        if kept.exists():
            return json.loads(kept.read_text())
        made = make(tmp_path_factory.mktemp(name))
        kept.write_text(json.dumps(made))
        return made


def run_once_across_workers(
    tmp_path_factory: pytest.TempPathFactory, name: str, *corpora: str, args: tuple[str, ...] = ()
) -> CorpusRun:
    """run_corpus for a module's fixture, judged once per test run (made_once_across_workers)."""
    made = made_once_across_workers(
        tmp_path_factory, name, lambda folder: run_corpus(folder, *corpora, args=args).__dict__
    )
    return CorpusRun(**made)


# The expectation-kind fixtures, judged once per test run: every kind passing and failing
# (test_expectation_kinds) is also the serial run an xdist run is compared with (test_xdist).
KINDS_CORPORA = ("kinds/vector_add", "kinds/broken", "outcomes/known_bad")
KINDS_TARGETS = ("--target", "cpu:interpreter", "--target", "cuda:sm_90", "--target", "hip:gfx942")


def kinds_judged(tmp_path_factory: pytest.TempPathFactory) -> CorpusRun:
    return run_once_across_workers(tmp_path_factory, "kinds", *KINDS_CORPORA, args=KINDS_TARGETS)


def copy_corpus(tmp_path: Path, *corpora: str) -> Path:
    """Copy fixture cases to tmp_path/work/corpus/<case>, outside this repo's pytest configuration."""
    work = tmp_path / "work"
    for name in corpora:
        shutil.copytree(CORPORA / name, work / "corpus" / Path(name).name)
    return work


def run_corpus(
    tmp_path: Path,
    *corpora: str,
    args: tuple[str, ...] = (),
    env: dict | None = None,
    site: Path | None = None,
    appended: dict[str, str] | None = None,
) -> CorpusRun:
    """Copy fixture corpora into tmp_path and judge them with `python -m pytest` there: with the
    kregress package of `site` first on the path (see package_with), and text `appended` to the
    named cases' case.toml."""
    work = copy_corpus(tmp_path, *corpora)
    for case, text in (appended or {}).items():
        manifest = work / "corpus" / case / "case.toml"
        manifest.write_text(manifest.read_text() + text)
    if site is not None:
        env = {
            **(env or {}),
            "PYTHONPATH": os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH")) if p),
        }
    report = tmp_path / "results.json"
    command = [
        sys.executable,
        "-m",
        "pytest",
        "corpus",
        "-p",
        "no:cacheprovider",
        "-q",
        "-rA",
        "--kregress-json",
        str(report),
        *args,
    ]
    done = subprocess.run(
        command,
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        timeout=900,
        check=False,
    )
    document = json.loads(report.read_text()) if report.exists() else {}
    return CorpusRun(done.returncode, done.stdout + done.stderr, document)


def run_written_case(
    tmp_path: Path, name: str, repro: str, manifest: str, args: tuple[str, ...]
) -> CorpusRun:
    """Judge a case written by the test itself (e.g. a corpus repro plus a control manifest)."""
    case = tmp_path / "work" / "corpus" / name
    case.mkdir(parents=True)
    (case / "repro.py").write_text(repro)
    (case / "case.toml").write_text(manifest)
    return run_corpus(tmp_path, args=args)


@pytest.fixture
def corpus_runner(tmp_path: Path):
    return lambda *corpora, args=(), env=None: run_corpus(tmp_path, *corpora, args=args, env=env)


def package_with(tmp_path: Path, module: str, text: str) -> Path:
    """A copy of the kregress package under tmp_path/site with one module added (`module` relative
    to the package, e.g. kinds/ir_lines.py), checked to be the whole change; returns the site folder
    to put on PYTHONPATH."""
    site = tmp_path / "site"
    package = site / "kregress"
    shutil.copytree(REPO / "runner", package, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "bisect", package / "bisect", ignore=shutil.ignore_patterns("__pycache__"))
    before = {p.relative_to(package) for p in package.rglob("*") if p.is_file()}
    (package / module).write_text(text)
    after = {p.relative_to(package) for p in package.rglob("*") if p.is_file()}
    assert after - before == {Path(module)}  # the whole change
    return site


def make_deb(folder: Path, package: str, files: dict[str, Path]) -> Path:
    """A real .deb of `package` holding `files` (path inside -> source), built with dpkg-deb."""
    tree = folder / f"tree-{package}"
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 1.0-{len(package)}\nArchitecture: amd64\n"
        "Maintainer: kregress tests <tests@localhost>\nDescription: stand-in\n"
    )
    for inside, source in files.items():
        (tree / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, tree / inside)
    deb = folder / f"{package}_1.0_amd64.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree), str(deb)], check=True,
                   capture_output=True)  # fmt: skip
    shutil.rmtree(tree)
    return deb


def stand_in_debs(folder: Path, packages: tuple[str, ...], program: tuple[str, str, str], libc: str) -> Path:
    """Real .deb files of `packages`, empty but for a stand-in program (package, path inside,
    its C source, built with the machine's C compiler) and the machine's own loader in libc6 at
    `libc` (its folder inside); skipped where dpkg-deb or a C compiler is missing."""
    if not (shutil.which("dpkg-deb") and shutil.which("cc")):
        pytest.skip("needs dpkg-deb and a C compiler to make the stand-in packages")
    package, inside, source = program
    (folder / "program.c").write_text(source)
    subprocess.run(["cc", "-o", str(folder / "program"), str(folder / "program.c")], check=True)
    loader = Path(os.path.realpath("/lib64/ld-linux-x86-64.so.2"))
    contents = {package: {inside: folder / "program"}, "libc6": {f"{libc}/ld-linux-x86-64.so.2": loader}}
    for name in packages:
        make_deb(folder, name, contents.get(name, {}))
    (folder / "program").unlink()
    (folder / "program.c").unlink()
    return folder
