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
        # a template the release ships refuses the kernel (a static_assert on the block size)
        (
            "Compilation Failed! nvcc ...\n/env/tilelang/3rdparty/../src/tl_templates/cuda/scan.h(109): "
            "error: static assertion failed",
            False,
        ),
        # ptxas refuses the generated PTX for the target
        ("Compilation Failed! nvcc ...\nptxas error   : 256 bit wide load/store requires sm_100", False),
        # only the toolkit's own headers fail: the machine's
        (
            "Compilation Failed! nvcc ...\n/usr/local/cuda/include/cuda_fp8.hpp(7): catastrophic error: "
            "cannot open source file",
            True,
        ),
        # nvcc's output not passed on (0.1.6.x): nothing to blame the compiler with
        ("Compilation Failed! ['/usr/local/bin/nvcc', '-std=c++17', '/tmp/tmpq5e55jpd.cu']", True),
    ],
)
def test_nvcc_errors_in_what_the_compiler_made_or_ships_are_its_own(message, machine) -> None:
    assert toolkit_refused(message) is machine


def test_a_release_that_cannot_load_its_runtime_here_is_skipped_naming_the_library(
    tmp_path, monkeypatch
) -> None:
    """tilelang 0.1.7.post2 loads libnvrtc.so.13 at import: on a machine without it, nothing about
    the compiler can be judged (a SKIP naming the library), and it is not kregress's error."""
    import sys

    from kregress.adapters import Unsupported
    from kregress.adapters.tilelang_aot import compile_session

    package = tmp_path / "tilelang"
    package.mkdir()
    (package / "__init__.py").write_text(
        'raise OSError("libnvrtc.so.13: cannot open shared object file: No such file or directory")\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "tilelang", raising=False)
    with (
        pytest.raises(Unsupported, match=r"cannot load here: libnvrtc\.so\.13"),
        compile_session({"backend": "cuda", "name": "cuda:sm_90"}),
    ):
        pass


def test_a_frontend_error_keeps_what_raised_it_even_without_a_message() -> None:
    """Triton's CompilationError ends with the source and a caret; its cause is the diagnosis. An
    `assert` in the frontend raises an AssertionError with no text: the record's last line was the
    caret alone ("CompilationError:   ^"), now the cause's class."""
    from kregress.adapters.triton_aot import with_cause

    def raised(cause: BaseException) -> BaseException:
        try:
            try:
                raise cause
            except BaseException as inner:
                raise RuntimeError("at 3:4:\n    x = tl.topk(y, 3)\n    ^") from inner
        except RuntimeError as exc:
            return exc

    assert with_cause(raised(AssertionError())).splitlines()[-1] == "AssertionError (no message)"
    said = with_cause(raised(ValueError("k must be a power of 2")))
    assert said.splitlines()[-1] == "ValueError: k must be a power of 2"
