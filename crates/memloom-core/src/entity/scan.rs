//! The markdown-aware scan of an item's text: lines -> body words and inline code spans.

use std::borrow::Cow;

use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

use super::canon::{cut_call_tail, trim_word};
use super::classify::{classify, Context, Typed};
use super::names::{is_name_word, NameRun};
use super::stoplist::{contains, CODE_STOP, PRODUCT_WORDS, THING_NOUNS};
use super::strength::{Accumulator, FACTOR_PLAIN_CODE_WORD};
use super::{EntityKind, Position, MAX_NAME_CHARS};

/// Longest `{type}` annotation or HTML tag skipped as markup, in bytes.
const MAX_MARKUP_BYTES: usize = 80;

/// Normalises `text` to NFKC (borrowing when it already is).
pub(crate) fn nfkc(text: &str) -> Cow<'_, str> {
    if text.is_ascii() || is_nfkc_quick(text.chars()) == IsNormalized::Yes {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.nfkc().collect())
    }
}

/// Scratch space reused across lines.
#[derive(Default)]
struct Scanner {
    typed: Vec<Typed>,
    names: NameRun,
    cleaned: String,
    /// The next body word starts a sentence.
    initial: bool,
}

/// Scans `text` (markdown or plain) and records its mentions in `acc`.
pub(crate) fn extract(text: &str, acc: &mut Accumulator) {
    let text = nfkc(text);
    let mut s = Scanner {
        initial: true,
        ..Scanner::default()
    };
    let mut fence: Option<(char, usize)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        let fence_mark = |t: &str| -> Option<(char, usize)> {
            let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
            let n = t.chars().take_while(|x| *x == c).count();
            (n >= 3).then_some((c, n))
        };
        if let Some((c, n)) = fence {
            if fence_mark(t).is_some_and(|(c2, n2)| c2 == c && n2 >= n && t[n2..].trim().is_empty())
            {
                fence = None;
            }
            continue;
        }
        if let Some(mark) = fence_mark(t) {
            fence = Some(mark);
            s.initial = true;
            continue;
        }
        if t.is_empty() {
            s.initial = true;
            continue;
        }
        if is_link_definition(t) {
            continue;
        }
        let hashes = t.bytes().take_while(|b| *b == b'#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with([' ', '\t']) {
            s.initial = true;
            s.line(&t[hashes..], Position::Heading, acc);
            s.initial = true;
        } else {
            s.line(t, Position::Body, acc);
        }
    }
}

/// `[label]: https://…`
fn is_link_definition(t: &str) -> bool {
    t.starts_with('[') && t.find("]:").is_some_and(|at| !t[1..at].contains(']'))
}

impl Scanner {
    /// One line: body segments and inline code spans.
    fn line(&mut self, line: &str, pos: Position, acc: &mut Accumulator) {
        let mut rest = line;
        while !rest.is_empty() {
            let Some(open) = rest.find('`') else {
                self.body(rest, pos, acc);
                break;
            };
            let ticks = rest[open..].bytes().take_while(|b| *b == b'`').count();
            let after = &rest[open + ticks..];
            match find_closing(after, ticks) {
                Some(close) => {
                    self.body(&rest[..open], pos, acc);
                    self.names.flush(pos, acc);
                    let code_pos = if pos == Position::Heading {
                        Position::Heading
                    } else {
                        Position::Code
                    };
                    self.code(&after[..close], code_pos, acc);
                    self.initial = false;
                    rest = &after[close + ticks..];
                }
                None => {
                    // an unmatched backtick run is literal text
                    self.body(&rest[..open + ticks], pos, acc);
                    rest = after;
                }
            }
        }
        self.names.flush(pos, acc);
    }

    /// Body text: words -> typed tokens and capitalised names.
    fn body(&mut self, segment: &str, pos: Position, acc: &mut Accumulator) {
        let mut cleaned = std::mem::take(&mut self.cleaned);
        strip_markup(segment, &mut cleaned);
        let words: Vec<&str> = cleaned.split_whitespace().collect();
        let mut prev_core = "";
        for (i, raw) in words.iter().enumerate() {
            let core = trim_word(raw);
            let start = raw.find(core).unwrap_or(0);
            let lead = &raw[..start];
            let trail = &raw[start + core.len()..];
            let initial = self.initial;
            if !lead.is_empty() && lead.contains(['(', '[', '{', '"', '\u{201c}', '<']) {
                self.names.flush(pos, acc);
            }
            let marker = !core.chars().any(char::is_alphanumeric) && !raw.contains(',');
            self.initial = trail.contains(['.', '!', '?', ':']) || marker;
            if core.is_empty() {
                self.names.flush(pos, acc);
                prev_core = core;
                continue;
            }
            if let Some(v) = number_after(prev_core, core) {
                self.names.flush(pos, acc);
                acc.add(
                    v,
                    &format!("{prev_core} {core}"),
                    kind_of_pair(prev_core),
                    pos,
                    1.0,
                );
                prev_core = core;
                continue;
            }
            let next = words.get(i + 1).map(|w| trim_word(w)).unwrap_or("");
            let ctx = Context {
                in_code: false,
                before_thing_noun: contains(THING_NOUNS, &next.to_ascii_lowercase()),
            };
            self.typed.clear();
            if classify(core, ctx, &mut self.typed) {
                self.names.flush(pos, acc);
                for t in self.typed.drain(..) {
                    acc.add(t.name, core, t.kind, pos, t.factor);
                }
            } else if is_name_word(core) {
                self.names.push(core, initial);
            } else {
                self.names.flush(pos, acc);
            }
            if !trail.is_empty() && trail.contains(|c: char| c != '\'' && c != '\u{2019}') {
                self.names.flush(pos, acc);
            }
            prev_core = core;
        }
        self.cleaned = cleaned;
    }

