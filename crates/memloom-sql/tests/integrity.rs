//! sql/0012_integrity.sql: every cross-row reference carries its namespace, so a tenant role
//! can neither learn whether another namespace's id exists (the check fails alike for it and
//! for an id that does not exist) nor point a row of its own at it; and planner estimates
//! (`EXPLAIN`) are the same for another tenant's values as for values nobody has.

use memloom_sql::{forget, remember, set_namespace, ForgetTarget};
use tokio_postgres::{Client, SimpleQueryMessage};

use crate::util::{embed, TestDb};

/// What a statement did, comparable across ids: the rows of its last result (or the count of
/// its last command), or the error's SQLSTATE and message with `id` written as `ID`.
async fn outcome(client: &Client, sql: &str, id: i64) -> Result<String, String> {
    let _ = client.batch_execute("BEGIN").await;
    let r = client.simple_query(sql).await;
    let _ = client.batch_execute("ROLLBACK").await;
    match r {
        Ok(messages) => {
            let mut out = Vec::new();
            for m in &messages {
                match m {
                    SimpleQueryMessage::Row(row) => out.push(row.get(0).unwrap_or("").to_string()),
                    SimpleQueryMessage::CommandComplete(n) if out.is_empty() => {
                        out.push(format!("#{n}"))
                    }
                    _ => {}
                }
            }
            Ok(out.join(","))
        }
        Err(e) => {
            let (code, text) = match e.as_db_error() {
                Some(d) => (
                    d.code().code().to_string(),
                    format!("{} {}", d.message(), d.detail().unwrap_or("")),
                ),
                None => (String::new(), e.to_string()),
            };
            Err(format!("{code} {}", text.replace(&id.to_string(), "ID")))
        }
    }
}

const NOWHERE: i64 = 987_654_321_012;

/// Every row of namespace b that a reference could touch, as text.
async fn b_rows(c: &Client) -> String {
    let q = "SELECT (SELECT string_agg(i::text, '|' ORDER BY id) FROM memloom_items i WHERE namespace = 'b') \
             || (SELECT string_agg(m::text, '|' ORDER BY entity_id, item_id) FROM memloom_mentions m WHERE namespace = 'b') \
             || (SELECT string_agg(s::text, '|' ORDER BY entity_id) FROM memloom_entity_stats s WHERE namespace = 'b')";
    c.query_one(q, &[]).await.unwrap().get::<_, String>(0)
}

