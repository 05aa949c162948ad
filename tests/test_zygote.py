"""The fork server imports a framework marked preload_on_demand at that framework's first job, once,
and every later child inherits it; jobs of other frameworks never import it."""

from __future__ import annotations

from pathlib import Path

from kregress.jobs import ForkServer, Interpreter

PROBE = """
import os
with open(os.environ["PROBE_LOG"], "a") as log:
    log.write(f"imported in {os.getpid()}\\n")
"""


def test_on_demand_preload_is_imported_once_by_the_server(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "slow_framework_probe.py").write_text(PROBE)
    log = tmp_path / "imports.log"
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setenv("PROBE_LOG", str(log))
    server = ForkServer(Interpreter(), interpret=False)
    try:
        job = tmp_path / "missing" / "job.json"  # the child fails at once: only the import is judged
        job.parent.mkdir()
        env = {"PROBE_LOG": str(log), "PYTHONPATH": str(tmp_path)}
        server.run(job, env, tmp_path / "a.log", timeout=60)
        assert not log.exists(), "a job that asks for nothing imported the probe"
        for name in ("b", "c", "d"):
            server.run(job, env, tmp_path / f"{name}.log", timeout=60, preload=("slow_framework_probe",))
        lines = log.read_text().splitlines()
        assert lines == [f"imported in {server.process.pid}"], lines
    finally:
        server.close()
