"""Toolchain environments: any compiler version on demand, isolated, cached and reused.

A toolchain is a list of requirements (`triton==3.2.0`, `tilelang==0.1.6.post2`,
`triton-xpu==3.3.0b1`) or paths to a built wheel or checkout. Each resolves to its own virtual
environment under the kregress cache, built once (uv when present, else venv + pip) in a temporary
folder and renamed into place, so a half-built environment is never seen; a file lock makes
concurrent requests (xdist workers, parallel bisect steps) build it once.

What a toolchain does not install itself (torch, and what torch needs) is taken from kregress's
own environment through a `.pth` layer placed after the toolchain's site-packages, so every
environment does not download its own multi-GB torch; name torch in the toolchain to override.

Releases come from PyPI, or from the index named by KREGRESS_INDEX_URL (a mirror, a private or
nightly index); the index is part of an environment's identity.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

from kregress.errors import KregressError
from kregress.frameworks import FRAMEWORKS, Companion, all_companions
from kregress.jobs import Interpreter, tail
from kregress.matrix import head_of, pinned_releases
from kregress.paths import cache_root

ENV_FORMAT = 6  # bump when the layout of an environment changes: old ones are rebuilt
META = "kregress-env.json"
BASE_LAYER = "_kregress_base.pth"
PROVIDED_BY_KREGRESS = ("torch",)
MODULES_TO_REPORT = (*(f.name for f in FRAMEWORKS.values()), "torch", "numpy")
INSTALL_TIMEOUT = 1800
INSTALLER_LINES = 25  # of the installer's output shown when it fails
INDEX_VARIABLE = "KREGRESS_INDEX_URL"
# Beside a wheel built from a commit (kregress.builds): which package, repository and commit it is,
# so that every record of a judgement under it names the commit.
BUILD_RECORD = "kregress-build.json"


COMPANIONS: tuple[Companion, ...] = all_companions()  # each framework declares its own


# Native libraries some releases (TileLang's) link against and that a CPU machine lacks: the CUDA
# runtime libraries come from NVIDIA's wheels (CUDA 13's share one folder: tilelang 0.1.7.post2
# links libnvrtc.so.13); the driver gets a stub.
CUDA_RUNTIME_WHEELS = {
    "libcudart.so.12": ("nvidia-cuda-runtime-cu12", "nvidia/cuda_runtime/lib"),
    "libnvrtc.so.12": ("nvidia-cuda-nvrtc-cu12", "nvidia/cuda_nvrtc/lib"),
    "libcudart.so.13": ("nvidia-cuda-runtime>=13,<14", "nvidia/cu13/lib"),
    "libnvrtc.so.13": ("nvidia-cuda-nvrtc>=13,<14", "nvidia/cu13/lib"),
}
CUDA_DRIVER = "libcuda.so.1"
CUDA_DRIVER_LINK = "libcuda.so"  # what `-lcuda` asks the linker for (TileLang 0.1.6's nvcc line)
CUDA_ERROR_NO_DEVICE = 100
NATIVE_PACKAGES = tuple(p for f in FRAMEWORKS.values() for p in f.native_packages)


class ToolchainError(KregressError):
    """A toolchain could not be resolved or installed; the message names it and shows why."""


class BuildCancelled(ToolchainError):
    """A build started ahead of need (a bisect's speculation) was stopped: nothing is left of it."""


def package_index() -> str | None:
    """The index releases are installed from, when it is not PyPI."""
    return os.environ.get(INDEX_VARIABLE) or None


def run_cancellable(
    command: list[str] | str,
    *,
    timeout: float,
    cancel: threading.Event | None = None,
    **popen: Any,
) -> tuple[int, str]:
    """Run to the end (exit status, stdout and stderr together), or kill the whole process group
    when `cancel` is set (BuildCancelled) or `timeout` passes (subprocess.TimeoutExpired)."""
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True, **popen
    )
    deadline = time.monotonic() + timeout
    while True:
        try:
            output, _ = process.communicate(timeout=0.2)
            return process.returncode, output
        except subprocess.TimeoutExpired:
            cancelled = cancel is not None and cancel.is_set()
            if cancelled or time.monotonic() > deadline:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, 9)
                process.communicate()
                if cancelled:
                    shown = command if isinstance(command, str) else " ".join(command[:3])
                    raise BuildCancelled(f"cancelled: {shown}") from None
                raise subprocess.TimeoutExpired(command, timeout) from None


