use crate::util::TestDb;

/// (source, content): each identifier has its exact document and a near miss.
const DOCS: &[(&str, &str)] = &[
    ("max_connections.md", "Raise max_connections in postgresql.conf when clients queue."),
    ("max-prose.md", "The server accepts max connections from many clients; connection limits matter a lot for max throughput."),
    ("hba.md", "Host based authentication lives in pg_hba.conf next to the data directory."),
    ("hba-prose.md", "Host based authentication: pg hba conf files and other conf settings."),
    ("esm.md", "require() of an ES module throws ERR_REQUIRE_ESM in older Node releases."),
    ("esm-prose.md", "An error about require and ESM: the module system differs (err on the side of import)."),
    ("deadlock.md", "deadlock detected: SQLSTATE 40P01; retry the transaction."),
    ("serial.md", "SQLSTATE 40001 means a serialization failure; retry the transaction."),
    ("dry-run.md", "Pass --dry-run to print the plan without applying it."),
    ("dry-prose.md", "A dry run prints the plan; run it again to apply."),
    ("nginx.md", "Edit /etc/nginx/nginx.conf and reload the server."),
    ("nginx-prose.md", "nginx is a web server; its conf lives in a file."),
    ("headers.md", "Calling res.setHeader() after the response started throws ERR_HTTP_HEADERS_SENT."),
];

fn source_of(db_rows: &[(i64, String)], id: i64) -> &str {
    &db_rows.iter().find(|(i, _)| *i == id).unwrap().1
}

async fn fixture(db: &TestDb) -> Vec<(i64, String)> {
    let mut rows = Vec::new();
    for (source, content) in DOCS {
        rows.push((db.chunk("ns", source, content).await, source.to_string()));
    }
    db.refresh_stats("ns").await;
    rows
}

#[tokio::test]
async fn an_identifier_query_matches_its_documents_and_no_near_miss() {
    let Some(db) = TestDb::new("identifiers").await else {
        return;
    };
    let rows = fixture(&db).await;
    for (query, want) in [
        ("pg_hba.conf", "hba.md"),
        ("ERR_REQUIRE_ESM", "esm.md"),
        ("max_connections", "max_connections.md"),
        ("SQLSTATE 40P01", "deadlock.md"),
        ("--dry-run", "dry-run.md"),
        ("nginx.conf", "nginx.md"),
    ] {
        let got: Vec<&str> = db
            .keyword_arm("ns", query)
            .await
            .iter()
            .map(|&id| source_of(&rows, id))
            .collect();
        assert_eq!(got, vec![want], "keyword arm for {query:?}");
        // Through the whole recall, with the vector and entity arms voting too.
        let fused = db.recall("ns", query, 3).await;
        assert_eq!(
            source_of(&rows, fused[0].id),
            want,
            "memloom_fuse for {query:?}: {fused:?}"
        );
        assert_eq!(fused[0].keyword_rank, Some(1));
    }
    db.drop_db().await;
}

#[tokio::test]
async fn a_natural_language_question_matches_on_any_of_its_words() {
    let Some(db) = TestDb::new("question").await else {
        return;
    };
    let rows = fixture(&db).await;
    let got = db
        .keyword_arm("ns", "what throws ERR_HTTP_HEADERS_SENT")
        .await;
    assert_eq!(source_of(&rows, got[0]), "headers.md");
    // No identifier: the words are ORed and ranked (BM25), not ANDed.
    let got = db
        .keyword_arm("ns", "how do I retry a failed transaction after a deadlock")
        .await;
    assert!(got.len() >= 2, "{got:?}");
    assert_eq!(source_of(&rows, got[0]), "deadlock.md");
    db.drop_db().await;
}

