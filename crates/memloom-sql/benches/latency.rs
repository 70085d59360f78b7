//! Recall latency on a real PostgreSQL 15 + pgvector at 100k and 1M items.
//!
//! `bash scripts/bench-sql.sh [SIZES]` starts a throwaway cluster and runs
//! `cargo bench -p memloom-sql --bench latency` with `MEMLOOM_BENCH_DATABASE_URL` set
//! (`MEMLOOM_BENCH_SIZES=20000` for a quick run). For each size it makes a fresh database,
//! applies the migrations, loads N items built from the Node.js docs of ../shared/eval
//! (chunked with memloom_core, repeated with variations, plus memories; hash-v1 embeddings),
//! builds the HNSW and GIN indexes after the load, and times >= 200 mixed queries (identifiers,
//! common words, paraphrases), one warm-up pass then one timed pass, for:
//! `memloom_fuse`; the vector arm alone; the keyword arm alone; the widely copied
//! "hybrid_search" shape (vector arm ranked by row_number() over the whole filtered table); its
//! fixed form (each arm `ORDER BY dist LIMIT n` in a subquery, fused in SQL); and three round
//! trips fused in the client with `memloom_core::fuse`. Ratios are against `memloom_fuse`
//! measured in the same run. Every timed call checks its answer.
//!
//! Every shape runs as each role of `MEMLOOM_BENCH_ROLES` (default `app,superuser`): `app` is
//! a role row-level security binds (no superuser, no BYPASSRLS, granted the namespace), as
//! production connects; `superuser` bypasses row-level security, the comparison row.
//! `MEMLOOM_BENCH_SCHEMA=7` applies only the migrations up to that version (the figures before
//! a migration, with the same binary).

use std::collections::{BTreeSet, HashMap};
use std::error::Error as StdError;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use futures_util::pin_mut;
use memloom_core::{chunk_document, embed, extract_entities, ArmRankings, ChunkOptions};
use memloom_sql::FuseParams;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls};

const NS: &str = "bench";
const NS_OTHER: &str = "bench-other";
const LIMIT: i32 = 10;
/// Candidates per arm, as memloom_fuse's default for LIMIT, so the arm-alone and client-fused
/// shapes fuse the same candidate lists as memloom_fuse.
fn candidates() -> i32 {
    memloom_core::fuse::default_candidates(LIMIT as u32) as i32
}
const SCAN_CAP: i32 = 1000;
/// Mentions kept per item (the strongest).
const MENTIONS_PER_ITEM: usize = 6;
/// The copied hybrid_search shape scans the whole table per query: time a stride sample.
const COPIED_QUERIES: usize = 40;

type BoxError = Box<dyn StdError + Send + Sync>;

/// The key under which `time_shape` keeps memloom_fuse's warm-up answers (call-to-call parity).
const WARMUP_PASS: u8 = 200;
/// memloom_fuse's (and the client-fused) top ids by (shape or pass, query index).
type TopIds = HashMap<(u8, usize), Vec<i64>>;
/// The RLS-bound role the bench creates (cluster-wide; trust auth on the throwaway cluster).
const APP_ROLE: &str = "memloom_bench_app";

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Role {
    /// Bound by row-level security, granted the bench namespace: what production runs.
    App,
    /// Bypasses row-level security: the comparison row.
    Superuser,
}

impl Role {
    fn label(self) -> &'static str {
        match self {
            Role::App => "app role (RLS-bound)",
            Role::Superuser => "superuser (bypasses RLS)",
        }
    }
}

fn bench_roles() -> Vec<Role> {
    std::env::var("MEMLOOM_BENCH_ROLES")
        .unwrap_or_else(|_| "app,superuser".into())
        .split([',', ' '])
        .filter(|s| !s.is_empty())
        .map(|s| match s {
            "app" => Role::App,
            "superuser" => Role::Superuser,
            other => panic!("MEMLOOM_BENCH_ROLES: {other:?} is not app or superuser"),
        })
        .collect()
}