@dataclass(frozen=True)
class Toolchain:
    requirements: tuple[str, ...]

    @classmethod
    def parse(cls, spec: str) -> Toolchain:
        """`"triton==3.2.0"`, `"tilelang==0.1.6.post2 apache-tvm-ffi==0.1.6"`, or a wheel/checkout path."""
        parts = spec.split()
        if not parts:
            raise ToolchainError("empty toolchain spec: give requirements like triton==3.2.0 or a path")
        requirements = []
        for part in parts:
            if os.path.exists(part):
                requirements.append(str(Path(part).resolve()))
                continue
            if head := head_of(part):
                package, ref = head
                raise ToolchainError(
                    f"toolchain {spec!r}: {part!r} names the head of {ref!r} of {package}'s repository, "
                    f"which is built before it is judged: give it alone (`--toolchain {part}` builds it "
                    f"through the build cache), or `kregress build {part}` prints the toolchain to give"
                )
            try:
                requirements.append(str(Requirement(part)))
            except InvalidRequirement as exc:
                raise ToolchainError(
                    f"toolchain {spec!r}: {part!r} is neither a requirement like triton==3.2.0 nor an "
                    f"existing path ({exc})"
                ) from None
        return cls(tuple(requirements))

    @property
    def name(self) -> str:
        return " ".join(self.requirements)

    def paths(self) -> list[Path]:
        return [Path(r) for r in self.requirements if os.path.isabs(r)]

    def pinned(self) -> dict[str, str]:
        """The release of each package this toolchain installs, where its spec says it."""
        return pinned_releases(self.requirements)

    def key(self) -> str:
        """Same requirements (with the companions the rules add), same local files, same Python, same
        environment lending its packages: same environment. A changed rule in COMPANIONS thus leads
        to a new environment."""
        # The environment lends kregress's own packages by path: one made beside another kregress
        # environment (a runner's job rebuilt in another folder) would lend from a folder that is gone.
        return self.digest(
            {"lends_from": child_module_paths() if self.brings("torch") else base_layer_paths()}
        )

    def verdict_key(self) -> str:
        """What a judgement under this toolchain depends on: `key()` with the versions of what
        kregress lends in place of the folder it lends them from. A fresh clone's environment lends
        from a new folder (a new environment) and judges exactly as the old one did."""
        lent = CHILD_MODULES if self.brings("torch") else LENT_PACKAGES
        return self.digest({"lends": {name: distribution_version(name) for name in lent}})

    def digest(self, lender: dict[str, Any]) -> str:
        fingerprint = {
            "format": ENV_FORMAT,
            "python": sys.version,
            "requirements": sorted(self.requirements),
            "companions": self.companions(),
            "companion_env": self.environment_variables(),
            "files": {str(p): fingerprint_path(p) for p in self.paths()},
            **lender,
        }
        if self.may_need_native_libraries():  # a changed rule of what provides them: a new environment
            fingerprint["native_libraries"] = {
                "runtime": CUDA_RUNTIME_WHEELS, "driver": CUDA_DRIVER, "link": CUDA_DRIVER_LINK
            }  # fmt: skip
        if package_index():  # only when set, so the keys of PyPI environments stay as they were
            fingerprint["index"] = package_index()
        return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]

    def commits(self) -> dict[str, str]:
        """The commit each path requirement was built from, by package (kregress.builds says)."""
        found = {}
        for path in self.paths():
            record = path.parent / BUILD_RECORD
            with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
                built = json.loads(record.read_text())
                found[str(built["package"])] = str(built["commit"])
        return found

    def may_need_native_libraries(self) -> bool:
        """Whether a framework this toolchain installs links native libraries kregress may provide
        (provide_cuda_libraries): those environments are keyed on the rule that provides them."""
        return any(
            framework.native_packages and (self.brings(framework.package or framework.name) or self.paths())
            for framework in FRAMEWORKS.values()
        )

    def names_package(self, package: str) -> bool:
        return any(not os.path.isabs(r) and Requirement(r).name == package for r in self.requirements)

    def brings(self, package: str) -> bool:
        """Whether the environment installs `package` itself: named, or added by a companion (an
        framework line may bring the torch it was built for)."""
        return self.names_package(package) or any(Requirement(r).name == package for r in self.companions())

    def refusal(self, python: str | None = None) -> str | None:
        """Why a framework cannot work with these requirements under this Python, before installing."""
        python = python or f"{sys.version_info.major}.{sys.version_info.minor}"
        plain = tuple(r for r in self.requirements if not os.path.isabs(r))
        return next((why for f in FRAMEWORKS.values() if (why := f.refuses(plain, python))), None)

    def matching_companions(self) -> list[Companion]:
        found = []
        for requirement in (Requirement(r) for r in self.requirements if not os.path.isabs(r)):
            pins = [spec.version for spec in requirement.specifier if spec.operator == "=="]
            for companion in COMPANIONS:
                in_range = not companion.versions or (
                    bool(pins) and SpecifierSet(companion.versions).contains(pins[0], prereleases=True)
                )
                if requirement.name == companion.package and in_range:
                    found.append(companion)
        return found

    def companions(self) -> list[str]:
        """Requirements added so an old release works beside what kregress's environment lends it."""
        return [
            extra
            for companion in self.matching_companions()
            for extra in companion.requirements
            if not self.names_package(Requirement(extra).name)
        ]

    def environment_variables(self) -> dict[str, str]:
        return {k: v for companion in self.matching_companions() for k, v in companion.env}


