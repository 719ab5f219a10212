"""The bad-input matrix: every command against a table of bad inputs and bad --out paths.

Each row is (command, expected message fragment, arguments, exit code, setup). For
every row the test asserts: the exit code (1 error, 2 usage), exactly one
``Error:`` line, no traceback, nothing left beside --out (no hidden temporary
directory or lock), the user's own file beside --out unchanged, and every shared
input unchanged. Adding a case is adding a row.

Arguments are a template: ``{name}`` is a path of the workspace (see Workspace).
The environment faults (read-only directory, full disk, SIGKILL) have their own
tests at the end.
"""
from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

from conftest import run_agree
from formats.manifest import write_manifest
from formats.run import RunContext
from formats.items import read_items, write_items
from formats.tsv import FIELD_LIMIT
from lm.training.train_dir import train_lm_to_dir
from test_extract import toy_conllu, toy_treebank
from test_nonce_cli import make_extract_dir
from test_perturb import EN, paradigms
from test_score_cli import ITEMS as PAIRS
from test_train import make_corpus, write_text

ROOT = Path(__file__).resolve().parents[1]
USER_NOTE = "my own notes, not agree's\n"


# --------------------------------------------------------------------------- inputs

@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """Shared inputs, made once; every row checks they are unchanged afterwards."""
    root = tmp_path_factory.mktemp("inputs")
    toy_treebank(root / "tb")
    (root / "ud" / "en_toy").mkdir(parents=True)            # a folder of treebanks, named as UD names them
    shutil.copyfile(root / "tb" / "toy.conllu", root / "ud" / "en_toy" / "en_toy-ud-test.conllu")
    make_extract_dir(root / "ext")
    (root / "items").mkdir()
    write_items(root / "items" / "items.tsv", EN)
    paradigms().save(root / "items" / "paradigms.tsv")
    (root / "items" / "manifest.json").write_text(json.dumps({"command": "extract",
                                                              "parameters": {"lang": "en"}}))
    make_corpus(root / "corpus", n_sentences=120)
    write_text(root / "text.txt", 40)
    from lm.corpus.prepare import load_corpus
    from lm.unigram import train_unigram
    train_unigram(load_corpus(root / "corpus"), root / "uni")
    scored_dir(root / "scored")
    (root / "pairs").mkdir()
    write_items(root / "pairs" / "items.tsv", PAIRS)          # forms the tiny LSTMs know
    for name, seed in (("lstm", 1), ("lstm2", 2)):   # two tiny LSTMs of one shape: a foreign model.pt
        train_lm_to_dir(RunContext("train-lm", out=root / name, seed=seed), [root / "corpus"], arch="lstm", size="small",
                        emb_size=8, hidden_size=8, batch_size=4, bptt=8, max_steps=2, threads=1)
    return root


def scored_dir(path: Path) -> None:
    """A small `agree score` output (two models over the toy items), for analyze's rows."""
    from formats.scored import write_scored
    from tests.scored_rows import row, table
    path.mkdir()
    rows = [row(it, m, m, "lstm", -1.0 - k, -2.0 + (i % 3), testset="t")
            for k, m in enumerate(("m1", "m2")) for i, it in enumerate(EN)]
    write_scored(path / "items.tsv", table(rows))
    write_manifest(path, "score", [], {})


def tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


class Workspace:
    """Paths a row's arguments may name. ``out`` lies in ``outs``, beside the user's
    ``outs/notes.txt``; per-row files (``bad``, ``bad_dir``) are made by the row's setup."""

    def __init__(self, base: Path, tmp: Path):
        self.base, self.tmp = base, tmp
        self.tb = base / "tb" / "toy.conllu"
        self.tb_dir = base / "tb"
        self.ud = base / "ud"
        self.ext = base / "ext"
        self.items = base / "items"
        self.corpus = base / "corpus"
        self.text = base / "text.txt"
        self.uni = base / "uni"
        self.lstm = base / "lstm"
        self.pairs = base / "pairs"
        self.scored = base / "scored"
        self.outs = tmp / "outs"
        self.outs.mkdir()
        (self.outs / "notes.txt").write_text(USER_NOTE)
        self.out = self.outs / "out"
        self.bad = tmp / "bad"          # a per-row input file or directory (setup makes it)
        self.bad_dir = tmp / "bad_dir"

    def fill(self, template: str) -> list[str]:
        return [a.format(**{k: str(v) for k, v in vars(self).items()}) for a in shlex.split(template)]


# --------------------------------------------------------------------------- setups

def user_out(w):        # --out holds the user's own files
    w.out.mkdir()
    (w.out / "thesis.tex").write_text("chapter 1\n")
    (w.out / "data.csv").write_text("1,2\n")


def file_out(w):
    w.out.write_text("a file, not a directory\n")


def other_output(command):
    def setup(w):
        w.out.mkdir()
        write_manifest(w.out, command, [], {})
        (w.out / "items.tsv").write_text("x\n")
    return setup


def live_lock(w):       # another agree run (this very process: alive) is writing --out
    (w.outs / ".out.lock").write_text(json.dumps({"pid": os.getpid(), "host": os.uname().nodename,
                                                  "started": "now"}))


def cwd_with_user_files(w):
    os.chdir(w.outs)


def link_to(attr):
    def setup(w):
        w.out.symlink_to(getattr(w, attr), target_is_directory=True)
    return setup


def copy(attr, to="bad_dir"):
    def setup(w):
        shutil.copytree(getattr(w, attr), getattr(w, to))
    return setup


def items_file(text: str | bytes, with_dir_files=True):
    """bad_dir: an extract directory whose items.tsv is ``text``."""
    def setup(w):
        make_extract_dir(w.bad_dir)
        path = w.bad_dir / "items.tsv"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return setup


def truncated_items(w):
    make_extract_dir(w.bad_dir)
    path = w.bad_dir / "items.tsv"
    lines = path.read_text().splitlines(True)
    lines[2] = "\t".join(lines[2].split("\t")[:7]) + "\n"      # row 2 cut after 7 columns
    path.write_text("".join(lines))


def paradigm_row(edit):
    """bad_dir: an extract directory whose paradigms.tsv has its second row's fields
    (form, lemma, upos, feats, count) changed by ``edit(fields) -> fields``."""
    def setup(w):
        make_extract_dir(w.bad_dir)
        path = w.bad_dir / "paradigms.tsv"
        lines = path.read_text().splitlines(True)
        lines[2] = "\t".join(edit(lines[2].rstrip("\n").split("\t"))) + "\n"
        path.write_text("".join(lines))
    return setup