#[tokio::test]
async fn rare_terms_outweigh_common_ones() {
    let Some(db) = TestDb::new("idf").await else {
        return;
    };
    let mut common = Vec::new();
    for i in 0..30 {
        common.push(
            db.chunk(
                "ns",
                &format!("c{i}.md"),
                &format!("The server log line {i} mentions the server."),
            )
            .await,
        );
    }
    let rare = db
        .chunk(
            "ns",
            "rare.md",
            "Checkpoint tuning: the checkpointer writes dirty pages.",
        )
        .await;
    let both = db
        .chunk("ns", "both.md", "The server server server restarted.")
        .await;
    db.refresh_stats("ns").await;
    let got = db.keyword_arm("ns", "server checkpointer").await;
    assert_eq!(got[0], rare, "the rare term weighs more: {got:?}");
    assert_eq!(got.len(), 32, "words are ORed: {got:?}");
    let got = db.keyword_arm("ns", "server").await;
    assert_eq!(got[0], both, "term frequency counts: {got:?}");
    // When a word is common (df above the scan cap), only the rare words choose documents.
    let capped: Vec<i64> = db
        .client
        .query(
            "SELECT id FROM memloom_keyword_arm('server checkpointer', 'ns', 50, NULL, 10)",
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(capped, vec![rare]);
    // Only common words: at most scan_cap rows are scored.
    let capped = db
        .client
        .query(
            "SELECT id FROM memloom_keyword_arm('server', 'ns', 50, NULL, 10)",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(capped.len(), 10);
    let _ = common;
    db.drop_db().await;
}

#[tokio::test]
async fn no_lexical_match_gives_no_keyword_votes() {
    let Some(db) = TestDb::new("kw_abstain").await else {
        return;
    };
    fixture(&db).await;
    assert!(db
        .keyword_arm("ns", "zebra quantum xylophone")
        .await
        .is_empty());
    assert!(
        db.keyword_arm("ns", "the of and").await.is_empty(),
        "stop words only"
    );
    assert!(db.keyword_arm("ns", "").await.is_empty());
    let fused = db.recall("ns", "zebra quantum xylophone", 10).await;
    assert!(!fused.is_empty(), "the vector arm still votes");
    assert!(fused.iter().all(|r| r.keyword_rank.is_none()), "{fused:?}");
    db.drop_db().await;
}

#[tokio::test]
async fn keyword_terms_keep_identifiers_whole() {
    let Some(db) = TestDb::new("terms").await else {
        return;
    };
    let rows = db
        .client
        .query(
            "SELECT lexeme, exact FROM memloom_query_terms('why is max_connections ignored in /etc/nginx/nginx.conf?') ORDER BY lexeme",
            &[],
        )
        .await
        .unwrap();
    let got: Vec<(String, bool)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(
        got,
        vec![
            ("/etc/nginx/nginx.conf".to_string(), true),
            ("ignor".to_string(), false),
            ("max_connections".to_string(), true),
        ]
    );
    db.drop_db().await;
}

/// Regression: two ingests finishing at once both refreshed the statistics; the second INSERT
/// hit the first one's uncommitted rows ("duplicate key ... memloom_term_stats_pkey").
#[tokio::test]
async fn concurrent_refreshes_of_one_namespace_queue_instead_of_failing() {
    let Some(db) = TestDb::new("refresh_race").await else {
        return;
    };
    fixture(&db).await;
    let first = db.connect().await;
    let second = db.connect().await;
    first.batch_execute("BEGIN").await.unwrap();
    first
        .execute("SELECT memloom_refresh_stats('ns')", &[])
        .await
        .unwrap();
    let waiting = tokio::spawn(async move {
        second
            .execute("SELECT memloom_refresh_stats('ns')", &[])
            .await
            .map(|_| ())
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    first.batch_execute("COMMIT").await.unwrap();
    waiting
        .await
        .unwrap()
        .expect("the second refresh must wait for the first, not fail");
    let n: i64 = db
        .client
        .query_one(
            "SELECT count(*) FROM memloom_namespace_stats WHERE namespace = 'ns'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(n, 1);
}