def own_environment_identity() -> str:
    """kregress's own environment as a judgement depends on it: the Python, and the version of every
    distribution that provides any framework's modules, torch, numpy and what a child
    imports; not its folder, which a fresh clone changes."""
    providers = importlib.metadata.packages_distributions()
    modules = {m for f in FRAMEWORKS.values() for m in (*f.modules, *f.imports)} | set(LENT_PACKAGES)
    distributions = sorted({d for m in modules for d in providers.get(m, [])})
    versions = {d: importlib.metadata.version(d) for d in distributions}
    fingerprint = {"python": sys.version, "versions": versions}
    return hashlib.sha256(json.dumps(fingerprint, sort_keys=True).encode()).hexdigest()[:16]


def environment_identity(spec: str | None) -> str:
    """What a judgement depends on of the environment that makes it: the toolchain's `verdict_key()`,
    or kregress's own environment for None."""
    return own_environment_identity() if spec is None else Toolchain.parse(spec).verdict_key()


def fingerprint_path(path: Path) -> str:
    """A wheel by its bytes; a checkout by its commit and uncommitted changes."""
    if path.is_file():
        return hashlib.sha256(path.read_bytes()).hexdigest()
    head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=False)  # fmt: skip
    if head.returncode != 0:
        return f"mtime:{path.stat().st_mtime_ns}"
    dirty = subprocess.run(["git", "-C", str(path), "diff", "HEAD"], capture_output=True, check=False).stdout
    return f"{head.stdout.strip()}+{hashlib.sha256(dirty).hexdigest()[:12]}"


@dataclass
class Environment:
    toolchain: Toolchain
    root: Path

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def meta(self) -> dict[str, Any]:
        return json.loads((self.root / META).read_text())

    @property
    def versions(self) -> dict[str, str]:
        return dict(self.meta.get("versions", {}))

    @property
    def installed(self) -> dict[str, str]:
        """Every distribution the environment holds itself, by name and version, read from its
        dist-info folders as they are now (what kregress lends it is in the toolchain's key)."""
        return installed_distributions(self.root)

    def interpreter(self) -> Interpreter:
        env = {k: v.replace("{root}", str(self.root)) for k, v in self.meta.get("env", {}).items()}
        for paths in ("LD_LIBRARY_PATH", "LIBRARY_PATH"):  # the machine's own come after the environment's
            if paths in env and os.environ.get(paths):
                env[paths] += os.pathsep + os.environ[paths]
        return Interpreter(
            str(self.python), env, self.toolchain.name, tuple(self.toolchain.commits().items())
        )


