//! The text an agent reads: a recall's hits as numbered, citable entries, how to cite one hit,
//! and the confirmation of a remember. Every door that hands memloom to a model uses these
//! (the npm MCP server and `memloom/ai` through memloom-wasm, the edge worker's `/mcp`
//! natively), so a model sees the same words whichever door it comes through.
//!
//! The text, exactly:
//! - no hits: `no results for "<query>"; try other words, an identifier, or remember the fact first`;
//! - else a header `<n> result(s) for "<query>", best first (cite the source or key):`, then per
//!   hit a blank line, `[<i>] <citation>`, `rrfScore <4 decimals> · similarity <3 decimals> ·
//!   ranks: vector <r|->, keyword <r|->, entity <r|->` and the hit's content, trimmed, without
//!   a chunk's leading `<breadcrumb>\n\n` (the citation already carries it);
//! - a citation: a chunk `<source> › <breadcrumb> (id <id>)` (or `<source> (id <id>)`), a
//!   memory `memory "<key>" (id <id>)` (or `memory id <id>`).
//!
//! Numbers are written as JavaScript's `Number.prototype.toFixed` writes them ([`to_fixed`]),
//! and text is trimmed as JavaScript's `String.prototype.trim` trims ([`js_trim`]): these were
//! the npm package's rules before this module owned them, and the texts are pinned by tests.
//! An empty key or breadcrumb counts as none (as JavaScript's truthiness had it).

use std::borrow::Cow;

use serde::Deserialize;

use crate::fuse::Ranks;

/// The arms in fusion order, as the ranks line names them.
const ARMS: [&str; 3] = ["vector", "keyword", "entity"];

/// One recall hit, the fields of the recall response (schema/recall-response.json) that the text
/// uses; others (`explain`, ...) are ignored when deserializing.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit<'a> {
    pub id: i64,
    /// `"chunk"` or `"memory"`.
    pub kind: Cow<'a, str>,
    #[serde(default)]
    pub source: Option<Cow<'a, str>>,
    #[serde(default)]
    pub breadcrumb: Option<Cow<'a, str>>,
    #[serde(default)]
    pub key: Option<Cow<'a, str>>,
    pub content: Cow<'a, str>,
    pub rrf_score: f64,
    pub similarity: f64,
    pub ranks: Ranks,
}

/// A recall response as the text needs it: the query and its hits, best first.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Recall<'a> {
    pub query: Cow<'a, str>,
    pub results: Vec<Hit<'a>>,
}

/// `Some(s)` unless absent or empty.
fn non_empty<'s>(s: &'s Option<Cow<'_, str>>) -> Option<&'s str> {
    s.as_deref().filter(|s| !s.is_empty())
}

/// Where a hit comes from, as an agent should cite it.
pub fn citation(h: &Hit<'_>) -> String {
    let id = h.id;
    if h.kind == "memory" {
        return match non_empty(&h.key) {
            Some(k) => format!("memory \"{k}\" (id {id})"),
            None => format!("memory id {id}"),
        };
    }
    let source = h.source.as_deref().unwrap_or("");
    match non_empty(&h.breadcrumb) {
        Some(b) => format!("{source} › {b} (id {id})"),
        None => format!("{source} (id {id})"),
    }
}

