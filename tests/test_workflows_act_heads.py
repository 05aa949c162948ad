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
from act_harness import OWNER_REPO, Act, make_project
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
    records = cache.glob("builds/kcc-*/*/out/kregress-build.json")
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
        (results_file,) = [body for name, body in night1.artifact(job).items() if name.endswith(".json")]
        results = json.loads(results_file)
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
        assert f"`{night2_shas[-1][:12]}..{fixed_by[:12]}`" in edited["body"]
        assert len(github.comments_on(UPSTREAM, 7)) == 1  # the culprit's PR is told once
