"""Each xdist worker is pinned to one device of its backend; -n auto spreads the cores over the
devices; a perf job has its device alone, and one that waits for it is not overtaken; the device is
named as nvidia-smi names it."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import copy_corpus
from kregress.devices import auto_workers, describe, device_compile_arch, device_lock, pinned_environment
from kregress.matrix import load_matrix


def test_workers_round_robin_over_probed_devices() -> None:
    pins = [pinned_environment("cuda", f"gw{n}", {}, count=2) for n in range(4)]
    assert pins == [{"CUDA_VISIBLE_DEVICES": d} for d in ("0", "1", "0", "1")]


def test_workers_split_an_existing_visible_list() -> None:
    env = {"HIP_VISIBLE_DEVICES": "4,6"}
    assert pinned_environment("hip", "gw1", env, count=8) == {"HIP_VISIBLE_DEVICES": "6"}


def test_xpu_uses_the_level_zero_mask() -> None:
    assert pinned_environment("xpu", "gw2", {}, count=4) == {"ZE_AFFINITY_MASK": "2"}


def test_no_pinning_on_cpu_or_without_xdist() -> None:
    assert pinned_environment("cpu", "gw0", {}, count=1) == {}
    assert pinned_environment("cuda", None, {}, count=2) == {}


STAND_IN = """#!/bin/sh
# nvidia-smi as two H200s answer it: -L lists them; --query-gpu gives the fields asked for.
if [ "$1" = -L ]; then
    echo "GPU 0: NVIDIA H200 (UUID: GPU-aaa)"; echo "GPU 1: NVIDIA H200 (UUID: GPU-bbb)"; exit 0
fi
index=0; for a in "$@"; do [ "$prev" = -i ] && index=$a; prev=$a; done
case "$*" in *compute_cap*) echo "${STAND_IN_CAPABILITY:-9.0}"; exit 0;; esac
echo "$index, NVIDIA H200, 580.82.07, GPU-$index"
"""


def stand_in(tmp_path: Path) -> Path:
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "nvidia-smi").write_text(STAND_IN)
    (folder / "nvidia-smi").chmod(0o755)
    return folder


def test_auto_means_the_cores_spread_over_the_visible_devices_up_to_sixteen_each() -> None:
    assert auto_workers("cuda", {"CUDA_VISIBLE_DEVICES": "2,3"}, count=8, cores=16) == 16
    assert auto_workers("cuda", {"CUDA_VISIBLE_DEVICES": "2,3"}, count=8, cores=64) == 32  # 16 each
    assert auto_workers("cuda", {"CUDA_VISIBLE_DEVICES": "0"}, count=1, cores=64) == 16
    assert auto_workers("cuda", {}, count=4, cores=2) == 4  # never fewer than one per device
    assert auto_workers("cuda", {"CUDA_VISIBLE_DEVICES": "0"}, count=1, per_device=2, cores=16) == 2
    assert auto_workers("cpu", {}, count=1) is None


def test_the_device_is_described_as_nvidia_smi_names_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PATH", f"{stand_in(tmp_path)}{os.pathsep}{os.environ['PATH']}")
    found = describe("cuda", {"CUDA_VISIBLE_DEVICES": "1"})
    assert found == {"index": "1", "name": "NVIDIA H200", "driver": "580.82.07", "uuid": "GPU-1"}
    assert describe("cpu", {}) == {}
    assert device_compile_arch("cuda", {"CUDA_VISIBLE_DEVICES": "1"}) == "sm_90"
    monkeypatch.setenv("STAND_IN_CAPABILITY", "10.0")
    assert device_compile_arch("cuda", {}) == "sm_100"
    assert device_compile_arch("cpu", {}) is None


def test_a_device_target_takes_the_limits_and_arch_of_the_gpu_it_runs_on() -> None:
    matrix = load_matrix()
    device = matrix.target("cuda:device")
    blackwell = matrix.as_device(device, "sm_100")
    assert (blackwell.name, blackwell.kind, blackwell.arch) == ("cuda:device", "device", "sm_100")
    assert blackwell.limits == matrix.target("cuda:sm_100").limits
    assert matrix.as_device(device, "sm_120").limits["shared_bytes"] == 101376  # 99 KB a block
    assert matrix.as_device(device, "sm_75") == device  # no compile target of that arch: as it was
    assert matrix.as_device(matrix.target("cuda:sm_90"), "sm_100").arch == "sm_90"  # compile targets stay


def test_on_a_blackwell_gpu_cuda_device_is_judged_with_sm_100s_limits(tmp_path: Path) -> None:
    """A resource expectation on cuda:device with no `max` reads the limit of the GPU's own arch,
    and {arch} resolves: the header says which arch the device was taken for."""
    work = copy_corpus(tmp_path, "kinds/vector_add")
    env = {**os.environ, "PATH": f"{stand_in(tmp_path)}{os.pathsep}{os.environ['PATH']}",
           "STAND_IN_CAPABILITY": "10.0", "CUDA_VISIBLE_DEVICES": "0"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cuda",
         "--target", "cuda:device", "--collect-only"],
        cwd=work, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert "targets cuda:device (sm_100)" in done.stdout, done.stdout[-2000:] + done.stderr[-2000:]


def hold(
    path: str,
    cache: str,
    exclusive: bool,
    seconds: float,
    log: str,
    priority_s: float = 30.0,
    until: tuple[str, str] | None = None,
) -> None:
    """Take the device lock and hold it `seconds`; with `until`, first until another job has logged
    that event: the order a test needs then never rests on how fast a loaded machine spawns."""
    os.environ["KREGRESS_CACHE_DIR"] = cache
    with open(log, "a") as out:
        out.write(json.dumps([path, "asked", time.time()]) + "\n")
    with device_lock("cuda", {"CUDA_VISIBLE_DEVICES": "0"}, exclusive=exclusive, priority_s=priority_s):
        with open(log, "a") as out:
            out.write(json.dumps([path, "in", time.time()]) + "\n")
        if until is not None:
            logged(log, *until)
        time.sleep(seconds)
        with open(log, "a") as out:
            out.write(json.dumps([path, "out", time.time()]) + "\n")


def logged(log: str, name: str, what: str, timeout: float = 60.0) -> None:
    """Wait until a holder has logged `what`: spawned processes start slowly on a loaded machine,
    so fixed sleeps would not order them."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Path(log).exists() and any(
            json.loads(line)[:2] == [name, what] for line in Path(log).read_text().splitlines()
        ):
            return
        time.sleep(0.02)
    raise AssertionError(f"{name} never logged {what!r}")


