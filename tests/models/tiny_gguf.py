"""Write a tiny LLaMA-architecture GGUF model with random weights, for the inference-engine test.

2 layers, 64 dimensions, 4 heads, a SentencePiece-style vocabulary with byte fallback (any text
tokenizes, byte by byte where no piece fits) and a ChatML chat template. About 0.5 MB; llama.cpp
loads and runs it, and its answers are nonsense, which is the point: the runner's re-prompt and
"" paths get exercised by a real engine.
"""

from pathlib import Path

import numpy as np

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content']"
    " + '<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}"
    "{% endif %}"
)
PIECES = ["TRUE", "FALSE", "POSSIBLE", "IMPOSSIBLE", "the", "is", "of", "and", "to", "a", "in", "that"]


def vocabulary() -> tuple[list[str], list[float], list[int]]:
    """Return (tokens, scores, token types): specials, ChatML markers, 256 byte tokens, then pieces."""
    import gguf

    types = gguf.TokenType
    tokens = ["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]
    kinds = [types.UNKNOWN, types.CONTROL, types.CONTROL, types.CONTROL, types.CONTROL]
    tokens += [f"<0x{byte:02X}>" for byte in range(256)]
    kinds += [types.BYTE] * 256
    letters = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    letters += [letter.upper() for letter in letters]
    words = ["▁", *letters, *"0123456789.,?:", *[f"▁{piece}" for piece in PIECES]]
    tokens += words
    kinds += [types.NORMAL] * len(words)
    scores = [0.0] * (len(tokens) - len(words)) + [-float(i) for i in range(len(words))]
    return tokens, scores, [int(kind) for kind in kinds]


def write_tiny_llama(
    path: str | Path,
    seed: int = 0,
    n_embd: int = 64,
    n_layer: int = 2,
    n_head: int = 4,
    n_ff: int = 128,
    n_ctx: int = 4096,
) -> Path:
    """Write the model to ``path`` (weights from ``numpy.random.default_rng(seed)``) and return the path."""
    import gguf

    rng = np.random.default_rng(seed)
    tokens, scores, kinds = vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(n_ctx)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(n_layer)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(n_embd // n_head)
    writer.add_rope_freq_base(10000.0)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    writer.add_tokenizer_model("llama")  # SentencePiece (unigram scores, byte fallback)
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(kinds)
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(tokens.index("<|im_end|>"))
    writer.add_add_bos_token(True)
    writer.add_chat_template(CHATML)

    def weight(*shape: int) -> np.ndarray:  # numpy shape is GGML's reversed: (rows = outputs, inputs)
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    writer.add_tensor("token_embd.weight", weight(len(tokens), n_embd))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    writer.add_tensor("output.weight", weight(len(tokens), n_embd))
    for layer in range(n_layer):
        prefix = f"blk.{layer}."
        writer.add_tensor(prefix + "attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        for name in ("attn_q", "attn_k", "attn_v", "attn_output"):
            writer.add_tensor(prefix + name + ".weight", weight(n_embd, n_embd))
        writer.add_tensor(prefix + "ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(prefix + "ffn_gate.weight", weight(n_ff, n_embd))
        writer.add_tensor(prefix + "ffn_up.weight", weight(n_ff, n_embd))
        writer.add_tensor(prefix + "ffn_down.weight", weight(n_embd, n_ff))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return Path(path)