def header_only(w):
    make_extract_dir(w.bad_dir)
    path = w.bad_dir / "items.tsv"
    path.write_text(path.read_text().splitlines(True)[0])


def bad_file(text: str | bytes, name="bad"):
    def setup(w):
        path = w.tmp / name
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        if name != "bad":
            w.bad = path
    return setup


def corpus_without_counts(w):
    shutil.copytree(w.corpus, w.bad_dir)
    (w.bad_dir / "counts.tsv").unlink()


def shuffled_vocab(w):
    shutil.copytree(w.uni, w.bad_dir)
    path = w.bad_dir / "vocab.txt"
    words = path.read_text().splitlines()
    path.write_text("\n".join(words[:2] + words[:1:-1]) + "\n")     # same size, other order


def model_with_config(config: str):
    def setup(w):
        shutil.copytree(w.uni, w.bad_dir)
        (w.bad_dir / "config.json").write_text(config)
    return setup


def partial_with_checkpoint(w):
    (w.outs / "out.partial").mkdir()
    (w.outs / "out.partial" / "checkpoint.pt").write_bytes(b"x")


def broken_manifest(w):
    shutil.copytree(w.items, w.bad_dir)
    (w.bad_dir / "manifest.json").write_text("{not json")


def undecodable_humans(w):
    w.bad.write_bytes("item_id\tvariant\tvotes_correct\tvotes_wrong\nz\xe4\t0\t1\t2\n".encode("latin-1"))


def humans_wrong_columns(w):
    w.bad.write_text("a\tb\n1\t2\n")


# --------------------------------------------------------------------------- setups: what a file claims to be

def bad_item(**changes):
    """bad_dir: an extract directory whose first item (line 2) has ``changes`` (a value
    may be a function of the item)."""
    def setup(w):
        make_extract_dir(w.bad_dir)
        items = list(read_items(w.bad_dir))
        first = items[0]
        first = first.replace(**{k: v(first) if callable(v) else v for k, v in changes.items()})
        write_items(w.bad_dir / "items.tsv", [first] + items[1:])
    return setup


def field_over_the_limit(w):
    """bad_dir: items.tsv whose line 2 has an item_id of FIELD_LIMIT + 1 characters."""
    make_extract_dir(w.bad_dir)
    path = w.bad_dir / "items.tsv"
    header, first, *rest = path.read_text().splitlines(True)
    path.write_text(header + "x" * (FIELD_LIMIT + 1) + first[first.index("\t"):] + "".join(rest))


def lstm_config(manifest=True, **changes):
    """bad_dir: the tiny LSTM with config.json edited (without its manifest.json: a model
    from before checksums, whose config is checked against its weights field by field)."""
    def setup(w):
        shutil.copytree(w.lstm, w.bad_dir)
        path = w.bad_dir / "config.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), **changes}))
        if not manifest:
            (w.bad_dir / "manifest.json").unlink()
    return setup


def foreign_weights(w):
    """bad_dir: the tiny LSTM with the model.pt of another one of the same shape."""
    shutil.copytree(w.lstm, w.bad_dir)
    shutil.copyfile(w.base / "lstm2" / "model.pt", w.bad_dir / "model.pt")


def lstm_weights(change):
    """bad_dir: the tiny LSTM with its weights changed by ``change(state_dict)`` and no
    manifest.json (a model from before checksums: the weights themselves are checked)."""
    def setup(w):
        import torch
        shutil.copytree(w.lstm, w.bad_dir)
        ckpt = torch.load(w.bad_dir / "model.pt", weights_only=True)
        change(ckpt["state_dict"])
        torch.save(ckpt, w.bad_dir / "model.pt")
        (w.bad_dir / "manifest.json").unlink()
    return setup


def nan_weight(state):
    state["rnn.weight_hh_l0"][0, 0] = float("nan")


def overflowing_bias(state):
    """Finite weights whose log-probabilities overflow float32: +-3e38 output biases."""
    bias = state["decoder.bias"]
    bias[0::2], bias[1::2] = 3e38, -3e38


def tab_with(value: str):
    """bad: a paper .tab whose model column holds ``value`` on line 3."""
    def setup(w):
        head = "pattern\tconstr_id\tsent_id\tform\tclass\ttype\tprefix\tlstm\n"
        rows = ["L__NOUN_VERB\t1\t0\truns\tcorrect\toriginal\tthe dog\t-1.5\n",
                f"L__NOUN_VERB\t1\t0\trun\twrong\toriginal\tthe dog\t{value}\n"]
        w.bad.write_text(head + "".join(rows))
    return setup


def corpus_with(split: str, content: bytes):
    """bad_dir: the corpus directory with ``split``.txt replaced."""
    def setup(w):
        shutil.copytree(w.corpus, w.bad_dir)
        (w.bad_dir / f"{split}.txt").write_bytes(content)
    return setup


def partial_checkpoint(content):
    """outs/out.partial as a user keeps it: vocab.txt and a checkpoint.pt that is ``content``
    (bytes, or a function of the workspace giving a path to copy)."""
    def setup(w):
        (w.outs / "out.partial").mkdir()
        shutil.copyfile(w.lstm / "vocab.txt", w.outs / "out.partial" / "vocab.txt")
        target = w.outs / "out.partial" / "checkpoint.pt"
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            shutil.copyfile(content(w), target)
    return setup


def vectors_file(text: str):
    def setup(w):
        w.bad.write_text(text)
    return setup


def shuffled_lstm_vocab(w):
    shutil.copytree(w.lstm, w.bad_dir)
    path = w.bad_dir / "vocab.txt"
    words = path.read_text().splitlines()
    path.write_text("\n".join(words[:2] + words[:1:-1]) + "\n")


CONLLU = toy_conllu()
LATIN1 = "the d\xf6g runs .\n".encode("latin-1")


# --------------------------------------------------------------------------- the table

def R(command, fragment, args, code=1, setup=None, id=None):
    return pytest.param(command, fragment, args, code, setup, id=id)


