//! Property tests: fusion and chunker invariants on generated input.

use memloom_core::embed::HASH_V1_DIMS;
use memloom_core::fuse::rrf_score;
use memloom_core::{chunk_document, chunk_markdown, embed, fuse, ArmRankings, ChunkOptions};
use memloom_core::{FuseParams, Weights};
use proptest::prelude::*;

use crate::util::check_chunk_invariants;

fn arm() -> impl Strategy<Value = Vec<i64>> {
    prop::collection::vec(0i64..40, 0..25)
}

fn params() -> impl Strategy<Value = FuseParams> {
    (1u32..200, 0.0f64..4.0, 0.0f64..4.0, 0.0f64..4.0).prop_map(|(k, v, kw, e)| FuseParams {
        k,
        weights: Weights {
            vector: v,
            keyword: kw,
            entity: e,
        },
    })
}

proptest! {
    #[test]
    fn fusion_invariants(vector in arm(), keyword in arm(), entity in arm(), p in params()) {
        let arms = ArmRankings { vector: vector.clone(), keyword: keyword.clone(), entity: entity.clone() };
        let out = fuse(&arms, &p).unwrap();
        // candidates are exactly the union of the arms, each once
        let mut union: Vec<i64> = vector.iter().chain(&keyword).chain(&entity).copied().collect();
        union.sort_unstable();
        union.dedup();
        let mut ids: Vec<i64> = out.iter().map(|f| f.id).collect();
        ids.sort_unstable();
        prop_assert_eq!(ids, union);
        for f in &out {
            // ranks are first positions, scores follow from them
            let first = |a: &[i64]| a.iter().position(|x| *x == f.id).map(|i| i as u32 + 1);
            prop_assert_eq!(f.ranks.vector, first(&vector));
            prop_assert_eq!(f.ranks.keyword, first(&keyword));
            prop_assert_eq!(f.ranks.entity, first(&entity));
            prop_assert_eq!(f.rrf_score.to_bits(), rrf_score(&f.ranks, &p).to_bits());
        }
        // ordered by score, then id
        for w in out.windows(2) {
            prop_assert!(w[0].rrf_score > w[1].rrf_score
                || (w[0].rrf_score == w[1].rrf_score && w[0].id < w[1].id));
        }
        prop_assert_eq!(out.clone(), fuse(&arms, &p).unwrap());
    }

    #[test]
    fn a_vote_never_lowers_a_score(vector in arm(), extra in 0i64..40, p in params()) {
        let before = fuse(&ArmRankings { vector: vector.clone(), ..Default::default() }, &p).unwrap();
        let after = fuse(&ArmRankings { vector, keyword: vec![extra], ..Default::default() }, &p).unwrap();
        for b in &before {
            let a = after.iter().find(|a| a.id == b.id).unwrap();
            prop_assert!(a.rrf_score >= b.rrf_score);
        }
    }
}

/// Markdown built from pieces that stress the chunker: headings of all levels, fences holding
/// `#` lines, tables, lists, CRLF, non-ASCII and long lines. Each paragraph carries a unique
/// marker word so coverage can be checked.
fn markdown() -> impl Strategy<Value = (String, usize)> {
    let piece = prop_oneof![
        (1usize..7, "[A-Za-z ]{0,12}").prop_map(|(l, t)| format!("{} H{t}\n\n", "#".repeat(l))),
        "[a-z ,.éü日]{1,300}".prop_map(|t| format!("PARA {t}\n\n")),
        Just("```sh\n# not a heading\nmake\n```\n\n".to_string()),
        Just("| a | b |\n| - | - |\n| 1 | 2 |\n\n".to_string()),
        Just("- one\n- two\n  - nested\n\n".to_string()),
        Just("para with CRLF\r\nsecond line\r\n\r\n".to_string()),
        Just("<!-- hidden -->\n\n".to_string()),
        "[a-z]{200,900}".prop_map(|t| format!("PARA {t}\n\n")),
    ];
    (prop::collection::vec(piece, 0..30), 64usize..600).prop_map(|(pieces, max)| {
        let mut md = String::new();
        for (i, p) in pieces.iter().enumerate() {
            md.push_str(&p.replacen("PARA", &format!("marker{i}x"), 1));
        }
        (md, max)
    })
}

proptest! {
    #[test]
    fn chunker_invariants((md, max) in markdown()) {
        let opts = ChunkOptions { max_bytes: max };
        let chunks = chunk_markdown("doc.md", &md, &opts).unwrap();
        check_chunk_invariants(&md, &chunks, max);
        prop_assert_eq!(&chunks, &chunk_markdown("doc.md", &md, &opts).unwrap());
        // nothing visible is lost: every paragraph's marker is in some chunk
        for marker in md.split_whitespace().filter(|w| w.starts_with("marker")) {
            prop_assert!(chunks.iter().any(|c| c.text.contains(marker)), "lost {}", marker);
        }
        // a chunk's breadcrumb ends with the nearest heading above it
        for c in &chunks {
            let above = md[..c.start].lines().rev().find(|l| l.starts_with('#') && !l.starts_with("# not"));
            if let Some(h) = above {
                let name = h.trim_start_matches('#').split_whitespace().collect::<Vec<_>>().join(" ");
                if !name.is_empty() {
                    prop_assert!(c.breadcrumb.ends_with(&name), "{:?} under {:?}", c.breadcrumb, h);
                }
            }
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in any::<String>(), max in 64usize..3000) {
        let opts = ChunkOptions { max_bytes: max };
        for source in ["a.md", "a.txt"] {
            let chunks = chunk_document(source, &s, &opts).unwrap();
            check_chunk_invariants(&s, &chunks, max);
        }
    }

    #[test]
    fn embeddings_are_finite_unit_vectors(s in any::<String>()) {
        let v = embed(&s);
        prop_assert_eq!(v.len(), HASH_V1_DIMS);
        prop_assert!(v.iter().all(|x| x.is_finite()));
        let norm: f64 = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
        prop_assert!((norm - 1.0).abs() < 1e-5);
        prop_assert_eq!(v, embed(&s));
    }
}