# The environment a parent resolved (a bisect's point, verify's end) and hands to the pytest it
# starts, so that the child does not resolve the same toolchain again.
HANDED_ENVIRONMENT = "KREGRESS_ENVIRONMENT"


def handed_environment(toolchain: Toolchain) -> Environment | None:
    """The environment the parent handed over, when it is this toolchain's (its metadata names the
    same requirements); None otherwise, and the child resolves the toolchain itself."""
    root = os.environ.get(HANDED_ENVIRONMENT)
    if not root:
        return None
    with contextlib.suppress(OSError, ValueError, KeyError, TypeError):
        if list(json.loads((Path(root) / META).read_text())["toolchain"]) == list(toolchain.requirements):
            return Environment(toolchain, Path(root))
    return None


def installed_distributions(root: Path) -> dict[str, str]:
    """The distributions of the environment at `root` by canonical name: the folder names of
    `*.dist-info` say name and version (no interpreter started)."""
    found = {}
    for info in root.glob("lib/python*/site-packages/*.dist-info"):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        found[canonicalize_name(name)] = version
    return dict(sorted(found.items()))


def run_installer(
    command: list[str],
    what: str,
    toolchain: Toolchain,
    env: dict[str, str] | None = None,
    cancel: threading.Event | None = None,
) -> None:
    try:
        status, output = run_cancellable(command, timeout=INSTALL_TIMEOUT, cancel=cancel, env=env)
    except subprocess.TimeoutExpired:
        raise ToolchainError(f"toolchain {toolchain.name!r}: {what} took over {INSTALL_TIMEOUT} s") from None
    if status != 0:
        raise ToolchainError(
            f"toolchain {toolchain.name!r}: {what} failed (exit {status}):\n" + tail(output, INSTALLER_LINES)
        )


def uv_binary() -> str | None:
    """uv from PATH, or the one installed next to this interpreter."""
    beside = Path(sys.executable).parent / "uv"
    return shutil.which("uv") or (str(beside) if beside.exists() else None)


def site_packages(python: Path) -> Path:
    code = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
    return Path(
        subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    )


def base_layer_paths() -> list[str]:
    """Where kregress's own environment keeps its packages (torch among them)."""
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


# What a child imports besides the compiler: the kinds measure there (kregress.kinds), and they are
# pydantic models. An environment that brings its own torch borrows only these from kregress's.
CHILD_MODULES = ("pydantic", "pydantic_core", "annotated_types", "typing_extensions", "typing_inspection")
LENT_FOLDER = "kregress-lent"


# What an environment that does not bring torch borrows from kregress's: what a judgement can see.
LENT_PACKAGES = ("torch", "numpy", "tilelang", *CHILD_MODULES)


def distribution_version(name: str) -> str | None:
    """The installed version of a module's distribution in kregress's environment, if any."""
    try:
        return importlib.metadata.version(name.replace("_", "-"))
    except importlib.metadata.PackageNotFoundError:
        return None


def child_module_paths() -> list[str]:
    """Where kregress's environment keeps each of CHILD_MODULES (a package folder or a module file)."""
    found = []
    for name in CHILD_MODULES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        found.append(str(origin.parent if origin.name == "__init__.py" else origin))
    return found


def lend_child_modules(site: Path) -> str:
    """Links to CHILD_MODULES beside `site`; the line of a .pth in `site` that finds them (relative,
    so the environment may be renamed into place)."""
    lent = site.parent / LENT_FOLDER
    lent.mkdir(exist_ok=True)
    for path in map(Path, child_module_paths()):
        (lent / path.name).symlink_to(path, target_is_directory=path.is_dir())
    return os.path.relpath(lent, site)


