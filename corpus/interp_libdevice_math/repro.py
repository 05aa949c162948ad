"""interp_libdevice_math: libdevice functions under the interpreter
(intel/intel-xpu-backend-for-triton#3698; also reported as triton-lang/triton#8825).

Kernels written by hand and by TorchInductor call math that only `triton.language.extra.libdevice`
has (asin, acos, atan2, ...). A compiled kernel links them from the vendor library; the interpreter
has no implementation behind them, so under TRITON_INTERPRET=1 the call fails ("cannot convert None
... to tensor" from 3.2.0 on, a `_builder` error before) and a kernel that uses one cannot be
debugged on a CPU at all.
"""

import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

SIZE, BLOCK = 200, 64
EARTH_RADIUS_KM = 6371.0


@triton.jit
def haversine_kernel(lat1_ptr, lon1_ptr, lat2_ptr, lon2_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    lat1 = tl.load(lat1_ptr + offsets, mask=mask)
    lat2 = tl.load(lat2_ptr + offsets, mask=mask)
    dlat = lat2 - lat1
    dlon = tl.load(lon2_ptr + offsets, mask=mask) - tl.load(lon1_ptr + offsets, mask=mask)
    s_lat, s_lon = tl.sin(dlat * 0.5), tl.sin(dlon * 0.5)
    h = s_lat * s_lat + tl.cos(lat1) * tl.cos(lat2) * s_lon * s_lon
    tl.store(out_ptr + offsets, 2.0 * 6371.0 * libdevice.asin(tl.sqrt(h)), mask=mask)


def coordinates() -> list[torch.Tensor]:
    gen = torch.Generator().manual_seed(0)
    lat = [(torch.rand(SIZE, generator=gen) - 0.5) * np.pi * 0.9 for _ in range(2)]
    lon = [(torch.rand(SIZE, generator=gen) - 0.5) * np.pi * 1.9 for _ in range(2)]
    return [lat[0], lon[0], lat[1], lon[1]]


def reference(lat1, lon1, lat2, lon2) -> np.ndarray:
    lat1, lon1, lat2, lon2 = (t.double().numpy() for t in (lat1, lon1, lat2, lon2))
    h = np.sin((lat2 - lat1) / 2) ** 2 + np.cos(lat1) * np.cos(lat2) * np.sin((lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_KM * np.arcsin(np.sqrt(h))


def check_distances(device: str):
    points = coordinates()
    out = torch.zeros(SIZE, device=device)
    haversine_kernel[(triton.cdiv(SIZE, BLOCK),)](*(p.to(device) for p in points), out, SIZE, BLOCK=BLOCK)
    return out.cpu().double().numpy(), reference(*points)
