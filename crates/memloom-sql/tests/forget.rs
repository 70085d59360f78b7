//! sql/0011: `memloom_forget`, the one forget every client calls: true counts, the other
//! versions' links kept valid, the statistics exact, row-level security, and concurrent
//! remember / forget / history of one key under the lock order memloom_remember uses.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use memloom_sql::{
    forget, forget_namespace, history, remember, retry_transient, ForgetTarget, Forgotten,
};
use tokio_postgres::Client;

use crate::stats::assert_incremental_equals_full;
use crate::util::{embed, TestDb};

async fn save(c: &Client, ns: &str, key: Option<&str>, text: &str) -> i64 {
    remember(c, ns, key, text, &embed(text), None)
        .await
        .unwrap()
        .id
}

/// (id, version, status, supersedes, superseded_by) of every row of `key`, by version.
type Chain = Vec<(i64, i32, String, Option<i64>, Option<i64>)>;

async fn chain(c: &Client, ns: &str, key: &str) -> Chain {
    c.query(
        "SELECT id, version, status, supersedes, superseded_by FROM memloom_items
          WHERE namespace = $1 AND key = $2 ORDER BY version",
        &[&ns, &key],
    )
    .await
    .unwrap()
    .iter()
    .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
    .collect()
}

/// Versions strictly increasing (a version forgotten by id leaves its number unused: a
/// history request read the active version, a remember superseded it, then the forget by id
/// removed it from the middle), at most one active and it the newest, and every link naming
/// an existing, older (supersedes) or newer (superseded_by) version of the same key.
fn assert_intact(ch: &Chain, when: &str) {
    let versions: Vec<i32> = ch.iter().map(|r| r.1).collect();
    assert!(
        versions.windows(2).all(|w| w[0] < w[1]) && versions.first().is_none_or(|&v| v >= 1),
        "versions not strictly increasing from 1 {when}: {ch:?}"
    );
    let active: Vec<_> = ch.iter().filter(|r| r.2 == "active").collect();
    assert!(
        active.len() <= 1,
        "more than one active version {when}: {ch:?}"
    );
    if let Some(a) = active.first() {
        assert_eq!(
            Some(&a.1),
            versions.last(),
            "the active version is not the newest {when}: {ch:?}"
        );
    }
    let by_id: BTreeMap<i64, i32> = ch.iter().map(|r| (r.0, r.1)).collect();
    for (id, v, _, sup, sby) in ch {
        if let Some(s) = sup {
            let sv = by_id
                .get(s)
                .unwrap_or_else(|| panic!("{id} supersedes missing {s} {when}"));
            assert!(sv < v, "{id} supersedes a newer version {when}: {ch:?}");
        }
        if let Some(s) = sby {
            let sv = by_id
                .get(s)
                .unwrap_or_else(|| panic!("{id} superseded_by missing {s} {when}"));
            assert!(sv > v, "{id} superseded by an older version {when}: {ch:?}");
        }
    }
}

async fn count(c: &Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).await.unwrap().get(0)
}

#[tokio::test]
async fn forget_by_key_returns_the_items_mentions_and_entities_it_removed() {
    let Some(db) = TestDb::new("forget_counts").await else {
        return;
    };
    let c = &db.client;
    let v1 = save(c, "ns", Some("freeze"), "Deploys freeze on Fridays.").await;
    let v2 = save(c, "ns", Some("freeze"), "Deploys freeze on Thursdays.").await;
    let v3 = save(c, "ns", Some("freeze"), "Deploys freeze on Wednesdays.").await;
    let other = save(c, "ns", Some("billing"), "Billing runs on Mondays.").await;
    let theirs = save(c, "b", Some("freeze"), "Team B freezes on Fridays.").await;
    // e1 only by the key's versions (goes), e2 also by another memory (stays), e3 in b.
    db.entity("ns", "friday", &[(v1, 0.9), (v3, 0.5)]).await;
    db.entity("ns", "deploy", &[(v2, 0.9), (other, 0.4)]).await;
    db.entity("b", "friday", &[(theirs, 0.9)]).await;
    assert_incremental_equals_full(c, "before forget").await;

    let f = forget(c, "ns", &ForgetTarget::Key("freeze")).await.unwrap();
    assert_eq!(
        f,
        Forgotten {
            deleted: 3,
            mentions: 3,
            entities: 1,
            not_a_memory: false
        }
    );
    assert_eq!(
        count(
            c,
            "SELECT count(*) FROM memloom_entities WHERE namespace = 'ns'"
        )
        .await,
        1
    );
    assert_eq!(
        count(c, "SELECT count(*) FROM memloom_mentions").await,
        2,
        "deploy->billing and b's friday stay"
    );
    assert_eq!(chain(c, "b", "freeze").await.len(), 1);
    assert_incremental_equals_full(c, "after forget by key").await;
    // No keyword statistics left for words only the forgotten versions had.
    assert_eq!(
        count(
            c,
            "SELECT count(*) FROM memloom_term_stats WHERE namespace = 'ns' AND lexeme IN ('wednesday', 'thursday')"
        )
        .await,
        0
    );
    let again = forget(c, "ns", &ForgetTarget::Key("freeze")).await.unwrap();
    assert_eq!((again.deleted, again.mentions, again.entities), (0, 0, 0));
}

