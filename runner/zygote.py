"""A fork server: import the heavy compiler modules once, then fork one child per job.

Every job still runs in a process of its own, in its own session (so a timeout kills the whole
group, ptxas and nvcc included), with its own environment and log; what it saves is the
2-3 s of importing torch and triton per job. Protocol, one JSON object per line:
request `{"job_file", "env", "cwd", "log"}` -> reply `{"pid"}` at once, then `{"status"}` when the
child ends (status as in `os.waitstatus_to_exitcode`: negative for a signal).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
import traceback

PRELOAD = ("numpy", "torch")  # and each framework's own (kregress.frameworks)


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
    from kregress.frameworks import FRAMEWORKS

    for module in PRELOAD + tuple(m for f in FRAMEWORKS.values() for m in f.preload):
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    # loaded once, inherited by every child: the worker, and the kinds whose measure() it calls
    import kregress.worker

    with contextlib.suppress(Exception):
        import kregress.kinds  # noqa: F401

    replies = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything printed by accident must not corrupt the reply stream
    print(json.dumps({"ready": True}), file=replies)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            run_child(request)
        print(json.dumps({"pid": pid}), file=replies)
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"status": os.waitstatus_to_exitcode(status)}), file=replies)


if __name__ == "__main__":
    serve()
