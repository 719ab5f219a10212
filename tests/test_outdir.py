"""The --out policy and the faults of the environment, through the real CLI.

Replacing an own output, --force, --out ., leftovers of dead runs, Ctrl-C (exit
130), SIGKILL of score and train-lm then a rerun, a read-only directory (a child
process that drops to user nobody), a full disk (a small tmpfs; an injected
ENOSPC where mounting is not allowed), a diverging run, resuming with a lower
--lr, and a vocabulary that is not the model's.
"""
from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agreement.cli import describe_os_error
from conftest import run_agree
from formats.items import write_items
from test_extract import toy_treebank
from test_score_cli import ITEMS, SING, unigram
from test_train import make_corpus

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
TINY_LSTM = ["--arch", "lstm", "--size", "small", "--emb", "16", "--hidden", "16", "--batch-size", "4",
             "--bptt", "8", "--lr", "5", "--threads", "1", "--quiet"]


def agree(*args):
    return run_agree(*args)


def hidden(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir() if p.name.startswith("."))


def dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.fixture
def tb(tmp_path):
    return toy_treebank(tmp_path / "tb")


def test_own_output_is_replaced_anything_else_needs_force(tb, tmp_path):
    out = tmp_path / "out"
    assert agree("extract", tb, "--out", out, "-q").exit_code == 0
    (out / "stale.txt").write_text("from an earlier version\n")
    assert agree("extract", tb, "--out", out, "-q").exit_code == 0     # same command: replaced
    assert not (out / "stale.txt").exists() and (out / "items.tsv").is_file()
    r = agree("perturb", out, "--aspect", "swap", "--severity", "0.5", "--out", out, "-q")
    assert r.exit_code == 1 and "--out is the input" in r.output
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("x")
    r = agree("extract", tb, "--out", mine, "-q")
    assert r.output == (f"Error: {mine}: exists and is not an output of `agree extract` (holds thesis.tex); "
                        "use --force to replace it\n")
    assert (mine / "thesis.tex").read_text() == "x"
    assert agree("extract", tb, "--out", mine, "--force", "-q").exit_code == 0
    assert not (mine / "thesis.tex").exists() and (mine / "items.tsv").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    assert agree("extract", tb, "--out", empty, "-q").exit_code == 0    # an empty directory holds nothing
    assert hidden(tmp_path) == []


def test_out_dot_is_the_current_directory(tb, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    r = agree("extract", tb, "--out", ".", "-q")
    assert r.exit_code == 0, r.output
    assert (here / "items.tsv").is_file() and hidden(tmp_path) == []
    monkeypatch.chdir(here)          # the old directory was renamed away: enter the new one
    r = agree("extract", tb, "--out", ".", "--min-count", "1", "-q")   # an extract output: replaced
    assert r.exit_code == 0, r.output
    assert json.loads((here / "manifest.json").read_text())["parameters"]["min_count"] == 1
    assert hidden(tmp_path) == []


def test_leftovers_of_a_dead_run_are_removed_with_a_line(tb, tmp_path):
    pid = dead_pid()
    (tmp_path / f".out.tmp-{pid}-abcd").mkdir()
    (tmp_path / f".out.tmp-{pid}-abcd" / "items.tsv").write_text("half")
    (tmp_path / ".out.lock").write_text(json.dumps({"pid": pid, "host": os.uname().nodename,
                                                    "started": "earlier"}))
    (tmp_path / f".other.tmp-{pid}-x").mkdir()          # another --out's: not ours to remove
    r = agree("extract", tb, "--out", tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert f"removed the stale lock {tmp_path / '.out.lock'} (its run, pid {pid}, is gone)" in r.stderr
    assert f"removed {tmp_path / f'.out.tmp-{pid}-abcd'}, left by an interrupted run" in r.stderr
    assert hidden(tmp_path) == [f".other.tmp-{pid}-x"]


def test_os_error_names_the_path():
    e = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), "/data/out/model.pt")
    assert describe_os_error(e) == ("/data/out/model.pt: No space left on device (free some space, "
                                    "or choose another --out)")
    e = PermissionError(errno.EACCES, os.strerror(errno.EACCES), "/ro")
    assert describe_os_error(e) == "/ro: Permission denied"


# --------------------------------------------------------------------------- processes

