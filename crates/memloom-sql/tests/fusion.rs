use memloom_core::fuse::{
    default_candidates, ArmRankings, FuseParams as CoreParams, Weights, DEFAULT_CANDIDATES,
    DEFAULT_ENTITY_GATE, DEFAULT_KEYWORD_FLOOR, DEFAULT_RRF_K, DEFAULT_WEIGHT_ENTITY,
    DEFAULT_WEIGHT_KEYWORD, DEFAULT_WEIGHT_VECTOR, KEYWORD_VECTOR_MARGIN,
};
use serde::Deserialize;

use crate::util::TestDb;

#[derive(Deserialize)]
struct Case {
    name: String,
    k: u32,
    weights: Weights,
    arms: ArmRankings,
    expected: Vec<Expected>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Expected {
    id: i64,
    rrf_score: f64,
    ranks: Ranks,
}

#[derive(Deserialize, Debug, PartialEq)]
struct Ranks {
    vector: Option<i32>,
    keyword: Option<i32>,
    entity: Option<i32>,
}

type RrfRow = (i64, f64, Option<i32>, Option<i32>, Option<i32>);

async fn rrf(db: &TestDb, arms: &ArmRankings, k: f64, w: &Weights) -> Vec<RrfRow> {
    db.client
        .query(
            "SELECT id, rrf_score, vector_rank, keyword_rank, entity_rank \
             FROM memloom_rrf($1, $2, $3, $4, $5, $6, $7)",
            &[
                &arms.vector,
                &arms.keyword,
                &arms.entity,
                &k,
                &w.vector,
                &w.keyword,
                &w.entity,
            ],
        )
        .await
        .expect("memloom_rrf")
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4)))
        .collect()
}

#[tokio::test]
async fn memloom_rrf_matches_the_golden_fusion_cases_bit_for_bit() {
    let Some(db) = TestDb::new("golden").await else {
        return;
    };
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/golden/fusion.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"));
    let cases: Vec<Case> =
        serde_json::from_str(&text).expect("fusion.json has the documented shape");
    assert!(!cases.is_empty());
    for case in &cases {
        let got = rrf(&db, &case.arms, f64::from(case.k), &case.weights).await;
        let want: Vec<RrfRow> = case
            .expected
            .iter()
            .map(|e| {
                (
                    e.id,
                    e.rrf_score,
                    e.ranks.vector,
                    e.ranks.keyword,
                    e.ranks.entity,
                )
            })
            .collect();
        assert_eq!(got.len(), want.len(), "case {:?}: row count", case.name);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(
                (g.0, g.1.to_bits(), g.2, g.3, g.4),
                (w.0, w.1.to_bits(), w.2, w.3, w.4),
                "case {:?}: SQL {g:?} vs golden {w:?}",
                case.name
            );
        }
    }
    db.drop_db().await;
}

