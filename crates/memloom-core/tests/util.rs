use std::path::PathBuf;

use memloom_core::Chunk;

/// The repository's `tests/` folder, where the cross-language golden files live.
pub fn repo_tests_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests")
}

/// `../shared/eval/nodejs-docs` beside the checkout, when it is there.
pub fn eval_set_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval/nodejs-docs");
    dir.join("corpus").is_dir().then_some(dir)
}

pub fn updating_golden() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some_and(|v| v == "1")
}

/// Invariants every chunking must satisfy, whatever the input.
pub fn check_chunk_invariants(source_text: &str, chunks: &[Chunk], max_bytes: usize) {
    let mut prev_end = 0;
    for c in chunks {
        assert!(c.start >= prev_end, "chunks overlap or go backwards: {c:?}");
        assert!(
            c.start < c.end && c.end <= source_text.len(),
            "bad range: {c:?}"
        );
        assert!(!c.text.trim().is_empty(), "empty chunk: {c:?}");
        assert!(
            c.text.len() <= max_bytes,
            "chunk over the cap ({max_bytes}): {}",
            c.text.len()
        );
        assert_eq!(c.content, format!("{}\n\n{}", c.breadcrumb, c.text));
        assert!(!c.text.contains('\r'), "line endings not normalised: {c:?}");
        assert!(!c.breadcrumb.is_empty());
        prev_end = c.end;
    }
}