#[tokio::test]
async fn a_tenant_cannot_probe_or_reference_another_namespace_through_keys() {
    let Some(db) = TestDb::new("integrity_refs").await else {
        return;
    };
    let (ta, tb) = ("memloom_sql_integrity_a", "memloom_sql_integrity_b");
    db.create_bound_role(ta, &["a"]).await;
    db.create_bound_role(tb, &["b"]).await;
    let c = &db.client;
    let mem = |ns: &'static str, key: &'static str, text: &'static str| async move {
        remember(c, ns, Some(key), text, &embed(text), None)
            .await
            .unwrap()
            .id
    };
    let a_mem = mem("a", "a-plan", "team a plan v1").await;
    let a_mem2 = mem("a", "a-other", "team a other note").await;
    let b_v1 = mem("b", "b-plan", "team b plan v1").await;
    let b_v2 = mem("b", "b-plan", "team b plan v2").await;
    let a_item = db.chunk("a", "a.md", "team a chunk").await;
    let a_item2 = db.chunk("a", "a.md", "team a second chunk").await;
    let b_item = db.chunk("b", "b.md", "team b chunk").await;
    let a_ent = db.entity("a", "alpha", &[(a_item, 1.0)]).await;
    let a_bare = db.entity("a", "lonely", &[]).await; // no mentions: no statistics row
    let b_ent = db.entity("b", "beta", &[(b_item, 1.0), (b_v2, 0.5)]).await;
    db.refresh_stats("a").await;
    db.refresh_stats("b").await;
    let b_before = b_rows(c).await;

    let app = db.connect_as(ta).await;
    set_namespace(&app, "a").await.unwrap();
    let vec = "(SELECT embedding FROM memloom_items LIMIT 1)";
    // (what, SQL with {ID}, a's own id: the control that the statement itself works, the id
    // of b's row it probes).
    let attempts: Vec<(&str, String, i64, i64)> = vec![
        (
            "insert a version superseding b's",
            format!("INSERT INTO memloom_items (namespace, kind, content, embedding, supersedes) SELECT 'a', 'memory', 'x', {vec}, {{ID}}"),
            a_mem, b_v1,
        ),
        (
            "insert a version superseded by b's",
            format!("INSERT INTO memloom_items (namespace, kind, content, embedding, superseded_by) SELECT 'a', 'memory', 'x', {vec}, {{ID}}"),
            a_mem, b_v2,
        ),
        ("link one's memory to b's (supersedes)", format!("UPDATE memloom_items SET supersedes = {{ID}} WHERE id = {a_mem2}"), a_mem, b_v1),
        ("link one's memory to b's (superseded_by)", format!("UPDATE memloom_items SET superseded_by = {{ID}} WHERE id = {a_mem2}"), a_mem, b_v1),
        ("mention b's item", format!("INSERT INTO memloom_mentions (namespace, entity_id, item_id, strength) VALUES ('a', {a_ent}, {{ID}}, 1)"), a_item2, b_item),
        ("mention b's entity", format!("INSERT INTO memloom_mentions (namespace, entity_id, item_id, strength) VALUES ('a', {{ID}}, {a_item2}, 1)"), a_bare, b_ent),
        ("mention b's item, namespace left out", format!("INSERT INTO memloom_mentions (entity_id, item_id, strength) VALUES ({a_ent}, {{ID}}, 1)"), a_item2, b_item),
        ("mention b's entity, namespace left out", format!("INSERT INTO memloom_mentions (entity_id, item_id, strength) VALUES ({{ID}}, {a_item2}, 1)"), a_bare, b_ent),
        ("move one's mention to b's item", format!("UPDATE memloom_mentions SET item_id = {{ID}} WHERE entity_id = {a_ent}"), a_item2, b_item),
        ("move one's mention to b's entity", format!("UPDATE memloom_mentions SET entity_id = {{ID}} WHERE item_id = {a_item}"), a_bare, b_ent),
        ("entity statistics for b's entity", "INSERT INTO memloom_entity_stats (entity_id, namespace, df) VALUES ({ID}, 'a', 1)".into(), a_bare, b_ent),
        ("move one's entity statistics to b's entity", format!("UPDATE memloom_entity_stats SET entity_id = {{ID}} WHERE entity_id = {a_ent}"), a_bare, b_ent),
        ("memloom_forget of b's id", "SELECT items FROM memloom_forget('a', item_id => {ID}, memories_only => false)".into(), a_item2, b_v1),
        ("DELETE b's id", "WITH d AS (DELETE FROM memloom_items WHERE id = {ID} RETURNING 1) SELECT count(*) FROM d".into(), a_item2, b_item),
    ];
    let mut leaks = 0;
    for (what, sql, own, theirs) in &attempts {
        let run = |id: i64| {
            let sql = sql.replace("{ID}", &id.to_string());
            let app = &app;
            async move { outcome(app, &sql, id).await }
        };
        let control = run(*own).await;
        assert!(
            control.is_ok(),
            "{what}: the control with a's own id failed: {control:?}"
        );
        let (probe, none) = (run(*theirs).await, run(NOWHERE).await);
        // A leak: the reference to b's row was accepted, or b's id fails otherwise than an id
        // that does not exist.
        let leaked = probe != none || (probe.is_ok() && probe == control);
        if leaked {
            eprintln!("{what}: b's id gives {probe:?}, a missing id {none:?}");
            leaks += 1;
        }
    }
    // The whole namespace of another: refused, whatever exists there.
    let refused = outcome(&app, "SELECT items FROM memloom_forget_namespace('b')", 0).await;
    assert!(
        refused.as_ref().is_err_and(|e| e.starts_with("42501")),
        "{refused:?}"
    );
    assert_eq!(
        leaks,
        0,
        "{leaks} of {} reference attempts leaked",
        attempts.len()
    );
    assert_eq!(b_before, b_rows(c).await, "b's rows changed");

    // b's own forgets work (a row of a pointing into b made them fail before).
    let bapp = db.connect_as(tb).await;
    set_namespace(&bapp, "b").await.unwrap();
    let f = forget(&bapp, "b", &ForgetTarget::Id(b_v1)).await.unwrap();
    assert_eq!(f.deleted, 1);
    let f = forget(&bapp, "b", &ForgetTarget::Key("b-plan"))
        .await
        .unwrap();
    assert_eq!(f.deleted, 1);
    eprintln!(
        "integrity: {} reference probes by a tenant role into another namespace, {leaks} leaked",
        attempts.len() + 1
    );
    db.drop_db().await;
}