#[tokio::test]
async fn forget_by_id_relinks_the_neighbours_and_keeps_the_statistics_exact() {
    let Some(db) = TestDb::new("forget_relink").await else {
        return;
    };
    let c = &db.client;
    let v1 = save(c, "ns", Some("k"), "one deploy").await;
    let v2 = save(c, "ns", Some("k"), "two deploys").await;
    let v3 = save(c, "ns", Some("k"), "three deploys").await;
    db.entity("ns", "deploy", &[(v2, 0.9)]).await;
    let f = forget(c, "ns", &ForgetTarget::Id(v2)).await.unwrap();
    assert_eq!((f.deleted, f.mentions, f.entities), (1, 1, 1));
    let ch = chain(c, "ns", "k").await;
    assert_eq!(
        ch,
        [
            (v1, 1, "superseded".to_string(), None, Some(v3)),
            (v3, 3, "active".to_string(), Some(v1), None)
        ]
    );
    assert_incremental_equals_full(c, "after forgetting the middle version").await;
    // The active one: no version is active afterwards (older content never comes back), and
    // the next remember continues the numbering.
    let f = forget(c, "ns", &ForgetTarget::Id(v3)).await.unwrap();
    assert_eq!(f.deleted, 1);
    let ch = chain(c, "ns", "k").await;
    assert_eq!(ch, [(v1, 1, "superseded".to_string(), None, None)]);
    let v = remember(c, "ns", Some("k"), "four", &embed("four"), None)
        .await
        .unwrap();
    assert_eq!(v.version, 2);
    assert_incremental_equals_full(c, "after forgetting the active version").await;
    // An id of another namespace, or none: nothing.
    let none = forget(c, "other", &ForgetTarget::Id(v1)).await.unwrap();
    assert_eq!((none.deleted, none.not_a_memory), (0, false));
    let none = forget(c, "ns", &ForgetTarget::Id(i64::MAX)).await.unwrap();
    assert_eq!(none.deleted, 0);
}

#[tokio::test]
async fn a_tenant_role_forgets_in_its_namespace_only() {
    let Some(db) = TestDb::new("forget_tenant").await else {
        return;
    };
    let mine = save(&db.client, "a", Some("k"), "team A's note").await;
    save(&db.client, "a", Some("k"), "team A's note, revised").await;
    let theirs = save(&db.client, "b", Some("k"), "team B's secret").await;
    db.entity("a", "note", &[(mine, 0.8)]).await;
    let role = format!("memloom_forget_tenant_{}", std::process::id());
    db.create_bound_role(&role, &["a"]).await;
    let c = db.connect_as(&role).await;
    memloom_sql::set_namespace(&c, "a").await.unwrap();
    // B's id and B's namespace, named from A's role: nothing, and B keeps its row.
    let f = forget(&c, "a", &ForgetTarget::Id(theirs)).await.unwrap();
    assert_eq!(f.deleted, 0);
    let f = forget(&c, "b", &ForgetTarget::Key("k")).await.unwrap();
    assert_eq!(f.deleted, 0);
    assert_eq!(chain(&db.client, "b", "k").await.len(), 1);
    let f = forget(&c, "a", &ForgetTarget::Key("k")).await.unwrap();
    assert_eq!((f.deleted, f.mentions, f.entities), (2, 1, 1));
    assert!(chain(&db.client, "a", "k").await.is_empty());
    assert_incremental_equals_full(&db.client, "after a tenant's forget").await;
}

/// What the concurrent test saw.
#[derive(Default, Debug)]
struct Tally {
    remembered: i64,
    forgotten: i64,
    histories: i64,
    /// Transient failures (40P01, 40001) that outlived every retry: the one error allowed out,
    /// which the worker answers 409 with Retry-After.
    gave_up: i64,
}