#: the inputs each command is run on when a row is about --out alone
PLAIN = {
    "extract": "{tb_dir}",
    "extract-all": "{ud}",
    "nonce": "{ext}",
    "corpus": "{text} --lang en",
    "train-lm": "{corpus} --arch unigram",
    "score": "{items} --model {uni}",
    "perturb": "{items} --aspect swap --severity 0.5",
    "demo": "--scale tiny",
    "export": "{items} --format blimp",
    "swap-targets": "{ext} --k 2",
    "analyze": "{scored} --no-mixed --n-boot 20",
}
#: an input directory of each command (for --out is / inside / containing an input)
INPUT_DIR = {"extract": "tb_dir", "extract-all": "ud", "nonce": "ext", "corpus": None, "train-lm": "corpus",
             "score": "items", "perturb": "items", "export": "items", "swap-targets": "ext",
             "analyze": "scored"}


def out_rows():
    """The --out policy, for every command."""
    rows = []
    for cmd, plain in PLAIN.items():
        what = f"`agree {cmd}`"
        rows += [
            R(cmd, f"exists and is not an output of {what} (holds data.csv, thesis.tex); use --force",
              f"{plain} --out {{out}}", setup=user_out, id=f"{cmd}-out-holds-user-files"),
            R(cmd, "exists and is not a directory; choose another --out", f"{plain} --out {{out}}",
              setup=file_out, id=f"{cmd}-out-is-a-file"),
            R(cmd, f"exists and is not an output of {what} (holds items.tsv, manifest.json)",
              f"{plain} --out {{out}}", setup=other_output("another-command"),
              id=f"{cmd}-out-of-another-command"),
            R(cmd, "another agree run is writing it", f"{plain} --out {{out}}", setup=live_lock,
              id=f"{cmd}-out-locked"),
            R(cmd, f"exists and is not an output of {what} (holds notes.txt)", f"{plain} --out .",
              setup=cwd_with_user_files, id=f"{cmd}-out-dot-with-user-files"),
            R(cmd, "cannot write to the root directory", f"{plain} --out /", id=f"{cmd}-out-root"),
            R(cmd, "is a file, not a directory", f"{plain} --out {{outs}}/notes.txt/sub",
              id=f"{cmd}-out-under-a-file"),
        ]
        if cmd == "demo":
            continue
        src = "{text}" if cmd == "corpus" else "{%s}" % INPUT_DIR[cmd]
        rows += [
            R(cmd, "--out is the input", f"{plain} --out {src}", id=f"{cmd}-out-is-the-input"),
            R(cmd, "--out contains the input", f"{plain} --out {src}/..",
              id=f"{cmd}-out-contains-the-input"),
        ]
        if cmd != "corpus":
            rows += [
                R(cmd, "--out lies inside the input", f"{plain} --out {src}/sub",
                  id=f"{cmd}-out-inside-the-input"),
                R(cmd, "--out is the input", f"{plain} --out {{out}}", setup=link_to(INPUT_DIR[cmd]),
                  id=f"{cmd}-out-symlink-to-the-input"),
            ]
        else:
            rows.append(R(cmd, "--out contains the input", "{text} --lang en --out {base}",
                          id="corpus-out-is-the-input-directory"))
    return rows


EXTRACT = [
    R("extract", "no such file", "{tmp}/nope.conllu --out {out}", id="extract-missing"),
    R("extract", "empty treebank (no sentences)", "{bad} --out {out}", setup=bad_file(""),
      id="extract-empty"),
    R("extract", "not UTF-8 text", "{bad} --out {out}",
      setup=bad_file(CONLLU.replace("ball", "b\xe4ll").encode("latin-1")), id="extract-latin1"),
    R("extract", ":2: expected 10 tab-separated columns, found 9", "{bad} --out {out}",
      setup=bad_file(CONLLU.replace("\tthe\tDET", "\tthe DET", 1)), id="extract-short-line"),
    R("extract", ":2: HEAD: 'two' is not a number", "{bad} --out {out}",
      setup=bad_file(CONLLU.replace("\t2\tdet", "\ttwo\tdet", 1)), id="extract-bad-head"),
    R("extract", "no token has the feature Foo", "{tb} --features Foo --out {out}", id="extract-no-feature"),
    R("extract", "Invalid value for '--min-count'", "{tb} --min-count -1 --out {out}", 2,
      id="extract-min-count-negative"),
    R("extract", "Invalid value for '--min-distance'", "{tb} --min-distance 0 --out {out}", 2,
      id="extract-min-distance-0"),
    R("extract", "Invalid value for '--max-distance'", "{tb} --max-distance abc --out {out}", 2,
      id="extract-max-distance-text"),
    R("extract", "Invalid value for '--vocab'", "{tb} --vocab {tmp}/nope --out {out}", 2,
      id="extract-vocab-missing"),
    R("extract", "Invalid value for '--alt'", "{tb} --alt nearest --out {out}", 2, id="extract-bad-alt"),
    R("extract", "Missing option '--out'", "{tb}", 2, id="extract-no-out"),
    R("extract", "Missing argument", "--out {out}", 2, id="extract-no-treebank"),
    R("extract", "No such option", "{tb} --frobnicate --out {out}", 2, id="extract-unknown-option"),
    R("extract", ":1: expected 10 tab-separated columns, found 1", "{bad} --out {out}", setup=bad_file("just some text\nmore text\n"),
      id="extract-plain-text"),
]

