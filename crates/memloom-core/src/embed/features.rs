//! Text -> hashed features, the first half of `hash-v1` (see `embed/mod.rs` for the spec).

use std::cell::RefCell;
use std::collections::HashMap;

use rust_stemmers::{Algorithm, Stemmer};
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};
use xxhash_rust::xxh64::{xxh64, Xxh64Builder};

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
    let mut stem = String::new();
    let mut at = 0;
    while let Some((start, end)) = next_span(text, at) {
        at = end;
        let span = text[start..end].trim_matches(&TRIMMED[..]);
        if span.is_empty() {
            continue;
        }
        if is_identifier(span) {
            lowercase_into(span, &mut lower);
            out.push(feature(
                &mut key,
                b"i:",
                &[lower.as_bytes()],
                WEIGHT_IDENTIFIER,
            ));
        }
        for part in span.split(&JOINERS[..]) {
            for piece in camel_pieces(part) {
                lowercase_into(piece, &mut lower);
                let Some(hash) = word_feature(&stemmer, &lower, &mut key, &mut stem) else {
                    continue;
                };
                out.push(Feature {
                    hash,
                    weight: WEIGHT_WORD,
                });
                if !prev_word.is_empty() {
                    let parts: [&[u8]; 3] = [prev_word.as_bytes(), b" ", stem.as_bytes()];
                    out.push(feature(&mut key, b"b:", &parts, WEIGHT_BIGRAM));
                }
                std::mem::swap(&mut prev_word, &mut stem);
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

/// Words repeat (Zipf), and stop-word lookup and stemming are the costliest steps, so each
/// lowercase word's outcome (`None` for a dropped word, else its stem and its feature hash) is
/// memoised per thread. The cache is bounded and maps a word to what the rules above always
/// give for it, so it changes speed, never output.
const WORD_CACHE_MAX: usize = 1 << 16;

type WordCache = HashMap<Box<str>, Option<(Box<str>, u64)>, Xxh64Builder>;

thread_local! {
    static WORD_CACHE: RefCell<WordCache> =
        const { RefCell::new(HashMap::with_hasher(Xxh64Builder::new(0))) };
}

/// The word feature of a lowercase `word` (its hash), with its stem left in `stem`; `None` for
/// stop words and single letters.
fn word_feature(
    stemmer: &Stemmer,
    word: &str,
    key: &mut Vec<u8>,
    stem: &mut String,
) -> Option<u64> {
    WORD_CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        let entry = match cache.get(word) {
            Some(entry) => entry,
            None => {
                let computed = if is_stopword(word) || is_single_letter(word) {
                    None
                } else {
                    let s = stemmer.stem(word);
                    let hash = feature(key, b"w:", &[s.as_bytes()], WEIGHT_WORD).hash;
                    Some((Box::from(s.as_ref()), hash))
                };
                if cache.len() >= WORD_CACHE_MAX {
                    cache.clear();
                }
                cache.entry(word.into()).or_insert(computed)
            }
        };
        let (s, hash) = entry.as_ref()?;
        stem.clear();
        stem.push_str(s);
        Some(*hash)
    })
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

/// `is_span_char` for ASCII bytes, as a table: the scan below is the embedder's hot loop.
const ASCII_SPAN: [bool; 128] = {
    let mut t = [false; 128];
    let mut b = 0;
    while b < 128 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b':' | b'/' | b'@');
        b += 1;
    }
    t
};

/// The next maximal run of span characters at or after byte `from`, as a byte range.
fn next_span(text: &str, from: usize) -> Option<(usize, usize)> {
    let bytes = text.as_bytes();
    let is_span_at = |i: usize| -> (bool, usize) {
        let b = bytes[i];
        if b < 0x80 {
            (ASCII_SPAN[b as usize], 1)
        } else {
            let c = text[i..].chars().next().unwrap_or(' ');
            (is_span_char(c), c.len_utf8())
        }
    };
    let mut i = from;
    let start = loop {
        if i >= bytes.len() {
            return None;
        }
        let (yes, len) = is_span_at(i);
        if yes {
            break i;
        }
        i += len;
    };
    while i < bytes.len() {
        let (yes, len) = is_span_at(i);
        if !yes {
            break;
        }
        i += len;
    }
    Some((start, i))
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
