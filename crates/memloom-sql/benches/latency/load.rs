//! The loader: a fresh database, the migrations, binary COPY of the items, the indexes built
//! after the load, statistics.

use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use futures_util::pin_mut;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls};

use crate::corpus::{make_items, Corpus, Item};
use crate::{BoxError, NS, NS_OTHER};

/// pgvector's binary format: dims (u16), unused (u16), then f32s, big-endian.
#[derive(Debug)]
pub(crate) struct PgVector<'a>(pub(crate) &'a [f32]);

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
pub(crate) struct Jsonb(String);

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

pub(crate) async fn connect(config: &Config) -> Result<Client, BoxError> {
    let (client, conn) = config.connect(NoTls).await?;
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("connection error: {e}");
        }
    });
    Ok(client)
}

pub(crate) async fn copy_items(config: Config, items: &[Item]) -> Result<(), BoxError> {
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

pub(crate) struct LoadReport {
    pub(crate) lines: Vec<String>,
}

impl LoadReport {
    fn step(&mut self, what: &str, d: Duration, extra: &str) {
        let line = format!("| {what} | {:.1} s | {extra} |", d.as_secs_f64());
        eprintln!("bench: {line}");
        self.lines.push(line);
    }
}

pub(crate) async fn load(
    config: &Config,
    client: &Client,
    corpus: &Corpus,
    n: usize,
) -> Result<LoadReport, BoxError> {
    let mut rep = LoadReport { lines: Vec::new() };
    // The indexes are built after the load (much faster than maintaining them per row); the
    // store was initialised without its HNSW indexes.
    client
        .batch_execute("DROP INDEX memloom_items_tsv; DROP INDEX memloom_items_tsv_sample;")
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

    let t = Instant::now();
    let (entities, mentions) = crate::entities::load_entities(client, corpus).await?;
    rep.step(
        "entities + mentions (memloom_core::extract_entities)",
        t.elapsed(),
        &format!("{entities} entities x 2 namespaces, {mentions} mentions"),
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
        .batch_execute(
            "CREATE INDEX memloom_items_tsv ON memloom_items USING gin (tsv);
             CREATE INDEX memloom_items_tsv_sample ON memloom_items USING gin (tsv)
                 WHERE (hashint8(id) & 15) = 0;",
        )
        .await?;
    rep.step(
        "CREATE INDEX gin (tsv), and its 1-in-16 sample",
        t.elapsed(),
        "",
    );
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
                               'memloom_items_tsv_sample', 'memloom_items_pkey', 'memloom_mentions', 'memloom_entities']::regclass[]) AS c",
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

/// A fresh database: the migrations (or those up to MEMLOOM_BENCH_SCHEMA), the store, the load.
pub(crate) async fn fresh_load(
    client: &Client,
    config: &Config,
    corpus: &Corpus,
    n: usize,
) -> Result<(LoadReport, Duration), BoxError> {
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
            memloom_sql::migrate(client).await?;
        }
    }
    // hash-v1; the HNSW indexes are built after the load (see `load`).
    let hash_v1 = memloom_sql::StoreEmbedder {
        name: memloom_core::HASH_V1.name,
        version: memloom_core::HASH_V1.version as i32,
        dims: memloom_core::HASH_V1.dims as i32,
    };
    memloom_sql::init_store(client, &hash_v1, false).await?;

    eprintln!("bench: loading {n} items");
    let t_all = Instant::now();
    let rep = load(config, client, corpus, n).await?;
    let load_total = t_all.elapsed();

    // Written last: a reuse (MEMLOOM_BENCH_REUSE) takes only a completely loaded database.
    client
        .batch_execute(&format!(
            "CREATE TABLE bench_loaded AS SELECT {n}::bigint AS n"
        ))
        .await?;
    Ok((rep, load_total))
}
