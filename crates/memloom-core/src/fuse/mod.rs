//! Weighted reciprocal-rank fusion (RRF).
//!
//! Each recall arm (vector, keyword, entity) votes with a ranked list of item ids. An item's
//! fused score is `sum over arms of weight / (k + rank)`, ranks counting from 1. The sum is taken
//! in the fixed order vector, keyword, entity, in `f64`, so that `memloom_rrf` in `sql/` (which
//! adds the same three terms in the same order in double precision) gives bit-identical scores;
//! `tests/golden/fusion.json` pins both.

use serde::{Deserialize, Serialize};

use crate::Error;

/// RRF's `k`: damps the lead of the first few ranks (the value from Cormack et al., 2009).
pub const DEFAULT_RRF_K: u32 = 60;
/// Weight of the vector arm (meaning, paraphrases).
pub const DEFAULT_WEIGHT_VECTOR: f64 = 1.0;
/// Weight of the keyword arm: exact words and identifiers are the strongest evidence we have.
pub const DEFAULT_WEIGHT_KEYWORD: f64 = 2.0;
/// Weight of the entity arm: broad "everything about X" evidence, a tie-breaker more than a lead.
pub const DEFAULT_WEIGHT_ENTITY: f64 = 0.5;
/// The entity arm only anchors to entities at least this close (cosine) to the query, so a
/// vague query matches no entity and the arm abstains.
pub const DEFAULT_ENTITY_GATE: f64 = 0.60;

/// Candidates each arm contributes before fusion when the caller does not say, whatever the
/// result limit: candidates that grew with the limit (`max(limit, 10)` before schema 10) made the
/// top of the list depend on how many results were asked for (locomo-dev R@5 .575 at limit 10,
/// .496 at limit 20). Deeper is worse with k 60: an item at rank 16 in two arms outscores one at
/// rank 1 in one arm, and on every dev set and offline embedder 15 or 20 per arm scored below
/// 10 (docs/EVAL.md, "Fusion").
pub const DEFAULT_CANDIDATES: u32 = 10;

/// The keyword arm votes only for items whose BM25 score is at least this fraction of its best
/// item's: such a vote is nearly never right (on both dev sets with hash-v1, 11 relevant items
/// among the 7,300 keyword candidates scoring below 0.25 of the best), and with weight 2.0 it
/// outweighs the vector arm's best (`2 / (60 + r) > 1 / 61` for every `r < 62`). Higher floors traded locomo-dev R@10 for S@1 on
/// the Node docs (0.5: -.033 / +.011), so the default cuts only the noise (docs/EVAL.md).
pub const DEFAULT_KEYWORD_FLOOR: f64 = 0.3;

/// The keyword arm does not vote for an item whose cosine similarity to the query is more than
/// this below the vector arm's last voting candidate's (when the vector arm gave all its
/// candidates; items indexed with a context, turns of a thread, and queries naming an
/// identifier excepted): a match of words the embedding finds unrelated. SQL's
/// `memloom_keyword_vector_margin()`; a test pins them equal. With all-MiniLM-L6-v2 the Node
/// docs' S@5 .800 -> .835; hash-v1 and static-v2 within .001 or above on both dev sets
/// (docs/EVAL.md, 2026-12-06).
pub const KEYWORD_VECTOR_MARGIN: f64 = 0.2;

/// The candidates per arm for a result limit: always `DEFAULT_CANDIDATES` (as
/// `memloom_default_candidates` in SQL), so the first n results never depend on the limit.
pub fn default_candidates(_limit: u32) -> u32 {
    DEFAULT_CANDIDATES
}

/// Per-arm weights of the fusion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub vector: f64,
    pub keyword: f64,
    pub entity: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            vector: DEFAULT_WEIGHT_VECTOR,
            keyword: DEFAULT_WEIGHT_KEYWORD,
            entity: DEFAULT_WEIGHT_ENTITY,
        }
    }
}

/// Fusion parameters: RRF's `k` and the arm weights.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FuseParams {
    pub k: u32,
    pub weights: Weights,
}

