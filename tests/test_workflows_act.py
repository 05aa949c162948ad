"""The workflows executed end to end with act, as GitHub would run them (see act_harness): nights of
the nightly over a compiler made here and released on a local index, the bisect it starts, the
comment it posts; the GPU runner's job; a pull request and its comment; a bisect dispatched by hand.
Each asserts on what the fake GitHub received and on the artifacts."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
from act_harness import OWNER_REPO, Act, make_project
from compiler_fixture import (
    BAD,
    CASE,
    GOOD,
    REPRO,
    Step,
    build_release,
    local_index,
    make_compiler_repo,
    publish,
)
from fake_github import serving

pytestmark = pytest.mark.slow

TRACKING_ISSUE = 17
ZERO_CASE = CASE.replace("doubles its input", "keeps zero at zero").replace("issues/1", "issues/2")
ZERO_REPRO = REPRO.replace("np.arange(4.0)", "np.zeros(4)")
BROKEN = 'raise ImportError("tinycc 0.4 lost its native module")\n'
HISTORY = [
    Step("Initial compiler", GOOD, release="0.1"),
    Step("Release 0.2", GOOD, release="0.2"),
    Step("Rework the scheduler (#37)", GOOD),
    Step("Vectorize scale (#42)", BAD),
    Step("Release 0.3", BAD, release="0.3"),
    Step("Split the native module (#51)", BROKEN, release="0.4"),
]

CPU_TARGET = """
[targets."cpu:interpreter"]
kind = "interpreter"
backend = "cpu"

[backends.cpu]
targets = ["cpu:interpreter"]
"""

MATRIX = (
    CPU_TARGET
    + """
[repositories.tinycc]
url = "{url}"
tag_pattern = "v{{version}}"
build_cmd = "python -m pip wheel --no-deps -w {{out}} {{src}}"

