//! The current definition (`sql/memloom/`) and the frozen migrations (`sql/migrations/`) are
//! one schema: a store upgraded from any released version has exactly the catalog of a fresh
//! install (`tests/catalog/catalog.sql`: every memloom function's full definition and
//! attributes, comments, tables and columns, constraints, indexes, triggers, policies,
//! row-level security, grants, options, the store's record and the ledger). A migration added
//! without the same change in the current definition, or the reverse, fails here.

use std::collections::BTreeSet;

use memloom_sql::{apply_migration, migrate, MIGRATIONS};

use crate::util::TestDb;

const CATALOG: &str = include_str!("../../../tests/catalog/catalog.sql");
const SHA256SUMS: &str = include_str!("../../../sql/migrations/SHA256SUMS");

type Row = (String, String, String);

async fn catalog(db: &TestDb) -> Vec<Row> {
    db.client
        .query(CATALOG, &[])
        .await
        .unwrap_or_else(|e| panic!("tests/catalog/catalog.sql failed: {e:?}"))
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2)))
        .collect()
}

/// Rows only one side has, shown whole, at most a few of each.
fn assert_same_catalog(upgraded: &[Row], fresh: &[Row], what: &str) {
    let a: BTreeSet<&Row> = upgraded.iter().collect();
    let b: BTreeSet<&Row> = fresh.iter().collect();
    let show = |rows: Vec<&&Row>| {
        rows.iter()
            .take(6)
            .map(|(s, o, d)| format!("  [{s}] {o}:\n{d}\n"))
            .collect::<String>()
    };
    let only_upgraded: Vec<&&Row> = a.difference(&b).collect();
    let only_fresh: Vec<&&Row> = b.difference(&a).collect();
    assert!(
        only_upgraded.is_empty() && only_fresh.is_empty(),
        "{what}: the upgraded store and a fresh install differ ({} rows only upgraded, {} only fresh). \
         A schema change goes into sql/memloom/ AND a new frozen migration (sql/README.md, \
         \"Changing the schema\").\nonly in the upgraded store:\n{}\nonly in the fresh install:\n{}",
        only_upgraded.len(),
        only_fresh.len(),
        show(only_upgraded),
        show(only_fresh),
    );
    assert_eq!(
        upgraded.len(),
        fresh.len(),
        "{what}: duplicate catalog rows"
    );
}

#[tokio::test]
async fn a_store_upgraded_from_any_released_version_has_the_catalog_of_a_fresh_install() {
    let Some(fresh) = TestDb::empty("catalog_fresh").await else {
        return;
    };
    let all: Vec<i32> = MIGRATIONS.iter().map(|m| m.version).collect();
    assert_eq!(migrate(&fresh.client).await.unwrap(), all);
    let want = catalog(&fresh).await;
    // The catalog query sees what it claims to (an empty or broken query would compare equal).
    for (section, at_least) in [
        ("function", 30),
        ("function attributes", 30),
        ("column", 40),
        ("constraint", 20),
        ("index", 15),
        ("trigger", 7),
        ("policy", 6),
        ("relation", 25),
        ("row", 1 + MIGRATIONS.len()),
    ] {
        let n = want.iter().filter(|r| r.0 == section).count();
        assert!(
            n >= at_least,
            "catalog section {section}: {n} rows, expected at least {at_least}"
        );
    }
    let fuse = want
        .iter()
        .find(|r| r.0 == "function" && r.1.starts_with("memloom_fuse("))
        .expect("memloom_fuse in the catalog");
    assert!(
        fuse.2.contains("SECURITY DEFINER") && fuse.2.contains("SET search_path"),
        "{}",
        fuse.2
    );

    // A store left at each released version (0001 alone, 0001..0002, ...) upgrades through the
    // remaining frozen migrations to the same catalog.
    for upto in 0..MIGRATIONS.len() - 1 {
        let Some(old) = TestDb::empty("catalog_upgrade").await else {
            return;
        };
        for m in &MIGRATIONS[..=upto] {
            assert!(apply_migration(&old.client, m).await.unwrap(), "{}", m.name);
        }
        let rest: Vec<i32> = MIGRATIONS[upto + 1..].iter().map(|m| m.version).collect();
        assert_eq!(migrate(&old.client).await.unwrap(), rest);
        let from = MIGRATIONS[upto].name;
        assert_same_catalog(
            &catalog(&old).await,
            &want,
            &format!("upgraded from {from}"),
        );
        old.drop_db().await;
    }
    fresh.drop_db().await;
}

/// The checksums every existing store's ledger holds: a frozen migration never changes, and
/// every one is listed (`cd sql/migrations && sha256sum -c SHA256SUMS` checks the same).
#[tokio::test]
async fn frozen_migrations_keep_their_released_checksums() {
    let Some(db) = TestDb::empty("catalog_sums").await else {
        return;
    };
    let listed: Vec<(String, String)> = SHA256SUMS
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (sum, file) = l
                .split_once("  ")
                .expect("SHA256SUMS: `checksum  file` lines");
            (file.trim_end_matches(".sql").to_string(), sum.to_string())
        })
        .collect();
    let mut got = Vec::new();
    for m in MIGRATIONS {
        let sum: String = db
            .client
            .query_one(
                "SELECT encode(sha256(convert_to($1, 'UTF8')), 'hex')",
                &[&m.sql],
            )
            .await
            .unwrap()
            .get(0);
        got.push((m.name.to_string(), sum));
    }
    assert_eq!(
        got, listed,
        "sql/migrations/ differs from its SHA256SUMS: a released migration was edited (restore it \
         and add a new one), or a new one is not listed yet (add its line)"
    );
    db.drop_db().await;
}

/// A tenant role provisioned before schema 24 (docs/SECURITY.md: `GRANT ... ON ALL TABLES`)
/// has no privilege on the table 0024 creates unless the migration gives it the pool's: without
/// them its index runs, `memloom_stats` and exports fail with "permission denied".
#[tokio::test]
async fn a_role_provisioned_before_schema_24_keeps_its_privileges_on_the_index_marks() {
    let Some(db) = TestDb::empty("catalog_grants").await else {
        return;
    };
    let before: Vec<_> = MIGRATIONS.iter().filter(|m| m.version < 24).collect();
    for m in &before {
        assert!(apply_migration(&db.client, m).await.unwrap(), "{}", m.name);
    }
    let role = "memloom_catalog_grants_tenant";
    db.create_bound_role(role, &["t"]).await;
    migrate(&db.client).await.unwrap();
    for privilege in ["SELECT", "INSERT", "UPDATE", "DELETE"] {
        let has: bool = db
            .client
            .query_one(
                "SELECT has_table_privilege($1, 'memloom_indexed', $2)",
                &[&role, &privilege],
            )
            .await
            .unwrap()
            .get(0);
        assert!(
            has,
            "{role} lacks {privilege} on memloom_indexed after the upgrade"
        );
    }
    db.drop_db().await;
}
