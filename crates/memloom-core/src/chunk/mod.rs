//! Documents -> chunks.
//!
//! A chunk is a run of whole blocks under one heading. It never spans two headings; its
//! `breadcrumb` is the heading path (`Title > Section > Subsection`) and its stored `content` is
//! `breadcrumb + "\n\n" + text`, so the heading context is embedded and searchable with the text.
//! Sections longer than [`ChunkOptions::max_bytes`] split between blocks; a single block (a code
//! fence, a table, a list) is only cut when it alone is over the cap, and then between lines.

mod markdown;
mod pack;
mod plain;

use serde::{Deserialize, Serialize};

use crate::Error;

/// Default cap on a chunk's `text`, in bytes. About 500 tokens of English: small enough for the
/// 512-token window of common small embedding models once the breadcrumb is added, large enough
/// that most reference sections (a function, an error code, a config key) stay whole.
pub const DEFAULT_MAX_BYTES: usize = 2000;
/// Smallest cap accepted: below this, chunks stop carrying a useful amount of context.
pub const MIN_MAX_BYTES: usize = 64;

/// Separator between the headings of a breadcrumb.
pub const BREADCRUMB_SEPARATOR: &str = " > ";

/// How to chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChunkOptions {
    /// Cap on the bytes of a chunk's `text` (the breadcrumb is not counted).
    pub max_bytes: usize,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

impl ChunkOptions {
    fn check(&self) -> Result<(), Error> {
        if self.max_bytes < MIN_MAX_BYTES {
            return Err(Error::invalid_option(format!(
                "maxBytes must be at least {MIN_MAX_BYTES}, not {}",
                self.max_bytes
            )));
        }
        Ok(())
    }
}

/// One chunk of a document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Chunk {
    /// The document's path relative to the ingested root, as given by the caller.
    pub source: String,
    /// The heading path, e.g. `Guide > Setup > Postgres`.
    pub breadcrumb: String,
    /// Byte range of the chunk in the source document.
    pub start: usize,
    pub end: usize,
    /// The chunk's text: its blocks as written (line endings normalised to `\n`), without the
    /// heading lines, which the breadcrumb carries, and without invisible HTML comments.
    pub text: String,
    /// What is stored, embedded and searched: `breadcrumb + "\n\n" + text`.
    pub content: String,
}

/// Chunks a document, choosing the format from `source`'s extension: `.md`, `.markdown`,
/// `.mdx` as markdown, anything else as plain text.
pub fn chunk_document(source: &str, text: &str, opts: &ChunkOptions) -> Result<Vec<Chunk>, Error> {
    if is_markdown_path(source) {
        chunk_markdown(source, text, opts)
    } else {
        chunk_plain_text(source, text, opts)
    }
}

/// Whether `path` names a markdown file.
pub fn is_markdown_path(path: &str) -> bool {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    matches!(ext.as_deref(), Some("md" | "markdown" | "mdx"))
}

/// Chunks markdown (CommonMark with tables; YAML front matter is skipped).
pub fn chunk_markdown(source: &str, text: &str, opts: &ChunkOptions) -> Result<Vec<Chunk>, Error> {
    opts.check()?;
    Ok(pack::pack(
        source,
        text,
        &markdown::sections(source, text),
        opts,
    ))
}

/// Chunks plain text by paragraphs (blank-line separated), under the file name as breadcrumb.
pub fn chunk_plain_text(
    source: &str,
    text: &str,
    opts: &ChunkOptions,
) -> Result<Vec<Chunk>, Error> {
    opts.check()?;
    Ok(pack::pack(
        source,
        text,
        &plain::sections(source, text),
        opts,
    ))
}

/// The file name of a source path (`docs/guide.md` -> `guide.md`): the breadcrumb of text that
/// has no heading above it.
pub(crate) fn file_name(source: &str) -> &str {
    source.rsplit(['/', '\\']).next().unwrap_or(source)
}

/// A run of blocks under one breadcrumb, found by a format reader and packed into chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section {
    pub breadcrumb: String,
    pub blocks: Vec<Block>,
}

/// A block's byte range in the source, trailing white space excluded. Packing keeps blocks
/// whole unless one alone is over the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Block {
    pub start: usize,
    pub end: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_a_tiny_cap() {
        let err = chunk_markdown("a.md", "# A", &ChunkOptions { max_bytes: 3 }).unwrap_err();
        assert_eq!(err.to_string(), "maxBytes must be at least 64, not 3");
    }

    #[test]
    fn dispatches_on_extension() {
        assert!(is_markdown_path("docs/A.MD"));
        assert!(!is_markdown_path("notes.txt"));
        assert!(!is_markdown_path("README"));
        assert_eq!(file_name("docs/sub/guide.md"), "guide.md");
    }
}
