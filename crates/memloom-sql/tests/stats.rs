//! sql/0009: the keyword and entity statistics are kept by the writing statements' triggers
//! and equal a full recompute (memloom_recompute_stats) after any mix of writes, including
//! concurrent writers of one namespace.

use memloom_core::vector_text::vector_text;
use memloom_sql::{forget, remember, ForgetTarget};
use tokio_postgres::Client;

use crate::util::{embed, Rng, TestDb};

/// Words with identifiers among them, skewed so that many documents share lexemes.
const WORDS: &[&str] = &[
    "deploy",
    "freeze",
    "friday",
    "billing",
    "postgres",
    "connection",
    "timeout",
    "retry",
    "max_connections",
    "pg_hba.conf",
    "ERR_REQUIRE_ESM",
    "node:fs",
    "fs.readFile",
    "worker",
    "queue",
    "index",
    "cache",
    "latency",
    "orders-api",
    "JIRA-4512",
    "v18.0.0",
    "stream",
    "buffer",
    "socket",
    "the",
    "and",
    "of",
    "service",
    "database",
    "migration",
];

fn text(rng: &mut Rng) -> String {
    let n = 1 + rng.below(12);
    (0..n)
        .map(|_| {
            // Square the draw: low indexes (common words) come up more often.
            let r = rng.below(WORDS.len());
            WORDS[r * r / WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

type Terms = Vec<(String, String, i32)>;
type Namespaces = Vec<(String, i64, Option<i64>, f64)>;
type Entities = Vec<(i64, String, i32)>;

async fn snapshot(c: &Client) -> (Terms, Namespaces, Entities) {
    let terms = c
        .query(
            "SELECT namespace, lexeme, df FROM memloom_term_stats ORDER BY 1, 2",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let nss = c
        .query(
            "SELECT namespace, doc_count, total_len, avg_doc_len FROM memloom_namespace_stats ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect();
    let ents = c
        .query(
            "SELECT entity_id, namespace, df FROM memloom_entity_stats ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    (terms, nss, ents)
}

/// The incremental statistics against a full recompute of every namespace (rolled back).
pub(crate) async fn assert_incremental_equals_full(c: &Client, when: &str) {
    let incremental = snapshot(c).await;
    c.batch_execute(
        "BEGIN;
         SELECT memloom_recompute_stats(ns)
           FROM (SELECT namespace AS ns FROM memloom_items
                 UNION SELECT namespace FROM memloom_namespace_stats) n;",
    )
    .await
    .unwrap();
    let full = snapshot(c).await;
    c.batch_execute("ROLLBACK").await.unwrap();
    assert!(
        !full.0.is_empty() || incremental.0.is_empty(),
        "recompute gave no terms"
    );
    assert_eq!(incremental.1, full.1, "namespace stats differ {when}");
    assert_eq!(incremental.0, full.0, "term stats differ {when}");
    assert_eq!(incremental.2, full.2, "entity stats differ {when}");
}

/// What `memloom ingest` does for one file: its old chunks out, the new ones in, one transaction.
async fn ingest_file(c: &Client, ns: &str, source: &str, texts: &[String]) {
    let emb_text: Vec<String> = texts.iter().map(|t| vector_text(&embed(t))).collect();
    c.batch_execute("BEGIN").await.unwrap();
    c.execute(
        "DELETE FROM memloom_items WHERE namespace = $1 AND kind = 'chunk' AND source = $2",
        &[&ns, &source],
    )
    .await
    .unwrap();
    c.execute(
        "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
         SELECT $1, 'chunk', $2, t, e::vector FROM unnest($3::text[], $4::text[]) AS u(t, e)",
        &[&ns, &source, &texts, &emb_text],
    )
    .await
    .unwrap();
    c.batch_execute("COMMIT").await.unwrap();
}

/// What `memloom index` does for a batch: entities, the items' mentions replaced, memloom_indexed rows;
/// then the superseded items' mentions and unmentioned entities go.
async fn index(c: &Client, ns: &str, rng: &mut Rng) {
    if let Err(e) = try_index(c, ns, rng).await {
        panic!("index failed: {e:?}");
    }
}

/// One index batch; Err when a concurrent writer removed an item it links (the foreign key).
async fn try_index(c: &Client, ns: &str, rng: &mut Rng) -> Result<(), tokio_postgres::Error> {
    let items: Vec<i64> = c
        .query(
            "SELECT id FROM memloom_items WHERE namespace = $1 AND status = 'active' ORDER BY id",
            &[&ns],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let batch: Vec<i64> = items
        .iter()
        .copied()
        .filter(|_| rng.below(2) == 0)
        .collect();
    let (mut ents, mut its, mut strengths) = (Vec::new(), Vec::new(), Vec::new());
    for &it in &batch {
        for _ in 0..1 + rng.below(3) {
            let name = WORDS[rng.below(8)].to_string();
            if !ents
                .iter()
                .zip(&its)
                .any(|(e, i): (&String, &i64)| *e == name && *i == it)
            {
                ents.push(name);
                its.push(it);
                strengths.push(0.25f32 + rng.below(3) as f32 / 4.0);
            }
        }
    }
    c.batch_execute("BEGIN").await?;
    let r = index_statements(c, ns, &ents, &its, &strengths, &batch).await;
    if r.is_err() {
        c.batch_execute("ROLLBACK").await?;
        return r;
    }
    c.batch_execute("COMMIT").await?;
    if rng.below(2) == 0 {
        c.execute(
            "DELETE FROM memloom_mentions mt USING memloom_items m
             WHERE m.id = mt.item_id AND m.namespace = $1 AND m.status <> 'active'",
            &[&ns],
        )
        .await?;
        c.execute(
            "DELETE FROM memloom_entities e WHERE e.namespace = $1
             AND NOT EXISTS (SELECT 1 FROM memloom_mentions mt WHERE mt.entity_id = e.id)",
            &[&ns],
        )
        .await?;
    }
    Ok(())
}

async fn index_statements(
    c: &Client,
    ns: &str,
    ents: &[String],
    its: &[i64],
    strengths: &[f32],
    batch: &[i64],
) -> Result<(), tokio_postgres::Error> {
    for name in WORDS.iter().take(8) {
        c.execute(
            "INSERT INTO memloom_entities (namespace, name, kind, embedding)
             VALUES ($1, $2, 'concept', $3::real[]::vector) ON CONFLICT DO NOTHING",
            &[&ns, name, &embed(name)],
        )
        .await?;
    }
    c.execute(
        "DELETE FROM memloom_mentions WHERE item_id = ANY ($1)",
        &[&batch],
    )
    .await?;
    c.execute(
        "INSERT INTO memloom_mentions (entity_id, item_id, strength)
         SELECT e.id, u.i, u.s FROM unnest($2::text[], $3::bigint[], $4::real[]) AS u(n, i, s)
         JOIN memloom_entities e ON e.namespace = $1 AND e.name = u.n AND e.kind = 'concept'
         JOIN memloom_items m ON m.id = u.i",
        &[&ns, &ents, &its, &strengths],
    )
    .await?;
    c.execute(
        "INSERT INTO memloom_indexed (item_id, namespace) SELECT i.id, i.namespace FROM memloom_items i WHERE i.id = ANY ($1)
         ON CONFLICT (item_id) DO UPDATE SET indexed_at = now()",
        &[&batch],
    )
    .await?;
    Ok(())
}

async fn random_write(c: &Client, ns: &str, rng: &mut Rng, step: usize) {
    match rng.below(10) {
        0 | 1 => {
            let texts: Vec<String> = (0..rng.below(6)).map(|_| text(rng)).collect();
            ingest_file(c, ns, &format!("doc{}.md", rng.below(4)), &texts).await;
        }
        2..=4 => {
            // A key from a small set, so that versions supersede each other.
            let key = format!("k{}", rng.below(5));
            let t = text(rng);
            let key = (rng.below(4) > 0).then_some(key.as_str());
            remember(c, ns, key, &t, &embed(&t), None).await.unwrap();
        }
        5 => {
            let key = format!("k{}", rng.below(5));
            forget(c, ns, &ForgetTarget::Key(&key)).await.unwrap();
        }
        6 => {
            let ids: Vec<i64> = c
                .query(
                    "SELECT id FROM memloom_items WHERE namespace = $1 AND kind = 'memory' ORDER BY id",
                    &[&ns],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect();
            if !ids.is_empty() {
                let id = ids[rng.below(ids.len())];
                forget(c, ns, &ForgetTarget::Id(id)).await.unwrap();
            }
        }
        7 | 8 => index(c, ns, rng).await,
        _ => {
            // An in-place content change (sql/0004 marks it for re-indexing).
            let t = text(rng);
            c.execute(
                "UPDATE memloom_items SET content = $2 WHERE id = (
                     SELECT id FROM memloom_items WHERE namespace = $1 ORDER BY id OFFSET $3 LIMIT 1)",
                &[&ns, &t, &((step % 7) as i64)],
            )
            .await
            .unwrap();
        }
    }
}

#[tokio::test]
async fn incremental_stats_equal_a_full_recompute_after_random_writes() {
    let Some(db) = TestDb::new("stats_random").await else {
        return;
    };
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for step in 0..160 {
        let ns = if rng.below(4) == 0 { "other" } else { "ns" };
        random_write(&db.client, ns, &mut rng, step).await;
        if step % 10 == 9 {
            assert_incremental_equals_full(&db.client, &format!("after step {step}")).await;
        }
    }
    // The writes reached every kind of statistic.
    let (terms, nss, ents) = snapshot(&db.client).await;
    assert!(
        terms.len() > 10 && nss.len() == 2 && !ents.is_empty(),
        "{nss:?} {ents:?}"
    );
    assert_incremental_equals_full(&db.client, "at the end").await;
    db.drop_db().await;
}

/// A repair (memloom_refresh_stats) called inside a writing transaction recounts what the
/// transaction changed so far: those changes are not added again at its commit, and the
/// transaction's later changes are (sql/0044; they used to be counted twice: a namespace's
/// document count doubled).
#[tokio::test]
async fn a_repair_inside_a_writing_transaction_counts_each_change_once() {
    let Some(db) = TestDb::new("stats_repair_in_tx").await else {
        return;
    };
    let c = &db.client;
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for step in 0..24 {
        random_write(
            c,
            if step % 3 == 0 { "other" } else { "ns" },
            &mut rng,
            step,
        )
        .await;
    }
    index(c, "ns", &mut rng).await;
    assert_incremental_equals_full(c, "before").await;
    let insert = |n: i64| {
        format!(
            "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
             SELECT 'ns', 'chunk', 'tx{n}.md', 'deploy freeze worker ' || g, e::vector
             FROM generate_series(1, 5) g, (SELECT '{}'::text AS e) v;",
            vector_text(&embed("deploy freeze worker"))
        )
    };
    c.batch_execute(&format!(
        "BEGIN;
         {}
         DELETE FROM memloom_items
          WHERE id = (SELECT min(id) FROM memloom_items WHERE namespace = 'ns' AND kind = 'memory' AND status = 'active');
         DELETE FROM memloom_mentions WHERE item_id = (SELECT min(item_id) FROM memloom_mentions mt
           JOIN memloom_items m ON m.id = mt.item_id WHERE m.namespace = 'ns');
         SELECT memloom_refresh_stats('ns');
         {}
         DELETE FROM memloom_items WHERE namespace = 'ns' AND source = 'tx1.md' AND content LIKE '%1';
         UPDATE memloom_items SET content = content || ' retry' WHERE namespace = 'other' AND id = (
           SELECT min(id) FROM memloom_items WHERE namespace = 'other');
         COMMIT;",
        insert(1),
        insert(2)
    ))
    .await
    .unwrap();
    assert_incremental_equals_full(c, "after a repair inside a writing transaction").await;
    db.drop_db().await;
}

/// Regression for the write path: statistics used to be refreshed for the whole namespace
/// after each write; now a statement that changes no counted column changes nothing, and a
/// namespace's first write (no statistics row yet) is recomputed, not applied to a missing base.
#[tokio::test]
async fn first_write_creates_the_row_and_uncounted_updates_change_nothing() {
    let Some(db) = TestDb::new("stats_first").await else {
        return;
    };
    let id = db.chunk("ns", "a.md", "deploy freeze friday").await;
    let row = db
        .client
        .query_one(
            "SELECT doc_count, total_len, avg_doc_len FROM memloom_namespace_stats WHERE namespace = 'ns'",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        (
            row.get::<_, i64>(0),
            row.get::<_, Option<i64>>(1),
            row.get::<_, f64>(2)
        ),
        (1, Some(3), 3.0)
    );
    let before = snapshot(&db.client).await;
    db.client
        .execute(
            "UPDATE memloom_items SET updated_at = now(), metadata = '{\"x\": 1}' WHERE id = $1",
            &[&id],
        )
        .await
        .unwrap();
    assert_eq!(snapshot(&db.client).await, before);
    // A store migrated before 0009 under a role that could not see this namespace: total_len
    // NULL. The next write recomputes instead of adding to a stale base.
    db.client
        .batch_execute(
            "UPDATE memloom_namespace_stats SET doc_count = 99, total_len = NULL;
             DELETE FROM memloom_term_stats;",
        )
        .await
        .unwrap();
    db.chunk("ns", "b.md", "billing postgres").await;
    assert_incremental_equals_full(&db.client, "after a write on a stale base").await;

    // A bulk transaction (memloom.stats_bulk) leaves the namespace marked for recompute; the
    // loader's memloom_refresh_stats, or else the next write, makes it exact again.
    db.client
        .batch_execute(
            "BEGIN; SELECT set_config('memloom.stats_bulk', 'on', true);
             DELETE FROM memloom_items WHERE source = 'a.md';
             INSERT INTO memloom_items (namespace, kind, source, content, embedding)
             SELECT 'ns', 'chunk', 'bulk.md', 'retry timeout ' || g, (SELECT embedding FROM memloom_items LIMIT 1)
             FROM generate_series(1, 20) g;
             COMMIT;",
        )
        .await
        .unwrap();
    let stale: Option<i64> = db
        .client
        .query_one(
            "SELECT total_len FROM memloom_namespace_stats WHERE namespace = 'ns'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        stale, None,
        "a bulk commit marks the namespace for recompute"
    );
    db.chunk("ns", "c.md", "socket stream").await;
    assert_incremental_equals_full(&db.client, "after a write following a bulk load").await;
    db.drop_db().await;
}

/// One write of the concurrent test, in its own transaction, as the clients issue it.
async fn concurrent_op(c: &Client, op: usize, rng: &mut Rng) -> Result<(), tokio_postgres::Error> {
    let key = format!("k{}", rng.below(4));
    let remember_sql = "SELECT memloom_remember('ns', $1, $2, $3::real[]::vector)";
    c.batch_execute("BEGIN").await?;
    let r = async {
        match op {
            0 => {
                // Several memories in one transaction (rememberMany).
                for _ in 0..3 {
                    let t = text(rng);
                    c.execute(remember_sql, &[&None::<String>, &t, &embed(&t)]).await?;
                }
            }
            1 => {
                // Under the key's lock, as memloom_remember takes it.
                c.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('ns' || chr(31) || $1, 7))",
                    &[&key],
                )
                .await?;
                c.execute(
                    "DELETE FROM memloom_items WHERE namespace = 'ns' AND kind = 'memory' AND key = $1",
                    &[&key],
                )
                .await?;
            }
            2 => {
                // A file's chunks replaced under the file's lock, as `memloom ingest` does.
                let source = format!("f{}.md", rng.below(3));
                c.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended('memloom ingest ns ' || $1, 0))",
                    &[&source],
                )
                .await?;
                c.execute(
                    "DELETE FROM memloom_items WHERE namespace = 'ns' AND kind = 'chunk' AND source = $1",
                    &[&source],
                )
                .await?;
                for _ in 0..3 {
                    let t = text(rng);
                    c.execute(
                        "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
                         VALUES ('ns', 'chunk', $1, $2, $3::real[]::vector)",
                        &[&source, &t, &embed(&t)],
                    )
                    .await?;
                }
            }
            _ => {
                let t = text(rng);
                c.execute(remember_sql, &[&Some(key.clone()), &t, &embed(&t)]).await?;
            }
        }
        Ok::<(), tokio_postgres::Error>(())
    }
    .await;
    match r {
        Ok(()) => c.batch_execute("COMMIT").await,
        Err(e) => {
            c.batch_execute("ROLLBACK").await?;
            Err(e)
        }
    }
}

/// Writers of one namespace at once (remember, supersede, forget, ingest, an indexer), then
/// the incremental statistics against a full recompute. memloom's write paths can deadlock
/// among themselves on their own locks (a forget and an index batch on one item's rows: the
/// same on the schema before 0009), and PostgreSQL then rolls one back; such a victim is
/// retried, which also proves a rolled-back transaction leaves no counts behind. A deadlock
/// that involves the statistics lock, or any other error, fails the test.
#[tokio::test]
async fn concurrent_writers_of_one_namespace_neither_deadlock_nor_lose_counts() {
    let Some(db) = TestDb::new("stats_concurrent").await else {
        return;
    };
    db.chunk("ns", "seed.md", "deploy freeze").await;
    let row = db
        .client
        .query_one(
            "SELECT ((h >> 32) & 4294967295)::text || ',' || (h & 4294967295)::text
               FROM (SELECT hashtextextended('memloom stats ' || 'ns', 0) AS h) x",
            &[],
        )
        .await
        .unwrap();
    let stats_lock: String = row.get(0);
    let mut tasks = Vec::new();
    for w in 0..8u64 {
        let c = db.connect().await;
        let stats_lock = stats_lock.clone();
        tasks.push(tokio::spawn(async move {
            memloom_sql::set_namespace(&c, "ns").await.unwrap();
            let mut rng = Rng(0xA076_1D64_78BD_642F ^ (w + 1).wrapping_mul(0x9E37_79B9));
            let (mut done, mut retried) = (0, 0);
            for _ in 0..30 {
                // One indexer, as `memloom index` runs; the others remember, forget, ingest.
                let op = if w == 0 { 9 } else { rng.below(6) };
                loop {
                    let r = if op == 9 {
                        try_index(&c, "ns", &mut rng).await
                    } else {
                        concurrent_op(&c, op, &mut rng).await
                    };
                    match r {
                        Ok(()) => {
                            done += 1;
                            break;
                        }
                        Err(e) => {
                            let db = e.as_db_error().expect("a database error");
                            let detail = db.detail().unwrap_or("");
                            assert!(
                                !detail.contains(&stats_lock),
                                "writer {w}: a deadlock on the statistics lock: {db:?}"
                            );
                            // 40P01: a deadlock among the write paths' own locks; 23503: an
                            // index batch linking an item a forget removed meanwhile.
                            assert!(
                                matches!(db.code().code(), "40P01" | "23503"),
                                "writer {w}: {db:?}"
                            );
                            retried += 1;
                            if retried > 100 {
                                panic!("writer {w}: too many retries, last {db:?}");
                            }
                        }
                    }
                }
            }
            (done, retried)
        }));
    }
    let (mut done, mut retried) = (0, 0);
    for t in tasks {
        let (d, r) = t.await.expect("a writer failed");
        done += d;
        retried += r;
    }
    assert_eq!(done, 240, "every write went through");
    eprintln!("concurrent writers: {done} writes, {retried} retried after a deadlock or a foreign key race");
    assert_incremental_equals_full(&db.client, "after concurrent writers").await;
    db.drop_db().await;
}
