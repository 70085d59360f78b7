//! static-v1's table in the database (sql/memloom/13_static_table.sql): loaded from the shipped
//! file, its integer sums equal the core's for every golden text, and the split path (tokenize
//! from the database's vocabulary, sum in the database, finish in the core), which the edge
//! worker runs, gives the golden vectors of static-v1 and static-v2 bit for bit.

use std::collections::HashMap;
use std::fs;
use std::path::PathBuf;

use memloom_core::embed::{
    accumulate_static_rows, finish_static, StaticTokenizer, STATIC_DIMS, STATIC_V1_TABLE_CHECKSUM,
};
use memloom_core::{StaticModel, StaticVersion};
use memloom_sql::{load_static_table, static_rows, static_vocabulary, StaticRow};
use serde::Deserialize;
use tokio_postgres::Client;

use crate::util::TestDb;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[derive(Deserialize)]
struct Golden {
    text: String,
    embedder: String,
    vector: Vec<f32>,
}

/// The worker's path: the database's rows of `ids`, summed by the core.
async fn db_sums(c: &Client, ids: &[u32]) -> [i64; STATIC_DIMS] {
    let rows: HashMap<u32, StaticRow> = static_rows(c, ids).await.unwrap().into_iter().collect();
    accumulate_static_rows(ids, |id| rows.get(&id).map(|(w, r)| (*w, r)))
}

#[derive(Deserialize)]
struct ParityCase {
    text: String,
    ids: Vec<u32>,
    acc: Option<Vec<i64>>,
}

#[tokio::test]
async fn the_database_sums_give_the_golden_vectors() {
    let Some(db) = TestDb::new("static_table").await else {
        return;
    };
    let c = &db.client;
    assert_eq!(static_vocabulary(c).await.unwrap(), None, "no table yet");
    assert!(static_rows(c, &[1000]).await.unwrap().is_empty());

    let bytes = fs::read(repo().join("crates/memloom-core/data/static-v1.bin")).unwrap();
    let model = StaticModel::from_bytes(&bytes).unwrap();
    let rows = load_static_table(c, &bytes).await.unwrap();
    assert_eq!(rows, 30522 - 999);
    // Loading again replaces the table.
    assert_eq!(load_static_table(c, &bytes).await.unwrap(), rows);

    let vocab = static_vocabulary(c).await.unwrap().expect("loaded");
    assert_eq!(vocab.checksum, STATIC_V1_TABLE_CHECKSUM);
    let tokenizer = StaticTokenizer::from_vocabulary(&vocab.vocabulary, vocab.unk_id);

    for version in StaticVersion::ALL {
        let id = version.info().id();
        let golden: Vec<Golden> = serde_json::from_str(
            &fs::read_to_string(repo().join(format!("tests/golden/embeddings-{id}.json"))).unwrap(),
        )
        .unwrap();
        assert!(golden.len() >= 10, "{} golden texts", golden.len());
        for g in &golden {
            assert_eq!(g.embedder, id);
            let ids = tokenizer.tokenize(&g.text);
            assert_eq!(ids, model.tokenize(&g.text), "tokens of {:?}", g.text);
            let acc = db_sums(c, &ids).await;
            assert_eq!(acc, model.accumulate(&ids), "sums of {:?}", g.text);
            let got: Vec<u32> = finish_static(&acc, &g.text, version)
                .iter()
                .map(|x| x.to_bits())
                .collect();
            let want: Vec<u32> = g.vector.iter().map(|x| x.to_bits()).collect();
            assert_eq!(got, want, "{id} vector of {:?}", g.text);
        }
    }
    // The distillation script's own sums (Python, from the same table) for the cases that
    // carry them in tests/golden/wordpiece.json.
    let cases: Vec<ParityCase> = serde_json::from_str(
        &fs::read_to_string(repo().join("tests/golden/wordpiece.json")).unwrap(),
    )
    .unwrap();
    let mut n = 0;
    for case in cases.iter().filter(|c| c.acc.is_some()) {
        let acc = db_sums(c, &case.ids).await;
        assert_eq!(Some(acc.to_vec()), case.acc, "sums of {:?}", case.text);
        n += 1;
    }
    assert!(n >= 50, "{n} cases with sums");
    // Every row equals the file's, and the ids without one ([UNK] = 100) have none.
    let all: Vec<u32> = (0..30522).collect();
    let rows = static_rows(c, &all).await.unwrap();
    assert_eq!(rows.len(), 30522 - 999);
    for (id, (w, r)) in &rows {
        assert_eq!(model.row(*id), Some((*w, r)), "row {id}");
    }
    assert_eq!(model.row(100), None);
    db.drop_db().await;
}

#[tokio::test]
async fn a_damaged_table_is_refused_and_the_loaded_one_kept() {
    let Some(db) = TestDb::new("static_bad").await else {
        return;
    };
    let c = &db.client;
    let bytes = fs::read(repo().join("crates/memloom-core/data/static-v1.bin")).unwrap();
    for (bad, what) in [
        (b"not a table".to_vec(), "bad magic"),
        (bytes[..bytes.len() - 1].to_vec(), "truncated"),
    ] {
        let err = load_static_table(c, &bad).await.unwrap_err();
        assert!(err.to_string().contains(what), "{err}");
    }
    assert_eq!(static_vocabulary(c).await.unwrap(), None);
    db.drop_db().await;
}
