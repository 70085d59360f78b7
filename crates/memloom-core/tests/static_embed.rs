//! `static-v1` and `static-v2`: tokenizer parity with Hugging Face `tokenizers`, the integer sums
//! against the distillation script's own arithmetic, golden vectors of both versions bit for
//! bit, and what the vectors mean.

use std::fs;
use std::sync::OnceLock;

use memloom_core::embed::{cosine, STATIC_DIMS};
use memloom_core::{embed, ErrorKind, StaticModel, StaticVersion, STATIC_V1};
use serde::{Deserialize, Serialize};

use crate::util::{repo_tests_dir, updating_golden};

fn model() -> &'static StaticModel {
    static MODEL: OnceLock<StaticModel> = OnceLock::new();
    MODEL.get_or_init(|| {
        let path = repo_tests_dir().join("../crates/memloom-core/data/static-v1.bin");
        StaticModel::from_bytes(&fs::read(path).unwrap()).unwrap()
    })
}

#[derive(Deserialize)]
struct ParityCase {
    text: String,
    ids: Vec<u32>,
    acc: Option<Vec<i64>>,
}

/// Every case of tests/golden/wordpiece.json (ids from `tokenizers`, written by
/// scripts/distill-static.py) must tokenize to the same ids.
#[test]
fn wordpiece_matches_hf_tokenizers() {
    let text = fs::read_to_string(repo_tests_dir().join("golden/wordpiece.json")).unwrap();
    let cases: Vec<ParityCase> = serde_json::from_str(&text).unwrap();
    assert!(cases.len() > 3000, "{} cases", cases.len());
    let mut wrong = Vec::new();
    for c in &cases {
        let got = model().tokenize(&c.text);
        if got != c.ids {
            wrong.push(format!(
                "{:?}: got {:?}, tokenizers {:?}",
                c.text, got, c.ids
            ));
        }
    }
    println!(
        "wordpiece parity: {} of {} texts identical",
        cases.len() - wrong.len(),
        cases.len()
    );
    assert!(
        wrong.is_empty(),
        "{} of {} differ:\n{}",
        wrong.len(),
        cases.len(),
        wrong.join("\n")
    );
}

/// The integer sums (spec steps 2 and 3) equal the script's, computed in Python from the
/// same table without this code.
#[test]
fn accumulators_match_the_distillation_script() {
    let text = fs::read_to_string(repo_tests_dir().join("golden/wordpiece.json")).unwrap();
    let cases: Vec<ParityCase> = serde_json::from_str(&text).unwrap();
    let mut n = 0;
    for c in cases.iter().filter(|c| c.acc.is_some()) {
        let got = model().accumulate(&c.ids);
        assert_eq!(
            got.as_slice(),
            c.acc.as_deref().unwrap(),
            "sums for {:?}",
            c.text
        );
        n += 1;
    }
    assert!(n >= 50, "{n} cases with sums");
}

/// The sums add each distinct token once, times its count, in `i32` blocks: they must equal
/// the plain `i64` sum over every occurrence, including tokens repeated past a block (255) and
/// blocks filled to the brim by the rows of largest weight.
#[test]
fn accumulate_equals_the_plain_sum_over_every_occurrence() {
    let m = model();
    let plain = |ids: &[u32]| {
        let mut acc = [0i64; STATIC_DIMS];
        for &id in ids {
            if let Some((w, row)) = m.row(id) {
                for (a, &q) in acc.iter_mut().zip(row) {
                    *a += i64::from(w) * i64::from(q);
                }
            }
        }
        acc
    };
    // The tokens with the largest weights, each with the largest |q| of its row: the sums that
    // come closest to an i32 block's bound.
    let mut heavy: Vec<u32> = (0..40_000).filter(|&id| m.row(id).is_some()).collect();
    heavy.sort_by_key(|&id| std::cmp::Reverse(m.row(id).unwrap().0));
    heavy.truncate(300);
    let mut cases: Vec<Vec<u32>> = vec![
        vec![],
        vec![0, 1, 2],        // special tokens without rows
        vec![heavy[0]; 1000], // one token past a block
        vec![heavy[0]; 255],  // exactly a block
        heavy.clone(),        // 300 distinct: a block boundary inside
        heavy.iter().flat_map(|&id| [id, id, id]).collect(),
    ];
    // A pseudo-random mix of repeats and distinct tokens (fixed seed).
    let mut x = 0x9e37_79b9_u32;
    let mut mix = Vec::new();
    for _ in 0..5000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        mix.push(heavy[(x % 7) as usize * (x as usize % 40)]);
    }
    cases.push(mix);
    cases.push(m.tokenize(&"the quick brown fox jumps over the lazy dog ".repeat(400)));
    for ids in &cases {
        assert_eq!(m.accumulate(ids), plain(ids), "{} ids", ids.len());
    }
}

