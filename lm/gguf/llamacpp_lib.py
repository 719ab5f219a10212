"""llama-cpp-python itself, for :mod:`lm.gguf.llamacpp`: importing it (an optional
extra), routing its log away from stderr while keeping its error lines, and the
vocabulary's tokens that cannot continue a word."""
from __future__ import annotations

import ctypes

import numpy as np

from lm.errors import FieldError, literal

#: llama.cpp's error lines of the current load (the log callback must outlive any
#: scorer, so it is one module-level function, installed once)
LOG_ERRORS: list[str] = []
_LOG_CALLBACK = None
#: ASCII punctuation: a piece starting with one cannot continue a word (text as written)
_MARKS = tuple(bytes([c]) for c in b"!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def import_llama_cpp(path):
    """The ``llama_cpp`` module, or a clear error naming ``path`` and the extra to install."""
    try:
        # imported lazily: a compiled extension, optional (the `agree-bench[gguf]` extra)
        import llama_cpp
    except ImportError:
        raise FieldError(f"{literal(path)}: the llama.cpp engine needs llama-cpp-python: "
                         "pip install 'agree-bench[gguf]' (or use {engine} transformers)") from None
    return llama_cpp


def capture_log(lc) -> list[str]:
    """Route llama.cpp's log away from stderr, keeping its error lines; returns the
    (cleared) list they are collected in."""
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:
        @lc.llama_log_callback
        def _log(level, text, _user):
            if level == 3:  # GGML_LOG_LEVEL_ERROR
                LOG_ERRORS.append(text.decode("utf-8", "replace").strip())
        _LOG_CALLBACK = _log
        lc.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
    LOG_ERRORS.clear()
    return LOG_ERRORS


def word_start_mask(lc, vocab, n_vocab: int, punctuation: bool) -> np.ndarray:
    """Tokens that cannot continue a word: text starting with whitespace (or, with
    ``punctuation``, with a punctuation mark), or the end of the text."""
    buf = ctypes.create_string_buffer(256)
    mask = np.zeros(n_vocab, dtype=bool)
    marks = _MARKS if punctuation else ()
    for t in range(n_vocab):
        n = lc.llama_token_to_piece(vocab, t, buf, 256, 0, False)
        mask[t] = (n > 0 and buf.raw[:1] in (b" ", b"\n", b"\t", b"\r") + marks) \
            or bool(lc.llama_vocab_is_eog(vocab, t))
    return mask
