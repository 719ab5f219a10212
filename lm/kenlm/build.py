"""Build KenLM's ``lmplz`` and ``build_binary`` from the kenlm source distribution.

The ``kenlm`` wheel has the query module only; the 5-gram trainer (``lmplz``) and
the binary converter (``build_binary``) are C++ programs in the same source
distribution. :func:`build_kenlm` downloads it with pip, builds the two targets
with cmake in a temporary directory, and installs them into ``PREFIX/bin`` (the
active environment by default, where :func:`lm.kenlm.scorer.find_tool` looks).

Every prerequisite is checked before anything is downloaded or built, so a
missing compiler is one clear message, not a cmake log. Installing is atomic
per file: each program is copied to a hidden temporary name in the same
directory and renamed, so ``lmplz`` on PATH is either the old file, the new one,
or absent -- never half-written.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

from lm.errors import FieldError, LMError, literal

TOOLS = ("lmplz", "build_binary")

#: Boost components kenlm's CMakeLists.txt requires: (header, library stem).
BOOST = (("boost/program_options.hpp", "boost_program_options"), ("boost/system/error_code.hpp", "boost_system"),
         ("boost/thread.hpp", "boost_thread"), ("boost/test/unit_test.hpp", "boost_unit_test_framework"))
BOOST_APT = "libboost-program-options-dev libboost-system-dev libboost-thread-dev libboost-test-dev"
#: Compression headers: (header, Debian package). kenlm builds without them, but
#: its lmplz then cannot read .gz/.bz2/.xz text, which `make setup` promises.
COMPRESSION = (("zlib.h", "zlib1g-dev"), ("bzlib.h", "libbz2-dev"), ("lzma.h", "liblzma-dev"))
COMPILERS = ("c++", "g++", "clang++")


@dataclass(frozen=True)
class KenlmBuild:
    """What :func:`build_kenlm` did. built: False when the tools were already there
    (nothing was downloaded); seconds: wall time of the whole call."""
    bin_dir: Path
    tools: tuple[Path, ...]
    version: str
    built: bool
    seconds: float


def default_include_dirs() -> list[Path]:
    """Where the compiler looks for headers by default, plus $CPATH / $CPLUS_INCLUDE_PATH."""
    dirs = [Path(sys.prefix) / "include", Path("/usr/local/include"), Path("/usr/include")]
    for var in ("CPATH", "CPLUS_INCLUDE_PATH"):
        dirs += [Path(p) for p in os.environ.get(var, "").split(os.pathsep) if p]
    return dirs


def default_lib_dirs() -> list[Path]:
    dirs = [Path(sys.prefix) / "lib", Path("/usr/local/lib"), Path("/usr/lib"), Path("/usr/lib64")]
    dirs += sorted(Path("/usr/lib").glob("*-linux-gnu"))   # Debian's multiarch directories
    dirs += [Path(p) for p in os.environ.get("LIBRARY_PATH", "").split(os.pathsep) if p]
    return dirs


def missing_prerequisites(include_dirs: Sequence[Path] | None = None,
                          lib_dirs: Sequence[Path] | None = None) -> list[str]:
    """One message per missing build prerequisite, each saying how to install it
    (empty when everything is there). Checked in the order a build would fail."""
    inc = list(include_dirs) if include_dirs is not None else default_include_dirs()
    libs = list(lib_dirs) if lib_dirs is not None else default_lib_dirs()
    problems = []
    if not shutil.which("cmake"):
        problems.append("cmake not found; install it with: apt-get install cmake (or pip install cmake)")
    if not (os.environ.get("CXX") and shutil.which(os.environ["CXX"])) and not any(map(shutil.which, COMPILERS)):
        problems.append("no C++ compiler (c++, g++ or clang++) found; install one with: apt-get install g++")
    if not all(_has_header(inc, h) and _has_lib(libs, stem) for h, stem in BOOST):
        problems.append(f"Boost headers or libraries not found; install them with: apt-get install {BOOST_APT}")
    for header, package in COMPRESSION:
        if not _has_header(inc, header):
            problems.append(f"{header} not found; install it with: apt-get install {package}")
    return problems


def _has_header(dirs: Sequence[Path], header: str) -> bool:
    return any((d / header).is_file() for d in dirs)


def _has_lib(dirs: Sequence[Path], stem: str) -> bool:
    return any(any(d.glob(f"lib{stem}.so*")) or (d / f"lib{stem}.a").is_file() for d in dirs if d.is_dir())


def installed_tools(bin_dir: Path) -> tuple[Path, ...] | None:
    paths = tuple(bin_dir / t for t in TOOLS)
    return paths if all(p.is_file() and os.access(p, os.X_OK) for p in paths) else None


#: The kenlm source release the tools are built from when the `kenlm` distribution
#: is not installed (the module usually comes from the ufal.kenlm wheel, versioned
#: by date, not by kenlm release): a fixed release, so a rebuild gives the same tools.
KENLM_SOURCE = "0.3.0"


def kenlm_version() -> str:
    """The kenlm source release to build: the installed `kenlm` distribution's (its
    own source builds matching tools), else :data:`KENLM_SOURCE`."""
    try:
        return metadata.version("kenlm")
    except metadata.PackageNotFoundError:
        return KENLM_SOURCE


def build_kenlm(prefix: str | os.PathLike | None = None, *, version: str | None = None, force: bool = False,
                jobs: int | None = None, progress: Callable[[str, int], None] | None = None) -> KenlmBuild:
    """Build lmplz and build_binary into ``prefix/bin`` (default: this environment).

    version: the kenlm source release (default: :func:`kenlm_version`); force:
    rebuild even when both programs are there; jobs: parallel compile jobs
    (default: CPU count); progress(stage, percent): called as the
    build advances (percent -1 when unknown). Raises LMError, before downloading
    anything, when a prerequisite is missing or bin/ is not writable."""
    start = time.time()
    bin_dir = Path(prefix if prefix is not None else sys.prefix) / "bin"
    version = version or kenlm_version()
    existing = installed_tools(bin_dir)
    if existing and not force:
        return KenlmBuild(bin_dir, existing, version or "", False, time.time() - start)
    problems = missing_prerequisites()
    if problems:
        raise LMError(problems[0] + (f" (and {len(problems) - 1} more: run `agree doctor`)" if len(problems) > 1 else ""))
    bin_dir.mkdir(parents=True, exist_ok=True)
    if not os.access(bin_dir, os.W_OK):
        raise FieldError(f"cannot write to {literal(bin_dir)}; choose another directory with {{prefix}}")
    report = progress or (lambda stage, pct: None)
    with tempfile.TemporaryDirectory(prefix="agree-kenlm-build-") as work:
        work = Path(work)
        report("download", -1)
        src = _download_source(work, version)
        build = work / "build"
        report("configure", -1)
        _run(["cmake", "-S", str(src), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release"], work / "configure.log")
        _compile(build, jobs or os.cpu_count() or 1, work / "build.log", report)
        tools = tuple(_install(build / "bin" / t, bin_dir) for t in TOOLS)
    version = version or _sdist_version(src.name)
    return KenlmBuild(bin_dir, tools, version, True, time.time() - start)


def _download_source(work: Path, version: str | None) -> Path:
    """The kenlm sdist from the package index, unpacked; returns its top directory."""
    spec = f"kenlm=={version}" if version else "kenlm"
    # --no-build-isolation: pip prepares the sdist's metadata with this environment's
    # setuptools instead of downloading kenlm's build requirements (cmake...) first.
    cmd = [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
           "--no-binary", ":all:", "--no-build-isolation", spec, "-d", str(work)]
    _run(cmd, work / "download.log", what=f"downloading the {spec} source distribution")
    archives = sorted(work.glob("kenlm-*.tar.gz"))
    if not archives:
        raise LMError(f"pip download {spec} gave no kenlm-*.tar.gz source archive")
    with tarfile.open(archives[0]) as tar:
        # the "data" filter (no absolute paths, links out, devices) exists from 3.11.4 on
        tar.extractall(work, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    top = archives[0].name[: -len(".tar.gz")]
    if not (work / top / "CMakeLists.txt").is_file():
        raise LMError(f"{archives[0].name} has no {top}/CMakeLists.txt")
    return work / top


def _sdist_version(top: str) -> str:
    return top.split("-", 1)[1] if "-" in top else ""


_PERCENT = re.compile(r"^\[\s*(\d+)%\]")


def _compile(build: Path, jobs: int, log: Path, report: Callable[[str, int], None]) -> None:
    """cmake --build, reporting make's ``[ NN%]`` lines as progress."""
    cmd = ["cmake", "--build", str(build), "-j", str(jobs), "--target", *TOOLS]
    with open(log, "w", encoding="utf-8") as fh:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace")
        for line in proc.stdout:
            fh.write(line)
            m = _PERCENT.match(line)
            if m:
                report("compile", int(m.group(1)))
        code = proc.wait()
    if code:
        raise LMError(f"building KenLM failed (cmake --build exited {code}): {_tail(log)}")


def _run(cmd: list[str], log: Path, what: str | None = None) -> None:
    with open(log, "w", encoding="utf-8") as fh:
        code = subprocess.run(cmd, stdout=fh, stderr=subprocess.STDOUT).returncode
    if code:
        raise LMError(f"{what or ' '.join(cmd[:2])} failed (exit {code}): {_tail(log)}")


def _tail(log: Path, n: int = 3) -> str:
    """The last lines of a log, joined into one line for an ``Error:`` message."""
    lines = [ln.strip() for ln in log.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]
    return " | ".join(lines[-n:]) or "(no output)"


def _install(built: Path, bin_dir: Path) -> Path:
    """Copy to a hidden temporary name beside the target, then rename over it."""
    if not built.is_file():
        raise LMError(f"the build finished without {built.name}")
    fd, tmp = tempfile.mkstemp(prefix=f".{built.name}.tmp-", dir=bin_dir)
    os.close(fd)
    try:
        shutil.copyfile(built, tmp)
        os.chmod(tmp, 0o755)
        os.replace(tmp, bin_dir / built.name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return bin_dir / built.name