def test_a_perf_job_has_its_device_alone_while_others_share_it(tmp_path: Path) -> None:
    log, cache = str(tmp_path / "log"), str(tmp_path / "cache")
    context = multiprocessing.get_context("spawn")
    # each holds on until the next has come: the two overlap and the perf job asks while they do
    jobs = [
        context.Process(
            target=hold, args=("numerics-a", cache, False, 0.5, log), kwargs={"until": ("numerics-b", "in")}
        ),
        context.Process(
            target=hold, args=("numerics-b", cache, False, 0.5, log), kwargs={"until": ("perf", "asked")}
        ),
    ]
    for job in jobs:
        job.start()
    logged(log, "numerics-a", "in")
    logged(log, "numerics-b", "in")
    perf = context.Process(target=hold, args=("perf", cache, True, 0.2, log))
    perf.start()
    for job in [*jobs, perf]:
        job.join(60)
    events = [json.loads(line) for line in Path(log).read_text().splitlines()]
    times = {(name, what): t for name, what, t in events}
    # the two shared jobs overlapped; the perf job began only after both ended
    assert times[("numerics-b", "in")] < times[("numerics-a", "out")]
    assert times[("perf", "in")] >= max(times[("numerics-a", "out")], times[("numerics-b", "out")])


def test_a_waiting_perf_job_is_not_overtaken_by_jobs_that_come_after_it(tmp_path: Path) -> None:
    """Numerics jobs arriving one after another, each overlapping the last, would hold the shared
    lock without a gap: a perf job that asked before the later ones must get the device first."""
    log, cache = str(tmp_path / "log"), str(tmp_path / "cache")
    context = multiprocessing.get_context("spawn")
    until = {"until": ("numerics-2", "asked")}  # numerics-2 always comes while the device is shared
    first = context.Process(target=hold, args=("numerics-1", cache, False, 0.5, log), kwargs=until)
    first.start()
    logged(log, "numerics-1", "in")
    perf = context.Process(target=hold, args=("perf", cache, True, 0.2, log))
    perf.start()
    logged(log, "perf", "asked")
    time.sleep(0.3)  # the perf job waits for numerics-1 now
    later = context.Process(target=hold, args=("numerics-2", cache, False, 0.5, log))
    later.start()
    for job in (first, perf, later):
        job.join(60)
    times = {(name, what): t for name, what, t in map(json.loads, Path(log).read_text().splitlines())}
    assert (
        times[("numerics-2", "asked")] < times[("numerics-1", "out")]
    )  # it came while the device was shared
    assert times[("perf", "in")] >= times[("numerics-1", "out")]
    assert times[("numerics-2", "in")] >= times[("perf", "out")]  # it waited behind the perf job


