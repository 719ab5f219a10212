"""Installing and checking an installation: version, setup.cfg/constraints.txt,
`agree setup kenlm` prerequisite checks, `agree doctor`."""
from __future__ import annotations

import base64
import configparser
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

import agreement
from agreement import doctor as doctor_module
from conftest import run_agree
from formats import distribution
from formats.distribution import DISTRIBUTION, IMPORT_PACKAGES, ours, source_version
from formats.manifest import AGREE_VERSION
from formats.manifest import write_manifest
from lm.errors import LMError
from lm.kenlm.scorer import find_tool
from lm.kenlm.build import build_kenlm, missing_prerequisites

ROOT = Path(__file__).resolve().parents[1]


def setup_cfg() -> configparser.ConfigParser:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg", encoding="utf-8")
    return cfg


def requirement_names(text: str) -> list[str]:
    names = []
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if line:
            names.append(re.split(r"[<>=!~\[; ]", line, maxsplit=1)[0])
    return names


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_version_comes_from_the_installed_metadata():
    dist = ours()
    expected = dist.version if dist is not None else source_version()
    assert agreement.__version__ == AGREE_VERSION == expected
    if dist is not None:   # this tree, installed (editable or not) as agree-bench
        assert expected == metadata.version(DISTRIBUTION) == setup_cfg()["metadata"]["version"]
    result = run_agree("--version")
    assert result.exit_code == 0 and result.output == f"agree, version {expected} (distribution agree-bench)\n"


def test_a_source_tree_never_installed_reports_setup_cfg_version_marked_source(monkeypatch):
    monkeypatch.setattr(distribution, "ours", lambda: None)
    assert distribution.version() == setup_cfg()["metadata"]["version"] + "+source"


def test_one_distribution_name_everywhere():
    """agree-bench (free on the package index; `agree` there is another project) in
    setup.cfg, CI's wheel glob and every install hint; the command stays `agree`."""
    cfg = setup_cfg()
    assert cfg["metadata"]["name"] == DISTRIBUTION == "agree-bench"
    assert "agree = agreement.cli:main" in cfg["options.entry_points"]["console_scripts"]
    assert 'dist/agree_bench-*.whl' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    stale = []
    sources = [p for d in (*IMPORT_PACKAGES, "tests", "benchmarks", "scripts") for p in (ROOT / d).rglob("*.*")
               if p.suffix in (".py", ".sh")]
    for path in [ROOT / "README.md", *ROOT.glob("docs/*.md"), ROOT / "Makefile", *sources]:
        text = path.read_text(encoding="utf-8")
        stale += [f"{path.relative_to(ROOT)}: {m}" for m in re.findall(r"pip install '?agree(?![-\w])\S*", text)]
    assert not stale, stale
    assert "pip install agree-bench" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_import_packages_are_the_packaged_ones():
    listed = {p for p in setup_cfg()["options.packages.find"]["include"].split() if "." not in p}
    assert set(IMPORT_PACKAGES) == listed


def test_every_manifest_records_the_agree_version(tmp_path):
    manifest = write_manifest(tmp_path, "test", [], {})
    on_disk = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["versions"]["agree"] == on_disk["versions"]["agree"] == agreement.__version__


def test_every_python_package_of_the_tree_is_packaged():
    """A top-level package missing from [options.packages.find] would import from
    the source tree here and be absent from the wheel."""
    listed = set(setup_cfg()["options.packages.find"]["include"].split())
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    assert packages and packages <= listed


def test_license_matches_setup_cfg():
    cfg = setup_cfg()
    assert cfg["metadata"]["license"] == "MIT"
    text = (ROOT / cfg["metadata"]["license_files"]).read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "the agree developers" in text


def test_constraints_pin_every_requirement_and_torch_2_13():
    cfg = setup_cfg()
    pins = {}
    for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, version = line.split("==")
            pins[normalize(name)] = version
    assert pins["torch"] == "2.13.0"
    required = requirement_names(cfg["options"]["install_requires"])
    for extra in ("hf", "gguf", "analysis", "docs", "test"):
        required += requirement_names(cfg["options.extras_require"][extra])
    assert not [r for r in required if normalize(r) not in pins]
    # ranges in setup.cfg, never exact pins (a user's own torch must be kept)
    assert not [r for r in cfg["options"]["install_requires"].splitlines() if "==" in r]


