"""What the causal and masked Hugging Face scorers share (:class:`HFBase`), apart from
their loader (:mod:`lm.hf_load`), which builds them: the scorers import this module,
the loader imports the scorers, and nothing imports back."""
from __future__ import annotations

from lm.base import Scorer
from lm.device import resolve_device
from lm.errors import FieldError, LMError


class HFBase(Scorer):
    """What the causal and masked Hugging Face scorers share: device, dtype, the
    words -> pieces convention and the vocabulary questions.

    Words -> pieces: a sentence's words are joined by single spaces; word 0 is
    encoded alone, word i > 0 as ``" " + word`` (``add_special_tokens=False``), so
    a word's pieces are exactly its own encoding (no merge crosses a word).
    """

    def __init__(self, model, tokenizer, *, name: str, source: str, device: str, dtype: str,
                 batch_size: int, kind: str, sha256: str | None = None):
        if int(batch_size) < 1:
            raise FieldError(f"{{batch_size}} must be at least 1 (got {batch_size})")
        self.kind, self.name, self.source, self.sha256 = kind, name, source, sha256
        self.device = resolve_device(device)
        self.model = model.to(self.device).eval()
        self.tok = tokenizer
        self.dtype, self.batch_size = dtype, int(batch_size)
        self._ids: dict[tuple[str, bool], tuple[int, ...]] = {}

    def word_ids(self, word: str, first: bool = False) -> tuple[int, ...]:
        """The word's piece ids as word 0 (``first``) or as a later word."""
        key = (word, first)
        if key not in self._ids:
            ids = tuple(self.tok.encode(word if first else " " + word, add_special_tokens=False))
            if not ids:
                raise LMError(f"{self.name}: the tokenizer gives no piece for {word!r}")
            self._ids[key] = ids
        return self._ids[key]

    def sentence_ids(self, words) -> list[tuple[int, ...]]:
        return [self.word_ids(w, i == 0) for i, w in enumerate(words)]

    def word_pieces(self, word: str) -> list[str]:
        return list(self.tok.convert_ids_to_tokens(list(self.word_ids(word))))

    def in_vocab(self, word: str) -> bool:
        """No unknown piece in the word (byte-level BPE: always true)."""
        unk = self.tok.unk_token_id
        return unk is None or unk not in self.word_ids(word) or word == self.tok.unk_token

    def conventions(self) -> dict:
        import transformers  # lazy: heavy, and already loaded by the model's loader

        out = super().conventions()
        out.update({"engine": f"transformers {transformers.__version__}", "source": self.source,
                    "dtype": f"{self.dtype} weights, fp32 log-softmax",
                    "batch_size": f"{self.batch_size} sequences per forward pass",
                    "pieces": "words joined by single spaces; word i>0 encoded as ' '+word, "
                              "without special tokens"})
        if self.sha256:
            out["sha256"] = self.sha256
        return out
