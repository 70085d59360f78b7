//! Capitalised names: runs of capitalised words in body text ("Worker Threads", "Priya Nair",
//! "AWS Lambda") and single capitalised words that do not start a sentence ("team Falcon").
//!
//! A run ends at punctuation, at a word that is not capitalised, and at a code span. Stop words
//! ("The", "Note", "See", days, months) are dropped from both ends of a run. What is left is a
//! name when it has two to [`MAX_NAME_WORDS`] words, or one word that was not the first word of
//! a sentence (sentence-initial capitals say nothing). Single words are weaker
//! ([`FACTOR_SINGLE_WORD_NAME`]).

use super::canon::name_canonical;
use super::stoplist::{contains, ACRONYM_STOP, NAME_STOP};
use super::strength::{Accumulator, FACTOR_SINGLE_WORD_NAME};
use super::{EntityKind, Position};

/// Longest run of capitalised words taken as one name; longer runs are title-case prose.
pub const MAX_NAME_WORDS: usize = 5;
/// Longest all-capital word taken as an acronym name (`HTTP`, `AWS`); longer ones are
/// identifiers (`SIGTERM`).
pub const MAX_ACRONYM_CHARS: usize = 6;

/// Whether `word` (trimmed) can be part of a name: `Worker`, `AWS`, `Node.js`.
pub(crate) fn is_name_word(word: &str) -> bool {
    let word = word.strip_suffix(".js").unwrap_or(word);
    let mut chars = word.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    if !first.is_uppercase() || word.chars().count() < 2 {
        return false;
    }
    let rest = chars.as_str();
    if rest.chars().all(char::is_lowercase) {
        return true;
    }
    rest.chars().all(char::is_uppercase) && word.chars().count() <= MAX_ACRONYM_CHARS
}

/// Whether `word` is a stop word for names (case-insensitive).
pub(crate) fn is_stop_word(word: &str) -> bool {
    let lower = word.to_lowercase();
    contains(NAME_STOP, &lower) || contains(ACRONYM_STOP, &lower)
}

/// The run of capitalised words being collected.
#[derive(Default)]
pub(crate) struct NameRun {
    words: Vec<String>,
    first_is_initial: bool,
    canon: String,
}

impl NameRun {
    pub(crate) fn push(&mut self, word: &str, sentence_initial: bool) {
        if self.words.is_empty() {
            self.first_is_initial = sentence_initial;
        }
        self.words.push(word.to_string());
    }

    pub(crate) fn flush(&mut self, pos: Position, acc: &mut Accumulator) {
        if self.words.is_empty() {
            return;
        }
        let mut start = 0;
        let mut end = self.words.len();
        while start < end && is_stop_word(&self.words[start]) {
            start += 1;
        }
        while end > start && is_stop_word(&self.words[end - 1]) {
            end -= 1;
        }
        let n = end - start;
        let keep = match n {
            0 => false,
            1 => !(start == 0 && self.first_is_initial),
            _ => n <= MAX_NAME_WORDS,
        };
        if keep {
            let words: Vec<&str> = self.words[start..end].iter().map(String::as_str).collect();
            name_canonical(&words, &mut self.canon);
            if !contains(NAME_STOP, &self.canon) {
                let factor = if n == 1 { FACTOR_SINGLE_WORD_NAME } else { 1.0 };
                acc.add(
                    self.canon.clone(),
                    &words.join(" "),
                    EntityKind::Name,
                    pos,
                    factor,
                );
            }
        }
        self.words.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_words() {
        for w in ["Worker", "AWS", "Node.js", "Émile"] {
            assert!(is_name_word(w), "{w}");
        }
        for w in ["worker", "I", "readFile", "ABCDEFGH", "X509", "Foo-Bar", ""] {
            assert!(!is_name_word(w), "{w}");
        }
    }
}