/// The recall as text: numbered hits, each with its citation, scores, ranks and content.
pub fn format_recall(query: &str, hits: &[Hit<'_>]) -> String {
    if hits.is_empty() {
        return format!(
            "no results for \"{query}\"; try other words, an identifier, or remember the fact first"
        );
    }
    let n = hits.len();
    let mut out = format!(
        "{n} result{} for \"{query}\", best first (cite the source or key):",
        if n == 1 { "" } else { "s" }
    );
    for (i, h) in hits.iter().enumerate() {
        // A chunk's content starts with its breadcrumb (what is embedded and searched); the
        // citation already says it.
        let content: &str = &h.content;
        let body = match non_empty(&h.breadcrumb) {
            Some(b) if h.kind == "chunk" => content
                .strip_prefix(b)
                .and_then(|rest| rest.strip_prefix("\n\n"))
                .unwrap_or(content),
            _ => content,
        };
        out.push_str(&format!(
            "\n\n[{}] {}\nrrfScore {} · similarity {} · ranks: ",
            i + 1,
            citation(h),
            to_fixed(h.rrf_score, 4),
            to_fixed(h.similarity, 3),
        ));
        let ranks = [h.ranks.vector, h.ranks.keyword, h.ranks.entity];
        for (j, (arm, rank)) in ARMS.iter().zip(ranks).enumerate() {
            if j > 0 {
                out.push_str(", ");
            }
            out.push_str(arm);
            match rank {
                Some(r) => out.push_str(&format!(" {r}")),
                None => out.push_str(" -"),
            }
        }
        out.push('\n');
        out.push_str(js_trim(body));
    }
    out
}

/// What a remember answers: the key and version saved, and whether an older version was
/// superseded; without a key, that the memory can only be forgotten by id.
pub fn remembered_text(key: Option<&str>, id: i64, version: i64) -> String {
    match key.filter(|k| !k.is_empty()) {
        Some(k) if version > 1 => format!(
            "remembered \"{k}\" version {version} (id {id}); version {} is superseded and no longer recalled",
            version - 1
        ),
        Some(k) => format!("remembered \"{k}\" version {version} (id {id})"),
        None => {
            format!("remembered id {id} (no key: it cannot be superseded, only forgotten by id)")
        }
    }
}

/// `x` with `digits` decimals (at most [`MAX_FIXED_DIGITS`]), as JavaScript's
/// `x.toFixed(digits)` writes it: the exact value of the double rounded half up (a tie, such as
/// 0.03125 to 4 decimals, goes to the larger magnitude: `0.0313`, where Rust's `{:.4}` rounds
/// half to even: `0.0312`); a negative value keeps its sign even when it rounds to zero
/// (`-0.000`), negative zero has none (`0.000`); `NaN`, `Infinity`, `-Infinity`. One exception:
/// from 1e21 on, where toFixed switches to the shortest form with an exponent (`1e+21`), this
/// goes on writing the digits (`1000000000000000000000.00`); no score or similarity
/// comes near 1e21, and the shortest-digits algorithm cost the npm wasm about 3 KB gzipped.
///
/// Integer arithmetic on the double's bits: the fraction `f = m * 2^e` is exact, so
/// `f * 10^d = m * 10^d / 2^-e` is too, in `u128`, and its remainder says whether to round up.
/// (Rust's float formatting is not used: it rounds ties to even, and its exact mode, which a
/// fix-up of ties would need, is not otherwise in the npm wasm.)
pub fn to_fixed(x: f64, digits: u32) -> String {
    let d = digits.min(MAX_FIXED_DIGITS);
    if x.is_nan() {
        return "NaN".into();
    }
    let sign = if x < 0.0 { "-" } else { "" };
    let a = x.abs();
    if a.is_infinite() {
        return format!("{sign}Infinity");
    }
    let mut int = a.trunc();
    // Exact: the fraction of a double needs no more bits than the double.
    let fraction = a - int;
    let scale = 10u64.pow(d);
    let mut q: u64 = 0; // fraction * 10^d, rounded half up
    if fraction > 0.0 {
        let (m, e) = bits(fraction); // e < 0: fraction < 1
        let shift = e.unsigned_abs();
        let scaled = u128::from(m) * u128::from(scale); // < 2^53 * 10^19 < 2^117
        if shift < 128 {
            let (whole, rest) = (scaled >> shift, scaled & ((1u128 << shift) - 1));
            // whole < 10^d: it fits.
            q = whole as u64 + u64::from(rest >= 1u128 << (shift - 1));
        } // else scaled < 2^117 < 2^(shift - 1), half a unit: rounds to 0
    }
    if q == scale && fraction > 0.0 {
        // Rounded up into the next integer; a fraction means a < 2^52, so + 1 is exact.
        q = 0;
        int += 1.0;
    }
    let int = integer_digits(int);
    if d == 0 {
        format!("{sign}{int}")
    } else {
        format!("{sign}{int}.{q:0width$}", width = d as usize)
    }
}

/// The most decimals [`to_fixed`] writes (10^19 is the largest power of ten in a `u64`; the
/// recall text uses 4).
pub const MAX_FIXED_DIGITS: u32 = 19;

/// A finite, positive double as `m * 2^e`, `m` an integer below 2^53.
fn bits(x: f64) -> (u64, i32) {
    let b = x.to_bits();
    let biased = ((b >> 52) & 0x7ff) as i32;
    let fraction = b & ((1u64 << 52) - 1);
    if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1u64 << 52), biased - 1075)
    }
}

/// The decimal digits of a non-negative integral double, exactly.
fn integer_digits(v: f64) -> String {
    if v < 18446744073709551616.0 {
        // Below 2^64: exact as u64.
        return (v as u64).to_string();
    }
    // v = m * 2^e (e > 11) as little-endian u32 limbs, then divided by 10^9 until zero.
    let (m, e) = bits(v);
    let (word, bit) = (e as usize / 32, e as u32 % 32);
    let mut limbs = vec![0u32; word + 3];
    let wide = u128::from(m) << bit; // < 2^85
    for (i, limb) in limbs[word..].iter_mut().enumerate() {
        *limb = (wide >> (32 * i)) as u32;
    }
    let mut groups = Vec::new(); // groups of 9 digits, least significant first
    while limbs.iter().any(|&l| l != 0) {
        let mut rem = 0u64;
        for limb in limbs.iter_mut().rev() {
            let cur = (rem << 32) | u64::from(*limb);
            *limb = (cur / 1_000_000_000) as u32;
            rem = cur % 1_000_000_000;
        }
        groups.push(rem);
    }
    let mut out = groups.pop().unwrap_or(0).to_string();
    for g in groups.iter().rev() {
        out.push_str(&format!("{g:09}"));
    }
    out
}