    /// An inline code span.
    fn code(&mut self, content: &str, pos: Position, acc: &mut Accumulator) {
        let mut c = content.trim();
        // N-API style parameter direction: `[in] env`
        if c.starts_with('[') {
            if let Some(at) = c.find("] ") {
                c = c[at + 2..].trim_start();
            }
        }
        if c.is_empty() || c.len() > 4 * MAX_NAME_CHARS {
            return;
        }
        if let Some(code) = c
            .split_once(' ')
            .and_then(|(a, b)| number_after(a, b.trim()))
            .filter(|v| v.starts_with("SQLSTATE"))
        {
            acc.add(code, c, EntityKind::ErrorCode, pos, 1.0);
            return;
        }
        let single = single_token(c);
        self.typed.clear();
        let ctx = Context {
            in_code: true,
            before_thing_noun: false,
        };
        if let Some(tok) = single {
            let tok = trim_word(tok);
            if classify(tok, ctx, &mut self.typed) {
                for t in self.typed.drain(..) {
                    acc.add(t.name, c, t.kind, pos, t.factor);
                }
            } else if is_code_word(tok) {
                // a plain word (`Buffer`, `utf8`) merges with the same word as a name or topic
                if tok.chars().all(char::is_alphanumeric) {
                    let plain = tok.chars().all(|c| !c.is_uppercase());
                    let factor = if plain { FACTOR_PLAIN_CODE_WORD } else { 1.0 };
                    acc.add(tok.to_lowercase(), c, EntityKind::Code, pos, factor);
                } else {
                    acc.add(tok.to_string(), c, EntityKind::Code, pos, 1.0);
                }
            }
        } else {
            let collapsed = c.split_whitespace().collect::<Vec<_>>().join(" ");
            acc.add(collapsed, c, EntityKind::Code, pos, 1.0);
        }
        // typed tokens inside a longer span or inside call arguments: `require('node:fs')`
        if single.is_none_or(|t| t.len() < c.len()) {
            let inner = if single.is_some() {
                &c[c.find(['(', '[']).unwrap_or(c.len())..]
            } else {
                c
            };
            for piece in inner.split(|ch: char| ch.is_whitespace() || "()[]{},;'\"`".contains(ch)) {
                let tok = trim_word(piece);
                // SQL keywords in `ACCESS EXCLUSIVE` are not identifiers
                if tok.is_empty() || (single.is_none() && tok.chars().all(char::is_uppercase)) {
                    continue;
                }
                self.typed.clear();
                if classify(tok, ctx, &mut self.typed) {
                    for t in self.typed.drain(..) {
                        acc.add(t.name, tok, t.kind, pos, t.factor);
                    }
                }
            }
        }
    }
}

/// The whole span is one token, possibly a call: `fs.readFile(path, cb)` -> `fs.readFile`,
/// `'utf8'`, `new URL(input)` -> `URL`.
fn single_token(c: &str) -> Option<&str> {
    let c = c.strip_prefix("new ").unwrap_or(c);
    if !c.contains(char::is_whitespace) {
        return Some(cut_call_tail(c));
    }
    let open = c.find('(')?;
    let head = &c[..open];
    if head.is_empty() || head.contains(char::is_whitespace) || close_of(c, open)? + 1 != c.len() {
        return None;
    }
    Some(head)
}

/// Index of the `)` closing the `(` at `open`.
fn close_of(s: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in s.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// A one-word code span worth keeping: has a letter, is not a literal or keyword.
fn is_code_word(tok: &str) -> bool {
    tok.chars().any(char::is_alphabetic)
        && !contains(CODE_STOP, tok)
        && !contains(CODE_STOP, &tok.to_lowercase())
        && tok
            .chars()
            .all(|c| c.is_alphanumeric() || "_$.-:/@#".contains(c))
}

/// The closing run of exactly `ticks` backticks in `s`.
fn find_closing(s: &str, ticks: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'`' {
            let n = bytes[i..].iter().take_while(|b| **b == b'`').count();
            if n == ticks {
                return Some(i);
            }
            i += n;
        } else {
            i += 1;
        }
    }
    None
}