/// memloom_fuse's defaults are the core's named constants, stated once in the SQL.
#[tokio::test]
async fn sql_defaults_are_the_core_constants() {
    let Some(db) = TestDb::new("defaults").await else {
        return;
    };
    let args: String = db
        .client
        .query_one(
            "SELECT pg_get_function_arguments('memloom_fuse'::regproc)",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    let default_of = |name: &str| -> f64 {
        let arg = args
            .split(", ")
            .find(|a| a.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("memloom_fuse has no argument {name}: {args}"));
        let value = arg
            .split(" DEFAULT ")
            .nth(1)
            .unwrap_or_else(|| panic!("argument {name} has no default: {arg}"));
        value
            .parse()
            .unwrap_or_else(|_| panic!("default of {name} is not a number: {value}"))
    };
    assert_eq!(default_of("k"), f64::from(DEFAULT_RRF_K));
    assert_eq!(default_of("w_vector"), DEFAULT_WEIGHT_VECTOR);
    assert_eq!(default_of("w_keyword"), DEFAULT_WEIGHT_KEYWORD);
    assert_eq!(default_of("w_entity"), DEFAULT_WEIGHT_ENTITY);
    assert_eq!(default_of("entity_gate"), DEFAULT_ENTITY_GATE);
    assert_eq!(default_of("keyword_floor"), DEFAULT_KEYWORD_FLOOR);
    let margin: f64 = db
        .client
        .query_one("SELECT memloom_keyword_vector_margin()", &[])
        .await
        .unwrap()
        .get(0);
    assert_eq!(margin, KEYWORD_VECTOR_MARGIN);
    // candidates: NULL, meaning memloom_default_candidates(lim) = DEFAULT_CANDIDATES.
    let candidates = args
        .split(", ")
        .find(|a| a.starts_with("candidates "))
        .unwrap_or_else(|| panic!("memloom_fuse has no argument candidates: {args}"));
    assert_eq!(candidates, "candidates integer DEFAULT NULL::integer");
    for lim in [1_i32, 5, 10, 11, 25, 100] {
        let sql: i32 = db
            .client
            .query_one("SELECT memloom_default_candidates($1)", &[&lim])
            .await
            .unwrap()
            .get(0);
        assert_eq!(
            u32::try_from(sql).unwrap(),
            default_candidates(lim.unsigned_abs()),
            "lim {lim}"
        );
    }
    assert_eq!(default_candidates(1), DEFAULT_CANDIDATES);
    // Stated once: memloom_rrf takes them without defaults.
    let rrf_defaults: i16 = db
        .client
        .query_one(
            "SELECT pronargdefaults FROM pg_proc WHERE proname = 'memloom_rrf'",
            &[],
        )
        .await
        .unwrap()
        .get(0);
    assert_eq!(rrf_defaults, 0);
    db.drop_db().await;
}

/// For a small fixture, each row's score is the weighted formula of its returned ranks, and
/// the order is the Rust core's `fuse` of the same arm rankings.
#[tokio::test]
async fn fuse_scores_equal_the_formula_and_the_core_order() {
    let Some(db) = TestDb::new("exact_scores").await else {
        return;
    };
    let docs = [
        "Set max_connections in postgresql.conf to bound concurrent clients.",
        "Connection pooling with PgBouncer keeps connections cheap.",
        "The autovacuum daemon reclaims dead tuples.",
        "Clients that exceed max_connections get FATAL: too many connections.",
        "Shared buffers cache pages; tune shared_buffers to a quarter of RAM.",
        "Each client connection is a backend process.",
    ];
    let mut ids = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        ids.push(db.chunk("ns", &format!("doc{i}.md"), d).await);
    }
    db.entity("ns", "max_connections", &[(ids[0], 1.0), (ids[3], 0.5)])
        .await;
    db.refresh_stats("ns").await;

    let query = "max_connections";
    let rows = db.recall("ns", query, 100).await;
    assert!(!rows.is_empty());
    assert!(rows.iter().any(|r| r.keyword_rank.is_some()));
    assert!(
        rows.iter().any(|r| r.entity_rank.is_some()),
        "the entity arm votes for its mentions"
    );
    let params = CoreParams::default();
    let k = f64::from(params.k);
    for r in &rows {
        let term = |w: f64, rank: Option<i32>| rank.map_or(0.0, |x| w / (k + f64::from(x)));
        let want = term(params.weights.vector, r.vector_rank)
            + term(params.weights.keyword, r.keyword_rank)
            + term(params.weights.entity, r.entity_rank);
        assert_eq!(r.rrf_score.to_bits(), want.to_bits(), "row {r:?}");
    }
    // Rebuild each arm's ranking from the returned ranks and fuse it in Rust.
    let arm = |rank: fn(&memloom_sql::FusedRow) -> Option<i32>| {
        let mut v: Vec<(i32, i64)> = rows
            .iter()
            .filter_map(|r| rank(r).map(|x| (x, r.id)))
            .collect();
        v.sort();
        for (i, (x, _)) in v.iter().enumerate() {
            assert_eq!(*x as usize, i + 1, "an arm's ranks are 1..n without gaps");
        }
        v.into_iter().map(|(_, id)| id).collect::<Vec<i64>>()
    };
    let arms = ArmRankings {
        vector: arm(|r| r.vector_rank),
        keyword: arm(|r| r.keyword_rank),
        entity: arm(|r| r.entity_rank),
    };
    let core = memloom_core::fuse(&arms, &params).unwrap();
    let core: Vec<(i64, u64)> = core.iter().map(|f| (f.id, f.rrf_score.to_bits())).collect();
    let sql: Vec<(i64, u64)> = rows.iter().map(|r| (r.id, r.rrf_score.to_bits())).collect();
    assert_eq!(sql, core);
    db.drop_db().await;
}

