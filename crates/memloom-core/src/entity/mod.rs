//! Offline entity extraction: text -> the things a user would look up by name.
//!
//! The entity arm of recall answers "everything that mentions the thing the query names, however
//! it is worded". This module finds those things without a model: exact identifiers (config
//! keys, API names, environment variables), error codes, file names and paths, CLI flags, ticket
//! ids, host names, versions, inline code spans, capitalised multi-word names and the subject of
//! the item's heading. Each distinct thing becomes one [`Mention`] with a canonical `name` (what
//! is stored and embedded), the `display` form as first written, a [`EntityKind`], a `strength`
//! in `(0, 1]` and a `count`.
//!
//! # How it works
//! 1. The text is normalised to Unicode NFKC. Fenced code blocks, link targets (`](url)`,
//!    `][label]`), link reference definitions, HTML tags and `{type}` annotations are skipped:
//!    they repeat what the prose names and add noise.
//! 2. Each line is split into body text and inline code spans. Body text is split at whitespace;
//!    each word is trimmed of surrounding punctuation and classified ([`classify`]): flags,
//!    URLs and `host:port`, tickets, call tails (`fs.readFile(path)` -> `fs.readFile`),
//!    `KEY=value`, error codes, versions, paths and file names, hosts, identifiers. Words that
//!    are none of these feed the capitalised-name detector ([`names`]). A code span that is one
//!    token gets that token's kind; otherwise it is a `code` mention, and the typed tokens
//!    inside it are mentions too.
//! 3. The last breadcrumb segment is the heading subject ([`heading`]): a typed token when the
//!    heading is one (`ERR_REQUIRE_ESM`, `new X509Certificate(buffer)`), a `topic` otherwise.
//! 4. Names are canonicalised ([`canon`]) so that mentions of the same thing merge, scored
//!    ([`strength`]), sorted by strength (descending) then name, and capped at
//!    [`MAX_MENTIONS`].
//!
//! Everything here is pure and deterministic: the same input gives the same output, in the same
//! order, on every platform (only `+ * / sqrt` are used on floats).

mod canon;
mod classify;
mod heading;
mod names;
mod scan;
mod stoplist;
mod strength;

use serde::{Deserialize, Serialize};

pub use strength::{
    COUNT_BONUS, KIND_WEIGHT_CODE, KIND_WEIGHT_ERROR_CODE, KIND_WEIGHT_FILE, KIND_WEIGHT_FLAG,
    KIND_WEIGHT_HOST, KIND_WEIGHT_IDENTIFIER, KIND_WEIGHT_NAME, KIND_WEIGHT_TICKET,
    KIND_WEIGHT_TOPIC, KIND_WEIGHT_VERSION, MAX_MENTIONS, MIN_STRENGTH, POSITION_WEIGHT_BODY,
    POSITION_WEIGHT_CODE, POSITION_WEIGHT_HEADING,
};

/// Shortest canonical name kept, in characters.
pub const MIN_NAME_CHARS: usize = 2;
/// Longest canonical name kept, in characters.
pub const MAX_NAME_CHARS: usize = 80;

/// What kind of thing a mention names. Serialised in lowercase (`error_code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntityKind {
    /// A config key, API name or environment variable: `fs.readFile`, `UV_THREADPOOL_SIZE`.
    Identifier,
    /// `ERR_REQUIRE_ESM`, `EADDRINUSE`, `SQLSTATE 40P01`.
    ErrorCode,
    /// A file name or path: `pg_hba.conf`, `/etc/nginx/nginx.conf`.
    File,
    /// A command-line flag: `--max-old-space-size`.
    Flag,
    /// A ticket or issue id: `JIRA-123`, `#4512`.
    Ticket,
    /// A host name: `api-gateway.internal`.
    Host,
    /// A version: `v18.19.0`, `node 18.19`.
    Version,
    /// An inline code span that is none of the above.
    Code,
    /// A capitalised name: "Worker Threads", "Priya Nair".
    Name,
    /// The subject of the item's heading (the last breadcrumb segment).
    Topic,
}

