//! Arbitrary bytes -> the chunker (markdown and plain text, a fuzzed cap).
//! Invariants: no panic; chunks in source order, non-overlapping, on char boundaries, inside
//! the source; each under the cap, non-empty, `content = breadcrumb + "\n\n" + text`; every
//! word of a chunk occurs, in order, in its source range; the same input gives the same chunks.
#![no_main]

use libfuzzer_sys::fuzz_target;
use memloom_core::{chunk_document, ChunkOptions};

fuzz_target!(|data: &[u8]| {
    let Some((&head, rest)) = data.split_first() else {
        return;
    };
    // The cap: 64 (the minimum) to 64 + 255 * 16 bytes; the low bit picks the format.
    let max_bytes = 64 + usize::from(head >> 1) * 32;
    let source = if head & 1 == 0 { "doc.md" } else { "doc.txt" };
    let text = String::from_utf8_lossy(rest);
    let opts = ChunkOptions { max_bytes };

    let chunks = chunk_document(source, &text, &opts).expect("a valid cap never errors");
    let mut prev_end = 0;
    for c in &chunks {
        assert!(c.start >= prev_end, "chunks overlap or go backwards: {c:?}");
        assert!(c.start < c.end && c.end <= text.len(), "bad range: {c:?}");
        assert!(text.is_char_boundary(c.start) && text.is_char_boundary(c.end));
        assert!(!c.text.trim().is_empty(), "empty chunk: {c:?}");
        assert!(
            c.text.len() <= max_bytes,
            "over the cap {max_bytes}: {}",
            c.text.len()
        );
        assert!(!c.text.contains('\r'), "line endings not normalised: {c:?}");
        assert!(!c.breadcrumb.is_empty());
        assert_eq!(c.content, format!("{}\n\n{}", c.breadcrumb, c.text));
        let range = text[c.start..c.end]
            .replace("\r\n", "\n")
            .replace('\r', "\n");
        let mut at = 0;
        for word in c.text.split_whitespace() {
            match range[at..].find(word) {
                Some(i) => at += i + word.len(),
                None => panic!("{word:?} of {c:?} is not in order in its source range"),
            }
        }
        prev_end = c.end;
    }
    assert_eq!(
        chunks,
        chunk_document(source, &text, &opts).unwrap(),
        "not deterministic"
    );
});
