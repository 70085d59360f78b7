//! Text -> hashed features, the first half of `hash-v1` (see `embed/mod.rs` for the spec).

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use xxhash_rust::xxh64::xxh64;

use super::stopwords::is_stopword;

/// Characters that join word pieces into one identifier (`pg_hba.conf`, `--dry-run`,
/// `node:fs`, `/etc/hosts`, `user@host`).
const JOINERS: [char; 6] = ['_', '.', '-', ':', '/', '@'];
/// Joiners trimmed from both ends of a span (`_` is kept: `__dirname` is a name).
const TRIMMED: [char; 5] = ['.', '-', ':', '/', '@'];

pub(crate) const WEIGHT_WORD: f64 = 1.0;
pub(crate) const WEIGHT_BIGRAM: f64 = 0.5;
pub(crate) const WEIGHT_IDENTIFIER: f64 = 2.0;

/// One occurrence of a feature: its 64-bit hash and its base weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Feature {
    pub hash: u64,
    pub weight: f64,
}

/// Normalises `text` (NFKC) and appends every feature occurrence to `out`, in text order.
pub(crate) fn extract(text: &str, out: &mut Vec<Feature>) {
    let normalized;
    let text = if text.is_ascii() || is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        text
    } else {
        normalized = text.nfkc().collect::<String>();
        normalized.as_str()
    };
    let stemmer = Stemmer::create(Algorithm::English);
    let mut prev_word = String::new();
    let mut lower = String::new();
    let mut key = Vec::with_capacity(64);
    let mut rest = text;
    while let Some(start) = rest.find(is_span_char) {
        let tail = &rest[start..];
        let len = tail.find(|c: char| !is_span_char(c)).unwrap_or(tail.len());
        let span = tail[..len].trim_matches(&TRIMMED[..]);
        rest = &tail[len..];
        if span.is_empty() {
            continue;
        }
        if is_identifier(span) {
            lowercase_into(span, &mut lower);
            out.push(feature(&mut key, b"i:", &[lower.as_bytes()], WEIGHT_IDENTIFIER));
        }
        for part in span.split(&JOINERS[..]) {
            for piece in camel_pieces(part) {
                lowercase_into(piece, &mut lower);
                if is_stopword(&lower) || is_single_letter(&lower) {
                    continue;
                }
                let stem = stemmer.stem(&lower);
                out.push(feature(&mut key, b"w:", &[stem.as_bytes()], WEIGHT_WORD));
                if !prev_word.is_empty() {
                    let parts: [&[u8]; 3] = [prev_word.as_bytes(), b" ", stem.as_bytes()];
                    out.push(feature(&mut key, b"b:", &parts, WEIGHT_BIGRAM));
                }
                prev_word.clear();
                prev_word.push_str(&stem);
            }
        }
    }
}

/// The feature that stands for a text with no other feature, so every text embeds to a unit
/// vector.
pub(crate) fn empty_feature() -> Feature {
    feature(&mut Vec::new(), b"e:", &[], WEIGHT_WORD)
}

/// Hashes `prefix + parts` (assembled in the reusable `key` buffer) with XXH64, seed 0.
fn feature(key: &mut Vec<u8>, prefix: &[u8], parts: &[&[u8]], weight: f64) -> Feature {
    key.clear();
    key.extend_from_slice(prefix);
    for part in parts {
        key.extend_from_slice(part);
    }
    Feature {
        hash: xxh64(key, 0),
        weight,
    }
}

fn lowercase_into(s: &str, out: &mut String) {
    out.clear();
    if s.is_ascii() {
        out.push_str(s);
        out.make_ascii_lowercase();
    } else {
        out.extend(s.chars().flat_map(char::to_lowercase));
    }
}

fn is_span_char(c: char) -> bool {
    c.is_alphanumeric() || JOINERS.contains(&c)
}

fn is_single_letter(word: &str) -> bool {
    let mut chars = word.chars();
    matches!((chars.next(), chars.next()), (Some(c), None) if !c.is_numeric())
}

/// A span is an identifier when it holds a joiner (`ERR_REQUIRE_ESM`, `pg_hba.conf`) or a
/// lower-to-upper case change (`readFileSync`), and at least one letter or digit.
fn is_identifier(span: &str) -> bool {
    let mut has_alnum = false;
    let mut has_joiner = false;
    let mut camel = false;
    let mut prev_lower = false;
    for c in span.chars() {
        if JOINERS.contains(&c) {
            has_joiner = true;
        } else {
            has_alnum = true;
        }
        camel |= prev_lower && c.is_uppercase();
        prev_lower = c.is_lowercase() || c.is_numeric();
    }
    has_alnum && (has_joiner || camel)
}

/// Splits one alphanumeric run at camel-case boundaries: `readFileSync` -> read, File, Sync;
/// `HTTPServer` -> HTTP, Server; `utf8` stays whole.
fn camel_pieces(run: &str) -> CamelPieces<'_> {
    CamelPieces { rest: run }
}

struct CamelPieces<'a> {
    rest: &'a str,
}

impl<'a> Iterator for CamelPieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let mut chars = self.rest.char_indices().peekable();
        let (_, mut prev) = chars.next()?;
        let mut cut = self.rest.len();
        while let Some((at, c)) = chars.next() {
            let next_lower = chars.peek().is_some_and(|&(_, n)| n.is_lowercase());
            let lower_to_upper = (prev.is_lowercase() || prev.is_numeric()) && c.is_uppercase();
            let acronym_end = prev.is_uppercase() && c.is_uppercase() && next_lower;
            if lower_to_upper || acronym_end {
                cut = at;
                break;
            }
            prev = c;
        }
        let (piece, rest) = self.rest.split_at(cut);
        self.rest = rest;
        Some(piece)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn camel_case_splits() {
        let pieces: Vec<&str> = camel_pieces("readFileSync").collect();
        assert_eq!(pieces, ["read", "File", "Sync"]);
        let pieces: Vec<&str> = camel_pieces("HTTPServer").collect();
        assert_eq!(pieces, ["HTTP", "Server"]);
        let pieces: Vec<&str> = camel_pieces("utf8").collect();
        assert_eq!(pieces, ["utf8"]);
    }

    #[test]
    fn identifiers_are_recognised() {
        for id in [
            "ERR_REQUIRE_ESM",
            "pg_hba.conf",
            "dry-run",
            "readFileSync",
            "node:fs",
        ] {
            assert!(is_identifier(id), "{id}");
        }
        for word in ["hello", "HTTP", "utf8", "__"] {
            assert!(!is_identifier(word), "{word}");
        }
    }

    #[test]
    fn identifier_and_its_parts_are_features() {
        let mut a = Vec::new();
        extract("ERR_REQUIRE_ESM", &mut a);
        // one identifier, three words, two bigrams
        assert_eq!(a.len(), 6);
        assert_eq!(a[0].weight, WEIGHT_IDENTIFIER);
    }

    #[test]
    fn stopwords_and_single_letters_are_dropped() {
        let mut a = Vec::new();
        extract("how do I a the x", &mut a);
        assert!(a.is_empty());
    }

    #[test]
    fn nfkc_and_case_fold() {
        let (mut a, mut b) = (Vec::new(), Vec::new());
        extract("ＥＲＲ_ＲＥＱＵＩＲＥ_ＥＳＭ", &mut a);
        extract("err_require_esm", &mut b);
        assert_eq!(a, b);
    }
}
