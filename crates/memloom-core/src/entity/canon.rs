//! Canonical forms, so that mentions of the same thing merge.
//!
//! - Names and topics: lowercase (the text is already NFKC), whitespace collapsed, the last word
//!   made singular and stripped of a possessive ("Worker Pools'" -> "worker pool").
//! - Identifiers, flags, error codes and code keep their spelling (`readFile` is not
//!   `readfile`); file names, hosts and versions are case-folded; tickets are upper-cased.
//! - Every token loses surrounding punctuation, quotes and backticks, and a call or index tail:
//!   `fs.readFile()` and `fs.readFile(path, cb)` are `fs.readFile`.

use super::stoplist::NO_SINGULAR;

/// Characters trimmed from the start of a word.
const LEADING: &[char] = &[
    '(', '[', '{', '<', '"', '\'', '`', '*', '~', '\u{201c}', '\u{2018}', '\u{ab}', '!', '\u{a1}',
    '\u{bf}', '>', ',', ';', '|',
];
/// Characters trimmed from the end of a word.
const TRAILING: &[char] = &[
    ')', ']', '}', '>', '"', '\'', '`', ',', ';', ':', '.', '!', '?', '*', '~', '\u{201d}',
    '\u{2019}', '\u{bb}', '\u{2026}', '|',
];

/// Trims surrounding punctuation and a possessive `'s` from a whitespace-free word.
pub(crate) fn trim_word(word: &str) -> &str {
    let start = word.trim_start_matches(LEADING);
    let mut w = start.trim_end_matches(TRAILING);
    // keep the `()` of a call: `fs.readFile()`
    if w.ends_with('(') && start[w.len()..].starts_with(')') {
        w = &start[..w.len() + 1];
    }
    loop {
        let before = w.len();
        for suffix in ["'s", "\u{2019}s"] {
            if let Some(rest) = w.strip_suffix(suffix) {
                w = rest.trim_end_matches(TRAILING);
            }
        }
        // Markdown emphasis with underscores: `_at least_` (but `__dirname`, `__proto__`,
        // `_` inside names stay).
        if w.len() > 1 && w.starts_with('_') && !w.starts_with("__") {
            w = &w[1..];
        }
        if w.len() > 1 && w.ends_with('_') && !w.ends_with("__") {
            w = &w[..w.len() - 1];
        }
        if w.len() == before {
            return w;
        }
    }
}

/// Cuts a call or index tail: `fs.readFile(path` -> `fs.readFile`, `argv[0]` -> `argv`.
/// Leaves the token alone when nothing precedes the bracket.
pub(crate) fn cut_call_tail(tok: &str) -> &str {
    match tok.find(['(', '[']) {
        Some(at) if at > 0 => tok[..at].trim_end_matches(TRAILING),
        _ => tok,
    }
}

/// A simple English singular of one lowercase word: `workers` -> `worker`, `policies` ->
/// `policy`, `classes` -> `class`, `caches` -> `cache`. Words ending in `ss`, `us`, `is`, `os`
/// and the proper names in the stop list (`postgres`, `redis`) are left alone.
pub(crate) fn singular(word: &str) -> &str {
    if word.len() <= 3
        || !word.ends_with('s')
        || NO_SINGULAR.contains(&word)
        || ["ss", "us", "is", "os"].iter().any(|s| word.ends_with(s))
        || !word.is_ascii()
        || word.contains('.')
    {
        return word;
    }
    if word.len() > 4 && word.ends_with("ies") {
        // handled by the caller, which needs to append a `y`
        return word;
    }
    for (suffix, keep) in [("sses", 2), ("shes", 2), ("tches", 3), ("xes", 1)] {
        if word.ends_with(suffix) {
            return &word[..word.len() - suffix.len() + keep];
        }
    }
    &word[..word.len() - 1]
}

/// Appends the canonical form of a name or topic made of `words` (as written) to `out`.
pub(crate) fn name_canonical(words: &[&str], out: &mut String) {
    out.clear();
    for (i, word) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        let lower = word.to_lowercase();
        if i + 1 == words.len() {
            let lower = strip_possessive(&lower);
            if lower.len() > 4 && lower.ends_with("ies") && !NO_SINGULAR.contains(&lower) {
                out.push_str(&lower[..lower.len() - 3]);
                out.push('y');
            } else {
                out.push_str(singular(lower));
            }
        } else {
            out.push_str(&lower);
        }
    }
}

fn strip_possessive(word: &str) -> &str {
    let w = word
        .strip_suffix("'s")
        .or_else(|| word.strip_suffix("\u{2019}s"))
        .unwrap_or(word);
    w.trim_end_matches(['\'', '\u{2019}'])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canon(words: &[&str]) -> String {
        let mut s = String::new();
        name_canonical(words, &mut s);
        s
    }

    #[test]
    fn trims_punctuation_and_possessive() {
        assert_eq!(trim_word("(`fs.readFile()`),"), "fs.readFile()");
        assert_eq!(trim_word("Workers'"), "Workers");
        assert_eq!(trim_word("worker's."), "worker");
        assert_eq!(trim_word("__dirname"), "__dirname");
        assert_eq!(trim_word("_emphasis_"), "emphasis");
        assert_eq!(trim_word("_at"), "at");
        assert_eq!(trim_word("least_,"), "least");
        assert_eq!(trim_word("__proto__"), "__proto__");
        assert_eq!(trim_word("\"quoted\""), "quoted");
        assert_eq!(trim_word("..."), "");
    }

    #[test]
    fn cuts_call_tails() {
        assert_eq!(cut_call_tail("fs.readFile()"), "fs.readFile");
        assert_eq!(cut_call_tail("fs.readFile(path"), "fs.readFile");
        assert_eq!(cut_call_tail("argv[0]"), "argv");
        assert_eq!(cut_call_tail("(x)"), "(x)");
    }

    #[test]
    fn singulars() {
        assert_eq!(canon(&["Workers'"]), "worker");
        assert_eq!(canon(&["worker's"]), "worker");
        assert_eq!(canon(&["workers"]), "worker");
        assert_eq!(canon(&["Worker", "Threads"]), "worker thread");
        assert_eq!(canon(&["Policies"]), "policy");
        assert_eq!(canon(&["classes"]), "class");
        assert_eq!(canon(&["caches"]), "cache");
        assert_eq!(canon(&["Postgres"]), "postgres");
        assert_eq!(canon(&["Redis"]), "redis");
        assert_eq!(canon(&["status"]), "status");
        assert_eq!(canon(&["Import", "maps"]), "import map");
        assert_eq!(canon(&["Node.js"]), "node.js");
    }
}
