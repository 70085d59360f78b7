//! The migration runner (contract: `sql/README.md`).

use tokio_postgres::types::Type;
use tokio_postgres::Client;

use crate::{Error, ErrorKind};

/// One forward-only migration: `sql/NNNN_name.sql`.
#[derive(Debug, Clone, Copy)]
pub struct Migration {
    /// The file's numeric prefix.
    pub version: i32,
    /// The file name without `.sql`, e.g. `0001_schema`.
    pub name: &'static str,
    /// The file's text, byte for byte.
    pub sql: &'static str,
}

/// Every migration, in order.
pub const MIGRATIONS: &[Migration] = &[
    Migration {
        version: 1,
        name: "0001_schema",
        sql: include_str!("../../../sql/0001_schema.sql"),
    },
    Migration {
        version: 2,
        name: "0002_recall",
        sql: include_str!("../../../sql/0002_recall.sql"),
    },
    Migration {
        version: 4,
        name: "0004_entity_arm",
        sql: include_str!("../../../sql/0004_entity_arm.sql"),
    },
    Migration {
        version: 5,
        name: "0005_rls",
        sql: include_str!("../../../sql/0005_rls.sql"),
    },
    Migration {
        version: 6,
        name: "0006_latency",
        sql: include_str!("../../../sql/0006_latency.sql"),
    },
    Migration {
        version: 7,
        name: "0007_stats_rls",
        sql: include_str!("../../../sql/0007_stats_rls.sql"),
    },
    Migration {
        version: 8,
        name: "0008_tenant_roles",
        sql: include_str!("../../../sql/0008_tenant_roles.sql"),
    },
    Migration {
        version: 9,
        name: "0009_incremental_stats",
        sql: include_str!("../../../sql/0009_incremental_stats.sql"),
    },
    Migration {
        version: 10,
        name: "0010_fusion",
        sql: include_str!("../../../sql/0010_fusion.sql"),
    },
    Migration {
        version: 11,
        name: "0011_forget",
        sql: include_str!("../../../sql/0011_forget.sql"),
    },
    Migration {
        version: 14,
        name: "0014_inline_vectors",
        sql: include_str!("../../../sql/0014_inline_vectors.sql"),
    },
];

/// The advisory lock key runners serialise on: the bytes of "memloom" as a big-endian integer.
pub const MIGRATION_LOCK_KEY: i64 = 30_792_293_106_544_493;

const CREATE_LEDGER: &str = "CREATE TABLE IF NOT EXISTS memloom_migrations (
    version    integer     PRIMARY KEY,
    name       text        NOT NULL,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)";

/// Applies the migrations the database lacks, each in its own transaction, and returns the
/// versions it applied (empty when the database was current). Safe to call on every start and
/// from concurrent processes: runners queue on an advisory lock.
pub async fn migrate(client: &Client) -> Result<Vec<i32>, Error> {
    let mut applied = Vec::new();
    for m in MIGRATIONS {
        if apply_one(client, m).await? {
            applied.push(m.version);
        }
    }
    Ok(applied)
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
    client
        .query_typed(
            "SELECT pg_advisory_xact_lock($1)",
            &[(&MIGRATION_LOCK_KEY, Type::INT8)],
        )
        .await
        .map_err(|e| Error::db(&ctx("cannot take the migration lock"), e))?;
    client
        .batch_execute(CREATE_LEDGER)
        .await
        .map_err(|e| Error::db(&ctx("cannot create memloom_migrations"), e))?;
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
