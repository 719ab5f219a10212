"""Shards and the work directory (OUT.partial), in this process: a run cut short keeps
its finished shards, the same command scores only the rest and writes what an
uninterrupted run writes; a changed model or test set discards them, saying why."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agreement.scoring.executors import InProcessExecutor, make_executor
from agreement.score_dir import Execution, ModelLoading, Reporting, score_to_dir
from agreement.scoring.shard_store import SHARD_SIZE, WORK_MARKER
from conftest import run_agree
from formats.items import write_items
from lm.errors import FieldError
from test_score_cli import ITEMS, PLUR, SING, item, unigram
from formats.run import RunContext

#: 9 items in shards of 2: five shards, the last one short
MANY = ITEMS + [item(f"x{i}", 0, "the dog", "runs", "run") for i in range(4)]
OPTS = {"execution": Execution(shard_size=2), "reporting": Reporting(surprisal=True)}


class Cut(InProcessExecutor):
    """The in-process executor, interrupted (as by Ctrl-C or a killed process) after
    ``after`` shards have been written."""

    def __init__(self, after: int):
        super().__init__()
        self.after = after

    def score(self, job, tasks, on_done):
        def counting(task, result):
            on_done(task, result)
            self.after -= 1
            if self.after == 0:
                raise KeyboardInterrupt

        super().score(job, tasks, counting)


@pytest.fixture
def testset(tmp_path):
    (tmp_path / "ext").mkdir()
    write_items(tmp_path / "ext" / "items.tsv", MANY)
    return str(tmp_path / "ext")


def outputs(out: Path) -> dict[str, bytes]:
    """Every file of a score output but the manifest (it records argv and --out)."""
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.name != "manifest.json"}


def scored(out, testset, models, **options):
    """``agree score``'s verb: ``models`` on ``testset`` into ``out``, with OPTS (``options`` added)."""
    return score_to_dir(RunContext("score", out=out), [testset], models, **OPTS, **options)


def cut_short(out, testset, models, after: int) -> None:
    """:func:`scored`, interrupted (KeyboardInterrupt) after ``after`` shards."""
    with pytest.raises(KeyboardInterrupt):
        scored(out, testset, models, executor=Cut(after=after))


def test_shards_are_the_chunks_a_one_process_run_always_scored():
    from agreement.scoring.score import CHUNK_SIZE
    assert SHARD_SIZE == CHUNK_SIZE == 1024


def test_output_is_the_same_whatever_the_shard_size(tmp_path, testset, capsys):
    m = unigram(tmp_path / "u", SING)
    score_to_dir(RunContext("score", out=tmp_path / "a"), [testset], [str(m)], reporting=Reporting(surprisal=True))
    scored(tmp_path / "b", testset, [str(m)])
    assert "shards" not in capsys.readouterr().err             # a fresh run: nothing kept to speak of
    assert outputs(tmp_path / "a") == outputs(tmp_path / "b")
    execution = json.loads((tmp_path / "b" / "manifest.json").read_text())["execution"]
    assert execution == {"executor": "in-process", "workers": 1, "threads_per_worker": None,
                         "shards": 5, "shard_size": 2}
    assert not (tmp_path / "b.partial").exists()            # removed once OUT is written


def test_an_interrupted_run_resumes_with_only_the_missing_shards(tmp_path, testset, capsys):
    m1, m2 = unigram(tmp_path / "u1", SING), unigram(tmp_path / "u2", PLUR)
    models = [str(m1), str(m2)]
    scored(tmp_path / "whole", testset, models)
    cut_short(tmp_path / "o", testset, models, after=7)
    assert not (tmp_path / "o").exists()
    work = tmp_path / "o.partial"
    assert (work / WORK_MARKER).is_file()
    assert len(list(work.glob("*/[!v]*.npz"))) == 7       # model 1's five shards, two of model 2
    assert f"kept 7 finished shard(s) in {work}" in capsys.readouterr().err
    scored(tmp_path / "o", testset, models)
    err = capsys.readouterr().err
    assert "u1/model: 5 of 5 shards finished earlier (kept), 0 to score" in err
    assert "u2/model: 2 of 5 shards finished earlier (kept), 3 to score" in err
    assert outputs(tmp_path / "o") == outputs(tmp_path / "whole")
    assert not work.exists()