def test_the_test_extra_includes_every_optional_stack():
    extras = setup_cfg()["options.extras_require"]
    test = set(map(normalize, requirement_names(extras["test"])))
    for extra in ("hf", "gguf", "analysis", "docs"):
        assert set(map(normalize, requirement_names(extras[extra]))) <= test, extra


def test_setup_kenlm_without_cmake_is_one_error_line_and_installs_nothing(monkeypatch, tmp_path):
    path = tmp_path / "path"          # a PATH with a C++ compiler but no cmake
    path.mkdir()
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler:
        (path / "c++").symlink_to(compiler)
    monkeypatch.setenv("PATH", str(path))
    others = len(missing_prerequisites()) - 1   # anything else this machine lacks
    prefix = tmp_path / "prefix"
    result = run_agree("setup", "kenlm", "--prefix", str(prefix), "--quiet")
    expected = "Error: cmake not found; install it with: apt-get install cmake (or pip install cmake)"
    if others:
        expected += f" (and {others} more: run `agree doctor`)"
    assert result.exit_code == 1 and result.output == expected + "\n"
    assert not (prefix / "bin" / "lmplz").exists() and not (prefix / "bin" / "build_binary").exists()


def test_missing_headers_are_named_with_their_package(tmp_path):
    problems = missing_prerequisites(include_dirs=[tmp_path], lib_dirs=[tmp_path])
    text = "\n".join(problems)
    assert "Boost headers or libraries not found; install them with: apt-get install libboost-program-options-dev" in text
    for header, package in (("zlib.h", "zlib1g-dev"), ("bzlib.h", "libbz2-dev"), ("lzma.h", "liblzma-dev")):
        assert f"{header} not found; install it with: apt-get install {package}" in text


def test_headers_and_libraries_present_satisfy_the_check(tmp_path):
    inc, lib = tmp_path / "include", tmp_path / "lib"
    for header in ("boost/program_options.hpp", "boost/system/error_code.hpp", "boost/thread.hpp",
                   "boost/test/unit_test.hpp", "zlib.h", "bzlib.h", "lzma.h"):
        (inc / header).parent.mkdir(parents=True, exist_ok=True)
        (inc / header).write_text("", encoding="utf-8")
    lib.mkdir()
    for stem in ("boost_program_options", "boost_system", "boost_thread", "boost_unit_test_framework"):
        (lib / f"lib{stem}.so.1.74.0").write_text("", encoding="utf-8")
    problems = missing_prerequisites(include_dirs=[inc], lib_dirs=[lib])
    assert not [p for p in problems if "Boost" in p or ".h not found" in p]


def test_setup_kenlm_keeps_tools_that_are_already_there(tmp_path):
    try:
        tools = [find_tool("lmplz"), find_tool("build_binary")]
    except LMError:
        pytest.skip("lmplz/build_binary not installed here (agree setup kenlm)")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in tools:
        shutil.copy2(tool, bin_dir)
    before = {p.name: p.stat().st_mtime_ns for p in bin_dir.iterdir()}
    result = build_kenlm(tmp_path)
    assert not result.built and result.bin_dir == bin_dir
    assert [p.name for p in result.tools] == ["lmplz", "build_binary"]
    assert {p.name: p.stat().st_mtime_ns for p in bin_dir.iterdir()} == before


def without_kenlm_tools(monkeypatch, tmp_path):
    """No lmplz anywhere find_tool looks: not beside this Python, not on PATH."""
    monkeypatch.delenv("AGREE_KENLM_BIN", raising=False)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))


