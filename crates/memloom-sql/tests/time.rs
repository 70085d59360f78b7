//! Time (docs/TIME.md): validity intervals set by supersession, recall as of an instant through
//! the one memloom_fuse call, and event-time filters.

use memloom_sql::{
    apply_migration, fuse, history, init_store, remember, remember_at, FuseParams, MIGRATIONS,
};
use tokio_postgres::Client;

use crate::util::{embed, ids, Rng, TestDb, HASH_V1_STORE};

/// The database's clock as RFC 3339 text, milliseconds (valid_from's precision).
async fn db_now(client: &Client) -> String {
    client
        .query_one(
            "SELECT to_char(date_trunc('milliseconds', clock_timestamp()) AT TIME ZONE 'UTC', \
             'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
            &[],
        )
        .await
        .unwrap()
        .get(0)
}

/// An instant `ms` milliseconds after `t` (RFC 3339 text), computed by the database.
async fn plus_ms(client: &Client, t: &str, ms: i64) -> String {
    client
        .query_one(
            "SELECT to_char(($1::text::timestamptz + $2::float8 * interval '1 millisecond') AT TIME ZONE 'UTC', \
             'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')",
            &[&t, &(ms as f64)],
        )
        .await
        .unwrap()
        .get(0)
}

fn token(i: usize) -> String {
    // A word only this key's versions contain (letters: one english lexeme, found by the
    // keyword arm whatever the vector arm does).
    let letters: String = format!("{i:03}")
        .bytes()
        .map(|b| (b'a' + (b - b'0')) as char)
        .collect();
    format!("zq{letters}x")
}

async fn recall_at(
    client: &Client,
    query: &str,
    as_of: Option<&str>,
    kinds: Option<Vec<String>>,
) -> Vec<memloom_sql::FusedRow> {
    let mut p = FuseParams::new(query, embed(query), "ns", 20);
    p.as_of = as_of.map(str::to_string);
    p.kinds = kinds;
    fuse(client, &p).await.expect("memloom_fuse")
}