NONCE = [
    R("nonce", "does not exist", "{tmp}/nope --out {out}", 2, id="nonce-missing-dir"),
    R("nonce", "is a file", "{tb} --out {out}", 2, id="nonce-file-not-dir"),
    R("nonce", "items.tsv", "{bad_dir} --out {out}",
      setup=lambda w: (w.bad_dir.mkdir(), (w.bad_dir / "manifest.json").write_text("{}")),
      id="nonce-no-items"),
    R("nonce", "manifest.json", "{bad_dir} --out {out}",
      setup=lambda w: (make_extract_dir(w.bad_dir), (w.bad_dir / "manifest.json").unlink()),
      id="nonce-no-manifest"),
    R("nonce", "not 'agree extract'", "{bad_dir} --out {out}",
      setup=lambda w: make_extract_dir(w.bad_dir, command="score"), id="nonce-manifest-of-score"),
    R("nonce", "not valid JSON", "{bad_dir} --out {out}",
      setup=lambda w: (make_extract_dir(w.bad_dir), (w.bad_dir / "manifest.json").write_text("{x")),
      id="nonce-manifest-not-json"),
    R("nonce", "items.tsv: empty file (not even a header line)", "{bad_dir} --out {out}",
      setup=items_file(""), id="nonce-empty-items"),
    R("nonce", "items.tsv:3: expected 20 columns, found 7", "{bad_dir} --out {out}",
      setup=truncated_items, id="nonce-truncated-row"),
    R("nonce", "items.tsv: not valid UTF-8", "{bad_dir} --out {out}",
      setup=items_file(b"item_id\tvariant\n\xff\xfe\n"), id="nonce-undecodable-items"),
    R("nonce", "from another version (missing columns", "{bad_dir} --out {out}",
      setup=items_file("item_id\tvariant\ttokens\n"), id="nonce-items-other-version"),
    R("nonce", "paradigms.tsv:3: expected form, lemma, upos, feats, count", "{bad_dir} --out {out}",
      setup=paradigm_row(lambda f: f[:4]), id="nonce-paradigms-short-row"),
    R("nonce", "paradigms.tsv:3: empty form (a row is form, lemma, upos, feats, count, with feats _ when "
      "there are none)", "{bad_dir} --out {out}", setup=paradigm_row(lambda f: ["", *f[1:]]),
      id="nonce-paradigms-empty-form"),
    R("nonce", "paradigms.tsv:3: empty lemma and upos (", "{bad_dir} --out {out}",
      setup=paradigm_row(lambda f: [f[0], "", " ", *f[3:]]), id="nonce-paradigms-empty-fields"),
    R("nonce", "paradigms.tsv:3: count 0: a row is an analysis the treebank has, seen at least once",
      "{bad_dir} --out {out}", setup=paradigm_row(lambda f: [*f[:4], "0"]), id="nonce-paradigms-count-0"),
    R("nonce", "Invalid value for '--n'", "{ext} --n -1 --out {out}", 2, id="nonce-n-negative"),
    R("nonce", "Invalid value for '--ambiguity'", "{ext} --ambiguity 2 --out {out}", 2,
      id="nonce-ambiguity-2"),
    R("nonce", "is not a finite number", "{ext} --ambiguity nan --out {out}", 2, id="nonce-ambiguity-nan"),
    R("nonce", "Invalid value for '--vocab'", "{ext} --vocab {tmp}/nope --out {out}", 2,
      id="nonce-vocab-missing"),
    R("nonce", "Invalid value for '--sampling'", "{ext} --sampling zipf --out {out}", 2,
      id="nonce-bad-sampling"),
    R("nonce", "Invalid value for '--seed'", "{ext} --seed x --out {out}", 2, id="nonce-seed-text"),
]

CORPUS = [
    R("corpus", "no such file", "{tmp}/nope.txt --lang en --out {out}", id="corpus-missing"),
    R("corpus", "is a directory, not a dump or text file", "{tb_dir} --lang en --out {out}",
      id="corpus-directory"),
    R("corpus", "looks like a CoNLL-U treebank", "{tb} --lang en --out {out}", id="corpus-conllu"),
    R("corpus", "use agree extract", "{bad} --lang en --out {out}",
      setup=bad_file("# sent_id = 1\n# text = a b\n1\ta\ta\tDET\t_\t_\t0\troot\t_\t_\n"),
      id="corpus-conllu-comments"),
    R("corpus", "empty corpus: no sentences", "{bad} --lang en --out {out}", setup=bad_file(""),
      id="corpus-empty"),
    R("corpus", ":1: not valid UTF-8", "{bad} --lang en --out {out}", setup=bad_file(LATIN1),
      id="corpus-latin1"),
    R("corpus", "Invalid value for '--vocab-size'", "{text} --lang en --vocab-size 0 --out {out}", 2,
      id="corpus-vocab-size-0"),
    R("corpus", "Invalid value for '--max-unk'", "{text} --lang en --max-unk 2 --out {out}", 2,
      id="corpus-max-unk-2"),
    R("corpus", "is not a finite number", "{text} --lang en --max-unk nan --out {out}", 2,
      id="corpus-max-unk-nan"),
    R("corpus", "Invalid value for '--workers'", "{text} --lang en --workers 0 --out {out}", 2,
      id="corpus-workers-0"),
    R("corpus", "Invalid value for '--clitics'", "{text} --lang en --clitics drop --out {out}", 2,
      id="corpus-bad-clitics"),
    R("corpus", "Missing option '--lang'", "{text} --out {out}", 2, id="corpus-no-lang"),
    R("corpus", "the compressed file is truncated", "{bad} --lang en --out {out}",
      setup=bad_file(__import__("bz2").compress(b"the dog runs .\n" * 500)[:60]), id="corpus-truncated-bz2"),
]

TRAIN = [R("train-lm", f"Invalid value for '{opt}'", f"{{corpus}} {opt} {value} --out {{out}}", 2,
           id=f"train-{opt[2:]}-{value}")
         for opt, value in [("--lr", "-1"), ("--lr", "0"), ("--lr", "nan"), ("--lr", "inf"),
                            ("--lr", "abc"), ("--clip", "-1"), ("--clip", "nan"), ("--threads", "-1"),
                            ("--threads", "0"), ("--dropout", "1"), ("--dropout", "-0.1"),
                            ("--dropout", "inf"), ("--epochs", "0"), ("--epochs", "-3"),
                            ("--batch-size", "0"), ("--bptt", "0"), ("--max-steps", "0"),
                            ("--checkpoint-minutes", "0"), ("--checkpoint-minutes", "-1"),
                            ("--hidden", "0"), ("--emb", "-1"), ("--layers", "0"), ("--heads", "0"),
                            ("--max-len", "0"), ("--vocab-size", "0"), ("--sp-vocab-size", "0"),
                            ("--order", "0")]] + [
    R("train-lm", "--arch kn5 does not take --epochs", "{corpus} --arch kn5 --epochs 3 --out {out}",
      id="train-kn5-epochs"),
    R("train-lm", "--arch unigram does not take --hidden", "{corpus} --arch unigram --hidden 8 --out {out}",
      id="train-unigram-hidden"),
    R("train-lm", "--arch unigram does not take --resume", "{corpus} --arch unigram --resume --out {out}",
      id="train-unigram-resume"),
    R("train-lm", "counts.tsv: no such file", "{bad_dir} --arch unigram --out {out}",
      setup=corpus_without_counts, id="train-unigram-no-counts"),
    R("train-lm", "a directory but not a corpus directory", "{tb_dir} --arch unigram --out {out}",
      id="train-dir-not-corpus"),
    R("train-lm", "--lang is needed", "{text} --arch unigram --out {out}", id="train-text-without-lang"),
    R("train-lm", "a corpus of language 'en', but --lang it", "{corpus} --lang it --arch unigram --out {out}",
      id="train-lang-mismatch"),
    R("train-lm", "nothing to resume", "{corpus} --arch lstm --size small --resume --out {out}",
      id="train-resume-nothing"),
    R("train-lm", "holds an interrupted training run", "{corpus} --arch lstm --size small --out {out}",
      setup=partial_with_checkpoint, id="train-partial-with-checkpoint"),
    R("train-lm", "Invalid value for '--arch'", "{corpus} --arch gru --out {out}", 2, id="train-arch-gru"),
    R("train-lm", "does not exist", "{tmp}/nope --out {out}", 2, id="train-missing-input"),
    R("train-lm", "tied weights need emb_size == hidden_size",
      "{corpus} --arch lstm --tied --emb 8 --hidden 16 --out {out}", id="train-tied-mismatch"),
    R("train-lm", "is fewer than one batch", "{corpus} --arch lstm --size small --batch-size 64 "
      "--bptt 200 --threads 1 --out {out}", id="train-corpus-smaller-than-batch"),
    R("train-lm", "Invalid value for '--tokenizer'", "{corpus} --tokenizer bpe --out {out}", 2,
      id="train-bad-tokenizer"),
]

