"""Post bisect results, "looks fixed" notes and nightly regressions as GitHub comments.

One comment per (issue, case, target), found again by a hidden marker and edited in place, so
reruns never spam a thread. Bodies are made safe before anything is sent: compiler output sits in
code fences, @-mentions from logs are defused, and the body fits GitHub's 65,536 characters. The
PyGithub client does the HTTP, including bounded retries on rate limits and 5xx answers.
"""

from __future__ import annotations

import io
import itertools
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

import requests

from github import Auth, Github, GithubException, GithubRetry
from kregress.errors import KregressError
from kregress.markdown import open_fence

MAX_BODY = 65536
MENTION = re.compile(r"@(?=[A-Za-z0-9][A-Za-z0-9-]*)")
TRUNCATED = "\n\n*(truncated: the full report is in the workflow's artifacts)*"


class ReportError(KregressError):
    """GitHub refused (wrong repository or issue, missing permission) or kept failing: nothing posted."""


def marker(issue: int, key: str) -> str:
    return f"<!-- kregress:{issue}:{key} -->"


def safe_body(markdown: str, issue: int, key: str) -> str:
    """The marker, the text with mentions defused, cut to GitHub's limit with open fences closed."""
    head = marker(issue, key) + "\n"
    text = MENTION.sub("@\u200b", markdown)
    room = MAX_BODY - len(head)
    if len(text) > room:
        text = text[: room - len(TRUNCATED) - FENCE_ROOM]
        opened = open_fence(text)
        if opened:  # closed with its own length, so the note after it is prose again
            text += f"\n{opened}"
        text += TRUNCATED
    return head + text


FENCE_ROOM = 64  # what closing a fence cut open may add (a fence longer than this is not expected)


@dataclass
class IssueRef:
    repository: str
    issue: int


def issue_of(link: str) -> IssueRef:
    """owner/name and number from an issue or pull request URL."""
    found = re.match(r"https?://[^/]+/([\w.-]+/[\w.-]+)/(?:issues|pull)/(\d+)", link)
    if not found:
        raise ReportError(f"{link!r} is not a GitHub issue or pull request URL")
    return IssueRef(found.group(1), int(found.group(2)))


class Reporter:
    def __init__(self, token: str, api_url: str | None = None, retries: int = 3, wait: float = 60) -> None:
        retry = GithubRetry(
            total=retries, backoff_factor=0.5, secondary_rate_wait=wait, max_rate_limit_wait=wait
        )
        self.client = Github(
            auth=Auth.Token(token),
            base_url=api_url or "https://api.github.com",
            retry=retry,
            seconds_between_writes=0,
            lazy=True,  # no request until one is needed: reading comments is the first
        )

    def post(self, target: IssueRef, key: str, markdown: str, label: str | None = None) -> str:
        """Create or update this key's comment on the issue; return its URL."""
        body = safe_body(markdown, target.issue, key)
        tag = marker(target.issue, key)
        try:
            issue = self.client.get_repo(target.repository).get_issue(target.issue)
            existing = next((c for c in issue.get_comments() if tag in (c.body or "")), None)
            if existing is not None:
                existing.edit(body)
                url = existing.html_url
            else:
                url = issue.create_comment(body).html_url
            if label:
                issue.add_to_labels(label)
        except GithubException as exc:
            raise ReportError(explain(exc, f"{target.repository}#{target.issue}")) from None
        except requests.RequestException as exc:  # retries used up, or GitHub unreachable
            raise ReportError(
                f"GitHub kept failing on {target.repository}#{target.issue}: {type(exc).__name__}: "
                f"{str(exc)[:300]}"
            ) from None
        return url


def explain(exc: GithubException, where: str) -> str:
    """What GitHub refused, naming what was asked for (`owner/name#5`, `owner/name nightly.yml`)."""
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    if exc.status == 404:
        return f"GitHub says {where} does not exist or the token cannot see it (404: {message})"
    if exc.status == 403:
        return f"GitHub refused {where}: the token lacks permission, or the rate limit held (403: {message})"
    return f"GitHub failed on {where} ({exc.status}: {message})"


@dataclass
class FetchedArtifact:
    run_id: int
    files: list[str]


def fetch_run_artifact(
    client: Github,
    repository: str,
    workflow: str,
    artifact: str,
    into: Path,
    *,
    branch: str | None = None,
    skip_run: int | None = None,
    limit: int = 10,
) -> FetchedArtifact | None:
    """The artifact `artifact` of the newest completed run of `workflow` that still has it, unpacked
    into `into` (a night that broke early may have left none; the next older one is tried). None when
    no run of the last `limit` has it. Needs only `actions: read`."""
    try:
        runs = (
            client.get_repo(repository)
            .get_workflow(workflow)
            .get_runs(**({"branch": branch} if branch else {}), status="completed")
        )
        for run in itertools.islice(runs, limit):
            if run.id == skip_run:
                continue
            found = [a for a in run.get_artifacts() if a.name == artifact and not a.expired]
            if found:
                return FetchedArtifact(run.id, download_zip(client, found[0].archive_download_url, into))
    except GithubException as exc:
        raise ReportError(explain(exc, f"{repository} {workflow}")) from None
    except requests.RequestException as exc:
        raise ReportError(f"GitHub kept failing on {repository} {workflow}: {type(exc).__name__}") from None
    return None


def download_zip(client: Github, url: str, into: Path) -> list[str]:
    """GitHub answers an artifact's archive URL with a redirect to storage that must not get the
    token; requests drops the Authorization header when the redirect leaves the host."""
    headers = {"Accept": "application/vnd.github+json"}
    token = client.requester.auth.token if client.requester.auth else None  # type: ignore[attr-defined]
    if token:
        headers["Authorization"] = f"Bearer {token}"
    response = requests.get(url, headers=headers, timeout=120)
    response.raise_for_status()
    into.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        for name in archive.namelist():
            if name.startswith("/") or ".." in Path(name).parts:
                raise ReportError(f"the artifact at {url} holds an unsafe path: {name!r}")
        archive.extractall(into)
        return sorted(archive.namelist())