/// 100 keys, each a random sequence of writes (new content, or the active content again: no new
/// version), interleaved at random; then recall as of every supersession instant and at random
/// instants, compared with a model that knows only the order of the writes and when each
/// version was written: at instant t a key's belief is its last version written at or before t.
#[tokio::test]
async fn as_of_returns_the_version_valid_at_each_instant() {
    let Some(db) = TestDb::new("time_as_of").await else {
        return;
    };
    let c = &db.client;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    const KEYS: usize = 100;
    // The writes, in order: (key index, version it is a new version of, or a repeat).
    let mut plan: Vec<usize> = Vec::new();
    for k in 0..KEYS {
        for _ in 0..1 + rng.below(4) {
            plan.push(k);
        }
    }
    for i in (1..plan.len()).rev() {
        plan.swap(i, rng.below(i + 1));
    }
    // Model: per key, (valid_from, content) of each version, in write order.
    let mut model: Vec<Vec<(String, String)>> = vec![Vec::new(); KEYS];
    let start = db_now(c).await;
    let mut repeats = 0;
    for &k in &plan {
        let key = format!("key-{k:03}");
        let versions = &model[k];
        let repeat = !versions.is_empty() && rng.below(5) == 0;
        let text = if repeat {
            repeats += 1;
            versions.last().unwrap().1.clone()
        } else {
            format!(
                "{} note version {} says {}",
                token(k),
                versions.len() + 1,
                rng.below(1_000_000)
            )
        };
        // Distinct instants (valid_from is in milliseconds).
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        let saved = remember(c, "ns", Some(&key), &text, &embed(&text), None)
            .await
            .unwrap();
        if repeat {
            assert_eq!(
                saved.version as usize,
                versions.len(),
                "a repeat is no version"
            );
            continue;
        }
        assert_eq!(saved.version as usize, versions.len() + 1);
        // The instant the model records is read from history (the write's own time), but the
        // model decides which version holds when from the write order alone, not from valid_to.
        let h = history(c, "ns", &key).await.unwrap();
        model[k].push((h.last().unwrap().valid_from.clone(), text));
    }
    assert!(repeats > 0, "the plan has no repeated writes");
    db.refresh_stats("ns").await;

    // The intervals history shows: each closed at its successor's valid_from, the last open.
    for (k, versions) in model.iter().enumerate() {
        let h = history(c, "ns", &format!("key-{k:03}")).await.unwrap();
        assert_eq!(h.len(), versions.len());
        for (i, v) in h.iter().enumerate() {
            assert_eq!(v.valid_from, versions[i].0);
            let next = h.get(i + 1).map(|n| n.valid_from.clone());
            assert_eq!(v.valid_to, next, "key {k} version {}", v.version);
            assert_eq!(v.status == "active", i + 1 == h.len());
        }
    }

    let believed = |k: usize, t: &str| -> Option<&String> {
        // RFC 3339 UTC with milliseconds compares as text.
        model[k]
            .iter()
            .rev()
            .find(|(from, _)| from.as_str() <= t)
            .map(|(_, text)| text)
    };
    let memories = Some(vec!["memory".to_string()]);
    let mut checked = 0;
    let mut superseded_seen = 0;
    for (k, versions) in model.iter().enumerate() {
        let key = format!("key-{k:03}");
        let mut instants: Vec<String> = versions.iter().map(|(t, _)| t.clone()).collect();
        // A random instant inside the key's history, and one before its first version.
        let first = versions[0].0.clone();
        let span = 3 * versions.len() as i64 + 3;
        instants.push(plus_ms(c, &first, rng.below(span as usize) as i64).await);
        instants.push(plus_ms(c, &first, -1).await);
        for t in &instants {
            let rows = recall_at(c, &token(k), Some(t), memories.clone()).await;
            let mine: Vec<&String> = rows
                .iter()
                .filter(|r| r.key.as_deref() == Some(key.as_str()))
                .map(|r| &r.content)
                .collect();
            let want: Vec<&String> = believed(k, t).into_iter().collect();
            assert_eq!(mine, want, "key {key} as of {t}");
            if want
                .first()
                .is_some_and(|w| *w != &versions.last().unwrap().1)
            {
                superseded_seen += 1;
            }
            // Nothing else it returns was invalid at t either.
            for r in &rows {
                let other: usize = r.key.as_deref().unwrap()[4..].parse().unwrap();
                assert_eq!(
                    believed(other, t),
                    Some(&r.content),
                    "as of {t}, {key}'s query returned a version of key-{other:03} not valid then"
                );
            }
            checked += 1;
        }
    }
    assert!(checked >= 3 * KEYS, "only {checked} instants checked");
    assert!(
        superseded_seen >= 20,
        "only {superseded_seen} recalls of a superseded version"
    );

    // Now (as_of NULL, and as_of = the clock): only the active versions, whatever the query.
    let now = db_now(c).await;
    for (k, versions) in model.iter().enumerate() {
        let active = &versions.last().unwrap().1;
        for as_of in [None, Some(now.as_str())] {
            let rows = recall_at(c, &token(k), as_of, None).await;
            let mine: Vec<&String> = rows
                .iter()
                .filter(|r| r.key.as_deref() == Some(format!("key-{k:03}").as_str()))
                .map(|r| &r.content)
                .collect();
            assert_eq!(mine, [active], "key {k} as of {as_of:?}");
            for r in &rows {
                let other: usize = r.key.as_deref().unwrap()[4..].parse().unwrap();
                assert_eq!(
                    &model[other].last().unwrap().1,
                    &r.content,
                    "a stale version surfaced"
                );
            }
        }
    }
    // Before anything was written: nothing.
    let before = plus_ms(c, &start, -1000).await;
    assert!(recall_at(c, &token(0), Some(&before), None)
        .await
        .is_empty());
    db.drop_db().await;
}

/// as_of NULL is today's recall: on the repository's markdown fixtures and memories with
/// superseded versions, a store at schema 14 and the same store upgraded to 15 (up to 29)
/// return the same ranked ids (and the same at as_of = now, through the historical path); with
/// the exact vector scan (the embedded store's) and with the HNSW index. Schema 30 changes a
/// ranking only where the exact scan's ties straddle a cut (now ordered by id); schema 31 and
/// later give schema 30's.
#[tokio::test]
async fn as_of_null_gives_the_ranked_ids_of_schema_14() {
    same_ids_after_upgrade(false).await;
}

