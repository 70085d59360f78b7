//! sql/0013: `replace_chunks` (`memloom_replace_chunks`), the batch write ingest uses: chunks
//! in the given order with `{root, fileHash}` metadata, a file's chunks replaced (not added
//! to), a file given no chunks emptied, vectors stored bit for bit, statistics exact, and
//! concurrent replacements of the same files never storing a chunk twice.

use memloom_sql::{replace_chunks, FileChunks, NewChunk};

use crate::stats::assert_incremental_equals_full;
use crate::util::{embed, TestDb};

fn file(source: &str, hash: &str, texts: &[&str]) -> FileChunks {
    FileChunks {
        source: source.to_string(),
        file_hash: hash.to_string(),
        chunks: texts
            .iter()
            .map(|t| NewChunk {
                breadcrumb: Some(format!("{source} > part")),
                content: t.to_string(),
                embedding: embed(t),
            })
            .collect(),
    }
}

/// (source, content, metadata) of the namespace's chunks, by id.
async fn rows(db: &TestDb, ns: &str) -> Vec<(String, String, String)> {
    db.client
        .query(
            "SELECT source, content, metadata::text FROM memloom_items WHERE namespace = $1 ORDER BY id",
            &[&ns],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

#[tokio::test]
async fn replace_chunks_writes_in_order_replaces_and_empties() {
    let Some(db) = TestDb::new("ingest_replace").await else {
        return;
    };
    let ns = "docs";
    let batch = [
        file("a.md", "h1", &["alpha pg_hba.conf", "beta max_connections"]),
        file("b.md", "h2", &["gamma ERR_REQUIRE_ESM"]),
    ];
    let r = replace_chunks(&db.client, ns, "/root", &batch, false)
        .await
        .unwrap();
    assert_eq!((r.deleted, r.inserted), (0, 3));
    let meta = |h: &str| format!(r#"{{"root": "/root", "fileHash": "{h}"}}"#);
    assert_eq!(
        rows(&db, ns).await,
        vec![
            ("a.md".into(), "alpha pg_hba.conf".into(), meta("h1")),
            ("a.md".into(), "beta max_connections".into(), meta("h1")),
            ("b.md".into(), "gamma ERR_REQUIRE_ESM".into(), meta("h2")),
        ]
    );
    // The vector read back is the one sent, bit for bit.
    let back: Vec<f32> = db
        .client
        .query_one(
            "SELECT embedding::real[] FROM memloom_items WHERE namespace = $1 AND content = 'gamma ERR_REQUIRE_ESM'",
            &[&ns],
        )
        .await
        .unwrap()
        .get(0);
    let want = embed("gamma ERR_REQUIRE_ESM");
    assert!(
        back.iter()
            .zip(&want)
            .all(|(a, b)| a.to_bits() == b.to_bits())
            && back.len() == want.len()
    );

    // a.md changed to one chunk, b.md emptied: replaced, not added to.
    let again = [file("a.md", "h3", &["delta"]), file("b.md", "h4", &[])];
    let r = replace_chunks(&db.client, ns, "/root", &again, false)
        .await
        .unwrap();
    assert_eq!((r.deleted, r.inserted), (3, 1));
    assert_eq!(
        rows(&db, ns).await,
        vec![("a.md".into(), "delta".into(), meta("h3"))]
    );
    // Another root's file of the same name is another file.
    replace_chunks(
        &db.client,
        ns,
        "/other",
        &[file("a.md", "h5", &["epsilon"])],
        false,
    )
    .await
    .unwrap();
    assert_eq!(rows(&db, ns).await.len(), 2);
    assert_incremental_equals_full(&db.client, "after replacing chunks").await;
    db.drop_db().await;
}

#[tokio::test]
async fn concurrent_replacements_of_the_same_files_store_each_chunk_once() {
    let Some(db) = TestDb::new("ingest_race").await else {
        return;
    };
    let ns = "docs";
    let mut tasks = Vec::new();
    for w in 0..6 {
        let client = db.connect().await;
        tasks.push(tokio::spawn(async move {
            // Each writer names the files in another order; the locks are taken in key order.
            let mut batch: Vec<FileChunks> = (0..5)
                .map(|f| {
                    file(
                        &format!("f{f}.md"),
                        &format!("w{w}"),
                        &["one", "two", "three"],
                    )
                })
                .collect();
            batch.rotate_left(w % 5);
            replace_chunks(&client, ns, "/root", &batch, false)
                .await
                .unwrap()
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let n: i64 = db
        .client
        .query_one(
            "SELECT count(*) FROM memloom_items WHERE namespace = $1",
            &[&ns],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 15, "5 files x 3 chunks, each stored once");
    assert_incremental_equals_full(&db.client, "after concurrent replacements").await;
    db.drop_db().await;
}

#[tokio::test]
async fn mismatched_arrays_are_refused_with_the_counts() {
    let Some(db) = TestDb::new("ingest_bad").await else {
        return;
    };
    let err = db
        .client
        .query(
            "SELECT * FROM memloom_replace_chunks('docs', '/r', '{a.md}', '{}', '{}', '{}', '{}', '{}')",
            &[],
        )
        .await
        .unwrap_err();
    let msg = err.as_db_error().unwrap().message().to_string();
    assert!(msg.contains("(1 sources, 0 hashes)"), "{msg}");
    db.drop_db().await;
}