SCORE = [
    R("score", "nope.tsv: not a test set", "{tmp}/nope.tsv --model {uni} --out {out}", id="score-missing-testset"),
    R("score", "items.tsv: empty file", "{bad_dir} --model {uni} --out {out}", setup=items_file(""),
      id="score-empty-items"),
    R("score", "items.tsv:3: expected 20 columns, found 7", "{bad_dir} --model {uni} --out {out}",
      setup=truncated_items, id="score-truncated-row"),
    R("score", "items.tsv: not valid UTF-8", "{bad_dir} --model {uni} --out {out}",
      setup=items_file("item_id\tvariant\ttokens\tcorrect\twrong\ttarget_index\nd\xf6g\n".encode("latin-1")),
      id="score-undecodable-items"),
    R("score", "has no items (an empty test set", "{bad_dir} --model {uni} --out {out}",
      setup=header_only, id="score-zero-items"),
    R("score", "no such model directory", "{items} --model {tmp}/nope --out {out}", id="score-model-missing"),
    R("score", "not a model directory (no config.json)", "{items} --model {tb_dir} --out {out}",
      id="score-model-not-a-model"),
    R("score", "not the vocabulary this model was trained with", "{items} --model {bad_dir} --out {out}",
      setup=shuffled_vocab, id="score-shuffled-vocab"),
    R("score", "unreadable model config", "{items} --model {bad_dir} --out {out}",
      setup=model_with_config("{broken"), id="score-config-not-json"),
    R("score", "unknown model kind 'gru'", "{items} --model {bad_dir} --out {out}",
      setup=model_with_config('{"kind": "gru"}'), id="score-unknown-kind"),
    R("score", "nothing to score: give --model", "{items} --out {out}", id="score-no-model"),
    R("score", "--from-outputs needs a paper .tab file", "{items} --from-outputs lstm --out {out}",
      id="score-from-outputs-on-items"),
    R("score", "Invalid value for '--humans'", "{items} --model {uni} --humans {tmp}/nope --out {out}", 2,
      id="score-humans-missing"),
    R("score", "bad: not valid UTF-8", "{items} --model {uni} --humans {bad} --out {out}",
      setup=undecodable_humans, id="score-humans-undecodable"),
    R("score", "not a human-judgment file", "{items} --model {uni} --humans {bad} --out {out}",
      setup=humans_wrong_columns, id="score-humans-wrong-columns"),
    R("score", "Invalid value for '--batch-size'", "{items} --model {uni} --batch-size 0 --out {out}", 2,
      id="score-batch-size-0"),
    R("score", "Missing argument", "--model {uni} --out {out}", 2, id="score-no-testset"),
]

PERTURB = [
    R("perturb", "Invalid value for '--aspect': 'typo' is not one of", "{items} --aspect typo --severity 0.5 "
      "--out {out}", 2, id="perturb-unknown-aspect"),
    R("perturb", "severity 1.5 out of range", "{items} --aspect qwerty --severity 1.5 --out {out}",
      id="perturb-severity-1.5"),
    R("perturb", "is not a finite number", "{items} --aspect qwerty --severity nan --out {out}", 2,
      id="perturb-severity-nan"),
    R("perturb", "is not a finite number", "{items} --aspect qwerty --severity inf --out {out}", 2,
      id="perturb-severity-inf"),
    R("perturb", "severity 1.2 out of range", "{items} --aspect semantic --severity 1.2 --out {out}",
      id="perturb-semantic-severity"),
    R("perturb", "needs word vectors", "{items} --aspect semantic --severity 0.5 --out {out}",
      id="perturb-semantic-no-vectors"),
    R("perturb", "expected KEY=VALUE", "{items} --aspect articles --severity 0.5 -o mode --out {out}",
      id="perturb-option-without-value"),
    R("perturb", "Invalid value for '--pos-group': 'adverbs' is not one of",
      "{items} --aspect swap --severity 0.5 --pos-group adverbs --out {out}", 2, id="perturb-bad-pos-group"),
    R("perturb", "are for the semantic aspect only",
      "{items} --aspect swap --severity 0.5 --vectors {text} --out {out}", id="perturb-vectors-not-semantic"),
    R("perturb", "does not exist", "{tmp}/nope --aspect swap --severity 0.5 --out {out}", 2,
      id="perturb-missing-testset"),
    R("perturb", "items.tsv: empty file", "{bad_dir} --aspect swap --severity 0.5 --out {out}",
      setup=items_file(""), id="perturb-empty-items"),
    R("perturb", "items.tsv:3: expected 20 columns, found 7",
      "{bad_dir} --aspect swap --severity 0.5 --out {out}", setup=truncated_items, id="perturb-truncated-row"),
    R("perturb", "items.tsv: not valid UTF-8", "{bad_dir} --aspect swap --severity 0.5 --out {out}",
      setup=items_file(b"item_id\tvariant\ttokens\tcorrect\twrong\ttarget_index\n\xff\n"),
      id="perturb-undecodable-items"),
    R("perturb", "manifest.json: not a valid manifest.json",
      "{bad_dir} --aspect swap --severity 0.5 --out {out}", setup=broken_manifest,
      id="perturb-broken-manifest"),
    R("perturb", "Missing option '--severity'", "{items} --aspect swap --out {out}", 2,
      id="perturb-no-severity"),
]

