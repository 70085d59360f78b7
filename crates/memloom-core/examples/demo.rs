//! The core on its own: chunk the sample notes, embed them with hash-v1, rank them for a query
//! by cosine (a stand-in for the vector arm) and by exact-word overlap (a stand-in for the
//! keyword arm), and fuse the two rankings with weighted RRF. The real arms run in Postgres
//! (`sql/`); this shows what the core contributes.
//!
//! `cargo run -p memloom-core --example demo [QUERY...]`

use std::path::Path;

use memloom_core::embed::cosine;
use memloom_core::{chunk_document, embed, fuse, ArmRankings, Chunk, ChunkOptions, FuseParams};

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/notes");
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&root)
        .expect("examples/notes is part of the repository")
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    for path in names {
        let source = path.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        chunks.extend(chunk_document(&source, &text, &ChunkOptions::default()).unwrap());
    }
    println!("{} chunks from {}", chunks.len(), root.display());
    let vectors: Vec<Vec<f32>> = chunks.iter().map(|c| embed(&c.content)).collect();

    let args: Vec<String> = std::env::args().skip(1).collect();
    let queries = if args.is_empty() {
        vec![
            "ERR_REQUIRE_ESM".to_string(),
            "how many clients can connect to the database at once".to_string(),
            "nginx.conf".to_string(),
        ]
    } else {
        vec![args.join(" ")]
    };
    for query in queries {
        let q = embed(&query);
        let mut by_cosine: Vec<(usize, f64)> =
            vectors.iter().map(|v| cosine(&q, v)).enumerate().collect();
        by_cosine.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        let mut by_words: Vec<(usize, usize)> = chunks
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let text = c.content.to_lowercase();
                (
                    i,
                    words.iter().filter(|w| text.contains(w.as_str())).count(),
                )
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        by_words.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let arms = ArmRankings {
            vector: by_cosine.iter().take(10).map(|(i, _)| *i as i64).collect(),
            keyword: by_words.iter().take(10).map(|(i, _)| *i as i64).collect(),
            entity: vec![],
        };
        println!("\nquery: {query}");
        for hit in fuse(&arms, &FuseParams::default()).unwrap().iter().take(3) {
            let c = &chunks[hit.id as usize];
            println!(
                "  {:.4}  {} | {}  (vector #{}, keyword #{}, cosine {:.3})",
                hit.rrf_score,
                c.source,
                c.breadcrumb,
                hit.ranks.vector.map_or("-".into(), |r| r.to_string()),
                hit.ranks.keyword.map_or("-".into(), |r| r.to_string()),
                cosine(&q, &vectors[hit.id as usize]),
            );
        }
    }
}
