use memloom_sql::{forget, history, remember, ForgetTarget};

use crate::util::{embed, TestDb};

async fn save(db: &TestDb, ns: &str, key: Option<&str>, text: &str) -> i64 {
    remember(&db.client, ns, key, text, &embed(text), None)
        .await
        .unwrap()
        .id
}

#[tokio::test]
async fn history_lists_a_keys_versions_oldest_first_in_its_namespace_only() {
    let Some(db) = TestDb::new("memories_history").await else {
        return;
    };
    let v1 = save(&db, "ns", Some("freeze"), "Deploys freeze on Fridays.").await;
    let v2 = save(&db, "ns", Some("freeze"), "Deploys freeze on Thursdays.").await;
    save(&db, "other", Some("freeze"), "Another team's freeze.").await;
    let h = history(&db.client, "ns", "freeze").await.unwrap();
    let got: Vec<_> = h
        .iter()
        .map(|v| (v.id, v.version, v.status.as_str()))
        .collect();
    assert_eq!(got, [(v1, 1, "superseded"), (v2, 2, "active")]);
    assert_eq!(h[1].content, "Deploys freeze on Thursdays.");
    assert!(
        h[0].created_at.ends_with('Z') && h[0].created_at.len() == 24,
        "{}",
        h[0].created_at
    );
    assert!(history(&db.client, "ns", "none").await.unwrap().is_empty());
}

#[tokio::test]
async fn forget_by_key_deletes_every_version_and_nothing_else() {
    let Some(db) = TestDb::new("memories_forget_key").await else {
        return;
    };
    save(&db, "ns", Some("freeze"), "Deploys freeze on Fridays.").await;
    save(&db, "ns", Some("freeze"), "Deploys freeze on Thursdays.").await;
    save(&db, "other", Some("freeze"), "Another team's freeze.").await;
    let f = forget(&db.client, "ns", &ForgetTarget::Key("freeze"))
        .await
        .unwrap();
    assert_eq!((f.deleted, f.not_a_memory), (2, false));
    assert!(history(&db.client, "ns", "freeze")
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        history(&db.client, "other", "freeze").await.unwrap().len(),
        1
    );
    let again = forget(&db.client, "ns", &ForgetTarget::Key("freeze"))
        .await
        .unwrap();
    assert_eq!(again.deleted, 0);
}

#[tokio::test]
async fn forget_by_id_unlinks_the_other_versions_and_spares_chunks_and_other_namespaces() {
    let Some(db) = TestDb::new("memories_forget_id").await else {
        return;
    };
    let v1 = save(&db, "ns", Some("freeze"), "Deploys freeze on Fridays.").await;
    let v2 = save(&db, "ns", Some("freeze"), "Deploys freeze on Thursdays.").await;
    let f = forget(&db.client, "ns", &ForgetTarget::Id(v1))
        .await
        .unwrap();
    assert_eq!((f.deleted, f.not_a_memory), (1, false));
    let h = history(&db.client, "ns", "freeze").await.unwrap();
    assert_eq!(h.iter().map(|v| v.id).collect::<Vec<_>>(), [v2]);

    let theirs = forget(&db.client, "other", &ForgetTarget::Id(v2))
        .await
        .unwrap();
    assert_eq!((theirs.deleted, theirs.not_a_memory), (0, false));

    let text = "Connection limits\n\nmax_connections is 200.";
    let chunk: i64 = db
        .client
        .query_one(
            "INSERT INTO memloom_items (namespace, kind, source, content, embedding) \
             VALUES ('ns', 'chunk', 'pg.md', $1, $2::real[]::vector) RETURNING id",
            &[&text, &embed(text)],
        )
        .await
        .unwrap()
        .get(0);
    let refused = forget(&db.client, "ns", &ForgetTarget::Id(chunk))
        .await
        .unwrap();
    assert_eq!((refused.deleted, refused.not_a_memory), (0, true));
}