@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """A test set of 30,000 items and a unigram model: score runs a few seconds, long
    enough for a signal to land inside the run on a loaded machine."""
    root = tmp_path_factory.mktemp("big")
    (root / "set").mkdir()
    write_items(root / "set" / "items.tsv",
                [it.replace(item_id=f"{it.item_id}-{i}") for i in range(6000) for it in ITEMS])
    return root / "set", unigram(root / "m", SING)


def start(args, cwd):
    # SIGINT at its default in the child: a shell that starts the test run in the
    # background (`make test &`, nohup) makes it ignored, and Python then keeps it so
    return subprocess.Popen([sys.executable, "-m", "agreement.cli", *map(str, args)], cwd=cwd, env=ENV,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def wait_for(proc, predicate, seconds=60):
    deadline = time.monotonic() + seconds
    while not predicate():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)


def interrupted(args, cwd, ready, sig, *, settle: float = 0.0, seconds: float = 60) -> tuple[int, str]:
    """``agree ARGS`` started in ``cwd`` and sent ``sig`` once ``ready()`` holds (and
    ``settle`` seconds more): its (exit code, stderr)."""
    proc = start(args, cwd)
    try:
        wait_for(proc, ready, seconds)
        if settle:
            time.sleep(settle)
        proc.send_signal(sig)
        _, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, stderr


def test_sigkill_score_then_rerun_leaves_nothing_hidden(big, tmp_path):
    testset, model = big
    runs = tmp_path / "runs"
    runs.mkdir()
    returncode, _ = interrupted(["score", testset, "--model", model, "--out", runs / "out", "-q"], tmp_path,
                                lambda: any(p.name.startswith(".out.tmp-") for p in runs.iterdir()), signal.SIGKILL)
    assert returncode == -signal.SIGKILL
    assert ".out.lock" in hidden(runs) and not (runs / "out").exists()
    proc = start(["score", testset, "--model", model, "--out", runs / "out"], tmp_path)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr
    assert "left by an interrupted run" in stderr and "removed the stale lock" in stderr
    assert hidden(runs) == [] and (runs / "out" / "items.tsv").is_file()


@pytest.mark.parametrize("sig, code, line", [(signal.SIGINT, 130, "Interrupted"), (signal.SIGTERM, 143, "Terminated")],
                         ids=["ctrl-c", "sigterm"])
def test_a_signal_mid_write_is_one_line_and_leaves_nothing_beside_out(big, tmp_path, sig, code, line):
    """Ctrl-C, and SIGTERM (timeout's, a scheduler's) handled as Ctrl-C: the temporary
    directory and the lock are removed, one line, exit code 130 or 143."""
    testset, model = big
    returncode, stderr = interrupted(["score", testset, "--model", model, "--out", tmp_path / "out", "-q"], tmp_path,
                                     lambda: any(p.name.startswith(".out.tmp-") for p in tmp_path.iterdir()), sig,
                                     settle=0.1)   # inside the run (it takes seconds), not at its edges
    assert returncode == code and stderr.strip() == line, stderr
    assert hidden(tmp_path) == [] and not (tmp_path / "out").exists()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return make_corpus(tmp_path_factory.mktemp("c") / "corpus")


def test_sigkill_train_lm_then_resume_leaves_nothing_hidden(corpus, tmp_path):
    out = tmp_path / "m"
    args = ["train-lm", corpus, *TINY_LSTM, "--epochs", "1000", "--checkpoint-minutes", "0.001"]
    interrupted([*args, "--out", out], tmp_path, lambda: (tmp_path / "m.partial" / "checkpoint.pt").is_file(),
                signal.SIGKILL)
    assert hidden(tmp_path) == [".m.lock"]
    r = agree(*args, "--out", out)           # the killed run's checkpoint is kept: say so
    assert r.exit_code == 1 and "holds an interrupted training run: continue it with --resume" in r.output
    proc = start([*args, "--max-steps", "400", "--resume", "--out", out], tmp_path)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert hidden(tmp_path) == [] and not (tmp_path / "m.partial").exists()
    assert (out / "model.pt").is_file()


