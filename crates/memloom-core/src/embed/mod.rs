//! The embedders. This file: `hash-v1`, a deterministic text embedder (feature hashing).
//! `static_v1.rs`: `static-v1` and `static-v2`, a static model distilled from all-MiniLM-L6-v2
//! plus hash-v1, the two weighed 1:1 and 2:1.
//! `api.rs`: the rules of an OpenAI-compatible embeddings API (settings, identity, request and
//! response; the HTTP call is the caller's). `choose.rs`: which one the settings select.
//!
//! It gives no understanding of meaning beyond shared words, but it needs no model, runs
//! anywhere, and its vectors are bit-identical natively, in Node, in browsers and in the edge
//! worker. Texts that share words score as similar; sharing an exact identifier counts strongly.
//!
//! # The algorithm, precisely (version 1)
//! 1. **Normalise** the text to Unicode NFKC.
//! 2. **Spans**: maximal runs of characters that are alphanumeric (Unicode) or one of the
//!    joiners `_ . - : / @`. Trim `. - : / @` from both ends of each span; skip empty spans.
//! 3. **Identifier feature** `"i:" + lowercase(span)` (weight 2.0) when the span contains a
//!    joiner or a lowercase/digit character followed by an uppercase one, and at least one
//!    non-joiner: `ERR_REQUIRE_ESM`, `pg_hba.conf`, `--dry-run` (as `dry-run`), `readFileSync`.
//! 4. **Word features**: split the span at joiners, split each part at camel-case boundaries
//!    (before an uppercase letter that follows a lowercase letter or digit, and before the last
//!    uppercase letter of a run of capitals that is followed by a lowercase letter: `HTTPServer`
//!    -> `HTTP`, `Server`), lowercase each piece (Unicode), and drop it if it is in the fixed
//!    stop-word list (`embed/stopwords.rs`) or is a single non-digit character. Stem the rest
//!    with the Snowball English stemmer (Porter 2) and emit `"w:" + stem` (weight 1.0).
//! 5. **Bigram features**: for each word feature after the first in the text, emit
//!    `"b:" + previous_stem + " " + stem` (weight 0.5).
//! 6. **Hash** each feature string's UTF-8 bytes with XXH64, seed 0. A feature that occurs `n`
//!    times contributes `weight * sqrt(n)` (sublinear term frequency; `sqrt` is used rather than
//!    `ln` because IEEE 754 rounds it exactly on every platform).
//! 7. **Project**: start from 256 zeros (`f64`); for each distinct feature in ascending order of
//!    its hash, add `sign * weight * sqrt(n)` to component `hash % 256`, where `sign` is +1 when
//!    bit 63 of the hash is 0 and -1 otherwise.
//! 8. A text with no features (or whose features cancel exactly) uses the single feature
//!    `"e:"` (weight 1.0) instead, so every output is a unit vector.
//! 9. **L2-normalise**: divide each component by `sqrt(sum of squares)` (summed in index order,
//!    in `f64`) and round it to `f32`.

mod api;
mod bert_chars;
mod choose;
mod features;
mod static_v1;
mod stopwords;
mod wordpiece;

pub use api::{ApiEmbedder, API_EMBEDDER_VERSION, MAX_API_DIMS};
pub use choose::{
    choose_embedder, unknown_embedder, EmbedderChoice, EmbedderSettings, OFFLINE_EMBEDDERS,
};
pub use static_v1::{
    accumulate_rows as accumulate_static_rows, finish as finish_static, StaticModel,
    StaticTokenizer, StaticVersion, STATIC_DIMS, STATIC_V1, STATIC_V1_DIMS,
    STATIC_V1_TABLE_CHECKSUM, STATIC_V2,
};

use serde::{Deserialize, Serialize};

use features::{empty_feature, extract, Feature};

/// Which embedder produced a vector. A store records it and refuses queries embedded otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct EmbedderInfo {
    pub name: &'static str,
    pub version: u32,
    pub dims: usize,
}

impl EmbedderInfo {
    /// The id stores record, e.g. `hash-v1`.
    pub fn id(&self) -> String {
        format!("{}-v{}", self.name, self.version)
    }
}

/// Dimensions of `hash-v1` vectors (the schema's `vector(256)`).
pub const HASH_V1_DIMS: usize = 256;

/// The offline embedder.
pub const HASH_V1: EmbedderInfo = EmbedderInfo {
    name: "hash",
    version: 1,
    dims: HASH_V1_DIMS,
};

/// Embeds `text` with `hash-v1`: a unit vector of [`HASH_V1_DIMS`] components.
pub fn embed(text: &str) -> Vec<f32> {
    let mut feats = Vec::with_capacity(text.len() / 4);
    extract(text, &mut feats);
    project(&mut feats)
        .unwrap_or_else(|| project(&mut [empty_feature()]).expect("one feature never cancels out"))
}

/// Steps 6, 7 and 9. `None` when the features cancel to the zero vector.
fn project(feats: &mut [Feature]) -> Option<Vec<f32>> {
    feats.sort_unstable_by_key(|f| f.hash);
    let mut acc = [0f64; HASH_V1_DIMS];
    let mut i = 0;
    while i < feats.len() {
        let Feature { hash, weight } = feats[i];
        let mut n = 0u32;
        while i < feats.len() && feats[i].hash == hash {
            n += 1;
            i += 1;
        }
        let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
        acc[(hash % HASH_V1_DIMS as u64) as usize] += sign * weight * f64::from(n).sqrt();
    }
    let norm = acc.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 {
        return None;
    }
    Some(acc.iter().map(|x| (x / norm) as f32).collect())
}

/// Cosine similarity of two embeddings (the vector arm ranks by `1 - cosine distance`).
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let dot: f64 = a
        .iter()
        .zip(b)
        .map(|(x, y)| f64::from(*x) * f64::from(*y))
        .sum();
    let na: f64 = a.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    let nb: f64 = b.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na * nb)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unit_length_and_deterministic() {
        for text in [
            "",
            "hello world",
            "ERR_REQUIRE_ESM",
            "the of and",
            "日本語のテキスト",
        ] {
            let v = embed(text);
            assert_eq!(v.len(), HASH_V1_DIMS);
            let norm: f64 = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-6, "{text:?}: {norm}");
            assert_eq!(v, embed(text));
        }
    }

    #[test]
    fn shared_words_score_higher() {
        let q = embed("configure the connection pool size");
        let near = embed("The pool size of each connection is configured at startup.");
        let far = embed("Bananas are rich in potassium.");
        assert!(cosine(&q, &near) > 0.4, "{}", cosine(&q, &near));
        assert!(cosine(&q, &near) > cosine(&q, &far) + 0.3);
    }

    #[test]
    fn exact_identifiers_count_strongly() {
        let q = embed("pg_hba.conf");
        let exact = embed("Edit pg_hba.conf to allow the replica to connect.");
        let parts = embed("The hba settings live in a conf file for pg.");
        assert!(cosine(&q, &exact) > 0.5, "{}", cosine(&q, &exact));
        assert!(cosine(&q, &exact) > cosine(&q, &parts) + 0.2);
    }

    #[test]
    fn case_and_inflection_do_not_matter() {
        let a = embed("Connections Timed Out");
        let b = embed("connection timed out");
        assert!(cosine(&a, &b) > 0.99);
    }

    #[test]
    fn info_id() {
        assert_eq!(HASH_V1.id(), "hash-v1");
    }
}
