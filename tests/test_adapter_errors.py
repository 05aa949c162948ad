"""Whose failure is it: kregress's adapter (ERROR), the machine's toolkit (SKIP naming the tool),
or the compiler under test (FAIL)."""

from __future__ import annotations

import json

import pytest

from kregress.adapters import raised_in_kregress
from kregress.adapters.tilelang_aot import toolkit_refused


def caught(action) -> BaseException:
    try:
        action()
    except Exception as exc:
        return exc
    raise AssertionError("nothing was raised")


def test_an_exception_from_kregress_code_is_told_from_one_raised_elsewhere() -> None:
    here = caught(lambda: {}["missing"])
    assert not raised_in_kregress(here)  # innermost frame: this test file
    theirs = caught(lambda: json.loads("{"))
    assert not raised_in_kregress(theirs)
    from kregress.adapters import config_label

    inside = caught(lambda: config_label(None))  # None.items() fails inside kregress
    assert raised_in_kregress(inside)


@pytest.mark.parametrize(
    ("message", "machine"),
    [
        # the generated kernel calls a function CUDA lacks: the compiler's code
        (
            'Compilation Failed! nvcc ...\n/tmp/x/tvm_kernels.cu(13): error: identifier "htan" is undefined',
            False,
        ),
        # the release's templates against a newer toolkit: the machine's
        (
            "Compilation Failed! nvcc ...\n/site/tilelang/src/tl_templates/cuda/gemm_sm90.h(41): error: "
            'namespace "cute" has no member "SM90_64x8x16_F16F16F16_SS"',
            True,
        ),
        (
            "Compilation Failed! nvcc ...\n/usr/local/cuda/include/cuda_fp8.hpp(7): catastrophic error: "
            "cannot open source file",
            True,
        ),
        # nvcc's output not passed on (0.1.6.x): nothing to blame the compiler with
        ("Compilation Failed! ['/usr/local/bin/nvcc', '-std=c++17', '/tmp/tmpq5e55jpd.cu']", True),
    ],
)
def test_nvcc_errors_in_headers_are_the_toolkits_and_in_the_kernel_the_compilers(message, machine) -> None:
    assert toolkit_refused(message) is machine