def resumed_as_fresh(tmp_path, testset, m, capsys) -> str:
    """The interrupted run in ``o`` run again: the same files as a fresh run; what it said."""
    capsys.readouterr()
    scored(tmp_path / "o", testset, [str(m)])
    err = capsys.readouterr().err
    scored(tmp_path / "fresh", testset, [str(m)])
    assert outputs(tmp_path / "o") == outputs(tmp_path / "fresh")
    return err


def test_a_changed_model_file_discards_its_shards(tmp_path, testset, capsys):
    m = unigram(tmp_path / "u", SING)
    cut_short(tmp_path / "o", testset, [str(m)], after=3)
    shutil.rmtree(m)
    unigram(tmp_path / "v", PLUR)
    shutil.copytree(tmp_path / "v" / "model", m)           # same path, other counts
    err = resumed_as_fresh(tmp_path, testset, m, capsys)
    assert (f"{tmp_path / 'o.partial'}: discarded 3 finished shard(s) of model: the model changed "
            "since they were scored (") in err
    assert "counts.tsv" in err and "sha256 differs" in err
    assert "model: 0 of 5 shards finished earlier (kept), 5 to score" in err


def test_a_changed_test_set_discards_the_shards_it_changed(tmp_path, testset, capsys):
    m = unigram(tmp_path / "u", SING)
    cut_short(tmp_path / "o", testset, [str(m)], after=3)
    changed = MANY[:2] + [item("b", 0, "the dogs", "sleep", "sleeps")] + MANY[3:]   # shard 2 differs
    write_items(Path(testset) / "items.tsv", changed)
    err = resumed_as_fresh(tmp_path, testset, m, capsys)
    assert (f"{tmp_path / 'o.partial'}: discarded 1 finished shard(s) of model: the test set changed "
            f"since they were scored ({Path(testset) / 'items.tsv'}: sha256 differs)") in err
    assert "model: 2 of 5 shards finished earlier (kept), 3 to score" in err


def test_other_options_that_change_scores_discard_too(tmp_path, testset, capsys):
    m = unigram(tmp_path / "u", SING)
    cut_short(tmp_path / "o", testset, [str(m)], after=2)
    capsys.readouterr()
    scored(tmp_path / "o", testset, [str(m)], loading=ModelLoading(batch_size=7))
    assert "options that change scores differ (batch_size None -> 7)" in capsys.readouterr().err


def test_a_work_directory_not_ours_is_never_touched(tmp_path, testset):
    m = unigram(tmp_path / "u", SING)
    (tmp_path / "o.partial").mkdir()
    (tmp_path / "o.partial" / "notes.txt").write_text("mine")
    r = run_agree("score", testset, "--model", m, "--out", tmp_path / "o", "-q")
    assert (r.exit_code, r.stderr) == (1, f"Error: {tmp_path / 'o.partial'} exists and was not made by "
                                          "`agree score`; move it away or choose another output directory\n")
    assert (tmp_path / "o.partial" / "notes.txt").read_text() == "mine"
    assert not (tmp_path / "o").exists()


def test_a_failed_run_with_no_finished_shard_leaves_no_work_directory(tmp_path, testset):
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "config.json").write_text('{"model_type": "gpt2"}')
    (tmp_path / "m" / "tokenizer.json").write_text("{}")
    (tmp_path / "m" / "model.safetensors").write_bytes(b"not safetensors")
    r = run_agree("score", testset, "--model", tmp_path / "m", "--out", tmp_path / "o", "-q")
    assert r.exit_code == 1 and r.stderr.startswith(f"Error: {tmp_path / 'm'}: cannot load the Hugging Face")
    assert len(r.stderr.splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ext", "m"]


def test_workers_and_address_need_the_ray_executor():
    with pytest.raises(FieldError, match="workers must be at least 1"):
        make_executor("ray", workers=0)
    with pytest.raises(FieldError, match=r"workers and ray_address need executor ray"):
        make_executor("in-process", workers=2)


def test_carry_state_runs_in_one_stream_without_shards(tmp_path, testset):
    m = unigram(tmp_path / "u", SING)
    run = score_to_dir(RunContext("score", out=tmp_path / "o"), [testset], [str(m)], loading=ModelLoading(carry_state=True))
    assert run.rows == len(MANY)
    assert json.loads((tmp_path / "o" / "manifest.json").read_text())["execution"]["shards"] == 0
