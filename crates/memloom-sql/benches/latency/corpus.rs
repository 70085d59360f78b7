//! The corpus generator: the Node.js docs of ../shared/eval chunked, repeated with variations
//! until N items, plus the team memories; hash-v1 embeddings on two threads.

use std::path::PathBuf;

use memloom_core::{chunk_document, embed, extract_entities, ChunkOptions};

use crate::{MENTIONS_PER_ITEM, NS, NS_OTHER};

pub(crate) struct BaseChunk {
    pub(crate) source: String,
    pub(crate) breadcrumb: String,
    pub(crate) text: String,
    /// (name, kind) of the strongest entities, with strength.
    pub(crate) mentions: Vec<(String, String, f32)>,
}

pub(crate) struct Corpus {
    pub(crate) chunks: Vec<BaseChunk>,
    /// Prose sentences of every chunk, mixed into the variations.
    pub(crate) sentences: Vec<String>,
    /// (key, text) of ../shared/eval memories.
    pub(crate) memories: Vec<(String, String)>,
    /// (type, query) of queries.jsonl.
    pub(crate) queries: Vec<(String, String)>,
}

impl Corpus {
    pub(crate) fn load(eval: &std::path::Path) -> Corpus {
        let mut files: Vec<PathBuf> = std::fs::read_dir(eval.join("corpus"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let opts = ChunkOptions::default();
        let mut chunks = Vec::new();
        for path in files {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(&path).unwrap();
            for c in chunk_document(&name, &text, &opts).unwrap() {
                let mentions = extract_entities(&c.text, Some(&c.breadcrumb))
                    .into_iter()
                    .take(MENTIONS_PER_ITEM)
                    .map(|m| (m.name, m.kind.as_str().to_string(), m.strength))
                    .collect();
                chunks.push(BaseChunk {
                    source: c.source,
                    breadcrumb: c.breadcrumb,
                    text: c.text,
                    mentions,
                });
            }
        }
        let mut sentences = Vec::new();
        for c in &chunks {
            for line in prose_lines(&c.text) {
                sentences.extend(
                    line.split(". ")
                        .filter(|s| s.len() > 20)
                        .map(|s| s.trim_end_matches('.').to_string()),
                );
            }
        }
        let json_lines = |file: &str| -> Vec<serde_json::Value> {
            std::fs::read_to_string(eval.join(file))
                .unwrap()
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        };
        let memories = json_lines("memories.jsonl")
            .iter()
            .map(|v| {
                (
                    v["key"].as_str().unwrap().to_string(),
                    v["text"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let queries = json_lines("queries.jsonl")
            .iter()
            .map(|v| {
                (
                    v["type"].as_str().unwrap().to_string(),
                    v["query"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        Corpus {
            chunks,
            sentences,
            memories,
            queries,
        }
    }
}

/// Lines of running text: outside code fences, not tables, headings or indented code.
pub(crate) fn prose_lines(text: &str) -> Vec<&str> {
    let mut fence = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
            continue;
        }
        if !fence && !line.starts_with(['|', '#', ' ', '\t', '<']) && line.len() > 30 {
            out.push(line);
        }
    }
    out
}

/// splitmix64: a small deterministic generator, so every run loads the same rows.
pub(crate) struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

pub(crate) struct Item {
    pub(crate) namespace: &'static str,
    pub(crate) kind: &'static str,
    pub(crate) source: Option<String>,
    pub(crate) breadcrumb: Option<String>,
    pub(crate) key: Option<String>,
    pub(crate) content: String,
    /// The base chunk the item varies (its mentions are the base chunk's).
    pub(crate) base: Option<usize>,
    pub(crate) embedding: Vec<f32>,
}

/// Item `i` of a pool of `n`: every 20th a memory, the rest the corpus chunks, round 0 as
/// written and later rounds varied (sentences mixed in from other chunks, numbers shifted, a
/// few identifiers renamed, a different source path). About 10% go to a second namespace.
pub(crate) fn make_item(corpus: &Corpus, i: usize) -> Item {
    let mut rng = Rng(i as u64 ^ 0x6d65_6d6c_6f6f_6d00);
    let namespace = if rng.chance(10) { NS_OTHER } else { NS };
    if i % 20 == 19 {
        let (key, text) = &corpus.memories[(i / 20) % corpus.memories.len()];
        let content = if i / 20 < corpus.memories.len() {
            text.clone()
        } else {
            vary_numbers(text, &mut rng, i)
        };
        return Item {
            namespace,
            kind: "memory",
            source: None,
            breadcrumb: None,
            key: Some(format!("{key}-{i}")),
            embedding: embed(&content),
            content,
            base: None,
        };
    }
    let j = i - i / 20; // chunk ordinal
    let b = j % corpus.chunks.len();
    let round = j / corpus.chunks.len();
    let base = &corpus.chunks[b];
    let (source, text) = if round == 0 {
        (base.source.clone(), base.text.clone())
    } else {
        (
            format!("v{round}/{}", base.source),
            vary_text(corpus, &base.text, &mut rng, round),
        )
    };
    let content = format!("{}\n\n{}", base.breadcrumb, text);
    Item {
        namespace,
        kind: "chunk",
        source: Some(source),
        breadcrumb: Some(base.breadcrumb.clone()),
        key: None,
        embedding: embed(&content),
        content,
        base: Some(b),
    }
}

pub(crate) fn vary_text(corpus: &Corpus, text: &str, rng: &mut Rng, round: usize) -> String {
    let mut out = String::with_capacity(text.len() + 64);
    let mut fence = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fence = !fence;
        }
        let prose = !fence && !line.starts_with(['|', '#', ' ', '\t', '<', '`']) && line.len() > 30;
        if prose {
            let mut first = true;
            for s in line.split(". ") {
                if !first {
                    out.push_str(". ");
                }
                first = false;
                if rng.chance(30) {
                    out.push_str(&corpus.sentences[rng.below(corpus.sentences.len())]);
                } else {
                    out.push_str(s);
                }
            }
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    let out = vary_numbers(&out, rng, round);
    vary_identifiers(&out, rng, round)
}

/// Shifts about half of the free-standing numbers (not those inside identifiers).
pub(crate) fn vary_numbers(text: &str, rng: &mut Rng, salt: usize) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !word(bytes[i - 1])) {
            let start = i;
            while i < bytes.len() && bytes[i].is_ascii_digit() {
                i += 1;
            }
            let run = &text[start..i];
            let standalone =
                i == bytes.len() || !(bytes[i].is_ascii_alphabetic() || bytes[i] == b'_');
            match run.parse::<u64>() {
                Ok(v) if standalone && run.len() <= 9 && rng.chance(50) => {
                    out.push_str(&(v + 1 + (salt as u64 % 97)).to_string())
                }
                _ => out.push_str(run),
            }
        } else {
            let start = i;
            i += 1;
            while i < bytes.len() && !text.is_char_boundary(i) {
                i += 1;
            }
            out.push_str(&text[start..i]);
        }
    }
    out
}

/// Renames about 1 in 20 snake_case or dotted identifiers (`ERR_X` -> `ERR_X_3`).
pub(crate) fn vary_identifiers(text: &str, rng: &mut Rng, round: usize) -> String {
    let mut out = String::with_capacity(text.len() + 32);
    let mut rest = text;
    while let Some(pos) = rest.find(|c: char| c.is_ascii_alphabetic()) {
        out.push_str(&rest[..pos]);
        rest = &rest[pos..];
        let end = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.'))
            .unwrap_or(rest.len());
        let tok = rest[..end].trim_end_matches('.');
        out.push_str(tok);
        if (tok.contains('_') || tok[1..].contains('.')) && rng.chance(5) {
            out.push_str(&format!("_{}", round % 10));
        }
        rest = &rest[tok.len()..];
    }
    out.push_str(rest);
    out
}

/// The n items, generated and embedded on two threads.
pub(crate) fn make_items(corpus: &Corpus, n: usize) -> Vec<Item> {
    let threads = std::thread::available_parallelism()
        .map_or(2, |p| p.get())
        .min(2);
    let per = n.div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    (t * per..((t + 1) * per).min(n))
                        .map(|i| make_item(corpus, i))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    })
}
