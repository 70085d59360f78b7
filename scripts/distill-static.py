#!/usr/bin/env python3
"""Distils `static-v1`'s token table from all-MiniLM-L6-v2 (the model2vec recipe), and writes the
tokenizer parity cases the Rust tests read.

    bash scripts/distill-static.sh            # creates target/distill-venv, then runs this
    target/distill-venv/bin/python scripts/distill-static.py [--out FILE] [--parity FILE] [--check]

Regenerating: run the command above. It rewrites crates/memloom-core/data/static-v1.bin,
crates/memloom-core/src/embed/bert_chars.rs (the tokenizer's character classes, probed from
`tokenizers`) and tests/golden/wordpiece.json. The table is a versioned contract (stores record `static-v1` and
refuse any other embedder): if the bytes change, bump the embedder's version in
crates/memloom-core/src/embed/static_v1.rs, never regenerate silently. `--check` recomputes
everything and fails unless it equals the committed files (the forward pass is float math in
numpy, so another BLAS could in principle move a value by one quantisation step; the committed
file is the contract, this script documents how it was made).

The recipe (model2vec, MinishLab; learnt from its distill code, not copied):
1. Every WordPiece token of the model's vocabulary from id 999 (`!`) on goes through the model
   as its own input, `[CLS] token [SEP]` (ids, not text, so `##ing` is the subword itself), and
   the output is mean-pooled over the three positions and L2-normalised: exactly what
   sentence-transformers computes for a one-token input (evals/minilm/server.py's forward pass,
   imported). Ids below 999 are [PAD], [unusedN], [UNK], [CLS], [SEP] and [MASK]: the tokenizer
   never emits them inside a text except [UNK], which gets no row (the hash half covers what
   WordPiece cannot spell).
2. PCA to 256 dimensions (centre, eigenvectors of the covariance, largest first, each
   eigenvector's sign fixed so its largest-magnitude component is positive).
3. SIF weighting from Zipf's law over vocabulary rank: the token of rank r (r = 1 for id 999)
   gets p(r) = (1/(r+1)) / sum_k (1/(k+1)) and its row is multiplied by 1e-4 / (1e-4 + p(r)).
   BERT's vocabulary is roughly frequency-ordered, so "the" weighs ~0.01 and rare words ~1.
4. Quantisation, per row: q = round(row / s) as int8 with s = max|row| / 127, and the row's
   scale as a 16-bit fixed-point weight w = round(65535 * s / max_rows(s)) (only ratios matter:
   the sentence vector is normalised).

File layout (little-endian), 48-byte header then three sections:
    0  8  magic b"MLSTATIC"
    8  4  u32 format version (1)
   12  4  u32 dims (256)
   16  4  u32 vocabulary size V (30522)
   20  4  u32 first id with a row F (999); rows cover ids F..V-1
   24  4  u32 [UNK] id (100)
   28  4  u32 vocabulary section length in bytes
   32  8  u64 XXH64 (seed 0) of every byte after the header
   40  8  reserved, zero
   48     vocabulary: the V tokens in id order, UTF-8, each followed by "\\n"
          weights: V-F u16
          rows: (V-F) * dims int8, row-major

Attribution: all-MiniLM-L6-v2 by sentence-transformers (Apache-2.0); see NOTICE.
"""
import argparse
import json
import os
import random
import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "evals" / "minilm"))
import server  # noqa: E402  (sets one BLAS thread before numpy loads)

import numpy as np  # noqa: E402
import xxhash  # noqa: E402

MAGIC = b"MLSTATIC"
FORMAT_VERSION = 1
DIMS = 256
FIRST_ID = 999
SIF_COEFFICIENT = 1e-4
HEADER = 48


