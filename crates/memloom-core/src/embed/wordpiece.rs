//! BERT's uncased tokenizer, as Hugging Face `tokenizers` runs it for all-MiniLM-L6-v2
//! (`BertNormalizer` with clean_text, handle_chinese_chars, lowercase and accent stripping;
//! `BertPreTokenizer`; `WordPiece` with prefix `##` and at most 100 characters a word). The ids
//! must equal `tokenizers`' ids: `tests/golden/wordpiece.json` holds thousands of cases that
//! `scripts/distill-static.py` took from the Python library.
//!
//! The character classes (`bert_chars.rs`) are generated from `tokenizers` itself by the same
//! script: its Unicode tables are older than Rust's, and following them keeps the ids equal for
//! characters assigned since, and independent of the Rust toolchain.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use unicode_normalization::UnicodeNormalization;

use super::bert_chars::{CHINESE, PUNCTUATION, REMOVED, STRIPPED, WHITESPACE};

/// Words longer than this many characters become `[UNK]` (WordPiece's `max_input_chars_per_word`).
pub(crate) const MAX_WORD_CHARS: usize = 100;
const CONTINUATION: &str = "##";

/// A WordPiece vocabulary: token -> id, and the longest token in bytes (the greedy match never
/// tries a longer substring, which changes no result and saves most lookups).
pub(crate) struct WordPiece {
    ids: HashMap<Box<str>, u32, BuildHasherDefault<FxHasher>>,
    unk: u32,
    longest: usize,
}

impl WordPiece {
    pub(crate) fn new<'a>(tokens: impl Iterator<Item = &'a str>, unk: u32) -> WordPiece {
        let mut ids = HashMap::default();
        let mut longest = 0;
        for (id, t) in tokens.enumerate() {
            longest = longest.max(t.len());
            // The first of duplicate tokens wins, as in a vocab.txt read top to bottom.
            ids.entry(t.into()).or_insert(id as u32);
        }
        WordPiece { ids, unk, longest }
    }

    /// Appends the ids of `text` (no `[CLS]` / `[SEP]`) to `out`.
    pub(crate) fn tokenize(&self, text: &str, out: &mut Vec<u32>) {
        let normalized = normalize(text);
        let mut word = String::new();
        let mut buf = String::with_capacity(self.longest + CONTINUATION.len());
        for c in normalized.chars() {
            if is_whitespace(c) {
                self.word(&word, &mut buf, out);
                word.clear();
            } else if is_punctuation(c) {
                self.word(&word, &mut buf, out);
                word.clear();
                word.push(c);
                self.word(&word, &mut buf, out);
                word.clear();
            } else {
                word.push(c);
            }
        }
        self.word(&word, &mut buf, out);
    }

    /// Greedy longest-match-first WordPiece of one word; a word with an unmatchable rest, or
    /// longer than [`MAX_WORD_CHARS`], is one `[UNK]`.
    fn word(&self, word: &str, buf: &mut String, out: &mut Vec<u32>) {
        if word.is_empty() {
            return;
        }
        if word.chars().count() > MAX_WORD_CHARS {
            out.push(self.unk);
            return;
        }
        let first = out.len();
        let mut start = 0;
        while start < word.len() {
            let prefix = if start > 0 { CONTINUATION } else { "" };
            let mut end = floor_char_boundary(word, (start + self.longest).min(word.len()));
            let mut found = None;
            while end > start {
                buf.clear();
                buf.push_str(prefix);
                buf.push_str(&word[start..end]);
                if let Some(&id) = self.ids.get(buf.as_str()) {
                    found = Some(id);
                    break;
                }
                end = floor_char_boundary(word, end - 1);
            }
            match found {
                Some(id) => out.push(id),
                None => {
                    out.truncate(first);
                    out.push(self.unk);
                    return;
                }
            }
            start = end;
        }
    }
}

/// rustc's Fx hash (multiply-rotate over 8-byte words): several times faster than SipHash for
/// these short keys, and the table is built from trusted data, so no flooding resistance is
/// needed. Lookups only; it decides no id.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let v = u64::from_le_bytes(c.try_into().unwrap());
            self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// The largest char boundary of `s` at or below `i`.
fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `BertNormalizer`: drop NUL, U+FFFD, control and format characters; whitespace becomes a
/// space; CJK ideographs get a space on both sides; then NFD with nonspacing marks removed;
/// then each character lowercased on its own (so no final-sigma rule). The character classes
/// and the lowercase mapping are `tokenizers`' own (`bert_chars.rs`), not the Rust standard
/// library's, so a toolchain with newer Unicode tables gives the same ids.
fn normalize(text: &str) -> String {
    if text.is_ascii() {
        return normalize_ascii(text);
    }
    let mut cleaned = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if in_table(REMOVED, c) {
            continue;
        }
        if in_table(WHITESPACE, c) {
            cleaned.push(' ');
        } else if in_table(CHINESE, c) {
            cleaned.push(' ');
            cleaned.push(c);
            cleaned.push(' ');
        } else {
            cleaned.push(c);
        }
    }
    let mut out = String::with_capacity(cleaned.len());
    // The tokenizers' lowercase is the standard library's for every code point (a test below
    // compares it with their table, bert_chars::LOWERCASE).
    for c in cleaned.nfd().filter(|&c| !in_table(STRIPPED, c)) {
        out.extend(c.to_lowercase());
    }
    out
}

