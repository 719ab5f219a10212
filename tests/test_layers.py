"""The layers hold (docs/architecture.md): a package imports only packages below it,
treebanks <- formats <- lm <- nonce <- agreement, read from every module's imports."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("treebanks", "formats", "lm", "nonce", "agreement")


def _imports(path: Path) -> set[str]:
    """The top-level packages of ours a module imports (at any depth of its code)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module.split(".")[0])
    return found & set(ORDER)


@pytest.mark.parametrize("package", ORDER)
def test_a_package_imports_nothing_above_it(package):
    """No module of a package imports a package above it in the layer order."""
    above = set(ORDER[ORDER.index(package) + 1:])
    wrong = {str(p.relative_to(ROOT)): sorted(_imports(p) & above)
             for p in sorted((ROOT / package).rglob("*.py")) if _imports(p) & above}
    assert wrong == {}


def test_the_layer_check_sees_an_upward_import(tmp_path):
    """The check itself: an upward import, even inside a function, is found."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from agreement.cli import main\n    import lm.base\n")
    assert _imports(module) == {"agreement", "lm"}