/// sql/0038: the keyword arm does not vote for an item the vector arm finds far below its own
/// candidates (cosine more than KEYWORD_VECTOR_MARGIN under the last one's), unless the item is
/// a turn indexed with its context; without the vector arm nothing is held back.
#[tokio::test]
async fn keyword_votes_need_the_vector_arm_not_to_find_the_item_unrelated() {
    let Some(db) = TestDb::migrated("keyword_vector_margin").await else {
        return;
    };
    let c = &db.client;
    let toy = memloom_sql::StoreEmbedder {
        name: "toy",
        version: 1,
        dims: 3,
    };
    memloom_sql::init_store(c, &toy, false).await.unwrap();
    let put = |kind: &'static str, key: Option<&'static str>, text: &'static str, v: [f32; 3]| async move {
        let id: i64 = c
            .query_one(
                "INSERT INTO memloom_items (namespace, kind, source, key, content, embedding) \
                 VALUES ('ns', $1, CASE WHEN $1 = 'chunk' THEN $3 END, $2, $3, \
                         l2_normalize($4::real[]::vector)) RETURNING id",
                &[&kind, &key, &text, &v.to_vec()],
            )
            .await
            .unwrap()
            .get(0);
        id
    };
    // The vector arm's ten candidates, cosine 0.98 to 1.0 with the query (1, 0, 0).
    const FILLER: [&str; 10] = [
        "filler one",
        "filler two",
        "filler three",
        "filler four",
        "filler five",
        "filler six",
        "filler seven",
        "filler eight",
        "filler nine",
        "filler ten",
    ];
    for (i, text) in FILLER.iter().enumerate() {
        put("chunk", None, text, [1.0, 0.02 * i as f32, 0.0]).await;
    }
    let close = put("chunk", None, "zanzibar spices", [0.9, 0.0, 0.436]).await; // cosine 0.9
    let far = put("chunk", None, "zanzibar harbour", [0.0, 1.0, 0.0]).await; // cosine 0
    let asked = put(
        "memory",
        Some("chat:1"),
        "what about zanzibar?",
        [0.0, 0.0, 1.0],
    )
    .await;
    let answer = put("memory", Some("chat:2"), "it was lovely", [0.0, 0.0, 1.0]).await;
    let named = put("chunk", None, "see zanzibar_port.cfg", [0.0, 1.0, 0.0]).await; // cosine 0
    db.refresh_stats("ns").await;

    let recall_of = |query: &'static str, arms: Option<Vec<String>>| async move {
        let mut p = memloom_sql::FuseParams::new(query, vec![1.0, 0.0, 0.0], "ns", 20);
        p.arms = arms;
        memloom_sql::fuse(c, &p).await.unwrap()
    };
    let voted = |rows: &[memloom_sql::FusedRow], id: i64| {
        rows.iter()
            .find(|r| r.id == id)
            .and_then(|r| r.keyword_rank)
            .is_some()
    };
    let recall = |arms| recall_of("zanzibar", arms);
    let all = recall(None).await;
    assert_eq!(all.iter().filter(|r| r.vector_rank.is_some()).count(), 10);
    assert!(
        voted(&all, close),
        "cosine 0.9, within the margin of 0.98: {all:?}"
    );
    assert!(
        !voted(&all, far),
        "cosine 0: the words match by coincidence: {all:?}"
    );
    assert!(
        !voted(&all, asked),
        "a turn without context is held to it: {all:?}"
    );
    assert!(
        voted(&all, answer),
        "a turn found through its context is exempt: {all:?}"
    );
    // The held-back items still follow in the tail, unscored.
    assert!(
        all.iter().any(|r| r.id == far && r.rrf_score == 0.0),
        "{all:?}"
    );

    // A query naming an identifier: an exact match, whatever its cosine.
    let exact = recall_of("zanzibar_port.cfg", None).await;
    assert!(
        voted(&exact, named),
        "an identifier's match keeps its vote: {exact:?}"
    );

    let keyword_only = recall(Some(vec!["keyword".into()])).await;
    for id in [close, far, asked, answer] {
        assert!(
            voted(&keyword_only, id),
            "no vector arm, no margin: {keyword_only:?}"
        );
    }
    db.drop_db().await;
}
