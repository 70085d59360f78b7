//! Regression tests for what fuzzing found (`fuzz/`, `scripts/fuzz.sh`), named after the bug.
//! Each input is the minimised crash, written out by hand.

use memloom_core::fuse::rrf_score;
use memloom_core::{fuse, ArmRankings, FuseParams, Ranks, Weights};

/// `rrf_score` added `k + rank` in `u32`: with `k = u32::MAX` it overflowed (a panic with
/// overflow checks, a wrapped, wrong denominator without). Found by the `fusion` target.
#[test]
fn fusion_k_near_u32_max_does_not_overflow() {
    let params = FuseParams {
        k: u32::MAX,
        weights: Weights {
            vector: 1.1063925698061947e74,
            keyword: 1.895150280133e-312,
            entity: 0.0,
        },
    };
    let arms = ArmRankings {
        vector: vec![22800908042],
        ..Default::default()
    };
    let out = fuse(&arms, &params).unwrap();
    assert_eq!(out.len(), 1);
    let expected = 1.1063925698061947e74 / (f64::from(u32::MAX) + 1.0);
    assert_eq!(out[0].rrf_score, expected);
    // Every rank u32 can hold, with the largest k.
    let ranks = Ranks {
        vector: Some(u32::MAX),
        keyword: Some(u32::MAX),
        entity: Some(u32::MAX),
    };
    let score = rrf_score(&ranks, &params);
    assert!(score.is_finite() && score > 0.0, "{score}");
}

/// The fix must not move a single bit where `k + rank` fitted in `u32` (the SQL parity).
#[test]
fn fusion_score_bits_unchanged_for_ordinary_k() {
    let params = FuseParams::default();
    let ranks = Ranks {
        vector: Some(1),
        keyword: Some(7),
        entity: Some(50),
    };
    let old = 1.0 / f64::from(60u32 + 1) + 2.0 / f64::from(60u32 + 7) + 0.5 / f64::from(60u32 + 50);
    assert_eq!(rrf_score(&ranks, &params).to_bits(), old.to_bits());
}

/// A line over the cap was cut "after the last white space" at `index + 1`, inside a
/// multi-byte white space character (U+0085 NEL in the fuzzer's input; U+3000, the ideographic
/// space of CJK text, alike): a panic on slicing. Found by the `chunker` target.
#[test]
fn chunker_long_line_with_multibyte_whitespace_does_not_panic() {
    use memloom_core::{chunk_document, ChunkOptions};
    let opts = ChunkOptions { max_bytes: 64 };
    for ws in ['\u{85}', '\u{3000}', '\u{2003}', '\u{a0}'] {
        let line = format!("{}{ws}{}", "a".repeat(40), "b".repeat(60));
        for source in ["a.md", "a.txt"] {
            let chunks = chunk_document(source, &line, &opts).unwrap();
            crate::util::check_chunk_invariants(&line, &chunks, 64);
            let joined: String = chunks.iter().map(|c| c.text.as_str()).collect();
            assert_eq!(
                joined.matches('a').count(),
                40,
                "{source} {ws:?}: {chunks:?}"
            );
            assert_eq!(
                joined.matches('b').count(),
                60,
                "{source} {ws:?}: {chunks:?}"
            );
        }
    }
    // The fuzzer's input, as lossy UTF-8 (max_bytes 64, markdown).
    let bytes = b"\x2d\x2d\x0d\x1c\x1c\xf3\xf3\xc0\xc2\x00\x85\x1c\x1c\xcc\xf3\xf3\xc0\xc2\x85\xc2\x85\xc2\xc2\xff\xff\xff\xff\xff\xff\xff\x85\x2c\xc2";
    let text = String::from_utf8_lossy(bytes);
    let chunks = chunk_document("doc.md", &text, &opts).unwrap();
    crate::util::check_chunk_invariants(&text, &chunks, 64);
}

/// A markdown block of only non-ASCII white space (U+0085 after a lossy decode in the fuzzer's
/// input; U+00A0 and U+3000 alike) is a paragraph to CommonMark, which counts only ASCII white
/// space, but trims to nothing: it became an empty chunk (`start == end`, text ""), stored and
/// embedded as just its breadcrumb. Found by the `chunker` target.
#[test]
fn chunker_whitespace_only_block_gives_no_empty_chunk() {
    use memloom_core::{chunk_document, ChunkOptions};
    let opts = ChunkOptions::default();
    for ws in ["\u{85}", "\u{a0}", "\u{3000}", " \u{a0} \u{2003}\t"] {
        for text in [
            ws.to_string(),
            format!("# Title\n\n{ws}\n"),
            format!("para one\n\n{ws}\n\npara two\n"),
        ] {
            let chunks = chunk_document("doc.md", &text, &opts).unwrap();
            crate::util::check_chunk_invariants(&text, &chunks, opts.max_bytes);
            let joined: Vec<&str> = chunks.iter().map(|c| c.text.as_str()).collect();
            if text.contains("para") {
                assert!(
                    joined.concat().contains("para one") && joined.concat().contains("para two")
                );
            } else {
                assert!(chunks.is_empty(), "{text:?}: {chunks:?}");
            }
        }
    }
}