def test_train_kn5_without_lmplz_says_to_run_setup_kenlm(monkeypatch, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text("".join(f"the dog{'s' * (i % 2)} run{'s' * (1 - i % 2)} .\n" for i in range(60)),
                    encoding="utf-8")
    without_kenlm_tools(monkeypatch, tmp_path)
    result = run_agree("train-lm", str(text), "--lang", "en", "--arch", "kn5", "--quiet",
                                      "--out", str(tmp_path / "kn5"))
    assert result.exit_code == 1 and "Traceback" not in result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error: ")]
    assert len(error) == 1 and "lmplz" in error[0] and "`agree setup kenlm`" in error[0]
    assert not (tmp_path / "kn5").exists()


def test_doctor_prints_one_line_per_check_and_exits_0(monkeypatch, tmp_path):
    without_kenlm_tools(monkeypatch, tmp_path)
    result = run_agree("doctor")
    assert result.exit_code == 0
    rows = {line.split()[0]: line for line in result.output.splitlines()}
    assert list(rows)[:6] == ["python", "agree", "torch", "lmplz", "build_binary", "kenlm-build"]
    # PATH is empty here: no cmake, and the build check says so
    assert rows["kenlm-build"].split()[1] == "missing" and "cmake not found" in rows["kenlm-build"]
    assert agreement.__version__ in rows["agree"]
    assert rows["lmplz"].split()[1] == "missing" and "agree setup kenlm" in rows["lmplz"]
    assert {"kenlm", "transformers", "llama_cpp", "scipy", "statsmodels"} <= set(rows)
    # nothing else installed here owns files of agreement/, formats/, lm/, treebanks/, nonce/
    assert rows["import-names"].split()[1] == "ok", rows["import-names"]
    if ours() is not None:   # the extras come from this tree's installed metadata
        assert {"extra:hf", "extra:gguf", "extra:analysis", "extra:test"} <= set(rows)


def tiny_wheel(directory: Path, name: str, files: dict[str, str]) -> Path:
    """A real wheel of distribution ``name`` 1.0 shipping ``files`` (METADATA, WHEEL, RECORD)."""
    stem = re.sub(r"[-_.]+", "_", name)
    info = f"{stem}-1.0.dist-info"
    contents = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
                f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: agree-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    record = []
    for path, text in contents.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    contents[f"{info}/RECORD"] = "\n".join(record + [f"{info}/RECORD,,"]) + "\n"
    wheel = directory / f"{stem}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as z:
        for path, text in contents.items():
            z.writestr(path, text)
    return wheel


def test_doctor_names_another_distribution_owning_files_of_our_import_packages(monkeypatch, tmp_path):
    """A second distribution with files in agreement/ (as the inter-rater `agreement`
    library has), installed by pip into a site directory on sys.path: one line says so.
    No __init__.py in the wheel: a namespace portion, so our agreement/ still imports."""
    wheel = tiny_wheel(tmp_path, "inter-rater-agreement", {"agreement/kappa.py": "KAPPA = 1\n",
                                                           "kenlm/NOTES.txt": "a second kenlm\n"})
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
                    "--no-index", "--target", str(site), str(wheel)], check=True, capture_output=True, timeout=300)
    assert (site / "agreement" / "kappa.py").is_file() and (site / "inter_rater_agreement-1.0.dist-info" / "RECORD").is_file()
    monkeypatch.syspath_prepend(str(site))
    result = run_agree("doctor")
    assert result.exit_code == 0
    lines = [line for line in result.output.splitlines() if "also installed by" in line]
    assert len(lines) == 1 and lines[0].split()[:2] == ["import-names", "missing"]
    assert "agreement/ is also installed by inter-rater-agreement 1.0" in lines[0]
    assert "formats/ is" not in lines[0] and "lm/ is" not in lines[0]
    kenlm_dist = next((d for d in ("ufal.kenlm", "kenlm") if distribution_installed(d)), None)
    if kenlm_dist:
        assert f"the kenlm module is installed by inter-rater-agreement 1.0 and {kenlm_dist}" in lines[0]


def distribution_installed(name: str) -> bool:
    try:
        return bool(metadata.version(name))
    except metadata.PackageNotFoundError:
        return False


