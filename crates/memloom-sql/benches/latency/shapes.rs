//! The query shapes timed against memloom_fuse, each checking its answer inside the loop.

use std::collections::HashMap;
use std::time::Instant;

use memloom_core::ArmRankings;
use memloom_sql::FuseParams;
use tokio_postgres::types::{ToSql, Type};
use tokio_postgres::Client;

use crate::queries::{QType, Query};
use crate::report::{pct, Timing};
use crate::{candidates, BoxError, LIMIT, NS, SCAN_CAP, WARMUP_PASS};

/// The widely copied hybrid_search: both arms ranked by row_number() over every filtered row,
/// so neither the HNSW index nor a LIMIT can cut the vector arm short.
pub(crate) const COPIED_HYBRID: &str = "
WITH full_text AS (
    SELECT id, row_number() OVER (ORDER BY ts_rank_cd(tsv, websearch_to_tsquery('english', $1)) DESC) AS rank_ix
    FROM memloom_items
    WHERE namespace = $3 AND status = 'active' AND tsv @@ websearch_to_tsquery('english', $1)
    ORDER BY rank_ix
    LIMIT $5
), semantic AS (
    SELECT id, row_number() OVER (ORDER BY embedding <=> $2::real[]::vector) AS rank_ix
    FROM memloom_items
    WHERE namespace = $3 AND status = 'active'
    ORDER BY rank_ix
    LIMIT $5
)
SELECT m.id, m.content
FROM full_text FULL OUTER JOIN semantic ON full_text.id = semantic.id
JOIN memloom_items m ON coalesce(full_text.id, semantic.id) = m.id
ORDER BY coalesce(1.0 / (60 + semantic.rank_ix), 0.0) * 1.0
       + coalesce(1.0 / (60 + full_text.rank_ix), 0.0) * 2.0 DESC, m.id
LIMIT $4";

/// The fix of the same shape: each arm `ORDER BY <indexable> LIMIT n` in a subquery, ranks
/// numbered over those n rows only, fused in SQL (hnsw.ef_search set on the session).
pub(crate) const FIXED_HYBRID: &str = "
WITH semantic AS (
    SELECT id, row_number() OVER (ORDER BY d, id) AS rank_ix FROM (
        SELECT id, embedding <=> $2::real[]::vector AS d
        FROM memloom_items
        WHERE namespace = $3 AND status = 'active'
        ORDER BY embedding <=> $2::real[]::vector
        LIMIT $5) v
), full_text AS (
    SELECT id, row_number() OVER (ORDER BY r DESC, id) AS rank_ix FROM (
        SELECT id, ts_rank_cd(tsv, q) AS r
        FROM memloom_items, websearch_to_tsquery('english', $1) AS q
        WHERE namespace = $3 AND status = 'active' AND tsv @@ q
        ORDER BY r DESC
        LIMIT $5) k
)
SELECT m.id, m.content
FROM full_text FULL OUTER JOIN semantic ON full_text.id = semantic.id
JOIN memloom_items m ON coalesce(full_text.id, semantic.id) = m.id
ORDER BY coalesce(1.0 / (60 + semantic.rank_ix), 0.0) * 1.0
       + coalesce(1.0 / (60 + full_text.rank_ix), 0.0) * 2.0 DESC, m.id
LIMIT $4";

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Fuse,
    VectorArm,
    KeywordArm,
    KeywordViaFuse,
    Copied,
    Fixed,
    ClientFused,
    EntityArm,
    VectorViaFuse,
}

impl Shape {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Shape::Fuse => "memloom_fuse (one call)",
            Shape::VectorArm => "vector arm alone",
            Shape::KeywordArm => "keyword arm alone",
            Shape::KeywordViaFuse => "keyword arm via memloom_fuse(arms => keyword)",
            Shape::Copied => "copied hybrid_search (row_number)",
            Shape::Fixed => "fixed hybrid (ORDER BY .. LIMIT per arm)",
            Shape::ClientFused => "3 round trips + memloom_core::fuse",
            Shape::EntityArm => "entity arm alone",
            Shape::VectorViaFuse => "vector arm via memloom_fuse(arms => vector)",
        }
    }

    /// The name MEMLOOM_BENCH_SHAPES takes.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Shape::Fuse => "fuse",
            Shape::VectorArm => "vector",
            Shape::KeywordArm => "keyword",
            Shape::KeywordViaFuse => "keyword-fuse",
            Shape::Copied => "copied",
            Shape::Fixed => "fixed",
            Shape::ClientFused => "client",
            Shape::EntityArm => "entity",
            Shape::VectorViaFuse => "vector-fuse",
        }
    }
}

