"""Score `kregress import` on the held-out set (bench/import_eval, never used to develop import).

For each issue of truth.json: import it into a scratch corpus, live by URL (where GitHub can be
reached) or from a saved copy (`--issues DIR`: the JSON files truth.json's `file` names), and class
what came out against what is known of its bug:

  right          PROVEN, and its first fixed release is the one truth.json gives (for an issue
                 known open: "no release without it")
  false PROVEN   PROVEN with another first fixed release than the known one, or where the truth says
                 no release on PyPI can show the bug
  proven, fix not pinned
                 PROVEN, the fix placed between two releases (those between could not tell), or
                 at a release or later (none after it runs the code clean), the known first fixed
                 release among them: never counted as right
  proven, unconfirmed
                 PROVEN where the truth does not know the range: to be checked by hand
  honest stop    not proven, where this machine cannot show the bug (a GPU is needed, or no PyPI
                 release has it, or either is unknown)
  missed         not proven, where a PyPI release shows it without a GPU
  not measured   the import outran --deadline, could not read the issue (GitHub unreachable) or
                 judge at all (a toolchain failed): never counted as either side

Only the step import stopped at is printed, never the issue's text or the errors it quotes (the
set stays blind); each import's whole output goes to --log.

    python bench/bench_import_eval.py --issues bench/import_eval/issues [--only URL ...]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from packaging.version import Version

from kregress.errors import ExitCode

EVAL = Path(__file__).parent / "import_eval"
FIRST_FIXED = re.compile(
    r"^\s*bisect: .*?(?:first fixed (?P<fixed>\S+?)(?:;|$)|(?P<open>no release without it))", re.M
)
FIXED_BETWEEN = re.compile(
    r"^\s*bisect: .*?fixed (?:between (?P<earliest>\S+) and (?P<fixed>\S+)|at (?P<after>\S+) or later) \(",
    re.M,
)
STOPPED = re.compile(r"kregress import: stopped at (?P<step>\w+)")


def classify(entry: dict, code: int | None, output: str) -> tuple[str, str]:
    """The class of one import's result, and what import said in a few words (no issue text)."""
    if code is None:
        return "not measured", output if output.startswith("no saved copy") else "outran the deadline"
    found = FIRST_FIXED.search(output)
    fixed = None if found is None else (found["fixed"] or "open")
    between = FIXED_BETWEEN.search(output)
    truth = entry.get("first_fixed_release")
    if code == 0 and between is not None:
        if between["after"]:  # the releases after the last showing it all fail otherwise
            low, high = Version(between["after"].split("==")[-1]), None
            said = f"PROVEN, fixed at {between['after']} or later"
        else:
            low, high = (Version(between[end].split("==")[-1]) for end in ("earliest", "fixed"))
            said = f"PROVEN, fixed between {between['earliest']} and {between['fixed']}"
        if truth is None:
            return "proven, unconfirmed", said
        known = Version(truth.split("==")[-1])
        inside = low <= known and (high is None or known <= high)
        return ("proven, fix not pinned" if inside else "false PROVEN"), said
    if code == 0:
        known_open = entry.get("fixed_by") is None and "Open." in (entry.get("notes") or "")
        said = f"PROVEN, first fixed {fixed}"
        if entry.get("pypi_can_show") is False:
            return "false PROVEN", said + " (no PyPI release can show it)"
        if truth is not None:
            shown = fixed.split("==")[-1] if fixed else None
            return ("right" if shown == truth.split("==")[-1] else "false PROVEN"), said
        if known_open and fixed == "open":
            return "right", said
        return "proven, unconfirmed", said
    stopped = STOPPED.search(output)
    said = f"exit {code}, stopped at {stopped['step'] if stopped else '?'}"
    # GitHub, a toolchain or the command line failed: nothing was judged
    if code in (ExitCode.INFRASTRUCTURE, ExitCode.GITHUB, ExitCode.USAGE):
        return "not measured", said
    showable = entry.get("pypi_can_show") is True and entry.get("gpu_needed") is False
    return ("missed" if showable else "honest stop"), said


def import_one(
    entry: dict, issues: Path | None, deadline: float, timeout: float
) -> tuple[int | None, str, float]:
    command = [
        str(Path(sys.executable).parent / "kregress"),
        "import",
        entry["url"],
        "--no-reduce",
        "--timeout",
        str(timeout),
    ]
    if issues is not None:
        saved = issues / Path(entry["file"]).name
        if not saved.exists():
            return None, f"no saved copy at {saved}", 0.0
        command += ["--issue-file", str(saved)]
    with tempfile.TemporaryDirectory(prefix="kregress-import-eval-") as scratch:
        start = time.monotonic()
        try:
            done = subprocess.run(
                [*command, "--corpus", scratch], capture_output=True, text=True, timeout=deadline, check=False
            )
        except subprocess.TimeoutExpired as exc:
            out = (
                (exc.stdout or b"").decode(errors="replace")
                if isinstance(exc.stdout, bytes)
                else exc.stdout or ""
            )
            return None, out, time.monotonic() - start
        return done.returncode, done.stdout + done.stderr, time.monotonic() - start


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--issues", type=Path, help="saved copies (default: read each issue from GitHub)")
    parser.add_argument("--only", nargs="*", metavar="URL", help="just these issues of the set")
    parser.add_argument("--deadline", type=float, default=1200, help="seconds per import (default 1200)")
    parser.add_argument("--timeout", type=float, default=120, help="seconds per judged point (default 120)")
    parser.add_argument("--log", type=Path, default=Path("import-eval.log"), help="every import's output")
    args = parser.parse_args()
    truth = json.loads((EVAL / "truth.json").read_text())
    chosen = [e for e in truth if not args.only or e["url"] in args.only]
    counts: Counter[str] = Counter()
    source = f"saved copies in {args.issues}" if args.issues else "GitHub"
    print(f"kregress import on {len(chosen)} held-out issues, read from {source}")
    print(f"{'issue':<58} {'truth':<28} {'seconds':>7}  class: what import said")
    with args.log.open("w") as log:
        for entry in chosen:
            code, output, seconds = import_one(entry, args.issues, args.deadline, args.timeout)
            log.write(f"=== {entry['url']} (exit {code}, {seconds:.0f} s)\n{output}\n")
            log.flush()
            kind, said = classify(entry, code, output)
            counts[kind] += 1
            known = entry.get("first_fixed_release") or "range unknown"
            truth_said = f"{entry['kind']}, {known}"
            issue = entry["url"].removeprefix("https://github.com/")
            print(f"{issue:<58} {truth_said:<28} {seconds:>7.0f}  {kind}: {said}")
    print("totals: " + ", ".join(f"{kind} {n}" for kind, n in counts.most_common()))
    return 1 if counts["false PROVEN"] else 0


if __name__ == "__main__":
    sys.exit(main())
