"""The build cache: every commit of a compiler built at most once on a runner, shared by nights,
bisects, PR runs and commands.

A build is kept by commit. A commit whose compiled inputs (every file of its tree but those its
repository declares shipped uncompiled or never packaged) equal a kept build's is made from that
build: its wheel with the uncompiled files replaced by the commit's own, which is what a build
would give, in a second instead of the minutes (Triton: about 15) a compiler build takes. The
compiler's own caches (ccache, Triton's downloaded LLVM) live in a folder kept across builds, named
to the build command as {shared}. The cache is bounded: least recently used builds go first.

Layout under `<cache>/builds/<name>/`: `<commit>/out/*.whl` and the record (`kregress-build.json`,
which makes every judgement under the wheel name its commit), `<commit>/FAILED` for a commit that
does not build, `shared/` for the compiler's caches, a lock per commit and one for pruning.
"""

from __future__ import annotations

import base64
import contextlib
import csv
import fnmatch
import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from filelock import FileLock

from kregress.errors import KregressError
from kregress.matrix import RepositoryEntry, UncompiledPaths
from kregress.paths import cache_root
from kregress.toolchains import BUILD_RECORD, BuildCancelled, run_cancellable

BUILD_TIMEOUT = 4 * 3600
SIZE_VARIABLE = "KREGRESS_BUILD_CACHE_GB"
DEFAULT_SIZE_GB = 40.0  # a Triton wheel is about 0.5 GB, its ccache and LLVM some 10 GB more
SHARED = "shared"


class BuildFailed(KregressError):
    """A commit could not be built into a toolchain: that point is a skip, like exit 125."""


@dataclass(frozen=True)
class BuildRecipe:
    """How a repository's commits are built, and which of their files a build only copies."""

    build_cmd: str | None
    uncompiled: tuple[UncompiledPaths, ...] = ()
    unpackaged: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    pins: tuple[str, ...] = ()  # files that pin a dependency: a culprit moving one says so

    @classmethod
    def of(cls, entry: RepositoryEntry | None, build_cmd: str | None = None) -> BuildRecipe:
        """The matrix's recipe for a repository; `build_cmd` (bisect's --build-cmd) replaces its
        command."""
        if entry is None:
            return cls(build_cmd)
        return cls(build_cmd or entry.build_cmd, tuple(entry.uncompiled), tuple(entry.unpackaged),
                   dict(entry.build_env), tuple(entry.pins))  # fmt: skip

    def uncompiled_destination(self, path: str) -> str | None:
        """Where a file of the tree lands in the wheel, when it is shipped uncompiled."""
        for mapping in self.uncompiled:
            inside = relative(path, mapping.source, mapping.glob)
            if inside is not None:
                return f"{mapping.installed.strip('/')}/{inside}"
        return None

    def shipped_uncompiled(self, name: str) -> bool:
        """Whether a file of a wheel is one the recipe ships uncompiled (a commit's own replaces it)."""
        return any(relative(name, m.installed, m.glob) is not None for m in self.uncompiled)

    def is_unpackaged(self, path: str) -> bool:
        return any(matches(path, pattern) for pattern in self.unpackaged)

    def compiled(self, path: str) -> bool:
        return self.uncompiled_destination(path) is None and not self.is_unpackaged(path)


def tree_files(repo: Path, commit: str) -> dict[str, str]:
    """Path -> blob id of every file of the commit's tree."""
    listing = git(repo, "ls-tree", "-r", "-z", commit)
    files = {}
    for entry in filter(None, listing.split("\0")):
        meta, path = entry.split("\t", 1)
        files[path] = meta.split()[2]
    return files


def git_bytes(repo: Path, *args: str) -> bytes:
    """What `git -C repo ARGS` prints; BuildFailed naming the command when it fails."""
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if done.returncode != 0:
        said = (done.stderr or done.stdout).decode(errors="replace").strip()
        raise BuildFailed(f"git {' '.join(args[:3])} in {repo}: {said}")
    return done.stdout


def git(repo: Path, *args: str) -> str:
    return git_bytes(repo, *args).decode()


def relative(path: str, folder: str, pattern: str) -> str | None:
    """`path` below `folder` when it matches `pattern` there, else None."""
    prefix = folder.strip("/") + "/"
    if path.startswith(prefix) and matches(path[len(prefix) :], pattern):
        return path[len(prefix) :]
    return None


def matches(path: str, pattern: str) -> bool:
    """fnmatch, with a leading `**/` matching no folder too (`**/*.py` takes `__init__.py`)."""
    return fnmatch.fnmatch(path, pattern) or (
        pattern.startswith("**/") and fnmatch.fnmatch(path, pattern[3:])
    )


