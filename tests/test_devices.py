"""Each xdist worker is pinned to one device of its backend."""

from __future__ import annotations

from kregress.devices import pinned_environment


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