/// MEMLOOM_BENCH_SHAPES (comma-separated keys, default all; `none` only loads).
pub(crate) fn shape_selected(shape: Shape) -> bool {
    match std::env::var("MEMLOOM_BENCH_SHAPES") {
        Ok(v) if !v.is_empty() => v.split([',', ' ']).any(|k| k == shape.key()),
        _ => true,
    }
}

pub(crate) fn contains_ci(content: &str, needle: &str) -> bool {
    content.to_lowercase().contains(&needle.to_lowercase())
}

pub(crate) async fn ids(
    client: &Client,
    sql: &str,
    params: &[(&(dyn ToSql + Sync), Type)],
) -> Result<Vec<i64>, BoxError> {
    Ok(client
        .query_typed(sql, params)
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect())
}

/// Runs one query in one shape and checks the answer; returns the top ids for parity checks.
pub(crate) async fn run_one(
    client: &Client,
    shape: Shape,
    q: &Query,
    stats: &mut Checks,
) -> Result<Vec<i64>, BoxError> {
    let ns = NS.to_string();
    let emb = &q.embedding;
    let (cand, lim, cap) = (candidates(), LIMIT, SCAN_CAP);
    match shape {
        Shape::Fuse => {
            let rows = memloom_sql::fuse(
                client,
                &FuseParams::new(q.text.clone(), emb.clone(), NS, LIMIT),
            )
            .await?;
            assert!(
                rows.len() <= LIMIT as usize,
                "memloom_fuse returned {} rows for limit {LIMIT}",
                rows.len()
            );
            assert!(
                !rows.is_empty(),
                "memloom_fuse returned nothing for {:?}",
                q.text
            );
            assert!(
                rows.windows(2).all(|w| w[0].rrf_score >= w[1].rrf_score),
                "memloom_fuse out of order"
            );
            if let Some(id) = &q.must_contain {
                assert!(
                    contains_ci(&rows[0].content, id),
                    "memloom_fuse's top result for {id:?} does not contain it"
                );
            }
            stats.keyword_votes += rows.iter().any(|r| r.keyword_rank.is_some()) as usize;
            stats.entity_votes += rows.iter().any(|r| r.entity_rank.is_some()) as usize;
            Ok(rows.iter().map(|r| r.id).collect())
        }
        Shape::VectorArm => {
            let rows = client
                .query_typed(
                    "SELECT id, distance FROM memloom_vector_arm($1::real[]::vector, $2, $3, NULL)",
                    &[
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                    ],
                )
                .await?;
            assert_eq!(
                rows.len(),
                candidates() as usize,
                "the vector arm returned too few rows"
            );
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::EntityArm => {
            let gate = 0.60_f64;
            ids(
                client,
                "SELECT id FROM memloom_entity_arm($1::real[]::vector, $2, $3, $4, NULL)",
                &[
                    (emb, Type::FLOAT4_ARRAY),
                    (&ns, Type::TEXT),
                    (&cand, Type::INT4),
                    (&gate, Type::FLOAT8),
                ],
            )
            .await
        }
        Shape::VectorViaFuse => {
            // memloom_fuse's own cost (the namespace check, memloom_rrf, the join that fetches
            // content) over one arm: against `vector arm alone`, what fusing adds.
            let mut params = FuseParams::new(q.text.clone(), emb.clone(), NS, LIMIT);
            params.arms = Some(vec!["vector".into()]);
            let rows = memloom_sql::fuse(client, &params).await?;
            assert!(
                !rows.is_empty()
                    && rows
                        .iter()
                        .all(|r| r.vector_rank.is_some() || r.rrf_score == 0.0),
                "memloom_fuse(arms => vector) returned rows the vector arm did not vote for"
            );
            Ok(rows.iter().map(|r| r.id).collect())
        }
        Shape::KeywordViaFuse => {
            let mut params = FuseParams::new(q.text.clone(), emb.clone(), NS, LIMIT);
            params.arms = Some(vec!["keyword".into()]);
            let rows = memloom_sql::fuse(client, &params).await?;
            if let Some(id) = &q.must_contain {
                let top = rows.first().map(|r| r.content.as_str()).unwrap_or("");
                assert!(
                    contains_ci(top, id),
                    "the keyword arm's top result (via memloom_fuse) for {id:?} does not contain it"
                );
            }
            Ok(rows.iter().map(|r| r.id).collect())
        }
        Shape::KeywordArm => {
            let rows = client
                .query_typed(
                    "SELECT k.id, m.content FROM memloom_keyword_arm($1, $2, $3, NULL, $4) k
                     JOIN memloom_items m ON m.id = k.id LIMIT 1",
                    &[
                        (&q.text, Type::TEXT),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                        (&cap, Type::INT4),
                    ],
                )
                .await?;
            if let Some(id) = &q.must_contain {
                let top: &str = rows.first().map(|r| r.get(1)).unwrap_or("");
                assert!(
                    contains_ci(top, id),
                    "the keyword arm's top result for {id:?} does not contain it"
                );
            }
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::Copied | Shape::Fixed => {
            let sql = if shape == Shape::Copied {
                COPIED_HYBRID
            } else {
                FIXED_HYBRID
            };
            let rows = client
                .query_typed(
                    sql,
                    &[
                        (&q.text, Type::TEXT),
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&(lim as i64), Type::INT8),
                        (&(cand as i64), Type::INT8),
                    ],
                )
                .await?;
            assert!(
                !rows.is_empty() && rows.len() <= LIMIT as usize,
                "hybrid returned {} rows",
                rows.len()
            );
            Ok(rows.iter().map(|r| r.get(0)).collect())
        }
        Shape::ClientFused => {
            // The same votes as memloom_fuse (sql/0010, 0038): every vector candidate is a boost
            // id, but only those with cosine > 0 vote; keyword items vote from
            // DEFAULT_KEYWORD_FLOOR of the best score up, unless the vector arm finds them unrelated.
            let rows = client
                .query_typed(
                    "SELECT id, distance FROM memloom_vector_arm($1::real[]::vector, $2, $3, NULL)",
                    &[
                        (emb, Type::FLOAT4_ARRAY),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                    ],
                )
                .await?;
            let seen: Vec<i64> = rows.iter().map(|r| r.get(0)).collect();
            // The vector arm's last candidate's distance, when it gave all of them (sql/0038).
            let last = (rows.len() >= cand as usize && cand > 0)
                .then(|| rows[cand as usize - 1].get::<_, f64>(1));
            let vector: Vec<i64> = rows
                .iter()
                .filter(|r| r.get::<_, f64>(1) < 1.0)
                .map(|r| r.get(0))
                .collect();
            let rows = client
                .query_typed(
                    "SELECT id, score FROM memloom_keyword_arm($1, $2, $3, NULL, $4, $5)",
                    &[
                        (&q.text, Type::TEXT),
                        (&ns, Type::TEXT),
                        (&cand, Type::INT4),
                        (&cap, Type::INT4),
                        (&seen, Type::INT8_ARRAY),
                    ],
                )
                .await?;
            let best = rows.first().map_or(0.0, |r| r.get::<_, f64>(1));
            let floor = memloom_core::fuse::DEFAULT_KEYWORD_FLOOR * best;
            let mut keyword: Vec<i64> = rows
                .iter()
                .filter(|r| r.get::<_, f64>(1) >= floor)
                .map(|r| r.get(0))
                .collect();
            // No keyword vote for an item the vector arm finds unrelated (sql/0038): cosine more
            // than KEYWORD_VECTOR_MARGIN below its last candidate's; turns with a context and
            // queries naming an identifier exempt.
            if let Some(last) = last {
                let sims = client
                    .query_typed(
                        "SELECT id, 1 - (embedding <=> $1::real[]::vector), context IS NOT NULL \
                         FROM memloom_items WHERE id = ANY ($2)",
                        &[(emb, Type::FLOAT4_ARRAY), (&keyword, Type::INT8_ARRAY)],
                    )
                    .await?;
                let bar = 1.0 - last - memloom_core::fuse::KEYWORD_VECTOR_MARGIN;
                let held: Vec<i64> = sims
                    .iter()
                    .filter(|r| !r.get::<_, bool>(2) && r.get::<_, f64>(1) < bar)
                    .map(|r| r.get(0))
                    .collect();
                let names_identifier = !held.is_empty()
                    && client
                        .query_one(
                            "SELECT EXISTS (SELECT 1 FROM memloom_query_terms($1) AS t WHERE t.exact)",
                            &[&q.text],
                        )
                        .await?
                        .get::<_, bool>(0);
                if !names_identifier {
                    keyword.retain(|id| !held.contains(id));
                }
            }
            let gate = 0.60_f64;
            let entity = ids(
                client,
                "SELECT id FROM memloom_entity_arm($1::real[]::vector, $2, $3, $4, NULL)",
                &[
                    (emb, Type::FLOAT4_ARRAY),
                    (&ns, Type::TEXT),
                    (&cand, Type::INT4),
                    (&gate, Type::FLOAT8),
                ],
            )
            .await?;
            let fused = memloom_core::fuse(
                &ArmRankings {
                    vector,
                    keyword,
                    entity,
                },
                &memloom_core::FuseParams::default(),
            )?;
            assert!(!fused.is_empty(), "client fusion returned nothing");
            Ok(fused.iter().take(LIMIT as usize).map(|f| f.id).collect())
        }
    }
}

#[derive(Default)]
pub(crate) struct Checks {
    pub(crate) keyword_votes: usize,
    pub(crate) entity_votes: usize,
}

pub(crate) async fn time_shape(
    client: &Client,
    shape: Shape,
    queries: &[&Query],
    warmup: &[&Query],
    top_ids: &mut HashMap<(u8, usize), Vec<i64>>,
) -> Result<Timing, BoxError> {
    let mut checks = Checks::default();
    for (i, q) in warmup.iter().enumerate() {
        let got = run_one(client, shape, q, &mut checks).await?;
        if shape == Shape::Fuse {
            top_ids.insert((WARMUP_PASS, i), got);
        }
    }
    let mut checks = Checks::default();
    let mut samples: Vec<(QType, f64)> = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let t = Instant::now();
        let got = run_one(client, shape, q, &mut checks).await?;
        samples.push((q.qtype, t.elapsed().as_secs_f64() * 1e3));
        if matches!(shape, Shape::Fuse | Shape::ClientFused) {
            top_ids.insert((shape as u8, i), got);
        }
    }
    if shape == Shape::Fuse {
        eprintln!(
            "bench: memloom_fuse: keyword arm voted on {} of {} queries, entity arm on {}",
            checks.keyword_votes,
            queries.len(),
            checks.entity_votes
        );
    }
    let mut all: Vec<f64> = samples.iter().map(|s| s.1).collect();
    all.sort_by(f64::total_cmp);
    let by_type = [QType::Identifier, QType::Common, QType::Paraphrase]
        .into_iter()
        .map(|t| {
            let mut v: Vec<f64> = samples
                .iter()
                .filter(|s| s.0 == t || (t == QType::Paraphrase && s.0 == QType::Eval))
                .map(|s| s.1)
                .collect();
            v.sort_by(f64::total_cmp);
            (t, pct(&v, 50.0), pct(&v, 95.0))
        })
        .collect();
    Ok(Timing {
        shape,
        n: all.len(),
        p50: pct(&all, 50.0),
        p95: pct(&all, 95.0),
        p99: pct(&all, 99.0),
        by_type,
    })
}
