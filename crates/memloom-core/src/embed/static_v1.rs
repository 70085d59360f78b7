//! `static-v1`: a static embedding model distilled from all-MiniLM-L6-v2, joined with
//! `hash-v1`'s exact-word and identifier features in one vector.
//!
//! A static model is a table with one vector per WordPiece token; a text's vector is the sum of
//! its tokens' rows. It keeps much of the model's sense of meaning ("scratch folder" is near
//! "temporary directory") at the cost of a table lookup per token, but WordPiece breaks
//! identifiers apart (`ERR_REQUIRE_ESM` is nine tokens), which hash-v1's features keep whole.
//! Half of each vector's components are one, half the other; the version sets their weights
//! (step 4), so the cosine of two texts is `a * static cosine + (1 - a) * hash-v1 cosine`:
//! - `static-v1`: `a = 1/2`;
//! - `static-v2`: `a = 2/3`, the same table and tokenizer. In recall the keyword arm already
//!   votes for exact words, so the vector arm's worth is the meaning the static half carries;
//!   at 1/2 its hash half made it a second, weaker keyword arm, and the fused results followed
//!   its word matches (docs/EVAL.md, "static-v2"). The hash half stays, at a third, for what
//!   WordPiece cannot keep whole (identifiers).
//!
//! The table (`crates/memloom-core/data/static-v1.bin`, ~7.8 MB) is not compiled in: the
//! caller passes its bytes to [`StaticModel::from_bytes`] (the npm package ships it as a file
//! loaded at init; a wasm module that must stay small does not carry it).
//! `scripts/distill-static.py` made it and documents the recipe and the file layout; the
//! layout is checked here (magic, format, sizes, XXH64 of the body).
//!
//! # The algorithm, precisely (version 1)
//! 1. **Tokenize** with BERT's uncased WordPiece, exactly as Hugging Face `tokenizers` does for
//!    all-MiniLM-L6-v2 (`embed/wordpiece.rs`): drop control and format characters, whitespace
//!    to spaces, spaces around CJK ideographs, NFD without nonspacing marks, lowercase; split at
//!    whitespace and around punctuation; greedy longest-match WordPiece (`##` continuations;
//!    a word of more than 100 characters, or one that cannot be spelled, is `[UNK]`). No
//!    `[CLS]` / `[SEP]`, no truncation.
//! 2. **Look up** each token id `t >= F` (the table's first id with a row, 999): its int8 row
//!    `q[t]` (256 values in -127..=127) and its u16 weight `w[t]`. Ids below `F` (`[UNK]`)
//!    contribute nothing.
//! 3. **Sum in integers**: `acc[d] = sum over tokens of w[t] * q[t][d]` in `i64` (exact, so the
//!    order of addition does not matter).
//! 4. **Static half**: when some `acc[d] != 0`, `n = sqrt(f64(sum of acc[d]^2 computed exactly
//!    in i128))` and component `d` is `f32((f64(acc[d]) / n) * S)`; otherwise the static half
//!    is 256 zeros. `S` is the version's static weight: `FRAC_1_SQRT_2` (v1) or
//!    `0.816496580927726` (v2: the f64 nearest `sqrt(2/3)`).
//! 5. **Hash half**: `h = hash-v1(text)` (`embed/mod.rs`); component `256 + d` is
//!    `f32(f64(h[d]) * H)`, or `h[d]` itself when the static half is zero (so every vector has
//!    unit length). `H`: `FRAC_1_SQRT_2` (v1) or `0.5773502691896257` (v2: nearest `sqrt(1/3)`).
//!
//! Every step is integer arithmetic or a single IEEE 754 operation (division, multiplication,
//! square root, rounding to `f32`), all correctly rounded, so the vector is bit-identical on
//! every platform.

use std::f64::consts::FRAC_1_SQRT_2;

use xxhash_rust::xxh64::xxh64;

use super::wordpiece::WordPiece;
use super::{embed as hash_v1, EmbedderInfo, HASH_V1_DIMS};
use crate::Error;

/// Dimensions of the static half (the table's row length).
pub const STATIC_DIMS: usize = 256;

/// Dimensions of a `static-v1` vector: the static half, then the hash-v1 half.
pub const STATIC_V1_DIMS: usize = STATIC_DIMS + HASH_V1_DIMS;

/// The distilled offline embedder, its halves weighed 1:1.
pub const STATIC_V1: EmbedderInfo = EmbedderInfo {
    name: "static",
    version: 1,
    dims: STATIC_V1_DIMS,
};

/// The same table and tokenizer, the static half weighed 2:1 over hash-v1's (same dimensions).
pub const STATIC_V2: EmbedderInfo = EmbedderInfo {
    name: "static",
    version: 2,
    dims: STATIC_V1_DIMS,
};

/// A version of the static embedder: one table, one tokenizer, the halves weighed differently
/// (step 4 and 5 of the module doc). A store records its version and never mixes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StaticVersion {
    /// `static-v1`: static and hash-v1 halves 1:1.
    V1,
    /// `static-v2`: static and hash-v1 halves 2:1.
    V2,
}

