//! The arms inside memloom_fuse use their indexes: auto_explain logs the plans of the
//! functions' own statements (nested statements), sent back as NOTICEs.

use crate::util::{embed, TestDb};

const ITEMS: i32 = 3000;

#[tokio::test]
async fn each_arm_uses_its_index() {
    let Some(db) = TestDb::new("plans").await else {
        return;
    };
    db.client
        .batch_execute(&format!(
            "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
             SELECT CASE WHEN g % 10 = 0 THEN 'other' ELSE 'ns' END, 'chunk', 'doc' || g || '.md',
                    'section ' || g || ' about ' || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
                      || ' and setting_' || g || ' with words ' || md5(g::text),
                    v.e
             FROM generate_series(1, {ITEMS}) g,
                  LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
                           FROM generate_series(1, 256) WHERE g > 0) v;
             INSERT INTO memloom_entities (namespace, name, kind, embedding)
             SELECT 'ns', 'entity ' || g, 'concept', v.e
             FROM generate_series(1, 3000) g,
                  LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
                           FROM generate_series(1, 256) WHERE g > 0) v;
             INSERT INTO memloom_mentions (entity_id, item_id, strength)
             SELECT e.id, i.id, 0.5 FROM memloom_entities e
               JOIN memloom_items i ON i.namespace = e.namespace AND i.id % 500 = e.id % 500;
             SELECT memloom_refresh_stats('ns');
             ANALYZE;
             -- The planner's count of a large pool: the keyword arm plans per call there (a small
             -- pool keeps generic plans, sql/0031, tested in keyword.rs); autovacuum off so that
             -- no ANALYZE puts the real count back.
             ALTER TABLE memloom_items SET (autovacuum_enabled = false);
             UPDATE pg_class SET reltuples = 1e7 WHERE oid = 'memloom_items'::regclass;"
        ))
        .await
        .expect("load fixture");
    let query = "setting_42 replication";
    db.client
        .execute(
            "UPDATE memloom_entities SET embedding = $1::real[]::vector WHERE name = 'entity 7'",
            &[&embed(query)],
        )
        .await
        .unwrap();

    let (client, notices) = db.connect_with_notices().await;
    client
        .batch_execute(
            "LOAD 'auto_explain';
             SET auto_explain.log_min_duration = 0;
             SET auto_explain.log_nested_statements = on;
             SET auto_explain.log_level = notice;
             SET enable_seqscan = off;",
        )
        .await
        .expect("auto_explain is available (the test server is PostgreSQL with contrib)");
    // 50 per arm (lim 100 would mean 100: with 3,000 entities the planner then rightly sorts
    // them all instead of walking the HNSW graph).
    let mut params = memloom_sql::FuseParams::new(query, embed(query), "ns", 100);
    params.candidates = Some(50);
    let rows = memloom_sql::fuse(&client, &params).await.unwrap();
    client
        .batch_execute("SET auto_explain.log_min_duration = -1")
        .await
        .unwrap();
    let plans: Vec<String> = notices.try_iter().collect();
    let plans = plans.join("\n----\n");
    assert!(rows.iter().any(|r| r.vector_rank.is_some()));
    assert!(rows.iter().any(|r| r.keyword_rank == Some(1)));
    assert!(rows.iter().any(|r| r.entity_rank.is_some()), "{rows:?}");
    for index in [
        "Index Scan using memloom_items_embedding",
        "Bitmap Index Scan on memloom_items_tsv",
        "Index Scan using memloom_entities_embedding",
    ] {
        assert!(plans.contains(index), "no {index:?} in the plans:\n{plans}");
    }
    assert!(!plans.contains("Seq Scan on memloom_items"), "{plans}");
    // as_of NULL: the time filter folded away to today's predicate (docs/TIME.md).
    // (The plans' conditions, not the query texts auto_explain also logs.)
    let conditions = |plans: &str| -> String {
        plans
            .lines()
            .filter(|l| l.contains("Filter:") || l.contains("Cond:"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        conditions(&plans).contains("status = 'active'::text"),
        "{plans}"
    );
    assert!(!conditions(&plans).contains("valid_from"), "{plans}");

    // With as_of (and since / until) the same indexes, the time filter applied to their rows.
    client
        .batch_execute("SET auto_explain.log_min_duration = 0")
        .await
        .unwrap();
    params.as_of = Some("2999-01-01T00:00Z".into());
    params.since = Some("2000-01-01".into());
    let timed = memloom_sql::fuse(&client, &params).await.unwrap();
    client
        .batch_execute("SET auto_explain.log_min_duration = -1")
        .await
        .unwrap();
    let plans: Vec<String> = notices.try_iter().collect();
    let plans = plans.join("\n----\n");
    // The voted (fused) results; the unscored tail past them comes from deeper approximate HNSW
    // scans, whose neighbours may differ when the scan also filters by time (docs/TIME.md).
    let voted = |rows: &[memloom_sql::FusedRow]| {
        rows.iter()
            .filter(|r| r.rrf_score > 0.0)
            .map(|r| r.id)
            .collect::<Vec<_>>()
    };
    assert!(voted(&rows).len() >= 20, "{rows:?}");
    assert_eq!(
        voted(&timed),
        voted(&rows),
        "every item is valid in 2999 and saved after 2000"
    );
    for index in [
        "Index Scan using memloom_items_embedding",
        "Bitmap Index Scan on memloom_items_tsv",
        "Index Scan using memloom_entities_embedding",
    ] {
        assert!(
            plans.contains(index),
            "with as_of, no {index:?} in the plans:\n{plans}"
        );
    }
    assert!(conditions(&plans).contains("valid_from <="), "{plans}");
    assert!(!plans.contains("Seq Scan on memloom_items"), "{plans}");
    db.drop_db().await;
}
