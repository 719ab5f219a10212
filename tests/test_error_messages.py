"""Library messages name fields, never command-line flags: a message that names a
setting is a template whose ``{field}`` the CLI edge spells as the running command's
option (:mod:`treebanks.errors`). This scans every ``raise`` of the library (all but
the CLI edge: ``agreement/cli.py``, ``agreement/commands/``, ``agreement/options.py``)
for a flag spelled in a string literal."""
from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARY = ("treebanks", "formats", "lm", "nonce", "agreement")
EDGE = ("agreement/cli.py", "agreement/commands/", "agreement/options.py")
FLAG = re.compile(r"(?<![\w-])--[a-z]")
#: (file, text in the literal) -> why that text is not one of our flags
ALLOWED = {
    ("lm/gguf/packaged.py", "pip install --force-reinstall"): "pip's own option, in the command to run",
    ("lm/kenlm/build.py", "cmake --build"): "cmake's own option, in the command we ran",
}


def _literals(node: ast.AST):
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.value


def flag_messages() -> list[str]:
    """``file:line: literal`` for every string literal of a raise that spells a flag."""
    found = []
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(EDGE):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(node, ast.Raise) or node.exc is None:
                    continue
                for text in _literals(node.exc):
                    if FLAG.search(text) and not any(rel == f and allowed in text for f, allowed in ALLOWED):
                        found.append(f"{rel}:{node.lineno}: {text!r}")
    return found


def test_no_library_message_names_a_flag():
    assert flag_messages() == []


def test_the_scan_finds_a_flag():
    tree = ast.parse('raise AgreeError(f"--min-count must be at least 1 (got {n})")')
    assert any(FLAG.search(t) for node in ast.walk(tree) if isinstance(node, ast.Raise)
               for t in _literals(node.exc))


def test_one_root_with_file_and_line(tmp_path):
    from agreement.errors import AgreeError, DomainError, FieldError, LMError, NonceError, TreebankError
    from formats.vocab import read_vocab

    assert all(issubclass(e, DomainError) for e in (AgreeError, FieldError, LMError, NonceError, TreebankError))
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("<eos>\n<unk>\nthe\ndog\nthe\n", encoding="utf-8")
    try:
        read_vocab(vocab)
    except AgreeError as e:
        assert (e.file, e.line) == (str(vocab), 5) and str(e) == f"{vocab}:5: 'the' occurs twice"
    else:
        raise AssertionError("a word twice in vocab.txt was read")
    assert (LMError("no such model directory").file, LMError("x").line) == (None, None)
    assert (TreebankError("no file", file="a.conllu").file, TreebankError("x", line=3).line) == ("a.conllu", 3)
    field = FieldError("{vocab_size} must be at least 1")
    assert str(field) == "vocab_size must be at least 1" and field.fields == ("vocab_size",)
    assert field.spelled(lambda name: "--" + name.replace("_", "-")) == "--vocab-size must be at least 1"
