"""`kregress bisect`: find the compiler release or commit where a case's outcome changed.

Between two releases (--good triton==3.2.0 --bad triton==3.6.0) it walks the releases of the
package index; with --repo it then goes on over the commits between the last good and the first
bad release's tags (--tag-pattern, v{version} by default), reusing the releases' verdicts for
those tags, and reports both levels. Between two git refs of --repo it walks their commits.
While one point is judged, the environments of both points that may come next are built ahead.

Which end is which: --good is the older end, where the outcome is still the old one, and --bad the
newer end, where it has changed. With --regress fail (the default) --good PASSes and --bad FAILs.
With --regress pass (looking for the fix) --good is the broken end, where the case still FAILs, and
--bad the fixed end, where it holds; the report then says broken and fixed.

Exit codes: 0 a single culprit found (the commit, when commits were searched); 1 no single
culprit (an end did not verify, skips left a range, history was not monotone, or a release
disagrees with a build of its tag); 3 infrastructure (the runner or the package index failed);
64 usage (including a --repo without the tags of the releases named).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from kregress.bisect.bisect_report import (
    CulpritCommit,
    CulpritFile,
    markdown,
    pass_section,
    points_table,
    suspect_items,
)
from kregress.bisect.bisection import (
    Bisection,
    Level,
    Speculator,
    confirm_borrowed_ends,
    end_problems,
    posterior_between,
    search_between,
    verify_ends,
)
from kregress.bisect.candidates import (
    DEFAULT_TAG_PATTERN,
    Candidate,
    CandidateError,
    commit_candidates,
    parse_version_ref,
    release_candidates,
    release_tag,
    tag_name,
    tag_range,
)
from kregress.bisect.confidence import (
    DEFAULT_CONFIDENCE,
    GUESS_WEIGHT,
    MAX_RUNS,
    UNKNOWN_FLAKE,
    ConfidenceReport,
    FlakeEstimate,
    combined,
)
from kregress.bisect.dependencies import boundary_context, dependency_bumps
from kregress.bisect.search import PointVerdict, one_point, plain_bound
from kregress.builds import BuildCache, BuildRecipe
from kregress.devices import device_arch
from kregress.errors import ExitCode
from kregress.frameworks import FRAMEWORKS
from kregress.history import default_path as history_path
from kregress.history import flake_history
from kregress.judging_service import REGRESSIONS, CaseRun, InfrastructureError, Memo, RegressOn
from kregress.kinds.traced import PassTraced
from kregress.manifest import load_case
from kregress.matrix import head_of, load_matrix
from kregress.toolchains import INDEX_VARIABLE

if TYPE_CHECKING:
    from kregress.bisect.posterior import NoiseModel, PosteriorResult

# Parsing and the order of the steps only: candidates.py lists them, bisection.py judges and
# searches, bisect_report.py renders.


def applicable_releases(
    candidates: list[Candidate], args: argparse.Namespace, console: Console
) -> list[Candidate]:
    """The releases that can target --target at all: an older one is no point of the search (it
    would read as a PASS, or a SKIP, that says nothing of the bug). An end that is older is an error."""
    if not args.target:
        return candidates
    try:
        target = load_matrix(args.matrix).target(args.target)
    except KeyError:
        return candidates  # the child names the unknown target, as for any other
    kept = [c for c in candidates if not target.predates_toolchain(c.toolchain or "")]
    for end in (args.good, args.bad):
        why = target.predates_toolchain(end)
        if why:
            raise CandidateError(f"{end} cannot be judged on {args.target}: {why}")
    if len(kept) < len(candidates):
        console.print(
            f"{len(candidates) - len(kept)} releases predate {args.target} and are not points: "
            + ", ".join(c.label for c in candidates if c not in kept)
        )
    return kept


def command_bisect(args: argparse.Namespace) -> ExitCode:
    console = Console(stderr=True, highlight=False, soft_wrap=True)  # whole lines, for logs
    if args.jobs < 1 or args.reruns < 1 or args.max_runs < args.reruns:
        console.print("kregress bisect: --jobs and --reruns must be at least 1, --max-runs at least --reruns")
        return ExitCode.USAGE
    if not 0 <= args.confidence < 1:
        console.print("kregress bisect: --confidence is a probability below 1 (0 turns it off)")
        return ExitCode.USAGE
    if not (args.corpus / args.case / "case.toml").exists():
        console.print(
            f"kregress bisect: no case {args.case!r} ({args.corpus / args.case / 'case.toml'} is missing)"
        )
        return ExitCode.USAGE
    if args.index_url:  # the children (runner, installers) read it too
        os.environ[INDEX_VARIABLE] = args.index_url
    releases = False
    try:
        releases = bool(parse_version_ref(args.good) or parse_version_ref(args.bad))
        if releases:
            candidates = applicable_releases(
                release_candidates(args.good, args.bad, pre=args.pre), args, console
            )
            builder = None
            if args.repo is not None:
                check_tags(args, candidates, console)
        else:
            if args.repo is None:
                args.repo = cache_clone(args, console)
            good, bad = (git_ref(end) for end in (args.good, args.bad))
            check_commits(args.repo, [good, bad], args.repo_fetched)
            candidates = commit_candidates(args.repo, good, bad, first_parent=not args.all_parents)
            builder = commit_builder(args)
    except CandidateError as exc:
        console.print(f"kregress bisect: {exc}")
        return ExitCode.USAGE
    except OSError as exc:
        console.print(f"kregress bisect: cannot list the candidates: {exc}")
        return ExitCode.INFRASTRUCTURE
    try:
        args.compile_first = compile_first_target(args, console)
    except ValueError as exc:
        console.print(f"kregress bisect: {exc}")
        return ExitCode.USAGE
    run = CaseRun(args.corpus, args.case, args.expectation, args.target, args.matrix, args.case_timeout)
    memo = Memo()
    flake = flake_estimate(args, console)
    first = Level(
        "Releases" if releases else "Commits",
        candidates,
        bisection_of(args, run, builder, memo, console, flake),
    )
    levels = [first]
    try:
        searched = search_level(first, args, console)
        if searched and releases and args.repo is not None and first.exact:
            levels.append(commit_level(first, args, run, memo, console))
    except InfrastructureError as exc:
        console.print(f"kregress bisect: {exc}")
        return ExitCode.INFRASTRUCTURE
    for level in levels:
        if level.result is not None:
            console.print(points_table(level))
    if args.compile_first:
        points = [p for level in levels for p in level.bisection.points.values()]
        same = [p.candidate.label for p in points if p.same_code_as]
        known = sum(1 for p in points if p.launch_code is not None)
        console.print(
            f"compiled first for {args.compile_first}: {len(points)} points, the launched code known at "
            f"{known}; {len(same)} took the verdict of a point with the same code instead of a device run"
            + (f" ({', '.join(same)})" if same else "")
        )
    for level in levels:
        if level.exact and flake is not None and level.posterior is None:
            recheck_below(level, console)
    passes = pass_trace_at_culprit(levels[-1], run, console) if levels[-1].exact else []
    if levels[-1].exact:
        framework = load_case(run.corpus / run.case / "case.toml").manifest.framework
        passes = boundary_context(levels[-1], framework, args.tag_pattern) + passes
    record = culprit_record(args, levels[-1])
    passes += record.pins_said()  # whatever the search blamed: a pin moved in the range is worth a look
    stated = stated_confidence(levels[-1], flake) if flake is not None and levels[-1].exact else None
    if levels[-1].posterior is not None:
        stated = posterior_confidence(levels[-1].posterior)
    text = markdown(args.case, args.expectation, args.target, args.regress, levels, passes, stated)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    if args.culprit_json:
        args.culprit_json.write_text(record.model_dump_json(indent=1) + "\n")
    return ExitCode.OK if levels[-1].exact else ExitCode.NOT_FOUND


def flake_estimate(args: argparse.Namespace, console: Console) -> FlakeEstimate | None:
    """The items' flake rate before the search: from the history when it has runs of them, else a
    guess (none on the CPU, where compiles and the interpreter repeat; a little on a device)."""
    if args.confidence <= 0:
        return None
    history = args.history or history_path()
    disagreed, runs = flake_history(history, args.case, args.expectation, args.target)
    if runs:
        console.print(f"flake rate from the history ({history}): {disagreed} of {runs} runs disagreed")
        return FlakeEstimate(disagreed / runs, runs)
    on_device = bool(args.target) and load_matrix(args.matrix).target(args.target).kind == "device"
    return FlakeEstimate(UNKNOWN_FLAKE if on_device else 0.0, GUESS_WEIGHT, guessed=True)


def noise_of(args: argparse.Namespace, console: Console) -> NoiseModel:
    """The item's noise model for the posterior search: its history's, else an assumption (none on
    the CPU, where compiles and the interpreter repeat; a little on a device), said either way."""
    from kregress.bisect.noise import noise_from_history
    from kregress.bisect.posterior import NoiseModel

    history = args.history or history_path()
    noise = noise_from_history(history, args.case, args.expectation, args.target)
    if noise is not None:
        console.print(f"noise model from the history ({history}): {noise.said}")
        return noise
    on_device = bool(args.target) and load_matrix(args.matrix).target(args.target).kind == "device"
    if not on_device:
        return NoiseModel(said="no history: assumed deterministic (the CPU repeats itself)")
    lies = round(UNKNOWN_FLAKE * GUESS_WEIGHT) or 1
    guessed = NoiseModel.from_counts(lies, GUESS_WEIGHT * 5, lies, GUESS_WEIGHT * 5)
    return NoiseModel(
        guessed.false_fail, guessed.false_pass, "no history: a little noise assumed on a device"
    )


def recheck_below(level: Level, console: Console) -> None:
    """ClusterFuzz's check: judge up to two good points below the boundary once more; a bad one
    there makes the answer a low-confidence range, never one culprit."""
    assert level.result is not None
    below = sorted((i for i, v in level.result.tested.items() if v == PointVerdict.GOOD), reverse=True)[:2]
    bisection = level.bisection
    for index in below:
        candidate = level.candidates[index]
        console.print(f"judging {candidate.label} again (below the boundary)")
        again = bisection.judge_again(candidate)
        level.rechecked.append(candidate.label)
        if again.verdict == PointVerdict.BAD:
            word = "broken" if bisection.regress == RegressOn.PASS else "good"
            level.problems.append(
                f"{candidate.label}, {word} when searched, was judged again and came out the other way: "
                "a low-confidence range, not one culprit (the item flakes, or the history is not monotone)"
            )


def stated_confidence(level: Level, flake: FlakeEstimate) -> ConfidenceReport:
    points = [p for p in level.bisection.points.values() if not p.borrowed_from and p.votes]
    return ConfidenceReport(
        probability=combined([p.probability for p in points]),
        flake_rate=flake.rate,
        runs=sum(len(p.votes) for p in points) + len(level.rechecked),
        points=len(points),
        history_runs=0 if flake.guessed else flake.prior_runs,
        rechecked=level.rechecked,
    )


def posterior_confidence(found: PosteriorResult) -> ConfidenceReport:
    """What the posterior search says of its answer: its mass, the rates it ended with, its runs."""
    false_fail, false_pass = found.learned
    return ConfidenceReport(
        probability=found.probability, flake_rate=max(false_fail, false_pass), runs=found.calls,
        points=len(found.runs), history_runs=0,
    )  # fmt: skip


def pass_trace_at_culprit(level: Level, run: CaseRun, console: Console) -> list[str]:
    """For an expectation a pass can change, of a framework that dumps its passes: judge the last
    good and the first bad point once more with --trace-passes, and say which pass first leaves a
    different count."""
    if not run.expectation or level.last_good is None or level.culprit is None:
        return []
    case = load_case(run.corpus / run.case / "case.toml")
    expectation = dict(case.expectations()).get(run.expectation)
    if not isinstance(expectation, PassTraced) or not FRAMEWORKS[case.manifest.framework].traced_stages:
        return []
    specs = [level.bisection.known_toolchain(c) for c in (level.last_good, level.culprit)]
    if not all(specs):
        return []
    console.print(f"tracing {run.expectation} pass by pass at {level.last_good.label}, {level.culprit.label}")
    traced = dataclasses.replace(run, trace_passes=True)
    before, after = (traced.observe(spec) for spec in specs)
    return pass_section(level.last_good.label, level.culprit.label, before, after)


def cache_clone(args: argparse.Namespace, console: Console) -> Path:
    """Where NAME@REF ends are searched without --repo: the build cache's clone of the matrix's
    [repositories.NAME] (what `kregress build` builds from), fetched now."""
    from kregress.builds import BuildFailed, fetch_repository

    package = package_named(args)
    heads = [end for end in (args.good, args.bad) if head_of(end)]
    if package is None or not heads:
        raise CandidateError(
            "git refs need --repo PATH (a local clone of the compiler), or ends named NAME@REF "
            "(triton@<sha>) of a package whose repository the matrix names"
        )
    repositories = load_matrix(args.matrix).repositories
    entry = repositories.get(package)
    if entry is None:
        known = ", ".join(sorted(repositories)) or "none"
        raise CandidateError(
            f"the matrix names no repository for {package} ([repositories.{package}]; it names: {known}): "
            "give --repo PATH"
        )
    console.print(f"fetching {entry.url} into the build cache's clone of {package}")
    try:
        clone = fetch_repository(package, entry.url)
    except BuildFailed as exc:
        raise CandidateError(f"cannot fetch {entry.url}: {exc}") from None
    args.repo_fetched = entry.url
    return clone


def check_commits(repo: Path, refs: list[str], fetched_from: str | None) -> None:
    """Each ref names a commit of `repo`, or the error says which does not and what to run."""
    import git

    clone = git.Repo(repo)
    for ref in refs:
        try:  # rev-parse: GitPython takes any 40 hex digits for a commit without looking
            clone.git.rev_parse("--verify", "--quiet", f"{ref}^{{commit}}")
        except (git.exc.GitError, ValueError):
            if fetched_from:
                raise CandidateError(
                    f"{ref!r} is not a commit of {fetched_from} (fetched just now into {repo}): a typo, "
                    "or a commit of a fork (give --repo PATH, a clone that has it)"
                ) from None
            raise CandidateError(
                f"{ref!r} is not in {repo}: fetch it (git -C {repo} fetch origin) or leave out --repo "
                "to search the build cache's clone, which is fetched first"
            ) from None


def git_ref(end: str) -> str:
    """A git ref of --good/--bad: `triton@<sha>` (a head's build, as the nightly names it) is <sha>."""
    head = head_of(end)
    return head[1] if head else end


def package_named(args: argparse.Namespace) -> str | None:
    """The package the ends name: their releases' (triton==3.6.0) or their heads' (triton@<sha>)."""
    for end in (args.good, args.bad):
        ref, head = parse_version_ref(end), head_of(end)
        if ref is not None:
            return ref.package
        if head is not None:
            return head[0]
    return None


def commit_builder(args: argparse.Namespace) -> BuildCache:
    """The build cache of --repo: the matrix's recipe for the package the ends name (which files are
    shipped uncompiled, the build's variables, the pinned files), --build-cmd its command."""
    package = package_named(args)
    entry = load_matrix(args.matrix).repositories.get(package) if package else None
    return BuildCache(args.repo, BuildRecipe.of(entry, args.build_cmd), name=package)


def culprit_record(args: argparse.Namespace, level: Level) -> CulpritFile:
    """What a bot needs to tell the culprit's PR: the culprit commit and its PR, only when the
    search found exactly one commit that is no suspect (a range, a release or a suspect: none)."""
    record = CulpritFile(case=args.case, expectation=args.expectation, target=args.target,
                         good=args.good, bad=args.bad, regress=args.regress)  # fmt: skip
    builder = level.bisection.builder
    if builder is not None and level.name.startswith("Commits"):  # whatever the search blamed
        record.pins_in_range = [
            f"{c.commit[:12]} {c.subject}: {bump}"
            for c in level.candidates[1:] if c.commit
            for bump in dependency_bumps(builder.repo, c.commit, builder.recipe.pins)
        ]  # fmt: skip
    culprit = level.culprit
    if not level.exact or culprit is None or culprit.commit is None or level.problems:
        record.why_none = "; ".join(level.problems) or "no single culprit commit"
        return record
    suspect = suspect_items(level, args.regress)
    if suspect:
        record.why_none = f"a suspect: {', '.join(suspect)} generate the same code on both sides"
        return record
    pins = dependency_bumps(builder.repo, culprit.commit, builder.recipe.pins) if builder else []
    record.culprit = CulpritCommit(
        commit=culprit.commit, subject=culprit.subject, pr=culprit.pr, pins_moved=pins
    )
    return record


def check_tags(args: argparse.Namespace, candidates: list[Candidate], console: Console) -> None:
    """Both ends must have their tags before hours go into the releases; a missing tag between
    them matters only if the search ends next to it, so it is said now and checked then."""
    missing = []
    for index, candidate in enumerate(candidates):
        try:
            release_tag(args.repo, args.tag_pattern, candidate.label)
        except CandidateError:
            if index in (0, len(candidates) - 1):
                raise
            missing.append(tag_name(args.tag_pattern, candidate.label))
    if missing:
        console.print(
            f"[yellow]{args.repo} lacks the tags {', '.join(missing)} (pattern {args.tag_pattern!r}): the "
            "commits cannot be searched if the releases' boundary falls next to one of them[/]"
        )


def search_level(level: Level, args: argparse.Namespace, console: Console, verify: bool = True) -> bool:
    """Verify the ends (unless their verdicts are known), then search; False when the ends leave
    nothing to search (said on the console). Ahead-building runs while points are judged."""
    bisection, candidates = level.bisection, level.candidates
    between = len(candidates) - 2
    console.print(
        f"{level.name}: bisecting {args.case} over {len(candidates)} candidates "
        f"({candidates[0].label} … {candidates[-1].label}): "
        f"at most {plain_bound(between)} points without skips"
        + (f", {args.jobs} at a time" if args.jobs > 1 else "")
    )
    ahead = Speculator(bisection) if args.jobs == 1 and not args.no_build_ahead else None
    try:
        if verify:
            if ahead is not None and between > 0:  # the first midpoint, while the ends are judged
                inner = list(range(1, len(candidates) - 1))
                middle = one_point(0, len(candidates) - 1, inner, lambda i: bisection.cheap(candidates[i]))
                ahead.prepare([candidates[0], candidates[-1]], [candidates[middle]])
            console.print("verifying both ends")
            problems = verify_ends(bisection, candidates)
        else:
            first, last = (bisection.points[c.key].verdict for c in (candidates[0], candidates[-1]))
            problems = end_problems(bisection.regress, candidates, first, last)
        if problems:
            observed = []
            for end in (candidates[0], candidates[-1]):
                point = bisection.points[end.key]
                observed.append(f"observed at {end.label}: {point.note or point.describe()}")
                console.print(f"  {observed[-1]}")
            console.print(
                f"kregress bisect: {'; '.join(problems)} for --regress {args.regress}: nothing to search"
            )
            level.problems = problems + observed  # the report says why, with what each end showed
            return False
        noise = noise_of(args, console) if args.search != "votes" and args.confidence > 0 else None
        if noise is not None and (args.search == "posterior" or any(noise.mean())):
            budget = args.max_runs * max(len(candidates) - 2, 1)
            level.result, level.posterior = posterior_between(
                bisection, candidates, noise, args.confidence, args.jobs, budget
            )
            return True
        if bisection.flake is not None:
            bisection.use_confidence(args.confidence, len(candidates))
        level.result = search_between(bisection, candidates, args.jobs, ahead)
    finally:
        if ahead is not None:
            ahead.close()
    return True


def compile_first_target(args: argparse.Namespace, console: Console) -> str | None:
    """--compile-first as a compile target of the matrix: as given, or for `auto` the one of this
    machine's device when the bisected target is a device target (else none, said so)."""
    if args.compile_first is None:
        return None
    matrix = load_matrix(args.matrix)
    if args.compile_first != "auto":
        try:
            given = matrix.compile_target(args.compile_first).name
        except ValueError as exc:
            raise ValueError(f"--compile-first {exc}") from None
    target = matrix.target(args.target) if args.target in matrix.targets else None
    if target is None or target.kind != "device":
        return None  # nothing runs on a device: nothing to spare, and no compile to run for it
    if args.compile_first != "auto":
        return given
    arch = device_arch(target.backend)
    found = matrix.compile_target_for(target.backend, arch)
    console.print(
        f"compile first: {found.name} (this machine's {target.backend} device is {arch})"
        if found
        else f"compile first: off (this machine's {target.backend} device is {arch or 'not seen'}, "
        "which no compile target of the matrix builds for)"
    )
    return found.name if found else None


def bisection_of(
    args: argparse.Namespace, run: CaseRun, builder: BuildCache | None, memo: Memo, console: Console,
    flake: FlakeEstimate | None,
) -> Bisection:  # fmt: skip
    """A level's bisection, judged as the command line asks."""
    return Bisection(
        run, args.regress, args.reruns, builder, memo, console, flake, max_runs=args.max_runs,
        compile_first=args.compile_first,
    )  # fmt: skip


def commit_level(
    releases: Level, args: argparse.Namespace, run: CaseRun, memo: Memo, console: Console
) -> Level:
    """The commits between the last good and the first bad release's tags, searched with the
    releases' verdicts for the tags themselves."""
    assert releases.last_good is not None and releases.culprit is not None
    good, bad = releases.last_good, releases.culprit
    builder = commit_builder(args)
    bisection = bisection_of(args, run, builder, memo, console, releases.bisection.flake)
    older, newer = parse_version_ref(good.label), parse_version_ref(bad.label)
    if older and newer and older.version > newer.version:
        problem = (
            "commits are searched oldest first: to find the commit that fixed it, give --good the older "
            "release and --regress pass"
        )
        return Level("Commits", [], bisection, problems=[problem])
    try:
        commits = tag_range(
            args.repo, args.tag_pattern, good.label, bad.label, first_parent=not args.all_parents
        )
    except CandidateError as exc:
        console.print(f"kregress bisect: the commits cannot be searched: {exc}")
        return Level(
            f"Commits between the tags of {good.label} and {bad.label}", [], bisection, problems=[str(exc)]
        )
    level = Level(f"Commits between {commits.good_tag} and {commits.bad_tag}", commits.candidates, bisection)
    points = releases.bisection.points
    bisection.borrow(commits.candidates[-1], points[bad.key])
    if commits.starts_at_good_tag:
        bisection.borrow(commits.candidates[0], points[good.key])
    else:
        console.print(
            f"{commits.good_tag} is not an ancestor of {commits.bad_tag}: the commits start at their merge "
            f"base {commits.candidates[0].label}, judged from source"
        )
        bisection.judge(commits.candidates[0])  # checked with the other end by search_level
    if not search_level(level, args, console, verify=False):
        return level
    assert level.result is not None
    level.problems = confirm_borrowed_ends(bisection, level.candidates, level.result)
    return level


def register(commands: argparse._SubParsersAction) -> None:
    bisect = commands.add_parser(
        "bisect",
        help="find the release, then the commit, where a case's outcome changed",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    bisect.add_argument("case", help="the case folder name under --corpus")
    bisect.add_argument(
        "--good", required=True,
        help="the older end, with the old outcome (for --regress pass: where it is still broken): a "
        "release (triton==3.2.0), a head's commit NAME@SHA (triton@<sha>, as the nightly names its builds), "
        "or with --repo any git ref",
    )  # fmt: skip
    bisect.add_argument(
        "--bad", required=True,
        help="the newer end, with the new outcome (for --regress pass: where it is fixed): a release "
        "(triton==3.6.0), a head's commit NAME@SHA, or with --repo any git ref",
    )  # fmt: skip
    bisect.add_argument(
        "--expectation", "-e", help="judge this expectation only (default: all of the case's)"
    )
    bisect.add_argument(
        "--target", "-t", help="judge on this target (default: every target of --backend cpu)"
    )
    bisect.add_argument(
        "--regress", default=RegressOn.FAIL, type=RegressOn, choices=REGRESSIONS,
        help="the outcome that counts as bad: fail (default), pass (to find a fix), crash, error",
    )  # fmt: skip
    bisect.add_argument("--corpus", type=Path, default=Path("corpus"), help="default: corpus")
    bisect.add_argument(
        "--repo", type=Path,
        help="a local clone of the compiler, for any git ref, or to go on from two releases to the commits "
        "between their tags (default for NAME@SHA ends: the build cache's clone of the matrix's "
        "[repositories.NAME], fetched first)",
    )  # fmt: skip
    bisect.add_argument(
        "--tag-pattern", default=DEFAULT_TAG_PATTERN,
        help="the tag of a release in --repo, {version} replaced (default: v{version})",
    )  # fmt: skip
    bisect.add_argument(
        "--build-cmd",
        help="shell command building a commit: {src} is its source tree, {out} where to leave wheels "
        "(default: the build_cmd of the matrix's [repositories.NAME]; commits whose compiled files match "
        "a kept build reuse it, as `kregress build` does)",
    )
    bisect.add_argument("--all-parents", action="store_true", help="walk every commit, not first-parent only")
    bisect.add_argument("--pre", action="store_true", help="include pre-releases between the ends")
    bisect.add_argument(
        "--index-url",
        help=f"the package index releases are listed and installed from (default: ${INDEX_VARIABLE} or PyPI)",
    )
    bisect.add_argument("-j", "--jobs", type=int, default=1, help="points judged in parallel per round")
    bisect.add_argument(
        "--confidence", type=float, default=DEFAULT_CONFIDENCE,
        help="rerun each point until the culprit is this likely to be right, from each item's flake "
        "rate (the history, then this search's disagreements); 0: no reruns beyond --reruns "
        f"(default: {DEFAULT_CONFIDENCE})",
    )  # fmt: skip
    bisect.add_argument(
        "--max-runs", type=int, default=MAX_RUNS,
        help=f"at most this many runs of one point; one still undecided is a skip (default: {MAX_RUNS})",
    )  # fmt: skip
    bisect.add_argument(
        "--history", type=Path,
        help="the SQLite history the flake rates come from (default: kregress's own, if any)",
    )  # fmt: skip
    bisect.add_argument(
        "--reruns", type=int, default=1, help="judge each point at least K times; the majority decides"
    )
    bisect.add_argument(
        "--search", choices=["auto", "votes", "posterior"], default="auto",
        help="votes: each point rerun until its verdict is sure enough; posterior: one distribution over "
        "the culprit and the item's one-sided noise (from the history), each run where it tells the "
        "most, stopping at --confidence or naming a range; auto: posterior where the item may lie (its "
        "history, or a device target without one), else plain bisection with builds ahead (default)",
    )  # fmt: skip
    bisect.add_argument(
        "--no-build-ahead", action="store_true",
        help="build a point's environment only when it is judged (default: while one point is judged, "
        "build the environments of both points that may come next)",
    )  # fmt: skip
    bisect.add_argument(
        "--compile-first", metavar="TARGET",
        help="for a device target: compile what each point's numerics checks launch for TARGET (the "
        "device's architecture, e.g. cuda:sm_90; `auto`: this machine's device, nothing for other "
        "targets) before running it, and give a point that launches the same code as one already "
        "judged that point's verdict instead of a device run",
    )  # fmt: skip
    bisect.add_argument("--case-timeout", type=float, help="seconds per child process (default: the case's)")
    bisect.add_argument("--markdown", type=Path, help="also write the report here (for a GitHub comment)")
    bisect.add_argument(
        "--culprit-json",
        type=Path,
        help="also write the culprit commit and its PR here (null when there is no single culprit commit)",
    )
    bisect.set_defaults(run=command_bisect, repo_fetched=None)
