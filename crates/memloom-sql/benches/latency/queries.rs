//! The query set: identifiers taken from the corpus, common words, paraphrases and the
//! labelled queries of ../shared/eval, each with its hash-v1 embedding.

use std::collections::BTreeSet;

use memloom_core::embed;

use crate::corpus::Corpus;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum QType {
    Identifier,
    Common,
    Paraphrase,
    Eval,
}

pub(crate) struct Query {
    pub(crate) qtype: QType,
    pub(crate) text: String,
    pub(crate) embedding: Vec<f32>,
    /// For identifier queries: the identifier the top keyword and fused results must contain.
    pub(crate) must_contain: Option<String>,
}

pub(crate) fn is_err_code(t: &str) -> bool {
    t.len() > 6
        && t.starts_with("ERR_")
        && t.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

pub(crate) fn is_api_name(t: &str) -> bool {
    let Some((a, b)) = t.split_once('.') else {
        return false;
    };
    a.len() >= 2
        && b.len() >= 4
        && a.bytes().all(|c| c.is_ascii_alphabetic())
        && a.as_bytes()[0].is_ascii_lowercase()
        && b.bytes().all(|c| c.is_ascii_alphabetic())
        && b.bytes().any(|c| c.is_ascii_uppercase())
}

pub(crate) fn is_flag(t: &str) -> bool {
    t.len() > 6
        && t.starts_with("--")
        && t[2..].bytes().all(|c| c.is_ascii_lowercase() || c == b'-')
        && !t.ends_with('-')
}

/// Every `stride`-th of a sorted set, at most `take`.
pub(crate) fn sample(set: &BTreeSet<String>, take: usize) -> Vec<String> {
    let stride = (set.len() / take).max(1);
    set.iter().step_by(stride).take(take).cloned().collect()
}

pub(crate) fn candidate_queries(corpus: &Corpus) -> Vec<Query> {
    let (mut errs, mut apis, mut flags) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for c in &corpus.chunks {
        for tok in c
            .text
            .split(|ch: char| ch.is_whitespace() || "()[]{}<>,;\"'`=|*!?&+\\".contains(ch))
        {
            let tok = tok.trim_end_matches(['.', ':']);
            if is_err_code(tok) {
                errs.insert(tok.to_string());
            } else if is_api_name(tok) {
                apis.insert(tok.to_string());
            } else if is_flag(tok) {
                flags.insert(tok.to_string());
            }
        }
    }
    let mut out = Vec::new();
    let mut push = |qtype, text: String, must: Option<String>| {
        out.push(Query {
            qtype,
            embedding: embed(&text),
            text,
            must_contain: must,
        });
    };
    for id in sample(&errs, 25)
        .into_iter()
        .chain(sample(&apis, 25))
        .chain(sample(&flags, 15))
    {
        push(QType::Identifier, id.clone(), Some(id));
    }
    for q in [
        "function",
        "error",
        "the data is returned",
        "callback",
        "options",
        "returns a promise",
        "the default value is",
        "string",
        "buffer",
        "event",
        "stream",
        "object",
        "if the value is not",
        "this method",
        "is called when",
        "file",
        "the process",
        "an array of",
        "true",
        "value",
        "data",
        "use the",
        "emitted",
        "method returns",
        "type",
        "new",
        "can be used",
        "example",
        "number of bytes",
        "when the",
    ] {
        push(QType::Common, q.to_string(), None);
    }
    for (t, q) in &corpus.queries {
        push(QType::Eval, q.clone(), None);
        if t == "paraphrase" {
            push(QType::Paraphrase, format!("how to {q}"), None);
            push(QType::Paraphrase, format!("{q} in node.js"), None);
        }
    }
    out
}
