//! Typed calls of `memloom_fuse` and `memloom_remember`.

use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::{Client, Row};

use crate::{Error, ErrorKind};

/// The arguments of one `memloom_fuse` call. Overrides left `None` take the SQL function's
/// defaults (k 60, weights 1.0 / 2.0 / 0.5, entity gate 0.60, 10 candidates per arm whatever the
/// limit, the keyword floor), which are defined once, in `sql/memloom/08_fusion.sql`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FuseParams {
    pub query_text: String,
    /// The query's embedding, made by the store's embedder (checked by the database).
    pub query_embedding: Vec<f32>,
    pub namespace: String,
    pub limit: i32,
    pub k: Option<f64>,
    pub w_vector: Option<f64>,
    pub w_keyword: Option<f64>,
    pub w_entity: Option<f64>,
    pub entity_gate: Option<f64>,
    /// Candidates each arm contributes before fusion (`None`:
    /// `memloom_core::fuse::DEFAULT_CANDIDATES`, whatever the limit).
    pub candidates: Option<i32>,
    /// Only these kinds (`memory`, `chunk`); `None` for all.
    pub kinds: Option<Vec<String>>,
    /// Rows the keyword arm scores at most when only common words match.
    pub keyword_scan_cap: Option<i32>,
    /// Only these arms run (`vector`, `keyword`, `entity`); `None` for all. An arm left out
    /// casts no votes and gives the keyword arm no boost ids.
    pub arms: Option<Vec<String>>,
    /// The keyword arm votes only for items scoring at least this fraction of its best
    /// (`None`: `memloom_core::fuse::DEFAULT_KEYWORD_FLOOR`).
    pub keyword_floor: Option<f64>,
    /// Recall as of this instant (RFC 3339, parsed by PostgreSQL as `timestamptz`): the memory
    /// versions valid then and the chunks ingested at or before it. `None`: now, the active
    /// items (docs/TIME.md).
    pub as_of: Option<String>,
    /// Only items whose event time (`event_at`, else `valid_from`) is at or after this instant.
    pub since: Option<String>,
    /// Only items whose event time is at or before this instant.
    pub until: Option<String>,
}

impl FuseParams {
    /// A call with every override at its default.
    pub fn new(
        query_text: impl Into<String>,
        query_embedding: Vec<f32>,
        namespace: impl Into<String>,
        limit: i32,
    ) -> FuseParams {
        FuseParams {
            query_text: query_text.into(),
            query_embedding,
            namespace: namespace.into(),
            limit,
            ..FuseParams::default()
        }
    }
}

/// One recalled item, best first, with why it scored: each arm's rank (None: no vote).
#[derive(Debug, Clone, PartialEq)]
pub struct FusedRow {
    pub id: i64,
    pub kind: String,
    pub source: Option<String>,
    pub breadcrumb: Option<String>,
    pub key: Option<String>,
    pub content: String,
    pub rrf_score: f64,
    /// Raw cosine similarity of the item's embedding to the query.
    pub similarity: f64,
    pub vector_rank: Option<i32>,
    pub keyword_rank: Option<i32>,
    pub entity_rank: Option<i32>,
}