#[derive(Serialize, Deserialize)]
struct EmbeddingCase {
    text: String,
    embedder: String,
    dims: usize,
    vector: Vec<f32>,
}

const EMBED_INPUTS: &[&str] = &[
    "",
    "hello world",
    "ERR_REQUIRE_ESM",
    "How do I make a uniquely named scratch folder?",
    "fs.mkdtemp creates a unique temporary directory",
    "Über die Größe: naïve café",
    "日本語のテキスト",
    "\u{1}\u{200b}",
    "line one\r\nline two\r\n",
    "the of and a",
    "Guide > Setup > Postgres\n\nEdit `pg_hba.conf` to let the replica connect.",
    "Caroline (2023-05-08): I went to the LGBTQ support group yesterday and it was so powerful.",
];

/// tests/golden/embeddings-static-v1.json and -v2.json: every runtime reads them (Node,
/// Chromium, workerd) and must give these bits.
#[test]
fn golden_static_embeddings() {
    for version in StaticVersion::ALL {
        let info = version.info();
        let path = repo_tests_dir().join(format!("golden/embeddings-{}.json", info.id()));
        let actual: Vec<EmbeddingCase> = EMBED_INPUTS
            .iter()
            .map(|t| EmbeddingCase {
                text: t.to_string(),
                embedder: info.id(),
                dims: info.dims,
                vector: model().embed(t, version),
            })
            .collect();
        if updating_golden() {
            fs::write(&path, serde_json::to_string(&actual).unwrap() + "\n").unwrap();
        }
        let expected: Vec<EmbeddingCase> =
            serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(expected.len(), actual.len());
        for (e, a) in expected.iter().zip(&actual) {
            assert_eq!(e.text, a.text);
            assert_eq!(e.embedder, info.id());
            assert_eq!(e.dims, a.vector.len());
            let eb: Vec<u32> = e.vector.iter().map(|x| x.to_bits()).collect();
            let ab: Vec<u32> = a.vector.iter().map(|x| x.to_bits()).collect();
            assert_eq!(eb, ab, "{} embedding of {:?}", info.id(), e.text);
        }
    }
}

#[test]
fn unit_length_and_halves() {
    for version in StaticVersion::ALL {
        for t in EMBED_INPUTS {
            let v = model().embed(t, version);
            assert_eq!(v.len(), STATIC_V1.dims);
            let norm: f64 = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
            assert!((norm - 1.0).abs() < 1e-6, "{t:?}: {norm}");
            // The second half is hash-v1, scaled.
            let h = embed(t);
            assert!(cosine(&v[STATIC_DIMS..], &h) > 0.999_999, "{t:?}");
        }
        // No token with a row: the static half is zero and the hash half is hash-v1 itself.
        let v = model().embed("\u{1}\u{200b}", version);
        assert!(v[..STATIC_DIMS].iter().all(|x| *x == 0.0));
        assert_eq!(&v[STATIC_DIMS..], embed("\u{1}\u{200b}").as_slice());
    }
    // The same static direction in both versions; only the halves' weights differ.
    let t = "How do I make a uniquely named scratch folder?";
    let (v1, v2) = (
        model().embed(t, StaticVersion::V1),
        model().embed(t, StaticVersion::V2),
    );
    assert!(cosine(&v1[..STATIC_DIMS], &v2[..STATIC_DIMS]) > 0.999_999);
}

