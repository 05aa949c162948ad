"""A fork server: import the heavy compiler modules once, then fork one child per job.

Every job still runs in a process of its own, in its own session (so a timeout kills the whole
group, ptxas and nvcc included), with its own environment and log; what it saves is the
2-3 s of importing torch and triton per job. It imports them as the first job that needs them
arrives, not at start: a case that needs neither (numpy only) never pays for them. Protocol, one
JSON object per line: request `{"job_file", "env", "cwd", "log"}` -> reply `{"pid"}` once the
child is forked, then `{"status"}` when it ends (status as in `os.waitstatus_to_exitcode`:
negative for a signal).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import json
import os
import sys
import traceback
from pathlib import Path

PRELOAD_IF_IMPORTED = ("numpy", "torch")  # when the repro imports them; and the framework's own


def imported_names(repro: Path) -> set[str]:
    """The top-level packages `repro` imports anywhere (none for a file that does not parse: its
    child says why)."""
    try:
        tree = ast.parse(repro.read_text())
    except (OSError, SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


def preload_for(job_file: str) -> list[str]:
    """What to import in the server before forking this job's child (later children inherit it):
    its framework's own preload (kregress.frameworks), and numpy and torch where its repro imports
    them."""
    from kregress.frameworks import FRAMEWORKS

    try:
        job = json.loads(Path(job_file).read_text())
        framework = FRAMEWORKS[job["framework"]]
        imported = imported_names(Path(job["repro"]))
    except (OSError, ValueError, KeyError):
        return []
    return [m for m in PRELOAD_IF_IMPORTED if m in imported] + list(framework.preload)


def run_child(request: dict) -> None:
    """In the forked child: become the job's process, then never return."""
    code = 1
    try:
        os.setsid()
        log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.close(log)
        sys.stdin.close()
        os.environ.clear()
        os.environ.update(request["env"])
        os.chdir(request["cwd"])
        from kregress import worker

        code = worker.main([request["job_file"]])
    except BaseException:
        traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    # loaded once, inherited by every child: the worker, and the kinds whose measure() it calls
    import kregress.worker

    with contextlib.suppress(Exception):
        import kregress.kinds  # noqa: F401

    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed by accident must not corrupt the reply stream
    print(json.dumps({"ready": True}), file=replies)
    for line in sys.stdin:
        request = json.loads(line)
        for module in preload_for(request["job_file"]):
            if module not in sys.modules:
                with contextlib.suppress(Exception):  # the child imports it again and says why
                    importlib.import_module(module)
        pid = os.fork()
        if pid == 0:
            run_child(request)
        print(json.dumps({"pid": pid}), file=replies)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), file=replies)


if __name__ == "__main__":
    serve()