def test_sigterm_in_train_lm_saves_a_checkpoint_and_exits_143(corpus, tmp_path):
    """SIGTERM in training: the batch is finished, a checkpoint saved, the lock released."""
    out = tmp_path / "m"
    returncode, stderr = interrupted(["train-lm", corpus, *TINY_LSTM, "--epochs", "1000", "--checkpoint-minutes",
                                      "0.001", "--out", out], tmp_path,
                                     lambda: (tmp_path / "m.partial" / "checkpoint.pt").is_file(), signal.SIGTERM)
    assert returncode == 143, stderr
    assert stderr.splitlines()[-1].startswith("Terminated: training interrupted at epoch ")
    assert "Continue with the same command and --resume" in stderr and "Traceback" not in stderr
    assert hidden(tmp_path) == [] and (tmp_path / "m.partial" / "checkpoint.pt").is_file()


def test_second_writer_stops_and_first_keeps_its_partial(corpus, tmp_path):
    out = tmp_path / "m"
    args = ["train-lm", corpus, *TINY_LSTM, "--epochs", "1000", "--checkpoint-minutes", "0.001"]
    proc = start([*args, "--out", out], tmp_path)
    try:
        wait_for(proc, lambda: (tmp_path / "m.partial" / "checkpoint.pt").is_file())
        r = agree(*args, "--out", out)
        assert r.exit_code == 1 and f"{out}: another agree run is writing it (pid {proc.pid}" in r.output
        assert (tmp_path / "m.partial" / "checkpoint.pt").is_file() and proc.poll() is None
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130


# --------------------------------------------------------------------------- the environment

def test_read_only_directory_as_user_nobody(tb, tmp_path):
    """Root ignores permission bits, so a child process drops to nobody (after loading
    every module it needs: nobody may not read this Python's installation)."""
    if os.geteuid() != 0:
        pytest.skip("needs root to switch to user nobody")
    shared = Path(os.path.realpath("/tmp")) / f"agree-ro-{os.getpid()}"
    shared.mkdir()
    try:
        (shared / "ro").mkdir()
        toy_treebank(shared / "tb")
        os.chmod(shared, 0o755)
        os.chmod(shared / "ro", 0o555)
        code = ("import difflib, os, sys, agreement.cli, agreement.commands.extract, agreement.extraction.extract\n"
                "os.setgroups([]); os.setgid(65534); os.setuid(65534)\n"
                f"sys.argv = ['agree', 'extract', {str(shared / 'tb')!r}, '--out', "
                f"{str(shared / 'ro' / 'out')!r}, '-q']\n"
                "agreement.cli.main()\n")
        r = subprocess.run([sys.executable, "-c", code], env=ENV, capture_output=True, text=True, timeout=60)
        assert (r.returncode, r.stdout + r.stderr) == (1, f"Error: {shared / 'ro'}: Permission denied\n")
        assert os.listdir(shared / "ro") == []
    finally:
        os.chmod(shared / "ro", 0o755)
        subprocess.run(["rm", "-rf", str(shared)], check=True)