DEMO = [
    R("demo", "Invalid value for '--scale'", "--scale huge --out {out}", 2, id="demo-bad-scale"),
    R("demo", "Invalid value for '--seed'", "--seed x --out {out}", 2, id="demo-seed-text"),
    R("demo", "Missing option '--out'", "--scale tiny", 2, id="demo-no-out"),
]

NEW_COMMANDS = [
    R("export", "Invalid value for '--format'", "{items} --format csv --out {out}", 2, id="export-bad-format"),
    R("export", "not a test set", "{tmp}/nope.tsv --format blimp --out {out}", id="export-missing-testset"),
    R("export", "items.tsv:3: expected 20 columns, found 7", "{bad_dir} --format blimp --out {out}",
      setup=truncated_items, id="export-truncated-row"),
    R("swap-targets", "does not exist", "{tmp}/nope --k 2 --out {out}", 2, id="swap-targets-missing-dir"),
    R("swap-targets", "Invalid value for '--k': 0 is not in the range 1 <= x", "{ext} --k 0 --out {out}", 2,
      id="swap-targets-k-0"),
    R("analyze", "not an agree score output", "{ext} --out {out}", id="analyze-not-a-score-dir"),
    R("analyze", "Invalid value for '--n-boot': 1 is not in the range 10 <= x <= 100000", "{scored} --n-boot 1 "
      "--out {out}", 2, id="analyze-n-boot-1"),
    R("analyze", "does not exist", "{tmp}/nope --out {out}", 2, id="analyze-missing-dir"),
]

HUGE = "99999999999999999999"
#: issue 29: numbers beyond what the code below honours, sizes that cannot fit
NUMBERS = [R(cmd, "Invalid value for '--seed': 99999999999999999999 is not in the range 0 <= x <= 4294967295",
             f"{PLAIN[cmd]} --seed {HUGE} --out {{out}}", 2, id=f"{cmd}-seed-huge")
           for cmd in ("demo", "score", "train-lm")] + [
    R("train-lm", f"Invalid value for '{opt}': {value} is not in the range", f"{{corpus}} {opt} {value} --out {{out}}",
      2, id=f"train-{opt[2:]}-{value}")
    for opt, value in [("--lr", "1e+308"), ("--max-len", HUGE), ("--sp-vocab-size", HUGE), ("--threads", HUGE),
                       ("--layers", HUGE), ("--order", "7"), ("--emb", HUGE)]] + [
    R("train-lm", "training this lstm needs about", "{corpus} --arch lstm --size small --layers 100000 --out {out}",
      id="train-layers-beyond-memory"),
    R("train-lm", "of memory; this machine has", "{corpus} --arch transformer --size small --max-len 2000000000 "
      "--out {out}", id="train-max-len-beyond-memory"),
    R("train-lm", "--sp-vocab-size 100000 does not fit this text", "{corpus} --arch lstm --size small --tokenizer "
      "sentencepiece --sp-vocab-size 100000 --out {out}", id="train-sp-vocab-size-beyond-text"),
    R("nonce", f"Invalid value for '--n': {HUGE} is not in the range", f"{{ext}} --n {HUGE} --out {{out}}", 2,
      id="nonce-n-huge"),
    R("nonce", "variants per item are too many", "{ext} --n 1000000000000 --out {out}", id="nonce-n-beyond-memory"),
    R("score", f"Invalid value for '--batch-size': {HUGE}", f"{{items}} --model {{uni}} --batch-size {HUGE} "
      "--out {out}", 2, id="score-batch-size-huge"),
    R("score", "Invalid value for '--threads': 999999 is not in the range 1 <= x", "{items} --model {uni} --threads "
      "999999 --out {out}", 2, id="score-threads-beyond-cpus"),
    R("corpus", "Invalid value for '--workers': 999999", "{text} --lang en --workers 999999 --out {out}", 2,
      id="corpus-workers-beyond-cpus"),
    R("analyze", "Invalid value for '--n-boot'", f"{{scored}} --n-boot {HUGE} --out {{out}}", 2, id="analyze-n-boot-huge"),
] + [R(cmd, "Invalid value for '--lang': an empty language code", f"{args} --lang '' --out {{out}}", 2,
       id=f"{cmd}-lang-empty")
     for cmd, args in (("corpus", "{text}"), ("extract", "{tb}"), ("train-lm", "{text} --arch unigram"),
                       ("perturb", "{items} --aspect swap --severity 0.5"), ("export", "{items} --format multiblimp"))]

#: issue 29: model directories whose files do not belong together, or cannot score
MODELS = [
    R("score", "config.json: config.json has changed since the model was written (the sha256 differs from the "
      "one in manifest.json)", "{items} --model {bad_dir} --out {out}", setup=lstm_config(hidden_size=999),
      id="score-config-edited"),
    R("score", "config.json: hidden_size is 999 but model.pt was trained with 8", "{items} --model {bad_dir} "
      "--out {out}", setup=lstm_config(False, hidden_size=999), id="score-config-hidden-edited-no-manifest"),
    R("score", "config.json: vocab_size is 5000 but model.pt", "{items} --model {bad_dir} --out {out}",
      setup=lstm_config(False, vocab_size=5000), id="score-config-vocab-size-edited-no-manifest"),
    R("score", "config.json: layers is '2' (str), expected an integer", "{items} --model {bad_dir} --out {out}",
      setup=lstm_config(False, layers="2"), id="score-config-layers-a-string-no-manifest"),
    R("score", "model.pt: model.pt has changed since the model was written", "{items} --model {bad_dir} --out {out}",
      setup=foreign_weights, id="score-foreign-model-pt"),
    R("score", "model.pt: rnn.weight_hh_l0 holds 1 NaN or infinite values", "{items} --model {bad_dir} --out {out}",
      setup=lstm_weights(nan_weight), id="score-nan-weights"),
    R("score", "model bad_dir: log-probabilities", "{pairs} --model {bad_dir} --out {out}",
      setup=lstm_weights(overflowing_bias), id="score-non-finite-scores"),
    R("score", "bad:3: column 'lstm' holds 'nan', not a finite number", "{bad} --format paper-tab --from-outputs "
      "lstm --out {out}", setup=tab_with("nan"), id="score-tab-nan"),
    R("score", "bad:3: column 'lstm' holds '-inf', not a finite number", "{bad} --format paper-tab --from-outputs "
      "lstm --out {out}", setup=tab_with("-inf"), id="score-tab-inf"),
    R("perturb", "vocab.txt: not the vocabulary this model was trained with", "{items} --aspect semantic "
      "--severity 0.5 --vectors {bad_dir} --out {out}", setup=shuffled_lstm_vocab, id="perturb-vectors-shuffled-vocab"),
    R("perturb", "bad:3: the vector of 'dog' holds NaN", "{items} --aspect semantic --severity 0.5 --vectors {bad} "
      "--out {out}", setup=vectors_file("3 2\nthe 0.1 0.2\ndog nan 0.3\ncat 0.2 0.1\n"), id="perturb-vectors-nan"),
]

