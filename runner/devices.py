"""Pin each pytest-xdist worker to one device, so parallel cases never share a GPU."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping

VISIBLE_DEVICES = {"cuda": "CUDA_VISIBLE_DEVICES", "hip": "HIP_VISIBLE_DEVICES", "xpu": "ZE_AFFINITY_MASK"}


def probe_count(backend: str) -> int:
    """How many devices this machine has; 1 when no tool can tell."""
    tool = {"cuda": ["nvidia-smi", "-L"], "hip": ["rocm-smi", "--showid"]}.get(backend)
    if tool and shutil.which(tool[0]):
        listed = subprocess.run(tool, capture_output=True, text=True, check=False).stdout
        count = sum(1 for line in listed.splitlines() if line.startswith("GPU"))
        return max(count, 1)
    return 1


def pinned_environment(
    backend: str, worker: str | None, env: Mapping[str, str], count: int
) -> dict[str, str]:
    """The variable that restricts worker `gwN` to one device: the N-th visible one, round robin."""
    variable = VISIBLE_DEVICES.get(backend)
    if variable is None or worker is None:
        return {}
    visible = [d for d in env.get(variable, "").split(",") if d.strip()]
    devices = visible or [str(i) for i in range(max(count, 1))]
    index = int(worker.removeprefix("gw"))
    return {variable: devices[index % len(devices)]}
