//! The migration runner (contract: `sql/README.md`): a fresh install of the current definition
//! (`sql/memloom/`), or the frozen migrations (`sql/migrations/`) an existing store lacks.

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::{Error, ErrorKind};

/// One frozen migration: `sql/migrations/NNNN_name.sql`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The file's numeric prefix.
    pub version: i32,
    /// The file name without `.sql`, e.g. `0001_schema`.
    pub name: &'static str,
    /// The file's text, byte for byte.
    pub sql: &'static str,
}

// `MIGRATIONS` (every frozen migration, in order) and `CURRENT_DEFINITION` (the files of
// `sql/memloom/`, in order), listed by build.rs from the folders.
include!(concat!(env!("OUT_DIR"), "/sql_files.rs"));

/// The advisory lock key runners serialise on: the bytes of "memloom" as a big-endian integer.
pub const MIGRATION_LOCK_KEY: i64 = 30_792_293_106_544_493;

const CREATE_LEDGER: &str = "CREATE TABLE IF NOT EXISTS memloom_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)";

/// Brings the database to the current schema and returns the versions it recorded (empty
/// when the database was current). An empty database gets the current definition
/// (`sql/memloom/`, one transaction) and every frozen migration recorded in the ledger; an
/// existing store gets the frozen migrations it lacks, each in its own transaction. Safe to
/// call on every start and from concurrent processes: runners queue on an advisory lock.
pub async fn migrate(client: &Client) -> Result<Vec<i32>, Error> {
    if let Some(installed) = install_current(client).await? {
        return Ok(installed);
    }
    let mut applied = Vec::new();
    for m in MIGRATIONS {
        if apply_migration(client, m).await? {
            applied.push(m.version);
        }
    }
    Ok(applied)
}

/// On an empty ledger: the current definition, then every frozen migration recorded as
/// applied, in one transaction. None (and nothing done) when the ledger has a row.
async fn install_current(client: &Client) -> Result<Option<Vec<i32>>, Error> {
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| Error::db("cannot begin the schema installation", e))?;
    let outcome = install_in_transaction(client).await;
    let end = if matches!(outcome, Ok(Some(_))) {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = client.batch_execute(end).await;
    let installed = outcome?;
    ended.map_err(|e| Error::db("cannot commit the schema installation", e))?;
    Ok(installed)
}

async fn install_in_transaction(client: &Client) -> Result<Option<Vec<i32>>, Error> {
    lock_and_create_ledger(client, "schema installation").await?;
    let recorded: i64 = client
        .query_typed_one("SELECT count(*) FROM memloom_migrations", &[])
        .await
        .map_err(|e| Error::db("cannot read memloom_migrations", e))?
        .get(0);
    if recorded > 0 {
        return Ok(None);
    }
    for (name, sql) in CURRENT_DEFINITION {
        client.batch_execute(sql).await.map_err(|e| {
            Error::db(
                &format!("cannot install the memloom schema (sql/memloom/{name}.sql)"),
                e,
            )
        })?;
    }
    let versions: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
    let names: Vec<&str> = MIGRATIONS.iter().map(|m| m.name).collect();
    let texts: Vec<&str> = MIGRATIONS.iter().map(|m| m.sql).collect();
    client
        .query_typed(
            "INSERT INTO memloom_migrations (version, name, checksum)
             SELECT v, n, encode(sha256(convert_to(t, 'UTF8')), 'hex')
             FROM unnest($1::integer[], $2::text[], $3::text[]) AS m(v, n, t)",
            &[
                (&versions, Type::INT4_ARRAY),
                (&names, Type::TEXT_ARRAY),
                (&texts, Type::TEXT_ARRAY),
            ],
        )
        .await
        .map_err(|e| Error::db("cannot record the migrations in memloom_migrations", e))?;
    Ok(Some(versions))
}

async fn lock_and_create_ledger(client: &Client, what: &str) -> Result<(), Error> {
    client
        .query_typed(
            "SELECT pg_advisory_xact_lock($1)",
            &[(&MIGRATION_LOCK_KEY, Type::INT8)],
        )
        .await
        .map_err(|e| Error::db(&format!("{what}: cannot take the migration lock"), e))?;
    client
        .batch_execute(CREATE_LEDGER)
        .await
        .map_err(|e| Error::db(&format!("{what}: cannot create memloom_migrations"), e))?;
    Ok(())
}

/// Applies one frozen migration in its own transaction, as [`migrate`] does on an existing
/// store; false when the ledger records it already (with the same checksum). For a store at
/// an older version, e.g. to test an upgrade. It does not check that the earlier migrations
/// were applied: [`migrate`] applies them in order.
pub async fn apply_migration(client: &Client, m: &Migration) -> Result<bool, Error> {
    apply_one(client, m).await
}

async fn apply_one(client: &Client, m: &Migration) -> Result<bool, Error> {
    client
        .batch_execute("BEGIN")
        .await
        .map_err(|e| Error::db("cannot begin a migration transaction", e))?;
    let outcome = apply_in_transaction(client, m).await;
    let end = if matches!(outcome, Ok(true)) {
        "COMMIT"
    } else {
        "ROLLBACK"
    };
    let ended = client.batch_execute(end).await;
    let applied = outcome?;
    ended.map_err(|e| Error::db(&format!("cannot commit migration {}", m.name), e))?;
    Ok(applied)
}

async fn apply_in_transaction(client: &Client, m: &Migration) -> Result<bool, Error> {
    let ctx = |what: &str| format!("migration {}: {what}", m.name);
    lock_and_create_ledger(client, &format!("migration {}", m.name)).await?;
    let newest: Option<i32> = client
        .query_typed_one("SELECT max(version) FROM memloom_migrations", &[])
        .await
        .map_err(|e| Error::db(&ctx("cannot read memloom_migrations"), e))?
        .get(0);
    let latest_known = MIGRATIONS.last().map_or(0, |l| l.version);
    if let Some(newest) = newest.filter(|&n| n > latest_known) {
        return Err(Error::new(
            ErrorKind::Migration,
            format!(
                "the database has schema version {newest}, newer than this memloom's {latest_known}; upgrade memloom"
            ),
        ));
    }
    let checksum: String = client
        .query_typed_one(
            "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')",
            &[(&m.sql, Type::TEXT)],
        )
        .await
        .map_err(|e| Error::db(&ctx("cannot compute the checksum"), e))?
        .get(0);
    let recorded = client
        .query_typed_opt(
            "SELECT checksum FROM memloom_migrations WHERE version = $1",
            &[(&m.version, Type::INT4)],
        )
        .await
        .map_err(|e| Error::db(&ctx("cannot read memloom_migrations"), e))?;
    if let Some(row) = recorded {
        let recorded: String = row.get(0);
        if recorded != checksum {
            return Err(Error::new(
                ErrorKind::Migration,
                format!(
                    "migration {} was applied with checksum {recorded}, but this memloom ships {checksum}; migrations are forward-only: restore the file and add a new one",
                    m.name
                ),
            ));
        }
        return Ok(false);
    }
    client
        .batch_execute(m.sql)
        .await
        .map_err(|e| Error::db(&ctx("failed"), e))?;
    client
        .query_typed(
            "INSERT INTO memloom_migrations (version, name, checksum) VALUES ($1, $2, $3)",
            &[
                (&m.version, Type::INT4),
                (&m.name, Type::TEXT),
                (&checksum, Type::TEXT),
            ],
        )
        .await
        .map_err(|e| Error::db(&ctx("cannot record it"), e))?;
    Ok(true)
}
