//! Namespaces bound to roles (sql/memloom/10_security.sql): a tenant role's raw SQL connection
//! cannot reach another namespace whatever it sets, resets or calls; memloom_fuse runs as the
//! owner with the owner's index plans; recall is the same on every call and for every role.

use memloom_sql::{begin_scoped, set_namespace};
use tokio_postgres::Client;

use crate::util::{embed, generated_chunks, TestDb};

/// A unique token only namespace b holds.
const SECRET: &str = "quokka7741";

/// Rows of namespace b that `sql` got, or 0 when it failed. Only the last statement's rows
/// count (earlier ones are the attempt's setup): a count, or a text holding b's secret.
async fn leaked(client: &Client, sql: &str) -> i64 {
    use tokio_postgres::SimpleQueryMessage as M;
    let Ok(messages) = client.simple_query(sql).await else {
        return 0;
    };
    let (mut last, mut current) = (Vec::new(), Vec::new());
    for m in &messages {
        match m {
            M::Row(r) => current.push(r.get(0).unwrap_or("").to_string()),
            M::CommandComplete(_) if !current.is_empty() => last = std::mem::take(&mut current),
            _ => {}
        }
    }
    last.iter()
        .map(|v| v.parse::<i64>().unwrap_or(v.contains(SECRET) as i64))
        .sum()
}

