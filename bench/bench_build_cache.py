"""The build cache: builds and wall time of a nightly bisect over 16 commits of a compiler with a
compiled part (tests/compiled_fixture.py, built for real by cc), cold, then over an overlapping
range with the cache the first left; and the builds the same searches need over a real compiler's
history (TileLang's first-parent commits between two tags, classified by the files each commit
changes under the recipe the matrix would declare; nothing is built there).

    .venv/bin/python bench/bench_build_cache.py [--tilelang PATH_TO_A_CLONE] [--trials 200]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from compiled_fixture import BASE, CORE, SCALING, Commit, add_commit, make_kcc_repo

from kregress.bisect.search import PointVerdict, search
from kregress.builds import BuildCache, BuildRecipe, tree_files
from kregress.matrix import UncompiledPaths

KCC = BuildRecipe(
    "python -m pip wheel --no-deps --no-build-isolation -w {out} {src}",
    (UncompiledPaths(source="kcc", installed="kcc"),),
    ("docs/**", "*.md"),
)
# What the matrix would declare for TileLang: its Python package and the CUDA/HIP templates it
# ships as source (compiled when a kernel is), and what no build reads.
TILELANG = BuildRecipe(
    "pip wheel",
    (
        UncompiledPaths(source="tilelang", installed="tilelang"),
        UncompiledPaths(source="src/tl_templates", installed="tilelang/src/tl_templates", glob="**/*"),
    ),
    (
        "docs/**",
        "testing/**",
        "examples/**",
        "benchmark/**",
        "images/**",
        "maint/**",
        "docker/**",
        ".github/**",
        ".agents/**",
        "*.md",
        "requirements-*.txt",
        ".pre-commit-config.yaml",
        "format.sh",
        ".coderabbit.yaml",
        ".pymarkdown",
        ".clang-format",
        ".editorconfig",
        ".gitignore",
    ),
)


def kcc_history(count: int, seed: int) -> list[Commit]:
    """`count` commits of every kind a compiler's history has: Python only, docs only, the compiled
    part, the pinned dependency; the factor turns 3 (the regression) nowhere yet."""
    rng = random.Random(seed)
    commits = []
    for index in range(count):
        kind = rng.choices(["python", "docs", "compiled", "pin"], weights=[4, 2, 3, 1])[0]
        if kind == "python":
            change = {"kcc/scaling.py": SCALING + f"\n\nSTEP = {index}\n"}
        elif kind == "docs":
            change = {"docs/notes.md": f"kcc, note {index}\n"}
        elif kind == "compiled":
            change = {"csrc/core.c": CORE % "2.0" + f"int step{index}(void) {{ return {index}; }}\n"}
        else:
            change = {"deps/pin.txt": f"llvm-{1000 + index}\n"}
        commits.append(Commit(f"{kind} change {index}", change))
    return commits


def bisect_builds(cache: BuildCache, shas: list[str], culprit: int, log: Path) -> tuple[int, float]:
    """A nightly's bisect between shas[0] (last night, good) and shas[-1] (tonight, bad): both ends
    built by the nights, then the points the search asks for. Real builds run, and seconds."""
    before = len(log.read_text().splitlines()) if log.exists() else 0
    started = time.perf_counter()
    cache.build(shas[0])
    cache.build(shas[-1])

    def judge(points: list[int]) -> dict[int, PointVerdict]:
        for point in points:
            cache.build(shas[point])
        return {p: PointVerdict.BAD if p >= culprit else PointVerdict.GOOD for p in points}

    search(len(shas), judge, cheap=lambda i: cache.built(shas[i]) is not None)
    seconds = time.perf_counter() - started
    return len(log.read_text().splitlines()) - before, seconds


def fixture_rows() -> list[str]:
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        log = root / "builds.log"
        os.environ["KCC_BUILD_LOG"] = str(log)
        os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        repo, shas = make_kcc_repo(root / "kcc", [BASE])
        shas += [add_commit(repo, commit) for commit in kcc_history(24, seed=7)]
        first, second = shas[0:17], shas[8:25]  # 16 commits each, 8 shared
        rows = []
        for label, recipe in (("no uncompiled files declared", BuildRecipe(KCC.build_cmd)), ("recipe", KCC)):
            cache = BuildCache(Path(repo.working_dir), recipe, root / f"cache-{len(rows)}", name="kcc")
            cold = bisect_builds(cache, first, 11, log)
            warm = bisect_builds(cache, second, 13, log)
            fresh = BuildCache(Path(repo.working_dir), recipe, root / f"fresh-{len(rows)}", name="kcc")
            cold_second = bisect_builds(fresh, second, 13, log)
            cells = [f"{n} builds, {s:.1f} s" for n, s in (cold, cold_second, warm)]
            rows.append(f"| {label} | {' | '.join(cells)} | {warm[1] / cold_second[1]:.2f} |")
        return rows


def first_parent(repo: Path, good: str, bad: str) -> list[str]:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
        ).stdout

    return [git("rev-parse", f"{good}^{{commit}}").strip(), *git("rev-list", "--first-parent", "--reverse",
                                                                 f"{good}..{bad}").split()]  # fmt: skip


class Simulated:
    """The cache over real history without building: a build is needed for a commit whose compiled
    inputs no kept build has."""

    def __init__(self, digests: dict[str, str]) -> None:
        self.digests, self.kept, self.builds = digests, set(), 0

    def build(self, sha: str) -> None:
        if self.digests[sha] not in self.kept:
            self.kept.add(self.digests[sha])
            self.builds += 1


def simulated_bisect(cache: Simulated | None, shas: list[str], culprit: int) -> int:
    """Builds a bisect over `shas` needs: with `cache` as the cache, or with none (every point)."""
    probed = {0, len(shas) - 1}

    def judge(points: list[int]) -> dict[int, PointVerdict]:
        probed.update(points)
        return {p: PointVerdict.BAD if p >= culprit else PointVerdict.GOOD for p in points}

    kept = cache.kept if cache is not None else set()
    search(len(shas), judge, cheap=lambda i: cache is not None and cache.digests[shas[i]] in kept)
    if cache is None:
        return len(probed)
    before = cache.builds
    for point in sorted(probed):
        cache.build(shas[point])
    return cache.builds - before


def tilelang_rows(clone: Path, trials: int) -> list[str]:
    shas = first_parent(clone, "v0.1.6.post2", "v0.1.13")
    recipe_cache = BuildCache(clone, TILELANG, Path(tempfile.gettempdir()) / "unused", name="tilelang")
    digests = {sha: recipe_cache.compiled_digest(tree_files(clone, sha)) for sha in shas}
    plain = {sha: sha for sha in shas}  # no uncompiled files declared: every commit is its own build
    rng = random.Random(11)
    totals = {"none": [0, 0, 0], "commit": [0, 0, 0], "recipe": [0, 0, 0]}
    for _ in range(trials):
        start = rng.randrange(0, len(shas) - 25)
        first, second = shas[start : start + 17], shas[start + 8 : start + 25]
        culprits = rng.randrange(1, 17), rng.randrange(1, 17)
        totals["none"][0] += simulated_bisect(None, first, culprits[0])
        totals["none"][1] += simulated_bisect(None, second, culprits[1])
        totals["none"][2] += simulated_bisect(None, second, culprits[1])
        for name, keys in (("commit", plain), ("recipe", digests)):
            cache = Simulated(keys)
            totals[name][0] += simulated_bisect(cache, first, culprits[0])
            totals[name][2] += simulated_bisect(Simulated(keys), second, culprits[1])
            totals[name][1] += simulated_bisect(cache, second, culprits[1])
    labels = {
        "none": "no cache (a build per point)",
        "commit": "kept by commit",
        "recipe": "by commit + uncompiled",
    }
    rows = []
    for name, (cold, warm, cold_second) in totals.items():
        rows.append(
            f"| {labels[name]} | {cold / trials:.2f} | {cold_second / trials:.2f} | {warm / trials:.2f} |"
        )
    distinct = len(set(digests.values()))
    rows.append(
        f"\n{len(shas)} first-parent commits v0.1.6.post2..v0.1.13; {distinct} distinct compiled inputs"
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tilelang", type=Path, help="a clone of tile-ai/tilelang with its tags")
    parser.add_argument("--trials", type=int, default=200, help="random windows over TileLang's history")
    args = parser.parse_args()
    print("Fixture compiler, 16 commits a bisect, real builds (cc and pip wheel):\n")
    print("| cache | first bisect, cold | second bisect, cold | second bisect, after the first | warm/cold |")
    print("|---|---|---|---|---|")
    for row in fixture_rows():
        print(row)
    if args.tilelang:
        pairs = f"mean of {args.trials} random pairs of overlapping 16-commit ranges"
        print(f"\nTileLang, builds per bisect ({pairs}):\n")
        print("| cache | first bisect, cold | second bisect, cold | second bisect, after the first |")
        print("|---|---|---|---|")
        for row in tilelang_rows(args.tilelang, args.trials):
            print(row)


if __name__ == "__main__":
    main()