fn main() {
    let eval = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval/nodejs-docs");
    if !eval.join("corpus").is_dir() {
        println!(
            "skipped: {} is not there (the eval set lives beside the checkout)",
            eval.display()
        );
        return;
    }
    let url = match std::env::var("MEMLOOM_BENCH_DATABASE_URL") {
        Ok(u) if !u.is_empty() => u,
        _ => {
            println!(
                "skipped: MEMLOOM_BENCH_DATABASE_URL is not set (run `bash scripts/bench-sql.sh`)"
            );
            return;
        }
    };
    let sizes: Vec<usize> = std::env::var("MEMLOOM_BENCH_SIZES")
        .unwrap_or_else(|_| "100000,1000000".into())
        .split([',', ' '])
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse()
                .expect("MEMLOOM_BENCH_SIZES: comma-separated item counts")
        })
        .collect();
    let corpus = Corpus::load(&eval);
    println!(
        "corpus: {} chunks, {} sentences, {} memories from {}",
        corpus.chunks.len(),
        corpus.sentences.len(),
        corpus.memories.len(),
        eval.display()
    );
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    for n in sizes {
        if let Err(e) = rt.block_on(run_size(&url, &corpus, n)) {
            eprintln!("latency bench at {n} items failed: {e}");
            std::process::exit(2);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Data

struct BaseChunk {
    source: String,
    breadcrumb: String,
    text: String,
    /// (name, kind) of the strongest entities, with strength.
    mentions: Vec<(String, String, f32)>,
}

struct Corpus {
    chunks: Vec<BaseChunk>,
    /// Prose sentences of every chunk, mixed into the variations.
    sentences: Vec<String>,
    /// (key, text) of ../shared/eval memories.
    memories: Vec<(String, String)>,
    /// (type, query) of queries.jsonl.
    queries: Vec<(String, String)>,
}

impl Corpus {
    fn load(eval: &std::path::Path) -> Corpus {
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
fn prose_lines(text: &str) -> Vec<&str> {
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
struct Rng(u64);

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

struct Item {
    namespace: &'static str,
    kind: &'static str,
    source: Option<String>,
    breadcrumb: Option<String>,
    key: Option<String>,
    content: String,
    /// The base chunk the item varies (its mentions are the base chunk's).
    base: Option<usize>,
    embedding: Vec<f32>,
}

/// Item `i` of a pool of `n`: every 20th a memory, the rest the corpus chunks, round 0 as
/// written and later rounds varied (sentences mixed in from other chunks, numbers shifted, a
/// few identifiers renamed, a different source path). About 10% go to a second namespace.
fn make_item(corpus: &Corpus, i: usize) -> Item {
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

fn vary_text(corpus: &Corpus, text: &str, rng: &mut Rng, round: usize) -> String {
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
fn vary_numbers(text: &str, rng: &mut Rng, salt: usize) -> String {
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
fn vary_identifiers(text: &str, rng: &mut Rng, round: usize) -> String {
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
fn make_items(corpus: &Corpus, n: usize) -> Vec<Item> {
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

// ---------------------------------------------------------------------------------------------
// Loading

/// pgvector's binary format: dims (u16), unused (u16), then f32s, big-endian.
#[derive(Debug)]
struct PgVector<'a>(&'a [f32]);

impl ToSql for PgVector<'_> {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.put_u16(u16::try_from(self.0.len())?);
        out.put_u16(0);
        for &f in self.0 {
            out.put_f32(f);
        }
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        ty.name() == "vector"
    }
    to_sql_checked!();
}

/// jsonb's binary format: version 1, then the JSON text.
#[derive(Debug)]
struct Jsonb(String);

impl ToSql for Jsonb {
    fn to_sql(&self, _ty: &Type, out: &mut BytesMut) -> Result<IsNull, BoxError> {
        out.put_u8(1);
        out.put_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(ty: &Type) -> bool {
        *ty == Type::JSONB
    }
    to_sql_checked!();
}

async fn connect(config: &Config) -> Result<Client, BoxError> {
    let (client, conn) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("connection error: {e}");
        }
    });
    Ok(client)
}

async fn copy_items(config: Config, items: &[Item]) -> Result<(), BoxError> {
    let client = connect(&config).await?;
    // A bulk load (sql/0009): the statistics triggers only mark the namespaces, and
    // memloom_refresh_stats below recomputes them once instead of summing 1M rows' lexemes.
    client
        .batch_execute("SELECT set_config('memloom.stats_bulk', 'on', false)")
        .await?;
    let vector = client.prepare("SELECT $1::vector").await?.params()[0].clone();
    let sink = client
        .copy_in(
            "COPY memloom_items (namespace, kind, source, breadcrumb, key, content, embedding, metadata) \
             FROM STDIN (FORMAT binary)",
        )
        .await?;
    let writer = BinaryCopyInWriter::new(
        sink,
        &[
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            Type::TEXT,
            vector,
            Type::JSONB,
        ],
    );
    pin_mut!(writer);
    for it in items {
        let meta = Jsonb(match it.base {
            Some(b) => format!("{{\"base\": {b}}}"),
            None => "{}".to_string(),
        });
        writer
            .as_mut()
            .write(&[
                &it.namespace,
                &it.kind,
                &it.source,
                &it.breadcrumb,
                &it.key,
                &it.content,
                &PgVector(&it.embedding),
                &meta,
            ])
            .await?;
    }
    writer.finish().await?;
    Ok(())
}

struct LoadReport {
    lines: Vec<String>,
}

impl LoadReport {
    fn step(&mut self, what: &str, d: Duration, extra: &str) {
        let line = format!("| {what} | {:.1} s | {extra} |", d.as_secs_f64());
        eprintln!("bench: {line}");
        self.lines.push(line);
    }
}

async fn load(
    config: &Config,
    client: &Client,
    corpus: &Corpus,
    n: usize,
) -> Result<LoadReport, BoxError> {
    let mut rep = LoadReport { lines: Vec::new() };
    // The indexes are built after the load (much faster than maintaining them per row); the
    // store was initialised without its HNSW indexes.
    client
        .batch_execute("DROP INDEX memloom_items_tsv;")
        .await?;

    let t = Instant::now();
    let items = make_items(corpus, n);
    let mb = items.iter().map(|i| i.content.len()).sum::<usize>() as f64 / 1e6;
    rep.step(
        "generate + embed (Rust, 2 threads)",
        t.elapsed(),
        &format!("{n} items, {mb:.0} MB of text"),
    );

    // Two COPY streams: the generated tsv column (memloom_tsvector) is the server's main cost.
    let t = Instant::now();
    let (a, b) = items.split_at(items.len() / 2);
    let (ra, rb) = tokio::join!(copy_items(config.clone(), a), copy_items(config.clone(), b));
    ra?;
    rb?;
    let d = t.elapsed();
    rep.step(
        "COPY memloom_items (binary, 2 streams; computes tsv)",
        d,
        &format!("{:.0} rows/s", n as f64 / d.as_secs_f64()),
    );

    // Entities: the base chunks' strongest mentions; every variation of a chunk mentions them.
    let t = Instant::now();
    let mut entities: BTreeSet<(&str, &str)> = BTreeSet::new();
    for c in &corpus.chunks {
        for (name, kind, _) in &c.mentions {
            entities.insert((name, kind));
        }
    }
    let vector = client.prepare("SELECT $1::vector").await?.params()[0].clone();
    let sink = client
        .copy_in(
            "COPY memloom_entities (namespace, name, kind, embedding) FROM STDIN (FORMAT binary)",
        )
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::TEXT, Type::TEXT, vector]);
    pin_mut!(writer);
    for ns in [NS, NS_OTHER] {
        for (name, kind) in &entities {
            let v = embed(name);
            writer
                .as_mut()
                .write(&[&ns, name, kind, &PgVector(&v)])
                .await?;
        }
    }
    writer.finish().await?;
    client
        .batch_execute(
            "CREATE TEMP TABLE bench_mentions (base integer, name text, kind text, strength real)",
        )
        .await?;
    let sink = client
        .copy_in("COPY bench_mentions FROM STDIN (FORMAT binary)")
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT4, Type::TEXT, Type::TEXT, Type::FLOAT4]);
    pin_mut!(writer);
    for (b, c) in corpus.chunks.iter().enumerate() {
        for (name, kind, strength) in &c.mentions {
            writer
                .as_mut()
                .write(&[&(b as i32), name, kind, strength])
                .await?;
        }
    }
    writer.finish().await?;
    // Foreign keys hold by construction; replica role skips their per-row triggers.
    client
        .batch_execute("SET session_replication_role = replica")
        .await?;
    let mentions = client
        .execute(
            "INSERT INTO memloom_mentions (entity_id, item_id, strength)
             SELECT e.id, i.id, bm.strength
             FROM memloom_items i
             JOIN bench_mentions bm ON bm.base = (i.metadata->>'base')::integer
             JOIN memloom_entities e ON e.namespace = i.namespace AND e.name = bm.name AND e.kind = bm.kind
             WHERE i.metadata ? 'base'",
            &[],
        )
        .await?;
    client
        .batch_execute("SET session_replication_role = origin")
        .await?;
    rep.step(
        "entities + mentions (memloom_core::extract_entities)",
        t.elapsed(),
        &format!(
            "{} entities x 2 namespaces, {mentions} mentions",
            entities.len()
        ),
    );
    drop(items);

    client
        .batch_execute(
            "SET maintenance_work_mem = '2GB'; SET max_parallel_maintenance_workers = 1;",
        )
        .await?;
    let t = Instant::now();
    memloom_sql::ensure_vector_index(client).await?;
    rep.step(
        "CREATE INDEX hnsw (m 16, ef_construction 64)",
        t.elapsed(),
        "maintenance_work_mem 2GB, 1 parallel worker",
    );
    let t = Instant::now();
    client
        .batch_execute("CREATE INDEX memloom_items_tsv ON memloom_items USING gin (tsv)")
        .await?;
    rep.step("CREATE INDEX gin (tsv)", t.elapsed(), "");
    let t = Instant::now();
    client.batch_execute("VACUUM ANALYZE").await?;
    rep.step("VACUUM ANALYZE", t.elapsed(), "");
    let t = Instant::now();
    for ns in [NS, NS_OTHER] {
        client
            .execute("SELECT memloom_refresh_stats($1)", &[&ns])
            .await?;
    }
    rep.step("memloom_refresh_stats (both namespaces)", t.elapsed(), "");

    let sizes = client
        .query(
            "SELECT c::text, pg_size_pretty(pg_relation_size(c))
             FROM unnest(ARRAY['memloom_items', 'memloom_items_embedding', 'memloom_items_tsv',
                               'memloom_items_pkey', 'memloom_mentions', 'memloom_entities']::regclass[]) AS c",
            &[],
        )
        .await?;
    for r in sizes {
        let line = format!(
            "| size of {} | {} | pg_relation_size |",
            r.get::<_, String>(0),
            r.get::<_, String>(1)
        );
        eprintln!("bench: {line}");
        rep.lines.push(line);
    }
    let total: String = client
        .query_one(
            "SELECT pg_size_pretty(pg_total_relation_size('memloom_items'))",
            &[],
        )
        .await?
        .get(0);
    rep.lines.push(format!("| size of memloom_items, total (heap + toast + indexes) | {total} | pg_total_relation_size |"));
    Ok(rep)
}

// ---------------------------------------------------------------------------------------------
// Queries

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum QType {
    Identifier,
    Common,
    Paraphrase,
    Eval,
}

struct Query {
    qtype: QType,
    text: String,
    embedding: Vec<f32>,
    /// For identifier queries: the identifier the top keyword and fused results must contain.
    must_contain: Option<String>,
}

fn is_err_code(t: &str) -> bool {
    t.len() > 6
        && t.starts_with("ERR_")
        && t.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
}

fn is_api_name(t: &str) -> bool {
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

fn is_flag(t: &str) -> bool {
    t.len() > 6
        && t.starts_with("--")
        && t[2..].bytes().all(|c| c.is_ascii_lowercase() || c == b'-')
        && !t.ends_with('-')
}

/// Every `stride`-th of a sorted set, at most `take`.
fn sample(set: &BTreeSet<String>, take: usize) -> Vec<String> {
    let stride = (set.len() / take).max(1);
    set.iter().step_by(stride).take(take).cloned().collect()
}

fn candidate_queries(corpus: &Corpus) -> Vec<Query> {
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

// ---------------------------------------------------------------------------------------------
// The query shapes

/// The widely copied hybrid_search: both arms ranked by row_number() over every filtered row,
/// so neither the HNSW index nor a LIMIT can cut the vector arm short.
const COPIED_HYBRID: &str = "
WITH full_text AS (
    SELECT id, row_number() OVER (ORDER BY ts_rank_cd(tsv, websearch_to_tsquery('english', $1)) DESC) AS rank_ix
    FROM memloom_items
    WHERE namespace = $3 AND status = 'active' AND tsv @@ websearch_to_tsquery('english', $1)
    ORDER BY rank_ix
    LIMIT $5
), semantic AS (
    SELECT id, row_number() OVER (ORDER BY embedding <=> $2::real[]::vector) AS rank_ix
    FROM memloom_items
    WHERE namespace = $3 AND status = 'active'
    ORDER BY rank_ix
    LIMIT $5
)
SELECT m.id, m.content
FROM full_text FULL OUTER JOIN semantic ON full_text.id = semantic.id
JOIN memloom_items m ON coalesce(full_text.id, semantic.id) = m.id
ORDER BY coalesce(1.0 / (60 + semantic.rank_ix), 0.0) * 1.0
       + coalesce(1.0 / (60 + full_text.rank_ix), 0.0) * 2.0 DESC, m.id
LIMIT $4";

/// The fix of the same shape: each arm `ORDER BY <indexable> LIMIT n` in a subquery, ranks
/// numbered over those n rows only, fused in SQL (hnsw.ef_search set on the session).
const FIXED_HYBRID: &str = "
WITH semantic AS (
    SELECT id, row_number() OVER (ORDER BY d, id) AS rank_ix FROM (
        SELECT id, embedding <=> $2::real[]::vector AS d
        FROM memloom_items
        WHERE namespace = $3 AND status = 'active'
        ORDER BY embedding <=> $2::real[]::vector
        LIMIT $5) v
), full_text AS (
    SELECT id, row_number() OVER (ORDER BY r DESC, id) AS rank_ix FROM (
        SELECT id, ts_rank_cd(tsv, q) AS r
        FROM memloom_items, websearch_to_tsquery('english', $1) AS q
        WHERE namespace = $3 AND status = 'active' AND tsv @@ q
        ORDER BY r DESC
        LIMIT $5) k
)
SELECT m.id, m.content
FROM full_text FULL OUTER JOIN semantic ON full_text.id = semantic.id
JOIN memloom_items m ON coalesce(full_text.id, semantic.id) = m.id
ORDER BY coalesce(1.0 / (60 + semantic.rank_ix), 0.0) * 1.0
       + coalesce(1.0 / (60 + full_text.rank_ix), 0.0) * 2.0 DESC, m.id
LIMIT $4";

#[derive(Clone, Copy, PartialEq, Eq)]
enum Shape {
    Fuse,
    VectorArm,
    KeywordArm,
    KeywordViaFuse,
    Copied,
    Fixed,
    ClientFused,
}

impl Shape {
    fn label(self) -> &'static str {
        match self {
            Shape::Fuse => "memloom_fuse (one call)",
            Shape::VectorArm => "vector arm alone",
            Shape::KeywordArm => "keyword arm alone",
            Shape::KeywordViaFuse => "keyword arm via memloom_fuse(arms => keyword)",
            Shape::Copied => "copied hybrid_search (row_number)",
            Shape::Fixed => "fixed hybrid (ORDER BY .. LIMIT per arm)",
            Shape::ClientFused => "3 round trips + memloom_core::fuse",
        }
    }
}

fn contains_ci(content: &str, needle: &str) -> bool {
    content.to_lowercase().contains(&needle.to_lowercase())
}

async fn ids(
    client: &Client,
    sql: &str,
    params: &[(&(dyn ToSql + Sync), Type)],
) -> Result<Vec<i64>, BoxError> {
    Ok(client
        .query_typed(sql, params)
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Runs one query in one shape and checks the answer; returns the top ids for parity checks.
async fn run_one(
    client: &Client,
    shape: Shape,
    q: &Query,
    stats: &mut Checks,
) -> Result<Vec<i64>, BoxError> {
    let ns = NS.to_string();
    let emb = &q.embedding;
    let (cand, lim, cap) = (candidates(), LIMIT, SCAN_CAP);
    match shape {
        Shape::Fuse => {
            let rows = memloom_sql::fuse(
                client,
                &FuseParams::new(q.text.clone(), emb.clone(), NS, LIMIT),
            )
            .await?;
            assert!(
                rows.len() <= LIMIT as usize,
                "memloom_fuse returned {} rows for limit {LIMIT}",
                rows.len()
            );
            assert!(
                !rows.is_empty(),
                "memloom_fuse returned nothing for {:?}",
                q.text
            );
            assert!(
                rows.windows(2).all(|w| w[0].rrf_score >= w[1].rrf_score),
                "memloom_fuse out of order"
            );
            if let Some(id) = &q.must_contain {
                assert!(
                    contains_ci(&rows[0].content, id),
                    "memloom_fuse's top result for {id:?} does not contain it"
                );
            }
            stats.keyword_votes += rows.iter().any(|r| r.keyword_rank.is_some()) as usize;
            stats.entity_votes += rows.iter().any(|r| r.entity_rank.is_some()) as usize;
            Ok(rows.iter().map(|r| r.id).collect())
        }
        Shape::VectorArm => {
            let rows = client
                .query_typed(
                    "SELECT id, distance FROM memloom_vector_arm($1::real[]::vector, $2, $3, NULL)",
                    &[
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                    ],
                )
                .await?;
            assert_eq!(
                rows.len(),
                candidates() as usize,
                "the vector arm returned too few rows"
            );
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::KeywordViaFuse => {
            let mut params = FuseParams::new(q.text.clone(), emb.clone(), NS, LIMIT);
            params.arms = Some(vec!["keyword".into()]);
            let rows = memloom_sql::fuse(client, &params).await?;
            if let Some(id) = &q.must_contain {
                let top = rows.first().map(|r| r.content.as_str()).unwrap_or("");
                assert!(
                    contains_ci(top, id),
                    "the keyword arm's top result (via memloom_fuse) for {id:?} does not contain it"
                );
            }
            Ok(rows.iter().map(|r| r.id).collect())
        }
        Shape::KeywordArm => {
            let rows = client
                .query_typed(
                    "SELECT k.id, m.content FROM memloom_keyword_arm($1, $2, $3, NULL, $4) k
                     JOIN memloom_items m ON m.id = k.id LIMIT 1",
                    &[
                        (&q.text, Type::TEXT),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                        (&cap, Type::INT4),
                    ],
                )
                .await?;
            if let Some(id) = &q.must_contain {
                let top: &str = rows.first().map(|r| r.get(1)).unwrap_or("");
                assert!(
                    contains_ci(top, id),
                    "the keyword arm's top result for {id:?} does not contain it"
                );
            }
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::Copied | Shape::Fixed => {
            let sql = if shape == Shape::Copied {
                COPIED_HYBRID
            } else {
                FIXED_HYBRID
            };
            let rows = client
                .query_typed(
                    sql,
                    &[
                        (&q.text, Type::TEXT),
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&(lim as i64), Type::INT8),
                        (&(cand as i64), Type::INT8),
                    ],
                )
                .await?;
            assert!(
                !rows.is_empty() && rows.len() <= LIMIT as usize,
                "hybrid returned {} rows",
                rows.len()
            );
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::ClientFused => {
            // The same votes as memloom_fuse (sql/0010): every vector candidate is a boost id,
            // but only those with cosine > 0 vote; keyword items vote from
            // DEFAULT_KEYWORD_FLOOR of the best score up.
            let rows = client
                .query_typed(
                    "SELECT id, distance FROM memloom_vector_arm($1::real[]::vector, $2, $3, NULL)",
                    &[
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                    ],
                )
                .await?;
            let seen: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            let vector: Vec<i64> = rows
                .iter()
                .filter(|r| r.get::<_, f64>(1) < 1.0)
                .map(|r| r.get(0))
                .collect();
            let rows = client
                .query_typed(
                    "SELECT id, score FROM memloom_keyword_arm($1, $2, $3, NULL, $4, $5)",
                    &[
                        (&q.text, Type::TEXT),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                        (&cap, Type::INT4),
                        (&seen, Type::INT8_ARRAY),
                    ],
                )
                .await?;
            let best = rows.first().map_or(0.0, |r| r.get::<_, f64>(1));
            let floor = memloom_core::fuse::DEFAULT_KEYWORD_FLOOR * best;
            let keyword: Vec<i64> = rows
                .iter()
                .filter(|r| r.get::<_, f64>(1) >= floor)
                .map(|r| r.get(0))
                .collect();
            let gate = 0.60_f64;
            let entity = ids(
                client,
                "SELECT id FROM memloom_entity_arm($1::real[]::vector, $2, $3, $4, NULL)",
                &[
                    (emb, Type::FLOAT4_ARRAY),
                    (&ns, Type::TEXT),
                    (&cand, Type::INT4),
                    (&gate, Type::FLOAT8),
                ],
            )
            .await?;
            let fused = memloom_core::fuse(
                &ArmRankings {
                    vector,
                    keyword,
                    entity,
                },
                &memloom_core::FuseParams::default(),
            )?;
            assert!(!fused.is_empty(), "client fusion returned nothing");
            Ok(fused.iter().take(LIMIT as usize).map(|f| f.id).collect())
        }
    }
}

#[derive(Default)]
struct Checks {
    keyword_votes: usize,
    entity_votes: usize,
}

struct Timing {
    shape: Shape,
    n: usize,
    p50: f64,
    p95: f64,
    p99: f64,
    /// p95 by query type (identifier, common, paraphrase + eval).
    by_type: Vec<(QType, f64, f64)>,
}

fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[idx.clamp(1, sorted.len()) - 1]
}

async fn time_shape(
    client: &Client,
    shape: Shape,
    queries: &[&Query],
    warmup: &[&Query],
    top_ids: &mut HashMap<(u8, usize), Vec<i64>>,
) -> Result<Timing, BoxError> {
    let mut checks = Checks::default();
    for (i, q) in warmup.iter().enumerate() {
        let got = run_one(client, shape, q, &mut checks).await?;
        if shape == Shape::Fuse {
            top_ids.insert((WARMUP_PASS, i), got);
        }
    }
    let mut checks = Checks::default();
    let mut samples: Vec<(QType, f64)> = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let t = Instant::now();
        let got = run_one(client, shape, q, &mut checks).await?;
        samples.push((q.qtype, t.elapsed().as_secs_f64() * 1e3));
        if matches!(shape, Shape::Fuse | Shape::ClientFused) {
            top_ids.insert((shape as u8, i), got);
        }
    }
    if shape == Shape::Fuse {
        eprintln!(
            "bench: memloom_fuse: keyword arm voted on {} of {} queries, entity arm on {}",
            checks.keyword_votes,
            queries.len(),
            checks.entity_votes
        );
    }
    let mut all: Vec<f64> = samples.iter().map(|s| s.1).collect();
    all.sort_by(f64::total_cmp);
    let by_type = [QType::Identifier, QType::Common, QType::Paraphrase]
        .into_iter()
        .map(|t| {
            let mut v: Vec<f64> = samples
                .iter()
                .filter(|s| s.0 == t || (t == QType::Paraphrase && s.0 == QType::Eval))
                .map(|s| s.1)
                .collect();
            v.sort_by(f64::total_cmp);
            (t, pct(&v, 50.0), pct(&v, 95.0))
        })
        .collect();
    Ok(Timing {
        shape,
        n: all.len(),
        p50: pct(&all, 50.0),
        p95: pct(&all, 95.0),
        p99: pct(&all, 99.0),
        by_type,
    })
}

/// The tables of one role's run: every shape, per query class, the targets and the parities.
fn report_role(role: Role, timings: &[Timing], top_ids: &TopIds, queries: usize) {
    let fuse = timings.iter().find(|t| t.shape == Shape::Fuse).unwrap();
    let (f50, f95) = (fuse.p50, fuse.p95);
    println!();
    println!("### as the {}", role.label());
    println!();
    println!("| query shape | queries | p50 ms | p95 ms | p99 ms | p50 / fuse | p95 / fuse |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for t in timings {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.2}x | {:.2}x |",
            t.shape.label(),
            t.n,
            t.p50,
            t.p95,
            t.p99,
            t.p50 / f50,
            t.p95 / f95
        );
    }
    println!();
    println!("| query shape | identifier p50 / p95 | common-word p50 / p95 | paraphrase + eval p50 / p95 |");
    println!("| --- | ---: | ---: | ---: |");
    for t in timings {
        let cells: Vec<String> = t
            .by_type
            .iter()
            .map(|(_, a, b)| format!("{a:.1} / {b:.1}"))
            .collect();
        println!("| {} | {} |", t.shape.label(), cells.join(" | "));
    }
    println!();
    let vec50 = timings
        .iter()
        .find(|t| t.shape == Shape::VectorArm)
        .unwrap()
        .p50;
    let ok = |b: bool| if b { "met" } else { "MISSED" };
    println!(
        "targets: memloom_fuse p50 {f50:.1} ms <= 10 ms: {}; p95 {f95:.1} ms <= 30 ms: {}; p50 {:.2}x the vector arm <= 1.5x: {}",
        ok(f50 <= 10.0),
        ok(f95 <= 30.0),
        f50 / vec50,
        ok(f50 <= 1.5 * vec50)
    );
    let same = |a: u8, b: u8| {
        (0..queries)
            .filter(|i| {
                top_ids.get(&(a, *i)).is_some() && top_ids.get(&(a, *i)) == top_ids.get(&(b, *i))
            })
            .count()
    };
    println!(
        "parity: client-fused top {LIMIT} ids equal memloom_fuse's on {} of {queries} queries; memloom_fuse's warm-up and timed passes agree on {} of {queries}",
        same(Shape::Fuse as u8, Shape::ClientFused as u8),
        same(Shape::Fuse as u8, WARMUP_PASS)
    );
}

async fn run_size(url: &str, corpus: &Corpus, n: usize) -> Result<(), BoxError> {
    let admin_config: Config = url.parse()?;
    let admin = connect(&admin_config).await?;
    let db = format!("memloom_bench_{n}");
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {db}"))
        .await?;
    admin
        .batch_execute(&format!("CREATE DATABASE {db}"))
        .await?;
    let mut config = admin_config.clone();
    config.dbname(&db);
    let client = connect(&config).await?;
    match std::env::var("MEMLOOM_BENCH_SCHEMA") {
        // The schema as it was at that version: each file as a runner applies it, no ledger.
        Ok(v) if !v.is_empty() => {
            let upto: i32 = v
                .parse()
                .expect("MEMLOOM_BENCH_SCHEMA: a migration version");
            for m in memloom_sql::MIGRATIONS.iter().filter(|m| m.version <= upto) {
                client
                    .batch_execute(&format!("BEGIN; {}; COMMIT", m.sql))
                    .await?;
            }
            eprintln!("bench: schema up to migration {upto} only (MEMLOOM_BENCH_SCHEMA)");
        }
        _ => {
            memloom_sql::migrate(&client).await?;
        }
    }
    // hash-v1; the HNSW indexes are built after the load (see `load`).
    let hash_v1 = memloom_sql::StoreEmbedder {
        name: memloom_core::HASH_V1.name,
        version: memloom_core::HASH_V1.version as i32,
        dims: memloom_core::HASH_V1.dims as i32,
    };
    memloom_sql::init_store(&client, &hash_v1, false).await?;

    eprintln!("bench: loading {n} items into {db}");
    let t_all = Instant::now();
    let rep = load(&config, &client, corpus, n).await?;
    let load_total = t_all.elapsed();

    // Identifier queries must name something the namespace holds (else the check means nothing).
    let mut queries = candidate_queries(corpus);
    let mut dropped = 0;
    let mut kept = Vec::new();
    for q in queries.drain(..) {
        if let Some(id) = &q.must_contain {
            let hit: bool = client
                .query_one(
                    "SELECT EXISTS (SELECT 1 FROM memloom_items WHERE namespace = $1 AND status = 'active'
                                    AND tsv @@ memloom_tsquery_any(ARRAY[lower($2)]))",
                    &[&NS, id],
                )
                .await?
                .get(0);
            if !hit {
                dropped += 1;
                continue;
            }
        }
        kept.push(q);
    }
    let queries = kept;
    let count = |t: QType| queries.iter().filter(|q| q.qtype == t).count();
    eprintln!(
        "bench: {} queries: {} identifiers ({} candidates not in the namespace dropped), {} common-word, {} paraphrase variations, {} from queries.jsonl",
        queries.len(),
        count(QType::Identifier),
        dropped,
        count(QType::Common),
        count(QType::Paraphrase),
        count(QType::Eval)
    );
    let all: Vec<&Query> = queries.iter().collect();
    let stride = (all.len() / COPIED_QUERIES).max(1);
    let sampled: Vec<&Query> = all
        .iter()
        .step_by(stride)
        .take(COPIED_QUERIES)
        .copied()
        .collect();
    // The RLS-bound role, as production connects: the privileges a client needs and (from
    // sql/0008 on) a grant of the bench namespace.
    client
        .batch_execute(&format!(
            "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{APP_ROLE}') THEN
               CREATE ROLE {APP_ROLE} LOGIN NOSUPERUSER NOBYPASSRLS; END IF; END $$;
             GRANT USAGE ON SCHEMA public TO {APP_ROLE};
             GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {APP_ROLE};
             GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {APP_ROLE};
             DO $$ BEGIN IF to_regproc('memloom_grant_namespace') IS NOT NULL THEN
               PERFORM memloom_grant_namespace('{APP_ROLE}', '{NS}'); END IF; END $$;"
        ))
        .await?;
    let mut app_config = config.clone();
    app_config.user(APP_ROLE);
    let app = connect(&app_config).await?;
    memloom_sql::set_namespace(&app, NS).await?;

    let count_in_ns: i64 = client
        .query_one(
            "SELECT count(*) FROM memloom_items WHERE namespace = $1",
            &[&NS],
        )
        .await?
        .get(0);
    println!();
    println!("## {n} items ({count_in_ns} in namespace {NS:?}, the rest in {NS_OTHER:?})");
    println!();
    println!("| step | time | notes |");
    println!("| --- | ---: | --- |");
    for l in &rep.lines {
        println!("{l}");
    }
    println!("| load total | {:.1} s | |", load_total.as_secs_f64());

    let mut by_role: Vec<(Role, Vec<Timing>, TopIds)> = Vec::new();
    for role in bench_roles() {
        let client = if role == Role::App { &app } else { &client };
        client
            .batch_execute(
                "SET hnsw.ef_search = 50; SET hnsw.iterative_scan = relaxed_order; SET jit = off;",
            )
            .await?;
        let mut top_ids = HashMap::new();
        let mut timings = Vec::new();
        for shape in [
            Shape::Fuse,
            Shape::VectorArm,
            Shape::KeywordArm,
            Shape::KeywordViaFuse,
            Shape::Fixed,
            Shape::ClientFused,
            Shape::Copied,
        ] {
            let (qs, warm): (&[&Query], &[&Query]) = if shape == Shape::Copied {
                (&sampled, &sampled[..3.min(sampled.len())])
            } else {
                (&all, &all)
            };
            eprintln!(
                "bench: {}: timing {} over {} queries",
                role.label(),
                shape.label(),
                qs.len()
            );
            timings.push(time_shape(client, shape, qs, warm, &mut top_ids).await?);
        }
        report_role(role, &timings, &top_ids, all.len());
        by_role.push((role, timings, top_ids));
    }
    if let [(r0, t0, ids0), (r1, t1, ids1)] = &by_role[..] {
        println!();
        println!(
            "| query shape | {} p50 / p95 ms | {} p50 / p95 ms | p50 ratio | p95 ratio |",
            r0.label(),
            r1.label()
        );
        println!("| --- | ---: | ---: | ---: | ---: |");
        for (a, b) in t0.iter().zip(t1) {
            println!(
                "| {} | {:.1} / {:.1} | {:.1} / {:.1} | {:.2}x | {:.2}x |",
                a.shape.label(),
                a.p50,
                a.p95,
                b.p50,
                b.p95,
                a.p50 / b.p50,
                a.p95 / b.p95
            );
        }
        let same = (0..all.len())
            .filter(|i| {
                let k = (Shape::Fuse as u8, *i);
                ids0.get(&k).is_some() && ids0.get(&k) == ids1.get(&k)
            })
            .count();
        println!();
        println!(
            "roles: memloom_fuse's top {LIMIT} ids as the {} equal the {}'s on {same} of {} queries",
            r0.label(),
            r1.label(),
            all.len()
        );
    }
    println!();

    drop(client);
    drop(app);
    if std::env::var("MEMLOOM_BENCH_KEEP").as_deref() != Ok("1") {
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .await?;
    }
    Ok(())
}
