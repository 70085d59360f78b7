//! Throughput of the chunker and the embedder over the Node.js docs of ../shared/eval, with
//! text-splitter's MarkdownSplitter at the same cap as the baseline, measured in the same run.
//!
//! `cargo bench -p memloom-core --bench throughput`. Prints MB/s (median of the timed rounds)
//! and the ratio to the baseline. Each timed round also checks its output against the first
//! round, so a fast wrong answer cannot pass.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use memloom_core::{
    chunk_document, embed, extract_entities, ChunkOptions, StaticModel, StaticVersion,
};
use text_splitter::MarkdownSplitter;

const MIN_ROUNDS: usize = 5;
const MIN_TIME: Duration = Duration::from_secs(2);

fn main() {
    let dir =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/eval/nodejs-docs/corpus");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        println!(
            "skipped: {} is not there (the eval set lives beside the checkout)",
            dir.display()
        );
        return;
    };
    let mut docs: Vec<(String, String)> = entries
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect();
    docs.sort();
    let bytes: usize = docs.iter().map(|(_, t)| t.len()).sum();
    let opts = ChunkOptions::default();
    println!(
        "corpus: {} files, {:.2} MB; chunk cap {} bytes",
        docs.len(),
        bytes as f64 / 1e6,
        opts.max_bytes
    );

    let chunk_all = || -> usize {
        docs.iter()
            .map(|(name, text)| chunk_document(name, text, &opts).unwrap().len())
            .sum()
    };
    let chunks = chunk_all();
    let t_chunk = time(|| assert_eq!(black_box(chunk_all()), chunks));

    // The floor under any pulldown-cmark chunker: walking every event and doing nothing else.
    let parse_all = || -> usize {
        docs.iter()
            .map(|(_, t)| {
                pulldown_cmark::Parser::new_ext(t, pulldown_cmark::Options::ENABLE_TABLES)
                    .into_offset_iter()
                    .count()
            })
            .sum()
    };
    let events = parse_all();
    let t_parse = time(|| assert_eq!(black_box(parse_all()), events));

    let splitter = MarkdownSplitter::new(opts.max_bytes);
    let split_all = || -> usize { docs.iter().map(|(_, t)| splitter.chunks(t).count()).sum() };
    let baseline_chunks = split_all();
    let t_split = time(|| assert_eq!(black_box(split_all()), baseline_chunks));

    let contents: Vec<String> = docs
        .iter()
        .flat_map(|(name, text)| chunk_document(name, text, &opts).unwrap())
        .map(|c| c.content)
        .collect();
    let content_bytes: usize = contents.iter().map(String::len).sum();
    let first = embed(&contents[0]);
    let t_embed = time(|| {
        for c in &contents {
            black_box(embed(c));
        }
        assert_eq!(embed(&contents[0]), first);
    });

    // static-v2 (static-v1 costs the same: one table, other weights): the table as the package
    // ships it; tokenize + sum + hash-v1 for the other half.
    let table = std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/static-v1.bin"))
        .expect("crates/memloom-core/data/static-v1.bin");
    let t_load = time(|| {
        black_box(StaticModel::from_bytes(&table).unwrap());
    });
    let model = StaticModel::from_bytes(&table).unwrap();
    let first_static = model.embed(&contents[0], StaticVersion::V2);
    let t_static = time(|| {
        for c in &contents {
            black_box(model.embed(c, StaticVersion::V2));
        }
        assert_eq!(model.embed(&contents[0], StaticVersion::V2), first_static);
    });
    let tokens: usize = contents.iter().map(|c| model.tokenize(c).len()).sum();
    let t_tokenize = time(|| {
        let n: usize = contents
            .iter()
            .map(|c| black_box(model.tokenize(c)).len())
            .sum();
        assert_eq!(n, tokens);
    });

    let texts: Vec<(String, String)> = docs
        .iter()
        .flat_map(|(name, text)| chunk_document(name, text, &opts).unwrap())
        .map(|c| (c.text, c.breadcrumb))
        .collect();
    let text_bytes: usize = texts.iter().map(|(t, _)| t.len()).sum();
    let mentions: usize = texts
        .iter()
        .map(|(t, b)| extract_entities(t, Some(b)).len())
        .sum();
    let t_entities = time(|| {
        let n: usize = texts
            .iter()
            .map(|(t, b)| black_box(extract_entities(t, Some(b))).len())
            .sum();
        assert_eq!(n, mentions);
    });

    let mbs = |b: usize, d: Duration| b as f64 / 1e6 / d.as_secs_f64();
    println!(
        "memloom chunker:      {:8.1} MB/s  ({chunks} chunks, {} bytes of text on average)",
        mbs(bytes, t_chunk),
        contents.iter().map(String::len).sum::<usize>() / chunks.max(1)
    );
    println!(
        "pulldown-cmark alone: {:8.1} MB/s  ({events} events; the parse every chunker here pays)",
        mbs(bytes, t_parse)
    );
    println!(
        "text-splitter 0.33:   {:8.1} MB/s  ({baseline_chunks} chunks, MarkdownSplitter capacity {})",
        mbs(bytes, t_split),
        opts.max_bytes
    );
    println!(
        "ratio chunker / text-splitter: {:.1}x",
        t_split.as_secs_f64() / t_chunk.as_secs_f64()
    );
    println!(
        "hash-v1 embedder:     {:8.1} MB/s  ({} chunks, {:.2} MB of stored content)",
        mbs(content_bytes, t_embed),
        contents.len(),
        content_bytes as f64 / 1e6
    );
    println!(
        "static-v2 embedder:   {:8.1} MB/s  ({:.0} chunks/s; hash-v1 half included)",
        mbs(content_bytes, t_static),
        contents.len() as f64 / t_static.as_secs_f64()
    );
    println!(
        "  its tokenizer:      {:8.1} MB/s  ({tokens} WordPiece tokens)",
        mbs(content_bytes, t_tokenize)
    );
    println!(
        "  table load:         {:8.1} ms    ({} bytes, checked and copied)",
        t_load.as_secs_f64() * 1e3,
        table.len()
    );
    println!(
        "entity extractor:     {:8.1} MB/s  ({mentions} mentions over {:.2} MB of chunk text)",
        mbs(text_bytes, t_entities),
        text_bytes as f64 / 1e6
    );
}

/// Median wall time of at least MIN_ROUNDS rounds and MIN_TIME in all.
fn time(mut f: impl FnMut()) -> Duration {
    f(); // warm up
    let mut samples = Vec::new();
    let start = Instant::now();
    while samples.len() < MIN_ROUNDS || start.elapsed() < MIN_TIME {
        let t = Instant::now();
        f();
        samples.push(t.elapsed());
    }
    samples.sort();
    samples[samples.len() / 2]
}
