"""Which releases a package index holds: PyPI's simple API, or any PEP 503/691 index
(KREGRESS_INDEX_URL). Read by the runner (an unpinned --toolchain is pinned to its newest release)
and by bisect and import (the releases between two ends)."""

from __future__ import annotations

import datetime as dt
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from html.parser import HTMLParser

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from kregress.errors import KregressError
from kregress.toolchains import package_index

PYPI = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"  # PEP 691; HTML (PEP 503) is read too


class CandidateError(KregressError):
    """The refs, the repository or the index do not give a release or range to judge (a usage
    problem)."""


def newest_release(spec: str, *, index: str | None = None) -> str:
    """An unpinned requirement (`triton`, `triton>=3.5`) as its newest matching release, pinned
    (`triton==3.6.0`), so a nightly judges what was released last and its environment and results
    name that version (a cached environment of `triton` would keep last night's). A pinned
    requirement or a path is returned as it is."""
    if os.path.exists(spec):
        return spec
    try:
        requirement = Requirement(spec)
    except InvalidRequirement as exc:
        raise CandidateError(f"{spec!r} is not a requirement like triton or triton>=3.5 ({exc})") from None
    if any(s.operator in ("==", "===") for s in requirement.specifier):
        return spec
    index = index or package_index() or PYPI
    matching = [v for v in released_versions(requirement.name, index) if v in requirement.specifier]
    if not matching:
        raise CandidateError(f"no release of {requirement.name} on {index} matches {spec!r}")
    return f"{requirement.name}=={max(matching)}"


class LinkList(HTMLParser):
    """The files of a PEP 503 project page: (file name, yanked)."""

    def __init__(self) -> None:
        super().__init__()
        self.files: list[tuple[str, bool]] = []
        self.inside: bool | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.inside = "data-yanked" in dict(attrs)
            self.files.append(("", self.inside))

    def handle_data(self, data: str) -> None:
        if self.inside is not None:
            name, yanked = self.files[-1]
            self.files[-1] = (name + data.strip(), yanked)

    def handle_endtag(self, tag: str) -> None:
        if tag == "a":
            self.inside = None


@dataclass(frozen=True)
class IndexFile:
    """One file of a package on a simple index."""

    version: Version
    yanked: bool
    uploaded: dt.datetime | None  # PEP 700 `upload-time`, where the index gives it (JSON only)


def index_files(package: str, index: str) -> list[IndexFile]:
    """The files of `package` on a simple index (PyPI's, or any PEP 503/691 one) whose names carry
    a version, read once."""
    url = f"{index.rstrip('/')}/{canonicalize_name(package)}/"
    request = urllib.request.Request(url, headers={"Accept": f"{SIMPLE_JSON}, text/html;q=0.1"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            kind, body = response.headers.get_content_type(), response.read().decode()
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise CandidateError(f"{package} is not on the index {index} ({url}: 404)") from None
        raise
    if kind == SIMPLE_JSON:
        entries = [
            (f["filename"], bool(f.get("yanked")), f.get("upload-time")) for f in json.loads(body)["files"]
        ]
    else:
        links = LinkList()
        links.feed(body)
        entries = [(name, yanked, None) for name, yanked in links.files]
    found = []
    for name, yanked, uploaded in entries:
        version = version_of(name)
        if version is not None:
            when = dt.datetime.fromisoformat(uploaded.replace("Z", "+00:00")) if uploaded else None
            found.append(IndexFile(version, yanked, when))
    return found


def released_versions(package: str, index: str) -> list[Version]:
    """Every version of `package` on a simple index that has a file not yanked, sorted."""
    return sorted({f.version for f in index_files(package, index) if not f.yanked})


def version_of(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