# What the new environment holds and what it borrows, found and read from package metadata without
# importing anything: importing torch and the frameworks to read `__version__` took most of an
# environment's build (8 s of a Triton one here). A module there that fails to import is listed too;
# the child that imports it says so.
REPORT_VERSIONS = f"""
import importlib.metadata, importlib.util, json, sys
own, lent = {{"python": sys.version.split()[0]}}, {{}}
providers = importlib.metadata.packages_distributions()
for name in {MODULES_TO_REPORT!r}:
    try:
        spec = importlib.util.find_spec(name)
    except Exception:
        continue
    if spec is None:
        continue
    where = spec.origin
    if where in (None, "namespace"):
        where = next(iter(spec.submodule_search_locations or ()), "")
    try:
        version = importlib.metadata.version(providers[name][0])
    except (KeyError, IndexError, importlib.metadata.PackageNotFoundError):
        version = "unknown"
    (own if str(where).startswith(sys.prefix) else lent)[name] = version
print(json.dumps({{"versions": own, "lent": lent}}))
"""


def missing_libraries(site: Path, env: dict[str, str] | None = None) -> dict[str, set[Path]]:
    """Which CUDA libraries the toolchain's native modules need but cannot find, and who needs them."""
    wanted = {CUDA_DRIVER, *CUDA_RUNTIME_WHEELS}
    missing: dict[str, set[Path]] = {}
    for package in NATIVE_PACKAGES:
        for library in (site / package).rglob("*.so*") if (site / package).is_dir() else ():
            listed = subprocess.run(
                ["ldd", str(library)], capture_output=True, text=True, env=env, check=False
            )
            for line in listed.stdout.splitlines():
                name = line.strip().split(" ", 1)[0]
                if name in wanted and "not found" in line:
                    missing.setdefault(name, set()).add(library)
    return missing


def build_driver_stub(users: set[Path], folder: Path, toolchain: Toolchain) -> None:
    """A libcuda.so.1 exporting every driver symbol `users` import, each failing with
    CUDA_ERROR_NO_DEVICE: enough to load, and honest about there being no GPU."""
    symbols: set[str] = set()
    for library in users:
        command = ["nm", "-D", "--undefined-only", str(library)]
        listed = subprocess.run(command, capture_output=True, text=True, check=False)
        symbols |= {
            parts[-1].split("@", 1)[0]
            for parts in (line.split() for line in listed.stdout.splitlines())
            if parts and re.fullmatch(r"cu[A-Z]\w*", parts[-1].split("@", 1)[0])
        }
    folder.mkdir(parents=True, exist_ok=True)
    source = folder / "libcuda_stub.c"
    source.write_text(
        "/* No GPU on this machine: every CUDA driver call fails with CUDA_ERROR_NO_DEVICE. */\n"
        + "".join(f"int {name}(void) {{ return {CUDA_ERROR_NO_DEVICE}; }}\n" for name in sorted(symbols))
    )
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise ToolchainError(
            f"toolchain {toolchain.name!r}: needs a CUDA driver stub, and no C compiler is here"
        )
    run_installer([compiler, "-shared", "-fPIC", "-o", str(folder / CUDA_DRIVER), str(source)],
                  "building the CUDA driver stub", toolchain)  # fmt: skip
    # a release whose nvcc line links the generated host code with `-lcuda` (TileLang 0.1.6) finds
    # the stub through LIBRARY_PATH: with no driver here it failed to link every kernel
    if not (folder / CUDA_DRIVER_LINK).is_symlink():
        (folder / CUDA_DRIVER_LINK).symlink_to(CUDA_DRIVER)


