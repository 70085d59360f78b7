//! The heading subject: the last breadcrumb segment.
//!
//! Reference headings are often one thing (`ERR_REQUIRE_ESM`, `fs.mkdtemp(prefix[, options])`,
//! `Class: AbortController`, `--max-old-space-size=SIZE (in megabytes)`): then that thing is the
//! mention, with its own kind, at heading strength. Other headings ("Threadpool usage",
//! "Import maps") become a `topic`, canonicalised like a name, and the typed tokens inside them
//! are mentions at heading strength too.

use super::canon::{cut_call_tail, name_canonical, trim_word};
use super::classify::{classify, Context};
use super::scan::nfkc;
use super::strength::Accumulator;
use super::{EntityKind, Position};
use crate::chunk::BREADCRUMB_SEPARATOR;

/// Longest heading, in words, that is taken as a topic; longer ones are sentences.
pub const MAX_TOPIC_WORDS: usize = 8;

/// Labels that reference docs put before the subject of a heading.
const LABELS: &[&str] = &[
    "class method:",
    "class property:",
    "class:",
    "enum:",
    "event:",
    "function:",
    "interface:",
    "method:",
    "module:",
    "property:",
    "static method:",
    "type:",
];

pub(crate) fn extract(breadcrumb: &str, acc: &mut Accumulator) {
    let crumb = nfkc(breadcrumb);
    let last = crumb.rsplit(BREADCRUMB_SEPARATOR).next().unwrap_or("");
    let cleaned: String = last.chars().filter(|c| !matches!(c, '`' | '*')).collect();
    let mut h = cleaned.trim().trim_start_matches('#').trim();
    for label in LABELS {
        if h.len() >= label.len()
            && h.is_char_boundary(label.len())
            && h[..label.len()].eq_ignore_ascii_case(label)
        {
            h = h[label.len()..].trim();
            break;
        }
    }
    let h = h.strip_prefix("new ").unwrap_or(h);
    // a trailing remark in parentheses: `--max-old-space-size=SIZE (in megabytes)`
    let h = match h.rfind(" (") {
        Some(at) if h.ends_with(')') && at > 0 => h[..at].trim_end(),
        _ => h,
    };
    if h.is_empty() {
        return;
    }
    let ctx = Context {
        in_code: true,
        before_thing_noun: false,
    };
    let mut typed = Vec::new();
    if let Some(tok) = whole_call(h) {
        let tok = trim_word(tok);
        if classify(tok, ctx, &mut typed) {
            for t in typed {
                acc.add(t.name, last.trim(), t.kind, Position::Heading, t.factor);
            }
            return;
        }
        if tok.chars().all(char::is_alphanumeric) {
            let mut canon = String::new();
            name_canonical(&[tok], &mut canon);
            acc.add(canon, tok, EntityKind::Topic, Position::Heading, 1.0);
            return;
        }
    }
    let words: Vec<&str> = h
        .split_whitespace()
        .map(|w| cut_call_tail(trim_word(w)))
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return;
    }
    if words.len() <= MAX_TOPIC_WORDS {
        let mut canon = String::new();
        name_canonical(&words, &mut canon);
        acc.add(canon, h, EntityKind::Topic, Position::Heading, 1.0);
    }
    if words.len() > 1 {
        let ctx = Context {
            in_code: false,
            before_thing_noun: false,
        };
        for (i, w) in words.iter().enumerate() {
            typed.clear();
            let ctx = Context {
                before_thing_noun: words.get(i + 1).is_some_and(|n| {
                    super::stoplist::contains(super::stoplist::THING_NOUNS, &n.to_ascii_lowercase())
                }),
                ..ctx
            };
            if classify(w, ctx, &mut typed) {
                for t in typed.drain(..) {
                    acc.add(t.name, w, t.kind, Position::Heading, t.factor);
                }
            }
        }
    }
}

/// The heading is one token, possibly a call whose parentheses close at the end:
/// `fs.mkdtemp(prefix[, options], callback)` -> `fs.mkdtemp`.
fn whole_call(h: &str) -> Option<&str> {
    if !h.contains(char::is_whitespace) {
        return Some(cut_call_tail(h));
    }
    let open = h.find('(')?;
    let head = &h[..open];
    if head.is_empty() || head.contains(char::is_whitespace) || !h.ends_with(')') {
        return None;
    }
    let mut depth = 0i32;
    for (i, b) in h.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth -= 1;
                if depth == 0 {
                    return (i + 1 == h.len()).then_some(head);
                }
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heading(crumb: &str) -> Vec<(String, EntityKind)> {
        let mut acc = Accumulator::default();
        extract(crumb, &mut acc);
        acc.finish().into_iter().map(|m| (m.name, m.kind)).collect()
    }

    #[test]
    fn typed_headings() {
        use EntityKind::*;
        for (crumb, name, kind) in [
            ("Errors > ERR_REQUIRE_ESM", "ERR_REQUIRE_ESM", ErrorCode),
            (
                "fs > fs.mkdtemp(prefix[, options], callback)",
                "fs.mkdtemp",
                Identifier,
            ),
            (
                "Globals > Class: `AbortController`",
                "AbortController",
                Identifier,
            ),
            (
                "CLI > --max-old-space-size=SIZE (in megabytes)",
                "--max-old-space-size",
                Flag,
            ),
            ("CLI > NODE_DEBUG=module[,…]", "NODE_DEBUG", Identifier),
            (
                "Process > Event: 'uncaughtException'",
                "uncaughtException",
                Identifier,
            ),
            (
                "Crypto > new X509Certificate(buffer)",
                "X509Certificate",
                Identifier,
            ),
        ] {
            assert_eq!(heading(crumb), [(name.to_string(), kind)], "{crumb}");
        }
    }

    #[test]
    fn topics() {
        use EntityKind::*;
        assert_eq!(
            heading("fs > Threadpool usage"),
            [("threadpool usage".into(), Topic)]
        );
        assert_eq!(heading("Buffers"), [("buffer".into(), Topic)]);
        assert_eq!(
            heading("E > new Error(message[, options])"),
            [("error".into(), Topic)]
        );
        let got = heading("Process > When to use queueMicrotask() vs. process.nextTick()");
        assert!(
            got.contains(&("queueMicrotask".into(), Identifier)),
            "{got:?}"
        );
        assert!(
            got.contains(&("process.nextTick".into(), Identifier)),
            "{got:?}"
        );
        assert!(got.iter().any(|(_, k)| *k == Topic), "{got:?}");
        assert!(heading("").is_empty());
        assert!(heading("A > ").is_empty());
    }
}
