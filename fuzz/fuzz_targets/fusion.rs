//! Arbitrary rankings and parameters -> `fuse`. Invariants: no panic; invalid weights (NaN,
//! infinite, negative) are an error, anything else fuses; the output is the union of the arms,
//! each id once, with its first rank per arm and the score `rrf_score` gives; finite scores
//! (when the weights' sum is finite); ordered by score then id; deterministic.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use memloom_core::fuse::rrf_score;
use memloom_core::{fuse, ArmRankings, FuseParams, Weights};

#[derive(Arbitrary, Debug)]
struct Input {
    vector: Vec<i64>,
    keyword: Vec<i64>,
    entity: Vec<i64>,
    k: u32,
    weights: (f64, f64, f64),
}

fuzz_target!(|input: Input| {
    let arms = ArmRankings {
        vector: input.vector,
        keyword: input.keyword,
        entity: input.entity,
    };
    let (vector, keyword, entity) = input.weights;
    let params = FuseParams {
        k: input.k,
        weights: Weights {
            vector,
            keyword,
            entity,
        },
    };
    let valid = [vector, keyword, entity]
        .iter()
        .all(|w| w.is_finite() && *w >= 0.0);
    let out = match fuse(&arms, &params) {
        Ok(out) => {
            assert!(valid, "accepted weights {:?}", params.weights);
            out
        }
        Err(e) => {
            assert!(!valid, "refused valid weights {:?}: {e}", params.weights);
            assert!(!e.to_string().is_empty());
            return;
        }
    };
    let mut union: Vec<i64> = arms
        .vector
        .iter()
        .chain(&arms.keyword)
        .chain(&arms.entity)
        .copied()
        .collect();
    union.sort_unstable();
    union.dedup();
    let mut ids: Vec<i64> = out.iter().map(|f| f.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, union);
    for f in &out {
        let first = |a: &[i64]| a.iter().position(|x| *x == f.id).map(|i| i as u32 + 1);
        assert_eq!(f.ranks.vector, first(&arms.vector));
        assert_eq!(f.ranks.keyword, first(&arms.keyword));
        assert_eq!(f.ranks.entity, first(&arms.entity));
        assert!(f.rrf_score >= 0.0, "score {}", f.rrf_score);
        // Each term is at most its weight, so only weights summing past f64::MAX can overflow
        // (SQL's double precision errors there; the worker caps weights at 100).
        if (vector + keyword + entity).is_finite() {
            assert!(
                f.rrf_score.is_finite(),
                "score {} for {f:?} with {params:?}",
                f.rrf_score
            );
        }
        assert_eq!(
            f.rrf_score.to_bits(),
            rrf_score(&f.ranks, &params).to_bits()
        );
    }
    for w in out.windows(2) {
        assert!(
            w[0].rrf_score > w[1].rrf_score
                || (w[0].rrf_score == w[1].rrf_score && w[0].id < w[1].id),
            "not ordered: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    assert_eq!(out, fuse(&arms, &params).unwrap(), "not deterministic");
});