#: issue 29: rows of items.tsv that are not test items, for every command that reads them
_ITEM_FAULTS = [
    ("the correct form 'zzz' is not the token at target_index", bad_item(correct="zzz"), "correct-not-at-target"),
    ("the wrong form", bad_item(wrong=lambda it: it.correct), "wrong-equals-correct"),
    ("direction 'X' is not one of L, R", bad_item(direction="X"), "direction-unknown"),
    ("10 tokens but 9 POS tags", bad_item(pos=lambda it: it.pos[1:]), "pos-misaligned"),
    ("target_index 99 is outside the sentence", bad_item(target_index=99), "target-index-out-of-range"),
]
ITEM_ROWS = [R(cmd, f"items.tsv:2: not a usable item: {fragment}", f"{args} --out {{out}}", setup=setup,
               id=f"{cmd}-item-{name}")
             for fragment, setup, name in _ITEM_FAULTS
             for cmd, args in (("score", "{bad_dir} --model {uni}"), ("nonce", "{bad_dir}"),
                               ("perturb", "{bad_dir} --aspect swap --severity 0.5"),
                               ("export", "{bad_dir} --format blimp"))] + [
    R(cmd, "items.tsv:2: a field longer than 16,777,216 characters", f"{args} --out {{out}}",
      setup=field_over_the_limit, id=f"{cmd}-item-field-over-the-limit")
    for cmd, args in (("score", "{bad_dir} --model {uni}"), ("nonce", "{bad_dir}"),
                      ("perturb", "{bad_dir} --aspect swap --severity 0.5"), ("export", "{bad_dir} --format blimp"))]

#: issue 29: training text that is not text, and agree's own files given as a corpus
TEXT_ROWS = [
    R(cmd, f"this is {what}, not a dump or tokenised text", f"{{{attr}}}{suffix} {args} --out {{out}}", id=f"{cmd}-{name}")
    for what, attr, suffix, name in (("an items.tsv of agree test items", "items", "/items.tsv", "items-as-corpus"),
                                     ("an agree manifest.json", "items", "/manifest.json", "manifest-as-corpus"),
                                     ("a vocab.txt (one word a line)", "uni", "/vocab.txt", "vocab-as-corpus"))
    for cmd, args in (("corpus", "--lang en"), ("train-lm", "--lang en --arch unigram"))] + [
    R("corpus", "bad:1: binary data (NUL bytes), not tokenised text", "{bad} --lang en --out {out}",
      setup=bad_file(b"the dog\x00runs .\n"), id="corpus-nul-bytes"),
    R("train-lm", "train.txt: the training split has no words", "{bad_dir} --arch unigram --out {out}",
      setup=corpus_with("train", b""), id="train-corpus-empty-train"),
    R("train-lm", "valid.txt: the validation split has no words", "{bad_dir} --arch unigram --out {out}",
      setup=corpus_with("valid", b""), id="train-corpus-empty-valid"),
    R("train-lm", "train.txt:1: not valid UTF-8", "{bad_dir} --arch unigram --out {out}",
      setup=corpus_with("train", LATIN1), id="train-corpus-latin1"),
    R("train-lm", "train.txt:1: binary data (NUL bytes)", "{bad_dir} --arch kn5 --out {out}",
      setup=corpus_with("train", b"\x00\x01\x02garbage\n"), id="train-corpus-binary"),
]

#: issue 29: a failed --resume leaves OUT.partial exactly as it was (the matrix compares outs/ byte by byte)
RESUME_ROWS = [
    R("train-lm", "checkpoint.pt: unreadable checkpoint (not a file torch.save wrote, or damaged)",
      "{corpus} --arch lstm --size small --resume --out {out}", setup=partial_checkpoint(b"garbage" * 50),
      id="train-resume-garbage-checkpoint"),
    R("train-lm", "checkpoint.pt: unreadable checkpoint", "{corpus} --arch lstm --size small --resume --out {out}",
      setup=partial_checkpoint(b""), id="train-resume-empty-checkpoint"),
    R("train-lm", "checkpoint.pt: not a checkpoint of `agree train-lm`", "{corpus} --arch lstm --size small "
      "--resume --out {out}", setup=partial_checkpoint(lambda w: w.lstm / "model.pt"),
      id="train-resume-foreign-checkpoint"),
]

ROWS = out_rows() + EXTRACT + NONCE + CORPUS + TRAIN + SCORE + PERTURB + DEMO + NEW_COMMANDS + NUMBERS + MODELS \
    + ITEM_ROWS + TEXT_ROWS + RESUME_ROWS


