"""What the causal and masked Hugging Face scorers share (:class:`HFBase`), apart from
their loader (:mod:`lm.hf.load`), which builds them: the scorers import this module,
the loader imports the scorers, and nothing imports back."""
from __future__ import annotations

import contextlib
from typing import Sequence

from lm.base import Scorer
from lm.device import cpu_has_bf16, resolve_device
from lm.errors import FieldError, LMError
from lm.pieces import CONVENTIONS, DEFAULT, EncodingCache, check_convention



class HFBase(EncodingCache, Scorer):
    """What the causal and masked Hugging Face scorers share: device, dtype, threads,
    the text -> pieces step (:mod:`lm.pieces`, under the scorer's ``convention``) and
    the vocabulary questions.

    The tokenizer must be a fast (Rust) one: the text as written is tokenized once
    and its pieces are attributed to words by the character offsets that only fast
    tokenizers report.
    """

    def __init__(self, model, tokenizer, *, name: str, source: str, device: str, dtype: str,
                 batch_size: int, kind: str, sha256: str | None = None, convention: str = DEFAULT,
                 threads: int | None = None):
        if int(batch_size) < 1:
            raise FieldError(f"{{batch_size}} must be at least 1 (got {batch_size})")
        if threads is not None and int(threads) < 1:
            raise FieldError(f"{{threads}} must be at least 1 (got {threads})")
        self.kind, self.name, self.source, self.sha256 = kind, name, source, sha256
        self.convention = check_convention(convention)
        if self.convention != "words" and not getattr(tokenizer, "is_fast", False):
            raise LMError(f"{source}: the tokenizer ({type(tokenizer).__name__}) is a slow one "
                          "without character offsets, which scoring the text as written needs; "
                          "save the model with a fast tokenizer (tokenizer.json)")
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        self.tok = tokenizer
        self.dtype, self.batch_size = dtype, int(batch_size)
        self.threads = None if threads is None else int(threads)

        self._ids: dict[tuple[str, bool], tuple[int, ...]] = {}
        self._enc: dict = {}
        self.skipped_unencodable = 0

    # ---- threads -------------------------------------------------------------
    @contextlib.contextmanager
    def torch_threads(self):
        """torch's CPU threads set to ``threads`` while scoring (None: left as it is)."""
        import torch  # lazy: heavy; the scorers that use this have loaded it already

        if self.threads is None:
            yield
            return
        old = torch.get_num_threads()
        torch.set_num_threads(self.threads)
        try:
            yield
        finally:
            torch.set_num_threads(old)

    # ---- text -> pieces ------------------------------------------------------
    def tokenize(self, text: str, special: bool = False):
        """(ids, character offsets) of ``text``; ``special``: with the tokenizer's own
        special tokens (offsets (0, 0))."""
        try:
            enc = self.tok(text, add_special_tokens=special, return_offsets_mapping=special
                           or self.convention != "words")
        except Exception as e:  # noqa: BLE001 - tokenizers raise their own kinds (bad UTF-8 ...)
            raise LMError(f"{self.name}: the tokenizer cannot encode {text!r} ({e})") from None
        return enc["input_ids"], enc.get("offset_mapping") or [(0, 0)] * len(enc["input_ids"])

    #: the id the convention prepends (causal: BOS); None: nothing (masked models frame
    #: the pieces with the tokenizer's own special tokens)
    prepend: int | None = None

    def sentence_pieces(self, sentence: Sequence[str]) -> list[list[str]]:
        enc = self.try_encoded(sentence)
        if enc is None:
            return [[] for _ in sentence]
        return enc.word_pieces(len(sentence), lambda i: str(self.tok.convert_ids_to_tokens(i)))

    # ---- words (vocabulary questions, the ``words`` convention) ---------------
    def word_ids(self, word: str, first: bool = False) -> tuple[int, ...]:
        """The word's piece ids as word 0 (``first``) or as a later word."""
        key = (word, first)
        if key not in self._ids:
            try:
                ids = tuple(self.tok.encode(word if first else " " + word, add_special_tokens=False))
            except Exception as e:  # noqa: BLE001 - as in tokenize
                raise LMError(f"{self.name}: the tokenizer cannot encode {word!r} ({e})") from None
            if not ids:
                raise LMError(f"{self.name}: the tokenizer gives no piece for {word!r}")
            self._ids[key] = ids
        return self._ids[key]

    def word_pieces(self, word: str) -> list[str]:
        return list(self.tok.convert_ids_to_tokens(list(self.word_ids(word))))

    def in_vocab(self, word: str) -> bool:
        """No unknown piece in the word (byte-level BPE: always true)."""
        unk = self.tok.unk_token_id
        try:
            return unk is None or unk not in self.word_ids(word) or word == self.tok.unk_token
        except LMError:
            return False

    def _bf16_note(self) -> str:
        if self.dtype != "bfloat16" or self.device.type != "cpu":
            return ""
        native = cpu_has_bf16()
        return {True: " (native on this CPU)", False: " (emulated: this CPU has no bf16 "
                "instructions, so slower than float32)", None: ""}[native]

    def conventions(self) -> dict:
        import transformers  # lazy: heavy, and already loaded by the model's loader

        out = super().conventions()
        out.update({"engine": f"transformers {transformers.__version__}", "source": self.source,
                    "convention": self.convention, "text": CONVENTIONS[self.convention],
                    "dtype": f"{self.dtype} weights{self._bf16_note()}, fp32 output layer and log-softmax",
                    "batch_size": f"{self.batch_size} sequences per forward pass",
                    "threads": self.threads if self.threads is not None else "torch's default",
                    "skipped_unencodable": self.skipped_unencodable})
        if self.sha256:
            out["sha256"] = self.sha256
        return out
