//! Tenant isolation in the database (sql/memloom/10_security.sql) under a role that row-level security
//! binds: `set_namespace` scopes a session, `begin_scoped` one transaction, and no statement,
//! with or without a WHERE clause, reaches another namespace's rows.

use memloom_sql::{begin_scoped, fuse, remember, set_namespace, FuseParams};

use crate::util::{embed, TestDb};

const ROLE: &str = "memloom_sql_rls_test";
const STATS_ROLE: &str = "memloom_sql_rls_stats_test";

async fn count(client: &tokio_postgres::Client) -> i64 {
    client
        .query_one("SELECT count(*) FROM memloom_items", &[])
        .await
        .unwrap()
        .get(0)
}

#[tokio::test]
async fn a_bound_role_sees_and_writes_only_its_namespace() {
    let Some(db) = TestDb::new("rls").await else {
        return;
    };
    // One role working in both namespaces (sql/0008 grants), scoped by the setting.
    db.create_bound_role(ROLE, &["a", "b"]).await;
    for i in 0..3 {
        db.chunk(
            "a",
            "a.md",
            &format!("team a note {i} about max_connections"),
        )
        .await;
    }
    let secret = db
        .chunk("b", "b.md", "team b secret about max_connections")
        .await;

    let app = db.connect_as(ROLE).await;
    assert_eq!(count(&app).await, 0, "no namespace set: no rows");
    set_namespace(&app, "a").await.unwrap();
    assert_eq!(count(&app).await, 3, "no WHERE clause: only a's rows");
    let touched = app
        .execute("UPDATE memloom_items SET content = content", &[])
        .await
        .unwrap();
    assert_eq!(touched, 3);
    let deleted = app
        .execute("DELETE FROM memloom_items WHERE id = $1", &[&secret])
        .await
        .unwrap();
    assert_eq!(deleted, 0, "b's row by id");
    let q = "max_connections";
    let params = FuseParams::new(q, embed(q), "b", 10);
    let e = fuse(&app, &params).await.unwrap_err();
    assert!(
        format!("{e:?}").contains("is not this session's"),
        "fuse naming b from a session in a: {e:?}"
    );
    let planted = remember(&app, "b", Some("k"), "planted", &embed("planted"), None).await;
    let e = planted.unwrap_err();
    assert!(
        format!("{e:?}").contains("row-level security"),
        "remember into b: {e:?}"
    );

    // A transaction scoped to b on a fresh connection: b only, and only until it ends.
    let app = db.connect_as(ROLE).await;
    begin_scoped(&app, "b").await.unwrap();
    assert_eq!(count(&app).await, 1);
    app.batch_execute("COMMIT").await.unwrap();
    assert_eq!(
        count(&app).await,
        0,
        "the setting ended with the transaction"
    );

    // The superuser (the owner here) is not bound.
    assert_eq!(count(&db.client).await, 4);
    db.drop_db().await;
}

/// sql/0007: the BM25 statistics of another namespace are invisible too, and refreshing one's
/// own still works under the bound role.
#[tokio::test]
async fn keyword_statistics_are_scoped_to_the_session_namespace() {
    let Some(db) = TestDb::new("rls_stats").await else {
        return;
    };
    db.create_bound_role(STATS_ROLE, &["a"]).await;
    db.chunk("a", "a.md", "team a writes about replication")
        .await;
    db.chunk("b", "b.md", "team b writes about zeppelins").await;
    db.refresh_stats("a").await;
    db.refresh_stats("b").await;

    let app = db.connect_as(STATS_ROLE).await;
    set_namespace(&app, "a").await.unwrap();
    let words: Vec<String> = app
        .query("SELECT lexeme FROM memloom_term_stats", &[])
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(words.iter().any(|w| w == "replic"), "{words:?}");
    assert!(
        !words.iter().any(|w| w == "zeppelin"),
        "b's words leak: {words:?}"
    );
    let namespaces: i64 = app
        .query_one("SELECT count(*) FROM memloom_namespace_stats", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(namespaces, 1);
    app.execute("SELECT memloom_refresh_stats('a')", &[])
        .await
        .expect("a bound role refreshes its own namespace");
    let refused = app.execute("SELECT memloom_refresh_stats('b')", &[]).await;
    assert!(
        refused.is_err(),
        "a bound role must not rewrite b's statistics"
    );
}
