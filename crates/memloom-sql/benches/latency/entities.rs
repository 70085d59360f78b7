//! The entity graph: the base chunks' strongest mentions (memloom_core::extract_entities), as
//! entities of both namespaces, and every variation of a chunk mentioning its base chunk's.

use std::collections::BTreeSet;

use futures_util::pin_mut;
use memloom_core::embed;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::corpus::Corpus;
use crate::load::PgVector;
use crate::{BoxError, NS, NS_OTHER};

/// Loads the entities and mentions once the items are in; returns (entities per namespace,
/// mentions).
pub(crate) async fn load_entities(
    client: &Client,
    corpus: &Corpus,
) -> Result<(usize, u64), BoxError> {
    let mut entities: BTreeSet<(&str, &str)> = BTreeSet::new();
    for c in &corpus.chunks {
        for (name, kind, _) in &c.mentions {
            entities.insert((name, kind));
        }
    }
    let vector = client.prepare("SELECT $1::vector").await?.params()[0].clone();
    let sink = client
        .copy_in(
            "COPY memloom_entities (namespace, name, kind, embedding) FROM STDIN (FORMAT binary)",
        )
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::TEXT, Type::TEXT, Type::TEXT, vector]);
    pin_mut!(writer);
    for ns in [NS, NS_OTHER] {
        for (name, kind) in &entities {
            let v = embed(name);
            writer
                .as_mut()
                .write(&[&ns, name, kind, &PgVector(&v)])
                .await?;
        }
    }
    writer.finish().await?;
    client
        .batch_execute(
            "CREATE TEMP TABLE bench_mentions (base integer, name text, kind text, strength real)",
        )
        .await?;
    let sink = client
        .copy_in("COPY bench_mentions FROM STDIN (FORMAT binary)")
        .await?;
    let writer = BinaryCopyInWriter::new(sink, &[Type::INT4, Type::TEXT, Type::TEXT, Type::FLOAT4]);
    pin_mut!(writer);
    for (b, c) in corpus.chunks.iter().enumerate() {
        for (name, kind, strength) in &c.mentions {
            writer
                .as_mut()
                .write(&[&(b as i32), name, kind, strength])
                .await?;
        }
    }
    writer.finish().await?;
    // Foreign keys hold by construction; replica role skips their per-row triggers, including
    // the one that fills a mention's namespace from its item (sql/0012), so it is written here.
    client
        .batch_execute("SET session_replication_role = replica")
        .await?;
    let mentions = client
        .execute(
            "INSERT INTO memloom_mentions (entity_id, item_id, strength, namespace)
             SELECT e.id, i.id, bm.strength, i.namespace
             FROM memloom_items i
             JOIN bench_mentions bm ON bm.base = (i.metadata->>'base')::integer
             JOIN memloom_entities e ON e.namespace = i.namespace AND e.name = bm.name AND e.kind = bm.kind
             WHERE i.metadata ? 'base'",
            &[],
        )
        .await?;
    client
        .batch_execute("SET session_replication_role = origin")
        .await?;
    Ok((entities.len(), mentions))
}