impl Default for FuseParams {
    fn default() -> Self {
        FuseParams {
            k: DEFAULT_RRF_K,
            weights: Weights::default(),
        }
    }
}

/// Each arm's ranking, best first. An empty list means the arm abstained.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmRankings {
    #[serde(default)]
    pub vector: Vec<i64>,
    #[serde(default)]
    pub keyword: Vec<i64>,
    #[serde(default)]
    pub entity: Vec<i64>,
}

/// The rank (from 1) an item got in each arm; `None` where the arm did not vote for it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ranks {
    pub vector: Option<u32>,
    pub keyword: Option<u32>,
    pub entity: Option<u32>,
}

/// One fused result: the item, its score, and why it scored that (the arms' ranks).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Fused {
    pub id: i64,
    pub rrf_score: f64,
    pub ranks: Ranks,
}

/// Fuses the arms' rankings. Candidates are the union of all arms; the output is ordered by
/// score, highest first, ties broken by the smaller id so the order is total and deterministic.
/// An id repeated within one arm keeps its first (best) rank.
pub fn fuse(arms: &ArmRankings, params: &FuseParams) -> Result<Vec<Fused>, Error> {
    check_weights(&params.weights)?;
    let mut by_id: std::collections::HashMap<i64, Ranks> = std::collections::HashMap::new();
    let mut vote = |ids: &[i64], slot: fn(&mut Ranks) -> &mut Option<u32>| {
        for (i, &id) in ids.iter().enumerate() {
            let rank = slot(by_id.entry(id).or_default());
            if rank.is_none() {
                *rank = Some(i as u32 + 1);
            }
        }
    };
    vote(&arms.vector, |r| &mut r.vector);
    vote(&arms.keyword, |r| &mut r.keyword);
    vote(&arms.entity, |r| &mut r.entity);

    let mut fused: Vec<Fused> = by_id
        .into_iter()
        .map(|(id, ranks)| Fused {
            id,
            rrf_score: rrf_score(&ranks, params),
            ranks,
        })
        .collect();
    fused.sort_by(|a, b| b.rrf_score.total_cmp(&a.rrf_score).then(a.id.cmp(&b.id)));
    Ok(fused)
}

/// `w_v/(k+r_v) + w_k/(k+r_k) + w_e/(k+r_e)`, an absent rank adding 0, summed in that order.
/// `k + r` is added in `f64` (exact: both are integers under 2^33), as SQL's double precision
/// `k` does: in `u32` it overflowed for `k` near `u32::MAX` (found by fuzzing).
pub fn rrf_score(ranks: &Ranks, params: &FuseParams) -> f64 {
    let k = f64::from(params.k);
    let term = |weight: f64, rank: Option<u32>| rank.map_or(0.0, |r| arm_term(weight, k, r));
    let w = &params.weights;
    term(w.vector, ranks.vector) + term(w.keyword, ranks.keyword) + term(w.entity, ranks.entity)
}

/// One arm's share of an item's fused score, `weight / (k + rank)`: the term [`rrf_score`] adds
/// and the one a recall's explain shows. `k` is a double, as SQL's `memloom_fuse` takes it (the
/// npm store passes a caller's `k` through); `k + rank` is exact for every rank.
pub fn arm_term(weight: f64, k: f64, rank: u32) -> f64 {
    weight / (k + f64::from(rank))
}

/// A voting arm's term in a recall's explain: its rank, its weight and `weight / (k + rank)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ArmTerm {
    pub rank: u32,
    pub weight: f64,
    pub term: f64,
}

/// Each arm's [`ArmTerm`], `None` (null in JSON) where the arm did not vote; the terms add up,
/// in this order, to the item's fused score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ArmTerms {
    pub vector: Option<ArmTerm>,
    pub keyword: Option<ArmTerm>,
    pub entity: Option<ArmTerm>,
}

