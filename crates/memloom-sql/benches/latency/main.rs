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
//!
//! Modules by job: `corpus` (the generator), `load` (database, COPY, indexes), `entities`,
//! `queries` (the query set), `shapes` (what is timed, with its checks), `report`.

mod corpus;
mod entities;
mod load;
mod queries;
mod report;
mod shapes;

use std::collections::HashMap;
use std::error::Error as StdError;
use std::path::PathBuf;
use std::time::Duration;

use tokio_postgres::Config;

use corpus::Corpus;
use load::{connect, fresh_load, LoadReport};
use queries::{candidate_queries, QType, Query};
use report::{report_role, Timing};
use shapes::{shape_selected, time_shape, Shape};

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

async fn run_size(url: &str, corpus: &Corpus, n: usize) -> Result<(), BoxError> {
    let admin_config: Config = url.parse()?;
    let admin = connect(&admin_config).await?;
    let db = format!("memloom_bench_{n}");
    let mut config = admin_config.clone();
    config.dbname(&db);
    // MEMLOOM_BENCH_REUSE=1 (scripts/bench-sql.sh with MEMLOOM_BENCH_KEEP_DIR): a database a
    // previous run loaded completely (it wrote bench_loaded last) is reused as it is; pending
    // migrations still apply to it.
    let reuse = std::env::var("MEMLOOM_BENCH_REUSE").as_deref() == Ok("1");
    let exists: bool = admin
        .query_one(
            "SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)",
            &[&db],
        )
        .await?
        .get(0);
    let mut reused = false;
    if reuse && exists {
        let c = connect(&config).await?;
        let loaded: Option<i64> = c
            .query_opt(
                "SELECT n FROM bench_loaded WHERE to_regclass('bench_loaded') IS NOT NULL",
                &[],
            )
            .await
            .ok()
            .flatten()
            .map(|r| r.get(0));
        reused = loaded == Some(n as i64);
    }
    if !reused {
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .await?;
        admin
            .batch_execute(&format!("CREATE DATABASE {db}"))
            .await?;
    }
    let client = connect(&config).await?;
    if reused {
        eprintln!("bench: reusing {db} (MEMLOOM_BENCH_REUSE; loaded by an earlier run)");
        memloom_sql::migrate(&client).await?;
        client.batch_execute("ANALYZE").await?;
    }
    let (rep, load_total) = if reused {
        (
            LoadReport {
                lines: vec![
                    "| load | reused | an earlier run's database (MEMLOOM_BENCH_REUSE) |".into(),
                ],
            },
            Duration::ZERO,
        )
    } else {
        fresh_load(&client, &config, corpus, n).await?
    };
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
            Shape::EntityArm,
            Shape::VectorViaFuse,
            Shape::Fixed,
            Shape::ClientFused,
            Shape::Copied,
        ] {
            if !shape_selected(shape) {
                continue;
            }
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
        let texts: Vec<&str> = all.iter().map(|q| q.text.as_str()).collect();
        report_role(role, &timings, &top_ids, &texts);
        by_role.push((role, timings, top_ids));
    }
    let timed_fuse = by_role
        .iter()
        .all(|(_, t, _)| t.iter().any(|t| t.shape == Shape::Fuse));
    if let ([(r0, t0, ids0), (r1, t1, ids1)], true) = (&by_role[..], timed_fuse) {
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
    if std::env::var("MEMLOOM_BENCH_KEEP").as_deref() != Ok("1") && !reuse {
        admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {db} WITH (FORCE)"))
            .await?;
    }
    Ok(())
}