impl EntityKind {
    /// Every kind, in declaration order: the one list of entity kinds (npm reads it through
    /// memloom-wasm's `entityKinds`, for its LLM extractor's prompt and schema and for the text
    /// an entity is embedded from).
    pub const ALL: [EntityKind; 10] = [
        EntityKind::Identifier,
        EntityKind::ErrorCode,
        EntityKind::File,
        EntityKind::Flag,
        EntityKind::Ticket,
        EntityKind::Host,
        EntityKind::Version,
        EntityKind::Code,
        EntityKind::Name,
        EntityKind::Topic,
    ];

    /// The kind in words, as an embedding model reads it next to a name:
    /// `ERR_REQUIRE_ESM (error code)`.
    pub fn words(self) -> &'static str {
        match self {
            EntityKind::ErrorCode => "error code",
            other => other.as_str(),
        }
    }

    /// The serialised name, e.g. `error_code`.
    pub fn as_str(self) -> &'static str {
        match self {
            EntityKind::Identifier => "identifier",
            EntityKind::ErrorCode => "error_code",
            EntityKind::File => "file",
            EntityKind::Flag => "flag",
            EntityKind::Ticket => "ticket",
            EntityKind::Host => "host",
            EntityKind::Version => "version",
            EntityKind::Code => "code",
            EntityKind::Name => "name",
            EntityKind::Topic => "topic",
        }
    }
}

/// One distinct entity mentioned by an item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mention {
    /// Canonical name: what is stored, merged on and embedded.
    pub name: String,
    /// The name as first written in the item.
    pub display: String,
    pub kind: EntityKind,
    /// How strongly the item is about this entity, in `(0, 1]` (see [`strength`]).
    pub strength: f32,
    /// How many times the item mentions it.
    pub count: u32,
}

/// Where in an item a mention occurs; the position weights the mention's strength.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Position {
    Heading,
    Code,
    Body,
}

/// Extracts the entities `text` mentions. `breadcrumb` is the item's heading path
/// (`Title > Section > Subsection`, as in [`crate::Chunk::breadcrumb`]); pass a chunk's `text`,
/// not its `content`, which repeats the breadcrumb.
///
/// The result is sorted by strength (descending), then name, and holds at most
/// [`MAX_MENTIONS`] mentions.
pub fn extract_entities(text: &str, breadcrumb: Option<&str>) -> Vec<Mention> {
    let mut acc = strength::Accumulator::default();
    if let Some(crumb) = breadcrumb {
        heading::extract(crumb, &mut acc);
    }
    scan::extract(text, &mut acc);
    acc.finish()
}