def folder_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


class BuildCache:
    """Builds a commit of `repo` into something `--toolchain` installs, once: the source tree
    itself (no build command), or the wheels `build_cmd` leaves in {out}. Failures are kept too.
    `built`, `failed`, `folder` and `build` are what a bisection asks of it."""

    def __init__(
        self,
        repo: Path,
        recipe: BuildRecipe | str | None,
        root: Path | None = None,
        *,
        name: str | None = None,
        limit_bytes: int | None = None,
        log: Callable[[str], None] = lambda _: None,
    ) -> None:
        self.repo = repo.resolve()
        self.recipe = recipe if isinstance(recipe, BuildRecipe) else BuildRecipe(recipe)
        identity = f"{name or self.repo}|{self.recipe.build_cmd or ''}"
        label = name or self.repo.name
        self.root = (
            root or cache_root() / "builds"
        ) / f"{label}-{hashlib.sha256(identity.encode()).hexdigest()[:12]}"
        self.package = name or self.repo.name.removesuffix(".git")
        self.named = name is not None
        size_gb = float(os.environ.get(SIZE_VARIABLE) or DEFAULT_SIZE_GB)
        self.limit_bytes = limit_bytes if limit_bytes is not None else int(size_gb * 2**30)
        self.log = log

    @property
    def build_cmd(self) -> str | None:
        return self.recipe.build_cmd

    def folder(self, sha: str) -> Path:
        return self.root / sha

    def record(self, sha: str) -> dict[str, Any] | None:
        """What the cache knows of a kept build: how it was made, from which build, how long it took."""
        path = self.folder(sha) / "out" / BUILD_RECORD
        try:
            return dict(json.loads(path.read_text()))
        except (OSError, ValueError):
            return None

    def built(self, sha: str) -> str | None:
        marker = self.folder(sha) / "toolchain"
        return marker.read_text() if marker.exists() else None

    def failed(self, sha: str) -> bool:
        return (self.folder(sha) / "FAILED").exists()

    def lock(self, sha: str) -> FileLock:
        self.root.mkdir(parents=True, exist_ok=True)
        return FileLock(str(self.root / f"{sha}.lock"))

    def kept(self) -> list[dict[str, Any]]:
        """Every kept build's record, the most recently used first."""
        records = []
        for marker in self.root.glob("*/toolchain"):
            record = self.record(marker.parent.name)
            if record is not None:
                records.append({**record, "used": marker.stat().st_mtime})
        return sorted(records, key=lambda r: -r["used"])

    def build(self, sha: str, cancel: threading.Event | None = None) -> str:
        """The commit's toolchain spec, built now if need be (made from a kept build where only
        uncompiled files differ); `cancel` stops a build started ahead of need, leaving nothing
        behind (not even a failure)."""
        sha = git(self.repo, "rev-parse", f"{sha}^{{commit}}").strip()
        with self.lock(sha):
            done = self.built(sha)
            if done:
                os.utime(self.folder(sha) / "toolchain")  # least recently used goes first
                return done
            failed = self.folder(sha) / "FAILED"
            if failed.exists():
                raise BuildFailed(failed.read_text())
            spec = self.make(sha, cancel)
        self.prune(keep={sha})
        return spec

    def make(self, sha: str, cancel: threading.Event | None) -> str:
        folder = self.folder(sha)
        shutil.rmtree(folder, ignore_errors=True)
        out = folder / "out"
        out.mkdir(parents=True)
        files = tree_files(self.repo, sha)
        compiled = self.compiled_digest(files)
        started = time.perf_counter()
        base = self.kept_with(compiled) if self.build_cmd else None
        if base is not None:
            made = self.from_kept(base, files, out)
            record = {"made_from": base["commit"], "uncompiled_files": made}
            self.log(f"{sha[:12]}: made from {base['commit'][:12]}'s build + {made} uncompiled files")
        else:
            spec_path = self.build_from_source(sha, folder, out, cancel)
            if spec_path is not None:  # no build command: the source tree is the toolchain
                (folder / "toolchain").write_text(str(spec_path))
                return str(spec_path)
            record = {"made_from": None, "uncompiled_files": 0}
        record.update(
            package=self.package_built(out), commit=sha, repository=str(self.repo), compiled_inputs=compiled,
            seconds=round(time.perf_counter() - started, 3), made_at=time.time(),
        )  # fmt: skip
        (out / BUILD_RECORD).write_text(json.dumps(record, indent=1))
        spec = " ".join(
            str(p) for p in sorted(out.glob("*.whl")) or sorted(out.iterdir()) if p.name != BUILD_RECORD
        )
        (folder / "toolchain").write_text(spec)
        return spec

    def package_built(self, out: Path) -> str:
        """The package a build made: the name the cache was given (the matrix's: triton-xpu builds a
        wheel named triton), else the distribution its wheel names (a PR's checkout folder says
        nothing)."""
        wheel = next(iter(sorted(out.glob("*.whl"))), None)
        return self.package if self.named or wheel is None else wheel.name.split("-")[0].replace("_", "-")

    def compiled_digest(self, files: dict[str, str]) -> str:
        """The commit's compiled inputs: every file a build compiles or reads, by content."""
        kept = sorted((path, blob) for path, blob in files.items() if self.recipe.compiled(path))
        return hashlib.sha256(json.dumps(kept).encode()).hexdigest()

    def kept_with(self, compiled: str) -> dict[str, Any] | None:
        """A kept build with the same compiled inputs, whose output is wheels (which can be remade)."""
        for record in self.kept():
            if record.get("compiled_inputs") == compiled:
                wheels = list((self.folder(record["commit"]) / "out").glob("*.whl"))
                if wheels:
                    return record
        return None

    def from_kept(self, base: dict[str, Any], files: dict[str, str], out: Path) -> int:
        """The kept build's wheels with every uncompiled file replaced by this commit's; the number of
        files that differ from the kept build's."""
        shipped = {
            destination: blob
            for path, blob in files.items()
            if (destination := self.recipe.uncompiled_destination(path)) is not None
        }

        def read(destination: str) -> bytes:
            return git_bytes(self.repo, "cat-file", "blob", shipped[destination])

        wheels = sorted((self.folder(base["commit"]) / "out").glob("*.whl"))
        return sum(rewrite_wheel(w, out / w.name, self.recipe, set(shipped), read) for w in wheels)

    def build_from_source(
        self, sha: str, folder: Path, out: Path, cancel: threading.Event | None
    ) -> Path | None:
        src = folder / "src"
        src.mkdir()
        archive = git_bytes(self.repo, "archive", "--format=tar", sha)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(src, filter="data")
        if self.build_cmd is None:
            return src
        shared = self.root / SHARED
        shared.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, **{k: v.format(shared=shared) for k, v in self.recipe.env.items()}}
        command = self.build_cmd.format(src=src, out=out)
        self.log(f"{sha[:12]}: building ({command})")
        try:
            status, output = run_cancellable(command, timeout=BUILD_TIMEOUT, cancel=cancel, shell=True,
                                             cwd=src, env=env)  # fmt: skip
        except BuildCancelled:  # as if never started
            shutil.rmtree(folder, ignore_errors=True)
            raise
        except subprocess.TimeoutExpired:
            status, output = 124, f"the build ran past {BUILD_TIMEOUT} s"
        products = sorted(p for p in out.iterdir() if p.is_file())
        if status != 0 or not products:
            log = f"$ {command}\n(exit {status})\n{output[-3000:]}"
            if status == 0:
                log += f"\nthe build command left nothing in {out}"
            shutil.rmtree(out, ignore_errors=True)
            (folder / "FAILED").write_text(log)
            raise BuildFailed(log)
        shutil.rmtree(src, ignore_errors=True)  # the wheel is what is kept; the tree is in git
        return None

    def prune(self, keep: Iterable[str] = (), limit_bytes: int | None = None) -> list[str]:
        """Remove least recently used builds until the cache fits its bound; builds in use (locked)
        and `keep` stay. The removed commits."""
        limit = self.limit_bytes if limit_bytes is None else limit_bytes
        if not self.root.exists():
            return []
        removed: list[str] = []
        with FileLock(str(self.root / "prune.lock")):
            sizes = {p.name: folder_size(p) for p in self.root.iterdir() if p.is_dir()}
            total = sum(sizes.values())
            for record in reversed(self.kept()):
                if total <= limit:
                    break
                sha = record["commit"]
                if sha in keep:
                    continue
                lock = self.lock(sha)
                try:
                    lock.acquire(timeout=0)
                except TimeoutError:
                    continue  # being read or built right now
                try:
                    shutil.rmtree(self.folder(sha), ignore_errors=True)
                finally:
                    lock.release()
                total -= sizes.get(sha, 0)
                removed.append(sha)
        for sha in removed:
            self.log(f"{sha[:12]}: pruned (the build cache keeps {limit / 2**30:.1f} GiB)")
        return removed