#[tokio::test]
async fn as_of_null_gives_the_ranked_ids_of_schema_14_with_hnsw() {
    same_ids_after_upgrade(true).await;
}

/// (id, vector rank, keyword rank, entity rank) of one fused row.
type Ranked = (i64, Option<i32>, Option<i32>, Option<i32>);

async fn same_ids_after_upgrade(vector_index: bool) {
    let Some(db) = TestDb::empty("time_same_ids").await else {
        return;
    };
    let c = &db.client;
    // Schema 14, then (below) 0015_time and every later migration: the current schema.
    let at = MIGRATIONS
        .iter()
        .position(|m| m.name == "0015_time")
        .expect("0015_time is a migration");
    for m in &MIGRATIONS[..at] {
        apply_migration(c, m).await.unwrap();
    }
    init_store(c, &HASH_V1_STORE, vector_index).await.unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut queries = Vec::new();
    let mut chunk_ids = Vec::new();
    for dir in ["examples/notes", "tests/golden/chunks"] {
        let mut files: Vec<_> = std::fs::read_dir(format!("{root}/{dir}"))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "md"))
            .collect();
        files.sort();
        for path in files {
            let text = std::fs::read_to_string(&path).unwrap();
            let source = path.file_name().unwrap().to_string_lossy().to_string();
            let opts = memloom_core::ChunkOptions::default();
            for ch in memloom_core::chunk_markdown(&source, &text, &opts).unwrap() {
                chunk_ids.push(db.chunk("ns", &source, &ch.content).await);
                if let Some(last) = ch.breadcrumb.rsplit(" > ").next() {
                    queries.push(last.to_string());
                }
            }
        }
    }
    // Memories with superseded versions (the 5-argument memloom_remember both schemas have).
    for i in 0..30 {
        for v in 0..1 + i % 3 {
            let text = format!(
                "team note {i} revision {v}: deploys freeze on day {}",
                v + i
            );
            c.execute(
                "SELECT memloom_remember('ns', $1, $2, $3::real[]::vector)",
                &[&format!("note-{i}"), &text, &embed(&text)],
            )
            .await
            .unwrap();
        }
        queries.push(format!("deploys freeze day {i}"));
    }
    // Entities, so the entity arm votes too.
    for (n, name) in ["buffers", "replication", "freeze"].iter().enumerate() {
        let mentions: Vec<(i64, f32)> = chunk_ids
            .iter()
            .skip(n)
            .step_by(7)
            .map(|&id| (id, 0.5))
            .collect();
        db.entity("ns", name, &mentions).await;
        queries.push(name.to_string());
    }
    db.refresh_stats("ns").await;
    queries.sort();
    queries.dedup();
    assert!(queries.len() >= 40, "only {} queries", queries.len());
    let run = |as_of: Option<String>| {
        let queries = &queries;
        async move {
            let mut all = Vec::new();
            for q in queries {
                let mut p = FuseParams::new(q.as_str(), embed(q), "ns", 20);
                p.as_of = as_of.clone();
                let rows = fuse(c, &p).await.unwrap();
                all.push(
                    rows.iter()
                        .map(|r| (r.id, r.vector_rank, r.keyword_rank, r.entity_rank))
                        .collect::<Vec<_>>(),
                );
            }
            all
        }
    };
    let before = run(None).await;
    assert!(
        before.iter().flatten().any(|r| r.3.is_some()),
        "the entity arm never voted"
    );
    // Up to schema 29 the same ranked ids.
    let ties_by_id = MIGRATIONS
        .iter()
        .position(|m| m.name == "0030_fewer_reads")
        .expect("0030_fewer_reads is a migration");
    for m in &MIGRATIONS[at..ties_by_id] {
        assert!(apply_migration(c, m).await.unwrap(), "{} applied", m.name);
    }
    let after = run(None).await;
    for (i, q) in queries.iter().enumerate() {
        assert_eq!(
            after[i], before[i],
            "as_of NULL changed the ranking of {q:?}"
        );
    }
    let now = db_now(c).await;
    assert_eq!(
        run(Some(now)).await,
        before,
        "as_of now changed the ranking"
    );
    // Schema 30 orders the exact search's ties by id (the scan order decided them): a ranking
    // may change only where items at one distance straddle the 10th or the 20th place of the
    // exact search (the votes' cut and the tail's); with HNSW nothing changes.
    let small_pool_plans = MIGRATIONS
        .iter()
        .position(|m| m.name == "0031_small_pool_plans")
        .expect("0031_small_pool_plans is a migration");
    for m in &MIGRATIONS[ties_by_id..small_pool_plans] {
        assert!(apply_migration(c, m).await.unwrap(), "{} applied", m.name);
    }
    let current = run(None).await;
    for (i, q) in queries.iter().enumerate() {
        if current[i] == before[i] {
            continue;
        }
        assert!(
            !vector_index,
            "with HNSW schema 30 changed the ranking of {q:?}"
        );
        let d: Vec<f64> = c
            .query(
                "SELECT embedding <=> $1::real[]::vector FROM memloom_items
                 WHERE namespace = 'ns' AND status = 'active' ORDER BY 1 LIMIT 21",
                &[&embed(q)],
            )
            .await
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        assert!(
            d.len() == 21 && (d[9] == d[10] || d[19] == d[20]),
            "schema 30 changed the ranking of {q:?} without a tie at a cut: {d:?}"
        );
    }
    let now = db_now(c).await;
    assert_eq!(
        run(Some(now)).await,
        current,
        "as_of now changed the ranking"
    );
    // Schemas 31 and 32 only change when the keyword and entity arms' statements are planned:
    // schema 30's rankings, with the pool analyzed (without the HNSW index the arms then take
    // their small-pool path, sql/0031; the statistics reads keep a generic plan on any pool,
    // sql/0032); schemas 33 to 37 do not change them either.
    let margin = MIGRATIONS
        .iter()
        .position(|m| m.name == "0038_keyword_vector_margin")
        .expect("0038_keyword_vector_margin is a migration");
    for m in &MIGRATIONS[small_pool_plans..margin] {
        assert!(apply_migration(c, m).await.unwrap(), "{} applied", m.name);
    }
    c.batch_execute("ANALYZE memloom_items").await.unwrap();
    let latest = run(None).await;
    for (i, q) in queries.iter().enumerate() {
        assert_eq!(
            latest[i], current[i],
            "schemas 31 to 37 changed the ranking of {q:?}"
        );
    }
    // Schema 38 takes the keyword vote from items the vector arm finds unrelated: every vote
    // it drops is one whose cosine is more than the margin below the vector arm's 10th.
    for m in &MIGRATIONS[margin..] {
        assert!(apply_migration(c, m).await.unwrap(), "{} applied", m.name);
    }
    let gated = run(None).await;
    let mut dropped = 0;
    for (i, q) in queries.iter().enumerate() {
        let keyword_voted = |rows: &[Ranked]| -> Vec<i64> {
            rows.iter().filter(|r| r.2.is_some()).map(|r| r.0).collect()
        };
        let (was, now) = (keyword_voted(&latest[i]), keyword_voted(&gated[i]));
        assert!(
            now.iter().all(|id| was.contains(id)),
            "{q:?}: a new keyword vote"
        );
        let tenth: f64 = c
            .query_one(
                "SELECT max(distance) FROM memloom_vector_arm($1::real[]::vector, 'ns', 10, NULL)",
                &[&embed(q)],
            )
            .await
            .unwrap()
            .get(0);
        for id in was.iter().filter(|id| !now.contains(id)) {
            let (sim, context): (f64, bool) = c
                .query_one(
                    "SELECT 1 - (embedding <=> $1::real[]::vector), context IS NOT NULL
                     FROM memloom_items WHERE id = $2",
                    &[&embed(q), id],
                )
                .await
                .map(|r| (r.get(0), r.get(1)))
                .unwrap();
            assert!(
                !context && sim < 1.0 - tenth - memloom_core::fuse::KEYWORD_VECTOR_MARGIN,
                "{q:?}: item {id} lost its keyword vote at cosine {sim} (10th: {})",
                1.0 - tenth
            );
            dropped += 1;
        }
        if was == now {
            assert_eq!(
                gated[i], latest[i],
                "{q:?}: the same votes, the same ranking"
            );
        }
    }
    eprintln!(
        "schema 38 took {dropped} keyword votes over {} queries",
        queries.len()
    );
    db.drop_db().await;
}

