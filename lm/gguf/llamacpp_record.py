"""What a llama.cpp score run records about how it scored (:meth:`lm.gguf.llamacpp.LlamaCppScorer.conventions`):
the engine and file, the weights' and cache's types, the text and word-end conventions,
batching and whether the scores are batch invariant, threads and lanes, what was skipped."""
from __future__ import annotations

from lm.pieces import CONVENTIONS


def _threads_record(scorer) -> int | str:
    if scorer.lanes == 1:
        return scorer.threads
    return (f"{scorer.threads}: {scorer.lanes} lanes (contexts decoding rounds side by side) of "
            f"{scorer._cparams.n_threads} thread(s)")


def _weights_dtype(scorer) -> str:
    if not scorer.dtype:
        return "as stored"
    if scorer._copy is None:
        return f"{scorer.dtype} (as stored)"
    exact = ", exact" if scorer.dtype == "float32" else ""
    return f"{scorer.dtype} (a copy of the {scorer.info.quantization} weights made at load by llama.cpp's quantizer{exact})"


def conventions_record(scorer, sha256: str) -> dict:
    """How a :class:`lm.gguf.llamacpp.LlamaCppScorer` (``scorer``) scored: the record a score run
    keeps (:meth:`lm.base.Scorer.conventions`); ``sha256``: the GGUF file's."""
    return {
        "engine": "llama.cpp", "engine_version": f"llama-cpp-python {scorer._lc.__version__}",
        "file": scorer.path.name, "sha256": sha256,
        "architecture": scorer.info.architecture, "parameters": scorer.info.parameters,
        "quantization": scorer.info.quantization, "weights_dtype": _weights_dtype(scorer),
        "kv_cache": "float32" if scorer.dtype == "float32" else "float16",
        "logits_dtype": "float32", "attention": "flash attention off (fp32 softmax)",
        "log_softmax": "float32, full vocabulary (numpy)",
        "units": "natural log", "context": scorer.context,
        "bos_token": f"{scorer.bos} ({scorer.bos_source})",
        "bos_added": "once, by agree" if scorer.convention != "minicons" else "the tokenizer's own",
        "convention": scorer.convention, "text": CONVENTIONS[scorer.convention],
        "first_token": "every word including the first is scored after BOS"
                       if scorer.convention != "minicons" else "the first token conditions only",
        "word_end_correction": "target method: x P(next token cannot continue the word: starts "
                               "with whitespace" + (" or punctuation" if scorer.convention != "words"
                                                    else "") + ", or ends the text)",
        "sentence_method": "sum of piece log-probs after BOS, no EOS, no word-end factor",
        "ties": "undecidable (never counted correct)",
        "batch_size": scorer.batch_size, "share_prefix": scorer.share_prefix,
        "batch_invariant": "yes: one sequence per decode call, its scores depend on it alone"
                           if scorer.batch_size == 1 and not scorer.share_prefix else
                           "no: sequences decoded together move each other's scores (quantized kernels)",
        "threads": _threads_record(scorer), "n_ctx": scorer.n_ctx, "gpu_offload": scorer.gpu,
        "skipped_over_context": scorer.skipped, "skipped_unencodable": scorer.skipped_unencodable,
    }
