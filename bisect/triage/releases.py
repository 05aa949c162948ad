"""The releases a draft is judged under: each package's on the index (read once per package, with
their upload dates), and the release a reporter names in the issue's text.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass, field

from packaging.version import Version

from kregress.frameworks import FRAMEWORKS
from kregress.package_index import index_files


def package_for(target: str, framework: str, given: str | None) -> str:
    if given:
        return given
    if framework == "triton" and target.startswith("xpu:"):
        return "triton-xpu"
    return framework


def releases_and_dates(package: str, index: str, oldest: Version) -> tuple[list[str], dict[str, dt.datetime]]:
    """The releases to search (from `oldest`; betas only where nothing else is out), and when each
    was first uploaded where the index says (PEP 700), from one read of the index."""
    files = [f for f in index_files(package, index) if not f.yanked and f.version >= oldest]
    released = sorted({f.version for f in files})
    finals = [v for v in released if not v.is_prerelease]
    dates: dict[str, dt.datetime] = {}
    for f in files:
        if f.uploaded is not None:
            spec = f"{package}=={f.version}"
            dates[spec] = min(dates.get(spec, f.uploaded), f.uploaded)
    return [f"{package}=={v}" for v in finals or released], dates


@dataclass
class PackageReleases:
    """Each package's releases and their upload dates, the index read once per package for the
    whole import (the spelling's bound and the search both need them)."""

    index: str
    framework: str
    package: str | None  # --package: its every release is searched, not only the framework's oldest on
    releases: dict[str, list[str]] = field(default_factory=dict)
    dates: dict[str, dict[str, dt.datetime]] = field(default_factory=dict)

    def package_of(self, target: str) -> str:
        return package_for(target, self.framework, self.package)

    def of(self, target: str) -> list[str]:
        """The releases searched on `target`, oldest first."""
        pkg = self.package_of(target)
        if pkg not in self.releases:
            oldest = (
                Version(FRAMEWORKS[self.framework].oldest_release or "0")
                if pkg != self.package
                else Version("0")
            )
            self.releases[pkg], self.dates[pkg] = releases_and_dates(pkg, self.index, oldest)
        return self.releases[pkg]

    def dated(self, target: str) -> dict[str, dt.datetime]:
        self.of(target)
        return self.dates[self.package_of(target)]


def named_release(text: str, package: str, versions: list[str]) -> str | None:
    """The release of `package` the reporter names ("Triton: 3.6.0", "triton==3.1.0", TileLang's
    form's "What version of TileLang are you using? 0.1.8+cuda.git…"), where one of `versions`
    is it: a build of a commit ("+cuda.git…", "+git…") counts as the release it was versioned
    as, and "3.6" as 3.6.0, else the newest 3.6.x. None where the text names none of them."""
    mention = release_mention(text, package, versions)
    return mention.release if mention else None


@dataclass
class ReleaseMention:
    release: str
    commit_build: bool  # "0.1.8+cuda.git…", "3.4.0+git…", "3.5.0.dev…": a commit's build, not the release


def release_mention(text: str, package: str, versions: list[str]) -> ReleaseMention | None:
    """The first release of `versions` the text names (as named_release reads it), and whether the
    reporter ran a build of a commit versioned as it rather than the release: such a build may
    hold changes the release does not, so the release clean here does not clear the reporter's."""
    name = re.escape(package.split("-")[0])  # triton-xpu's reporters write "triton"
    build = r"(?P<build>\.dev\w*|\+[\w.]*git\w*|\+[0-9a-f]{7,}\b)?"  # a commit's build
    version = rf"(\d+\.\d+(?:\.\d+)*(?:\.post\d+|(?:a|b|rc)\d+)?){build}"
    # "Triton: ", "==", " version", or a line that ends in "?" or ":" and the version on a line below
    # (a form's question); never across lines of code ("import triton\nx = 3.0")
    between = r"[^\d\n]{0,40}?(?:[?:][ \t]*(?:\n[ \t]*){1,3})?v?"
    mention = re.compile(rf"\b{name}\b{between}{version}", re.I)
    by_version = {Version(v.split("==")[1]): v for v in versions}
    for found in mention.finditer(text):
        named, built = Version(found.group(1)), found["build"] is not None
        if named in by_version:
            return ReleaseMention(by_version[named], built)
        parts = named.release
        if len(parts) == 2:
            within = [v for v in by_version if v.release[:2] == parts]
            if within:
                return ReleaseMention(by_version[max(within)], built)
    return None