def record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def rewrite_wheel(
    wheel: Path,
    target: Path,
    recipe: BuildRecipe,
    destinations: set[str],
    read: Callable[[str], bytes],
) -> int:
    """`wheel` copied to `target` with the uncompiled files of another commit: those of the kept
    build dropped, the commit's written, RECORD remade. How many files differ."""
    changed = 0
    with zipfile.ZipFile(wheel) as old, zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as new:
        names = old.namelist()
        record_name = next(n for n in names if n.endswith(".dist-info/RECORD"))
        kept_uncompiled = {n for n in names if recipe.shipped_uncompiled(n)}
        rows = []
        for name in names:
            if name == record_name or name in kept_uncompiled:
                continue
            data = old.read(name)
            new.writestr(old.getinfo(name), data)
            rows.append((name, record_hash(data), str(len(data))))
        for destination in sorted(destinations):
            data = read(destination)
            if destination not in kept_uncompiled or old.read(destination) != data:
                changed += 1
            new.writestr(destination, data)
            rows.append((destination, record_hash(data), str(len(data))))
        changed += len(kept_uncompiled - destinations)  # deleted by the commit
        text = io.StringIO()
        csv.writer(text, lineterminator="\n").writerows([*rows, (record_name, "", "")])
        new.writestr(record_name, text.getvalue())
    return changed


