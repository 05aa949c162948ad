"""The nightly on a compiler's main, executed with act (see act_harness): a compiler with a compiled
part (tests/compiled_fixture.py) built for real on every night through the build cache; a night's
new FAIL bisected over that night's commits, told on the tracking issue and on the culprit's pull
request in the fake upstream repository; a quiet night says nothing; a night that fixes it says by
which commits. The builds are counted: each commit at most once, a Python-only one made from a
kept build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from act_harness import OWNER_REPO, REPO, Act, make_project
from compiled_fixture import BASE, CORE, RECIPE, SCALING, Commit, add_commit, make_kcc_repo
from fake_github import serving

pytestmark = pytest.mark.slow

TRACKING_ISSUE = 21
UPSTREAM = "example/kcc"
CASES = Path(__file__).parent / "corpora" / "builds"

MATRIX = """
[targets."cpu:interpreter"]
kind = "interpreter"
backend = "cpu"

[backends.cpu]
targets = ["cpu:interpreter"]

[runners.cpu]
labels = ["ubuntu-latest"]
backend = "cpu"
hosted = true
toolchains = ["kcc@main"]
"""

NIGHT_2 = [
    Commit("Scale twice (#3)", {"kcc/scaling.py": SCALING + "\n\ndef twice(x):\n    return x * 4\n"}),
    Commit("Document kcc (#4)", {"docs/notes.md": "kcc scales\n"}),
    Commit("Factor 3 (#7)", {"csrc/core.c": CORE % "3.0"}),  # the regression, in the compiled part
    Commit("Move the pinned LLVM (#8)", {"deps/pin.txt": "llvm-2222\n"}),
    Commit("A module more (#9)", {"kcc/extra.py": "X = 1\n"}),
]
FIX = Commit("Factor 2 again (#10)", {"csrc/core.c": CORE % "2.0"})


def kept_builds(cache: Path) -> dict[str, dict]:
    """Every build the runner's cache keeps, by commit: its record (how it was made)."""
    records = cache.glob("builds/*/*/out/kregress-build.json")
    return {p.parent.parent.name: json.loads(p.read_text()) for p in records}


