//! sql/0036: a memory keyed `<thread>:<n>` is a turn, and its keyword index holds the turn it
//! replies to (`<thread>:<n-1>`'s active version), kept as turns are written, superseded,
//! forgotten and imported in any order. What recall returns stays the turn's own text.

use memloom_core::vector_text::vector_text;
use memloom_sql::{forget, remember, ForgetTarget};
use tokio_postgres::Client;

use crate::stats::assert_incremental_equals_full;
use crate::util::{embed, TestDb};

async fn say(c: &Client, ns: &str, key: &str, text: &str) -> i64 {
    remember(c, ns, Some(key), text, &embed(text), None)
        .await
        .unwrap_or_else(|e| panic!("remember {key}: {e:?}"))
        .id
}

/// The context of the active version of `key` (None: no such row or no context).
async fn context(c: &Client, ns: &str, key: &str) -> Option<String> {
    c.query_opt(
        "SELECT context FROM memloom_items WHERE namespace = $1 AND key = $2 AND status = 'active'",
        &[&ns, &key],
    )
    .await
    .unwrap()
    .and_then(|r| r.get(0))
}

async fn active_id(c: &Client, ns: &str, key: &str) -> i64 {
    c.query_one(
        "SELECT id FROM memloom_items WHERE namespace = $1 AND key = $2 AND status = 'active'",
        &[&ns, &key],
    )
    .await
    .unwrap()
    .get(0)
}

#[tokio::test]
async fn an_answer_is_found_by_the_words_of_the_question_it_answers() {
    let Some(db) = TestDb::new("turns_answer").await else {
        return;
    };
    let c = &db.client;
    let q = say(c, "t", "chat-7:1", "How long have you been married?").await;
    let a = say(c, "t", "chat-7:2", "Five years already! Time flies.").await;
    let other = say(c, "t", "chat-7:3", "Congrats, that is lovely.").await;
    let plain = say(c, "t", "wedding", "The photographer cancelled twice.").await;

    // The answer shares no word with the query; its question does.
    let hits = db.keyword_arm("t", "married").await;
    assert!(
        hits.contains(&q) && hits.contains(&a),
        "question and answer: {hits:?}"
    );
    assert!(
        !hits.contains(&other) && !hits.contains(&plain),
        "only the turn right after the question: {hits:?}"
    );
    // The context is the previous turn's text; recall returns the turn's own.
    assert_eq!(
        context(c, "t", "chat-7:2").await.as_deref(),
        Some("How long have you been married?")
    );
    assert_eq!(context(c, "t", "chat-7:1").await, None);
    assert_eq!(context(c, "t", "wedding").await, None);
    let fused = db.recall("t", "how long married", 5).await;
    let row = fused.iter().find(|r| r.id == a).expect("answer recalled");
    assert_eq!(row.content, "Five years already! Time flies.");
    assert!(row.keyword_rank.is_some(), "{row:?}");
    assert_incremental_equals_full(c, "after a thread").await;
}

