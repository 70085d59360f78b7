//! static-v1 and static-v2 at the edge (the crate's `static-v1` feature; one table, the version
//! weighs its halves): the worker tokenizes with the core's
//! WordPiece, reads those tokens' rows from the store's table (7.8 MB, too big for any bundle:
//! sql/memloom/13_static_table.sql), and the core sums and finishes them, so the vector is the
//! npm build's bit for bit.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use memloom_core::embed::{
    accumulate_static_rows, finish_static, StaticTokenizer, StaticVersion, STATIC_V1_TABLE_CHECKSUM,
};
use tokio_postgres::Client;

use crate::error::embedder_mismatch;
use crate::ApiError;

thread_local! {
    /// static-v1's tokenizer, built from the store's vocabulary by the isolate's first static-v1
    /// request (one read of ~230 kB) and kept: a worker serves one database.
    static STATIC_TOKENIZER: RefCell<Option<Rc<(StaticTokenizer, u32)>>> = const { RefCell::new(None) };
}

/// Embeds `text` with the static embedder's `version` on `client`'s store: tokenize (the
/// vocabulary read once per isolate), read those tokens' rows (`memloom_static_rows_for`), sum
/// and finish in the core. 409 `embedder_mismatch` when the store holds no table or another one.
pub(crate) async fn embed_static(
    client: &Client,
    text: &str,
    version: StaticVersion,
) -> Result<Vec<f32>, ApiError> {
    let missing = || {
        let id = version.info().id();
        embedder_mismatch(&format!(
            "the worker embeds with {id} but the store holds no static-v1 table (static-v1 and static-v2 share it); load it with `memloom init --database-url URL --embedder {id}` (the npm CLI), or set the worker's MEMLOOM_EMBEDDER to the store's embedder"
        ))
    };
    let failed = |e: memloom_sql::Error| {
        ApiError::unavailable(format!(
            "reading the static-v1 table failed: {e}; retry shortly"
        ))
    };
    let cached = STATIC_TOKENIZER.with(|t| t.borrow().clone());
    let tokenizer = match cached {
        Some(t) => t,
        None => {
            let vocab = memloom_sql::static_vocabulary(client)
                .await
                .map_err(failed)?
                .ok_or_else(missing)?;
            if vocab.checksum != STATIC_V1_TABLE_CHECKSUM {
                return Err(embedder_mismatch(&format!(
                    "the store's static-v1 table has checksum {:016x}, this worker was built for {STATIC_V1_TABLE_CHECKSUM:016x}; load the table shipped with this memloom version (memloom init --embedder static-v1)",
                    vocab.checksum
                )));
            }
            let t = Rc::new((
                StaticTokenizer::from_vocabulary(&vocab.vocabulary, vocab.unk_id),
                vocab.first_id,
            ));
            STATIC_TOKENIZER.with(|c| *c.borrow_mut() = Some(Rc::clone(&t)));
            t
        }
    };
    let (tokenizer, first_id) = &*tokenizer;
    let ids = tokenizer.tokenize(text);
    let rows: HashMap<u32, memloom_sql::StaticRow> = memloom_sql::static_rows(client, &ids)
        .await
        .map_err(failed)?
        .into_iter()
        .collect();
    // Tokens that should have rows but none came back: the table was removed since.
    if rows.is_empty() && ids.iter().any(|id| id >= first_id) {
        return Err(missing());
    }
    let acc = accumulate_static_rows(&ids, |id| rows.get(&id).map(|(w, r)| (*w, r)));
    Ok(finish_static(&acc, text, version))
}