#[test]
fn paraphrases_score_higher_than_with_hash_v1() {
    let q = "How do I make a uniquely named scratch folder?";
    let doc = "fs.mkdtemp creates a unique temporary directory";
    let far = "The HTTP server closes idle keep-alive sockets after a timeout.";
    let m = model();
    let near_h = cosine(&embed(q), &embed(doc));
    // The cosine is a * static cosine + (1 - a) * hash-v1 cosine: a = 1/2 (v1), 2/3 (v2).
    for (version, a) in [(StaticVersion::V1, 0.5), (StaticVersion::V2, 2.0 / 3.0)] {
        let near_s = cosine(&m.embed(q, version), &m.embed(doc, version));
        let far_s = cosine(&m.embed(q, version), &m.embed(far, version));
        println!("{version:?} near {near_s:.3} far {far_s:.3}; hash-v1 near {near_h:.3}");
        assert!(near_s > far_s + 0.1, "near {near_s} far {far_s}");
        assert!(near_s > near_h + 0.1, "static {near_s} hash {near_h}");
        let (x, y) = (m.embed(q, version), m.embed(doc, version));
        let halves = a * cosine(&x[..STATIC_DIMS], &y[..STATIC_DIMS])
            + (1.0 - a) * cosine(&x[STATIC_DIMS..], &y[STATIC_DIMS..]);
        assert!((cosine(&x, &y) - halves).abs() < 1e-6, "{version:?}");
    }
}

#[test]
fn corrupted_tables_are_refused() {
    let path = repo_tests_dir().join("../crates/memloom-core/data/static-v1.bin");
    let good = fs::read(path).unwrap();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for (what, bytes) in [
        ("empty", Vec::new()),
        ("truncated", good[..good.len() - 10].to_vec()),
        ("flipped bit", flipped),
        ("bad magic", [b"XXXXXXXX", &good[8..]].concat()),
    ] {
        let err = StaticModel::from_bytes(&bytes)
            .err()
            .unwrap_or_else(|| panic!("{what} accepted"));
        assert_eq!(err.kind(), ErrorKind::InvalidData, "{what}");
        assert!(err.to_string().contains("static-v1.bin"), "{what}: {err}");
    }
}

proptest::proptest! {
    /// Any text: no panic (char boundaries in WordPiece), ids in the vocabulary, a unit vector
    /// whose second half is hash-v1's direction.
    #[test]
    fn any_text_embeds(text in "(\\PC|[ \\t\\n\\u{0}-\\u{1f}]){0,80}") {
        let m = model();
        for id in m.tokenize(&text) {
            proptest::prop_assert!(id < 30522);
        }
        let v = m.embed(&text, StaticVersion::V2);
        proptest::prop_assert_eq!(v.len(), STATIC_V1.dims);
        let norm: f64 = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        proptest::prop_assert!((norm - 1.0).abs() < 1e-6, "{}", norm);
        proptest::prop_assert!(cosine(&v[STATIC_DIMS..], &embed(&text)) > 0.999_999);
    }
}

/// The shipped table is the one the constant names (a runtime that reads the rows from a
/// database compares the two), and a tokenizer built from the vocabulary alone plus the
/// finishing step gives the model's own vectors: the edge worker's path, in the core.
#[test]
fn split_path_equals_the_model() {
    use memloom_core::embed::{finish_static, StaticTokenizer, STATIC_V1_TABLE_CHECKSUM};
    assert_eq!(model().checksum(), STATIC_V1_TABLE_CHECKSUM);
    let bytes =
        fs::read(repo_tests_dir().join("../crates/memloom-core/data/static-v1.bin")).unwrap();
    let vocab_len = u32::from_le_bytes(bytes[28..32].try_into().unwrap()) as usize;
    let unk = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
    let vocab = std::str::from_utf8(&bytes[48..48 + vocab_len]).unwrap();
    let tokenizer = StaticTokenizer::from_vocabulary(vocab.strip_suffix('\n').unwrap(), unk);
    for text in [
        "",
        "How do I read a file line by line?",
        "ERR_REQUIRE_ESM when importing an ES module",
        "Caroline (1:56 pm on 8 May, 2023): I went to a LGBTQ support group yesterday.",
        "naïve café über straße 東京",
    ] {
        let ids = tokenizer.tokenize(text);
        assert_eq!(ids, model().tokenize(text), "{text:?}");
        for version in StaticVersion::ALL {
            let split = finish_static(&model().accumulate(&ids), text, version);
            let whole = model().embed(text, version);
            assert_eq!(
                split.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                whole.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                "{version:?} {text:?}"
            );
        }
    }
}