/// The pool's HNSW index holds the active versions only (sql/0033). A recall as of an instant
/// still finds every version valid then: the active ones saved by then through the index, the
/// ones superseded since through memloom_items_valid_to. Against the exact search over the
/// versions valid at three instants (before any third version, with half the keys at their
/// third, after all), the vector arm's distances are the same and its ids valid then.
#[tokio::test]
async fn the_vector_index_holds_the_active_versions_and_as_of_finds_the_superseded() {
    let Some(db) = TestDb::new("time_active_index").await else {
        return;
    };
    let c = &db.client;
    let def: String = c
        .query_one(
            "SELECT pg_get_indexdef('memloom_items_embedding'::regclass)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert!(
        def.contains("WHERE (status = 'active'::text)"),
        "the index is not over the active versions: {def}"
    );
    // 60 keys x 3 versions; `instants` lie after every key's second version, after the third of
    // keys 0..29, and after all.
    let words = [
        "freeze", "deploy", "port", "queue", "heap", "cache", "retry", "shard",
    ];
    let text = |k: usize, v: usize| {
        format!(
            "note {k} {} {} {} version {v}",
            words[k % 8],
            words[(k / 8 + v) % 8],
            words[(k + 3 * v) % 8]
        )
    };
    let mut instants = Vec::new();
    let save = |k: usize, v: usize| {
        let t = text(k, v);
        async move {
            remember(c, "ns", Some(&format!("k{k}")), &t, &embed(&t), None)
                .await
                .unwrap();
        }
    };
    for v in 1..=2 {
        for k in 0..60 {
            save(k, v).await;
        }
    }
    for keys in [0..30, 30..60] {
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        instants.push(db_now(c).await);
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        for k in keys {
            save(k, 3).await;
        }
    }
    tokio::time::sleep(std::time::Duration::from_millis(3)).await;
    instants.push(db_now(c).await);
    db.refresh_stats("ns").await;
    // (id, distance) lists: the arm's, and the exact nearest among the versions valid at `at`.
    let pairs = |rows: Vec<tokio_postgres::Row>| -> Vec<(i64, f64)> {
        rows.iter().map(|r| (r.get(0), r.get(1))).collect()
    };
    for q in [
        "freeze deploy",
        "port queue version 2",
        "heap cache retry",
        "shard",
    ] {
        for at in &instants {
            let arm = pairs(
                c.query(
                    "SELECT a.id, a.distance FROM memloom_vector_arm($1::real[]::vector, 'ns', 10, NULL, $2::text::timestamptz) a",
                    &[&embed(q), at],
                )
                .await
                .unwrap(),
            );
            let exact = pairs(
                c.query(
                    "SELECT id, embedding <=> $1::real[]::vector FROM memloom_items
                     WHERE namespace = 'ns' AND valid_from <= $2::text::timestamptz
                       AND (valid_to IS NULL OR valid_to > $2::text::timestamptz)
                     ORDER BY 2, 1 LIMIT 10",
                    &[&embed(q), at],
                )
                .await
                .unwrap(),
            );
            let valid = ids(
                c,
                "SELECT id FROM memloom_items WHERE namespace = 'ns' AND valid_from <= $1::text::timestamptz
                   AND (valid_to IS NULL OR valid_to > $1::text::timestamptz)",
                &[at],
            )
            .await;
            assert_eq!(valid.len(), 60);
            // The same distances, up to the HNSW scan's relaxed order, which can swap two
            // neighbours whose distances differ by a rounding (the same as without as_of).
            assert_eq!(arm.len(), exact.len(), "{q:?} as of {at}: {arm:?}");
            assert!(
                arm.iter()
                    .zip(&exact)
                    .all(|(a, e)| (a.1 - e.1).abs() < 1e-6),
                "{q:?} as of {at}: {arm:?} against the exact {exact:?}"
            );
            assert!(
                arm.iter().all(|(id, _)| valid.contains(id)),
                "{q:?} as of {at}: {arm:?}, valid then: {valid:?}"
            );
        }
    }
    // The search without as_of can go through the index (on 180 rows the planner prefers a
    // scan of the table, so those are switched off; an index whose predicate the query does
    // not imply would still not be used).
    c.batch_execute("SET enable_seqscan = off; SET enable_bitmapscan = off")
        .await
        .unwrap();
    let plan: Vec<String> = c
        .query(
            "EXPLAIN SELECT m.id FROM memloom_items m WHERE m.namespace = 'ns' AND m.status = 'active'
             ORDER BY m.embedding <=> $1::real[]::vector LIMIT 10",
            &[&embed("freeze")],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(
        plan.iter()
            .any(|l| l.contains("Index Scan using memloom_items_embedding")),
        "{plan:#?}"
    );
    c.batch_execute("RESET enable_seqscan; RESET enable_bitmapscan")
        .await
        .unwrap();
    db.drop_db().await;
}

/// since / until bound the event time (event_at, else when it was saved), inside the call.
#[tokio::test]
async fn since_and_until_filter_on_event_time() {
    let Some(db) = TestDb::new("time_event").await else {
        return;
    };
    let c = &db.client;
    let saved = |key: &'static str, text: &'static str, at: Option<&'static str>| async move {
        remember_at(c, "ns", Some(key), text, &embed(text), None, at)
            .await
            .unwrap()
            .id
    };
    let may = saved(
        "may",
        "standup moved to the big room",
        Some("2023-05-08T09:00Z"),
    )
    .await;
    let june = saved(
        "june",
        "standup moved to the small room",
        Some("2023-06-20"),
    )
    .await;
    let undated = saved("undated", "standup moved to the garden room", None).await;
    db.refresh_stats("ns").await;
    let ids = |since: Option<&str>, until: Option<&str>| {
        let (since, until) = (since.map(str::to_string), until.map(str::to_string));
        async move {
            let mut p = FuseParams::new("standup room", embed("standup room"), "ns", 10);
            p.since = since;
            p.until = until;
            let mut ids: Vec<i64> = fuse(c, &p).await.unwrap().iter().map(|r| r.id).collect();
            ids.sort();
            ids
        }
    };
    assert_eq!(ids(None, None).await, [may, june, undated]);
    assert_eq!(ids(Some("2023-05-01"), Some("2023-05-31")).await, [may]);
    assert_eq!(ids(Some("2023-06-20"), Some("2023-06-20")).await, [june]);
    // Without an event time the saved time counts: today.
    assert_eq!(ids(Some("2024-01-01"), None).await, [undated]);
    assert_eq!(ids(None, Some("2023-12-31")).await, [may, june]);
    let err = fuse(c, &{
        let mut p = FuseParams::new("standup", embed("standup"), "ns", 10);
        p.since = Some("2023-06-01".into());
        p.until = Some("2023-05-01".into());
        p
    })
    .await
    .unwrap_err();
    assert!(format!("{err}").contains("is after until"), "{err}");
    let h = history(c, "ns", "may").await.unwrap();
    assert_eq!(h[0].event_at.as_deref(), Some("2023-05-08T09:00:00.000Z"));
    assert_eq!(history(c, "ns", "undated").await.unwrap()[0].event_at, None);
    // A new event time is a new version; the same content and time again is not.
    let again = remember_at(
        c,
        "ns",
        Some("may"),
        "standup moved to the big room",
        &embed("standup moved to the big room"),
        None,
        Some("2023-05-08T09:00Z"),
    )
    .await
    .unwrap();
    assert_eq!(again.version, 1);
    db.drop_db().await;
}