/// The explain terms of an item ranked `ranks`, with the `weights` and `k` the recall used.
pub fn explain_terms(ranks: &Ranks, weights: &Weights, k: f64) -> ArmTerms {
    let term = |weight: f64, rank: Option<u32>| {
        rank.map(|rank| ArmTerm {
            rank,
            weight,
            term: arm_term(weight, k, rank),
        })
    };
    ArmTerms {
        vector: term(weights.vector, ranks.vector),
        keyword: term(weights.keyword, ranks.keyword),
        entity: term(weights.entity, ranks.entity),
    }
}

fn check_weights(w: &Weights) -> Result<(), Error> {
    for (arm, value) in [
        ("vector", w.vector),
        ("keyword", w.keyword),
        ("entity", w.entity),
    ] {
        if !value.is_finite() || value < 0.0 {
            return Err(Error::invalid_option(format!(
                "the {arm} weight must be a finite number >= 0, not {value}"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_formula() {
        let arms = ArmRankings {
            vector: vec![1, 2],
            keyword: vec![2],
            entity: vec![],
        };
        let out = fuse(&arms, &FuseParams::default()).unwrap();
        assert_eq!(out[0].id, 2);
        assert_eq!(out[0].rrf_score, 1.0 / 62.0 + 2.0 / 61.0);
        assert_eq!(out[0].ranks.keyword, Some(1));
        assert_eq!(out[1].rrf_score, 1.0 / 61.0);
        assert_eq!(out[1].ranks.keyword, None);
    }

    #[test]
    fn abstaining_arms_add_nothing() {
        let out = fuse(&ArmRankings::default(), &FuseParams::default()).unwrap();
        assert!(out.is_empty());
    }

    #[test]
    fn duplicate_id_keeps_its_first_rank() {
        let arms = ArmRankings {
            vector: vec![7, 7, 3],
            ..Default::default()
        };
        let out = fuse(&arms, &FuseParams::default()).unwrap();
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].ranks.vector, Some(1));
        assert_eq!(out[1].ranks.vector, Some(3));
    }

    #[test]
    fn ties_break_on_smaller_id() {
        let arms = ArmRankings {
            vector: vec![9],
            keyword: vec![],
            entity: vec![],
        };
        let mut p = FuseParams::default();
        p.weights.keyword = 1.0;
        let arms2 = ArmRankings {
            keyword: vec![4],
            ..arms
        };
        let out = fuse(&arms2, &p).unwrap();
        assert_eq!(out.iter().map(|f| f.id).collect::<Vec<_>>(), vec![4, 9]);
    }

    #[test]
    fn explain_terms_add_up_to_the_score() {
        let ranks = Ranks {
            vector: Some(1),
            keyword: Some(3),
            entity: None,
        };
        let w = Weights {
            entity: 1.0,
            ..Weights::default()
        };
        let t = explain_terms(&ranks, &w, 60.0);
        let (v, kw) = (t.vector.unwrap(), t.keyword.unwrap());
        assert_eq!((v.rank, v.weight, v.term), (1, 1.0, 1.0 / 61.0));
        assert_eq!((kw.rank, kw.weight, kw.term), (3, 2.0, 2.0 / 63.0));
        assert_eq!(t.entity, None, "the entity arm did not vote");
        let p = FuseParams { k: 60, weights: w };
        assert_eq!(v.term + kw.term, rrf_score(&ranks, &p));
        // A fractional k (the npm store passes the caller's through) is used as given.
        assert_eq!(
            explain_terms(&ranks, &w, 0.5).vector.unwrap().term,
            1.0 / 1.5
        );
        assert_eq!(
            explain_terms(&Ranks::default(), &w, 60.0),
            ArmTerms::default()
        );
    }

    #[test]
    fn rejects_negative_or_nan_weights() {
        let mut p = FuseParams::default();
        p.weights.entity = -1.0;
        let err = fuse(&ArmRankings::default(), &p).unwrap_err();
        assert_eq!(err.kind(), crate::ErrorKind::InvalidOption);
        assert!(err.to_string().contains("entity weight"));
        p.weights.entity = f64::NAN;
        assert!(fuse(&ArmRankings::default(), &p).is_err());
    }
}
