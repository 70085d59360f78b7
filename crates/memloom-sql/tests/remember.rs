use memloom_sql::remember;

use crate::util::{embed, TestDb};

#[tokio::test]
async fn concurrent_writers_of_one_key_queue_and_leave_one_active_version() {
    let Some(db) = TestDb::new("concurrent_remember").await else {
        return;
    };
    const WRITERS: usize = 24;
    let mut tasks = Vec::new();
    for i in 0..WRITERS {
        let client = db.connect().await;
        tasks.push(tokio::spawn(async move {
            let text = format!("The on-call rotation is owned by team {i}.");
            remember(&client, "ns", Some("on-call"), &text, &embed(&text), None)
                .await
                .unwrap()
        }));
    }
    let mut versions = Vec::new();
    for t in tasks {
        versions.push(t.await.unwrap().version);
    }
    versions.sort();
    assert_eq!(versions, (1..=WRITERS as i32).collect::<Vec<_>>());
    let rows = db
        .client
        .query(
            "SELECT id, version, status, supersedes, superseded_by FROM memloom_items \
             WHERE namespace = 'ns' AND key = 'on-call' ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), WRITERS);
    let active: Vec<i32> = rows
        .iter()
        .filter(|r| r.get::<_, String>(2) == "active")
        .map(|r| r.get(1))
        .collect();
    assert_eq!(
        active,
        vec![WRITERS as i32],
        "exactly one active version, the last"
    );
    for pair in rows.windows(2) {
        let (older, newer) = (&pair[0], &pair[1]);
        assert_eq!(older.get::<_, Option<i64>>(4), Some(newer.get::<_, i64>(0)));
        assert_eq!(newer.get::<_, Option<i64>>(3), Some(older.get::<_, i64>(0)));
    }
    db.drop_db().await;
}

#[tokio::test]
async fn remembering_the_same_content_again_is_not_a_new_version() {
    let Some(db) = TestDb::new("same_remember").await else {
        return;
    };
    let text = "Backups run nightly at 02:00 UTC.";
    let a = remember(&db.client, "ns", Some("backups"), text, &embed(text), None)
        .await
        .unwrap();
    let b = remember(&db.client, "ns", Some("backups"), text, &embed(text), None)
        .await
        .unwrap();
    assert_eq!(a, b);
    let c = remember(
        &db.client,
        "ns",
        Some("backups"),
        text,
        &embed(text),
        Some(r#"{"src":"x"}"#),
    )
    .await
    .unwrap();
    assert_eq!(c.version, 2, "new metadata is a new version");
    // Keyless memories never supersede each other; the same key in another namespace is separate.
    let d = remember(&db.client, "ns", None, text, &embed(text), None)
        .await
        .unwrap();
    let e = remember(
        &db.client,
        "other",
        Some("backups"),
        text,
        &embed(text),
        None,
    )
    .await
    .unwrap();
    assert_eq!((d.version, e.version), (1, 1));
    db.drop_db().await;
}

#[tokio::test]
async fn the_unique_index_refuses_a_second_active_version() {
    let Some(db) = TestDb::new("unique_active").await else {
        return;
    };
    let text = "x";
    remember(&db.client, "ns", Some("k"), text, &embed(text), None)
        .await
        .unwrap();
    let err = db
        .client
        .execute(
            "INSERT INTO memloom_items (namespace, kind, key, version, content, embedding) \
             SELECT namespace, kind, key, 2, 'y', embedding FROM memloom_items",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(err.code().unwrap().code(), "23505", "{err}");
    db.drop_db().await;
}