impl StaticVersion {
    /// Every version, oldest first.
    pub const ALL: [StaticVersion; 2] = [StaticVersion::V1, StaticVersion::V2];

    /// Its identity (`static-v1`, `static-v2`).
    pub fn info(self) -> EmbedderInfo {
        match self {
            StaticVersion::V1 => STATIC_V1,
            StaticVersion::V2 => STATIC_V2,
        }
    }

    /// The version a store records as `(name "static", version)`, if there is one.
    pub fn from_version(version: u32) -> Option<StaticVersion> {
        StaticVersion::ALL
            .into_iter()
            .find(|v| v.info().version == version)
    }

    /// The static half's and the hash half's multipliers; their squares sum to 1.
    fn half_weights(self) -> (f64, f64) {
        match self {
            StaticVersion::V1 => (FRAC_1_SQRT_2, FRAC_1_SQRT_2),
            StaticVersion::V2 => (0.816_496_580_927_726, 0.577_350_269_189_625_7),
        }
    }
}

/// Token occurrences summed in `i32` before carrying into `i64`: each adds at most
/// `65535 * 128` to a component, and `255 * 65535 * 128 < 2^31`.
const I32_BLOCK: u32 = 255;

fn flush(acc: &mut [i64; STATIC_DIMS], block: &mut [i32; STATIC_DIMS]) {
    for (a, b) in acc.iter_mut().zip(block.iter_mut()) {
        *a += i64::from(*b);
        *b = 0;
    }
}

const MAGIC: &[u8; 8] = b"MLSTATIC";
const FORMAT_VERSION: u32 = 1;
const HEADER_LEN: usize = 48;

/// The vocabulary of a table without its rows: what a runtime needs to tokenize (step 1) when
/// the rows live elsewhere. The edge worker keeps them in PostgreSQL
/// (sql/memloom/13_static_table.sql), reads those of a query's tokens, and sums and finishes
/// with [`accumulate_rows`] and [`finish`], so its vectors are the same bits as
/// [`StaticModel::embed`]'s.
pub struct StaticTokenizer {
    wordpiece: WordPiece,
}

impl StaticTokenizer {
    /// `vocabulary`: the table's tokens in id order, one per line; `unk`: the `[UNK]` id.
    pub fn from_vocabulary(vocabulary: &str, unk: u32) -> StaticTokenizer {
        StaticTokenizer {
            wordpiece: WordPiece::new(vocabulary.split('\n'), unk),
        }
    }

    /// The WordPiece ids of `text` (step 1), without `[CLS]` / `[SEP]`.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        let mut ids = Vec::with_capacity(text.len() / 3);
        self.wordpiece.tokenize(text, &mut ids);
        ids
    }
}

/// The checksum in the header of the table this code was built and tested with
/// (`crates/memloom-core/data/static-v1.bin`, XXH64 of its body): a table with another one is
/// another model, so a runtime that reads the rows from a database compares it first.
pub const STATIC_V1_TABLE_CHECKSUM: u64 = 0xc41f_7733_8f15_24de;

/// Steps 2 and 3 with the rows from anywhere: `row(id)` gives token `id`'s weight and int8 row,
/// `None` when it has none (it then adds nothing). Exact: integer sums, so their order does not
/// matter, and each distinct token's row is added once, times its count (a chunk of the Node docs
/// has about 200 tokens but 70 distinct ones: a third of the multiply-adds, which in WebAssembly
/// without SIMD were most of the embedding). Summed in `i32` blocks of [`I32_BLOCK`] occurrences
/// (which cannot overflow and vectorise) carried into `i64`; a token occurring more often than
/// a block holds goes straight into `i64`. The edge worker reads the rows of a query's tokens
/// from the store (`memloom_static_rows`).
pub fn accumulate_rows<'a>(
    ids: &[u32],
    row: impl Fn(u32) -> Option<(u16, &'a [i8; STATIC_DIMS])>,
) -> [i64; STATIC_DIMS] {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    let mut acc = [0i64; STATIC_DIMS];
    let mut block = [0i32; STATIC_DIMS];
    let mut in_block = 0;
    for run in sorted.chunk_by(|a, b| a == b) {
        let Some((w, row)) = row(run[0]) else {
            continue;
        };
        let count = run.len() as u32;
        if count > I32_BLOCK {
            let m = i64::from(w) * i64::from(count);
            for (a, &q) in acc.iter_mut().zip(row) {
                *a += m * i64::from(q);
            }
            continue;
        }
        if in_block + count > I32_BLOCK {
            flush(&mut acc, &mut block);
            in_block = 0;
        }
        // w * count <= 65535 * 255, times |q| <= 128: below 2^31.
        let m = i32::from(w) * count as i32;
        for (b, &q) in block.iter_mut().zip(row) {
            *b += m * i32::from(q);
        }
        in_block += count;
    }
    flush(&mut acc, &mut block);
    acc
}

