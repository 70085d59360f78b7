//! The report: percentiles, one table per role, per query class, targets and parities.

use crate::queries::QType;
use crate::shapes::Shape;
use crate::{Role, TopIds, LIMIT, WARMUP_PASS};

pub(crate) struct Timing {
    pub(crate) shape: Shape,
    pub(crate) n: usize,
    pub(crate) p50: f64,
    pub(crate) p95: f64,
    pub(crate) p99: f64,
    /// p95 by query type (identifier, common, paraphrase + eval).
    pub(crate) by_type: Vec<(QType, f64, f64)>,
}

pub(crate) fn pct(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let idx = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[idx.clamp(1, sorted.len()) - 1]
}

/// The tables of one role's run: every shape, per query class, the targets and the parities.
pub(crate) fn report_role(role: Role, timings: &[Timing], top_ids: &TopIds, texts: &[&str]) {
    let queries = texts.len();
    let Some(fuse) = timings.iter().find(|t| t.shape == Shape::Fuse) else {
        return;
    };
    let (f50, f95) = (fuse.p50, fuse.p95);
    println!();
    println!("### as the {}", role.label());
    println!();
    println!("| query shape | queries | p50 ms | p95 ms | p99 ms | p50 / fuse | p95 / fuse |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for t in timings {
        println!(
            "| {} | {} | {:.1} | {:.1} | {:.1} | {:.2}x | {:.2}x |",
            t.shape.label(),
            t.n,
            t.p50,
            t.p95,
            t.p99,
            t.p50 / f50,
            t.p95 / f95
        );
    }
    println!();
    println!("| query shape | identifier p50 / p95 | common-word p50 / p95 | paraphrase + eval p50 / p95 |");
    println!("| --- | ---: | ---: | ---: |");
    for t in timings {
        let cells: Vec<String> = t
            .by_type
            .iter()
            .map(|(_, a, b)| format!("{a:.1} / {b:.1}"))
            .collect();
        println!("| {} | {} |", t.shape.label(), cells.join(" | "));
    }
    println!();
    let vec50 = timings
        .iter()
        .find(|t| t.shape == Shape::VectorArm)
        .map_or(f64::NAN, |t| t.p50);
    let ok = |b: bool| if b { "met" } else { "MISSED" };
    // Issue 13's targets (the app role's figures are the ones that count).
    let common95 = fuse
        .by_type
        .iter()
        .find(|(t, _, _)| *t == QType::Common)
        .map_or(f64::NAN, |c| c.2);
    println!(
        "targets: memloom_fuse p50 {f50:.1} ms <= 10 ms: {}; p95 {f95:.1} ms <= 20 ms: {}; common-word p95 {common95:.1} ms <= 10 ms: {}; p50 {:.2}x the vector arm <= 2.5x: {}",
        ok(f50 <= 10.0),
        ok(f95 <= 20.0),
        ok(common95 <= 10.0),
        f50 / vec50,
        ok(f50 <= 2.5 * vec50)
    );
    let same = |a: u8, b: u8| {
        (0..queries)
            .filter(|i| {
                top_ids.get(&(a, *i)).is_some() && top_ids.get(&(a, *i)) == top_ids.get(&(b, *i))
            })
            .count()
    };
    // The first disagreements, to stderr: which query, and both lists.
    for (shown, i) in (0..queries)
        .filter(|i| {
            let f = top_ids.get(&(Shape::Fuse as u8, *i));
            let c = top_ids.get(&(Shape::ClientFused as u8, *i));
            f.is_some() && c.is_some() && f != c
        })
        .enumerate()
    {
        if shown == 5 {
            break;
        }
        eprintln!(
            "bench: parity: {:?}: memloom_fuse {:?}, client-fused {:?}",
            texts[i],
            top_ids[&(Shape::Fuse as u8, i)],
            top_ids[&(Shape::ClientFused as u8, i)]
        );
    }
    // The client-fused parity only when that shape ran (MEMLOOM_BENCH_SHAPES).
    if timings.iter().any(|t| t.shape == Shape::ClientFused) {
        println!(
            "parity: client-fused top {LIMIT} ids equal memloom_fuse's on {} of {queries} queries",
            same(Shape::Fuse as u8, Shape::ClientFused as u8)
        );
    }
    println!(
        "parity: memloom_fuse's warm-up and timed passes agree on {} of {queries} queries",
        same(Shape::Fuse as u8, WARMUP_PASS)
    );
}