#[tokio::test]
async fn the_context_follows_the_question_when_it_changes_or_goes() {
    let Some(db) = TestDb::new("turns_follow").await else {
        return;
    };
    let c = &db.client;
    say(c, "t", "s:1", "Which zeppelin did you board?").await;
    say(c, "t", "s:2", "The big silver one, last spring.").await;
    let a = active_id(c, "t", "s:2").await;
    assert!(db.keyword_arm("t", "zeppelin").await.contains(&a));

    // A new version of the question: the answer's index follows it.
    say(c, "t", "s:1", "Which airship did you board?").await;
    assert_eq!(
        context(c, "t", "s:2").await.as_deref(),
        Some("Which airship did you board?")
    );
    assert!(db.keyword_arm("t", "airship").await.contains(&a));
    assert!(!db.keyword_arm("t", "zeppelin").await.contains(&a));
    assert_incremental_equals_full(c, "after the question's new version").await;

    // The answer gets a new version too: its old version keeps the context it was written with.
    say(c, "t", "s:2", "The big silver one.").await;
    let a = active_id(c, "t", "s:2").await;
    let kept: i64 = c
        .query_one(
            "SELECT count(*) FROM memloom_items WHERE key = 's:2' AND status <> 'active' AND context LIKE '%airship%'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(kept, 1, "the superseded answer's context");

    // Forgotten: its words leave the index of every version of the answer.
    forget(c, "t", &ForgetTarget::Key("s:1")).await.unwrap();
    assert_eq!(context(c, "t", "s:2").await, None);
    assert!(db.keyword_arm("t", "airship").await.is_empty());
    assert_eq!(
        db.keyword_arm("t", "silver").await,
        vec![a],
        "its own words stay"
    );
    let left: i64 = c
        .query_one(
            "SELECT count(*) FROM memloom_items WHERE context LIKE '%airship%' OR tsv @@ 'airship'::tsquery",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(left, 0, "a forgotten turn's words stay nowhere");
    assert_incremental_equals_full(c, "after forgetting the question").await;
}

#[tokio::test]
async fn turns_written_out_of_order_or_in_one_batch_find_their_question() {
    let Some(db) = TestDb::new("turns_order").await else {
        return;
    };
    let c = &db.client;
    // The answer first, the question later.
    say(c, "t", "late:2", "Yes, every tuesday.").await;
    assert_eq!(context(c, "t", "late:2").await, None);
    say(c, "t", "late:1", "Do you still go climbing?").await;
    assert_eq!(
        context(c, "t", "late:2").await.as_deref(),
        Some("Do you still go climbing?")
    );
    // One statement that writes the answer before its question, with a higher id (an import
    // that keeps its ids): the answer still gets the question as its context.
    let (ks, ts) = (
        ["o:2", "o:1"],
        ["Every single morning.", "How often do you swim?"],
    );
    let es: Vec<String> = ts.iter().map(|t| vector_text(&embed(t))).collect();
    c.execute(
        "INSERT INTO memloom_items (id, namespace, kind, key, content, embedding) OVERRIDING SYSTEM VALUE
         SELECT v.id, 't', 'memory', v.k, v.t, v.e::vector
         FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS v(id, k, t, e, o)
         ORDER BY v.o",
        &[&vec![900_002i64, 900_001], &ks.to_vec(), &ts.to_vec(), &es],
    )
    .await
    .unwrap();
    assert_eq!(
        context(c, "t", "o:2").await.as_deref(),
        Some("How often do you swim?")
    );
    // Zero-padded numbers keep their width; 0 has no turn before it.
    say(c, "t", "pad:09", "Seen the comet?").await;
    say(c, "t", "pad:10", "Only through clouds.").await;
    assert_eq!(
        context(c, "t", "pad:10").await.as_deref(),
        Some("Seen the comet?")
    );
    say(c, "t", "zero:0", "First words.").await;
    assert_eq!(context(c, "t", "zero:0").await, None);
    // Keys that are not turns: no context.
    say(c, "t", "ticket-11", "Printer jams.").await;
    say(c, "t", "ticket-12", "Scanner is slow.").await;
    say(c, "t", "ratio:", "Nothing numbered.").await;
    assert_eq!(context(c, "t", "ticket-12").await, None);
    // One batch (remember --file): each turn finds the one before it in the same statement,
    // and the turn after a superseded one follows its new version.
    let texts = [
        "Where is the harbour?",
        "Past the lighthouse.",
        "Is it far?",
        "Past the old lighthouse.",
    ];
    let keys = ["b:1", "b:2", "b:3", "b:2"];
    let vecs: Vec<String> = texts.iter().map(|t| vector_text(&embed(t))).collect();
    let seqs: Vec<f64> = vec![1.0, 1.0, 1.0, 2.0];
    c.execute(
        "SELECT * FROM memloom_remember_batch('t', $1::text[], $2::float8[], $3::text[], $4::text[]::vector[])",
        &[&keys.to_vec(), &seqs, &texts.to_vec(), &vecs],
    )
    .await
    .unwrap();
    assert_eq!(
        context(c, "t", "b:2").await.as_deref(),
        Some("Where is the harbour?")
    );
    assert_eq!(
        context(c, "t", "b:3").await.as_deref(),
        Some("Past the old lighthouse.")
    );
    // The same as recomputing every turn's context from scratch.
    let stale: i64 = c
        .query_one(
            "SELECT count(*) FROM memloom_items
             WHERE status = 'active' AND context IS DISTINCT FROM memloom_turn_context(namespace, key)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(stale, 0);
    assert_incremental_equals_full(c, "after turns out of order and a batch").await;
}

#[tokio::test]
async fn a_turn_number_is_what_follows_the_last_colon() {
    let Some(db) = TestDb::new("turns_keys").await else {
        return;
    };
    for (key, before, after) in [
        ("chat:2", Some(vec!["chat:1", "chat:1"]), Some("chat:3")),
        ("a:b:3", Some(vec!["a:b:2", "a:b:2"]), Some("a:b:4")),
        ("t:010", Some(vec!["t:009", "t:9"]), Some("t:011")),
        ("t:10", Some(vec!["t:09", "t:9"]), Some("t:11")),
        ("t:09", Some(vec!["t:08", "t:8"]), Some("t:10")),
        ("t:0", None, Some("t:1")),
        (":5", None, None),
        ("12", None, None),
        ("ticket-12", None, None),
        ("x:", None, None),
        ("x:1e3", None, None),
    ] {
        let row = db
            .client
            .query_one(
                "SELECT memloom_turn_before($1), memloom_turn_after($1)",
                &[&key],
            )
            .await
            .unwrap();
        let got_before: Option<Vec<String>> = row.get(0);
        let got_after: Option<String> = row.get(1);
        assert_eq!(
            got_before,
            before.map(|v| v.into_iter().map(String::from).collect::<Vec<_>>()),
            "before {key}"
        );
        assert_eq!(got_after.as_deref(), after, "after {key}");
    }
}

#[tokio::test]
async fn a_tenant_role_keeps_its_turns_and_never_reads_another_namespace() {
    let Some(db) = TestDb::new("turns_tenant").await else {
        return;
    };
    // Namespace b holds a turn 1 that a's turn 2 must never take as its context.
    say(&db.client, "b", "chat:1", "Where is the vault key?").await;
    let role = format!("memloom_turns_tenant_{}", std::process::id());
    db.create_bound_role(&role, &["a"]).await;
    let c = db.connect_as(&role).await;
    memloom_sql::set_namespace(&c, "a").await.unwrap();
    say(&c, "a", "chat:2", "Under the mat.").await;
    assert_eq!(context(&db.client, "a", "chat:2").await, None);
    // Its own turn 1, written after its turn 2, through the role: the follower is updated
    // under row-level security.
    say(&c, "a", "chat:1", "Where did you leave the spare key?").await;
    assert_eq!(
        context(&db.client, "a", "chat:2").await.as_deref(),
        Some("Where did you leave the spare key?")
    );
    forget(&c, "a", &ForgetTarget::Key("chat:1")).await.unwrap();
    assert_eq!(context(&db.client, "a", "chat:2").await, None);
    assert_eq!(
        context(&db.client, "b", "chat:1").await,
        None,
        "b untouched"
    );
    assert_incremental_equals_full(&db.client, "after a tenant's turns").await;
}
