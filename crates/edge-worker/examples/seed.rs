//! Test and benchmark helper for the edge worker (native, not part of the worker):
//!
//! ```text
//! seed migrate URL                                 apply the migrations, initialise for hash-v1
//! seed static  URL TABLE [VERSION]                 the same for static-v1 or -v2 (VERSION 1 or 2,
//!                                                   default 2), its TABLE (static-v1.bin) loaded
//! seed ingest  URL NAMESPACE DIR [--repeat-to N]   chunk DIR's markdown with memloom-core and load it
//! seed fuse    URL NAMESPACE QUERIES SECONDS [--fresh]  time memloom_fuse called directly
//! ```
//!
//! `--repeat-to N` loads copies of the corpus (source `copyK/...`, content suffixed with the copy
//! number, so each copy embeds slightly differently) until N chunks are stored: embeddings of
//! real text for a latency benchmark. `fuse` reads one query per line (or JSONL with a "query"
//! field), runs them round-robin for SECONDS over one connection (or a fresh connection per
//! call with `--fresh`, as the worker does) and prints `p50_ms p95_ms p99_ms count`. Each call
//! is the worker's statements exactly: `memloom_sql::begin_scoped` (BEGIN + the namespace, so
//! it works under a role bound by row-level security), `memloom_fuse`, COMMIT.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use futures_util::future::try_join_all;
use memloom_core::{chunk_document, embed, ChunkOptions};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

async fn connect(url: &str) -> Res<Client> {
    let (client, conn) = tokio_postgres::connect(url, NoTls).await?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(client)
}

fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) -> Res<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            markdown_files(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push(path);
        }
    }
    Ok(())
}

/// Applies the migrations and initialises the store for hash-v1 (with its HNSW indexes).
async fn migrate_and_init(client: &Client) -> Res<Vec<i32>> {
    let applied = memloom_sql::migrate(client).await?;
    let hash_v1 = memloom_sql::StoreEmbedder {
        name: memloom_core::HASH_V1.name,
        version: memloom_core::HASH_V1.version as i32,
        dims: memloom_core::HASH_V1.dims as i32,
    };
    memloom_sql::init_store(client, &hash_v1, true).await?;
    Ok(applied)
}

/// Applies the migrations, initialises the store for static-v1 or -v2 and loads their token
/// table (the bytes checked by the core first), as `memloom init --embedder static-v2` does on
/// a server.
async fn migrate_and_init_static(url: &str, table: &Path, version: &str) -> Res<()> {
    let client = connect(url).await?;
    memloom_sql::migrate(&client).await?;
    let bytes = std::fs::read(table)?;
    memloom_core::StaticModel::from_bytes(&bytes)?;
    let s = version
        .parse()
        .ok()
        .and_then(memloom_core::StaticVersion::from_version)
        .ok_or("VERSION is 1 (static-v1) or 2 (static-v2)")?
        .info();
    let store = memloom_sql::StoreEmbedder {
        name: s.name,
        version: s.version as i32,
        dims: s.dims as i32,
    };
    memloom_sql::init_store(&client, &store, true).await?;
    let rows = memloom_sql::load_static_table(&client, &bytes).await?;
    eprintln!("seed: {} store, {rows} token rows loaded", s.id());
    Ok(())
}

