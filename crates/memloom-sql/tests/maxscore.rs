//! sql/0037: an uncapped keyword tier (identifiers, rare words) scores first the candidates
//! holding its rarest words, then only those that can still reach the top (MaxScore). The rows
//! and scores must be those of scoring the whole tier (`memloom.keyword_maxscore = off`), and
//! fewer rows must be read.

use tokio_postgres::Client;

use crate::util::{Rng, TestDb};

/// Word `i` of a made-up language: letters only (no identifier, no stop word), each its own stem.
fn word(i: usize) -> String {
    const C: &[u8] = b"bdfgklmnprtvz";
    const V: &[u8] = b"aeiou";
    let (mut i, mut w) = (i + 13, String::new());
    while i > 0 {
        w.push(C[i % C.len()] as char);
        i /= C.len();
        w.push(V[i % V.len()] as char);
        i /= V.len();
    }
    w
}

/// A word index skewed towards the common ones (a few words in most documents, most in few).
fn skewed(rng: &mut Rng, vocabulary: usize, power: f64) -> usize {
    ((rng.unit().powf(power)) * vocabulary as f64) as usize
}

const VOCABULARY: usize = 3000;

async fn arm(c: &Client, query: &str, lim: i32, maxscore: bool) -> (Vec<(i64, u64)>, i64) {
    c.execute(
        "SELECT set_config('memloom.keyword_maxscore', $1, false)",
        &[&if maxscore { "on" } else { "off" }],
    )
    .await
    .unwrap();
    c.batch_execute("BEGIN").await.unwrap();
    let fetched = "SELECT pg_stat_get_xact_tuples_fetched('memloom_items'::regclass)";
    let before: i64 = c.query_one(fetched, &[]).await.unwrap().get(0);
    let rows = c
        .query(
            "SELECT id, score FROM memloom_keyword_arm($1, 'm', $2, NULL, 1000, NULL)",
            &[&query, &lim],
        )
        .await
        .unwrap_or_else(|e| panic!("keyword arm {query:?}: {e}"))
        .iter()
        .map(|r| (r.get::<_, i64>(0), r.get::<_, f64>(1).to_bits()))
        .collect();
    let after: i64 = c.query_one(fetched, &[]).await.unwrap().get(0);
    c.batch_execute("COMMIT").await.unwrap();
    (rows, after - before)
}

#[tokio::test]
async fn maxscore_gives_the_whole_tiers_rows_and_reads_fewer() {
    let Some(db) = TestDb::new("keyword_maxscore").await else {
        return;
    };
    let c = &db.client;
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // Past memloom_small_pool (10,000 rows), where each call is planned for its words and a
    // tier's candidates are read through the GIN index: the rows read are the candidates.
    let mut docs: Vec<String> = (0..12_000)
        .map(|_| {
            let n = 15 + rng.below(45);
            (0..n)
                .map(|_| word(skewed(&mut rng, VOCABULARY, 2.5)))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    // A rare word said three times in a few documents: its documents alone hold the top.
    for d in docs.iter_mut().take(14) {
        d.push_str(" zephyrine zephyrine zephyrine");
    }
    c.execute(
        "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
         SELECT 'm', 'chunk', 'doc' || u.g || '.md', u.t, v.e
         FROM unnest($1::text[]) WITH ORDINALITY AS u(t, g),
              LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
                       FROM generate_series(1, 256) WHERE u.g > 0) v",
        &[&docs],
    )
    .await
    .unwrap();
    db.refresh_stats("m").await;
    c.batch_execute("ANALYZE memloom_items").await.unwrap();
    // A word in a few hundred documents: with the rare word it makes a tier of two.
    let df = |w: &str| docs.iter().filter(|d| d.split(' ').any(|x| x == w)).count();
    let middling = (0..VOCABULARY)
        .map(word)
        .find(|w| (300..=900).contains(&df(w)))
        .expect("a word in 300 to 900 documents");

    let mut queries: Vec<String> = (0..60)
        .map(|_| {
            let n = 2 + rng.below(7);
            (0..n)
                .map(|_| {
                    let power = 0.5 + rng.unit();
                    word(skewed(&mut rng, VOCABULARY, power))
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    queries.push(format!("zephyrine {middling}"));
    queries.push(format!("{middling} nowhereword {}", word(VOCABULARY - 1)));

    let (mut fewer, mut more, mut matched) = (0, 0, 0);
    for q in &queries {
        for lim in [1, 3, 10, 20, 50] {
            let (off, n_off) = arm(c, q, lim, false).await;
            let (on, n_on) = arm(c, q, lim, true).await;
            assert_eq!(on, off, "{q:?} limit {lim}: ids and score bits");
            fewer += (n_on < n_off) as usize;
            more += (n_on > n_off) as usize;
            matched += !off.is_empty() as usize;
        }
    }
    assert!(
        matched > 250,
        "most queries match something: {matched} of 310"
    );
    // Most calls are one step (a lone rare word, or common words the floor cannot clear); where
    // two are tried they must on balance save reads.
    assert!(
        fewer > more,
        "the two steps read fewer rows on {fewer} calls, more on {more}"
    );

    // The rare word's 14 documents hold its top 10: the other word's hundreds are not read.
    let q = format!("zephyrine {middling}");
    let (_, n_off) = arm(c, &q, 10, false).await;
    let (on, n_on) = arm(c, &q, 10, true).await;
    assert!(
        n_on <= 14 && n_off >= 300,
        "{q}: {n_on} rows read against {n_off}"
    );
    assert_eq!(on.len(), 10);
    eprintln!("maxscore: fewer rows read on {fewer} calls, more on {more}, of 310");
    db.drop_db().await;
}