def fetch_repository(package: str, url: str, root: Path | None = None) -> Path:
    """A bare clone of the package's repository in the cache, fetched now (every branch and tag)."""
    clone = (root or cache_root() / "repos") / f"{package}.git"
    clone.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(clone) + ".lock"):
        if not (clone / "HEAD").exists():
            with tempfile.TemporaryDirectory(dir=clone.parent) as scratch:
                made = Path(scratch) / "clone.git"
                done = subprocess.run(["git", "clone", "--bare", "--quiet", url, str(made)],
                                      capture_output=True, text=True, check=False)  # fmt: skip
                if done.returncode != 0:
                    raise BuildFailed(f"git clone {url}: {done.stderr.strip()}")
                made.rename(clone)
        else:
            git(clone, "fetch", "--quiet", "--prune", "--tags", url, "+refs/heads/*:refs/heads/*")
    return clone


def resolve(repo: Path, ref: str) -> str:
    """The commit `ref` names now (a branch, tag or commit)."""
    with contextlib.suppress(BuildFailed):
        return git(repo, "rev-parse", "--verify", "--quiet", f"refs/heads/{ref}^{{commit}}").strip()
    return git(repo, "rev-parse", "--verify", f"{ref}^{{commit}}").strip()


class HeadError(KregressError):
    """A head (NAME@REF) that cannot be built as asked: the matrix names no repository for it, or
    no build command; the message says which and where to add it."""


@dataclass(frozen=True)
class BuiltHead:
    spec: str  # the toolchain to judge with: the wheel(s) the build cache keeps
    commit: str  # what REF named when it was fetched
    made: str  # how: "built", or from which kept build


def head_source(
    head: str, matrix_path: Path | None = None, build_cmd: str | None = None
) -> tuple[Path, str, str, BuildRecipe]:
    """(clone, ref, package, recipe) of `head` (triton@main): the build cache's clone of the
    matrix's [repositories.NAME], fetched now, and its recipe (--build-cmd overriding its command)."""
    from kregress.matrix import head_of, load_matrix

    named = head_of(head)
    if named is None:
        raise HeadError(f"{head!r} is not PACKAGE@REF (e.g. triton@main)")
    package, ref = named
    matrix = load_matrix(matrix_path)
    entry = matrix.repositories.get(package)
    if entry is None:
        known = ", ".join(sorted(matrix.repositories)) or "none"
        raise HeadError(
            f"the matrix names no repository for {package} ([repositories.{package}]; it names: {known})"
        )
    recipe = BuildRecipe.of(entry, build_cmd)
    if recipe.build_cmd is None:
        raise HeadError(f"[repositories.{package}] has no build_cmd: a head cannot be built without one")
    return fetch_repository(package, entry.url), ref, package, recipe


def build_head(
    head: str,
    matrix_path: Path | None = None,
    build_cmd: str | None = None,
    log: Callable[[str], None] = print,
) -> BuiltHead:
    """`head` (triton@main) pinned to the commit its ref names now and built through the build
    cache (or taken from it): what `kregress build` does, and `--toolchain NAME@REF`."""
    clone, ref, package, recipe = head_source(head, matrix_path, build_cmd)
    commit = resolve(clone, ref)
    log(f"{head} is {commit}")
    cache = BuildCache(clone, recipe, name=package, log=log)
    spec = cache.build(commit)
    return BuiltHead(spec, commit, made_of(cache.record(commit) or {}))


def made_of(record: dict[str, Any]) -> str:
    """How a kept build was made: built, or from another commit's build and the files that differ."""
    if record.get("made_from"):
        made_from, files = record["made_from"][:12], record["uncompiled_files"]
        return f"built from {made_from}'s build + {files} uncompiled files"
    return "built"
