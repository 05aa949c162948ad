"""A local GitHub REST API with state, for the workflows run under act and for the clients that
talk to GitHub (PyGithub in kregress, octokit in actions/download-artifact): issues and their
comments, workflow runs and their artifacts, workflow dispatches, collaborators' permissions.
It serves 127.0.0.1 only and records every request, so a test can assert on what GitHub received.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    authorization: str | None
    body: Any


@dataclass
class Run:
    id: int
    workflow: str  # file name, e.g. nightly.yml
    branch: str
    event: str
    conclusion: str
    artifacts: dict[str, bytes] = field(default_factory=dict)  # name -> zip
    pull_requests: list[int] = field(default_factory=list)


@dataclass
class Repository:
    issues: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # number -> comments
    labels: dict[int, list[str]] = field(default_factory=dict)
    runs: list[Run] = field(default_factory=list)
    dispatches: list[dict[str, Any]] = field(default_factory=list)
    permissions: dict[str, str] = field(default_factory=dict)  # login -> admin/write/read/none
    reactions: list[dict[str, Any]] = field(default_factory=list)
    # number -> what an issue (or pull request) says of itself: title, body, created_at, user, and
    # "pull_request": {"merged_at": ...} for a pull request
    opened: dict[int, dict[str, Any]] = field(default_factory=dict)
    timeline: dict[int, list[dict[str, Any]]] = field(default_factory=dict)  # number -> events


class FakeGitHub:
    """The state and the routes; `url` is set once it serves."""

    def __init__(self) -> None:
        self.repos: dict[str, Repository] = {}
        self.log: list[Received] = []
        self.url = ""
        self.lock = threading.Lock()
        self.next_id = 1000
        self.routes: list[tuple[str, re.Pattern[str], Callable[..., Response]]] = [
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)"), self.repo),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)"), self.issue),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments"), self.comments),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/timeline"), self.timeline),
            ("POST", re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/comments"), self.create_comment),
            ("PATCH", re.compile(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)"), self.edit_comment),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)"), self.get_comment),
            ("POST", re.compile(r"/repos/([^/]+/[^/]+)/issues/comments/(\d+)/reactions"), self.react),
            ("POST", re.compile(r"/repos/([^/]+/[^/]+)/issues/(\d+)/labels"), self.add_labels),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/actions/workflows/([^/]+)"), self.workflow),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/actions/workflows/([^/]+)/runs"), self.workflow_runs),
            ("POST", re.compile(r"/repos/([^/]+/[^/]+)/actions/workflows/([^/]+)/dispatches"), self.dispatch),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/actions/runs/(\d+)/artifacts"), self.run_artifacts),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)"), self.artifact),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/actions/artifacts/(\d+)/zip"), self.artifact_zip),
            ("GET", re.compile(r"/blobs/(\d+)"), self.blob),
            ("GET", re.compile(r"/repos/([^/]+/[^/]+)/collaborators/([^/]+)/permission"), self.permission),
        ]

    # --- state the tests set up and read --------------------------------------------------------

    def repository(self, name: str) -> Repository:
        return self.repos.setdefault(name, Repository())

    def add_run(self, repo: str, run: Run) -> None:
        with self.lock:
            self.repository(repo).runs.append(run)

    def comments_on(self, repo: str, issue: int) -> list[dict[str, Any]]:
        return list(self.repository(repo).issues.get(issue, []))

    def writes(self) -> list[Received]:
        """Every request that changed something (comments, labels, dispatches, reactions)."""
        return [r for r in self.log if r.method in ("POST", "PATCH", "PUT", "DELETE")]

    # --- serving --------------------------------------------------------------------------------

    def __call__(self, environ: dict, start_response: Callable) -> Any:
        request = Request(environ)
        body: Any = None
        if request.data:
            try:
                body = json.loads(request.data)
            except ValueError:
                body = request.data.decode(errors="replace")
        path = request.path.rstrip("/") or "/"
        with self.lock:
            self.log.append(
                Received(
                    request.method,
                    path,
                    parse_qs(request.query_string.decode()),
                    request.headers.get("Authorization"),
                    body,
                )
            )
        for method, pattern, handler in self.routes:
            found = pattern.fullmatch(path)
            if found and method == request.method:
                with self.lock:
                    response = handler(request, body, *found.groups())
                return response(environ, start_response)
        missing = {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}
        return self.json(missing, 404)(environ, start_response)

    def json(self, data: Any, status: int = 200) -> Response:
        return Response(json.dumps(data), status=status, content_type="application/json")

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def comment_json(self, repo: str, issue: int, comment: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": comment["id"],
            "body": comment["body"],
            "user": {"login": comment.get("user", "github-actions[bot]")},
            "url": f"{self.url}/repos/{repo}/issues/comments/{comment['id']}",
            "html_url": f"https://github.com/{repo}/issues/{issue}#issuecomment-{comment['id']}",
            "issue_url": f"{self.url}/repos/{repo}/issues/{issue}",
            "created_at": comment["created_at"],
            "updated_at": comment["updated_at"],
        }

    def run_json(self, repo: str, run: Run) -> dict[str, Any]:
        return {
            "id": run.id,
            "name": run.workflow.removesuffix(".yml"),
            "path": f".github/workflows/{run.workflow}",
            "head_branch": run.branch,
            "event": run.event,
            "status": "completed",
            "conclusion": run.conclusion,
            "url": f"{self.url}/repos/{repo}/actions/runs/{run.id}",
            "artifacts_url": f"{self.url}/repos/{repo}/actions/runs/{run.id}/artifacts",
            "pull_requests": [{"number": n} for n in run.pull_requests],
        }

    def artifact_json(self, repo: str, run: Run, name: str) -> dict[str, Any]:
        artifact_id = run.id * 100 + sorted(run.artifacts).index(name)
        return {
            "id": artifact_id,
            "name": name,
            "size_in_bytes": len(run.artifacts[name]),
            "expired": False,
            "created_at": "2026-11-23T00:00:00Z",
            "archive_download_url": f"{self.url}/repos/{repo}/actions/artifacts/{artifact_id}/zip",
            "url": f"{self.url}/repos/{repo}/actions/artifacts/{artifact_id}",
            "workflow_run": {"id": run.id, "head_branch": run.branch},
        }

    def find_artifact(self, repo: str, artifact_id: int) -> tuple[Run, str] | None:
        for run in self.repository(repo).runs:
            for name in run.artifacts:
                if self.artifact_json(repo, run, name)["id"] == artifact_id:
                    return run, name
        return None

    # --- routes ---------------------------------------------------------------------------------

    def repo(self, request: Request, body: Any, repo: str) -> Response:
        owner, name = repo.split("/")
        return self.json(
            {
                "id": 1,
                "name": name,
                "full_name": repo,
                "owner": {"login": owner},
                "url": f"{self.url}/repos/{repo}",
                "default_branch": "main",
            }
        )

    def issue(self, request: Request, body: Any, repo: str, number: str) -> Response:
        return self.json(self.issue_json(repo, int(number)))

    def issue_json(self, repo: str, number: int) -> dict[str, Any]:
        opened = self.repository(repo).opened.get(number, {})
        kind = "pull" if "pull_request" in opened else "issues"
        return {
            "number": number,
            "title": f"issue {number}",
            "state": "open",
            "body": None,
            "created_at": "2025-01-01T00:00:00Z",
            "user": {"login": "reporter"},
            **opened,
            "url": f"{self.url}/repos/{repo}/issues/{number}",
            "html_url": f"https://github.com/{repo}/{kind}/{number}",
            "labels": [{"name": n} for n in self.repository(repo).labels.get(number, [])],
        }

    def timeline(self, request: Request, body: Any, repo: str, number: str) -> Response:
        """Cross-references: each event {"event": "cross-referenced", "pull": N} names a pull request."""
        events = []
        for event in self.repository(repo).timeline.get(int(number), []):
            source = {"type": "issue", "issue": self.issue_json(repo, event["pull"])}
            events.append({"event": event["event"], "source": source, "id": self.new_id()})
        return self.json(events)

    def comments(self, request: Request, body: Any, repo: str, number: str) -> Response:
        found = self.repository(repo).issues.get(int(number), [])
        return self.json([self.comment_json(repo, int(number), c) for c in found])

    def create_comment(self, request: Request, body: Any, repo: str, number: str) -> Response:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        comment = {"id": self.new_id(), "body": body["body"], "created_at": now, "updated_at": now}
        self.repository(repo).issues.setdefault(int(number), []).append(comment)
        return self.json(self.comment_json(repo, int(number), comment), 201)

    def located(self, repo: str, comment_id: int) -> tuple[int, dict[str, Any]] | None:
        for number, found in self.repository(repo).issues.items():
            for comment in found:
                if comment["id"] == comment_id:
                    return number, comment
        return None

    def get_comment(self, request: Request, body: Any, repo: str, comment_id: str) -> Response:
        found = self.located(repo, int(comment_id))
        if found is None:
            return self.json({"message": "Not Found"}, 404)
        return self.json(self.comment_json(repo, *found))

    def edit_comment(self, request: Request, body: Any, repo: str, comment_id: str) -> Response:
        found = self.located(repo, int(comment_id))
        if found is None:
            return self.json({"message": "Not Found"}, 404)
        number, comment = found
        comment["body"] = body["body"]
        comment["updated_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        return self.json(self.comment_json(repo, number, comment))

    def react(self, request: Request, body: Any, repo: str, comment_id: str) -> Response:
        self.repository(repo).reactions.append({"comment": int(comment_id), "content": body["content"]})
        return self.json({"id": self.new_id(), "content": body["content"]}, 201)

    def add_labels(self, request: Request, body: Any, repo: str, number: str) -> Response:
        names = body["labels"] if isinstance(body, dict) else body
        labels = self.repository(repo).labels.setdefault(int(number), [])
        labels.extend(n for n in names if n not in labels)
        return self.json([{"name": n} for n in labels])

    def workflow(self, request: Request, body: Any, repo: str, workflow: str) -> Response:
        return self.json(
            {
                "id": abs(hash(workflow)) % 10**6,
                "name": workflow.removesuffix(".yml"),
                "path": f".github/workflows/{workflow}",
                "state": "active",
                "url": f"{self.url}/repos/{repo}/actions/workflows/{workflow}",
            }
        )

    def workflow_runs(self, request: Request, body: Any, repo: str, workflow: str) -> Response:
        branch = request.args.get("branch")
        runs = [r for r in self.repository(repo).runs if r.workflow == workflow]
        runs = [r for r in runs if branch in (None, r.branch)]
        runs.sort(key=lambda r: r.id, reverse=True)  # newest first, as GitHub lists them
        return self.json({"total_count": len(runs), "workflow_runs": [self.run_json(repo, r) for r in runs]})

    def dispatch(self, request: Request, body: Any, repo: str, workflow: str) -> Response:
        self.repository(repo).dispatches.append({"workflow": workflow, **body})
        return Response(status=204)

    def run_artifacts(self, request: Request, body: Any, repo: str, run_id: str) -> Response:
        run = next((r for r in self.repository(repo).runs if r.id == int(run_id)), None)
        if run is None:
            return self.json({"message": "Not Found"}, 404)
        name = request.args.get("name")
        found = [self.artifact_json(repo, run, n) for n in sorted(run.artifacts) if name in (None, n)]
        return self.json({"total_count": len(found), "artifacts": found})

    def artifact(self, request: Request, body: Any, repo: str, artifact_id: str) -> Response:
        found = self.find_artifact(repo, int(artifact_id))
        if found is None:
            return self.json({"message": "Not Found"}, 404)
        return self.json(self.artifact_json(repo, *found))

    def artifact_zip(self, request: Request, body: Any, repo: str, artifact_id: str) -> Response:
        if self.find_artifact(repo, int(artifact_id)) is None:
            return self.json({"message": "Not Found"}, 404)
        # GitHub redirects to storage on another host; the client must not send the token there.
        return Response(status=302, headers={"Location": f"{self.url}/blobs/{artifact_id}"})

    def blob(self, request: Request, body: Any, artifact_id: str) -> Response:
        for repo in self.repos:
            found = self.find_artifact(repo, int(artifact_id))
            if found:
                run, name = found
                return Response(run.artifacts[name], content_type="application/zip")
        return Response(status=404)

    def permission(self, request: Request, body: Any, repo: str, login: str) -> Response:
        level = self.repository(repo).permissions.get(login, "none")
        return self.json({"permission": level, "user": {"login": login}})


@contextmanager
def serving(host: str = "127.0.0.1") -> Iterator[FakeGitHub]:
    """A FakeGitHub on a free port of `host`, for as long as the block runs."""
    fake = FakeGitHub()
    server = make_server(host, 0, fake, threaded=True)
    fake.url = f"http://{host}:{server.server_port}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        server.shutdown()
        thread.join(timeout=10)
