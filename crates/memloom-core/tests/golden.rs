//! The golden files in `tests/golden/`, shared with the Node, browser, SQL and worker tests.

use std::fs;

use memloom_core::{chunk_document, embed, fuse, ArmRankings, Chunk, ChunkOptions, FuseParams};
use memloom_core::{Ranks, Weights, HASH_V1};
use serde::{Deserialize, Serialize};

use crate::util::{check_chunk_invariants, repo_tests_dir, updating_golden};

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ChunkCase {
    file: String,
    source: String,
    max_bytes: usize,
    chunks: Vec<Chunk>,
}

/// (file relative to tests/, source given to the chunker, cap)
const CHUNK_INPUTS: &[(&str, &str, usize)] = &[
    ("golden/chunks/nested.md", "nested.md", 2000),
    ("golden/chunks/code_fences.md", "code_fences.md", 2000),
    ("golden/chunks/tables.md", "tables.md", 2000),
    ("golden/chunks/front_matter.md", "front_matter.md", 2000),
    ("golden/chunks/no_headings.md", "no_headings.md", 2000),
    ("golden/chunks/crlf.md", "crlf.md", 2000),
    ("golden/chunks/non_ascii.md", "non_ascii.md", 2000),
    ("golden/chunks/long_section.md", "long_section.md", 300),
    ("golden/chunks/long_section.md", "long_section.md", 64),
    ("golden/chunks/notes.txt", "notes.txt", 2000),
    ("fixtures/nodejs/punycode.md", "nodejs/punycode.md", 2000),
    (
        "fixtures/nodejs/querystring.md",
        "nodejs/querystring.md",
        2000,
    ),
];

fn chunk_case(file: &str, source: &str, max_bytes: usize) -> ChunkCase {
    let text = fs::read_to_string(repo_tests_dir().join(file)).unwrap();
    let chunks = chunk_document(source, &text, &ChunkOptions { max_bytes }).unwrap();
    check_chunk_invariants(&text, &chunks, max_bytes);
    ChunkCase {
        file: file.to_string(),
        source: source.to_string(),
        max_bytes,
        chunks,
    }
}

#[test]
fn golden_chunks() {
    let path = repo_tests_dir().join("golden/chunks.json");
    let actual: Vec<ChunkCase> = CHUNK_INPUTS
        .iter()
        .map(|(f, s, m)| chunk_case(f, s, *m))
        .collect();
    if updating_golden() {
        fs::write(&path, serde_json::to_string_pretty(&actual).unwrap() + "\n").unwrap();
    }
    let expected: Vec<ChunkCase> =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(expected.len(), actual.len());
    for (e, a) in expected.iter().zip(&actual) {
        assert_eq!(e.file, a.file);
        assert_eq!(
            e.chunks, a.chunks,
            "chunks of {} (maxBytes {})",
            e.file, e.max_bytes
        );
    }
}

#[derive(Serialize, Deserialize)]
struct EmbeddingCase {
    text: String,
    embedder: String,
    dims: usize,
    vector: Vec<f32>,
}

const EMBED_INPUTS: &[&str] = &[
    "",
    "hello world",
    "ERR_REQUIRE_ESM",
    "what throws ERR_HTTP_HEADERS_SENT",
    "pg_hba.conf",
    "Edit /etc/nginx/nginx.conf and run `nginx -s reload` --dry-run",
    "max_connections shared_buffers work_mem",
    "readFileSync HTTPServer keepAliveTimeout",
    "How do I make a uniquely named scratch folder?",
    "Connections connection CONNECTED",
    "ＥＲＲ＿ＲＥＱＵＩＲＥ＿ＥＳＭ fullwidth",
    "Über die Größe: naïve café",
    "日本語のテキスト",
    "line one\r\nline two\r\n",
    "the of and a",
    "SQLSTATE 40P01 deadlock_detected",
    "Guide > Setup > Postgres\n\nEdit `pg_hba.conf` to let the replica connect.",
];

#[test]
fn golden_embeddings() {
    let path = repo_tests_dir().join("golden/embeddings.json");
    let actual: Vec<EmbeddingCase> = EMBED_INPUTS
        .iter()
        .map(|t| EmbeddingCase {
            text: t.to_string(),
            embedder: HASH_V1.id(),
            dims: HASH_V1.dims,
            vector: embed(t),
        })
        .collect();
    if updating_golden() {
        fs::write(&path, serde_json::to_string(&actual).unwrap() + "\n").unwrap();
    }
    let expected: Vec<EmbeddingCase> =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(expected.len(), actual.len());
    for (e, a) in expected.iter().zip(&actual) {
        assert_eq!(e.text, a.text);
        assert_eq!(e.embedder, "hash-v1");
        assert_eq!(e.dims, a.vector.len());
        // bit for bit, not approximately
        let eb: Vec<u32> = e.vector.iter().map(|x| x.to_bits()).collect();
        let ab: Vec<u32> = a.vector.iter().map(|x| x.to_bits()).collect();
        assert_eq!(eb, ab, "embedding of {:?}", e.text);
    }
}

#[derive(Deserialize)]
struct FusionCase {
    name: String,
    k: u32,
    weights: Weights,
    arms: ArmRankings,
    expected: Vec<FusedExpected>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FusedExpected {
    id: i64,
    rrf_score: f64,
    ranks: Ranks,
}

#[test]
fn golden_fusion() {
    let text = fs::read_to_string(repo_tests_dir().join("golden/fusion.json")).unwrap();
    let cases: Vec<FusionCase> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() >= 8);
    for case in cases {
        let params = FuseParams {
            k: case.k,
            weights: case.weights,
        };
        let got = fuse(&case.arms, &params).unwrap();
        let got: Vec<(i64, u64, Ranks)> = got
            .iter()
            .map(|f| (f.id, f.rrf_score.to_bits(), f.ranks))
            .collect();
        let want: Vec<(i64, u64, Ranks)> = case
            .expected
            .iter()
            .map(|f| (f.id, f.rrf_score.to_bits(), f.ranks))
            .collect();
        assert_eq!(got, want, "fusion case {:?}", case.name);
    }
}