/// A raw SQL client as tenant a tries every way into b; each attempt counts b's rows it got.
#[tokio::test]
async fn a_tenant_role_cannot_reach_another_namespace_by_raw_sql() {
    let Some(db) = TestDb::new("tenant_raw").await else {
        return;
    };
    let (ta, tb) = ("memloom_sql_tenant_a", "memloom_sql_tenant_b");
    db.create_bound_role(ta, &["a"]).await;
    db.create_bound_role(tb, &["b"]).await;
    let mut b_ids = Vec::new();
    for i in 0..4 {
        db.chunk(
            "a",
            "a.md",
            &format!("team a note {i} about max_connections"),
        )
        .await;
        b_ids.push(
            db.chunk(
                "b",
                "b.md",
                &format!("team b {SECRET} note {i} about max_connections"),
            )
            .await,
        );
    }
    db.entity("b", SECRET, &[(b_ids[0], 1.0)]).await;
    db.refresh_stats("a").await;
    db.refresh_stats("b").await;
    let b_before: String = db
        .client
        .query_one(
            "SELECT string_agg(id || content, '|' ORDER BY id) FROM memloom_items WHERE namespace = 'b'",
            &[],
        )
        .await
        .unwrap()
        .get(0);

    let app = db.connect_as(ta).await;
    set_namespace(&app, "a").await.unwrap();
    // The control: a's own rows are there, so a 0 below means isolation, not a broken query.
    assert_eq!(leaked(&app, "SELECT count(*) FROM memloom_items").await, 4);
    let q = format!("'{SECRET}'");
    let vec = "(SELECT embedding FROM memloom_items LIMIT 1)";
    let b_id = b_ids[0];
    let items =
        "SELECT count(*) FROM memloom_items WHERE namespace <> 'a' OR content LIKE '%quokka%'";
    let attempts: Vec<(&str, String)> = vec![
        ("SET", format!("SET memloom.namespace = 'b'; {items}")),
        ("set_config", format!("SELECT set_config('memloom.namespace', 'b', false); {items}")),
        ("set_config local", format!("BEGIN; SELECT set_config('memloom.namespace', 'b', true); {items}; COMMIT")),
        ("SET LOCAL", format!("BEGIN; SET LOCAL memloom.namespace = 'b'; {items}; COMMIT")),
        ("RESET", format!("RESET memloom.namespace; {items}")),
        ("empty setting", format!("SET memloom.namespace = ''; {items}")),
        ("wildcard setting", format!("SET memloom.namespace = '*'; {items}")),
        ("SET ROLE of b's tenant", format!("SET ROLE {tb}; SET memloom.namespace = 'b'; {items}")),
        ("SET SESSION AUTHORIZATION", format!("SET SESSION AUTHORIZATION {tb}; SET memloom.namespace = 'b'; {items}")),
        (
            "function SET clause",
            format!(
                "CREATE FUNCTION pg_temp.peek_set() RETURNS bigint LANGUAGE sql SET memloom.namespace = 'b' \
                 AS $$ {items} $$; SELECT pg_temp.peek_set()"
            ),
        ),
        (
            "SET LOCAL inside a function",
            format!(
                "CREATE FUNCTION pg_temp.peek_local() RETURNS bigint LANGUAGE plpgsql AS $$ \
                 DECLARE n bigint; BEGIN SET LOCAL memloom.namespace = 'b'; {items} INTO n; RETURN n; END $$; \
                 SELECT pg_temp.peek_local()"
            ),
        ),
        (
            "DO block with set_config",
            format!(
                "CREATE TEMP TABLE IF NOT EXISTS loot (n bigint); DO $$ BEGIN \
                 PERFORM set_config('memloom.namespace', 'b', true); INSERT INTO loot {items}; END $$; \
                 SELECT coalesce(sum(n), 0) FROM loot"
            ),
        ),
        ("entities", "SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_entities".into()),
        ("mentions", "SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_mentions".into()),
        ("term stats", "SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_term_stats WHERE namespace = 'b'".into()),
        ("namespace stats", "SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_namespace_stats WHERE namespace = 'b'".into()),
        ("entity stats", "SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_entity_stats WHERE namespace = 'b'".into()),
        ("planner statistics", "SELECT count(*) FROM pg_stats WHERE tablename = 'memloom_items'".into()),
        ("memloom_fuse naming b", format!("SET memloom.namespace = 'a'; SELECT count(*) FROM memloom_fuse({q}, {vec}, 'b', 50)")),
        ("memloom_fuse in b's setting", format!("SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_fuse({q}, {vec}, 'b', 50)")),
        ("memloom_fuse with no setting", format!("RESET memloom.namespace; SELECT count(*) FROM memloom_fuse({q}, {vec}, 'b', 50)")),
        ("keyword arm naming b", format!("SET memloom.namespace = 'a'; SELECT count(*) FROM memloom_keyword_arm({q}, 'b', 50, NULL, 1000)")),
        ("keyword arm in b's setting", format!("SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_keyword_arm({q}, 'b', 50, NULL, 1000)")),
        ("vector arm naming b", format!("SET memloom.namespace = 'a'; SELECT count(*) FROM memloom_vector_arm({vec}, 'b', 50, NULL)")),
        (
            "entity arm naming b",
            format!(
                "SET memloom.namespace = 'a'; SELECT count(*) FROM memloom_entity_arm('{}'::real[]::vector, 'b', 50, 0.1, NULL)",
                format!("{:?}", embed(SECRET)).replace('[', "{").replace(']', "}")
            ),
        ),
        ("UPDATE b", "SET memloom.namespace = 'b'; WITH u AS (UPDATE memloom_items SET content = 'pwned' RETURNING 1) SELECT count(*) FROM u".into()),
        ("DELETE b's id", format!("SET memloom.namespace = 'a'; WITH d AS (DELETE FROM memloom_items WHERE id = {b_id} RETURNING 1) SELECT count(*) FROM d")),
        (
            "INSERT into b",
            format!("SET memloom.namespace = 'b'; WITH i AS (INSERT INTO memloom_items (namespace, kind, content, embedding) SELECT 'b', 'memory', 'planted', {vec} RETURNING 1) SELECT count(*) FROM i"),
        ),
        ("memloom_remember into b", format!("SET memloom.namespace = 'b'; SELECT count(*) FROM memloom_remember('b', 'k', 'planted', {vec})")),
        ("refresh b's statistics", "SET memloom.namespace = 'b'; SELECT memloom_refresh_stats('b'); SELECT count(*) FROM memloom_term_stats".into()),
        ("grant oneself b", format!("INSERT INTO memloom_namespace_grants (role_name, namespace) VALUES ('{ta}', 'b'); SET memloom.namespace = 'b'; {items}")),
        ("grant oneself every namespace", format!("SELECT memloom_grant_namespace('{ta}', '*'); SET memloom.namespace = 'b'; {items}")),
        ("move one's grant to b", format!("UPDATE memloom_namespace_grants SET namespace = 'b'; SET memloom.namespace = 'b'; {items}")),
        ("read the grants", "SELECT count(*) FROM memloom_namespace_grants".into()),
        // The grant attempts above failed or changed nothing: b is still out of reach.
        ("SET after the grant attempts", format!("SET memloom.namespace = 'b'; {items}")),
    ];
    let mut total = 0;
    for (what, sql) in &attempts {
        let n = leaked(&app, sql).await;
        // Back to a clean session state for the next attempt (a failed BEGIN block, SET ROLE).
        let _ = app.batch_execute("ROLLBACK").await;
        let _ = app.batch_execute("RESET ROLE").await;
        assert_eq!(n, 0, "{what} leaked {n} rows of namespace b");
        total += n;
    }
    // Still a's own rows after all that: the attempts did not just break the session.
    set_namespace(&app, "a").await.unwrap();
    assert_eq!(leaked(&app, "SELECT count(*) FROM memloom_items").await, 4);
    let b_after: String = db
        .client
        .query_one(
            "SELECT string_agg(id || content, '|' ORDER BY id) FROM memloom_items WHERE namespace = 'b'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(b_before, b_after, "b's rows changed");
    let grants: i64 = db
        .client
        .query_one(
            "SELECT count(*) FROM memloom_namespace_grants WHERE role_name = $1",
            &[&ta],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(grants, 1, "a's grants changed");
    eprintln!(
        "tenant isolation: {} raw SQL attempts into another namespace, {total} rows leaked",
        attempts.len()
    );
    db.drop_db().await;
}

/// The errors a tenant meets say what to do; a revoked grant ends access at the next statement.
#[tokio::test]
async fn ungranted_namespaces_fail_with_a_clear_error() {
    let Some(db) = TestDb::new("tenant_errors").await else {
        return;
    };
    let ta = "memloom_sql_tenant_err";
    db.create_bound_role(ta, &["a"]).await;
    db.chunk("a", "a.md", "team a note about replication").await;
    let app = db.connect_as(ta).await;
    let q = "replication";
    let err = |e: memloom_sql::Error| (e.sqlstate().map(str::to_string), e.to_string());

    let e = memloom_sql::fuse(&app, &memloom_sql::FuseParams::new(q, embed(q), "a", 5))
        .await
        .map(|_| ())
        .unwrap_err();
    let (state, text) = err(e);
    assert_eq!(state.as_deref(), Some("42501"), "{text}");
    assert!(text.contains("set_config('memloom.namespace'"), "{text}");

    set_namespace(&app, "b").await.unwrap();
    let e = memloom_sql::fuse(&app, &memloom_sql::FuseParams::new(q, embed(q), "b", 5))
        .await
        .map(|_| ())
        .unwrap_err();
    let (_, text) = err(e);
    assert!(
        text.contains(&format!("role {ta} is not granted namespace 'b'"))
            && text.contains("memloom_grant_namespace"),
        "{text}"
    );

    set_namespace(&app, "a").await.unwrap();
    let rows = memloom_sql::fuse(&app, &memloom_sql::FuseParams::new(q, embed(q), "a", 5))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let revoked: bool = db
        .client
        .query_one("SELECT memloom_revoke_namespace($1, 'a')", &[&ta])
        .await
        .unwrap()
        .get(0);
    assert!(revoked);
    let n: i64 = app
        .query_one("SELECT count(*) FROM memloom_items", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 0, "a revoked grant still reads");
    let e = db
        .client
        .execute(
            "SELECT memloom_grant_namespace('memloom_no_such_role', 'a')",
            &[],
        )
        .await
        .unwrap_err();
    assert!(format!("{e:?}").contains("does not exist"), "{e:?}");
    db.drop_db().await;
}

/// The gateway pattern (the edge worker): one role granted every namespace, each request a
/// transaction scoped with set_config(..., true), as behind a transaction-mode pooler.
#[tokio::test]
async fn a_gateway_role_scopes_each_transaction() {
    let Some(db) = TestDb::new("tenant_gateway").await else {
        return;
    };
    let gw = "memloom_sql_tenant_gateway";
    db.create_bound_role(gw, &["*"]).await;
    db.chunk("a", "a.md", "team a note about replication").await;
    db.chunk("b", "b.md", "team b note about replication").await;
    let app = db.connect_as(gw).await;
    let q = "replication";
    for ns in ["a", "b"] {
        begin_scoped(&app, ns).await.unwrap();
        let rows = memloom_sql::fuse(&app, &memloom_sql::FuseParams::new(q, embed(q), ns, 5))
            .await
            .unwrap();
        assert_eq!(rows.len(), 1);
        assert!(rows[0].content.starts_with(&format!("team {ns}")));
        let other = if ns == "a" { "b" } else { "a" };
        let e = memloom_sql::fuse(&app, &memloom_sql::FuseParams::new(q, embed(q), other, 5))
            .await
            .map(|_| ())
            .unwrap_err();
        assert!(e.to_string().contains("is not this session's"), "{e}");
        app.batch_execute("ROLLBACK").await.unwrap();
        let n: i64 = app
            .query_one("SELECT count(*) FROM memloom_items", &[])
            .await
            .unwrap()
            .get(0);
        assert_eq!(n, 0, "the scope ended with the transaction");
    }
    db.drop_db().await;
}

/// memloom_fuse keeps what the design needs; a later CREATE OR REPLACE that drops SECURITY
/// DEFINER or the pinned search_path fails here.
#[tokio::test]
async fn memloom_fuse_runs_as_the_owner_with_a_pinned_search_path() {
    let Some(db) = TestDb::new("tenant_definer").await else {
        return;
    };
    let rows = db
        .client
        .query(
            "SELECT p.proname, p.prosecdef, coalesce(array_to_string(p.proconfig, ' '), '') \
             FROM pg_proc p WHERE p.proname IN ('memloom_fuse', 'memloom_current_namespace', 'memloom_keyword_arm')",
            &[],
        )
        .await
        .unwrap();
    for r in rows {
        let (name, definer, config): (String, bool, String) = (r.get(0), r.get(1), r.get(2));
        match name.as_str() {
            "memloom_keyword_arm" => {
                assert!(
                    !definer,
                    "the arms stay SECURITY INVOKER (bound when called directly)"
                );
                assert!(
                    config.contains("synchronize_seqscans=off")
                        && config.contains("max_parallel_workers_per_gather=0"),
                    "{config}"
                );
            }
            _ => {
                assert!(definer, "{name} must be SECURITY DEFINER");
                assert!(
                    config.contains("search_path=public, pg_temp"),
                    "{name}: {config}"
                );
            }
        }
    }
    let forced: i64 = db
        .client
        .query_one(
            "SELECT count(*) FROM pg_class WHERE relname LIKE 'memloom%' AND relforcerowsecurity",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(
        forced, 0,
        "FORCE ROW LEVEL SECURITY would bind memloom_fuse's owner"
    );
    db.drop_db().await;
}

/// The size where it matters: the table is larger than a quarter of shared_buffers (so
/// sequential scans are synchronized) and under row-level security the keyword arm's match
/// cannot use the GIN index. memloom_fuse returns the same ranked ids on every call, as the
/// tenant role and as the superuser, and its keyword arm uses the GIN index as the tenant.
#[tokio::test]
async fn recall_is_the_same_on_every_call_and_for_every_role() {
    let Some(db) = TestDb::migrated("tenant_det").await else {
        return;
    };
    memloom_sql::init_store(&db.client, &crate::util::HASH_V1_STORE, false)
        .await
        .unwrap();
    let tenant = "memloom_sql_tenant_det";
    db.client
        .batch_execute(&format!(
            "{}
             SELECT memloom_refresh_stats('a');
             SELECT memloom_refresh_stats('b');",
            generated_chunks(
                30000,
                "CASE WHEN g % 4 = 0 THEN 'b' ELSE 'a' END",
                "'section ' || g || ' about the connection pool and '
                   || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
                   || ' with setting_' || (g % 3000) || ' in the worker'"
            )
        ))
        .await
        .expect("load 30k items");
    let (pages, quarter): (i64, i64) = {
        let r = db
            .client
            .query_one(
                "SELECT pg_relation_size('memloom_items') / 8192, \
                        (SELECT setting::bigint / 4 FROM pg_settings WHERE name = 'shared_buffers')",
                &[],
            )
            .await
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert!(
        pages > quarter,
        "the fixture ({pages} pages) must exceed shared_buffers / 4 ({quarter} pages) for scans to be synchronized"
    );
    db.create_bound_role(tenant, &["a"]).await;
    let dbname: String = db
        .client
        .query_one("SELECT current_database()", &[])
        .await
        .unwrap()
        .get(0);
    // auto_explain for the tenant's sessions (a tenant cannot LOAD it itself).
    db.client
        .batch_execute(&format!(
            "ALTER ROLE {tenant} IN DATABASE {dbname} SET session_preload_libraries = 'auto_explain';
             ALTER ROLE {tenant} IN DATABASE {dbname} SET auto_explain.log_min_duration = 0;
             ALTER ROLE {tenant} IN DATABASE {dbname} SET auto_explain.log_nested_statements = on;
             ALTER ROLE {tenant} IN DATABASE {dbname} SET auto_explain.log_level = notice;"
        ))
        .await
        .unwrap();
    let (app, notices) = db.connect_with_notices_as(Some(tenant)).await;
    set_namespace(&app, "a").await.unwrap();

    // Common words (capped tiers: the first 1,000 matches of a scan), an identifier, a mix.
    let queries = [
        "connection pool worker",
        "setting_42",
        "vacuum buffers section",
        "the worker",
    ];
    for q in queries {
        let params = memloom_sql::FuseParams::new(q, embed(q), "a", 10);
        let want: Vec<i64> = memloom_sql::fuse(&db.client, &params)
            .await
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(want.len(), 10, "{q}");
        for call in 0..3 {
            for (who, client) in [("superuser", &db.client), ("tenant", &app)] {
                let got: Vec<i64> = memloom_sql::fuse(client, &params)
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| r.id)
                    .collect();
                assert_eq!(got, want, "{q:?}, call {call} as the {who}");
            }
        }
    }

    // The plans, as the tenant: through memloom_fuse the keyword arm matches with the GIN
    // index; the same arm called directly (row-level security applies) reads the namespace.
    let plans = |q: &str| {
        let q = q.to_string();
        let app = &app;
        let notices = &notices;
        async move {
            while notices.try_recv().is_ok() {}
            app.simple_query(&q).await.unwrap();
            app.simple_query("SELECT 1").await.unwrap();
            notices
                .try_iter()
                .filter(|n| n.contains("tsv @@ tier"))
                .collect::<Vec<_>>()
                .join("\n----\n")
        }
    };
    let vec = format!("{:?}", embed("setting_42"))
        .replace('[', "'{")
        .replace(']', "}'");
    let via_fuse = plans(&format!(
        "SELECT id FROM memloom_fuse('setting_42', {vec}::real[]::vector, 'a', 10)"
    ))
    .await;
    assert!(
        via_fuse.contains("Bitmap Index Scan on memloom_items_tsv"),
        "memloom_fuse's keyword arm as the tenant:\n{via_fuse}"
    );
    let direct =
        plans("SELECT id FROM memloom_keyword_arm('setting_42', 'a', 10, NULL, 1000)").await;
    assert!(
        !direct.is_empty() && !direct.contains("Bitmap Index Scan on memloom_items_tsv"),
        "the arm called directly under row-level security:\n{direct}"
    );
    db.drop_db().await;
}

/// The ranked ids do not depend on the plan the keyword arm's capped tiers get: a GIN bitmap
/// scan (the default), or a sequential scan (forced with planner settings, as the planner picks
/// for a common word in a large table; parallel workers invited too, which the arm's SET clause
/// refuses); as the superuser and as the tenant. A capped tier takes the first keyword_scan_cap
/// matches of its scan, so this holds only while every plan of it yields matches in heap order.
/// (Synchronized scans, the other way a scan's order moves, need a table larger than
/// shared_buffers / 4: `recall_is_the_same_on_every_call_and_for_every_role`.)
#[tokio::test]
async fn recall_does_not_depend_on_the_plan() {
    let Some(db) = TestDb::migrated("tenant_plan").await else {
        return;
    };
    // No HNSW index: the vector arm is exact under every plan, so only the keyword arm's
    // plans vary.
    memloom_sql::init_store(&db.client, &crate::util::HASH_V1_STORE, false)
        .await
        .unwrap();
    let tenant = "memloom_sql_tenant_plan";
    db.client
        .batch_execute(&format!(
            "{}
             SELECT memloom_refresh_stats('a');
             ANALYZE memloom_items;",
            generated_chunks(
                6000,
                "CASE WHEN g % 4 = 0 THEN 'b' ELSE 'a' END",
                "'the connection pool worker ' || repeat('and the worker ', g % 7)
                   || (ARRAY['buffers','vacuum','replication','indexes','locks'])[1 + g % 5]
                   || ' ' || repeat(md5(g::text) || ' ', 1 + g % 11)"
            )
        ))
        .await
        .expect("load 6k items");
    db.create_bound_role(tenant, &["a"]).await;
    let app = db.connect_as(tenant).await;
    set_namespace(&app, "a").await.unwrap();
    let (seq_super, notices) = db.connect_with_notices().await;
    let seq_tenant = db.connect_as(tenant).await;
    set_namespace(&seq_tenant, "a").await.unwrap();
    let force_seq = "SET enable_bitmapscan = off; SET enable_indexscan = off;
                     SET max_parallel_workers_per_gather = 2; SET parallel_setup_cost = 0;
                     SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;";
    seq_super
        .batch_execute(&format!(
            "{force_seq} LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;"
        ))
        .await
        .unwrap();
    seq_tenant.batch_execute(force_seq).await.unwrap();

    // Common words: every tier past the first is capped (each word is in all 4,500 items).
    for q in ["connection pool worker", "the worker", "vacuum worker pool"] {
        let params = memloom_sql::FuseParams::new(q, embed(q), "a", 10);
        let want: Vec<i64> = memloom_sql::fuse(&db.client, &params)
            .await
            .unwrap()
            .iter()
            .map(|r| r.id)
            .collect();
        assert_eq!(want.len(), 10, "{q}");
        assert!(
            want.iter().any(|id| id % 4 != 0),
            "{q}: the fixture's namespace"
        );
        for call in 0..2 {
            for (who, client) in [
                ("superuser, sequential scans", &seq_super),
                ("tenant, default plans", &app),
                ("tenant, sequential scans", &seq_tenant),
            ] {
                let got: Vec<i64> = memloom_sql::fuse(client, &params)
                    .await
                    .unwrap()
                    .iter()
                    .map(|r| r.id)
                    .collect();
                assert_eq!(got, want, "{q:?}, call {call} as the {who}");
            }
        }
    }
    seq_super
        .batch_execute("SET auto_explain.log_min_duration = -1")
        .await
        .unwrap();
    let plans: Vec<String> = notices
        .try_iter()
        .filter(|n| n.contains("tsv @@ tier"))
        .collect();
    assert!(
        plans
            .iter()
            .any(|p| p.contains("Seq Scan on memloom_items")),
        "the forced plans did not scan sequentially:\n{}",
        plans.join("\n----\n")
    );
    db.drop_db().await;
}

/// memloom_keyword_arm's (id, score) rows in namespace a, 10 deep, scan cap `cap`.
async fn keyword_rows(client: &Client, q: &str, cap: i32) -> Vec<(i64, f64)> {
    client
        .query(
            "SELECT id, score FROM memloom_keyword_arm($1, 'a', 10, NULL, $2, NULL)",
            &[&q, &cap],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
}

/// A capped tier of words common apart but rarer together takes its candidates from the 1-in-16
/// sample (memloom_items_tsv_sample, sql/0043): its first scan_cap matches in heap order among
/// the sampled items, the same for the superuser and a tenant on every call, through the
/// sample's index; with memloom.keyword_sample = off, the heap's first matches as before.
#[tokio::test]
async fn rarer_together_common_words_take_the_sample() {
    let Some(db) = TestDb::migrated("tenant_sample").await else {
        return;
    };
    memloom_sql::init_store(&db.client, &crate::util::HASH_V1_STORE, false)
        .await
        .unwrap();
    // gamma and delta each in about a quarter of the items, independently (md5 picks them, and
    // the namespace: a quarter in b), so about 1 in 16 holds both.
    // The insert commits on its own: the statistics of its items apply at its commit.
    db.client
        .batch_execute(&generated_chunks(
            12000,
            "CASE WHEN substr(md5('ns' || g), 1, 1) < '4' THEN 'b' ELSE 'a' END",
            "'the worker ' || CASE WHEN substr(md5('g' || g), 1, 1) < '4' THEN 'gamma ' ELSE '' END
                   || CASE WHEN substr(md5('d' || g), 1, 1) < '4' THEN 'delta ' ELSE '' END
                   || repeat('and the worker ', g % 5) || repeat(md5(g::text) || ' ', 1 + g % 7)",
        ))
        .await
        .expect("load 12k items");
    db.client
        .batch_execute("ANALYZE memloom_items")
        .await
        .unwrap();
    let cap = 10;
    // What the sample must give: the first cap items in heap order of namespace a that hold
    // both words and are in the sample.
    let mut want: Vec<i64> = db
        .client
        .query(
            "SELECT id FROM memloom_items
             WHERE namespace = 'a' AND (hashint8(id) & 15) = 0 AND tsv @@ 'gamma & delta'::tsquery
             ORDER BY ctid LIMIT $1",
            &[&(cap as i64)],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    want.sort_unstable();
    assert_eq!(
        want.len(),
        cap as usize,
        "the fixture's sample holds cap matches"
    );

    let tenant = "memloom_sql_tenant_sample";
    db.create_bound_role(tenant, &["a"]).await;
    let app = db.connect_as(tenant).await;
    set_namespace(&app, "a").await.unwrap();
    let (watched, notices) = db.connect_with_notices().await;
    watched
        .batch_execute(
            "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
             SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;",
        )
        .await
        .unwrap();

    let sorted = |mut v: Vec<i64>| {
        v.sort_unstable();
        v
    };
    let got = keyword_rows(&watched, "gamma delta", cap).await;
    assert_eq!(
        sorted(got.iter().map(|r| r.0).collect()),
        want,
        "the sample's first {cap} matches, all scored"
    );
    assert_eq!(
        keyword_rows(&watched, "gamma delta", cap).await,
        got,
        "the same on the next call"
    );
    let plans: Vec<String> = notices.try_iter().collect();
    assert!(
        plans
            .iter()
            .any(|p| p.contains("Bitmap Index Scan on memloom_items_tsv_sample")),
        "the sample's index was not used:\n{}",
        plans.join("\n----\n")
    );

    let mut params = memloom_sql::FuseParams::new("gamma delta", embed("gamma delta"), "a", 10);
    params.keyword_scan_cap = Some(cap);
    params.arms = Some(vec!["keyword".into()]);
    let ids = |rows: Vec<memloom_sql::FusedRow>| rows.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(
        ids(memloom_sql::fuse(&app, &params).await.unwrap()),
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        "as the tenant, through memloom_fuse"
    );

    // Switched off: the heap's first matches, which are not all sampled items.
    watched
        .batch_execute("SET memloom.keyword_sample = off")
        .await
        .unwrap();
    let off = keyword_rows(&watched, "gamma delta", cap).await;
    assert_eq!(off.len(), cap as usize);
    let first_in_heap: Vec<i64> = db
        .client
        .query(
            "SELECT id FROM memloom_items WHERE namespace = 'a' AND tsv @@ 'gamma & delta'::tsquery
             ORDER BY ctid LIMIT $1",
            &[&(cap as i64)],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(
        sorted(off.iter().map(|r| r.0).collect()),
        sorted(first_in_heap)
    );
    assert_ne!(sorted(off.iter().map(|r| r.0).collect()), want);
    db.drop_db().await;
}

/// A capped tier of common words reads the heap from its start, and past the bound it estimated
/// goes on as before (sql/0034): the same rows as the index alone, for the superuser and a tenant. The
/// pool is past memloom_small_pool's 10,000 rows, where the arm plans per call.
#[tokio::test]
async fn common_words_read_the_heap_and_keep_the_index_rows() {
    let Some(db) = TestDb::migrated("tenant_heap").await else {
        return;
    };
    memloom_sql::init_store(&db.client, &crate::util::HASH_V1_STORE, false)
        .await
        .unwrap();
    // worker: in every item; alpha: the first half; omega: the second half; both together only
    // in the last 100 items, where a heap scan bounded by the independence estimate (a quarter of
    // the items) never reaches, so the index finds them past its bound.
    db.client
        .batch_execute(&format!(
            "{}
             SELECT memloom_refresh_stats('a');
             ANALYZE memloom_items;",
            generated_chunks(
                12000,
                "CASE WHEN g % 4 = 0 THEN 'b' ELSE 'a' END",
                "'the worker ' || CASE WHEN g <= 6000 THEN 'alpha ' ELSE 'omega ' END
                   || CASE WHEN g > 11900 THEN 'alpha omega ' ELSE '' END
                   || repeat('and the worker ', g % 7) || repeat(md5(g::text) || ' ', 1 + g % 11)"
            )
        ))
        .await
        .expect("load 12k items");
    let small: bool = db
        .client
        .query_one("SELECT memloom_small_pool()", &[])
        .await
        .unwrap()
        .get(0);
    assert!(!small, "the fixture must be past the small pool's bound");
    let tenant = "memloom_sql_tenant_heap";
    db.create_bound_role(tenant, &["a"]).await;
    let app = db.connect_as(tenant).await;
    set_namespace(&app, "a").await.unwrap();
    let (heap, notices) = db.connect_with_notices().await;
    heap.batch_execute(
        "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0;
         SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice;
         SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off;",
    )
    .await
    .unwrap();
    let index_only = db.connect_as(tenant).await;
    set_namespace(&index_only, "a").await.unwrap();
    index_only
        .batch_execute("SET memloom.keyword_heap_scan = off")
        .await
        .unwrap();
    // About the heap and the index: no tier takes its rows from the sample (sql/0043).
    for c in [&db.client, &app, &heap, &index_only] {
        c.batch_execute("SET memloom.keyword_sample = off")
            .await
            .unwrap();
    }

    let ids = |rows: Vec<memloom_sql::FusedRow>| rows.iter().map(|r| r.id).collect::<Vec<_>>();
    db.client
        .batch_execute("SET memloom.keyword_heap_scan = off")
        .await
        .unwrap();
    for q in ["worker", "alpha worker", "alpha omega", "omega the worker"] {
        for cap in [20, 200] {
            let want = keyword_rows(&db.client, q, cap).await;
            assert_eq!(want.len(), 10, "{q:?}, scan cap {cap}");
            assert_eq!(
                keyword_rows(&heap, q, cap).await,
                want,
                "{q:?}, scan cap {cap}: heap scan"
            );
            let mut params = memloom_sql::FuseParams::new(q, embed(q), "a", 10);
            params.keyword_scan_cap = Some(cap);
            params.arms = Some(vec!["keyword".into()]);
            let want_fused = ids(memloom_sql::fuse(&index_only, &params).await.unwrap());
            assert_eq!(
                want_fused,
                want.iter().map(|r| r.0).collect::<Vec<_>>(),
                "{q:?}, scan cap {cap}: memloom_fuse's keyword arm"
            );
            assert_eq!(
                ids(memloom_sql::fuse(&app, &params).await.unwrap()),
                want_fused,
                "{q:?}, scan cap {cap}: as the tenant, heap scan"
            );
        }
    }
    heap.batch_execute("SET auto_explain.log_min_duration = -1")
        .await
        .unwrap();
    let plans: Vec<String> = notices
        .try_iter()
        .filter(|n| n.contains("ts_match_vq"))
        .collect();
    // The rows a plan node of this kind returned, for each such node of a plan.
    let actual_rows = |plan: &str, node: &str| -> Vec<u64> {
        plan.lines()
            .filter(|l| l.contains(node))
            .filter_map(|l| l.split("(actual").nth(1))
            .filter_map(|a| a.split("rows=").nth(1))
            .filter_map(|r| r.split(' ').next()?.parse().ok())
            .collect()
    };
    let shown = plans.join("\n----\n");
    // Some capped tier found its rows in the heap ...
    assert!(
        plans
            .iter()
            .any(|p| actual_rows(p, "Tid Range Scan on memloom_items")
                .iter()
                .any(|&n| n > 0)),
        "no capped tier read the heap:\n{shown}"
    );
    // ... and alpha & omega found none within the bound, so the scan past it found them (by
    // whichever plan the planner picks for the rest of the table: heap order either way).
    assert!(
        plans.iter().any(|p| p.contains("''alpha'' & ''omega''")
            && actual_rows(p, "Tid Range Scan on memloom_items m ") == [0]
            && actual_rows(p, "on memloom_items m_1 ")
                .iter()
                .any(|&n| n > 0)),
        "past the bound, no scan found alpha & omega:\n{shown}"
    );
    db.drop_db().await;
}