@pytest.fixture
def workspace(base, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return Workspace(base, tmp_path)


@pytest.mark.parametrize("command, fragment, template, code, setup", ROWS)
def test_bad_input(workspace, base, command, fragment, template, code, setup):
    w = workspace
    before = tree_digest(base)
    if setup is not None:
        setup(w)
    beside = listing(w.outs)
    r = run_agree(command, *w.fill(template), "--quiet")
    output = r.output
    assert r.exit_code == code, output
    assert isinstance(r.exception, SystemExit), repr(r.exception)
    errors = [line for line in output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1, output
    assert fragment in errors[0], output
    assert "Traceback" not in output
    assert listing(w.outs) == beside, "something was left beside --out or a user file changed"
    assert (w.outs / "notes.txt").read_text() == USER_NOTE
    assert tree_digest(base) == before, "an input was changed"


def listing(directory: Path) -> dict[str, str]:
    """Every path under ``directory`` (hidden ones included) with its content digest."""
    return {str(p.relative_to(directory)): (hashlib.sha256(p.read_bytes()).hexdigest()
                                            if p.is_file() and not p.is_symlink() else "")
            for p in sorted(directory.rglob("*"))}


def test_matrix_size():
    counts = {}
    for row in ROWS:
        counts[row.values[0]] = counts.get(row.values[0], 0) + 1
    assert len(ROWS) >= 150 and set(counts) == set(PLAIN), counts


# --------------------------------------------------------------------------- warnings, not errors

@pytest.mark.parametrize("command, template, warning", [
    ("extract", "{tb} --min-count 1000 --out {out}", "Warning: no agreement items: "),
    ("corpus", "{text} --lang xx --out {out}", "Warning: the tokenizer has no rules for language 'xx'"),
    ("nonce", "{bad_dir} --out {out}", "the test set has no items, so there is nothing to vary"),
    ("perturb", "{bad_dir} --aspect swap --severity 0.5 --out {out}",
     "the test set has no items, so there is nothing to perturb"),
])
def test_suspicious_input_warns_and_says_why(workspace, command, template, warning):
    header_only(workspace)
    r = run_agree(command, *workspace.fill(template), "--quiet")
    assert r.exit_code == 0, r.output
    assert warning in r.stderr and "Error" not in r.output
    assert (workspace.out / "manifest.json").is_file()


# --------------------------------------------------------------------------- numbers at the edge

def _commands():
    """(name words, click command) of every command and subcommand of `agree`."""
    import click
    from agreement.cli import COMMANDS, cli
    out = []
    for name in COMMANDS:
        command = cli.get_command(None, name)
        subs = getattr(command, "commands", {}) if isinstance(command, click.Group) else {}
        out += [((name, sub), c) for sub, c in subs.items()] if subs else [((name,), command)]
    return out


def test_seed_minus_one_is_one_error_line_on_every_command_that_takes_it():
    """Every --seed, found by the commands' parameters (a new command is covered too)."""
    takes = [words for words, command in _commands() if any(p.name == "seed" for p in command.params)]
    assert {"demo", "score", "train-lm", "nonce", "corpus"} <= {w[0] for w in takes}
    for words in takes:
        r = run_agree(*words, "--seed", "-1")
        errors = [line for line in r.output.splitlines() if line.startswith("Error:")]
        assert r.exit_code == 2 and errors == [
            "Error: Invalid value for '--seed': -1 is not in the range 0 <= x <= 4294967295 (the seeds numpy "
            "and sentencepiece accept)"], (words, r.output)
        assert "Traceback" not in r.output


def test_every_numeric_option_has_a_range():
    """No numeric option is a bare int/float: each is an agreement.options.Number (NaN and
    infinity refused), and every integer has an upper bound (no 10**20 reaches the C code)."""
    import click
    from agreement.options import Number
    bare = []
    for words, command in _commands():
        for p in command.params:
            t = p.type
            numeric = isinstance(t, (click.types.IntParamType, click.types.FloatParamType, Number))
            if numeric and not (isinstance(t, Number) and (t.kind is float or t.max is not None)):
                bare.append(f"{' '.join(words)} {p.opts[0]}")
    assert bare == []


def test_identical_minimal_pairs_are_skipped_with_a_warning(workspace):
    """A BLiMP pair whose two sentences are the same tests nothing: it is skipped, and the
    skip is a warning even with --quiet (score and export), counted in the manifest."""
    w = workspace
    w.bad.write_text('{"sentence_good": "the dog runs .", "sentence_bad": "the dog run ."}\n'
                     '{"sentence_good": "the dog runs .", "sentence_bad": "the dog runs ."}\n')
    jsonl = w.bad.rename(w.tmp / "pairs.jsonl")
    for args in (("score", jsonl, "--model", w.uni), ("export", jsonl, "--format", "multiblimp")):
        out = w.tmp / f"out-{args[0]}"
        r = run_agree(*args, "--out", out, "--quiet")
        assert r.exit_code == 0, r.output
        assert "Warning: " in r.stderr and "1 pair(s) skipped: the two sentences are identical" in r.stderr
    manifest = json.loads((w.tmp / "out-score" / "manifest.json").read_text())
    assert manifest["counts"]["skipped"] == [f"{jsonl}: 1 pair(s) skipped: the two sentences are identical"]


def test_long_fields_are_read(workspace):
    """csv's 131,072-character field limit is raised: a sentence with a 200,000-character
    word is an item like any other (FIELD_LIMIT is the limit now, tested in the matrix)."""
    w = workspace
    make_extract_dir(w.bad_dir)
    items = list(read_items(w.bad_dir))
    first = items[0]
    long = ("x" * 200_000,) + first.tokens[1:]
    write_items(w.bad_dir / "items.tsv", [first.replace(tokens=long)] + items[1:])
    assert [it.tokens[0] for it in read_items(w.bad_dir)][0] == "x" * 200_000
    r = run_agree("export", w.bad_dir, "--format", "blimp", "--out", w.out, "--quiet")
    assert r.exit_code == 0, r.output


def test_no_size_runs_for_hours_without_saying_so(workspace, capsys):
    """Sizes that cannot fit are refused with an estimate (the matrix rows *-beyond-memory);
    sizes that fit but take long are said before the work starts: the steps training plans,
    the minutes a large nonce run needs."""
    from nonce.budget import check_nonce_size
    w = workspace
    r = run_agree("train-lm", w.corpus, "--arch", "lstm", "--size", "small", "--emb", "8", "--hidden", "8",
                  "--batch-size", "4", "--bptt", "8", "--threads", "1", "--epochs", "1000000000000000000",
                  "--max-steps", "3", "--out", w.out)
    assert r.exit_code == 0, r.output
    said = r.stderr.splitlines()[0]
    assert said.startswith("training ") and said.endswith(" tokens") and "3 steps (1e+18 epochs of " in said
    check_nonce_size(3000, 1000, w.items / "items.tsv", w.tmp)   # 3 million sentences: about 50 minutes
    assert capsys.readouterr().err == ("Warning: 3,000 items x 1,000 variants = 3,000,000 sentences will take "
                                       "about 50 minutes (at about 1,000 sentences/s)\n")
