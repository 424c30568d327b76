"""A LLaMA-style language model in the zoo: Hugging Face transformers'
LlamaForCausalLM with random weights (seeded), exported by torch.onnx's
torch.export-based exporter, the way today's PyTorch users export one. Its
graph has what decoder-only language models share: RMSNorm written out
(Pow, ReduceMean, Add, Sqrt, Reciprocal, Mul: the optimizer's fuse_rmsnorm
pass), rotary position embeddings, grouped-query attention under the causal
mask, SwiGLU feed-forward layers, and the logits of every position.

usage: llm.py ZOO_DIR

Writes ZOO_DIR/llama.onnx and its reference case through
make_references.write_case: 64 token ids drawn uniformly from the
vocabulary ("tokens" inputs), the logits compared as logits.
"""

import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

VOCAB = 2048
TOKENS = 64
SEED = 2027


def build():
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    config = LlamaConfig(vocab_size=VOCAB, hidden_size=256, intermediate_size=688,
                         num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4,
                         max_position_embeddings=4 * TOKENS, tie_word_embeddings=False)
    return LlamaForCausalLM(config).eval()


def make_wrapper(model):
    import torch

    class Logits(torch.nn.Module):
        """The logits alone: no key/value cache in or out."""

        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, input_ids):
            return self.m(input_ids=input_ids, use_cache=False).logits

    return Logits(model).eval()


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    zoo_dir = sys.argv[1]
    import torch

    from make_references import write_case
    from zoo_common import export

    model = make_wrapper(build())
    ids = torch.randint(0, VOCAB, (1, TOKENS), generator=torch.Generator().manual_seed(SEED))
    path = os.path.join(zoo_dir, "llama.onnx")
    export(model, (ids,), path, ["input_ids"], ["logits"], dynamo=True)
    write_case(zoo_dir, {
        "name": "llama", "model": "llama.onnx", "seed": 81,
        "inputs": {"input_ids": {"shape": [1, TOKENS], "content": "tokens", "vocab": VOCAB,
                                 "dtype": "int64"}},
        "outputs": {"logits": "logit"}})
    print(f"{path}: written")


if __name__ == "__main__":
    main()
