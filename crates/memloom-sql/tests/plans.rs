//! The arms inside memloom_fuse use their indexes: auto_explain logs the plans of the
//! functions' own statements (nested statements), sent back as NOTICEs.

use crate::util::{embed, generated_chunks, TestDb, HASH_V1_STORE};

const ITEMS: i32 = 3000;

/// A connection whose statements' plans, the functions' own included, come back as NOTICEs.
async fn explaining(db: &TestDb) -> (tokio_postgres::Client, std::sync::mpsc::Receiver<String>) {
    let (client, notices) = db.connect_with_notices().await;
    client
        .batch_execute(
            "LOAD 'auto_explain';
             SET auto_explain.log_min_duration = 0;
             SET auto_explain.log_nested_statements = on;
             SET auto_explain.log_level = notice;",
        )
        .await
        .expect("auto_explain is available (the test server is PostgreSQL with contrib)");
    (client, notices)
}

#[tokio::test]
async fn each_arm_uses_its_index() {
    let Some(db) = TestDb::new("plans").await else {
        return;
    };
    db.client
        .batch_execute(&format!(
            "{items}
             INSERT INTO memloom_entities (namespace, name, kind, embedding)
             SELECT 'ns', 'entity ' || g, 'concept', v.e
             FROM generate_series(1, 3000) g,
                  LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
                           FROM generate_series(1, 256) WHERE g > 0) v;
             INSERT INTO memloom_mentions (entity_id, item_id, strength)
             SELECT e.id, i.id, 0.5 FROM memloom_entities e
               JOIN memloom_items i ON i.namespace = e.namespace AND i.id % 500 = e.id % 500;
             SELECT memloom_refresh_stats('ns');
             ANALYZE;",
            items = generated_chunks(
                ITEMS,
                "CASE WHEN g % 10 = 0 THEN 'other' ELSE 'ns' END",
                "'section ' || g || ' about ' || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
                   || ' and setting_' || g || ' with words ' || md5(g::text)"
            )
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

    let (client, notices) = explaining(&db).await;
    client
        .batch_execute("SET enable_seqscan = off")
        .await
        .unwrap();
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

    // With as_of (and since / until) the same indexes, the time filter applied to their rows;
    // the HNSW index holds the active rows, and the versions valid then but not now come from
    // memloom_items_valid_to (none here: nothing was superseded; sql/0033).
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
        "memloom_items_valid_to",
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

/// A small pool's keyword and entity arms keep one generic plan per session (sql/0031), and the
/// vector arm's walk of the one-list IVFFlat index on any pool (sql/0042): the same
/// rows and scores as the per-call plans a large pool gets. Keyword: capped tiers (common words,
/// the first scan_cap matches), an identifier, rarer words, with and without boost ids; entity:
/// queries naming an entity (the gate passes, the mentions' statement runs) and naming none; at
/// several depths. The pool's size is the planner's count (pg_class.reltuples): faked large for
/// the first pass. No HNSW index: the entity arm takes its small-pool path only without one.
#[tokio::test]
async fn a_small_pool_plans_once_and_ranks_the_same() {
    let Some(db) = TestDb::migrated("plans_small_pool").await else {
        return;
    };
    memloom_sql::init_store(&db.client, &HASH_V1_STORE, false)
        .await
        .unwrap();
    db.client
        .batch_execute(&format!(
            "{}
                 SELECT memloom_refresh_stats('ns');",
            generated_chunks(
                3000,
                "CASE WHEN g % 4 = 0 THEN 'other' ELSE 'ns' END",
                "'the connection pool worker ' || repeat('and the worker ', g % 7)
                       || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
                       || ' setting_' || g || ' ' || repeat(md5(g::text) || ' ', 1 + g % 11)"
            )
        ))
        .await
        .expect("load 3k items");
    let ids: Vec<i64> = db
        .client
        .query(
            "SELECT id FROM memloom_items WHERE namespace = 'ns' ORDER BY id",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let entities = [
        "replication",
        "vacuum",
        "buffers",
        "connection pool",
        "worker",
    ];
    for (n, name) in entities.iter().enumerate() {
        let mentions: Vec<(i64, f32)> = ids
            .iter()
            .skip(n)
            .step_by(3 + n)
            .enumerate()
            .map(|(k, &id)| (id, 0.3 + (k % 7) as f32 / 10.0))
            .collect();
        db.entity("ns", name, &mentions).await;
    }
    db.refresh_stats("ns").await;
    let (client, notices) = explaining(&db).await;
    // The faked large pool would take some capped tiers' candidates from the 1-in-16 sample
    // (sql/0043), other rows by design; the plans, not the candidates, are compared here.
    client
        .batch_execute("SET memloom.keyword_sample = off")
        .await
        .unwrap();
    let queries = [
        "connection pool worker", // every word in every item: capped tiers
        "the worker",
        "vacuum worker pool",
        "setting_42", // an identifier
        "replication md5",
        "replication", // entities by name
        "buffers",
        "nothing like any entity",
    ];
    let run = || async {
        let mut rows = Vec::new();
        for q in queries {
            for lim in [1, 10, 50] {
                for boost in [false, true] {
                    let r = client
                        .query(
                            "SELECT id, score FROM memloom_keyword_arm($1, 'ns', $2, NULL, 100,
                                 CASE WHEN $3 THEN ARRAY(SELECT id FROM memloom_items
                                                         WHERE namespace = 'ns' ORDER BY id DESC LIMIT 10) END)",
                            &[&q, &lim, &boost],
                        )
                        .await
                        .unwrap();
                    rows.push((
                        "keyword",
                        q,
                        lim,
                        boost,
                        r.iter()
                            .map(|r| (r.get::<_, i64>(0), r.get::<_, f64>(1)))
                            .collect::<Vec<_>>(),
                    ));
                }
                // The two arms that take the query's vector: (id, score or distance) rows.
                for (arm, sql) in [
                    (
                        "entity",
                        "SELECT id, score FROM memloom_entity_arm($1::real[]::vector, 'ns', $2, 0.6, NULL)",
                    ),
                    (
                        "vector",
                        "SELECT id, distance FROM memloom_vector_arm($1::real[]::vector, 'ns', $2, NULL)",
                    ),
                ] {
                    let r = client.query(sql, &[&embed(q), &lim]).await.unwrap();
                    rows.push((
                        arm,
                        q,
                        lim,
                        false,
                        r.iter()
                            .map(|r| (r.get::<_, i64>(0), r.get::<_, f64>(1)))
                            .collect(),
                    ));
                }
            }
        }
        let notices: Vec<String> = notices.try_iter().collect();
        // The keyword arm's scoring statement (`m.tsv @@ tier`) and the entity arm's mentions
        // statement (`WITH near AS`).
        let plans = |text: &str| -> Vec<String> {
            notices
                .iter()
                .filter(|n| n.contains(text))
                .cloned()
                .collect()
        };
        // The statistics reads: the namespace's (both arms) and the query terms' (keyword).
        let mut stats = plans("memloom_namespace_stats s");
        stats.extend(plans("memloom_term_stats st"));
        // The vector arm's walk of the one-list IVFFlat index (no HNSW here: sql/0040).
        let walks = plans("Index Scan using memloom_items_exact");
        (
            rows,
            plans("m.tsv @@ tier"),
            plans("WITH near AS"),
            stats,
            walks,
        )
    };
    // Large (the planner's count says so; autovacuum off, so that it stays so): every statement
    // planned for its values.
    db.client
        .batch_execute(
            "ALTER TABLE memloom_items SET (autovacuum_enabled = false);
             ANALYZE memloom_items;
             UPDATE pg_class SET reltuples = 1e7 WHERE oid = 'memloom_items'::regclass;",
        )
        .await
        .unwrap();
    let (custom, custom_kw, custom_en, custom_stats, custom_walks) = run().await;
    // Small (its real count): one generic plan per statement for the session.
    db.client
        .batch_execute("ANALYZE memloom_items;")
        .await
        .unwrap();
    let (generic, generic_kw, generic_en, generic_stats, generic_walks) = run().await;
    let voted = |arm: &str| {
        custom
            .iter()
            .filter(|r| r.0 == arm && !r.4.is_empty())
            .count()
    };
    assert!(
        voted("keyword") >= 30 && voted("entity") >= 6 && voted("vector") == 24,
        "{custom:?}"
    );
    assert!(
        custom.iter().any(|r| r.4.len() == 50),
        "no call filled a limit of 50"
    );
    for (c, g) in custom.iter().zip(&generic) {
        assert_eq!(g, c, "the generic plans ranked differently");
    }
    // Each pass took the path it should: the query's values in the per-call plans' conditions,
    // parameters in the generic ones.
    let with_params =
        |plans: &[String], cond: &str| plans.iter().filter(|p| p.contains(cond)).count();
    for (arm, custom, generic, cond) in [
        ("keyword", &custom_kw, &generic_kw, "(tsv @@ $"),
        ("entity", &custom_en, &generic_en, "(namespace = $"),
    ] {
        let first = |plans: &[String]| {
            plans
                .first()
                .map(|p| p.chars().take(3000).collect::<String>())
        };
        assert!(
            !custom.is_empty() && with_params(custom, cond) == 0,
            "{arm}: {} of {} per-call plans have parameters; the first:\n{:?}",
            with_params(custom, cond),
            custom.len(),
            first(custom)
        );
        assert!(
            !generic.is_empty() && with_params(generic, cond) == generic.len(),
            "{arm}: {} of {} small-pool plans have parameters; the first:\n{:?}",
            with_params(generic, cond),
            generic.len(),
            first(generic)
        );
    }
    // The statistics reads keep one generic plan on any pool (sql/0032): parameters in both.
    for (pass, stats) in [("per-call", &custom_stats), ("small-pool", &generic_stats)] {
        assert!(
            stats.len() >= 100 && with_params(stats, "(namespace = $") == stats.len(),
            "{pass} pass: {} of {} statistics reads have a generic plan",
            with_params(stats, "(namespace = $"),
            stats.len()
        );
    }
    // The vector arm's index walk names no time filter to fold: one generic plan per session
    // on any pool (sql/0042), the query vector a parameter in both passes.
    for (pass, walks) in [("per-call", &custom_walks), ("small-pool", &generic_walks)] {
        assert!(
            walks.len() >= 24 && with_params(walks, "<=> $") == walks.len(),
            "{pass} pass: {} of {} index walks have a generic plan; the first:\n{:?}",
            with_params(walks, "<=> $"),
            walks.len(),
            walks
                .first()
                .map(|p| p.chars().take(3000).collect::<String>())
        );
    }
    db.drop_db().await;
}
