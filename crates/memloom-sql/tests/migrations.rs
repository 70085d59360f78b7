use memloom_sql::{migrate, ErrorKind, MIGRATIONS};

use crate::util::TestDb;

#[tokio::test]
async fn migrations_apply_on_an_empty_database_then_are_a_no_op() {
    let Some(db) = TestDb::empty("migrate").await else {
        return;
    };
    let all: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
    assert_eq!(migrate(&db.client).await.unwrap(), all);
    assert_eq!(migrate(&db.client).await.unwrap(), Vec::<i32>::new());
    let rows = db
        .client
        .query(
            "SELECT version, name, length(checksum) FROM memloom_migrations ORDER BY version",
            &[],
        )
        .await
        .unwrap();
    let got: Vec<(i32, String, i32)> = rows
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect();
    let want: Vec<(i32, String, i32)> = MIGRATIONS
        .iter()
        .map(|m| (m.version, m.name.to_string(), 64))
        .collect();
    assert_eq!(got, want);
    let schema: i32 = db
        .client
        .query_one("SELECT schema_version FROM memloom_meta", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(schema, MIGRATIONS.last().unwrap().version);
    db.drop_db().await;
}

#[tokio::test]
async fn concurrent_runners_apply_each_migration_once() {
    let Some(db) = TestDb::empty("migrate_race").await else {
        return;
    };
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let client = db.connect().await;
        tasks.push(tokio::spawn(async move { migrate(&client).await.unwrap() }));
    }
    let mut applied = Vec::new();
    for t in tasks {
        applied.extend(t.await.unwrap());
    }
    applied.sort();
    let all: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
    assert_eq!(
        applied, all,
        "every migration applied exactly once across runners"
    );
    db.drop_db().await;
}

#[tokio::test]
async fn an_edited_migration_is_refused() {
    let Some(db) = TestDb::new("migrate_edit").await else {
        return;
    };
    db.client
        .execute(
            "UPDATE memloom_migrations SET checksum = 'abc' WHERE version = 1",
            &[],
        )
        .await
        .unwrap();
    let err = migrate(&db.client).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Migration);
    assert!(
        err.to_string()
            .contains("0001_schema was applied with checksum abc"),
        "{err}"
    );
    db.drop_db().await;
}

#[tokio::test]
async fn a_newer_database_is_refused() {
    let Some(db) = TestDb::new("migrate_newer").await else {
        return;
    };
    db.client
        .execute(
            "INSERT INTO memloom_migrations (version, name, checksum) VALUES (9999, '9999_future', 'x')",
            &[],
        )
        .await
        .unwrap();
    let err = migrate(&db.client).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Migration);
    assert!(err.to_string().contains("schema version 9999"), "{err}");
    db.drop_db().await;
}
