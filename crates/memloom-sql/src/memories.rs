//! Memories beyond remembering: `forget` (a key's every version, or one memory by id) and
//! `history` (a key's versions, oldest first). The same semantics as the npm store's
//! `forget` / `history` (npm/src/store.js), restricted to memories: document chunks belong to
//! ingest. Each call is one statement, so a forget is atomic without a client transaction.

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::{Error, ErrorKind};

/// What to forget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ForgetTarget<'a> {
    /// Every version of a memory key.
    Key(&'a str),
    /// One memory by row id.
    Id(i64),
}

/// What a forget did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forgotten {
    /// Rows deleted (0 when nothing matched).
    pub deleted: i64,
    /// The id named a document chunk, which forget leaves alone.
    pub not_a_memory: bool,
}

/// One version of a memory key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryVersion {
    pub id: i64,
    pub version: i32,
    /// `active` or `superseded`.
    pub status: String,
    pub content: String,
    /// RFC 3339, UTC, milliseconds (as the npm store's `createdAt`).
    pub created_at: String,
}

/// Deleting one version clears the other versions' links to it first (in the same statement:
/// the foreign keys are checked at its end), as the npm store does.
const FORGET_ID: &str = "WITH target AS (
    SELECT id, kind FROM memloom_items WHERE namespace = $1 AND id = $2),
unlinked AS (
    UPDATE memloom_items
       SET supersedes = NULLIF(supersedes, $2), superseded_by = NULLIF(superseded_by, $2)
     WHERE namespace = $1 AND (supersedes = $2 OR superseded_by = $2)
       AND EXISTS (SELECT 1 FROM target WHERE kind = 'memory')),
deleted AS (
    DELETE FROM memloom_items i USING target t
     WHERE i.id = t.id AND t.kind = 'memory' RETURNING i.id)
SELECT (SELECT count(*) FROM deleted), coalesce((SELECT kind <> 'memory' FROM target), false)";

/// The versions of a key link only to each other, so deleting them all in one statement
/// leaves no dangling reference.
const FORGET_KEY: &str = "WITH deleted AS (
    DELETE FROM memloom_items WHERE namespace = $1 AND kind = 'memory' AND key = $2 RETURNING id)
SELECT count(*), false FROM deleted";

const HISTORY: &str = "SELECT id, version, status, content,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
  FROM memloom_items
 WHERE namespace = $1 AND kind = 'memory' AND key = $2
 ORDER BY version";

/// Forgets a memory key (every version) or one memory, in `namespace` only.
pub async fn forget(
    client: &Client,
    namespace: &str,
    target: &ForgetTarget<'_>,
) -> Result<Forgotten, Error> {
    let row = match target {
        ForgetTarget::Key(key) => {
            if key.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "a memory key cannot be empty",
                ));
            }
            client
                .query_typed_one(FORGET_KEY, &[(&namespace, Type::TEXT), (key, Type::TEXT)])
                .await
        }
        ForgetTarget::Id(id) => {
            client
                .query_typed_one(FORGET_ID, &[(&namespace, Type::TEXT), (id, Type::INT8)])
                .await
        }
    }
    .map_err(|e| Error::db("forget failed", e))?;
    let bad = |e: tokio_postgres::Error| Error::db("forget returned an unexpected row", e);
    Ok(Forgotten {
        deleted: row.try_get(0).map_err(bad)?,
        not_a_memory: row.try_get(1).map_err(bad)?,
    })
}

/// Every version of a memory key in `namespace`, oldest first (empty: no such key).
pub async fn history(
    client: &Client,
    namespace: &str,
    key: &str,
) -> Result<Vec<MemoryVersion>, Error> {
    let rows = client
        .query_typed(HISTORY, &[(&namespace, Type::TEXT), (&key, Type::TEXT)])
        .await
        .map_err(|e| Error::db("history failed", e))?;
    let bad = |e: tokio_postgres::Error| Error::db("history returned an unexpected row", e);
    rows.iter()
        .map(|r| {
            Ok(MemoryVersion {
                id: r.try_get(0).map_err(bad)?,
                version: r.try_get(1).map_err(bad)?,
                status: r.try_get(2).map_err(bad)?,
                content: r.try_get(3).map_err(bad)?,
                created_at: r.try_get(4).map_err(bad)?,
            })
        })
        .collect()
}