def token_vectors(model, first, vocab_size, batch=512):
    """(V-first, 384) float32: each token's one-token sentence embedding."""
    ids = np.arange(first, vocab_size, dtype=np.int64)
    out = np.zeros((len(ids), model.dims), dtype=np.float32)
    for i in range(0, len(ids), batch):
        chunk = ids[i:i + batch]
        inp = np.stack([np.full_like(chunk, 101), chunk, np.full_like(chunk, 102)], axis=1)
        out[i:i + batch] = model._forward(inp, np.ones_like(inp))
        print(f"\rforward {i + len(chunk)}/{len(ids)}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


def pca(x, dims):
    x = x.astype(np.float64)
    x = x - x.mean(0)
    cov = x.T @ x / len(x)
    vals, vecs = np.linalg.eigh(cov)
    order = np.argsort(vals)[::-1][:dims]
    vecs = vecs[:, order]
    signs = np.sign(vecs[np.abs(vecs).argmax(0), np.arange(dims)])
    vecs *= signs
    explained = vals[order].sum() / vals.sum()
    return x @ vecs, explained


def sif_weights(n):
    inv_rank = 1.0 / np.arange(2, n + 2, dtype=np.float64)
    p = inv_rank / inv_rank.sum()
    return SIF_COEFFICIENT / (SIF_COEFFICIENT + p)


def quantise(rows):
    s = np.abs(rows).max(1)
    s[s == 0] = 1.0
    q = np.clip(np.rint(rows / s[:, None] * 127.0), -127, 127).astype(np.int8)
    w = np.rint(65535.0 * s / s.max()).astype(np.uint16)
    w[w == 0] = 1
    return q, w


def build(model, vocab):
    vecs = token_vectors(model, FIRST_ID, len(vocab))
    red, explained = pca(vecs, DIMS)
    print(f"PCA {model.dims} -> {DIMS}: {explained:.3f} of the variance kept", file=sys.stderr)
    rows = red * sif_weights(len(red))[:, None]
    q, w = quantise(rows)
    blob = "".join(t + "\n" for t in vocab).encode("utf-8")
    body = blob + w.astype("<u2").tobytes() + q.tobytes()
    header = MAGIC + struct.pack("<6I", FORMAT_VERSION, DIMS, len(vocab), FIRST_ID, vocab.index("[UNK]"), len(blob))
    header += struct.pack("<Q", xxhash.xxh64(body, seed=0).intdigest()) + bytes(8)
    assert len(header) == HEADER
    return header + body, q, w


# Character tables ---------------------------------------------------------------------------
def ranges(cps):
    out = []
    for cp in cps:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def char_tables():
    """The character classes of `tokenizers`' BertNormalizer and BertPreTokenizer, probed one
    code point at a time from the library itself, so that the Rust tokenizer follows its
    Unicode tables (older than the Rust standard library's) and no toolchain update can move a
    vector."""
    import tokenizers
    from tokenizers import normalizers as N, pre_tokenizers as P

    def norm(**kw):
        base = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        return N.BertNormalizer(**{**base, **kw})

    clean, cjk, strip, lower = norm(clean_text=True), norm(handle_chinese_chars=True), norm(strip_accents=True), norm(lowercase=True)
    pre = P.BertPreTokenizer()
    removed, space, chinese, stripped, punct, lowercase = [], [], [], [], [], []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        c = chr(cp)
        probe = "a" + c + "b"
        got = clean.normalize_str(probe)
        if got == "ab":
            removed.append(cp)
        elif got == "a b":
            space.append(cp)
        if cjk.normalize_str(probe) == "a " + c + " b":
            chinese.append(cp)
        if strip.normalize_str(c) == "":
            stripped.append(cp)
        if [w for w, _ in pre.pre_tokenize_str(probe)] == ["a", c, "b"]:
            punct.append(cp)
        low = lower.normalize_str(c)
        if low != c:
            lowercase.append((cp, low))
    lines = [
        f"//! Generated by scripts/distill-static.py from Hugging Face tokenizers {tokenizers.__version__}",
        "//! (BertNormalizer / BertPreTokenizer probed one code point at a time); do not edit.",
        "//! Ranges are inclusive and sorted.",
        "",
    ]
    for name, doc, cps in [
        ("REMOVED", "Dropped by clean_text (NUL, U+FFFD, controls and format characters).", removed),
        ("WHITESPACE", "Turned into a space by clean_text.", space),
        ("CHINESE", "Ideographs that get a space on both sides.", chinese),
        ("STRIPPED", "Removed after NFD by strip_accents (nonspacing marks).", stripped),
        ("PUNCTUATION", "Split off as words of their own by the pre-tokenizer.", punct),
    ]:
        rs = ranges(cps)
        lines.append(f"/// {doc}")
        lines.append(f"pub(super) const {name}: &[(u32, u32)] = &[")
        lines += [f"    (0x{a:X}, 0x{b:X})," for a, b in rs]
        lines.append("];")
    lines.append("/// Characters whose lowercase differs from themselves, sorted by code point. Test-only: the")
    lines.append("/// tokenizer lowercases with `char::to_lowercase`, which a test checks against this table for")
    lines.append("/// every code point (the table cost the edge worker 6 KB gzipped).")
    lines.append("#[cfg(test)]")
    lines.append("pub(super) const LOWERCASE: &[(u32, &str)] = &[")
    for cp, low in lowercase:
        esc = "".join(f"\\u{{{ord(ch):X}}}" for ch in low)
        lines.append(f'    (0x{cp:X}, "{esc}"),')
    lines.append("];")
    print(f"tables: {len(removed)} removed, {len(space)} whitespace, {len(chinese)} CJK, {len(stripped)} stripped, "
          f"{len(punct)} punctuation, {len(lowercase)} lowercased", file=sys.stderr)
    return "\n".join(lines) + "\n"


# Parity cases -------------------------------------------------------------------------------
def parity_texts(seed=12):
    """A few thousand varied strings: repository prose and code, and generated mixes of the
    classes the BERT normaliser treats specially (accents, CJK, punctuation of many scripts,
    controls, format characters, odd spaces, long words, fullwidth forms, emoji)."""
    rnd = random.Random(seed)
    texts = []
    sources = sorted((ROOT / "docs").glob("*.md")) + sorted((ROOT / "tests" / "fixtures" / "nodejs").glob("*.md"))
    sources += [ROOT / "README.md", ROOT / "crates" / "memloom-core" / "src" / "embed" / "features.rs"]
    for p in sources:
        lines = [ln for ln in p.read_text(encoding="utf-8").splitlines() if ln.strip()]
        texts += rnd.sample(lines, min(len(lines), 150))
    pieces = [
        "ERR_REQUIRE_ESM", "pg_hba.conf", "readFileSync", "HTTPServer", "--dry-run", "x=1;y=2",
        "café", "naïve", "Größe", "Ångström", "résumé", "São Paulo", "Dvořák", "İstanbul", "ǅ", "ß",
        "日本語", "中文字符", "한국어", "ｆｕｌｌｗｉｄｔｈ", "ＥＲＲ＿ＲＥＱＵＩＲＥ", "𠀀𠀁", "ﬁ", "½", "²", "Ⅻ",
        "привет мир", "Ελληνικά", "עברית", "العربية", "हिन्दी", "ไทย", "emoji 🎉👍🏽", "👨‍👩‍👧",
        "a\u0301", "e\u0308\u0304", "\u00ad", "zero\u200bwidth", "\ufeffbom", "nb\u00a0sp", "tab\there",
        "line\r\nbreak", "ctrl\x01\x07\x1f", "\x7f", "\ufffd", "\u2028sep", "em\u2014dash", "“quotes”",
        "¿qué?", "¡hola!", "«guillemets»", "【brackets】", "…", "§5", "©", "™", "$100", "50%",
        "C++", "C#", "a.b.c", "don't", "it's", "O'Neil", "e-mail", "3.14", "1,000,000", "v1.2.3-rc1",
        "x" * 99, "y" * 100, "z" * 101, "supercalifragilisticexpialidocious" * 3, "ǆemal", "ℌilbert",
        "\U000e0041tag", "\u0378", "\ue000private", "\U0010fffd", "\u0600arabic", "\u180e", "\u3000ideo",
    ]
    for _ in range(1500):
        n = rnd.randint(1, 6)
        sep = rnd.choice([" ", "", "  ", "\n", "-", "_", ".", "/"])
        texts.append(sep.join(rnd.choice(pieces) for _ in range(n)))
    # random code points from the whole plane, some of them unassigned or surrogates-adjacent
    for _ in range(800):
        cs = []
        for _ in range(rnd.randint(1, 12)):
            r = rnd.random()
            if r < 0.4:
                cs.append(chr(rnd.randint(0x20, 0x7e)))
            elif r < 0.8:
                cs.append(chr(rnd.randint(0xa0, 0x2fff)))
            elif r < 0.95:
                cs.append(chr(rnd.randint(0x3000, 0xffef)))
            else:
                cp = rnd.randint(0x10000, 0x10ffff)
                cs.append(chr(cp))
        t = "".join(c for c in cs if not 0xd800 <= ord(c) <= 0xdfff)
        texts.append(t)
    seen, out = set(), []
    for t in texts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


def parity(model, q, w, vocab, n_sums=60):
    tok = model.tok
    tok.no_truncation()
    texts = parity_texts()
    cases = []
    for i, t in enumerate(texts):
        ids = tok.encode(t, add_special_tokens=False).ids
        case = {"text": t, "ids": ids}
        if i % (len(texts) // n_sums) == 0:
            # The static half's integer accumulator (spec step 3), computed here independently
            # of the Rust code: sum over tokens with a row of w[id] * q[id].
            acc = [0] * DIMS
            for tid in ids:
                if tid >= FIRST_ID:
                    r = tid - FIRST_ID
                    wr = int(w[r])
                    row = q[r]
                    for d in range(DIMS):
                        acc[d] += wr * int(row[d])
            case["acc"] = acc
        cases.append(case)
    unk = vocab.index("[UNK]")
    n_unk = sum(1 for c in cases if unk in c["ids"])
    print(f"parity: {len(cases)} texts, {sum(len(c['ids']) for c in cases)} tokens, {n_unk} with [UNK], "
          f"{sum(1 for c in cases if 'acc' in c)} with accumulators", file=sys.stderr)
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=str(ROOT / "crates/memloom-core/data/static-v1.bin"))
    ap.add_argument("--parity", default=str(ROOT / "tests/golden/wordpiece.json"))
    ap.add_argument("--tables", default=str(ROOT / "crates/memloom-core/src/embed/bert_chars.rs"))
    ap.add_argument("--check", action="store_true", help="fail unless the outputs equal the committed files")
    a = ap.parse_args()
    model = server.MiniLM(server.find_model_dir())
    vocab_json = json.loads((server.find_model_dir() / "tokenizer.json").read_text())["model"]["vocab"]
    vocab = sorted(vocab_json, key=vocab_json.get)
    assert [vocab_json[t] for t in vocab] == list(range(len(vocab))), "vocabulary ids are not 0..V-1"
    assert vocab[FIRST_ID] == "!" and all(t.startswith("[") for t in vocab[:FIRST_ID])
    data, q, w = build(model, vocab)
    tables = char_tables()
    cases = parity(model, q, w, vocab)
    par = json.dumps(cases, ensure_ascii=False, separators=(",", ":")).replace('},{"text"', '},\n{"text"') + "\n"
    if a.check:
        ok = (Path(a.out).read_bytes() == data and Path(a.parity).read_text(encoding="utf-8") == par
              and Path(a.tables).read_text(encoding="utf-8") == tables)
        print("distill-static --check: " + ("identical" if ok else "DIFFERENT from the committed files"))
        return 0 if ok else 1
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_bytes(data)
    Path(a.parity).write_text(par, encoding="utf-8")
    Path(a.tables).write_text(tables, encoding="utf-8")
    print(f"wrote {a.out} ({len(data)} bytes) and {a.parity} ({len(par.encode())} bytes)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
