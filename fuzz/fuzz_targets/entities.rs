//! Arbitrary bytes -> the offline entity extractor (text, and a breadcrumb after the first NUL).
//! Invariants: no panic; at most MAX_MENTIONS mentions; names of MIN..=MAX_NAME_CHARS
//! characters, unique per kind; strength finite in [MIN_STRENGTH, 1]; count >= 1; sorted by
//! strength then name; deterministic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memloom_core::entity::{MAX_MENTIONS, MAX_NAME_CHARS, MIN_NAME_CHARS, MIN_STRENGTH};
use memloom_core::extract_entities;

fuzz_target!(|data: &[u8]| {
    let input = String::from_utf8_lossy(data);
    let (text, crumb) = match input.split_once('\0') {
        Some((t, c)) => (t, Some(c)),
        None => (&*input, None),
    };
    let out = extract_entities(text, crumb);
    assert!(out.len() <= MAX_MENTIONS, "{} mentions", out.len());
    for m in &out {
        let n = m.name.chars().count();
        assert!(
            (MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&n),
            "name {:?}",
            m.name
        );
        assert!(m.strength.is_finite(), "strength {}", m.strength);
        assert!(
            (MIN_STRENGTH..=1.0).contains(&m.strength),
            "strength {}",
            m.strength
        );
        assert!(m.count >= 1);
        assert!(!m.display.is_empty());
    }
    for w in out.windows(2) {
        assert!(
            w[0].strength > w[1].strength
                || (w[0].strength == w[1].strength && w[0].name <= w[1].name),
            "not sorted: {:?} then {:?}",
            w[0],
            w[1]
        );
    }
    let mut keys: Vec<_> = out.iter().map(|m| (m.name.as_str(), m.kind)).collect();
    keys.sort();
    let len = keys.len();
    keys.dedup();
    assert_eq!(keys.len(), len, "a (name, kind) twice: {out:?}");
    assert_eq!(out, extract_entities(text, crumb), "not deterministic");
});