def provide_cuda_libraries(
    toolchain: Toolchain, folder: Path, site: Path, install: list[str], log: Any
) -> dict:
    """Install or stub the CUDA libraries the toolchain cannot load; return the variables to set."""
    missing = missing_libraries(site)
    if not missing:
        return {}
    wheels = [CUDA_RUNTIME_WHEELS[name][0] for name in sorted(missing) if name in CUDA_RUNTIME_WHEELS]
    if wheels:
        log(f"{toolchain.name} links against CUDA runtime libraries: installing {' '.join(wheels)}")
        run_installer([*install, *wheels], "installing CUDA runtime libraries", toolchain)
    folders = (CUDA_RUNTIME_WHEELS[name][1] for name in sorted(missing) if name in CUDA_RUNTIME_WHEELS)
    paths = [str(site / folder) for folder in dict.fromkeys(folders)]
    linked: dict[str, str] = {}
    if CUDA_DRIVER in missing:
        log(f"no CUDA driver here: building a stub {CUDA_DRIVER} for {toolchain.name}")
        build_driver_stub(missing[CUDA_DRIVER], folder / "kregress-cuda-stub", toolchain)
        paths.insert(0, str(folder / "kregress-cuda-stub"))
        linked = {"LIBRARY_PATH": "{root}/kregress-cuda-stub"}
    library_path = os.pathsep.join([*paths, os.environ.get("LD_LIBRARY_PATH", "")]).rstrip(os.pathsep)
    still = missing_libraries(site, {**os.environ, "LD_LIBRARY_PATH": library_path})
    if still:
        raise ToolchainError(f"toolchain {toolchain.name!r}: still cannot load {', '.join(sorted(still))}")
    # Paths are written relative to the environment, which is renamed into place after the build.
    return {"LD_LIBRARY_PATH": os.pathsep.join(p.replace(str(folder), "{root}") for p in paths), **linked}


def build(
    toolchain: Toolchain, folder: Path, log: Any, cancel: threading.Event | None = None
) -> dict[str, Any]:
    """Create the environment in `folder`; return its metadata. Raises ToolchainError."""
    uv = uv_binary()
    base_python = sys.executable
    if uv:
        run_installer(
            [uv, "venv", "--quiet", "--python", base_python, str(folder)],
            "creating the venv",
            toolchain,
            cancel=cancel,
        )
    else:
        run_installer([base_python, "-m", "venv", str(folder)], "creating the venv", toolchain, cancel=cancel)
    python = folder / "bin" / "python"
    site = site_packages(python)
    layer = [lend_child_modules(site)] if toolchain.brings("torch") else base_layer_paths()
    (site / BASE_LAYER).write_text("\n".join(layer) + "\n")
    extra = f" (and {' '.join(toolchain.companions())})" if toolchain.companions() else ""
    log(f"installing {toolchain.name}{extra} with {'uv' if uv else 'pip'}")
    index = ["--index-url", package_index()] if package_index() else []
    if uv:
        override = folder / "kregress-overrides.txt"
        kept_out = [p for p in PROVIDED_BY_KREGRESS if not toolchain.brings(p)]
        override.write_text("".join(f"{p}; sys_platform == 'never'\n" for p in kept_out))
        # uv keeps an index's pages cached for a while: a release published since (tonight's
        # compiler) would be "no version" for the packages the toolchain names. Offline there is
        # nothing newer to see (and uv refuses --refresh with UV_OFFLINE).
        offline = os.environ.get("UV_OFFLINE", "").lower() not in ("", "0", "false", "no")
        refresh = [
            part
            for r in toolchain.requirements
            if not os.path.isabs(r) and not offline
            for part in ("--refresh-package", Requirement(r).name)
        ]
        install = [
            uv,
            "pip",
            "install",
            "--python",
            str(python),
            "--override",
            str(override),
            *refresh,
            *index,
        ]
    else:
        install = [str(python), "-m", "pip", "install", "--disable-pip-version-check", *index]
    command = [*install, *toolchain.requirements, *toolchain.companions()]
    run_installer(command, "installing", toolchain, cancel=cancel)
    library_env = provide_cuda_libraries(toolchain, folder, site_packages(python), install, log)
    probe_env = {**os.environ, **{k: v.replace("{root}", str(folder)) for k, v in library_env.items()}}
    command = [str(python), "-c", REPORT_VERSIONS]
    probe = subprocess.run(command, capture_output=True, text=True, env=probe_env, check=False)
    if probe.returncode != 0:
        raise ToolchainError(f"toolchain {toolchain.name!r}: the new environment does not start:\n"
                             + tail(probe.stderr, INSTALLER_LINES))  # fmt: skip
    now = time.time()
    return {
        "format": ENV_FORMAT,
        "toolchain": list(toolchain.requirements),
        "companions": toolchain.companions(),
        "env": {**toolchain.environment_variables(), **library_env},
        "installer": "uv" if uv else "pip",
        **json.loads(probe.stdout),
        "created": now,
    }