/// Steps 4 and 5: the vector of `text` from its integer sums `acc` (step 3), weighed as
/// `version` does.
pub fn finish(acc: &[i64; STATIC_DIMS], text: &str, version: StaticVersion) -> Vec<f32> {
    let (static_w, hash_w) = version.half_weights();
    let hash = hash_v1(text);
    let mut out = Vec::with_capacity(STATIC_V1_DIMS);
    let sum_sq: i128 = acc.iter().map(|&a| i128::from(a) * i128::from(a)).sum();
    if sum_sq == 0 {
        out.resize(STATIC_DIMS, 0.0);
        out.extend_from_slice(&hash);
        return out;
    }
    let norm = (sum_sq as f64).sqrt();
    out.extend(acc.iter().map(|&a| ((a as f64 / norm) * static_w) as f32));
    out.extend(hash.iter().map(|&h| (f64::from(h) * hash_w) as f32));
    out
}

/// A loaded token table with its tokenizer.
pub struct StaticModel {
    tokenizer: StaticTokenizer,
    checksum: u64,
    first_id: u32,
    weights: Vec<u16>,
    rows: Vec<i8>,
}

impl StaticModel {
    /// Parses and checks a table (`static-v1.bin`); copies what it keeps.
    pub fn from_bytes(bytes: &[u8]) -> Result<StaticModel, Error> {
        let bad = |what: &str| {
            Error::invalid_data(format!(
                "static-v1 table: {what}; use crates/memloom-core/data/static-v1.bin as shipped \
                 (regenerate it with scripts/distill-static.sh)"
            ))
        };
        if bytes.len() < HEADER_LEN || &bytes[..8] != MAGIC {
            return Err(bad("not a static embedding table (bad magic)"));
        }
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
        let version = u32_at(8);
        if version != FORMAT_VERSION {
            return Err(bad(&format!(
                "format version {version}, expected {FORMAT_VERSION}"
            )));
        }
        let dims = u32_at(12) as usize;
        if dims != STATIC_DIMS {
            return Err(bad(&format!(
                "expected {STATIC_DIMS} dimensions, not {dims}"
            )));
        }
        let (vocab_size, first_id, unk) = (u32_at(16), u32_at(20), u32_at(24));
        let vocab_len = u32_at(28) as usize;
        let checksum = u64::from_le_bytes(bytes[32..40].try_into().unwrap());
        let body = &bytes[HEADER_LEN..];
        if first_id > vocab_size || unk >= first_id {
            return Err(bad(&format!(
                "inconsistent ids (vocabulary {vocab_size}, first row {first_id}, [UNK] {unk})"
            )));
        }
        let rows = (vocab_size - first_id) as usize;
        let expected = vocab_len + rows * 2 + rows * dims;
        if body.len() != expected {
            return Err(bad(&format!(
                "{} bytes after the header, expected {expected} (truncated?)",
                body.len()
            )));
        }
        if xxh64(body, 0) != checksum {
            return Err(bad("checksum mismatch (corrupted)"));
        }
        let vocab =
            std::str::from_utf8(&body[..vocab_len]).map_err(|_| bad("vocabulary is not UTF-8"))?;
        let tokens = vocab
            .strip_suffix('\n')
            .ok_or_else(|| bad("vocabulary does not end in a newline"))?;
        if tokens.split('\n').count() != vocab_size as usize {
            return Err(bad("vocabulary size differs from the header"));
        }
        let tokenizer = StaticTokenizer::from_vocabulary(tokens, unk);
        let weights = body[vocab_len..vocab_len + rows * 2]
            .chunks_exact(2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .collect();
        let rows = body[vocab_len + rows * 2..]
            .iter()
            .map(|&b| b as i8)
            .collect();
        Ok(StaticModel {
            tokenizer,
            checksum,
            first_id,
            weights,
            rows,
        })
    }

    /// The WordPiece ids of `text` (step 1), without `[CLS]` / `[SEP]`.
    pub fn tokenize(&self, text: &str) -> Vec<u32> {
        self.tokenizer.tokenize(text)
    }

    /// The XXH64 of the table's body, from its header (checked at load).
    pub fn checksum(&self) -> u64 {
        self.checksum
    }

    /// Steps 2 and 3: the integer sum of the token rows ([`accumulate_rows`] over this table).
    pub fn accumulate(&self, ids: &[u32]) -> [i64; STATIC_DIMS] {
        accumulate_rows(ids, |id| self.row(id))
    }

    /// The weight and int8 row of token `id`, or `None` for the ids without one (below the
    /// table's first row: `[UNK]` and the other special tokens).
    pub fn row(&self, id: u32) -> Option<(u16, &[i8; STATIC_DIMS])> {
        let r = id.checked_sub(self.first_id)? as usize;
        let row = self.rows.get(r * STATIC_DIMS..(r + 1) * STATIC_DIMS)?;
        Some((
            self.weights[r],
            row.try_into().expect("rows are STATIC_DIMS long"),
        ))
    }

    /// Embeds `text` with the static embedder's `version`: a unit vector of [`STATIC_V1_DIMS`]
    /// components.
    pub fn embed(&self, text: &str, version: StaticVersion) -> Vec<f32> {
        finish(&self.accumulate(&self.tokenize(text)), text, version)
    }
}