def real_builds(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_nights_on_a_head_build_once_bisect_and_tell_the_culprits_pr(tmp_path: Path) -> None:
    compiler, (base,) = make_kcc_repo(tmp_path / "kcc", [BASE])
    project = tmp_path / "project"
    case = {name: (CASES / "kcc_factor" / name).read_text() for name in ("case.toml", "repro.py")}
    corpus = {"kcc_factor": case}
    make_project(project, corpus, MATRIX + RECIPE.format(url=Path(compiler.working_dir).as_uri()))
    log = tmp_path / "builds.log"
    with serving() as github:
        act = Act(project, github, tmp_path / "act")
        act.variables = {"KREGRESS_TRACKING_ISSUE": str(TRACKING_ISSUE), "KREGRESS_CULPRIT_COMMENTS": "true",
                         "KREGRESS_UPSTREAM_REPOSITORY": UPSTREAM}  # fmt: skip
        act.secrets = {"KREGRESS_UPSTREAM_TOKEN": "ghp_upstreamToken0123456789"}
        act.env = {"KCC_BUILD_LOG": str(log)}
        cache = tmp_path / "act" / "kregress-cache"

        night1 = act.run("schedule", "nightly.yml")
        assert night1.returncode == 0, night1.failed()
        (job,) = [name for name in night1.artifacts if name.startswith("results-")]
        results = json.loads(night1.artifact(job)[f"{job.removeprefix('results-')}.json"])  # not .rerun.json
        (item,) = results["items"]
        assert item["outcome"] == "PASS" and item["toolchain"]["kcc commit"] == base
        assert real_builds(log) == 1 and not github.writes()

        night2_shas = [add_commit(compiler, commit) for commit in NIGHT_2]
        culprit = night2_shas[2]
        night2 = act.run("schedule", "nightly.yml")
        assert night2.returncode == 0, night2.failed()
        history = night2.artifact("nightly-history")
        request = json.loads(history["bisect.json"])["include"][0]
        assert (request["good"], request["bad"]) == (f"kcc@{base}", f"kcc@{night2_shas[-1]}")
        assert night2.jobs.get("bisect/bisect") == "succeeded", night2.failed()
        bisected = night2.artifact("bisect-kcc_factor.cpu-interpreter")
        found = json.loads(bisected["kcc_factor.cpu-interpreter.culprit.json"])
        assert found["culprit"]["commit"] == culprit and found["culprit"]["pr"] == 7
        # the pin moved by another commit of the range than the culprit is listed, with that commit
        (pin,) = found["pins_in_range"]
        assert pin.startswith(night2_shas[3][:12]) and "Move the pinned LLVM (#8)" in pin
        assert "llvm-2222" in pin
        (tracking,) = github.comments_on(OWNER_REPO, TRACKING_ISSUE)
        assert culprit[:10] in tracking["body"] and "PR #7" in tracking["body"], tracking["body"]
        (told,) = github.comments_on(UPSTREAM, 7)
        assert "this pull request changed `kcc_factor`" in told["body"] and culprit in told["body"]
        # The cache: no commit built twice; tonight's head, the culprit's compiled inputs and the
        # first night's are the only real builds; the docs-only commit came from the first build.
        kept = kept_builds(cache)
        made = {sha: record["made_from"] for sha, record in kept.items()}
        assert real_builds(log) == sum(1 for source in made.values() if source is None) <= 3
        assert made[base] is None and made[culprit] is None
        if night2_shas[1] in made:
            assert made[night2_shas[1]] in (base, night2_shas[0])

        writes = len(github.writes())
        night3 = act.run("schedule", "nightly.yml")
        assert night3.returncode == 0, night3.failed()
        assert "bisect/bisect" not in night3.jobs and len(github.writes()) == writes
        assert real_builds(log) == sum(1 for r in kept_builds(cache).values() if r["made_from"] is None)

        fixed_by = add_commit(compiler, FIX)
        night4 = act.run("schedule", "nightly.yml")
        assert night4.returncode == 0, night4.failed()
        (edited,) = github.comments_on(OWNER_REPO, TRACKING_ISSUE)
        assert edited["id"] == tracking["id"] and "Fixed on a branch head" in edited["body"], edited["body"]
        # the fix searched for as a culprit is (--regress pass over the nights' commits): named with its PR
        assert night4.jobs.get("bisect/bisect") == "succeeded", night4.failed()
        reports = night4.artifact("bisect-kcc_factor.cpu-interpreter.fix")
        fix = json.loads(reports["kcc_factor.cpu-interpreter.fix.culprit.json"])
        assert fix["regress"] == "pass" and fix["culprit"]["commit"] == fixed_by
        assert fix["culprit"]["pr"] == 10
        assert f"`{fixed_by[:12]}` Factor 2 again (#10) |" in edited["body"], edited["body"]
        assert len(github.comments_on(UPSTREAM, 7)) == 1  # the culprit's PR is told once


PR_MATRIX = MATRIX.replace('toolchains = ["kcc@main"]\n', "")
COMPILER_REPO = "example/kcc"
PR_COMMITS = [
    Commit("Scale twice", {"kcc/scaling.py": SCALING + "\n\ndef twice(x):\n    return x * 4\n"}),
    Commit("Factor 3", {"csrc/core.c": CORE % "3.0"}),  # breaks kcc_factor
    Commit("Document twice", {"docs/notes.md": "kcc scales, twice too\n"}),
]


def test_a_compiler_pull_request_is_built_at_both_ends_and_its_culprit_commit_named(tmp_path: Path) -> None:
    """pr.yml and pr-comment.yml copied into the compiler's repository, kregress checked out from its
    own: the PR's base and head built through the cache, the corpus judged with each, the new FAIL
    bisected over the PR's three commits, and the comment on the PR names the second."""
    workflows = {f".github/workflows/{name}": (REPO / ".github" / "workflows" / name).read_text()
                 for name in ("pr.yml", "pr-comment.yml")}  # fmt: skip
    compiler, (base,) = make_kcc_repo(tmp_path / "kcc", [Commit(BASE.subject, {**BASE.files, **workflows})])
    compiler.create_remote("origin", f"https://github.com/{COMPILER_REPO}.git")
    compiler.git.checkout("-b", "feature")
    shas = [add_commit(compiler, commit) for commit in PR_COMMITS]
    kregress = tmp_path / "kregress"
    case = {name: (CASES / "kcc_factor" / name).read_text() for name in ("case.toml", "repro.py")}
    make_project(kregress, {"kcc_factor": case}, PR_MATRIX)
    # actions/checkout fetches kregress from github.com/owner/kregress: here, from the folder.
    gitconfig = tmp_path / "gitconfig"
    gitconfig.write_text(f'[url "{kregress.as_uri()}"]\n\tinsteadOf = https://github.com/{OWNER_REPO}\n')
    event = tmp_path / "pull_request.json"
    pull = {"number": 12, "base": {"sha": base, "ref": "main"}, "head": {"sha": shas[-1], "ref": "feature"}}
    event.write_text(json.dumps({"number": 12, "pull_request": pull}))
    log = tmp_path / "builds.log"
    with serving() as github:
        act = Act(Path(compiler.working_dir), github, tmp_path / "act", repository=COMPILER_REPO)
        act.variables = {"KREGRESS_REPOSITORY": OWNER_REPO, "KREGRESS_COMPILER_PATH": "."}
        act.env = {"KCC_BUILD_LOG": str(log), "GIT_CONFIG_GLOBAL": str(gitconfig)}
        pr = act.run("pull_request", "pr.yml", event)
        assert pr.returncode == 0, pr.failed()
        assert github.log == []
        found = pr.artifact("kregress-pr")
        changes = json.loads(found["changes.json"])
        assert [(c["case"], c["target"]) for c in changes["new_fail"]] == [("kcc_factor", "cpu:interpreter")]
        comment = found["comment.md"].decode()
        assert shas[1] in comment and shas[0] not in comment, comment
        # Each commit built at most once: the base and the head for the judging, the bisect's
        # points from the cache or built once.
        assert real_builds(log) == len(kept_builds(tmp_path / "act" / "kregress-cache")) <= 4
        told = act.comment_on_pull_request(1, 12)
        assert told.returncode == 0, told.failed()
        (posted,) = github.comments_on(COMPILER_REPO, 12)
        assert shas[1] in posted["body"] and "`kcc_factor`" in posted["body"], posted["body"]