def test_a_shared_job_that_hangs_holds_up_other_device_jobs_only_for_the_priority_window(
    tmp_path: Path,
) -> None:
    """A numerics job whose kernel never ends holds the device until its timeout: the perf job
    waiting behind it keeps newcomers out for its priority window only, then waits like them."""
    log, cache = str(tmp_path / "log"), str(tmp_path / "cache")
    context = multiprocessing.get_context("spawn")
    # it holds on until the newcomer is in beside it (or, wrongly kept out, for `logged`'s minute)
    until = {"until": ("numerics", "in")}
    hung = context.Process(target=hold, args=("hung", cache, False, 2.0, log), kwargs=until)
    hung.start()
    logged(log, "hung", "in")
    perf = context.Process(target=hold, args=("perf", cache, True, 0.2, log, 1.0))
    perf.start()
    logged(log, "perf", "asked")
    time.sleep(0.3)
    later = context.Process(target=hold, args=("numerics", cache, False, 0.2, log))
    later.start()
    for job in (hung, perf, later):
        job.join(60)
    times = {(name, what): t for name, what, t in map(json.loads, Path(log).read_text().splitlines())}
    assert times[("numerics", "in")] < times[("hung", "out")] - 1.5  # in beside the hung job, not after
    assert times[("perf", "in")] >= times[("hung", "out")]  # and the perf job still timed alone


def test_cuda_backend_starts_one_worker_per_gpu_and_names_them(tmp_path: Path) -> None:
    work = copy_corpus(tmp_path, "kinds/vector_add")
    env = {**os.environ, "PATH": f"{stand_in(tmp_path)}{os.pathsep}{os.environ['PATH']}"}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cuda",
         "-n", "auto", "--workers-per-device", "1", "-k", "compiles", "--target", "cuda:sm_90",
         "--kregress-json", "results.json"],
        cwd=work, capture_output=True, text=True, env=env, timeout=600, check=False,
    )  # fmt: skip
    assert "created: 2/2 workers" in done.stdout, done.stdout[-2000:]
    assert "kregress: device 0: NVIDIA H200, driver 580.82.07" in done.stdout
    assert "kregress: device 1: NVIDIA H200, driver 580.82.07" in done.stdout
    header = json.loads((work / "results.json").read_text())["devices"]  # the results' run header
    assert [(d["index"], d["name"], d["driver"]) for d in header] == [
        ("0", "NVIDIA H200", "580.82.07"),
        ("1", "NVIDIA H200", "580.82.07"),
    ]


def collected_order(cache: Path, *selection: str, nodeids: bool = False) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cuda",
         "--collect-only", "-q", *selection],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(cache)},
    )  # fmt: skip
    lines = [line.strip() for line in done.stdout.splitlines() if "::" in line]
    ids = lines if nodeids else [line.split("::")[1] for line in lines]
    assert ids, done.stdout[-2000:] + done.stderr[-2000:]
    return ids


SOME_CASES = ("-k", "grouped_reduction or layout_conversion_smem or cas_loop_int64")


def test_on_a_new_machine_perf_jobs_go_first_then_jobs_without_a_device_then_device_jobs(
    tmp_path: Path,
) -> None:
    """With no durations yet: perf jobs, then compiles (no device), then the other device jobs, in
    collection order within each, so no device job holds the device while a perf job waits."""
    ids = collected_order(tmp_path, *SOME_CASES)
    perf = [
        f"perf-{side}-{size}[cuda:device]"
        for side in ("triton", "compiled")
        for size in ("1k", "8k", "24k", "32k")
    ]
    assert sorted(ids[:9]) == sorted([*perf, "add-matrix-throughput[cuda:device]"]), ids
    on_device = [i.endswith("[cuda:device]") for i in ids[9:]]
    assert on_device == sorted(on_device) and not on_device[0] and on_device[-1], ids


