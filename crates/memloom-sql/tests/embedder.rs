use memloom_core::HASH_V1;
use memloom_sql::{fuse, remember, ErrorKind, FuseParams};

use crate::util::TestDb;

#[tokio::test]
async fn the_store_records_the_core_embedder() {
    let Some(db) = TestDb::new("embedder").await else {
        return;
    };
    let row = db
        .client
        .query_one(
            "SELECT embedder_name, embedder_version, embedder_dims FROM memloom_meta",
            &[],
        )
        .await
        .unwrap();
    let (name, version, dims): (String, i32, i32) = (row.get(0), row.get(1), row.get(2));
    assert_eq!(name, HASH_V1.name);
    assert_eq!(version as u32, HASH_V1.version);
    assert_eq!(dims as usize, HASH_V1.dims);
    db.client
        .execute("SELECT memloom_check_embedder('hash', 1, 256)", &[])
        .await
        .expect("the store's own embedder passes");
    db.drop_db().await;
}

#[tokio::test]
async fn a_query_of_the_wrong_dimension_is_refused_with_a_clear_error() {
    let Some(db) = TestDb::new("wrong_dims").await else {
        return;
    };
    let err = fuse(
        &db.client,
        &FuseParams::new("hello", vec![0.5; 384], "ns", 5),
    )
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Database);
    assert!(
        err.to_string().contains(
            "query embedded with 384 dimensions, store built with hash-v1 (256 dimensions); re-embed the query with hash-v1"
        ),
        "{err}"
    );
    let err = remember(&db.client, "ns", None, "x", &[1.0, 0.0], None)
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("query embedded with 2 dimensions"),
        "{err}"
    );
    db.drop_db().await;
}

#[tokio::test]
async fn a_different_embedder_is_refused_with_a_clear_error() {
    let Some(db) = TestDb::new("wrong_embedder").await else {
        return;
    };
    let err = db
        .client
        .execute("SELECT memloom_check_embedder('openai', 3, 1536)", &[])
        .await
        .unwrap_err();
    let msg = err.as_db_error().unwrap().message().to_string();
    assert_eq!(
        msg,
        "query embedded with openai-v3 (1536 dimensions), store built with hash-v1 (256 dimensions); re-embed the query with hash-v1, or re-embed the store"
    );
    db.drop_db().await;
}
