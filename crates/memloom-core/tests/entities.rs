//! The offline entity extractor against `tests/golden/entities.json`: each fixture's expected
//! entities are present with their kind, and the listed noise is absent. Plus properties that
//! hold for any input: no panic, deterministic, bounded and ordered output.

use std::fs;

use memloom_core::entity::{MAX_MENTIONS, MAX_NAME_CHARS, MIN_NAME_CHARS};
use memloom_core::{extract_entities, extract_entities_batch, EntityKind, Mention};
use proptest::prelude::*;
use serde::Deserialize;

use crate::util::repo_tests_dir;

#[derive(Deserialize)]
struct Case {
    file: String,
    breadcrumb: Option<String>,
    expected: Vec<Expected>,
    absent: Vec<String>,
}

#[derive(Deserialize)]
struct Expected {
    name: String,
    kind: EntityKind,
}

fn check_invariants(mentions: &[Mention]) {
    assert!(mentions.len() <= MAX_MENTIONS);
    for m in mentions {
        assert!(m.strength > 0.0 && m.strength <= 1.0, "{m:?}");
        assert!(m.count >= 1, "{m:?}");
        let chars = m.name.chars().count();
        assert!((MIN_NAME_CHARS..=MAX_NAME_CHARS).contains(&chars), "{m:?}");
    }
    for w in mentions.windows(2) {
        let ordered = w[0].strength > w[1].strength
            || (w[0].strength == w[1].strength && w[0].name < w[1].name);
        assert!(ordered, "out of order: {:?} then {:?}", w[0], w[1]);
    }
}

#[test]
fn golden_fixtures() {
    let dir = repo_tests_dir().join("golden");
    let cases: Vec<Case> =
        serde_json::from_str(&fs::read_to_string(dir.join("entities.json")).unwrap()).unwrap();
    assert!(cases.len() >= 5);
    let mut failures = Vec::new();
    for case in &cases {
        let text = fs::read_to_string(dir.join(&case.file)).unwrap();
        let got = extract_entities(&text, case.breadcrumb.as_deref());
        check_invariants(&got);
        for e in &case.expected {
            if !got.iter().any(|m| m.name == e.name && m.kind == e.kind) {
                failures.push(format!("{}: missing {} ({:?})", case.file, e.name, e.kind));
            }
        }
        for name in &case.absent {
            if got.iter().any(|m| &m.name == name) {
                failures.push(format!("{}: unexpected {name}", case.file));
            }
        }
        if !failures.is_empty() {
            let listed: Vec<_> = got.iter().map(|m| (&m.name, m.kind)).collect();
            failures.push(format!("{}: got {listed:?}", case.file));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn batch_matches_single() {
    let items = [
        ("Set `UV_THREADPOOL_SIZE` to 8.", Some("CLI > Threadpool")),
        ("Ask Priya Nair.", None),
    ];
    let batch = extract_entities_batch(items);
    for ((text, crumb), got) in items.iter().zip(&batch) {
        assert_eq!(got, &extract_entities(text, *crumb));
    }
}

#[test]
fn mentions_serialise_with_lowercase_kinds() {
    let m = extract_entities("It threw ERR_REQUIRE_ESM.", None);
    let json = serde_json::to_value(&m).unwrap();
    assert_eq!(json[0]["name"], "ERR_REQUIRE_ESM");
    assert_eq!(json[0]["kind"], "error_code");
}

proptest! {
    #[test]
    fn never_panics_and_is_deterministic(text in any::<String>(), crumb in proptest::option::of(any::<String>())) {
        let a = extract_entities(&text, crumb.as_deref());
        check_invariants(&a);
        prop_assert_eq!(a, extract_entities(&text, crumb.as_deref()));
    }

    #[test]
    fn markdownish_input_never_panics(
        text in r"([A-Za-z_\-./:#@=`(){}\[\]<>'\x22*~$ \n0-9]|é|’|ﬁ){0,300}",
        crumb in r"[A-Za-z_\-./:#=` ()>\[\]]{0,60}",
    ) {
        let a = extract_entities(&text, Some(&crumb));
        check_invariants(&a);
        prop_assert_eq!(a, extract_entities(&text, Some(&crumb)));
    }
}
