"""Shared test helpers: the real data beside the checkout, skipped when absent."""
from __future__ import annotations

import contextlib
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from agreement.cli import cli, spell_fields
from formats.run import configure_logging

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data; skips the calling test when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path} is absent")
    return path


def run_agree(*args, **kwargs) -> Result:
    """``agree ARGS`` run in this process with click's CliRunner (stdout and stderr
    apart); arguments may be paths or numbers. ``kwargs`` go to ``CliRunner.invoke``."""
    return CliRunner().invoke(cli, [str(a) for a in args], **kwargs)


def tiny_corpus(root, lines, lang: str = "en"):
    """A corpus directory of ``lines`` (the same in every split), as ``agree corpus`` writes one."""
    root.mkdir(parents=True)
    for split in ("train", "valid", "test"):
        (root / f"{split}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    counts = Counter(w for s in lines for w in s.split())
    words = sorted(counts, key=lambda w: (-counts[w], w))
    (root / "vocab.txt").write_text("\n".join(["<eos>", "<unk>", *words]) + "\n", encoding="utf-8")
    (root / "counts.tsv").write_text("word\tcount\n" + "".join(f"{w}\t{counts[w]}\n" for w in words))
    (root / "manifest.json").write_text(f'{{"command": "corpus", "parameters": {{"lang": "{lang}"}}}}\n')
    return root


def as_cli(error, command: str) -> str:
    """A library error's message as ``agree COMMAND`` shows it: the library names fields
    (``{min_count}``), the CLI edge spells them as that command's options."""
    return spell_fields(error, cli.get_command(None, command))


@contextlib.contextmanager
def raises_as_cli(error, command: str, match: str):
    """``pytest.raises(error, match=match)``, matching the message as ``agree COMMAND``
    shows it (:func:`as_cli`); the library's own message names no flag."""
    with pytest.raises(error) as info:
        yield info
    shown = as_cli(info.value, command)
    assert re.search(match, shown), shown
    assert not re.search(r"(?<![\w-])--[a-z]", str(info.value)), str(info.value)


@pytest.fixture
def shared():
    """``shared('ud', 'en_ewt')`` -> Path, or skip with a reason."""
    return shared_path


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory):
    """``agree extract`` caches parsed treebanks under $XDG_CACHE_HOME: keep tests (module-
    and session-scoped fixtures included) out of ~/.cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(autouse=True)
def _logging():
    """Each test starts with agree's logging as a command without --quiet sets it up
    (info lines and progress bars on stderr), whatever the test before it ran."""
    configure_logging()


@pytest.fixture(scope="session")
def ray_cluster():
    """A local Ray cluster of 2 CPUs, started once for the whole session (a few seconds)
    and stopped at its end; skips when Ray is not installed. The ray executor finds it
    initialised in this process and uses it."""
    ray = pytest.importorskip("ray", reason="Ray (agree-bench[cluster]) is not installed")
    import logging

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level=logging.ERROR)
    yield ray
    ray.shutdown()
