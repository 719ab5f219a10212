"""How far the run context is still threaded by hand: library function signatures
(everything but ``agreement/cli.py`` and ``agreement/commands/``) with a parameter
named quiet, root, force or argv, and the calls of ``rooted(...)`` (issue 26).

Usage: python scripts/run_context_counts.py [TREE] [-v]   (-v lists the functions)
"""
from __future__ import annotations

import ast
import collections
import sys
from pathlib import Path

NAMES = ("quiet", "root", "force", "argv")
PACKAGES = ("treebanks", "formats", "lm", "nonce", "agreement")


def is_library(rel: str) -> bool:
    return rel != "agreement/cli.py" and not rel.startswith("agreement/commands/")


def count(tree: Path) -> tuple[dict[str, list[str]], collections.Counter]:
    signatures: dict[str, list[str]] = {n: [] for n in NAMES}
    rooted: collections.Counter = collections.Counter()
    for path in sorted(p for pkg in PACKAGES for p in (tree / pkg).rglob("*.py")):
        rel = path.relative_to(tree).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and is_library(rel):
                a = node.args
                params = {x.arg for x in a.posonlyargs + a.args + a.kwonlyargs}
                for name in NAMES:
                    if name in params:
                        signatures[name].append(f"{rel}:{node.name}")
            elif isinstance(node, ast.Call):
                f = node.func
                if (f.id if isinstance(f, ast.Name) else getattr(f, "attr", None)) == "rooted":
                    rooted[rel] += 1
    return signatures, rooted


def main(argv: list[str]) -> None:
    verbose = "-v" in argv
    tree = Path(next((a for a in argv if a != "-v"), "."))
    signatures, rooted = count(tree)
    for name in NAMES:
        print(f"{name}: {len(signatures[name])} library signatures")
        if verbose:
            print("".join(f"    {s}\n" for s in signatures[name]), end="")
    print(f"rooted(...): {sum(rooted.values())} calls in {len(rooted)} files")


if __name__ == "__main__":
    main(sys.argv[1:])