[runners.cpu]
labels = ["ubuntu-latest"]
backend = "cpu"
hosted = true
toolchains = ["tinycc"]
"""
)


def nightly_writes(act: Act) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in act.github.writes()]


def test_nights_of_the_nightly_find_bisect_and_report_once(tmp_path: Path) -> None:
    """Night 1 on release 0.2 is green; night 2 on 0.3 fails → compare finds the new FAIL → bisect.yml
    runs both levels → one comment on the tracking issue names 0.3, the culprit commit and its PR;
    night 3 (nothing new) posts and edits nothing; night 4 the compiler no longer imports → the
    comment reports lost coverage. The history travels from night to night as an artifact."""
    compiler, shas = make_compiler_repo(tmp_path / "tinycc", HISTORY)
    releases = {s.release: sha for sha, s in zip(shas, HISTORY, strict=True) if s.release}
    wheels = {v: build_release(compiler, sha, tmp_path / "wheels") for v, sha in releases.items()}
    project = tmp_path / "project"
    corpus = {"tiny": {"case.toml": CASE, "repro.py": REPRO}, "tiny_zero": {"case.toml": ZERO_CASE,
              "repro.py": ZERO_REPRO}}  # fmt: skip
    make_project(project, corpus, MATRIX.format(url=Path(compiler.working_dir).as_uri()))
    index_root = tmp_path / "index"
    with serving() as github, local_index(index_root, [wheels["0.1"], wheels["0.2"]]) as index:
        act = Act(project, github, tmp_path / "act")
        act.variables = {"KREGRESS_TRACKING_ISSUE": str(TRACKING_ISSUE), "KREGRESS_INDEX_URL": index}

        night1 = act.run("schedule", "nightly.yml")
        assert night1.returncode == 0, night1.failed()
        assert {"plan", "compare", "report"} <= set(night1.jobs) and set(night1.jobs.values()) == {
            "succeeded"
        }
        results = json.loads(night1.artifact("results-cpu")["cpu.json"])
        assert {i["case"]: i["outcome"] for i in results["items"]} == {"tiny": "PASS", "tiny_zero": "PASS"}
        assert {i["toolchain_spec"] for i in results["items"]} == {"tinycc==0.2"}  # the newest release
        assert "no earlier nightly history" in night1.output
        assert nightly_writes(act) == []  # a green night says nothing

        publish(index_root, [wheels[v] for v in ("0.1", "0.2", "0.3")])  # 0.3 is released
        night2 = act.run("schedule", "nightly.yml")
        assert night2.returncode == 0, night2.failed()
        assert "nightly-history from run 1" in night2.output  # the history came from night 1
        history = night2.artifact("nightly-history")
        assert len(history_runs(tmp_path, history["history.sqlite"])) == 2
        changes = json.loads(history["changes.json"])
        assert [(c["case"], c["target"]) for c in changes["new_fail"]] == [("tiny", "cpu:interpreter")]
        request = json.loads(history["bisect.json"])["include"][0]
        assert (request["good"], request["bad"]) == ("tinycc==0.2", "tinycc==0.3")
        assert night2.jobs.get("bisect/bisect") == "succeeded", night2.failed()
        report = night2.artifact("bisect-tiny.cpu-interpreter")["tiny.cpu-interpreter.md"].decode()
        assert "First bad (fail): **tinycc==0.3**" in report, report
        culprit = shas[3][:10]
        assert f"**{culprit} Vectorize scale (#42)** (PR #42)" in report, report
        (comment,) = github.comments_on(OWNER_REPO, TRACKING_ISSUE)
        assert "`tiny`" in comment["body"] and "`tiny_zero`" not in comment["body"]
        assert "tinycc==0.3" in comment["body"] and culprit in comment["body"] and "PR #42" in comment["body"]
        assert nightly_writes(act) == [("POST", f"/repos/{OWNER_REPO}/issues/{TRACKING_ISSUE}/comments")]

        night3 = act.run("schedule", "nightly.yml")
        assert night3.returncode == 0, night3.failed()
        assert "bisect/bisect" not in night3.jobs  # nothing new: no bisect, no comment, no edit
        assert len(nightly_writes(act)) == 1 and github.comments_on(OWNER_REPO, TRACKING_ISSUE) == [comment]

        publish(index_root, list(wheels.values()))  # 0.4 no longer imports
        night4 = act.run("schedule", "nightly.yml")
        assert night4.returncode == 0, night4.failed()
        results = json.loads(night4.artifact("results-cpu")["cpu.json"])
        assert {i["case"]: i["outcome"] for i in results["items"]}["tiny_zero"] in ("ERROR", "SKIP")
        (edited,) = github.comments_on(OWNER_REPO, TRACKING_ISSUE)  # the same comment, edited in place
        assert edited["id"] == comment["id"] and "Lost coverage" in edited["body"], edited["body"]
        assert "`tiny_zero`" in edited["body"]
        assert nightly_writes(act)[-1] == ("PATCH", f"/repos/{OWNER_REPO}/issues/comments/{comment['id']}")


def history_runs(tmp_path: Path, data: bytes) -> list[tuple]:
    path = tmp_path / "history-check.sqlite"
    path.write_bytes(data)
    with sqlite3.connect(path) as db:
        return db.execute("SELECT * FROM runs").fetchall()


NVIDIA_SMI = """#!/bin/sh
# A stand-in for nvidia-smi on a runner with two H100s: -L lists them, --query-gpu describes the
# one -i names (or both), as the real tool prints them.
row() { echo "$1, NVIDIA H100 80GB HBM3, 580.95.05, GPU-0000000$1-aaaa-bbbb-cccc-dddddddddddd"; }
case "$*" in
  *-L*) for n in 0 1; do echo "GPU $n: NVIDIA H100 80GB HBM3 (UUID: GPU-0000000$n)"; done ;;
  *"-i 1"*) row 1 ;;
  *"-i 0"*) row 0 ;;
  *) row 0; row 1 ;;
esac
"""

GPU_MATRIX = (
    CPU_TARGET
    + """
[targets."cuda:device"]
kind = "device"
backend = "cuda"

[backends.cuda]
targets = ["cuda:device"]

[runners.cuda-h100]
labels = ["self-hosted", "cuda-h100"]
backend = "cuda"
targets = ["cuda:device"]
"""
)

# The fixture compiler's manifest, with a title and issue of its own.
NUMPY_CASE = CASE.replace("tiny compiler doubles its input", "{title}").replace("issues/1", "issues/{issue}")

NUMPY_REPRO = """
import numpy as np


def check(device):
    return np.arange(4.0) * {factor}, np.arange(4.0) * 2