/// `Node 18.19`, `npm 9`, `SQLSTATE 40P01`: a word followed by a number it qualifies.
fn number_after(prev: &str, core: &str) -> Option<String> {
    if prev.is_empty() {
        return None;
    }
    if prev.eq_ignore_ascii_case("sqlstate") {
        let ok = core.len() == 5 && core.bytes().all(|b| b.is_ascii_alphanumeric());
        return ok.then(|| format!("SQLSTATE {}", core.to_ascii_uppercase()));
    }
    let numeric = !core.is_empty()
        && core.len() <= 12
        && core.starts_with(|c: char| c.is_ascii_digit())
        && core.split('.').all(|p| {
            !p.is_empty() && (p.bytes().all(|b| b.is_ascii_digit()) || p == "x" || p == "X")
        })
        && core.matches('.').count() <= 2;
    if !numeric {
        return None;
    }
    let year = core.len() == 4 && (core.starts_with("19") || core.starts_with("20"));
    let lower = prev.to_lowercase();
    let product = contains(PRODUCT_WORDS, &lower)
        || (is_name_word(prev) && !super::names::is_stop_word(prev) && core.contains('.'));
    (product && !year).then(|| format!("{lower} {}", core.to_ascii_lowercase()))
}

fn kind_of_pair(prev: &str) -> EntityKind {
    if prev.eq_ignore_ascii_case("sqlstate") {
        EntityKind::ErrorCode
    } else {
        EntityKind::Version
    }
}

/// Copies `segment` to `out`, blanking markdown link targets (`](url)`, `][label]`), HTML tags
/// and `{type}` annotations.
fn strip_markup(segment: &str, out: &mut String) {
    out.clear();
    let bytes = segment.as_bytes();
    let mut i = 0;
    let mut copied = 0;
    while i < bytes.len() {
        let skip_to = match bytes[i] {
            b']' if matches!(bytes.get(i + 1), Some(b'(')) => {
                close_of(segment, i + 1).map(|c| (i + 1, c + 1))
            }
            b']' if matches!(bytes.get(i + 1), Some(b'[')) => {
                segment[i + 1..].find(']').map(|c| (i + 1, i + 1 + c + 1))
            }
            b'<' if bytes
                .get(i + 1)
                .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'/' || *b == b'!') =>
            {
                markup_end(segment, i, '>')
            }
            b'{' => markup_end(segment, i, '}'),
            _ => None,
        };
        match skip_to {
            Some((from, to)) => {
                out.push_str(&segment[copied..from]);
                out.push(' ');
                copied = to;
                i = to;
            }
            None => i += 1,
        }
    }
    out.push_str(&segment[copied..]);
}

/// `<tag …>` or `{type}`: the range to blank, when it closes nearby without a space inside
/// (tags may hold spaces).
fn markup_end(s: &str, open: usize, close: char) -> Option<(usize, usize)> {
    let rest = &s[open + 1..];
    let end = rest.find(close)?;
    let inner = &rest[..end];
    let ok = end <= MAX_MARKUP_BYTES && (close == '>' || !inner.contains(char::is_whitespace));
    ok.then_some((open, open + 1 + end + 1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(s: &str) -> String {
        let mut out = String::new();
        strip_markup(s, &mut out);
        out
    }

    #[test]
    fn markup_is_blanked() {
        assert_eq!(
            strip("see [the docs](https://x.dev/a_b) now"),
            "see [the docs]  now"
        );
        assert_eq!(strip("see [`fs`][fs-label] now"), "see [`fs`]  now");
        assert_eq!(
            strip("* `path` {string|Buffer} a <br/> b"),
            "* `path`   a   b"
        );
        assert_eq!(strip("if a < b and {x y}"), "if a < b and {x y}");
    }

    #[test]
    fn single_tokens() {
        assert_eq!(single_token("fs.readFile(path, cb)"), Some("fs.readFile"));
        assert_eq!(single_token("new URL(input)"), Some("URL"));
        assert_eq!(single_token("'utf8'"), Some("'utf8'"));
        assert_eq!(single_token("npm ci"), None);
        assert_eq!(single_token("a(b) + c(d)"), None);
    }

    #[test]
    fn numbers_after_words() {
        assert_eq!(number_after("Node", "18.19"), Some("node 18.19".into()));
        assert_eq!(number_after("npm", "9"), Some("npm 9".into()));
        assert_eq!(
            number_after("SQLSTATE", "40p01"),
            Some("SQLSTATE 40P01".into())
        );
        assert_eq!(number_after("Table", "3"), None);
        assert_eq!(number_after("Node", "2024"), None);
        assert_eq!(number_after("port", "8080"), None);
    }

    #[test]
    fn fences_are_skipped() {
        let mut acc = Accumulator::default();
        extract(
            "```js\nconst x = fs.readFileSync('a.json');\n```\n",
            &mut acc,
        );
        assert!(acc.finish().is_empty());
    }
}