def test_only_build_metadata_in_the_source_tree_is_not_an_installation(monkeypatch, tmp_path):
    """An egg-info that setuptools left beside setup.cfg is not another distribution; a
    distribution installed beside our packages (site-packages, no setup.cfg) is one."""
    egg = tmp_path / "old_name.egg-info"
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: old-name\nVersion: 0.1\n", encoding="utf-8")
    (egg / "SOURCES.txt").write_text("agreement/__init__.py\n", encoding="utf-8")
    monkeypatch.setattr(distribution, "_TREE", tmp_path)
    assert not distribution.source_tree_record(metadata.PathDistribution(egg))   # no setup.cfg: site-packages
    (tmp_path / "setup.cfg").write_text("[metadata]\nversion = 0.1\n", encoding="utf-8")
    assert distribution.source_tree_record(metadata.PathDistribution(egg))


def test_doctor_names_each_missing_extra_and_the_command_that_installs_it(monkeypatch, tmp_path):
    info = tmp_path / "agree_bench-9.9.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: agree-bench\nVersion: 9.9\nProvides-Extra: plots\nProvides-Extra: far\n"
        "Requires-Dist: click>=8.1\nRequires-Dist: matplotlib>=3.8; extra == \"plots\"\n"
        "Requires-Dist: no-such-dist-h28>=1; extra == 'far'\nRequires-Dist: click; extra == \"far\"\n", encoding="utf-8")
    monkeypatch.setattr(doctor_module, "ours", lambda: metadata.PathDistribution(info))
    result = run_agree("doctor")
    rows = {line.split()[0]: line for line in result.output.splitlines()}
    assert rows["extra:plots"].split()[1] == "ok" and "installed (matplotlib)" in rows["extra:plots"]
    far = rows["extra:far"]
    assert far.split()[1] == "missing"
    assert "missing no-such-dist-h28; install: pip install 'agree-bench[far]'" in far and "click" not in far
    assert not [name for name in rows if name.startswith("extra:") and name not in ("extra:plots", "extra:far")]


def test_doctor_json_reports_torch_and_its_device():
    torch = pytest.importorskip("torch")
    result = run_agree("doctor", "--json")
    assert result.exit_code == 0
    checks = {c["name"]: c for c in json.loads(result.output)}
    assert set(checks["torch"]) == {"name", "ok", "detail", "needed_for"}
    assert checks["torch"]["ok"] and checks["torch"]["detail"].startswith(torch.__version__)
    assert ("cuda" if torch.cuda.is_available() else "device cpu") in checks["torch"]["detail"]
    assert checks["python"]["detail"].startswith(f"{sys.version_info[0]}.{sys.version_info[1]}.")


def test_every_new_command_has_an_example():
    for args in (["setup"], ["setup", "kenlm"], ["doctor"]):
        result = run_agree(*args, "--help")
        assert result.exit_code == 0 and "Example:" in result.output, args


def make_dry_run(venv: Path, target: str) -> str:
    make = shutil.which("make")
    if not make:
        pytest.skip("make is not installed")
    return subprocess.run([make, "-n", "-C", str(ROOT), f"VENV={venv}", target], capture_output=True,
                          text=True, check=True, timeout=60).stdout


def test_make_demo_sets_up_the_core_only_and_make_test_then_only_adds(tmp_path):
    """`make demo` runs setup.sh's demo level (no test extra, so no llama.cpp build);
    `make test` on a fresh machine runs both levels; after `make demo` only the test level."""
    venv = tmp_path / "venv"
    demo = make_dry_run(venv, "demo")
    assert f"setup.sh {venv} demo" in demo and f"setup.sh {venv} test" not in demo
    assert f"{venv}/bin/agree demo" in demo
    fresh = make_dry_run(venv, "test")
    assert fresh.index(f"setup.sh {venv} demo") < fresh.index(f"setup.sh {venv} test") < fresh.index("-m pytest")
    venv.mkdir()
    (venv / ".agree-demo-installed").touch()   # what `make demo` leaves, newer than setup.cfg
    after_demo = make_dry_run(venv, "test")
    assert f"setup.sh {venv} test" in after_demo and f"setup.sh {venv} demo" not in after_demo
    # and the test extra (llama-cpp-python...) is installed by the test level alone
    script = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert script.count("'.[test]'") == 1
    assert script.index('if [ "$LEVEL" = test ]; then') < script.index("'.[test]'")
