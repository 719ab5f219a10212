"""The memory a neural model needs to train, estimated before anything is built.

``--layers 100000`` or ``--hidden 10000000`` would otherwise allocate until the
machine runs out (a traceback from deep inside torch, the kernel's OOM killer, or
minutes of building parameters that never fit). :func:`check_training_memory`
refuses such sizes first, with the estimate and the sizes that make it, spelled as
fields (:class:`lm.errors.FieldError`) so that the CLI names its options.

The estimate (float32 throughout, within a factor of about two):

- parameters P: embedding V x E, per LSTM layer 4H(in + H) + 8H, per transformer
  block 12H^2 + 13H, positions max_len x H, decoder H x V + V (none when tied);
- weights, their gradients and the optimizer's state: 4P bytes each (SGD keeps no
  state, Adam two moments);
- activations kept for backward: batch x bptt tokens, about 10H per LSTM layer and
  token, 16H plus 3 x heads x bptt attention values per transformer block and token;
- the softmax's logits block: the chunk of rows the fused loss holds at once, times V.
"""
from __future__ import annotations

from formats.resources import human_count, memory_shortfall, physical_memory
from lm.errors import FieldError

_FLOAT = 4
#: rows of logits the fused softmax holds at once on a CPU (lm.neural.softmax_loss: at least
#: MIN_ROWS, about CHUNK_ELEMENTS / V); a GPU holds every row of the batch
_CPU_LOGIT_ROWS = 512


def parameters(kind: str, vocab: int, emb: int, hidden: int, layers: int, max_len: int = 0,
               tied: bool = False) -> int:
    """Trainable parameters of an LMConfig's model (a tied weight counted once)."""
    decoder = vocab + (0 if tied else hidden * vocab)
    if kind == "lstm":
        body = 4 * hidden * (emb + hidden) + 8 * hidden + (layers - 1) * (4 * hidden * 2 * hidden + 8 * hidden)
        return vocab * emb + body + decoder
    project = emb * hidden if emb != hidden else 0
    blocks = layers * (12 * hidden * hidden + 13 * hidden)
    return vocab * emb + project + max_len * hidden + blocks + 2 * hidden + decoder


def training_bytes(config, options, vocab: int, on_gpu: bool = False) -> int:
    """Bytes to train ``config`` (an LMConfig) with ``options`` (TrainOptions) and a
    vocabulary of ``vocab`` entries: weights, gradients, optimizer state, activations."""
    c, o = config, options
    p = parameters(c.kind, vocab, c.emb_size, c.hidden_size, c.layers, c.max_len, c.tied)
    states = 2 + (2 if o.optimizer == "adam" else 0)
    tokens = o.batch_size * o.bptt
    if c.kind == "lstm":
        per_token = 10 * c.hidden_size * c.layers + 2 * c.emb_size
    else:
        per_token = c.layers * (16 * c.hidden_size + 3 * c.heads * o.bptt) + 2 * c.emb_size
    logit_rows = tokens if on_gpu else min(tokens, _CPU_LOGIT_ROWS)
    return _FLOAT * (states * p + tokens * per_token + 2 * logit_rows * vocab)


def check_training_memory(config, options, vocab: int, available: int | None = None,
                          on_gpu: bool = False, vocab_known: bool = True) -> None:
    """:class:`FieldError` when training cannot fit ``available`` bytes (default: this
    machine's RAM; with ``on_gpu``, pass the GPU's memory). ``vocab_known`` False:
    ``vocab`` is a lower bound (the vocabulary is not built yet), not quoted."""
    needed = training_bytes(config, options, vocab, on_gpu)
    short = memory_shortfall(needed, available, "the GPU" if on_gpu else "this machine")
    if short is None:
        return
    c, o = config, options
    n_params = parameters(c.kind, vocab, c.emb_size, c.hidden_size, c.layers, c.max_len, c.tied)
    sizes = (f"{{layers}} {c.layers}, {{hidden_size}} {c.hidden_size}, {{emb_size}} {c.emb_size}"
             + (f", {{max_len}} {c.max_len}, {{heads}} {c.heads}" if c.kind != "lstm" else "")
             + (f", a vocabulary of {human_count(vocab)}" if vocab_known else "")
             + f", {{batch_size}} {o.batch_size} x {{bptt}} {o.bptt}")
    raise FieldError(f"training this {c.kind} needs {short} ({human_count(n_params)} parameters"
                     f"{'' if vocab_known else ' without its vocabulary'}, with their gradients, the "
                     f"optimizer's state and the activations; {sizes}); choose smaller sizes")


def device_memory(device) -> tuple[int, bool]:
    """(bytes of memory, is a GPU) of a torch.device: the GPU's own memory for CUDA,
    this machine's RAM otherwise."""
    if getattr(device, "type", "cpu") == "cuda":
        import torch  # lazy: heavy; only a CUDA device is asked (the caller has torch loaded)

        return int(torch.cuda.get_device_properties(device).total_memory), True
    return physical_memory(), False