/// Extracts the entities of many items, in order: `(text, breadcrumb)` pairs as for
/// [`extract_entities`]. What indexing and the throughput benchmark call.
pub fn extract_entities_batch<'a, I>(items: I) -> Vec<Vec<Mention>>
where
    I: IntoIterator<Item = (&'a str, Option<&'a str>)>,
{
    items
        .into_iter()
        .map(|(text, crumb)| extract_entities(text, crumb))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str, crumb: Option<&str>) -> Vec<(String, EntityKind)> {
        extract_entities(text, crumb)
            .into_iter()
            .map(|m| (m.name, m.kind))
            .collect()
    }

    fn has(text: &str, crumb: Option<&str>, name: &str, kind: EntityKind) -> bool {
        names(text, crumb).contains(&(name.to_string(), kind))
    }

    #[test]
    fn kinds_from_prose() {
        let t = "Production runs Node 18.19 on the api-gateway hosts. Set UV_THREADPOOL_SIZE=8 \
                 and --max-old-space-size=2048 before calling fs.readFile(). It threw \
                 ERR_REQUIRE_ESM, then EADDRINUSE and SQLSTATE 40P01; see JIRA-123 and #4512. \
                 Edit /etc/nginx/nginx.conf and pg_hba.conf on api-gateway.internal, then \
                 upgrade to v18.19.0. Ask Priya Nair about Worker Threads.";
        let got = names(t, None);
        for (name, kind) in [
            ("node 18.19", EntityKind::Version),
            ("api-gateway", EntityKind::Identifier),
            ("UV_THREADPOOL_SIZE", EntityKind::Identifier),
            ("--max-old-space-size", EntityKind::Flag),
            ("fs.readFile", EntityKind::Identifier),
            ("ERR_REQUIRE_ESM", EntityKind::ErrorCode),
            ("EADDRINUSE", EntityKind::ErrorCode),
            ("SQLSTATE 40P01", EntityKind::ErrorCode),
            ("JIRA-123", EntityKind::Ticket),
            ("#4512", EntityKind::Ticket),
            ("/etc/nginx/nginx.conf", EntityKind::File),
            ("nginx.conf", EntityKind::File),
            ("pg_hba.conf", EntityKind::File),
            ("api-gateway.internal", EntityKind::Host),
            ("v18.19.0", EntityKind::Version),
            ("priya nair", EntityKind::Name),
            ("worker thread", EntityKind::Name),
        ] {
            assert!(
                got.contains(&(name.to_string(), kind)),
                "{name} {kind:?} in {got:?}"
            );
        }
        for noise in ["production", "it", "set", "edit", "ask"] {
            assert!(got.iter().all(|(n, _)| n != noise), "{noise} in {got:?}");
        }
    }

    #[test]
    fn code_spans_merge_with_prose() {
        let m = extract_entities("Call `fs.readFile()` or fs.readFile to read.", None);
        let read: Vec<_> = m.iter().filter(|m| m.name == "fs.readFile").collect();
        assert_eq!(read.len(), 1, "{m:?}");
        assert_eq!(read[0].count, 2);
        assert_eq!(read[0].display, "fs.readFile()");
        assert!(has(
            "Use `npm ci --omit=dev` here.",
            None,
            "npm ci --omit=dev",
            EntityKind::Code
        ));
        assert!(has(
            "Use `npm ci --omit=dev` here.",
            None,
            "--omit",
            EntityKind::Flag
        ));
    }

    #[test]
    fn names_merge_plural_and_possessive() {
        let m = extract_entities(
            "Talk to Worker Pools' owners. The Worker Pool is new. Ask about Worker Pool's size.",
            None,
        );
        let pool: Vec<_> = m.iter().filter(|m| m.name == "worker pool").collect();
        assert_eq!(pool.len(), 1, "{m:?}");
        assert_eq!(pool[0].count, 3);
        assert_eq!(pool[0].display, "Worker Pools");
    }

    #[test]
    fn topic_from_breadcrumb() {
        let m = extract_entities("Some text.", Some("Node.js > Worker threads > Import maps"));
        assert_eq!(m[0].name, "import map");
        assert_eq!(m[0].kind, EntityKind::Topic);
        assert!(has(
            "x",
            Some("Errors > ERR_REQUIRE_ESM"),
            "ERR_REQUIRE_ESM",
            EntityKind::ErrorCode
        ));
        assert!(has(
            "x",
            Some("Crypto > new X509Certificate(buffer)"),
            "X509Certificate",
            EntityKind::Identifier
        ));
    }

    #[test]
    fn noise_is_dropped() {
        let got = names(
            "The value is 42. Note: See the Example below. Returns 3.14 e.g. this.\n\
             ```js\nconst secretThing = require('node:fs');\n```\n\
             Read [the docs](https://example.com/x_y.md) and [`a`][ref-label-worker].",
            None,
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn strengths_are_ordered_and_bounded() {
        let m = extract_entities(
            "`ERR_X_Y` ERR_X_Y ERR_X_Y and Foo Bar with `thing` once.",
            Some("Guide > Setup"),
        );
        assert!(!m.is_empty());
        for w in m.windows(2) {
            assert!(
                w[0].strength > w[1].strength
                    || (w[0].strength == w[1].strength && w[0].name < w[1].name)
            );
        }
        assert!(m.iter().all(|m| m.strength > 0.0 && m.strength <= 1.0));
    }

    #[test]
    fn kind_serialises_lowercase() {
        let s = serde_json::to_string(&EntityKind::ErrorCode).unwrap();
        assert_eq!(s, "\"error_code\"");
        assert_eq!(EntityKind::ErrorCode.as_str(), "error_code");
    }
}

#[cfg(test)]
mod kind_tests {
    use super::EntityKind;

    #[test]
    fn all_lists_every_kind_once_and_serde_agrees_with_as_str() {
        let names: Vec<&str> = EntityKind::ALL.iter().map(|k| k.as_str()).collect();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for k in EntityKind::ALL {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.as_str()));
            let back: EntityKind = serde_json::from_str(&json).unwrap();
            assert_eq!(back, k);
        }
        assert_eq!(EntityKind::ErrorCode.words(), "error code");
        assert_eq!(EntityKind::Identifier.words(), "identifier");
    }
}