async fn ingest(url: &str, ns: &str, dir: &Path, repeat_to: Option<usize>) -> Res<()> {
    let client = connect(url).await?;
    migrate_and_init(&client).await?;
    let mut files = Vec::new();
    markdown_files(dir, &mut files)?;
    files.sort();
    let mut chunks = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(dir)?.to_string_lossy().replace('\\', "/");
        let text = std::fs::read_to_string(f)?;
        chunks.extend(chunk_document(&rel, &text, &ChunkOptions::default())?);
    }
    if chunks.is_empty() {
        return Err(format!("no markdown chunks under {}", dir.display()).into());
    }
    let target = repeat_to.unwrap_or(chunks.len());
    let insert = client
        .prepare_typed(
            "INSERT INTO memloom_items (namespace, kind, source, breadcrumb, content, embedding) \
             VALUES ($1, 'chunk', $2, $3, $4, $5::real[]::vector)",
            &[
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::TEXT,
                Type::FLOAT4_ARRAY,
            ],
        )
        .await?;
    let started = Instant::now();
    let mut rows = Vec::with_capacity(target);
    for i in 0..target {
        let c = &chunks[i % chunks.len()];
        let copy = i / chunks.len();
        if copy == 0 {
            rows.push((c.source.clone(), c.content.clone()));
        } else {
            rows.push((
                format!("copy{copy}/{}", c.source),
                format!("{}\n\n(copy {copy})", c.content),
            ));
        }
    }
    client.batch_execute("BEGIN").await?;
    for (n, batch) in rows.chunks(500).enumerate() {
        let embeddings: Vec<Vec<f32>> = batch.iter().map(|(_, content)| embed(content)).collect();
        let calls = batch
            .iter()
            .zip(&embeddings)
            .enumerate()
            .map(|(j, ((source, content), e))| {
                let c = &chunks[(n * 500 + j) % chunks.len()];
                let insert = &insert;
                let client = &client;
                async move {
                    client
                        .execute(insert, &[&ns, source, &c.breadcrumb, content, e])
                        .await
                }
            });
        try_join_all(calls).await?;
        if (n + 1) % 20 == 0 {
            eprintln!("seed: {} rows ({:.0?})", (n + 1) * 500, started.elapsed());
        }
    }
    client.batch_execute("COMMIT").await?;
    client
        .execute("SELECT memloom_refresh_stats($1)", &[&ns])
        .await?;
    client.batch_execute("ANALYZE memloom_items").await?;
    eprintln!(
        "seed: {target} chunks from {} files into namespace {ns} in {:.1?}",
        files.len(),
        started.elapsed()
    );
    Ok(())
}

fn read_queries(path: &Path) -> Res<Vec<String>> {
    let text = std::fs::read_to_string(path)?;
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if line.trim_start().starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(line)?;
            if let Some(q) = v.get("query").and_then(|q| q.as_str()) {
                out.push(q.to_string());
            }
        } else {
            out.push(line.trim().to_string());
        }
    }
    if out.is_empty() {
        return Err(format!("no queries in {}", path.display()).into());
    }
    Ok(out)
}

async fn fuse_bench(url: &str, ns: &str, queries: &Path, secs: u64, fresh: bool) -> Res<()> {
    let queries = read_queries(queries)?;
    let mut client = Some(connect(url).await?);
    let mut times = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut i = 0;
    while Instant::now() < deadline {
        let q = &queries[i % queries.len()];
        i += 1;
        let t = Instant::now();
        if fresh {
            client = Some(connect(url).await?);
        }
        let c = client.as_ref().ok_or("no client")?;
        // The same work as the worker: embed the query, then one memloom_fuse call.
        let params = memloom_sql::FuseParams::new(q.as_str(), embed(q), ns, 10);
        memloom_sql::begin_scoped(c, ns).await?;
        let rows = memloom_sql::fuse(c, &params).await?;
        c.batch_execute("COMMIT").await?;
        if rows.is_empty() {
            return Err(format!("query {q:?} returned no rows").into());
        }
        if fresh {
            client = None;
        }
        times.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() as f64 * p).ceil() as usize).clamp(1, times.len()) - 1];
    println!(
        "{:.2} {:.2} {:.2} {}",
        pct(0.50),
        pct(0.95),
        pct(0.99),
        times.len()
    );
    Ok(())
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match a.as_slice() {
        ["migrate", url] => match connect(url).await {
            Ok(c) => migrate_and_init(&c)
                .await
                .map(|v| eprintln!("seed: applied migrations {v:?}")),
            Err(e) => Err(e),
        },
        ["static", url, table] => migrate_and_init_static(url, Path::new(table), "2").await,
        ["static", url, table, version] => {
            migrate_and_init_static(url, Path::new(table), version).await
        }
        ["ingest", url, ns, dir] => ingest(url, ns, Path::new(dir), None).await,
        ["ingest", url, ns, dir, "--repeat-to", n] => match n.parse() {
            Ok(n) => ingest(url, ns, Path::new(dir), Some(n)).await,
            Err(_) => Err("--repeat-to needs a number".into()),
        },
        ["fuse", url, ns, queries, secs, rest @ ..] => match secs.parse() {
            Ok(s) => fuse_bench(url, ns, Path::new(queries), s, rest == ["--fresh"]).await,
            Err(_) => Err("SECONDS must be a number".into()),
        },
        _ => Err("usage: seed migrate URL | static URL TABLE [VERSION] | ingest URL NS DIR [--repeat-to N] | fuse URL NS QUERIES SECONDS [--fresh]".into()),
    };
    if let Err(e) = result {
        eprintln!("seed: error: {e}");
        std::process::exit(2);
    }
}
