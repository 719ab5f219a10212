"""Our neural language models (a word-level LSTM, a small causal transformer): the
models, their training loop (single process or torchrun), checkpoints, the fused softmax,
the memory estimate, the scorer, and the importer of the paper's released LSTMs.
torch is imported by the modules that need it, never by this package."""