class EnvironmentCache:
    """Environments under `<cache>/envs/<key>`: complete ones only, each with kregress-env.json."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = root or cache_root() / "envs"

    def get(
        self, toolchain: Toolchain, log: Any = lambda message: None, cancel: threading.Event | None = None
    ) -> Environment:
        """The environment, built first if need be; `cancel` stops a build (BuildCancelled)."""
        refused = toolchain.refusal()
        if refused:
            raise ToolchainError(f"toolchain {toolchain.name!r}: {refused}")
        key = toolchain.key()

        def make(folder: Path) -> dict[str, Any]:
            log(f"building toolchain environment {key} for {toolchain.name}")
            return build(toolchain, folder, log, cancel)

        return Environment(toolchain, self.built_once(key, make))

    def find(self, toolchain: Toolchain) -> Environment | None:
        """The toolchain's environment if it is built here, without building it."""
        folder = self.root / toolchain.key()
        return Environment(toolchain, folder) if (folder / META).exists() else None

    def built_once(self, key: str, make: Callable[[Path], dict[str, Any]]) -> Path:
        """`<root>/<key>`, made by `make(folder)` (which returns the metadata) the first time only:
        built in a temporary folder and renamed into place under a file lock, so a half-built one is
        never used and concurrent callers (xdist workers, bisect steps) build it once."""
        final = self.root / key
        if (final / META).exists():
            self.touch(final)
            return final
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / f"{key}.lock")):
            if (final / META).exists():  # built by someone else while we waited
                self.touch(final)
                return final
            shutil.rmtree(final, ignore_errors=True)  # a folder without metadata is not an environment
            building = self.root / f".building-{key}-{os.getpid()}"
            shutil.rmtree(building, ignore_errors=True)
            started = time.perf_counter()
            try:
                meta = make(building)
                meta["build_seconds"] = round(time.perf_counter() - started, 2)
                (building / META).write_text(json.dumps(meta, indent=2))
                os.rename(building, final)
            finally:
                shutil.rmtree(building, ignore_errors=True)
        self.touch(final)
        return final

    @staticmethod
    def touch(folder: Path) -> None:
        with contextlib.suppress(OSError):
            os.utime(folder / META)

    def entries(self) -> list[dict[str, Any]]:
        """Every complete environment: key, toolchain, versions, size on disk, last used.

        uv hard-links files from its cache, so `bytes` counts only what this environment alone
        holds and `shared_bytes` what it shares with the uv cache or other environments.
        """
        found = []
        for meta_path in sorted(self.root.glob(f"*/{META}")):
            meta = json.loads(meta_path.read_text())
            folder = meta_path.parent
            own = shared = 0
            for path in folder.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    stat = path.stat()
                    if stat.st_nlink > 1:
                        shared += stat.st_size
                    else:
                        own += stat.st_size
            found.append({
                "key": folder.name, "path": str(folder), "toolchain": " ".join(meta["toolchain"]),
                "versions": meta.get("versions", {}), "lent": meta.get("lent", {}), "bytes": own,
                "shared_bytes": shared, "last_used": meta_path.stat().st_mtime,
                "created": meta.get("created"),
                "stale": meta.get("format") != ENV_FORMAT,
            })  # fmt: skip
        return found

    def prune(self, older_than_days: float | None = None, keys: list[str] | None = None) -> list[str]:
        """Delete environments unused for longer than `older_than_days`, or those named, and always
        those of an older format (no key leads to them any more); return the keys removed."""
        removed = []
        now = time.time()
        for entry in self.entries():
            stale = older_than_days is not None and now - entry["last_used"] > older_than_days * 86400
            named = keys is not None and entry["key"] in keys
            if stale or named or entry["stale"] or (older_than_days is None and keys is None):
                with FileLock(str(self.root / f"{entry['key']}.lock")):
                    shutil.rmtree(entry["path"], ignore_errors=True)
                removed.append(entry["key"])
        for leftover in self.root.glob(".building-*"):  # from a build that was killed
            pid = leftover.name.rsplit("-", 1)[-1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                shutil.rmtree(leftover, ignore_errors=True)
        return removed
