//! memloom_init_store: the embedder and its dimensions are chosen per store, not by the schema.

use memloom_sql::{ensure_vector_index, fuse, init_store, remember, FuseParams, StoreEmbedder};

use crate::util::{embed, TestDb, HASH_V1_STORE};

async fn column_dims(db: &TestDb, table: &str) -> i32 {
    db.client
        .query_one(
            "SELECT atttypmod FROM pg_attribute WHERE attrelid = $1::text::regclass AND attname = 'embedding'",
            &[&table],
        )
        .await
        .unwrap()
        .get(0)
}

async fn vector_indexes(db: &TestDb) -> Vec<String> {
    db.client
        .query(
            "SELECT indexname::text FROM pg_indexes WHERE indexdef LIKE '%USING hnsw%' ORDER BY 1",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

fn db_message(err: &memloom_sql::Error) -> String {
    let s = err.to_string();
    s.split_once(": ").map_or(s.clone(), |(_, m)| m.to_string())
}

#[tokio::test]
async fn a_migrated_store_has_no_embedder_until_init_and_refuses_to_recall() {
    let Some(db) = TestDb::migrated("uninit").await else {
        return;
    };
    assert_eq!(column_dims(&db, "memloom_items").await, -1, "plain vector");
    assert!(vector_indexes(&db).await.is_empty());
    let want = "memloom store has no embedder yet; call memloom_init_store(name, version, dims) first (memloom init)";
    let err = fuse(&db.client, &FuseParams::new("x", embed("x"), "ns", 5))
        .await
        .unwrap_err();
    assert_eq!(db_message(&err), want);
    assert_eq!(err.sqlstate(), Some("55000"));
    let err = ensure_vector_index(&db.client).await.unwrap_err();
    assert_eq!(db_message(&err), want);
    db.drop_db().await;
}

#[tokio::test]
async fn init_sizes_the_columns_builds_the_indexes_and_is_idempotent() {
    let Some(db) = TestDb::migrated("init").await else {
        return;
    };
    init_store(&db.client, &HASH_V1_STORE, true).await.unwrap();
    assert_eq!(column_dims(&db, "memloom_items").await, 256);
    assert_eq!(column_dims(&db, "memloom_entities").await, 256);
    assert_eq!(
        vector_indexes(&db).await,
        ["memloom_entities_embedding", "memloom_items_embedding"]
    );
    db.chunk("ns", "a.md", "Rotate the signing keys yearly.")
        .await;
    init_store(&db.client, &HASH_V1_STORE, true)
        .await
        .expect("the same embedder again: nothing to do");
    assert!(!ensure_vector_index(&db.client).await.unwrap());
    // pgvector's own check on a sized column.
    let err = db
        .client
        .execute(
            "INSERT INTO memloom_items (namespace, kind, content, embedding) VALUES ('ns', 'chunk', 'x', '[1,2,3]')",
            &[],
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.as_db_error().unwrap().message(),
        "expected 256 dimensions, not 3"
    );
    db.drop_db().await;
}

#[tokio::test]
async fn a_different_embedder_is_refused_naming_both() {
    let Some(db) = TestDb::new("reinit").await else {
        return;
    };
    let other = StoreEmbedder {
        name: "api:text-embedding-3-small",
        version: 1,
        dims: 1536,
    };
    let err = init_store(&db.client, &other, false).await.unwrap_err();
    assert_eq!(
        db_message(&err),
        "store built with hash-v1 (256 dimensions), not api:text-embedding-3-small-v1 (1536 dimensions); embed with hash-v1, or make a new store"
    );
    let err = init_store(
        &db.client,
        &StoreEmbedder {
            version: 2,
            ..HASH_V1_STORE
        },
        true,
    )
    .await
    .unwrap_err();
    assert!(db_message(&err).starts_with("store built with hash-v1 (256 dimensions), not hash-v2"));
    db.drop_db().await;
}

/// An API embedder's dimensions (384, 1536): recall works end to end, with HNSW up to 2000.
#[tokio::test]
async fn other_dimensions_work_with_and_without_hnsw() {
    for (dims, index) in [(384, true), (1536, true), (3072, false)] {
        let Some(db) = TestDb::migrated("dims").await else {
            return;
        };
        let e = StoreEmbedder {
            name: "api:test",
            version: 1,
            dims,
        };
        init_store(&db.client, &e, index).await.unwrap();
        assert_eq!(column_dims(&db, "memloom_items").await, dims);
        assert_eq!(vector_indexes(&db).await.len(), if index { 2 } else { 0 });
        let unit = |i: usize| {
            let mut v = vec![0.0_f32; dims as usize];
            v[i] = 1.0;
            v
        };
        let a = remember(&db.client, "ns", None, "alpha notes", &unit(0), None)
            .await
            .unwrap();
        remember(&db.client, "ns", None, "beta notes", &unit(1), None)
            .await
            .unwrap();
        let rows = fuse(&db.client, &FuseParams::new("zzz", unit(0), "ns", 5))
            .await
            .unwrap();
        assert_eq!(rows[0].id, a.id, "{dims}: nearest first");
        assert_eq!(rows[0].vector_rank, Some(1));
        let err = fuse(&db.client, &FuseParams::new("x", embed("x"), "ns", 5))
            .await
            .unwrap_err();
        assert!(
            db_message(&err).starts_with(&format!(
                "query embedded with 256 dimensions, store built with api:test-v1 ({dims} dimensions)"
            )),
            "{err}"
        );
        db.drop_db().await;
    }
}

#[tokio::test]
async fn hnsw_over_2000_dimensions_and_bad_arguments_are_refused() {
    let Some(db) = TestDb::migrated("limits").await else {
        return;
    };
    let big = StoreEmbedder {
        name: "api:big",
        version: 1,
        dims: 3072,
    };
    let err = init_store(&db.client, &big, true).await.unwrap_err();
    assert_eq!(
        db_message(&err),
        "HNSW indexes vectors of at most 2000 dimensions, not 3072; pass vector_index => false to search exactly"
    );
    let err = init_store(&db.client, &StoreEmbedder { dims: 0, ..big }, false)
        .await
        .unwrap_err();
    assert_eq!(
        db_message(&err),
        "expected 1 to 16000 embedding dimensions (pgvector), not 0"
    );
    let err = init_store(&db.client, &StoreEmbedder { name: "", ..big }, false)
        .await
        .unwrap_err();
    assert_eq!(
        db_message(&err),
        "memloom_init_store needs an embedder name and a version >= 1, not '' and 1"
    );
    init_store(&db.client, &big, false).await.unwrap();
    let err = ensure_vector_index(&db.client).await.unwrap_err();
    assert!(db_message(&err)
        .starts_with("HNSW indexes vectors of at most 2000 dimensions, this store's have 3072"));
    db.drop_db().await;
}

/// Rows written before init (plain `vector` columns) decide: the same dimensions are kept,
/// others are refused.
#[tokio::test]
async fn rows_of_other_dimensions_block_init() {
    let Some(db) = TestDb::migrated("nonempty").await else {
        return;
    };
    db.chunk("ns", "a.md", "written before init").await; // 256-d, unchecked
    let e384 = StoreEmbedder {
        name: "api:mini",
        version: 1,
        dims: 384,
    };
    let err = init_store(&db.client, &e384, true).await.unwrap_err();
    assert_eq!(
        db_message(&err),
        "memloom_items already holds 256-dimension embeddings, not 384; the dimensions can change only while it is empty: make a new store"
    );
    init_store(&db.client, &HASH_V1_STORE, false)
        .await
        .expect("the rows' own dimensions");
    assert_eq!(column_dims(&db, "memloom_items").await, 256);
    assert!(vector_indexes(&db).await.is_empty());
    // The deferred build (the embedded store's, at its size threshold).
    assert!(ensure_vector_index(&db.client).await.unwrap());
    assert_eq!(vector_indexes(&db).await.len(), 2);
    db.drop_db().await;
}
