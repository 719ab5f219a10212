"""What ``agree nonce`` and ``agree swap-targets`` write, as library verbs (the CLI
commands and the demo call them).

Both read an ``agree extract`` directory and write items.tsv, copies of its
paradigms.tsv and constructions.tsv, and manifest.json, into the run's ``out``
(:class:`formats.run.RunContext`: relative paths are read and written inside its
``root``, and the manifest records them as given).
"""
from __future__ import annotations

import os
import random
import shutil
from pathlib import Path

from formats.testsets.colorlessgreen import write_colorlessgreen
from formats.items import write_items
from formats.run import RunContext
from formats.vocab import vocab_path
from formats.extract_output import EXTRACT_FILES, ExtractDir, read_extract_dir
from nonce.budget import check_nonce_size
from nonce.frames import Frames, frames_for_files
from nonce.generate import NonceConfig, make_nonce, treebank_vocab
from nonce.result import NonceResult
from nonce.pool import CandidatePool
from nonce.target_swaps import SwapResult, make_swaps
from nonce.vowels import vowel_rule_on

FORMATS = ("tsv", "colorlessgreen")
_COPIED = ("paradigms.tsv", "constructions.tsv", "relations.tsv")   # travel with the items, for the next step


def nonce_to_dir(run: RunContext, extract_dir: str | os.PathLike, *, n: int = 9, seed: int = 1111,
                 vocab: str | os.PathLike | None = None, ambiguity: float = 0.1, vowel_rule: str = "auto",
                 sampling: str = "uniform", fmt: str = "tsv") -> NonceResult:
    """Nonce variants of ``extract_dir``'s items into ``run.out`` (atomically, under the
    --out policy)."""
    with run.output_dir([extract_dir, vocab]) as tmp:
        src = read_extract_dir(run.path(extract_dir))
        check_nonce_size(sum(it.variant == 0 for it in src.items), n, src.path / "items.tsv", tmp)
        words = treebank_vocab(run.path(vocab), src.table) if vocab else None
        config = NonceConfig(n=n, ambiguity=ambiguity, vocab=words, lang=src.lang, vowel_rule=vowel_rule,
                             sampling=sampling, features=src.features, alternative_mode=src.alternative_mode,
                             values=src.values)
        result = make_nonce(src.items, src.table, config, random.Random(seed), frames=_frames(run, src))
        write_items(tmp / "items.tsv", result.items)
        _copy_beside(src, tmp)
        if fmt == "colorlessgreen":  # freq column: treebank counts, as agree extract writes it
            write_colorlessgreen(result.items, tmp, features=src.features, frequencies=src.table.form_counts())
        params = {"n": n, "seed": seed, "ambiguity": ambiguity, "sampling": sampling,
                  "vowel_rule": vowel_rule, "vowel_rule_applied": vowel_rule_on(src.lang, vowel_rule),
                  "vocab": _str(vocab), "format": fmt, "lang": src.lang, "features": list(src.features),
                  "alternative": src.alternative_mode, "extract": src.manifest.get("parameters", {})}
        run.write_manifest(tmp, _inputs(run, extract_dir, vocab), params, counts=result.counts())
    return result


def swap_targets_to_dir(run: RunContext, extract_dir: str | os.PathLike, *, k: int = 20,
                        seed: int = 1111, vocab: str | os.PathLike | None = None) -> SwapResult:
    """Systematicity items (:func:`nonce.target_swaps.make_swaps`) of ``extract_dir``
    into ``run.out``: every original, then up to ``k`` copies with another target lemma."""
    src = read_extract_dir(run.path(extract_dir))
    words = treebank_vocab(run.path(vocab), src.table) if vocab else None
    config = NonceConfig(vocab=words, lang=src.lang, features=src.features, alternative_mode=src.alternative_mode)
    result = make_swaps(src.items, CandidatePool(src.table, config.pool_options()), k, random.Random(seed))
    with run.output_dir([extract_dir, vocab]) as tmp:
        write_items(tmp / "items.tsv", result.items)
        _copy_beside(src, tmp)
        run.write_manifest(tmp, _inputs(run, extract_dir, vocab),
                           {"k": k, "seed": seed, "vocab": _str(vocab), "lang": src.lang,
                            "features": list(src.features), "alternative": src.alternative_mode},
                           counts=result.counts())
    return result


def _frames(run: RunContext, src: ExtractDir) -> Frames | None:
    """The sentence contexts of a relation extract's items (:mod:`nonce.frames`), read
    from the treebank files its manifest names, as ``agree extract-all`` reads them:
    so the two commands make the same variants. None for a construction extract, or
    where a file is no longer there (the variants then fit only the words' features)."""
    if not any(it.relation for it in src.items):
        return None
    params = src.manifest.get("parameters") or {}
    extra = tuple(str(p) for p in params.get("paradigms") or ())
    files = [Path(run.path(i["path"])) for i in src.manifest.get("inputs") or ()
             if isinstance(i, dict) and ".conllu" in str(i.get("path")) and not str(i["path"]).startswith(extra)]
    if not files or not all(f.is_file() for f in files):
        return None
    return frames_for_files(files, src.items, _stem, lang=src.lang)


def _stem(path) -> str:
    """``.../it_isdt-ud-dev.conllu.gz`` -> ``it_isdt-ud-dev``: how item ids name a file."""
    name = Path(path).name
    for suffix in (".gz", ".bz2", ".conllu"):
        name = name.removesuffix(suffix)
    return name


def _copy_beside(src: ExtractDir, tmp: Path) -> None:
    for name in _COPIED:
        if (src.path / name).is_file():
            shutil.copyfile(src.path / name, tmp / name)


def _inputs(run: RunContext, extract_dir, vocab) -> list[Path]:
    """The files read, named as given: the extract directory's three and vocab.txt."""
    inputs = [Path(extract_dir) / f for f in EXTRACT_FILES]
    if vocab:
        where = Path(run.path(vocab))
        found = vocab_path(where)
        inputs.append(Path(vocab) / found.name if found != where else Path(vocab))
    return inputs


def _str(path) -> str | None:
    return None if path is None else str(path)
