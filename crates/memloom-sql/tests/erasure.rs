//! Erasure that leaves nothing behind (issue 15): a unique token planted in memories, chunks,
//! keys and entity names is forgotten by key, by id and with its whole namespace, and then
//! occurs 0 times in a full `pg_dump --data-only` of the database (the statistics included);
//! the counts reported are the rows planted.

use memloom_sql::{
    forget, forget_namespace, remember, ForgetTarget, Forgotten, NamespaceForgotten,
};
use tokio_postgres::Client;

use crate::stats::assert_incremental_equals_full;
use crate::util::{embed, TestDb};

/// Every token shares this prefix, so one search of the dump finds any remnant, stemmed or not.
const PREFIX: &str = "zqxv";
const BY_KEY: &str = "zqxvkeyword";
const BY_ID: &str = "zqxvidword";
const BY_NS: &str = "zqxvnsword";
const NS: &str = "erase-zqxvns";

async fn save(c: &Client, ns: &str, key: &str, text: &str) -> i64 {
    remember(c, ns, Some(key), text, &embed(text), None)
        .await
        .unwrap()
        .id
}

async fn lexemes(c: &Client) -> i64 {
    c.query_one(
        "SELECT count(*) FROM memloom_term_stats WHERE lexeme LIKE 'zqxv%'",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn a_forgotten_token_is_in_no_table_of_the_dump() {
    let Some(db) = TestDb::new("erasure").await else {
        return;
    };
    let c = &db.client;
    // What stays: another namespace and the work namespace's other memories.
    db.chunk("keep", "keep.md", "the kept notes about replication")
        .await;
    let kept = save(c, "work", "kept", "a kept memory about deploys").await;

    // By key: three versions naming the token, its key and an entity of its name.
    let mut versions = Vec::new();
    for v in 1..=3 {
        versions.push(
            save(
                c,
                "work",
                "plan-zqxvkeyword",
                &format!("plan {v}: {BY_KEY} ships"),
            )
            .await,
        );
    }
    db.entity("work", BY_KEY, &[(versions[0], 1.0), (versions[2], 0.5)])
        .await;
    // By id: the middle version of a key whose other versions do not name the token.
    let r1 = save(c, "work", "roster", "roster alpha").await;
    let r2 = save(c, "work", "roster", &format!("roster {BY_ID}")).await;
    let r3 = save(c, "work", "roster", "roster gamma").await;
    db.entity("work", BY_ID, &[(r2, 1.0)]).await;
    db.entity("work", "deploys", &[(kept, 1.0)]).await;
    // The whole namespace: chunks, memories, entities.
    let mut ns_items = Vec::new();
    for i in 0..5 {
        ns_items.push(
            db.chunk(NS, "secret.md", &format!("section {i} of {BY_NS}"))
                .await,
        );
    }
    ns_items.push(save(c, NS, "zqxvnsword-key", &format!("{BY_NS} memory v1")).await);
    ns_items.push(save(c, NS, "zqxvnsword-key", &format!("{BY_NS} memory v2")).await);
    db.entity(
        NS,
        BY_NS,
        &ns_items.iter().map(|i| (*i, 0.8)).collect::<Vec<_>>(),
    )
    .await;
    db.entity(NS, "section", &[(ns_items[0], 0.3)]).await;
    db.refresh_stats(NS).await;
    db.refresh_stats("work").await;

    // The control: the dump shows every token, and the statistics hold their lexemes.
    let dump = db.pg_dump_data();
    for t in [BY_KEY, BY_ID, BY_NS, NS] {
        assert!(
            dump.contains(t),
            "the dump should show {t} before it is forgotten"
        );
    }
    assert_eq!(
        lexemes(c).await,
        2, // the active versions' (the roster's middle one is superseded)
        "the active tokens' lexemes are in memloom_term_stats"
    );

    let f = forget(c, "work", &ForgetTarget::Key("plan-zqxvkeyword"))
        .await
        .unwrap();
    assert_eq!(
        f,
        Forgotten {
            deleted: 3,
            mentions: 2,
            entities: 1,
            not_a_memory: false
        }
    );
    let dump = db.pg_dump_data();
    assert_eq!(
        dump.matches(BY_KEY).count(),
        0,
        "forgot by key, still in the dump"
    );
    assert!(dump.contains(BY_ID) && dump.contains(BY_NS));

    let f = forget(c, "work", &ForgetTarget::Id(r2)).await.unwrap();
    assert_eq!(
        f,
        Forgotten {
            deleted: 1,
            mentions: 1,
            entities: 1,
            not_a_memory: false
        }
    );
    let dump = db.pg_dump_data();
    assert_eq!(
        dump.matches(BY_ID).count(),
        0,
        "forgot by id, still in the dump"
    );
    let links: (Option<i64>, Option<i64>) = {
        let r = c
            .query_one(
                "SELECT (SELECT supersedes FROM memloom_items WHERE id = $2), \
                        (SELECT superseded_by FROM memloom_items WHERE id = $1)",
                &[&r1, &r3],
            )
            .await
            .unwrap();
        (r.get(0), r.get(1))
    };
    assert_eq!(
        links,
        (Some(r1), Some(r3)),
        "the roster's other versions are linked"
    );

    let f = forget_namespace(c, NS).await.unwrap();
    assert_eq!((f.items, f.mentions, f.entities), (7, 8, 2), "{f:?}");
    assert!(
        f.statistics > 2,
        "term, entity and namespace statistics rows: {f:?}"
    );
    let dump = db.pg_dump_data();
    assert_eq!(
        dump.matches(PREFIX).count(),
        0,
        "a token is still in the dump"
    );
    assert_eq!(
        dump.matches(NS).count(),
        0,
        "the forgotten namespace's name is still in the dump"
    );
    assert_eq!(lexemes(c).await, 0);
    assert_eq!(
        forget_namespace(c, NS).await.unwrap(),
        NamespaceForgotten {
            items: 0,
            mentions: 0,
            entities: 0,
            statistics: 0
        }
    );

    // What was not forgotten is all there, and the statistics are exact.
    assert!(dump.contains("the kept notes about replication") && dump.contains("a kept memory"));
    assert!(dump.contains("roster alpha") && dump.contains("roster gamma"));
    assert_incremental_equals_full(c, "after the three forgets").await;
    eprintln!(
        "erasure: 3 tokens forgotten (by key, by id, whole namespace), {} occurrences of them in pg_dump --data-only",
        dump.matches(PREFIX).count()
    );
    db.drop_db().await;
}

/// A tenant role forgets its own namespace and no other; the counts are the same as the
/// owner's would be.
#[tokio::test]
async fn a_tenant_role_forgets_only_its_own_namespace() {
    let Some(db) = TestDb::new("erasure_tenant").await else {
        return;
    };
    let role = "memloom_sql_erasure_tenant";
    db.create_bound_role(role, &["a"]).await;
    let c = &db.client;
    let a1 = db.chunk("a", "a.md", "team a zqxv note").await;
    save(c, "a", "k", "team a memory").await;
    let b1 = db.chunk("b", "b.md", "team b note").await;
    db.entity("a", "alpha", &[(a1, 1.0)]).await;
    db.entity("b", "beta", &[(b1, 1.0)]).await;
    let app = db.connect_as(role).await;
    memloom_sql::set_namespace(&app, "a").await.unwrap();
    let e = forget_namespace(&app, "b").await.unwrap_err();
    assert_eq!(e.sqlstate(), Some("42501"), "{e}");
    let f = forget_namespace(&app, "a").await.unwrap();
    assert_eq!((f.items, f.mentions, f.entities), (2, 1, 1), "{f:?}");
    let left: i64 = c
        .query_one(
            "SELECT (SELECT count(*) FROM memloom_items WHERE namespace = 'b') \
                  + (SELECT count(*) FROM memloom_entities WHERE namespace = 'b') \
                  + (SELECT count(*) FROM memloom_mentions WHERE namespace = 'b')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 3, "b's item, entity and mention stay");
    let a_left: i64 = c
        .query_one(
            "SELECT (SELECT count(*) FROM memloom_items WHERE namespace = 'a') \
                  + (SELECT count(*) FROM memloom_term_stats WHERE namespace = 'a') \
                  + (SELECT count(*) FROM memloom_namespace_stats WHERE namespace = 'a')",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(a_left, 0);
    assert_incremental_equals_full(c, "after a tenant forgot its namespace").await;
    db.drop_db().await;
}
