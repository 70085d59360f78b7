//! sql/0024: the entity indexer's marks (`memloom_indexed`). An index batch marks an item only
//! while its content is the one it extracted from: an in-place content change that commits
//! before the batch locks the item fails the batch's hash check, and one that comes after waits
//! for the batch and then removes the mark, so the next index run sees the item again.

use std::time::Duration;

use tokio_postgres::Client;

use crate::util::TestDb;

const NS: &str = "marks";

async fn mark(c: &Client, id: i64, hash: &str) -> i32 {
    c.query_one(
        "SELECT indexed FROM memloom_index_batch($1, ARRAY[$2::bigint], ARRAY[$3::text], '{}', '{}', '{}', '{}', '{}', '{}')",
        &[&NS, &id, &hash],
    )
    .await
    .unwrap()
    .get(0)
}

async fn unindexed(c: &Client) -> Vec<i64> {
    c.query("SELECT id FROM memloom_unindexed($1, 0, 100)", &[&NS])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Waits until another session of this database waits for a lock (pg_stat_activity); fails if
/// `task` finishes first, which it could only do without waiting.
async fn until_blocked<T>(db: &TestDb, task: &tokio::task::JoinHandle<T>, what: &str) {
    for _ in 0..600 {
        assert!(!task.is_finished(), "{what}");
        let waiting: i64 = db
            .client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
                &[],
            )
            .await
            .unwrap()
            .get(0);
        if waiting > 0 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what}: no session waited for a lock within 30 s");
}

async fn hash(c: &Client, id: i64) -> String {
    c.query_one(
        "SELECT content_hash FROM memloom_items WHERE id = $1",
        &[&id],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn a_content_change_and_an_index_batch_on_one_item_never_leave_a_stale_mark() {
    let Some(db) = TestDb::new("index_marks").await else {
        return;
    };
    let id = db.chunk(NS, "a.md", "the first text").await;
    let first = hash(&db.client, id).await;
    assert_eq!(unindexed(&db.client).await, vec![id]);

    // The batch first: the change waits for it, then removes the mark.
    let batch = db.connect().await;
    batch.batch_execute("BEGIN").await.unwrap();
    assert_eq!(mark(&batch, id, &first).await, 1);
    let change = db.connect().await;
    let update = tokio::spawn(async move {
        change
            .execute(
                "UPDATE memloom_items SET content = 'the second text' WHERE id = $1",
                &[&id],
            )
            .await
            .unwrap();
        change
    });
    until_blocked(
        &db,
        &update,
        "the change waits for the batch's lock on the item",
    )
    .await;
    batch.batch_execute("COMMIT").await.unwrap();
    update.await.unwrap();
    assert_eq!(
        unindexed(&db.client).await,
        vec![id],
        "the change removed the mark"
    );

    // The change first: the batch waits for it, then finds another hash and marks nothing.
    let second = hash(&db.client, id).await;
    let change = db.connect().await;
    change.batch_execute("BEGIN").await.unwrap();
    change
        .execute(
            "UPDATE memloom_items SET content = 'the third text' WHERE id = $1",
            &[&id],
        )
        .await
        .unwrap();
    let batch = db.connect().await;
    let marking = tokio::spawn(async move { mark(&batch, id, &second).await });
    until_blocked(
        &db,
        &marking,
        "the batch waits for the change's lock on the item",
    )
    .await;
    change.batch_execute("COMMIT").await.unwrap();
    assert_eq!(
        marking.await.unwrap(),
        0,
        "the extracted text is gone: not marked"
    );
    assert_eq!(unindexed(&db.client).await, vec![id]);

    // Marked with the current hash; deleting the item takes its mark along.
    let third = hash(&db.client, id).await;
    assert_eq!(mark(&db.client, id, &third).await, 1);
    assert!(unindexed(&db.client).await.is_empty());
    db.client
        .execute("DELETE FROM memloom_items WHERE id = $1", &[&id])
        .await
        .unwrap();
    let left: i64 = db
        .client
        .query_one("SELECT count(*) FROM memloom_indexed", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0);
    db.drop_db().await;
}

/// sql/0027: an index run's batch (`memloom_unindexed` after the previous batch's last id)
/// reads only the marks above that id. Without the restated bound the anti-join merged from
/// the first mark on every call, whatever the plan (merge, hash or nested loop): every batch
/// read the marks of all the batches before it.
#[tokio::test]
async fn a_batch_of_unindexed_items_reads_only_the_marks_after_its_start() {
    let Some(db) = TestDb::new("index_marks_seek").await else {
        return;
    };
    let mut ids = Vec::new();
    for i in 0..40 {
        ids.push(
            db.chunk(NS, &format!("f{i}.md"), &format!("text number {i}"))
                .await,
        );
    }
    // The first 30 indexed, as a run halfway through would have left them.
    db.client
        .execute(
            "INSERT INTO memloom_indexed (item_id, namespace) SELECT unnest($1::bigint[]), $2",
            &[&ids[..30].to_vec(), &NS],
        )
        .await
        .unwrap();
    let after = ids[29];
    let got: Vec<i64> = db
        .client
        .query(
            "SELECT id FROM memloom_unindexed($1, $2, 100)",
            &[&NS, &after],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(got, ids[30..].to_vec());
    let plan: String = db
        .client
        .query(
            "EXPLAIN (COSTS OFF) SELECT * FROM memloom_unindexed($1, $2, 100)",
            &[&NS, &after],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get::<_, String>(0) + "\n")
        .collect();
    assert!(
        plan.contains("memloom_indexed") && plan.contains("item_id > "),
        "the marks are read from after_id on:\n{plan}"
    );
}
