//! static-v1's token table in the database (sql/memloom/13_static_table.sql): loading it into a
//! server store, and the two calls a runtime without the table file makes to embed with it
//! (the edge worker): the vocabulary once, then the rows of a text's tokens.

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::error::ErrorKind;
use crate::Error;

/// Loads (or replaces) the table from the bytes of `static-v1.bin`; returns its token rows.
/// The caller checks the body first (`memloom_core::StaticModel::from_bytes`): the database
/// checks the layout and sizes only.
pub async fn load_static_table(client: &Client, table: &[u8]) -> Result<i32, Error> {
    let row = client
        .query_typed_one(
            "SELECT memloom_load_static_table($1)",
            &[(&table, Type::BYTEA)],
        )
        .await
        .map_err(|e| Error::db("cannot load the static-v1 table", e))?;
    row.try_get(0)
        .map_err(|e| Error::db("memloom_load_static_table returned an unexpected row", e))
}

/// The loaded table's identity and vocabulary (`memloom_static_vocabulary`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticVocabulary {
    /// The header's XXH64 of the table body (`memloom_core::STATIC_V1_TABLE_CHECKSUM`).
    pub checksum: u64,
    pub unk_id: u32,
    /// The first token id with a row (the ids below are `[UNK]` and the other special tokens).
    pub first_id: u32,
    /// The tokens in id order, one per line.
    pub vocabulary: String,
}

/// The loaded table's vocabulary, or `None` when the store holds no table.
pub async fn static_vocabulary(client: &Client) -> Result<Option<StaticVocabulary>, Error> {
    let rows = client
        .query_typed(
            "SELECT checksum::text, unk_id, first_id, vocabulary FROM memloom_static_vocabulary()",
            &[],
        )
        .await
        .map_err(|e| Error::db("cannot read the static-v1 vocabulary", e))?;
    let Some(row) = rows.first() else {
        return Ok(None);
    };
    let bad = |what: &str| {
        Error::new(
            ErrorKind::Database,
            format!("memloom_static_vocabulary returned {what}"),
        )
    };
    let checksum: String = row.try_get(0).map_err(|_| bad("no checksum"))?;
    let unk_id: i32 = row.try_get(1).map_err(|_| bad("no [UNK] id"))?;
    let first_id: i32 = row.try_get(2).map_err(|_| bad("no first id"))?;
    Ok(Some(StaticVocabulary {
        checksum: checksum
            .parse()
            .map_err(|_| bad("a checksum out of range"))?,
        unk_id: u32::try_from(unk_id).map_err(|_| bad("a negative [UNK] id"))?,
        first_id: u32::try_from(first_id).map_err(|_| bad("a negative first id"))?,
        vocabulary: row.try_get(3).map_err(|_| bad("no vocabulary"))?,
    }))
}

/// One token's row: its u16 weight and 256 int8 values.
pub type StaticRow = (u16, [i8; 256]);

/// The rows of the distinct `ids` that have one (`memloom_static_rows_for`), by token id; the
/// caller sums them (`memloom_core::embed::accumulate_static_rows`). Empty when the store holds
/// no table (or none of the ids has a row).
pub async fn static_rows(client: &Client, ids: &[u32]) -> Result<Vec<(u32, StaticRow)>, Error> {
    let mut distinct: Vec<i32> = ids
        .iter()
        .filter_map(|&id| i32::try_from(id).ok())
        .collect();
    distinct.sort_unstable();
    distinct.dedup();
    let rows = client
        .query_typed(
            "SELECT token_id, weight, vals FROM memloom_static_rows_for($1)",
            &[(&distinct, Type::INT4_ARRAY)],
        )
        .await
        .map_err(|e| Error::db("cannot read the static-v1 rows", e))?;
    let bad = || {
        Error::new(
            ErrorKind::Database,
            "memloom_static_rows_for returned a malformed row; reload the table (memloom init --embedder static-v1)",
        )
    };
    rows.iter()
        .map(|r| {
            let id: i32 = r.try_get(0).map_err(|_| bad())?;
            let weight: i32 = r.try_get(1).map_err(|_| bad())?;
            let vals: &[u8] = r.try_get(2).map_err(|_| bad())?;
            let vals: [u8; 256] = vals.try_into().map_err(|_| bad())?;
            Ok((
                u32::try_from(id).map_err(|_| bad())?,
                (
                    u16::try_from(weight).map_err(|_| bad())?,
                    vals.map(|b| b as i8),
                ),
            ))
        })
        .collect()
}