/// Rows estimated by `EXPLAIN` for `sql` with `value` written as `?`, plan shape included.
async fn explain(client: &Client, sql: &str, value: &str) -> String {
    let q = format!("EXPLAIN {}", sql.replace('?', &format!("'{value}'")));
    let rows = client.simple_query(&q).await.unwrap();
    rows.iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(|s| s.replace(value, "?")),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn explain_estimates_say_nothing_about_another_namespace() {
    let Some(db) = TestDb::new("integrity_explain").await else {
        return;
    };
    let ta = "memloom_sql_integrity_explain";
    db.create_bound_role(ta, &["a"]).await;
    // b is large and has a source, a key and words a also has; a is small.
    db.client
        .batch_execute(
            "INSERT INTO memloom_items (namespace, kind, source, key, version, status, valid_to, content, embedding)
             SELECT CASE WHEN g % 50 = 0 THEN 'a' ELSE 'team-b' END,
                    'memory', CASE WHEN g % 2 = 0 THEN 'shared.md' ELSE 'b' || g || '.md' END,
                    CASE WHEN g % 10 = 1 THEN 'shared-key-' || (g % 7) END, g,
                    CASE WHEN g % 10 = 1 THEN 'superseded' ELSE 'active' END, CASE WHEN g % 10 = 1 THEN now() END,
                    'pool note ' || g || CASE WHEN g % 50 = 0 THEN ' aardvark' ELSE ' zebrafinch' END,
                    (SELECT embedding FROM (SELECT array_fill(0.1, ARRAY[256])::real[]::vector AS embedding) e)
             FROM generate_series(1, 5000) g;
             INSERT INTO memloom_entities (namespace, name, kind, embedding)
             SELECT CASE WHEN g % 50 = 0 THEN 'a' ELSE 'team-b' END, 'entity ' || (g % 40), 'concept' || g,
                    array_fill(0.1, ARRAY[256])::real[]::vector
             FROM generate_series(1, 2000) g;
             INSERT INTO memloom_mentions (entity_id, item_id, strength)
             SELECT e.id, i.id, 0.5 FROM memloom_entities e JOIN memloom_items i
               ON i.namespace = e.namespace AND i.id % 200 = e.id % 200;
             SELECT memloom_refresh_stats('a');
             SELECT memloom_refresh_stats('team-b');
             ANALYZE;",
        )
        .await
        .expect("fixture");
    let app = db.connect_as(ta).await;
    set_namespace(&app, "a").await.unwrap();
    // (statement, b's value (or one both have), a value nobody has)
    let probes = [
        ("SELECT * FROM memloom_items WHERE namespace = ?", "team-b"),
        ("SELECT * FROM memloom_items WHERE source = ?", "shared.md"),
        ("SELECT * FROM memloom_items WHERE key = ?", "shared-key-3"),
        (
            "SELECT * FROM memloom_items WHERE namespace = ? AND status = 'active'",
            "team-b",
        ),
        (
            "SELECT * FROM memloom_entities WHERE namespace = ?",
            "team-b",
        ),
        ("SELECT * FROM memloom_entities WHERE name = ?", "entity 7"),
        (
            "SELECT * FROM memloom_mentions WHERE namespace = ?",
            "team-b",
        ),
        (
            "SELECT * FROM memloom_term_stats WHERE namespace = ?",
            "team-b",
        ),
        ("SELECT * FROM memloom_term_stats WHERE lexeme = ?", "pool"),
        (
            "SELECT * FROM memloom_term_stats WHERE lexeme = ?",
            "zebrafinch",
        ),
        (
            "SELECT * FROM memloom_namespace_stats WHERE namespace = ?",
            "team-b",
        ),
        (
            "SELECT * FROM memloom_entity_stats WHERE namespace = ?",
            "team-b",
        ),
        (
            "SELECT * FROM memloom_namespace_grants WHERE namespace = ?",
            "team-b",
        ),
    ];
    let mut differ = 0;
    for (sql, value) in probes {
        let (theirs, nobody) = (
            explain(&app, sql, value).await,
            explain(&app, sql, "nobody-has-this").await,
        );
        if theirs != nobody {
            eprintln!("{sql} [{value}]:\n{theirs}\n  vs a value nobody has:\n{nobody}");
            differ += 1;
        }
    }
    assert_eq!(
        differ,
        0,
        "{differ} of {} EXPLAIN probes tell values apart",
        probes.len()
    );

    // The control: with the statistics PostgreSQL gathers by default (as before sql/0012), the
    // same comparison tells team-b apart, so the check above can fail.
    db.client
        .batch_execute(
            "ALTER TABLE memloom_items ALTER COLUMN namespace SET STATISTICS -1; ANALYZE memloom_items;",
        )
        .await
        .unwrap();
    let sql = "SELECT * FROM memloom_items WHERE namespace = ?";
    assert_ne!(
        explain(&app, sql, "team-b").await,
        explain(&app, sql, "nobody-has-this").await,
        "default statistics should reveal team-b"
    );
    eprintln!(
        "integrity: {} EXPLAIN probes by a tenant role, {differ} told another namespace's value from a missing one",
        probes.len()
    );
    db.drop_db().await;
}
