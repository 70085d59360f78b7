//! Memories beyond remembering: `forget` (a key's every version, or one memory by id) and
//! `history` (a key's versions with their validity intervals, oldest first: `memloom_history`). The same semantics as the npm store's
//! `forget` / `history` (npm/src/store.js), restricted to memories: document chunks belong to
//! ingest. Each call is one statement, so a forget is atomic without a client transaction;
//! forget is `memloom_forget` (sql/0011), the same function every client calls.
//! [`forget_namespace`] erases a whole namespace (`memloom_forget_namespace`, sql/0012).

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

/// What a forget did (the counts `memloom_forget` returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forgotten {
    /// Items deleted: a key's versions, or the one memory (0 when nothing matched).
    pub deleted: i64,
    /// Mentions of those items deleted with them.
    pub mentions: i64,
    /// Entities deleted because nothing mentions them any more.
    pub entities: i64,
    /// The id named a document chunk, which forget leaves alone.
    pub not_a_memory: bool,
}

/// What forgetting a whole namespace removed (the counts `memloom_forget_namespace` returns).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceForgotten {
    /// Items deleted: memories (every version) and document chunks.
    pub items: i64,
    pub mentions: i64,
    pub entities: i64,
    /// Keyword and entity statistics rows deleted (term, entity and namespace statistics).
    pub statistics: i64,
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
    /// When this version became the belief (RFC 3339, UTC, milliseconds: exactly the stored
    /// instant, so passing it as `as_of` recalls this version).
    pub valid_from: String,
    /// When it stopped (its successor's `valid_from`); `None` while active.
    pub valid_to: Option<String>,
    /// The time of the event it describes, when given.
    pub event_at: Option<String>,
}

/// One call of `memloom_forget` (sql/memloom/09_memories.sql): under the key's advisory lock, as
/// `memloom_remember`, so concurrent writers of a key queue in one order instead of
/// deadlocking; it keeps the other versions' links valid and removes the mentions and the
/// entities no longer mentioned. Memories only: document chunks belong to ingest.
const FORGET: &str = "SELECT items::bigint, mentions::bigint, entities::bigint, not_a_memory
  FROM memloom_forget($1, $2, $3, true)";

/// `memloom_history` (sql/memloom/09_memories.sql), the query every client's history makes;
/// only the timestamps' text form is chosen here.
const HISTORY: &str = "SELECT id, version, status, content,
       to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
       to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
       to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'),
       to_char(event_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')
  FROM memloom_history($1, $2)";

/// Forgets a memory key (every version) or one memory, in `namespace` only. One statement:
/// atomic on its own, or part of the caller's transaction. A deadlock or serialization
/// failure ([`crate::is_transient`]) is the caller's to retry ([`crate::retry_transient`]).
pub async fn forget(
    client: &Client,
    namespace: &str,
    target: &ForgetTarget<'_>,
) -> Result<Forgotten, Error> {
    let (key, id) = match target {
        ForgetTarget::Key(key) => {
            if key.is_empty() {
                return Err(Error::new(
                    ErrorKind::InvalidInput,
                    "a memory key cannot be empty",
                ));
            }
            (Some(*key), None)
        }
        ForgetTarget::Id(id) => (None, Some(*id)),
    };
    let row = client
        .query_typed_one(
            FORGET,
            &[
                (&namespace, Type::TEXT),
                (&key, Type::TEXT),
                (&id, Type::INT8),
            ],
        )
        .await
        .map_err(|e| Error::db("forget failed", e))?;
    let bad = |e: tokio_postgres::Error| Error::db("forget returned an unexpected row", e);
    Ok(Forgotten {
        deleted: row.try_get(0).map_err(bad)?,
        mentions: row.try_get(1).map_err(bad)?,
        entities: row.try_get(2).map_err(bad)?,
        not_a_memory: row.try_get(3).map_err(bad)?,
    })
}

const FORGET_NAMESPACE: &str =
    "SELECT items::bigint, mentions::bigint, entities::bigint, statistics::bigint
  FROM memloom_forget_namespace($1)";

/// Forgets everything `namespace` holds, in one statement (`memloom_forget_namespace`,
/// sql/0012): its items, mentions, entities and statistics, under the namespace's key lock
/// (one lock, which every writer of a key holds shared: sql/0020).
/// Only the session's bound namespace (another raises `insufficient_privilege`). The
/// namespace's grants stay. Retry a transient failure with [`crate::retry_transient`].
pub async fn forget_namespace(
    client: &Client,
    namespace: &str,
) -> Result<NamespaceForgotten, Error> {
    if namespace.is_empty() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "forget_namespace needs a namespace",
        ));
    }
    let row = client
        .query_typed_one(FORGET_NAMESPACE, &[(&namespace, Type::TEXT)])
        .await
        .map_err(|e| Error::db("forgetting the namespace failed", e))?;
    let bad =
        |e: tokio_postgres::Error| Error::db("forget_namespace returned an unexpected row", e);
    Ok(NamespaceForgotten {
        items: row.try_get(0).map_err(bad)?,
        mentions: row.try_get(1).map_err(bad)?,
        entities: row.try_get(2).map_err(bad)?,
        statistics: row.try_get(3).map_err(bad)?,
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
                valid_from: r.try_get(5).map_err(bad)?,
                valid_to: r.try_get(6).map_err(bad)?,
                event_at: r.try_get(7).map_err(bad)?,
            })
        })
        .collect()
}
