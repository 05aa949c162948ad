"""The real PyGithub client against a local fake GitHub (pytest-httpserver on 127.0.0.1): the exact
requests for create, update-in-place, dry-run, and the 403/404/5xx/rate-limit paths. The token
never shows up in anything kregress prints."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Response

from kregress.bisect.github.client import MAX_BODY, marker, safe_body
from kregress.cli import main
from kregress.markdown import fenced, open_fence

TOKEN = "ghp_kregressTestToken0123456789"
REPO = "owner/compiler"


def comment_json(server: HTTPServer, body: str, comment_id: int = 77) -> dict:
    base = server.url_for("").rstrip("/")
    return {"id": comment_id, "body": body, "url": f"{base}/repos/{REPO}/issues/comments/{comment_id}",
            "html_url": f"https://github.com/{REPO}/issues/5#issuecomment-{comment_id}"}  # fmt: skip


def post(server: HTTPServer, tmp_path: Path, capsys, *extra: str) -> tuple[int, str]:
    body = tmp_path / "report.md"
    body.write_text("First bad: **triton==3.9.0** — ping @someone\n```\nmask has unsupported dtype\n```\n")
    api = server.url_for("").rstrip("/")
    code = main(["comment", "post", str(body), "--on", "5", "--repo", REPO, "--key", "scalar_mask:cpu",
                 "--token", TOKEN, "--api-url", api, "--retries", "2", *extra])  # fmt: skip
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert TOKEN not in output
    return code, output


def requests(server: HTTPServer) -> list[tuple[str, str]]:
    return [(request.method, request.path) for request, _ in server.log]


def test_creates_then_updates_the_same_comment(httpserver: HTTPServer, tmp_path: Path, capsys) -> None:
    issue = f"/repos/{REPO}/issues/5"
    httpserver.expect_oneshot_request(f"{issue}/comments", method="GET").respond_with_json([])
    httpserver.expect_oneshot_request(f"{issue}/comments", method="POST").respond_with_json(
        comment_json(httpserver, "created"), status=201
    )
    code, output = post(httpserver, tmp_path, capsys)
    assert code == 0 and "posted https://github.com/owner/compiler/issues/5#issuecomment-77" in output
    assert requests(httpserver) == [
        ("GET", f"{issue}/comments"),
        ("POST", f"{issue}/comments"),
    ]
    sent = json.loads(httpserver.log[-1][0].data)["body"]
    assert sent.startswith(marker(5, "scalar_mask:cpu"))
    assert "@\u200bsomeone" in sent and "@someone" not in sent
    assert httpserver.log[0][0].headers["Authorization"] == f"token {TOKEN}"

    httpserver.clear_log()
    existing = comment_json(httpserver, sent)
    httpserver.expect_oneshot_request(f"{issue}/comments", method="GET").respond_with_json(
        [comment_json(httpserver, "someone else's", 12), existing]
    )
    httpserver.expect_oneshot_request(
        "/repos/owner/compiler/issues/comments/77", method="PATCH"
    ).respond_with_json(existing)
    code, _ = post(httpserver, tmp_path, capsys)
    assert code == 0
    assert requests(httpserver) == [
        ("GET", f"{issue}/comments"),
        ("PATCH", "/repos/owner/compiler/issues/comments/77"),
    ]


def test_dry_run_sends_nothing(httpserver: HTTPServer, tmp_path: Path, capsys) -> None:
    code, output = post(httpserver, tmp_path, capsys, "--dry-run")
    assert code == 0 and "would post on owner/compiler#5" in output and "mask has unsupported dtype" in output
    assert httpserver.log == []


@pytest.mark.parametrize(("status", "words"), [(404, "does not exist"), (403, "lacks permission")])
def test_refusals_are_clear_and_post_nothing(
    httpserver: HTTPServer, tmp_path: Path, capsys, status, words
) -> None:
    comments = f"/repos/{REPO}/issues/5/comments"
    httpserver.expect_request(comments).respond_with_json({"message": "Not Found"}, status=status)
    code, output = post(httpserver, tmp_path, capsys)
    assert code == 3 and words in output and "owner/compiler#5" in output
    assert all(method == "GET" for method, _ in requests(httpserver))


def test_server_errors_and_rate_limits_are_retried(httpserver: HTTPServer, tmp_path: Path, capsys) -> None:
    issue = f"/repos/{REPO}/issues/5"
    comments = f"{issue}/comments"
    httpserver.expect_oneshot_request(comments).respond_with_response(Response("bad gateway", status=502))
    reset = str(int(time.time()) + 1)
    limited = {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset, "X-RateLimit-Limit": "5000"}
    httpserver.expect_oneshot_request(comments).respond_with_json(
        {"message": "API rate limit exceeded"}, status=403, headers=limited
    )
    httpserver.expect_request(comments, method="GET").respond_with_json([])
    httpserver.expect_request(f"{issue}/comments", method="POST").respond_with_json(
        comment_json(httpserver, "x"), status=201
    )
    code, output = post(httpserver, tmp_path, capsys)
    assert code == 0, output
    assert requests(httpserver) == [("GET", comments)] * 3 + [("POST", comments)]


def test_bounded_retries_then_a_clear_error(httpserver: HTTPServer, tmp_path: Path, capsys) -> None:
    comments = f"/repos/{REPO}/issues/5/comments"
    httpserver.expect_request(comments).respond_with_response(Response("down", status=503))
    code, output = post(httpserver, tmp_path, capsys)
    assert code == 3 and "owner/compiler#5" in output and "kept failing" in output
    assert len(httpserver.log) == 3  # the first try and two retries


def test_bodies_fit_githubs_limit_with_fences_closed() -> None:
    body = safe_body("```\n" + "x" * 100_000, 5, "k")
    assert len(body) <= MAX_BODY
    assert body.count("```") % 2 == 0 and "truncated" in body


def test_a_longer_fence_cut_open_is_closed_with_its_own_length_before_the_note() -> None:
    """fenced() uses four backticks when the output holds three: closing with three would leave the
    "truncated" note inside the code block."""
    output = "\n".join(f"line {n} ```inner``` " + "y" * 60 for n in range(2000))
    body = safe_body("report\n\n" + fenced(output), 5, "k")
    assert len(body) <= MAX_BODY
    before, _ = body.rsplit("\n\n*(truncated", 1)
    assert before.endswith("\n````") and open_fence(before) is None
    assert open_fence(before.removesuffix("\n````")) == "````"


def test_xpass_comments_on_the_upstream_issue(tmp_path: Path, capsys) -> None:
    upstream = "https://github.com/intel/intel-xpu-backend-for-triton/issues/3449"
    item = {"case": "scratch_overflow", "expectation": "compiles", "target": "xpu:pvc", "outcome": "XPASS",
            "message": "looks fixed", "toolchain": {"triton": "3.4.0"}, "upstream": upstream}  # fmt: skip
    results = {"kregress": 1, "items": [item]}
    path = tmp_path / "results.json"
    path.write_text(json.dumps(results))
    assert main(["comment", "xpass", str(path), "--dry-run"]) == 0
    output = capsys.readouterr().out
    assert "would post on intel/intel-xpu-backend-for-triton#3449" in output and "triton 3.4.0" in output


def test_one_case_with_a_non_issue_link_does_not_cost_the_others_their_notes(tmp_path: Path, capsys) -> None:
    good = {"case": "fixed_one", "expectation": "e", "target": "cuda:sm_90", "outcome": "XPASS",
            "message": "", "upstream": "https://github.com/example/compiler/issues/12"}  # fmt: skip
    bad = {**good, "case": "tree_link", "upstream": "https://github.com/example/compiler/tree/main/examples"}
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"kregress": 1, "items": [bad, good]}))
    assert main(["comment", "xpass", str(path), "--dry-run"]) == 64
    captured = capsys.readouterr()
    assert "would post on example/compiler#12" in captured.out and "tree_link" not in captured.out
    link = "https://github.com/example/compiler/tree/main/examples"
    assert f"tree_link / e on cuda:sm_90: {link!r} is not a GitHub issue or pull request URL" in captured.err


def test_regressions_are_one_comment_with_their_bisect_reports(tmp_path: Path, capsys) -> None:
    items = [
        {"case": "scalar_mask", "expectation": "numerics", "target": "cpu:interpreter", "outcome": "FAIL",
         "failure_kind": "RUNTIME_ERROR", "message": "mask has unsupported dtype @team"},
        {"case": "vector_add", "expectation": "compiles", "target": "cuda:sm_90", "outcome": "PASS"},
    ]  # fmt: skip
    (tmp_path / "results.json").write_text(json.dumps({"kregress": 1, "items": items}))
    reports = tmp_path / "bisects"
    reports.mkdir()
    (reports / "scalar_mask.md").write_text("First bad (fail): **triton==3.9.0**")
    code = main(["comment", "regressions", str(tmp_path / "results.json"), "--on", "9", "--repo", REPO,
                 "--reports", str(reports), "--dry-run"])  # fmt: skip
    output = capsys.readouterr().out
    assert code == 0 and output.count("would post on owner/compiler#9") == 1
    assert "`scalar_mask` | `numerics` | `cpu:interpreter` | RUNTIME_ERROR" in output
    assert "First bad (fail): **triton==3.9.0**" in output and "vector_add" not in output
    assert "@\u200bteam" in output  # dry-run shows the body exactly as it would be sent


def zipped(files: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_history_fetch_takes_the_newest_earlier_run_that_left_it(tmp_path: Path, monkeypatch, capsys) -> None:
    """The nightly carries its history through the API (no `gh` on the runner): the newest
    completed run of the branch that still has the artifact, this run itself left out."""
    from fake_github import Run, serving

    with serving() as github:
        left = {1: ("main", b"night 1"), 3: ("other", b"other branch"), 4: ("main", b"this run")}
        for run_id, (branch, data) in left.items():
            artifacts = {"nightly-history": zipped({"history.sqlite": data})}
            github.add_run(REPO, Run(run_id, "nightly.yml", branch, "schedule", "success", artifacts))
        github.add_run(REPO, Run(2, "nightly.yml", "main", "schedule", "failure"))  # broke before compare
        settings = {"GITHUB_TOKEN": TOKEN, "GITHUB_REPOSITORY": REPO, "GITHUB_API_URL": github.url}
        for name, value in {**settings, "GITHUB_RUN_ID": "4"}.items():
            monkeypatch.setenv(name, value)
        command = ["history", "fetch", "--workflow", "nightly.yml", "--artifact", "nightly-history",
                   "--branch", "main", "--dir", str(tmp_path / "previous")]  # fmt: skip
        assert main(command) == 0
        assert (tmp_path / "previous" / "history.sqlite").read_bytes() == b"night 1"
        assert "from run 1" in capsys.readouterr().out
        assert all(TOKEN in (r.authorization or "") for r in github.log if r.path.startswith("/repos"))
        assert not github.writes()
        monkeypatch.setenv("GITHUB_RUN_ID", "1")
        assert main([*command[:-1], str(tmp_path / "none"), "--branch", "nowhere"]) == 1
        assert "no completed run of nightly.yml" in capsys.readouterr().out
        monkeypatch.setenv("GITHUB_REPOSITORY", "owner/missing-workflow")
        github.routes = [r for r in github.routes if "workflows" not in r[1].pattern]
        assert main(command) == 3
        assert "GitHub says owner/missing-workflow nightly.yml does not exist" in capsys.readouterr().err


def test_the_culprit_is_told_once_on_its_pull_request_upstream(tmp_path: Path, capsys) -> None:
    """One comment on the culprit's PR in the compiler's repository, edited (not repeated) by the
    next night; nothing for a bisect that found a range or a suspect."""
    from fake_github import serving

    culprit = {"commit": "c" * 40, "subject": "Factor 3 (#7)", "pr": 7,
               "pins_moved": ["LLVM (deps/pin.txt): llvm-1 → llvm-2"]}  # fmt: skip
    found = {"case": "tiny", "expectation": "numerics", "target": "cpu:interpreter",
             "good": "kcc@" + "a" * 40, "bad": "kcc@" + "b" * 40, "culprit": culprit}  # fmt: skip
    (tmp_path / "culprit.json").write_text(json.dumps(found))
    (tmp_path / "report.md").write_text("First bad: **c" + "c" * 11 + "**\n")
    with serving() as github:
        files = [str(tmp_path / "culprit.json"), "--report", str(tmp_path / "report.md")]
        upstream = ["--repository", "https://github.com/example/kcc.git"]
        command = ["comment", "culprit", *files, *upstream, "--token", TOKEN, "--api-url", github.url]
        assert main(command) == 0
        assert main(command) == 0  # the next night: the same comment, edited
        (comment,) = github.comments_on("example/kcc", 7)
        assert comment["body"].startswith(marker(7, "culprit:tiny:cpu:interpreter"))
        assert "this pull request changed `tiny` / `numerics` on `cpu:interpreter`" in comment["body"]
        assert "moves a pinned dependency" in comment["body"] and "First bad" in comment["body"]
        writes = len(github.writes())
        (tmp_path / "range.json").write_text(json.dumps({**found, "culprit": None, "why_none": "a range"}))
        assert main([*command[:2], str(tmp_path / "range.json"), *command[3:]]) == 0
        assert "no culprit commit to tell: a range" in capsys.readouterr().out
        assert len(github.writes()) == writes


def test_a_culprit_file_bisect_did_not_write_is_refused_naming_the_field(tmp_path: Path, capsys) -> None:
    """A hand-edited or truncated culprit file is a usage error naming the file and its field,
    before anything is posted; never a comment with a missing commit."""
    wrong = {"case": "tiny", "good": "kcc==1", "bad": "kcc==2", "culprit": {"subject": "F (#7)", "pr": 7}}
    (tmp_path / "culprit.json").write_text(json.dumps(wrong))
    command = ["comment", "culprit", str(tmp_path / "culprit.json"), "--repo", "example/kcc", "--dry-run"]
    assert main(command) == 64
    said = capsys.readouterr().err
    assert f"{tmp_path / 'culprit.json'}:" in said and "culprit.commit: required field is missing" in said
    (tmp_path / "culprit.json").write_text('{"case": "tiny", "good"')
    assert main(command) == 64
    assert "cannot be read as JSON" in capsys.readouterr().err
