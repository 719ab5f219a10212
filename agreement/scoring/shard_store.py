"""Shards of a score run and the work directory that keeps finished ones (``OUT.partial``).

A model's items are cut into *shards*: the runs of :data:`SHARD_SIZE` items (in the
test sets' order) that a one-process run has always handed its scorer as one chunk;
each scorer sorts a shard by length into dense batches. Every executor hands the
scorer exactly these shards, so a run on Ray gives the same floats as one in this
process (torch's sums depend on the batch a sentence is read in).

A shard is named by a checksum of its input items and of the model (:class:`ModelJob`:
the sha256 of the model's files and the options that change scores). Each finished
shard is written to ``OUT.partial/`` atomically as it completes; rerunning the same
command keeps the shards whose checksums still match and scores only the others.
Shards of a changed model or test set match nothing and are discarded with a line
saying why (``run.json`` in the work directory records what the last run read). The
work directory is removed once ``OUT`` is written; it follows ``agree train-lm``'s
``OUT.partial`` (created under OUT's lock, marked as ours, never deleted when not).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from agreement.errors import AgreeError
from agreement.scoring.score import CHUNK_SIZE
from formats.items import Item
from formats.manifest import AGREE_VERSION, describe_inputs
from lm.training.train import partial_dir

#: items per shard: the chunk a one-process run has always scored at once
SHARD_SIZE = CHUNK_SIZE
#: written into OUT.partial when agree score creates it
WORK_MARKER = ".agree-score-partial"
RUN_RECORD = "run.json"


@dataclass(frozen=True)
class ModelJob:
    """One model as executors load it: ``spec`` (:class:`agreement.scoring.score.ModelSpec`),
    ``options`` (:class:`lm.backends.ModelLoading`: its threads and engine resolved),
    ``threads`` (CPU threads a worker gives it; None: the library's defaults) and ``key``
    (checksum of the model's files and of the options that change scores)."""
    spec: object
    options: object
    threads: int | None
    key: str
    files: dict = field(default_factory=dict, compare=False)


@dataclass(frozen=True)
class ShardTask:
    """One shard of one model: ``index`` (0-based, in order), ``start`` (its first
    item's position among the model's items), ``items``, ``method``, ``words`` (also
    return per-word log-probabilities, for tokens.tsv) and ``key`` (its checksum)."""
    index: int
    start: int
    items: tuple[Item, ...]
    method: str
    words: bool
    key: str


@dataclass
class ShardResult:
    """A scored shard: ``logp`` (n, 2) natural logs (correct, wrong); with ``words``:
    ``good``/``bad`` per-word natural logs of each item's two sentences and ``pieces``
    (per sentence read: its words, spacing and the pieces each word owns); ``counts``: what the scorer counted
    while scoring it (e.g. llama.cpp's skipped_over_context), summed over shards."""
    logp: np.ndarray
    good: list | None = None
    bad: list | None = None
    pieces: list | None = None
    notes: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)


@dataclass
class VocabResult:
    """What a model says of all items before scoring: ``oov`` and ``pieces_differ``
    flags per item, the scorer's ``kind`` and its ``conventions`` (before any count)."""
    oov: list
    pieces_differ: list
    kind: str
    conventions: dict


def items_digest(items: Iterable[Item]) -> str:
    """sha256 of the items as a scorer reads them (every field, ``extra`` included)."""
    h = hashlib.sha256()
    names = None
    for it in items:
        names = names or [f.name for f in fields(it) if f.name != "extra"]
        # the fields as they are (str, int, tuples of them): what asdict gives, without its deep copy
        h.update(json.dumps([{k: getattr(it, k) for k in names}, it.extra], sort_keys=True, default=repr,
                            ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def model_files(directory: str | os.PathLike) -> dict[str, str]:
    """The model's files (a directory: each file inside it) -> sha256."""
    return {row["path"]: row["sha256"] for row in describe_inputs([directory])}


def model_job(spec, options, threads: int | None, scored_options: dict) -> ModelJob:
    """A :class:`ModelJob`; ``scored_options``: the options that change its scores
    (the resolved engine, batch size, device, dtype, threads), part of its key."""
    files = model_files(spec.directory)
    record = {"kind": spec.kind, "files": files, "options": scored_options, "agree": AGREE_VERSION}
    key = hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()
    return ModelJob(spec, options, threads, key, {"files": files, "options": scored_options})


def shard_tasks(job: ModelJob, items: Sequence[Item], method: str, words: bool,
                size: int = SHARD_SIZE) -> list[ShardTask]:
    """The model's items cut into shards of ``size``, each with its key."""
    tasks = []
    for index, start in enumerate(range(0, len(items), size)):
        chunk = tuple(items[start:start + size])
        # items scored by their own method (agreement.scoring.score.item_method): a part of
        # their own, so that no shard scored before items had one is taken for theirs
        own = ["own-method"] if method == "target" and any(it.scoring == "sentence" for it in chunk) else []
        key = _digest(job.key, method, str(words), str(size), items_digest(chunk), *own)
        tasks.append(ShardTask(index, start, chunk, method, words, key))
    return tasks


def vocab_key(job: ModelJob, digest: str, method: str) -> str:
    return _digest(job.key, "vocab", method, digest)


def _digest(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


class ShardStore:
    """The work directory ``OUT.partial`` of one score run (create it with
    :meth:`open`): finished shards and vocabulary records, one ``.npz`` each, written
    atomically; ``run.json``, what the run read (to say why old shards no longer match).
    ``resumed``: the directory is an earlier run's (what it kept is worth saying)."""

    def __init__(self, directory: Path, record: dict, resumed: bool = False):
        self.directory = directory
        self.record = record
        self.resumed = resumed
        self.previous: dict = {}

    @classmethod
    def open(cls, out: str | os.PathLike, record: dict) -> "ShardStore":
        """The work directory beside ``out`` (made, or an earlier run's, kept)."""
        work = partial_dir(Path(out))
        if work.exists() and not (work / WORK_MARKER).is_file():
            raise AgreeError(f"{work} exists and was not made by `agree score`; move it away "
                             "or choose another output directory")
        made = not work.exists()
        store = cls(work, record, resumed=not made)
        try:
            work.mkdir(parents=True, exist_ok=True)
            (work / WORK_MARKER).write_text("agree score work directory\n", encoding="utf-8")
            store.previous = store._read_record()
            _write_atomic(work / RUN_RECORD, (json.dumps(record, indent=1, sort_keys=True) + "\n").encode())
        except OSError:
            if made:
                shutil.rmtree(work, ignore_errors=True)
            raise
        return store

    def _read_record(self) -> dict:
        try:
            record = json.loads((self.directory / RUN_RECORD).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return record if isinstance(record, dict) else {}

    # ---- files -------------------------------------------------------------------
    def _path(self, job: ModelJob, name: str) -> Path:
        return self.directory / job.key[:16] / f"{name}.npz"

    def has(self, job: ModelJob, key: str) -> bool:
        return self._path(job, key).is_file()

    def save_shard(self, job: ModelJob, task: ShardTask, result: ShardResult) -> None:
        arrays = {"logp": np.asarray(result.logp, dtype=np.float64).reshape(len(task.items), 2)}
        if task.words:
            for name in ("good", "bad"):
                seqs = getattr(result, name)
                arrays[name] = np.concatenate([np.asarray(s, np.float64) for s in seqs]) if seqs else np.zeros(0)
                arrays[name + "_len"] = np.array([len(s) for s in seqs], dtype=np.int64)
        meta = {"pieces": result.pieces, "counts": result.counts, "notes": result.notes, "items": len(task.items)}
        self._save(self._path(job, task.key), arrays, meta)

    def load_shard(self, job: ModelJob, task: ShardTask) -> ShardResult:
        arrays, meta = self._load(self._path(job, task.key))
        out = ShardResult(arrays["logp"], pieces=meta.get("pieces"), counts=meta.get("counts") or {},
                          notes=meta.get("notes") or {})
        if task.words:
            out.good, out.bad = (_split(arrays[n], arrays[n + "_len"]) for n in ("good", "bad"))
        return out

    def save_vocab(self, job: ModelJob, key: str, result: VocabResult) -> None:
        arrays = {"oov": np.array(result.oov, dtype=bool), "pieces_differ": np.array(result.pieces_differ, dtype=bool)}
        self._save(self._path(job, "vocab-" + key), arrays,
                   {"kind": result.kind, "conventions": result.conventions})

    def load_vocab(self, job: ModelJob, key: str) -> VocabResult | None:
        path = self._path(job, "vocab-" + key)
        if not path.is_file():
            return None
        arrays, meta = self._load(path)
        return VocabResult([bool(x) for x in arrays["oov"]], [bool(x) for x in arrays["pieces_differ"]],
                           meta["kind"], meta["conventions"])

    def _save(self, path: Path, arrays: dict, meta: dict) -> None:
        path.parent.mkdir(exist_ok=True)
        # key order kept: conventions go to the manifest and summary.md as the scorer gave them
        arrays = {**arrays, "meta": np.array(json.dumps(meta))}
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    @staticmethod
    def _load(path: Path) -> tuple[dict, dict]:
        try:
            with np.load(path, allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            return arrays, json.loads(str(arrays.pop("meta")))
        except (OSError, ValueError, KeyError) as e:
            raise AgreeError(f"{path}: unreadable finished shard ({e}); delete it to score it again") from None

    # ---- what is kept --------------------------------------------------------------
    def prune_others(self, jobs: Sequence[ModelJob]) -> list[str]:
        """Remove the shards of models not in this run (or changed: their key differs);
        returns one line per such model, saying why."""
        lines, current = [], {j.key[:16] for j in jobs}
        for p in self.directory.glob(f".{RUN_RECORD}.*"):      # a write cut short by a kill
            p.unlink(missing_ok=True)
        for sub in sorted(p for p in self.directory.iterdir() if p.is_dir() and p.name not in current):
            shards = sum(1 for p in sub.glob("*.npz") if not p.name.startswith("vocab-"))
            shutil.rmtree(sub)
            if shards:
                lines.append(f"{self.directory}: discarded {shards} finished shard(s) of "
                             f"{self._old_name(sub.name)}: {self._why_model(sub.name, jobs)}")
        return lines

    def prune_model(self, job: ModelJob, wanted: set[str]) -> str | None:
        """Remove the model's files other than ``wanted`` (names without .npz); a line
        saying why when finished shards were among them."""
        sub = self.directory / job.key[:16]
        for p in sub.glob(".*.npz.*"):                          # a write cut short by a kill
            p.unlink(missing_ok=True)
        stale = [p for p in sub.glob("*.npz") if p.name[:-4] not in wanted]
        for p in stale:
            p.unlink(missing_ok=True)
        shards = sum(1 for p in stale if not p.name.startswith("vocab-"))
        if not shards:
            return None
        return f"{self.directory}: discarded {shards} finished shard(s) of {job.spec.name}: {self._why_items()}"

    def _old_name(self, prefix: str) -> str:
        for name, m in (self.previous.get("models") or {}).items():
            if str(m.get("key", "")).startswith(prefix):
                return name
        return f"a model no longer in this run ({prefix})"

    def _why_model(self, prefix: str, jobs: Sequence[ModelJob]) -> str:
        """Why a previous model's shards match no model of this run."""
        old = next((m for m in (self.previous.get("models") or {}).values()
                    if str(m.get("key", "")).startswith(prefix)), None)
        if old is None:
            return "they were scored by a model no longer in this run"
        new = next((j for j in jobs if str(j.spec.directory) == old.get("directory")), None)
        if new is None:
            return f"{old.get('directory')} is no longer in this run"
        files, before = new.files["files"], old.get("files", {})
        changed = sorted(f for f in set(files) | set(before) if files.get(f) != before.get(f))
        if changed:
            return (f"the model changed since they were scored ({', '.join(changed[:3])}: "
                    f"sha256 differs{', ...' if len(changed) > 3 else ''})")
        opts, was = new.files["options"], old.get("options", {})
        diff = [f"{k} {was.get(k)!r} -> {opts.get(k)!r}" for k in sorted(set(opts) | set(was))
                if opts.get(k) != was.get(k)]
        if diff:
            return f"options that change scores differ ({', '.join(diff)})"
        return "they were scored by another version of agree"

    def _why_items(self) -> str:
        """Why a model's old shards match none of this run's items."""
        now, before = self.record.get("testsets", {}), self.previous.get("testsets", {})
        changed = sorted(f for f in set(now) | set(before) if now.get(f) != before.get(f))
        if changed:
            return (f"the test set changed since they were scored ({', '.join(changed[:3])}: "
                    f"sha256 differs{', ...' if len(changed) > 3 else ''})")
        return "the items differ (another method, require_in_vocab or other options of the test sets)"

    def shard_count(self) -> int:
        return sum(1 for p in self.directory.glob("*/*.npz") if not p.name.startswith("vocab-"))

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)


def testset_checksums(paths: Sequence[str | os.PathLike]) -> dict[str, str]:
    """Each test-set file -> sha256 (for run.json: which one changed)."""
    return {row["path"]: row["sha256"] for row in describe_inputs(paths)}


def _split(flat: np.ndarray, lengths: np.ndarray) -> list[np.ndarray]:
    ends = np.cumsum(lengths)
    return [flat[e - n:e] for n, e in zip(lengths, ends)]


def _write_atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