/// 16 connections, 400 operations on ONE key: remember, forget by key, forget the active
/// version by id, history. Each write is autocommitted and retried by retry_transient. No
/// other error may escape; afterwards the key has at most one active version and an intact
/// chain, its row count equals versions remembered minus items forget reported, and the
/// statistics equal a full recompute.
#[tokio::test]
async fn concurrent_remember_forget_history_of_one_key() {
    let Some(db) = TestDb::new("forget_concurrent").await else {
        return;
    };
    const CONNECTIONS: u64 = 16;
    const OPS: u64 = 400;
    let seq = Arc::new(AtomicU64::new(0));
    let retries = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::new();
    for w in 0..CONNECTIONS {
        let c = db.connect().await;
        let seq = Arc::clone(&seq);
        let retries = Arc::clone(&retries);
        tasks.push(tokio::spawn(async move {
            memloom_sql::set_namespace(&c, "ns").await.unwrap();
            let mut t = Tally::default();
            let sleep = |d| {
                retries.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(d)
            };
            for i in 0..OPS / CONNECTIONS {
                let n = seq.fetch_add(1, Ordering::Relaxed);
                let seed = w << 32 | i;
                let r: Result<(), memloom_sql::Error> = match (n * 7 + w) % 10 {
                    0..=3 => {
                        let text = format!("deploy note {n} from writer {w}");
                        let e = embed(&text);
                        retry_transient(seed, sleep, || {
                            remember(&c, "ns", Some("k"), &text, &e, None)
                        })
                        .await
                        .map(|_| t.remembered += 1)
                    }
                    4 | 5 => {
                        retry_transient(seed, sleep, || forget(&c, "ns", &ForgetTarget::Key("k")))
                            .await
                            .map(|f| t.forgotten += f.deleted)
                    }
                    6 => {
                        let h = history(&c, "ns", "k").await.expect("history");
                        let active = h.iter().filter(|v| v.status == "active").count();
                        assert!(active <= 1, "history showed {active} active versions");
                        match h.iter().find(|v| v.status == "active") {
                            Some(a) => {
                                let target = ForgetTarget::Id(a.id);
                                retry_transient(seed, sleep, || forget(&c, "ns", &target))
                                    .await
                                    .map(|f| t.forgotten += f.deleted)
                            }
                            None => Ok(()),
                        }
                    }
                    _ => {
                        let h = history(&c, "ns", "k").await.expect("history");
                        let active = h.iter().filter(|v| v.status == "active").count();
                        assert!(active <= 1, "history showed {active} active versions");
                        t.histories += 1;
                        Ok(())
                    }
                };
                match r {
                    Ok(()) => {}
                    Err(e) if memloom_sql::is_transient(&e) => t.gave_up += 1,
                    Err(e) => panic!("writer {w}: {e} (SQLSTATE {:?})", e.sqlstate()),
                }
            }
            t
        }));
    }
    let mut all = Tally::default();
    for task in tasks {
        let t = task.await.expect("a writer failed");
        all.remembered += t.remembered;
        all.forgotten += t.forgotten;
        all.histories += t.histories;
        all.gave_up += t.gave_up;
    }
    let retried = retries.load(Ordering::Relaxed);
    eprintln!(
        "concurrent one key: {OPS} ops on {CONNECTIONS} connections: {all:?}, retries {retried}"
    );
    let ch = chain(&db.client, "ns", "k").await;
    assert_intact(&ch, "after the concurrent run");
    assert_eq!(
        ch.len() as i64,
        all.remembered - all.forgotten,
        "rows left != remembered - forgotten: forget's counts are wrong"
    );
    assert!(all.remembered > 100 && all.forgotten > 0, "{all:?}");
    assert_eq!(
        all.gave_up, 0,
        "transient failures outlived the retries: {all:?}"
    );
    assert_incremental_equals_full(&db.client, "after the concurrent run").await;
    db.drop_db().await;
}

/// Forgetting a namespace takes one advisory lock whatever its number of keys (sql/0020: one
/// per key ran out of shared memory at about 500k keys), and still waits for a remember of one
/// of its keys that has not committed, then deletes that version too.
#[tokio::test]
async fn forget_namespace_takes_one_lock_and_waits_for_a_writer_of_a_key() {
    let Some(db) = TestDb::new("forget_ns_locks").await else {
        return;
    };
    let c = &db.client;
    const KEYS: usize = 300;
    for i in 0..KEYS {
        save(
            c,
            "big",
            Some(&format!("k{i}")),
            &format!("note {i} about deploys"),
        )
        .await;
    }
    save(c, "kept", Some("k0"), "another namespace's note").await;

    // The advisory locks the call holds in its transaction (the statistics lock comes at commit).
    c.batch_execute("BEGIN").await.unwrap();
    let f = forget_namespace(c, "big").await.unwrap();
    let held: i64 = c
        .query_one(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    c.batch_execute("ROLLBACK").await.unwrap();
    assert_eq!(f.items, KEYS as i64);
    assert_eq!(
        held, 1,
        "forget_namespace held {held} advisory locks for {KEYS} keys"
    );

    // A writer of a key of the namespace, not committed: forget waits for it.
    let w = db.connect().await;
    w.batch_execute("BEGIN").await.unwrap();
    save(&w, "big", Some("late"), "a late note").await;
    let other = db.connect().await;
    let task = tokio::spawn(async move { forget_namespace(&other, "big").await.unwrap() });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(
        !task.is_finished(),
        "forget_namespace did not wait for the open remember"
    );
    w.batch_execute("COMMIT").await.unwrap();
    let f = task.await.unwrap();
    assert_eq!(
        f.items,
        KEYS as i64 + 1,
        "the late version was deleted too: {f:?}"
    );
    assert_eq!(
        count(
            c,
            "SELECT count(*) FROM memloom_items WHERE namespace = 'big'"
        )
        .await,
        0
    );
    assert_eq!(
        count(
            c,
            "SELECT count(*) FROM memloom_items WHERE namespace = 'kept'"
        )
        .await,
        1
    );
    // A remember after it takes the shared lock again without waiting.
    save(c, "big", Some("k0"), "after the forget").await;
    assert_eq!(chain(c, "big", "k0").await.len(), 1);
    assert_incremental_equals_full(c, "after forget_namespace").await;
    db.drop_db().await;
}
