"""Post bisect results, "looks fixed" notes and nightly regressions as GitHub comments.

One comment per (issue, case, target), found again by a hidden marker and edited in place, so
reruns never spam a thread. Bodies are made safe before anything is sent: compiler output sits in
code fences, @-mentions from logs are defused, and the body fits GitHub's 65,536 characters. The
PyGithub client does the HTTP, including bounded retries on rate limits and 5xx answers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import requests
from github import Auth, Github, GithubException, GithubRetry

from kregress.markdown import open_fence

MAX_BODY = 65536
MENTION = re.compile(r"@(?=[A-Za-z0-9][A-Za-z0-9-]*)")
TRUNCATED = "\n\n*(truncated: the full report is in the workflow's artifacts)*"


class ReportError(Exception):
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
            raise ReportError(explain(exc, target)) from None
        except requests.RequestException as exc:  # retries used up, or GitHub unreachable
            raise ReportError(
                f"GitHub kept failing on {target.repository}#{target.issue}: {type(exc).__name__}: "
                f"{str(exc)[:300]}"
            ) from None
        return url


def explain(exc: GithubException, target: IssueRef) -> str:
    message = exc.data.get("message") if isinstance(exc.data, dict) else None
    where = f"{target.repository}#{target.issue}"
    if exc.status == 404:
        return f"GitHub says {where} does not exist or the token cannot see it (404: {message})"
    if exc.status == 403:
        return f"GitHub refused {where}: the token lacks permission, or the rate limit held (403: {message})"
    return f"GitHub failed on {where} ({exc.status}: {message})"