def test_jobs_this_machine_ran_before_are_handed_out_longest_first_within_their_group(
    tmp_path: Path,
) -> None:
    case = "corpus/grouped_reduction/case.toml::"
    remembered = {
        f"{case}numerics-compiled-fp32[cuda:device]": 20.0,
        f"{case}numerics-triton-fp32[cuda:device]": 4.0,
        f"{case}compiles-fp32[cuda:sm_90]": 5.0,
        f"{case}perf-triton-1k[cuda:device]": 3.0,
        f"{case}perf-compiled-1k[cuda:device]": 25.0,
    }
    (tmp_path / "durations").mkdir()
    (tmp_path / "durations" / "cuda.json").write_text(json.dumps(remembered))
    ids = collected_order(tmp_path, "-k", "grouped_reduction and not nvfuser")
    assert ids[:2] == ["perf-compiled-1k[cuda:device]", "perf-triton-1k[cuda:device]"], ids
    after_perf = [i for i in ids if not i.startswith("perf-")]
    assert after_perf[0] == "compiles-fp32[cuda:sm_90]", ids  # no device, then never run
    on_device = [i for i in after_perf if i.endswith("[cuda:device]")]
    assert after_perf[-len(on_device) :] == on_device, ids  # device jobs last
    assert on_device[:2] == ["numerics-compiled-fp32[cuda:device]", "numerics-triton-fp32[cuda:device]"], ids


def test_a_gpu_backend_run_remembers_how_long_each_item_took(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cuda",
         "--target", "cuda:sm_90", "-k", "cas_loop_int64 and compiles", "-q"],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:]
    remembered = json.loads((tmp_path / "durations" / "cuda.json").read_text())
    assert sorted(remembered) == [
        "corpus/cas_loop_int64/case.toml::compiles-i32[cuda:sm_90]",
        "corpus/cas_loop_int64/case.toml::compiles-i64[cuda:sm_90]",
    ]
    assert all(seconds > 0 for seconds in remembered.values()), remembered


def test_on_a_gpu_backend_the_first_items_are_dealt_round_the_workers(tmp_path: Path) -> None:
    """Worker i starts on item i and has item i + N next, not items 2i and 2i + 1 (xdist's chunks),
    which made half the perf jobs wait for another perf job before starting."""
    selection = ["--target", "cuda:sm_90", "-k", "amd_select_base_pointer and compiles"]
    order = collected_order(tmp_path, *selection, nodeids=True)  # before the run remembers durations
    assert len(order) == 4, order
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "--backend", "cuda",
         *selection, "-n", "2", "-v"],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "KREGRESS_CACHE_DIR": str(tmp_path)},
    )  # fmt: skip
    ran: dict[str, set[int]] = {}
    for line in done.stdout.splitlines():
        found = re.match(r"\[(gw\d)\] \[[ \d%]+\] \w+ (\S+)", line)
        if found:
            ran.setdefault(found.group(1), set()).add(order.index(found.group(2)))
    assert sorted(ran.values(), key=min) == [{0, 2}, {1, 3}], done.stdout[-3000:]


def test_xdist_hands_out_one_item_at_a_time(tmp_path: Path) -> None:
    (tmp_path / "show_chunk.py").write_text(
        "def pytest_sessionstart(session):\n    print('maxschedchunk', session.config.option.maxschedchunk)\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    said = {}
    for backend in ("cuda", "cpu"):
        done = subprocess.run(
            [sys.executable, "-m", "pytest", "corpus", "-p", "no:cacheprovider", "-p", "show_chunk",
             "--backend", backend, "--collect-only", "-q", "-n", "2", "-k", "cas_loop_int64"],
            cwd=Path(__file__).parents[1], capture_output=True, text=True, env=env, timeout=300, check=False,
        )  # fmt: skip
        said[backend] = done.stdout
    assert "maxschedchunk 1" in said["cuda"], said["cuda"][-2000:]
    # on the CPU too, one at a time after the deal: one (case, target) group, longest first
    assert "maxschedchunk 1" in said["cpu"], said["cpu"][-2000:]


def test_a_device_item_on_a_machine_without_the_device_skips_saying_so(tmp_path: Path) -> None:
    """Not a RUNTIME_ERROR FAIL of the compiler ("Torch not compiled with CUDA enabled")."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device: the item would run")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "corpus/cas_loop_int64", "-p", "no:cacheprovider", "--backend",
         "cuda", "-k", "numerics", "-q", "-rs"],
        cwd=Path(__file__).parents[1], capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    assert "1 skipped" in done.stdout and "no cuda device here: torch" in done.stdout