/// Recall: one `memloom_fuse` statement, one round trip.
pub async fn fuse(client: &Client, p: &FuseParams) -> Result<Vec<FusedRow>, Error> {
    let mut args: Vec<String> = vec![
        "query_text => $1".into(),
        "query_embedding => $2::real[]::vector".into(),
        "ns => $3".into(),
        "lim => $4".into(),
    ];
    let mut params: Vec<(&(dyn ToSql + Sync), Type)> = vec![
        (&p.query_text, Type::TEXT),
        (&p.query_embedding, Type::FLOAT4_ARRAY),
        (&p.namespace, Type::TEXT),
        (&p.limit, Type::INT4),
    ];
    let floats = [
        ("k", &p.k),
        ("w_vector", &p.w_vector),
        ("w_keyword", &p.w_keyword),
        ("w_entity", &p.w_entity),
        ("entity_gate", &p.entity_gate),
        ("keyword_floor", &p.keyword_floor),
    ];
    for (name, value) in floats {
        if let Some(v) = value {
            params.push((v, Type::FLOAT8));
            args.push(format!("{name} => ${}", params.len()));
        }
    }
    let ints = [
        ("candidates", &p.candidates),
        ("keyword_scan_cap", &p.keyword_scan_cap),
    ];
    for (name, value) in ints {
        if let Some(v) = value {
            params.push((v, Type::INT4));
            args.push(format!("{name} => ${}", params.len()));
        }
    }
    for (name, value) in [("kinds", &p.kinds), ("arms", &p.arms)] {
        if let Some(v) = value {
            params.push((v, Type::TEXT_ARRAY));
            args.push(format!("{name} => ${}", params.len()));
        }
    }
    for (name, value) in [
        ("as_of", &p.as_of),
        ("since", &p.since),
        ("until", &p.until),
    ] {
        if let Some(v) = value {
            params.push((v, Type::TEXT));
            args.push(format!("{name} => ${}::timestamptz", params.len()));
        }
    }
    let sql = format!(
        "SELECT id, kind, source, breadcrumb, key, content, rrf_score, similarity, \
         vector_rank, keyword_rank, entity_rank FROM memloom_fuse({})",
        args.join(", ")
    );
    let rows = client
        .query_typed(&sql, &params)
        .await
        .map_err(|e| Error::db("recall failed", e))?;
    rows.iter().map(fused_row).collect()
}

fn fused_row(row: &Row) -> Result<FusedRow, Error> {
    let bad = |e: tokio_postgres::Error| Error::db("memloom_fuse returned an unexpected row", e);
    Ok(FusedRow {
        id: row.try_get(0).map_err(bad)?,
        kind: row.try_get(1).map_err(bad)?,
        source: row.try_get(2).map_err(bad)?,
        breadcrumb: row.try_get(3).map_err(bad)?,
        key: row.try_get(4).map_err(bad)?,
        content: row.try_get(5).map_err(bad)?,
        rrf_score: row.try_get(6).map_err(bad)?,
        similarity: row.try_get(7).map_err(bad)?,
        vector_rank: row.try_get(8).map_err(bad)?,
        keyword_rank: row.try_get(9).map_err(bad)?,
        entity_rank: row.try_get(10).map_err(bad)?,
    })
}

/// The stored memory: its row id and version (1 for a new key or no key).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Remembered {
    pub id: i64,
    pub version: i32,
}

/// Stores a memory. With a key, the key's active version is superseded in the same
/// transaction. `metadata` is a JSON object as text (`None`: `{}`).
pub async fn remember(
    client: &Client,
    namespace: &str,
    key: Option<&str>,
    content: &str,
    embedding: &[f32],
    metadata: Option<&str>,
) -> Result<Remembered, Error> {
    remember_at(client, namespace, key, content, embedding, metadata, None).await
}

/// [`remember`] with the time of the event the memory describes (`event_at`, RFC 3339 or any
/// `timestamptz` text; `None`: not given), distinct from when it is saved.
pub async fn remember_at(
    client: &Client,
    namespace: &str,
    key: Option<&str>,
    content: &str,
    embedding: &[f32],
    metadata: Option<&str>,
    event_at: Option<&str>,
) -> Result<Remembered, Error> {
    if key.is_some_and(str::is_empty) {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            "a memory key cannot be empty; pass no key instead",
        ));
    }
    let metadata = metadata.unwrap_or("{}");
    let row = client
        .query_typed_one(
            "SELECT id, version FROM memloom_remember($1, $2, $3, $4::real[]::vector, $5::jsonb, $6::timestamptz)",
            &[
                (&namespace, Type::TEXT),
                (&key, Type::TEXT),
                (&content, Type::TEXT),
                (&embedding, Type::FLOAT4_ARRAY),
                (&metadata, Type::TEXT),
                (&event_at, Type::TEXT),
            ],
        )
        .await
        .map_err(|e| Error::db("remember failed", e))?;
    let bad =
        |e: tokio_postgres::Error| Error::db("memloom_remember returned an unexpected row", e);
    Ok(Remembered {
        id: row.try_get(0).map_err(bad)?,
        version: row.try_get(1).map_err(bad)?,
    })
}
