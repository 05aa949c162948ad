"""The workflows in .github/workflows, checked without GitHub: actionlint (with shellcheck on every
`run:` script) passes on each and fails on a broken one; permissions, pins and the untrusted-PR
split hold; the nightly matrix comes from runner/matrix.toml with the keys the workflows use."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from kregress.matrix import SchemaError, load_matrix, nightly_jobs, runner_for
from kregress.record import ItemRecord, RunResults
from kregress.results import Change, Changes, bisect_requests


def record(**fields: object) -> ItemRecord:
    """An item of case c, expectation e, on cuda:sm_90 unless `fields` say otherwise."""
    return ItemRecord.model_validate({"case": "c", "expectation": "e", "target": "cuda:sm_90", **fields})


REPO = Path(__file__).resolve().parent.parent
WORKFLOWS = sorted((REPO / ".github" / "workflows").glob("*.yml"))
BIN = Path(sys.executable).parent
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@(v\d+\.\d+\.\d+|[0-9a-f]{40})$")


def load(name: str) -> dict:
    # YAML 1.1 reads the key `on` as True; a workflow means the string.
    document = yaml.safe_load((REPO / ".github" / "workflows" / name).read_text())
    if True in document:
        document["on"] = document.pop(True)
    return document


def actionlint(*files: Path) -> subprocess.CompletedProcess:
    tool = shutil.which("actionlint", path=str(BIN)) or shutil.which("actionlint")
    shellcheck = shutil.which("shellcheck", path=str(BIN)) or shutil.which("shellcheck")
    if not tool or not shellcheck:
        pytest.fail("actionlint and shellcheck come with the dev extra: pip install -e '.[dev]'")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    command = [tool, "-no-color", "-oneline", "-shellcheck", shellcheck, *map(str, files)]
    return subprocess.run(
        command, cwd=REPO, capture_output=True, text=True, env=env, timeout=120, check=False
    )


def test_the_workflows_are_all_there() -> None:
    names = {"ci.yml", "nightly.yml", "bisect.yml", "pr.yml", "pr-comment.yml", "command.yml"}
    assert {w.name for w in WORKFLOWS} == names


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_actionlint_passes(workflow: Path) -> None:
    done = actionlint(workflow)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout == ""


def test_actionlint_fails_on_broken_workflows(tmp_path: Path) -> None:
    """The same check catches real mistakes: a job output or an input that does not exist, an
    unquoted variable in a script. (Keys of a generated matrix it cannot know: see below.)"""
    source = REPO / ".github" / "workflows"
    nightly = (source / "nightly.yml").read_text()
    nightly = nightly.replace("needs.compare.outputs.bisect-count", "needs.compare.outputs.bisect-total")
    nightly = nightly.replace('>> "$GITHUB_STEP_SUMMARY"', ">> $GITHUB_STEP_SUMMARY")
    bisect = (
        (source / "bisect.yml")
        .read_text()
        .replace("CASE: ${{ inputs.case }}", "CASE: ${{ inputs.case_name }}")
    )
    workflows = tmp_path / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "nightly.yml").write_text(nightly)
    (workflows / "bisect.yml").write_text(bisect)
    done = actionlint(workflows / "nightly.yml", workflows / "bisect.yml")
    assert done.returncode == 1
    assert 'property "bisect-total" is not defined' in done.stdout
    assert "SC2086" in done.stdout
    assert 'property "case_name" is not defined' in done.stdout


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda p: p.name)
def test_least_privilege_and_pinned_actions(workflow: Path) -> None:
    document = load(workflow.name)
    assert "permissions" in document, f"{workflow.name}: no top-level permissions"
    top = document["permissions"]
    assert top in ({}, {"contents": "read"}), f"{workflow.name}: top-level permissions {top}"
    for name, job in document["jobs"].items():
        for scope, level in (job.get("permissions") or {}).items():
            assert level in ("read", "write", "none"), f"{workflow.name}:{name}: {scope}: {level}"
        for step in job.get("steps", []):
            uses = step.get("uses")
            if uses and not uses.startswith("./"):
                assert PINNED.match(uses), f"{workflow.name}:{name}: {uses} is not pinned"


def test_untrusted_pr_code_never_meets_a_write_token() -> None:
    pr, comment = load("pr.yml"), load("pr-comment.yml")
    assert set(pr["on"]) == {"pull_request"}
    assert pr["permissions"] == {"contents": "read"}
    assert all("permissions" not in job for job in pr["jobs"].values())
    assert "secrets." not in (REPO / ".github" / "workflows" / "pr.yml").read_text()
    assert pr["concurrency"]["cancel-in-progress"] is True
    for job in pr["jobs"].values():
        assert job["runs-on"] == "ubuntu-latest"  # never a self-hosted GPU runner
    # The poster: triggered by the finished run, checks out only the default branch, runs no PR code.
    assert set(comment["on"]) == {"workflow_run"}
    assert comment["on"]["workflow_run"]["workflows"] == [pr["name"]]
    assert comment["permissions"] == {}
    for step in comment["jobs"]["comment"]["steps"]:
        if step.get("uses", "").startswith("actions/checkout"):
            # the default branch, never the PR's head; in a compiler repository, kregress's own
            # repository at the branch a repository variable names (no API call to find its default)
            ref = step["with"].get("ref")
            assert ref is None or ("repository" in step["with"] and ref.startswith("${{ vars.")), ref
        # No tests, no build scripts; the light install alone (the default branch's own, as the
        # kregress it installs is).
        assert not re.search(r"head_sha|head\.sha|\.ci/(?!light\b)|pytest", yaml.safe_dump(step))


def test_nightly_jobs_come_from_the_matrix_file() -> None:
    """The shipped matrix judges what changes: the hosted runner the newest releases, each GPU runner
    the newest release and its compiler's main (Intel's runners Intel's repository, with PyTorch's
    XPU build of torch)."""
    jobs = {job["job"]: job for job in nightly_jobs(load_matrix())}
    assert set(jobs) == {
        "cpu-triton", "cpu-tilelang", "cuda-h100-triton", "cuda-h100-triton-at-main", "hip-mi300-triton",
        "hip-mi300-triton-at-main", "xpu-pvc", "xpu-a770", "cuda-b200-triton", "cuda-b200-triton-at-main",
        "hip-mi355x-triton", "hip-mi355x-triton-at-main", "xpu-b580-triton-xpu-3.3.0b1",
        "xpu-b580-triton-xpu-at-main",
    }  # fmt: skip
    cpu = jobs["cpu-triton"]
    assert cpu["labels"] == ["ubuntu-latest"] and cpu["hosted"]
    assert cpu["pytest-args"] == "--backend cpu --toolchain triton" and not cpu["head"]
    compile_targets = {"cuda:sm_80", "cuda:sm_90", "cuda:sm_100", "cuda:sm_120", "hip:gfx942", "hip:gfx950",
                       "xpu:pvc", "xpu:dg2", "xpu:bmg", "xpu:ptl"}  # fmt: skip
    assert set(cpu["targets"]) == {"cpu:interpreter", *compile_targets}
    expected = {
        "cuda-h100": ("cuda", ["cuda:device", "cuda:sm_90"], "triton@main"),
        "hip-mi300": ("hip", ["hip:device", "hip:gfx942"], "triton@main"),
        "xpu-pvc": ("xpu", ["xpu:device", "xpu:pvc"], "triton-xpu@main"),
        "xpu-a770": ("xpu", ["xpu:device", "xpu:dg2"], "triton-xpu@main"),
        "cuda-b200": ("cuda", ["cuda:device", "cuda:sm_100"], "triton@main"),
        "hip-mi355x": ("hip", ["hip:device", "hip:gfx950"], "triton@main"),
        "xpu-b580": ("xpu", ["xpu:device", "xpu:bmg"], "triton-xpu@main"),
    }
    for runner, (backend, targets, head) in expected.items():
        (job,) = [j for j in jobs.values() if j["runner"] == runner and j["head"]]
        assert job["labels"] == ["self-hosted", runner] and not job["hosted"]
        assert job["backend"] == backend and job["targets"] == targets and job["head"] == head
        # The runner's backend reaches pytest: a device target judged on the cpu backend gets no
        # worker per device and no device in its results. The head's build is added by the workflow.
        assert job["pytest-args"] == f"--backend {backend} " + " ".join(f"--target {t}" for t in targets)
    assert jobs["xpu-pvc"]["torch-index"] == "https://download.pytorch.org/whl/xpu"
    assert jobs["cuda-h100-triton"]["pytest-args"].endswith("--toolchain triton")
    assert jobs["cuda-b200-triton"]["pytest-args"].endswith("--toolchain triton")  # the newest release
    assert jobs["xpu-b580-triton-xpu-3.3.0b1"]["pytest-args"].endswith("--toolchain triton-xpu==3.3.0b1")


def test_bisects_run_where_the_target_is() -> None:
    matrix = load_matrix()
    assert runner_for(matrix, "cuda:device") == "cuda-h100"
    assert runner_for(matrix, "xpu:dg2") == "cpu"  # compile-only: no GPU time spent
    assert runner_for(matrix, "hip:device") == "hip-mi300"
    with pytest.raises(ValueError, match="unknown target 'cuda:sm_75'"):
        runner_for(matrix, "cuda:sm_75")


def matrix_keys(job: dict) -> set[str]:
    text = yaml.safe_dump(job)
    return set(re.findall(r"matrix\.([\w-]+)", text)) | set(re.findall(r"matrix\['([\w-]+)'\]", text))


def test_workflows_read_only_keys_the_generators_write() -> None:
    nightly = load("nightly.yml")["jobs"]
    job_keys = set(nightly_jobs(load_matrix())[0])
    assert matrix_keys(nightly["corpus"]) <= job_keys, matrix_keys(nightly["corpus"]) - job_keys
    change = Change(
        ("c", "e", "cuda:sm_90"), "FAIL", "PASS", record(outcome="FAIL", toolchain={"triton": "3.6.0"})
    )
    previous = [RunResults(items=[record(outcome="PASS", toolchain={"triton": "3.5.0"})])]
    request_keys = set(bisect_requests(Changes(new_fail=[change]), previous, {})[0])
    assert matrix_keys(nightly["bisect"]) <= request_keys
    bisect_inputs = set(load("bisect.yml")["on"]["workflow_call"]["inputs"])
    assert set(nightly["bisect"]["with"]) <= bisect_inputs
    assert {"case", "target", "good", "bad"} <= bisect_inputs
    assert set(load("bisect.yml")["on"]["workflow_dispatch"]["inputs"]) == bisect_inputs


def test_ci_workflow_runs_the_readme_test_command() -> None:
    readme = (REPO / "README.md").read_text()
    command = "bash .ci/setup && .venv/bin/pytest tests/ -n auto"
    assert command in readme
    steps = load("ci.yml")["jobs"]["tests"]["steps"]
    assert any(step.get("run") == command for step in steps)


def test_light_jobs_need_no_compiler() -> None:
    """The plan, compare and comment jobs install kregress without torch or triton."""
    code = "import sys, kregress.cli; print(sorted({'torch', 'triton', 'numpy'} & set(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_bisects_go_on_to_commits_where_the_matrix_names_a_repository(tmp_path: Path) -> None:
    """The nightly's requests carry the package's repository; bisect.yml clones it and passes
    --repo, its tag pattern and build command, and says in the step summary which form ran."""
    kregress = [sys.executable, "-m", "kregress.cli", "matrix"]
    output = tmp_path / "github-output"
    env = {**os.environ, "GITHUB_OUTPUT": str(output)}
    command = [*kregress, "--repository-for", "triton==3.6.0", "--github-output"]
    found = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    assert '"repository": "https://github.com/triton-lang/triton.git"' in found.stdout
    assert "tag-pattern=v{version}\n" in output.read_text()
    none = subprocess.run(
        [*kregress, "--repository-for", "tilelang"], check=True, capture_output=True, text=True
    )
    assert '"repository": ""' in none.stdout
    change = Change(
        ("c", "e", "cuda:sm_90"), "FAIL", "PASS", record(outcome="FAIL", toolchain={"triton": "3.6.0"})
    )
    previous = [RunResults(items=[record(outcome="PASS", toolchain={"triton": "3.5.0"})])]
    (request,) = bisect_requests(Changes(new_fail=[change]), previous, {}, {"triton": "https://x/triton.git"})
    assert request["repository"] == "https://x/triton.git"
    assert load("nightly.yml")["jobs"]["bisect"]["with"]["repository"] == "${{ matrix.repository }}"
    steps = load("bisect.yml")["jobs"]["bisect"]["steps"]
    clone = next(s for s in steps if "git clone" in s.get("run", ""))
    assert "needs.route.outputs.repository" in clone["if"]
    script = next(s for s in steps if s.get("name") == "Bisect")["run"]
    assert "--repo compiler" in script and "Two levels" in script and "Releases only" in script


def test_a_repository_tag_pattern_must_name_the_version(tmp_path: Path) -> None:
    text = (
        (REPO / "runner" / "matrix.toml")
        .read_text()
        .replace('tag_pattern = "v{version}"', 'tag_pattern = "v"')
    )
    (tmp_path / "matrix.toml").write_text(text)
    with pytest.raises(SchemaError, match=r"must contain \{version\}"):
        load_matrix(tmp_path / "matrix.toml")


def test_bisect_requests_take_the_releases_a_runners_toolchain_pinned() -> None:
    """A runner that judges the newest release of a package (runners.X.toolchain) bisects between
    the pins of the two nights; a night judged with the default compiler and one with a named
    toolchain are not one package's range, and a local build's range is commits."""
    change = Change(("c", "e", "cpu:interpreter"), "FAIL", "PASS",
                    record(target="cpu:interpreter", outcome="FAIL", toolchain_spec="tinycc==0.3",
                           toolchain={"triton": "3.6.0"}))  # fmt: skip
    held = record(target="cpu:interpreter", outcome="PASS", toolchain_spec="tinycc==0.2",
                  toolchain={"triton": "3.6.0"})  # fmt: skip
    (request,) = bisect_requests(
        Changes(new_fail=[change]), [RunResults(items=[held])], {}, {"tinycc": "file:///x"}
    )
    assert (request["good"], request["bad"], request["repository"]) == (
        "tinycc==0.2",
        "tinycc==0.3",
        "file:///x",
    )
    default = held.model_copy(update={"toolchain_spec": None})
    assert bisect_requests(Changes(new_fail=[change]), [RunResults(items=[default])], {}) == []
    wheel = "/wheels/tinycc-0.3-py3-none-any.whl"
    wheel = record(target="cpu:interpreter", outcome="FAIL", toolchain_spec=wheel)
    local = Change(change.key, "FAIL", "PASS", wheel)
    assert bisect_requests(Changes(new_fail=[local]), [RunResults(items=[held])], {}) == []


def test_a_runner_toolchain_reaches_pytest_and_must_be_one_requirement(tmp_path: Path) -> None:
    text = (REPO / "runner" / "matrix.toml").read_text()
    shipped = 'toolchains = ["triton", "tilelang"]'
    newest = text.replace(shipped, 'toolchains = ["triton"]')
    (tmp_path / "matrix.toml").write_text(newest)
    (cpu,) = [job for job in nightly_jobs(load_matrix(tmp_path / "matrix.toml")) if job["runner"] == "cpu"]
    assert cpu["pytest-args"] == "--backend cpu --toolchain triton"
    spaced = text.replace(shipped, 'toolchains = ["a b"]')
    (tmp_path / "matrix.toml").write_text(spaced)
    with pytest.raises(SchemaError, match="must be one requirement with no spaces"):
        load_matrix(tmp_path / "matrix.toml")


def test_a_runner_judging_a_release_and_a_head_is_two_jobs(tmp_path: Path) -> None:
    """The head job carries no --toolchain: the workflow builds the head and judges that build."""
    text = (REPO / "runner" / "matrix.toml").read_text()
    shipped = 'toolchains = ["triton", "tilelang"]'
    (tmp_path / "matrix.toml").write_text(text.replace(shipped, 'toolchains = ["triton", "triton@main"]'))
    jobs = [job for job in nightly_jobs(load_matrix(tmp_path / "matrix.toml")) if job["runner"] == "cpu"]
    assert [(j["job"], j["toolchain"], j["head"], j["pytest-args"]) for j in jobs] == [
        ("cpu-triton", "triton", "", "--backend cpu --toolchain triton"),
        ("cpu-triton-at-main", "triton@main", "triton@main", "--backend cpu"),
    ]
    unknown = text.replace(shipped, 'toolchains = ["kcc@main"]')
    (tmp_path / "matrix.toml").write_text(unknown)
    with pytest.raises(SchemaError, match=r"add \[repositories\.kcc\]"):
        load_matrix(tmp_path / "matrix.toml")


LIGHT_INSTALL = "bash .ci/light"


def light_jobs() -> dict[str, set[str]]:
    """workflow:job -> the kregress commands it calls, for every job that installs kregress light."""
    found = {}
    for workflow in WORKFLOWS:
        for name, job in load(workflow.name)["jobs"].items():
            scripts = [step.get("run", "") for step in job.get("steps", [])]
            installs = [s for s in scripts if "requirements-light" in s or ".ci/light" in s]
            if installs:
                assert installs == [LIGHT_INSTALL], f"{workflow.name}:{name}: {installs}"
                calls = {m for s in scripts for m in re.findall(r"\bkregress ([a-z]+)", s)}
                found[f"{workflow.name}:{name}"] = calls
    return found


@pytest.mark.slow
def test_the_light_install_runs_every_command_its_jobs_call(tmp_path: Path) -> None:
    """The plan, compare, report, route, accept and comment jobs install kregress without compilers,
    with the workflows' own line: every command they call must start there (it once died on
    pydantic_core, which --no-deps left out, and on tomli_w, which kregress.cli imports)."""
    jobs = light_jobs()
    assert {"nightly.yml:plan", "nightly.yml:compare", "nightly.yml:report", "bisect.yml:route",
            "pr-comment.yml:comment", "command.yml:accept"} <= set(jobs)  # fmt: skip
    python = tmp_path / "light" / "bin" / "python"
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "light")], check=True, timeout=120)
    env = {**os.environ, "PYTHON": str(python)}
    subprocess.run(LIGHT_INSTALL, shell=True, cwd=REPO, check=True, timeout=600, capture_output=True, env=env)
    kregress = tmp_path / "light" / "bin" / "kregress"
    for command in sorted(set().union(*jobs.values())):
        done = subprocess.run([kregress, command, "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"kregress {command}: {done.stderr[-2000:]}"
    plan = subprocess.run([kregress, "matrix"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert plan.returncode == 0 and '"runner": "cpu"' in plan.stdout, plan.stderr
    absent = subprocess.run([python, "-c", "import torch"], capture_output=True, timeout=60)
    assert absent.returncode != 0  # light: no compiler, no torch
