//! The edge worker's store path through a PL/Proxy front (docs/SCALING.md): every call the
//! worker makes (crates/edge-worker/src/worker/store.rs), made with memloom-sql the same way,
//! against the proxy database of a sharded deployment. `MEMLOOM_TEST_PROXY_URL` names it;
//! `bash scripts/test-scale.sh` sets it up (2 partitions) and runs these. Without it they print
//! a skip line and pass (`scripts/test-sql.sh` has no proxy).

use memloom_sql::{begin_scoped, forget, fuse, history, remember, ForgetTarget, FuseParams};
use tokio_postgres::types::Type;
use tokio_postgres::{Client, NoTls};

use crate::util::{embed, HASH_V1_STORE};

async fn proxy() -> Option<Client> {
    let Ok(url) = std::env::var("MEMLOOM_TEST_PROXY_URL") else {
        eprintln!("skipping: MEMLOOM_TEST_PROXY_URL is not set (bash scripts/test-scale.sh sets up a PL/Proxy front)");
        return None;
    };
    let (client, conn) = tokio_postgres::connect(&url, NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the proxy {url}: {e}"));
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Some(client)
}

/// `SELECT memloom_check_embedder($1, $2, $3)`, as the worker checks every request's embedder.
async fn check_embedder(client: &Client, dims: i32) -> Result<(), tokio_postgres::Error> {
    client
        .query_typed(
            "SELECT memloom_check_embedder($1, $2, $3)",
            &[
                (&HASH_V1_STORE.name, Type::TEXT),
                (&HASH_V1_STORE.version, Type::INT4),
                (&dims, Type::INT4),
            ],
        )
        .await
        .map(|_| ())
}

#[tokio::test]
async fn the_workers_calls_work_through_the_proxy_in_a_scoped_transaction() {
    let Some(client) = proxy().await else {
        return;
    };
    // /v1/health: the store record (the proxy's view of partition 0's).
    let meta = client
        .query_typed_one(
            "SELECT embedder_name, embedder_version, embedder_dims, schema_version FROM memloom_meta",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(meta.get::<_, String>(0), HASH_V1_STORE.name);
    assert_eq!(meta.get::<_, i32>(2), HASH_V1_STORE.dims);
    for ns in ["worker-a", "worker-b"] {
        // One request: a transaction scoped to the token's namespace, as with_db runs it.
        begin_scoped(&client, ns).await.unwrap();
        check_embedder(&client, HASH_V1_STORE.dims).await.unwrap();
        let text = format!("{ns} rotates its keys every 90 days");
        let v1 = remember(&client, ns, Some("rotation"), &text, &embed(&text), None)
            .await
            .unwrap();
        let text2 = format!("{ns} rotates its keys every 30 days");
        let v2 = remember(&client, ns, Some("rotation"), &text2, &embed(&text2), None)
            .await
            .unwrap();
        assert_eq!((v1.version, v2.version), (1, 2));
        client.batch_execute("COMMIT").await.unwrap();

        begin_scoped(&client, ns).await.unwrap();
        let q = "how often are keys rotated";
        let rows = fuse(&client, &FuseParams::new(q, embed(q), ns, 10))
            .await
            .unwrap();
        assert_eq!(
            rows.first().map(|r| r.id),
            Some(v2.id),
            "{ns}: the active version first"
        );
        assert!(
            rows.iter().all(|r| r.content.starts_with(ns)),
            "{ns}: only its own rows"
        );
        let h = history(&client, ns, "rotation").await.unwrap();
        let got: Vec<_> = h
            .iter()
            .map(|v| (v.id, v.version, v.status.as_str()))
            .collect();
        assert_eq!(got, [(v1.id, 1, "superseded"), (v2.id, 2, "active")]);
        client.batch_execute("COMMIT").await.unwrap();
    }
    // Errors keep their SQLSTATE through the proxy: the worker maps data_exception to
    // embedder_mismatch.
    let wrong = check_embedder(&client, HASH_V1_STORE.dims + 1)
        .await
        .unwrap_err();
    assert_eq!(wrong.code().map(|c| c.code()), Some("22000"), "{wrong:?}");
    for ns in ["worker-a", "worker-b"] {
        begin_scoped(&client, ns).await.unwrap();
        let f = forget(&client, ns, &ForgetTarget::Key("rotation"))
            .await
            .unwrap();
        assert_eq!(f.deleted, 2);
        client.batch_execute("COMMIT").await.unwrap();
    }
}