"""


def gpu_runner_tools(tmp_path: Path) -> Path:
    """A folder for PATH holding the stand-in nvidia-smi, as a GPU runner has the real one."""
    tools = tmp_path / "runner-tools"
    tools.mkdir()
    (tools / "nvidia-smi").write_text(NVIDIA_SMI)
    (tools / "nvidia-smi").chmod(0o755)
    return tools


def numpy_case(title: str, issue: int, factor: int = 2) -> dict[str, str]:
    return {
        "case.toml": NUMPY_CASE.format(title=title, issue=issue),
        "repro.py": NUMPY_REPRO.format(factor=factor),
    }


def test_a_gpu_runner_job_judges_on_its_backend_with_a_worker_per_device(tmp_path: Path) -> None:
    """The self-hosted job (labels self-hosted, cuda-h100, run on this machine with a stand-in
    nvidia-smi) passes --backend cuda: one xdist worker per GPU, each item records its GPU."""
    project = tmp_path / "project"
    corpus = {f"doubles_{n}": numpy_case(f"doubles {n}", n) for n in range(4)}
    make_project(project, corpus, GPU_MATRIX)
    tools = gpu_runner_tools(tmp_path)
    with serving() as github:
        act = Act(project, github, tmp_path / "act", labels=("self-hosted", "cuda-h100"), path=[tools])
        night = act.run("workflow_dispatch", "nightly.yml")
        assert night.jobs.get("corpus (cuda-h100)") == "succeeded", night.failed()
        results = json.loads(night.artifact("results-cuda-h100")["cuda-h100.json"])
        assert results["backend"] == "cuda"
        assert [d["name"] for d in results["devices"]] == ["NVIDIA H100 80GB HBM3"] * 2
        assert {i["outcome"] for i in results["items"]} == {"PASS"} and len(results["items"]) == 4
        assert {i["target"] for i in results["items"]} == {"cuda:device"}
        assert {i["device"]["index"] for i in results["items"]} == {"0", "1"}  # two workers, one per GPU
        assert "2 workers [4 items]" in night.output


def test_a_pull_request_is_judged_without_secrets_and_commented_by_workflow_run(tmp_path: Path) -> None:
    """pr.yml on a pull_request whose corpus change FAILs uploads its findings and touches no API;
    pr-comment.yml, started by the finished run, downloads the artifact through the API and posts
    one comment on the PR."""
    project = tmp_path / "project"
    repo = make_project(project, {"doubles": numpy_case("doubles", 1)}, GPU_MATRIX)
    base = repo.head.commit.hexsha
    repo.git.checkout("-b", "feature")
    (project / "corpus" / "halves").mkdir()
    for name, text in numpy_case("halves", 2, factor=3).items():  # a new case that fails
        (project / "corpus" / "halves" / name).write_text(text)
    repo.git.add("-A")
    head = repo.index.commit("Add a case").hexsha
    event = tmp_path / "pull_request.json"
    pull = {"number": 5, "base": {"sha": base, "ref": "main"}, "head": {"sha": head, "ref": "feature"}}
    event.write_text(json.dumps({"number": 5, "pull_request": pull}))
    with serving() as github:
        act = Act(
            project, github, tmp_path / "act", secrets={"KREGRESS_UPSTREAM_TOKEN": "ghp_upstreamSecret42"}
        )
        pr = act.run("pull_request", "pr.yml", event)
        assert pr.returncode == 0, pr.failed()
        assert github.log == []  # the untrusted run talked to no API, with no token to do it
        found = pr.artifact("kregress-pr")
        assert found["number"].decode().strip() == "5"
        assert b"ghp_upstreamSecret42" not in b"".join(found.values())
        changes = json.loads(found["changes.json"])
        assert [(c["case"], c["target"]) for c in changes["new_fail"]] == [("halves", "cpu:interpreter")]
        comment = act.comment_on_pull_request(1, 5)
        assert comment.returncode == 0, comment.failed()
        (posted,) = github.comments_on(OWNER_REPO, 5)
        assert "`halves`" in posted["body"] and "New FAIL" in posted["body"], posted["body"]
        assert ("GET", f"/repos/{OWNER_REPO}/actions/runs/1/artifacts") in [
            (r.method, r.path) for r in github.log
        ]


def test_a_bisect_dispatched_by_hand_reports_the_first_bad_release(tmp_path: Path) -> None:
    compiler, shas = make_compiler_repo(tmp_path / "tinycc", HISTORY[:5])
    wheels = [build_release(compiler, sha, tmp_path / "wheels") for sha, s in zip(shas, HISTORY, strict=False)
              if s.release]  # fmt: skip
    project = tmp_path / "project"
    make_project(project, {"tiny": {"case.toml": CASE, "repro.py": REPRO}},
                 MATRIX.format(url=Path(compiler.working_dir).as_uri()))  # fmt: skip
    event = tmp_path / "dispatch.json"
    inputs = {"case": "tiny", "target": "cpu:interpreter", "good": "tinycc==0.1", "bad": "tinycc==0.3",
              "regress": "fail", "expectation": "", "repository": ""}  # fmt: skip
    event.write_text(json.dumps({"inputs": inputs}))
    with serving() as github, local_index(tmp_path / "index", wheels) as index:
        act = Act(project, github, tmp_path / "act", variables={"KREGRESS_INDEX_URL": index})
        run = act.run("workflow_dispatch", "bisect.yml", event)
        assert run.returncode == 0, run.failed()
        report = run.artifact("bisect-tiny.cpu-interpreter")["tiny.cpu-interpreter.md"].decode()
        assert "First bad (fail): **tinycc==0.3**; last good: tinycc==0.2." in report, report
        assert "Commits" not in report  # repository '' : releases only, as the dispatch asked
        assert "Releases only, from tinycc==0.1 to tinycc==0.3" in run.output


def comment_event(body: str, association: str, number: int = 8) -> dict:
    return {
        "action": "created",
        "repository": {"full_name": OWNER_REPO},
        "issue": {"number": number},
        "comment": {"id": 4242, "body": body, "author_association": association, "user": {"login": "ada"}},
    }


def test_commands_in_comments_run_for_members_and_answer_in_one_comment(tmp_path: Path) -> None:
    """A member's `/kregress run` is queued, run on the runner of its target and answered in the same
    comment (created once, then edited); a contributor's, or one naming an unknown case, gets a
    one-line reply and nothing runs."""
    project = tmp_path / "project"
    make_project(
        project, {"doubles": numpy_case("doubles", 1), "halves": numpy_case("halves", 2, 3)}, GPU_MATRIX
    )
    tools = gpu_runner_tools(tmp_path)
    with serving() as github:
        act = Act(project, github, tmp_path / "act", labels=("self-hosted", "cuda-h100"), path=[tools])
        asked = tmp_path / "member.json"
        asked.write_text(json.dumps(comment_event("/kregress run halves -t cuda:device", "MEMBER")))
        run = act.run("issue_comment", "command.yml", asked)
        assert run.returncode == 0 and run.jobs == {"accept": "succeeded", "run": "succeeded"}, run.failed()
        (reply,) = github.comments_on(OWNER_REPO, 8)
        assert reply["body"].startswith(
            "<!-- kregress:8:command-4242 -->\n✅ done: `/kregress run halves -t cuda:device`"
        )
        assert "| `numerics` | `cuda:device` | FAIL |" in reply["body"], reply["body"]
        writes = [(r.method, r.path) for r in github.writes()]
        edit = ("PATCH", f"/repos/{OWNER_REPO}/issues/comments/{reply['id']}")
        assert writes == [("POST", f"/repos/{OWNER_REPO}/issues/8/comments"), edit, edit]  # one comment
        bodies = [r.body["body"] for r in github.writes()]
        assert "⏳ queued" in bodies[0] and "🏃 running" in bodies[1]

        for name, body, association, words in (
            (
                "stranger",
                "/kregress run halves -t cuda:device",
                "CONTRIBUTOR",
                "only members and collaborators",
            ),
            ("unknown", "/kregress run nothere -t cuda:device", "OWNER", "there is no case `nothere`"),
        ):
            path = tmp_path / f"{name}.json"
            path.write_text(json.dumps(comment_event(body, association, number=9)))
            refused = act.run("issue_comment", "command.yml", path)
            assert refused.returncode == 0 and refused.jobs == {"accept": "succeeded"}, refused.failed()
            last = github.comments_on(OWNER_REPO, 9)[-1]["body"]
            assert (
                words in last and "nothing was run" in last and len(last.splitlines()) == 2
            )  # marker + one line


def test_the_projects_own_ci_runs_the_readme_test_command(tmp_path: Path) -> None:
    """ci.yml's steps on a push: setup-python, the README's install and test command. Its tests/ is
    one passing and then one failing test here (the whole suite is what CI itself runs)."""
    project = tmp_path / "project"
    repo = make_project(project, {"doubles": numpy_case("doubles", 1)}, GPU_MATRIX)
    for path in (project / "tests").iterdir():
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    (project / "tests" / "test_one.py").write_text("def test_kregress_imports():\n    import kregress.cli\n")
    repo.git.add("-A")
    repo.index.commit("one test")
    with serving() as github:
        act = Act(project, github, tmp_path / "act")
        green = act.run("push", "ci.yml")
        assert green.returncode == 0 and green.jobs == {"tests": "succeeded"}, green.failed()
        assert "1 passed" in green.output
        (project / "tests" / "test_one.py").write_text("def test_fails():\n    assert 1 == 2\n")
        red = act.run("push", "ci.yml")
        assert red.returncode != 0 and red.jobs == {"tests": "failed"} and "1 failed" in red.output
