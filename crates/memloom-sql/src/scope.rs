//! Tenant scope: the `memloom.namespace` setting that the row-level security of
//! `sql/memloom/10_security.sql` compares every row of the pool tables against.

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::Error;

/// The statement that scopes a session; `$1` is the namespace.
pub const SCOPE_SQL: &str = "SELECT set_config('memloom.namespace', $1, false)";

/// Scopes this session to `namespace`: under a role bound by row-level security (neither
/// superuser nor BYPASSRLS), every later statement on this connection sees and writes only that
/// namespace's rows, whatever its WHERE clause says. Call it once, right after connecting and
/// before any other statement. One round trip. Behind a transaction-mode pooler the setting
/// stays with the server connection it ran on, so there scope each transaction instead.
pub async fn set_namespace(client: &Client, namespace: &str) -> Result<(), Error> {
    client
        .query_typed(SCOPE_SQL, &[(&namespace, Type::TEXT)])
        .await
        .map_err(|e| Error::db("cannot set the session's namespace", e))?;
    Ok(())
}

/// Opens a transaction scoped to `namespace` (`set_config(..., true)`: the setting ends with
/// the transaction), in one round trip. For connections behind a transaction-mode pooler
/// (PgBouncer, Hyperdrive), where a session setting would stay on whichever server connection
/// ran it: the pooler keeps the transaction on one server connection. End it with `COMMIT`
/// (`client.batch_execute("COMMIT")`); a dropped connection rolls it back.
pub async fn begin_scoped(client: &Client, namespace: &str) -> Result<(), Error> {
    // The simple query protocol takes no parameters: the namespace is quoted as a literal.
    let literal = format!("'{}'", namespace.replace('\'', "''"));
    client
        .batch_execute(&format!(
            "BEGIN; SELECT set_config('memloom.namespace', {literal}, true)"
        ))
        .await
        .map_err(|e| Error::db("cannot open a transaction scoped to the namespace", e))
}
