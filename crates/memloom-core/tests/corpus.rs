//! The chunker on the real Node.js docs of ../shared/eval, when that folder is there.

use std::collections::HashSet;
use std::fs;

use memloom_core::{chunk_document, ChunkOptions};

use crate::util::{check_chunk_invariants, eval_set_dir};

fn norm(s: &str) -> String {
    let s = s.replace(['`', '\\'], "");
    s.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Every (source, heading) that the eval set labels must be the last breadcrumb segment of some
/// chunk, or recall can never find it.
#[test]
fn node_docs_chunk_cleanly_and_cover_every_labelled_heading() {
    let Some(dir) = eval_set_dir() else {
        eprintln!("skipped: ../shared/eval/nodejs-docs is not beside this checkout");
        return;
    };
    let opts = ChunkOptions::default();
    let mut seen = HashSet::new();
    let (mut n, mut bytes) = (0usize, 0usize);
    for entry in fs::read_dir(dir.join("corpus")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let chunks = chunk_document(&name, &text, &opts).unwrap();
        check_chunk_invariants(&text, &chunks, opts.max_bytes);
        assert_eq!(chunks, chunk_document(&name, &text, &opts).unwrap());
        for c in &chunks {
            let last = c.breadcrumb.rsplit(" > ").next().unwrap();
            seen.insert((name.clone(), norm(last)));
            bytes += c.text.len();
        }
        n += chunks.len();
    }
    eprintln!(
        "node docs: {n} chunks, {} bytes of text on average",
        bytes / n.max(1)
    );
    let queries = fs::read_to_string(dir.join("queries.jsonl")).unwrap();
    let mut missing = Vec::new();
    for line in queries.lines().filter(|l| !l.trim().is_empty()) {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        for label in q["relevant"].as_array().unwrap() {
            if let (Some(src), Some(h)) = (label["source"].as_str(), label["heading"].as_str()) {
                if !seen.contains(&(src.to_string(), norm(h))) {
                    missing.push(format!("{src}: {h}"));
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "labelled headings with no chunk: {missing:#?}"
    );
}