@pytest.fixture
def full_disk(tmp_path):
    """A 4 KiB tmpfs (one page) (None where mounting is not allowed: the caller injects ENOSPC)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4k", "tmpfs", str(mount)], capture_output=True)
    if r.returncode != 0:
        yield None
        return
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def test_full_disk_extract(full_disk, tb, tmp_path, monkeypatch):
    big_tb = tmp_path / "tb-big.conllu"
    big_tb.write_text((tb.read_text().rstrip("\n") + "\n\n") * 4)     # items.tsv larger than the disk
    disk = full_disk
    if disk is None:                          # injected at the write, where mounting is refused
        disk = tmp_path / "fake"
        disk.mkdir()

        def no_space(path, items):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        monkeypatch.setattr("agreement.commands.extract.write_items", no_space)
    r = agree("extract", big_tb, "--out", disk / "out", "-q")
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"Error: {disk}/") and r.output.count("\n") == 1
    assert r.output.endswith("No space left on device (free some space, or choose another --out)\n")
    assert os.listdir(disk) == []


def test_full_disk_lstm_torch_save(full_disk, corpus, tmp_path):
    if full_disk is None:
        pytest.skip("mount -t tmpfs is not allowed here (extract's test injects ENOSPC instead)")
    r = agree("train-lm", corpus, *TINY_LSTM, "--max-steps", "3", "--out", full_disk / "m")
    assert r.exit_code == 1, r.output
    assert r.output.startswith(f"Error: {full_disk}/m") and r.output.count("\n") == 1
    assert "No space left on device" in r.output and os.listdir(full_disk) == []


@pytest.fixture
def full_to_the_brim(full_disk):
    """The 4 KiB tmpfs with its one page taken: not even the lock fits."""
    if full_disk is None:
        pytest.skip("mount -t tmpfs is not allowed here (extract's test injects ENOSPC instead)")
    (full_disk / "fill").write_bytes(b"x" * 4096)
    return full_disk


@pytest.mark.parametrize("command", ["extract", "nonce", "corpus", "train-lm", "score", "perturb", "export",
                                     "swap-targets", "demo", "import-model"])
def test_full_disk_leaves_no_lock_in_any_command(full_to_the_brim, command, tb, corpus, big, tmp_path):
    """The lock itself cannot be written: one line naming the directory, nothing left there."""
    from test_nonce_cli import make_extract_dir
    ext = make_extract_dir(tmp_path / "ext")
    testset, model = big
    args = {"extract": [tb], "nonce": [ext], "corpus": [tmp_path / "t.txt", "--lang", "en"],
            "train-lm": [corpus, "--arch", "unigram"], "score": [testset, "--model", model],
            "perturb": [ext, "--aspect", "swap", "--severity", "0.5"], "export": [ext, "--format", "blimp"],
            "swap-targets": [ext, "--k", "2"], "demo": ["--scale", "tiny"],
            "import-model": ["colorlessgreen", tmp_path / "t.txt", "--vocab", tmp_path / "t.txt"]}[command]
    (tmp_path / "t.txt").write_text("the dog runs .\n")
    r = agree(command, *args, "--out", full_to_the_brim / "out", "-q")
    assert r.exit_code == 1 and r.output == (f"Error: {full_to_the_brim}: No space left on device (free some "
                                             "space, or choose another --out)\n"), r.output
    assert os.listdir(full_to_the_brim) == ["fill"]


def test_full_disk_import_model(full_disk, tmp_path):
    """torch.save's own writer fails opaquely on a full disk (`enforce fail at
    inline_container.cc`); model.pt is written through agree's writer instead."""
    if full_disk is None:
        pytest.skip("mount -t tmpfs is not allowed here (extract's test injects ENOSPC instead)")
    from test_released import BUILD, MODEL_PY, VOCAB
    (tmp_path / "model.py").write_text(MODEL_PY)
    (tmp_path / "build.py").write_text(BUILD)
    (tmp_path / "vocab.txt").write_text("".join(w + "\n" for w in VOCAB))
    subprocess.run([sys.executable, str(tmp_path / "build.py"), str(tmp_path), str(tmp_path), str(tmp_path / "EVIL"),
                    str(len(VOCAB))], check=True, env={**os.environ, "PYTHONPATH": ""})
    r = agree("import-model", "colorlessgreen", tmp_path / "zip.pt", "--vocab", tmp_path / "vocab.txt",
              "--out", full_disk / "m", "-q")
    assert r.exit_code == 1 and r.output.count("\n") == 1, r.output
    assert r.output.startswith(f"Error: {full_disk}/") and "No space left on device" in r.output
    assert os.listdir(full_disk) == []


# --------------------------------------------------------------------------- training numerics

def test_nan_learning_rate_stops_with_a_clear_error(corpus, tmp_path):
    """--lr nan is a usage error at the CLI; through the library it diverges and stops."""
    from lm.errors import LMError
    from lm.training.train import train_lm
    r = agree("train-lm", corpus, *TINY_LSTM, "--lr", "nan", "--out", tmp_path / "m")
    assert r.exit_code == 2 and "Error: Invalid value for '--lr': 'nan' is not a finite number" in r.output
    with pytest.raises(LMError, match=r"^training diverged at step \d+ \((loss|weights) nan\); no checkpoint "
                                      r"was saved before it; start again with a lower lr$"):
        train_lm([corpus], tmp_path / "m", arch="lstm", size="small", emb_size=16, hidden_size=16,
                 batch_size=4, bptt=8, lr=float("nan"), threads=1, max_steps=30,
                 checkpoint_minutes=0.0001)
    assert sorted(os.listdir(tmp_path)) == []


def test_resume_with_a_lower_lr(corpus, tmp_path):
    """After a divergence the message says to resume with a lower --lr: that is allowed."""
    from lm.training.train import TrainingInterrupted, train_lm
    options = dict(arch="lstm", size="small", emb_size=16, hidden_size=16, batch_size=4, bptt=8,
                   threads=1, epochs=1000)
    with pytest.raises(TrainingInterrupted):
        train_lm([corpus], tmp_path / "m", lr=5.0, max_steps=50, **options,
                 on_step=lambda step: step == 5 and os.kill(os.getpid(), signal.SIGINT))
    train_lm([corpus], tmp_path / "m", lr=0.5, max_steps=12, resume=True, **options)
    rows = (tmp_path / "m" / "train_log.tsv").read_text().splitlines()
    assert rows[-1].split("\t")[-1] == "0.5"


def test_shuffled_vocabulary_is_detected(tmp_path):
    model = unigram(tmp_path, SING)
    (tmp_path / "set").mkdir()
    write_items(tmp_path / "set" / "items.tsv", ITEMS)
    assert agree("score", tmp_path / "set", "--model", model, "--out", tmp_path / "s", "-q").exit_code == 0
    vocab = (model / "vocab.txt").read_text().splitlines()
    (model / "vocab.txt").write_text("\n".join(vocab[:2] + vocab[:1:-1]) + "\n")
    r = agree("score", tmp_path / "set", "--model", model, "--out", tmp_path / "s", "-q")
    assert r.output == (f"Error: {model / 'vocab.txt'}: not the vocabulary this model was trained with "
                        "(its sha256 differs from vocab_sha256 in config.json); restore the original "
                        "vocab.txt\n")
    config = json.loads((model / "config.json").read_text())
    del config["vocab_sha256"]                     # a model from before the checksum: still loads
    (model / "config.json").write_text(json.dumps(config))
    assert agree("score", tmp_path / "set", "--model", model, "--out", tmp_path / "s", "-q").exit_code == 0


def test_ctrl_c_in_demo_does_not_offer_resume(tmp_path):
    """agree demo has no --resume: an interrupt inside its train-lm step is a plain one."""
    # vocab.txt: torch is imported by then. A Ctrl-C during torch's own import can be
    # lost (its C code clears errors while it imports numpy), so the demo would finish.
    returncode, stderr = interrupted(["demo", "--scale", "tiny", "--out", tmp_path / "d"], tmp_path,
                                     lambda: any((p / "models" / "lstm.partial" / "vocab.txt").is_file()
                                                 for p in tmp_path.glob(".d.tmp-*")), signal.SIGINT, seconds=120)
    assert returncode == 130, stderr
    assert stderr.rstrip().endswith("Interrupted") and "--resume" not in stderr and "Traceback" not in stderr
    assert hidden(tmp_path) == [] and not (tmp_path / "d").exists()


@pytest.mark.parametrize("forget, code", [(False, -signal.SIGINT), (True, 130)])
def test_a_ctrl_c_inside_exec_keeps_exit_code_130(tmp_path, forget, code):
    """CPython kills the process with SIGINT at exit after a KeyboardInterrupt left an
    ``exec`` of a string (a dataclass at import), however it was caught; the CLI's
    ``forget_unhandled_interrupt`` keeps the 130 it chose."""
    (tmp_path / "interrupted.py").write_text(
        "import sys\nfrom agreement.cli import forget_unhandled_interrupt\n"
        "try:\n    exec('raise KeyboardInterrupt')\nexcept KeyboardInterrupt:\n    pass\n"
        f"if {forget}:\n    forget_unhandled_interrupt()\nsys.exit(130)\n")
    proc = subprocess.run([sys.executable, "-m", "interrupted"], cwd=tmp_path, capture_output=True,
                          env={**ENV, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])},
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.returncode == code, proc.stderr


def test_a_users_own_dot_partial_directory_is_never_removed(corpus, tmp_path):
    """OUT.partial that agree did not make (no marker) is refused, not deleted."""
    mine = tmp_path / "m.partial"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine\n")
    r = agree("train-lm", corpus, "--arch", "unigram", "--out", tmp_path / "m")
    assert r.exit_code == 1 and "was not made by `agree train-lm`" in r.output
    assert (mine / "notes.txt").read_text() == "mine\n"
    assert agree("train-lm", corpus, "--arch", "unigram", "--out", tmp_path / "m2", "-q").exit_code == 0
    assert not any(p.name.startswith(".agree") for p in (tmp_path / "m2").iterdir())