/// [`normalize`] for ASCII, which has no marks, no ideographs and no multi-character
/// lowercase (a test checks it against the tables for every ASCII character).
fn normalize_ascii(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_ascii_control() || matches!(c, '\t' | '\n' | '\r'))
        .map(|c| {
            if c.is_ascii_whitespace() {
                ' '
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect()
}

fn is_whitespace(c: char) -> bool {
    match ASCII_CLASSES.get(c as usize) {
        Some(&class) => class & WHITESPACE_BIT != 0,
        None => in_table(WHITESPACE, c),
    }
}

fn is_punctuation(c: char) -> bool {
    match ASCII_CLASSES.get(c as usize) {
        Some(&class) => class & PUNCTUATION_BIT != 0,
        None => in_table(PUNCTUATION, c),
    }
}

const WHITESPACE_BIT: u8 = 1;
const PUNCTUATION_BIT: u8 = 2;

/// The classes of the 128 ASCII characters, read from the same tables at compile time: most
/// text is ASCII, and the tokenizer asks both questions of every character (two binary searches
/// each before).
const ASCII_CLASSES: [u8; 128] = {
    const fn in_ranges(table: &[(u32, u32)], c: u32) -> bool {
        let mut i = 0;
        while i < table.len() {
            if table[i].0 <= c && c <= table[i].1 {
                return true;
            }
            i += 1;
        }
        false
    }
    let mut classes = [0u8; 128];
    let mut c = 0;
    while c < 128 {
        if c == b' ' as usize || in_ranges(WHITESPACE, c as u32) {
            classes[c] |= WHITESPACE_BIT;
        }
        if in_ranges(PUNCTUATION, c as u32) {
            classes[c] |= PUNCTUATION_BIT;
        }
        c += 1;
    }
    classes
};

fn in_table(table: &[(u32, u32)], c: char) -> bool {
    let c = c as u32;
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> WordPiece {
        let tokens = [
            "[UNK]", "un", "##aff", "##able", "hello", "world", "!", "caf", "##e", "日", "本", "a",
        ];
        WordPiece::new(tokens.into_iter(), 0)
    }

    fn ids(text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        vocab().tokenize(text, &mut out);
        out
    }

    #[test]
    fn greedy_longest_match() {
        assert_eq!(ids("unaffable"), [1, 2, 3]);
        assert_eq!(ids("Hello, World!"), [4, 0, 5, 6]);
        assert_eq!(ids("unaffablex"), [0]);
    }

    #[test]
    fn accents_case_and_cjk() {
        assert_eq!(ids("CAFÉ"), [7, 8]);
        assert_eq!(ids("日本"), [9, 10]);
        assert_eq!(ids("a\u{0}\u{200b}a"), [0]); // "aa": controls and format chars vanish
    }

    #[test]
    fn ascii_fast_path_follows_the_tables() {
        for b in 0u8..128 {
            let text = format!("a{}b", b as char);
            // Force the general path with a non-ASCII character that the tables drop.
            let slow = normalize(&format!("{text}\u{200b}"));
            assert_eq!(normalize_ascii(&text), slow, "byte {b:#x}");
        }
    }

    #[test]
    fn ascii_classes_are_the_tables() {
        for c in (0u8..128).map(char::from) {
            assert_eq!(
                is_whitespace(c),
                c == ' ' || in_table(WHITESPACE, c),
                "{c:?}"
            );
            assert_eq!(is_punctuation(c), in_table(PUNCTUATION, c), "{c:?}");
        }
        // BERT's punctuation is every ASCII non-alphanumeric printable character.
        for c in ['$', '`', '_', '-', '~'] {
            assert!(is_punctuation(c), "{c:?}");
        }
        assert!(!is_punctuation('a') && is_whitespace('\n') && !is_whitespace('a'));
    }

    #[test]
    fn lowercase_is_the_tokenizers_table_for_every_code_point() {
        use super::super::bert_chars::LOWERCASE;
        let mut lowered = 0;
        for c in (0..=0x10FFFF).filter_map(char::from_u32) {
            let expected = match LOWERCASE.binary_search_by_key(&(c as u32), |&(cp, _)| cp) {
                Ok(i) => {
                    lowered += 1;
                    LOWERCASE[i].1.to_string()
                }
                Err(_) => c.to_string(),
            };
            assert_eq!(
                c.to_lowercase().collect::<String>(),
                expected,
                "U+{:04X}",
                c as u32
            );
        }
        assert_eq!(lowered, LOWERCASE.len());
    }

    #[test]
    fn long_words_are_unknown() {
        assert_eq!(ids(&"a".repeat(MAX_WORD_CHARS)), [0]); // no "##a" in this vocabulary
        assert_eq!(ids(&"a".repeat(MAX_WORD_CHARS + 1)), [0]);
        assert_eq!(ids(""), Vec::<u32>::new());
    }
}