/// JavaScript's `String.prototype.trim`: strips white space and line terminators as ECMAScript
/// defines them (which include U+FEFF and exclude U+0085, unlike Rust's `str::trim`).
pub fn js_trim(s: &str) -> &str {
    s.trim_matches(is_js_space)
}

fn is_js_space(c: char) -> bool {
    // ECMAScript's WhiteSpace (TAB, VT, FF, ZWNBSP and the Zs category) and LineTerminator.
    let zs = matches!(
        c,
        ' ' | '\u{A0}' | '\u{1680}' | '\u{202F}' | '\u{205F}' | '\u{3000}'
    ) || ('\u{2000}'..='\u{200A}').contains(&c);
    zs || matches!(
        c,
        '\t' | '\u{0B}' | '\u{0C}' | '\u{FEFF}' | '\n' | '\r' | '\u{2028}' | '\u{2029}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hit<'a>(
        id: i64,
        kind: &'a str,
        source: Option<&'a str>,
        breadcrumb: Option<&'a str>,
        key: Option<&'a str>,
        content: &'a str,
    ) -> Hit<'a> {
        Hit {
            id,
            kind: kind.into(),
            source: source.map(Into::into),
            breadcrumb: breadcrumb.map(Into::into),
            key: key.map(Into::into),
            content: content.into(),
            rrf_score: 0.0,
            similarity: 0.0,
            ranks: Ranks::default(),
        }
    }

    #[test]
    fn recall_text_cites_sources_and_keys() {
        let mut chunk = hit(
            3,
            "chunk",
            Some("pg.md"),
            Some("PG > Limits"),
            None,
            "PG > Limits\n\nmax_connections is 200\n",
        );
        chunk.rrf_score = 0.049180327;
        chunk.similarity = 0.61234;
        chunk.ranks = Ranks {
            vector: Some(2),
            keyword: Some(1),
            entity: None,
        };
        let mut memory = hit(
            9,
            "memory",
            None,
            None,
            Some("freeze"),
            "Deploys freeze on Fridays",
        );
        memory.rrf_score = 0.01;
        memory.similarity = 0.5;
        memory.ranks.vector = Some(1);
        assert_eq!(
            format_recall("q", &[chunk, memory]),
            "2 results for \"q\", best first (cite the source or key):\n\
             \n\
             [1] pg.md › PG > Limits (id 3)\n\
             rrfScore 0.0492 · similarity 0.612 · ranks: vector 2, keyword 1, entity -\n\
             max_connections is 200\n\
             \n\
             [2] memory \"freeze\" (id 9)\n\
             rrfScore 0.0100 · similarity 0.500 · ranks: vector 1, keyword -, entity -\n\
             Deploys freeze on Fridays"
        );
    }

    #[test]
    fn one_result_and_no_results() {
        let h = hit(1, "memory", None, None, None, "x");
        assert!(format_recall("q", &[h]).starts_with("1 result for \"q\", best first"));
        assert_eq!(
            format_recall("z", &[]),
            "no results for \"z\"; try other words, an identifier, or remember the fact first"
        );
    }

    #[test]
    fn citations() {
        let c =
            |kind, source, breadcrumb, key| citation(&hit(7, kind, source, breadcrumb, key, "c"));
        assert_eq!(
            c("chunk", Some("a.md"), Some("A > B"), None),
            "a.md › A > B (id 7)"
        );
        assert_eq!(c("chunk", Some("a.txt"), None, None), "a.txt (id 7)");
        assert_eq!(c("chunk", Some("a.txt"), Some(""), None), "a.txt (id 7)");
        assert_eq!(c("memory", None, None, Some("k")), "memory \"k\" (id 7)");
        assert_eq!(c("memory", None, None, None), "memory id 7");
        assert_eq!(c("memory", None, None, Some("")), "memory id 7");
    }

    #[test]
    fn only_a_chunks_own_breadcrumb_line_is_stripped() {
        let body = |kind, breadcrumb, content| {
            let t = format_recall("q", &[hit(1, kind, Some("s"), breadcrumb, None, content)]);
            let (_, body) = t
                .split_once(" · ranks: vector -, keyword -, entity -\n")
                .unwrap();
            body.to_string()
        };
        assert_eq!(body("chunk", Some("B"), "B\n\ntext"), "text");
        // Not followed by a blank line, another breadcrumb, no breadcrumb, or a memory: kept.
        assert_eq!(body("chunk", Some("B"), "B text"), "B text");
        assert_eq!(body("chunk", Some("C"), "B\n\ntext"), "B\n\ntext");
        assert_eq!(body("chunk", None, "B\n\ntext"), "B\n\ntext");
        assert_eq!(body("memory", Some("B"), "B\n\ntext"), "B\n\ntext");
    }

    #[test]
    fn content_is_trimmed_as_javascript_trims() {
        let t = format_recall(
            "q",
            &[hit(1, "memory", None, None, None, "\u{feff} a\u{3000}\n")],
        );
        assert!(t.ends_with("\na"), "{t:?}");
        // U+0085 is white space to Rust, not to JavaScript.
        let t = format_recall("q", &[hit(1, "memory", None, None, None, "a\u{85}")]);
        assert!(t.ends_with("\na\u{85}"), "{t:?}");
    }

    #[test]
    fn remembered_texts() {
        assert_eq!(
            remembered_text(Some("k"), 5, 2),
            "remembered \"k\" version 2 (id 5); version 1 is superseded and no longer recalled"
        );
        assert_eq!(
            remembered_text(Some("k"), 5, 1),
            "remembered \"k\" version 1 (id 5)"
        );
        assert_eq!(
            remembered_text(None, 5, 1),
            "remembered id 5 (no key: it cannot be superseded, only forgotten by id)"
        );
    }

    #[test]
    fn numbers_are_written_as_javascripts_to_fixed() {
        // Each expected string is what Node's `x.toFixed(d)` prints.
        let cases: &[(f64, u32, &str)] = &[
            (0.049180327, 4, "0.0492"),
            (0.61234, 3, "0.612"),
            (0.01, 4, "0.0100"),
            (0.5, 3, "0.500"),
            (1.0, 3, "1.000"),
            (0.0, 3, "0.000"),
            (-0.0, 3, "0.000"),
            (-0.25, 3, "-0.250"),
            (-0.00001, 3, "-0.000"),
            (-0.9996, 3, "-1.000"),
            (0.99996, 4, "1.0000"),
            // 0.00005 is a little above the tie as a double.
            (0.00005, 4, "0.0001"),
            (0.00004999, 4, "0.0000"),
            // Exact ties (dyadic values): half up, where Rust's {:.N} rounds half to even.
            (0.03125, 4, "0.0313"),
            // A keyword-only hit at rank 4 (2 / (60 + 4)): the worker wrote 0.0312 before.
            (2.0 / 64.0, 4, "0.0313"),
            (0.0625, 3, "0.063"),
            (-0.0625, 3, "-0.063"),
            (0.125, 2, "0.13"),
            (2.5, 0, "3"),
            // Values just below a tie stay below (1.005 is 1.00499999999999989...).
            (1.005, 2, "1.00"),
            (1.0 / 61.0 + 2.0 / 61.0, 4, "0.0492"),
            (f64::MIN_POSITIVE, 4, "0.0000"),
            (5e-324, 3, "0.000"),
            (123.456, 1, "123.5"),
            (f64::NAN, 4, "NaN"),
            (f64::INFINITY, 4, "Infinity"),
            (f64::NEG_INFINITY, 3, "-Infinity"),
            // Not toFixed's "1e+21" / "-1.2345e+25" (see the doc comment).
            (1e21, 2, "1000000000000000000000.00"),
            (-1.2345e25, 2, "-12344999999999999704301568.00"),
            (999999999999999900000.0, 1, "999999999999999868928.0"),
            (4503599627370497.0, 3, "4503599627370497.000"),
            (0.1, 19, "0.1000000000000000056"),
            (0.9999999999999999, 4, "1.0000"),
            (0.9999999999999999, 19, "0.9999999999999998890"),
            (4503599627370495.5, 0, "4503599627370496"),
            (4503599627370495.5, 1, "4503599627370495.5"),
            (999999999999999900000.0, 19, "999999999999999868928.0000000000000000000"),
            (18446744073709551616.0, 1, "18446744073709551616.0"),
            (1.7976931348623157e308, 0, "179769313486231570814527423731704356798070567525844996598917476803157260780028538760589558632766878171540458953514382464234321326889464182768467546703537516986049910576551282076245490090389328944075868508455133942304583236903222948165808559332123348274797826204144723168738177180919299881250404026184124858368"),
        ];
        for &(x, d, want) in cases {
            assert_eq!(to_fixed(x, d), want, "({x:e}).toFixed({d})");
        }
        assert_eq!(format!("{:.4}", 0.03125), "0.0312", "why to_fixed exists");
    }
}
