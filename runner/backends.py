"""What each backend is, declared once: what torch calls its device, the variable that pins a
process to some of its devices, the tool that lists them, and whether its compile targets need a
native compiler besides the framework. Devices, jobs and the plugin read this table; nothing else
branches on a backend's name (an adapter's own table says how its framework builds each backend).

Stdlib only, like frameworks.py: the child may import it inside a toolchain environment.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    name: str
    torch_device: str  # ROCm builds of torch call their GPU `cuda`
    visible_devices: str | None = None  # None: not a device backend (no pinning, no -n per device)
    list_devices: tuple[str, ...] = ()  # prints one line starting with "GPU" per device
    query_devices: tuple[str, ...] = ()  # prints "index, name, driver, uuid" per device, as CSV
    select_device: str = ""  # the query tool's flag that names one device
    query_arch: tuple[str, ...] = ()  # prints the compute capability ("10.0") per device, one a line


BACKENDS: dict[str, Backend] = {
    backend.name: backend
    for backend in (
        Backend("cpu", "cpu"),
        Backend(
            "cuda",
            "cuda",
            visible_devices="CUDA_VISIBLE_DEVICES",
            list_devices=("nvidia-smi", "-L"),
            query_devices=(
                "nvidia-smi",
                "--query-gpu=index,name,driver_version,uuid",
                "--format=csv,noheader",
            ),
            select_device="-i",
            query_arch=("nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"),
        ),
        Backend("hip", "cuda", visible_devices="HIP_VISIBLE_DEVICES", list_devices=("rocm-smi", "--showid")),
        Backend("xpu", "xpu", visible_devices="ZE_AFFINITY_MASK"),
    )
}


__all__ = ["BACKENDS", "Backend"]
