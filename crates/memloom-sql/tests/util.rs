use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;

use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

pub use memloom_core::embed;

/// The first column (an id) of every row `sql` returns, in order.
pub async fn ids(
    client: &Client,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
) -> Vec<i64> {
    client
        .query(sql, params)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// SQL inserting `n` generated chunks `doc{g}.md`, g = 1..n, each with a random unit 256-d
/// vector; `ns` and `content` are SQL expressions of g (the namespace, the text).
pub fn generated_chunks(n: i32, ns: &str, content: &str) -> String {
    format!(
        "INSERT INTO memloom_items (namespace, kind, source, content, embedding)
         SELECT {ns}, 'chunk', 'doc' || g || '.md', {content}, v.e
         FROM generate_series(1, {n}) g,
              LATERAL (SELECT l2_normalize(array_agg(random() - 0.5)::real[]::vector) AS e
                       FROM generate_series(1, 256) WHERE g > 0) v;"
    )
}

/// A small deterministic generator (xorshift64*): the same sequence on every run, for the
/// tests' generated corpora and write mixes.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in 0..n.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// hash-v1 as memloom_meta records it.
pub const HASH_V1_STORE: memloom_sql::StoreEmbedder<'static> = memloom_sql::StoreEmbedder {
    name: memloom_core::HASH_V1.name,
    version: memloom_core::HASH_V1.version as i32,
    dims: memloom_core::HASH_V1.dims as i32,
};

/// A fresh database for one test, dropped at the end when the test passes.
pub struct TestDb {
    pub client: Client,
    config: Config,
    admin: Client,
    name: String,
}

fn server_config() -> Option<Config> {
    match std::env::var("MEMLOOM_TEST_DATABASE_URL") {
        Ok(url) if !url.is_empty() => Some(
            url.parse()
                .expect("MEMLOOM_TEST_DATABASE_URL is not a valid PostgreSQL URL"),
        ),
        _ => {
            if std::env::var("MEMLOOM_REQUIRE_PG").as_deref() == Ok("1") {
                panic!("MEMLOOM_REQUIRE_PG=1 but MEMLOOM_TEST_DATABASE_URL is not set");
            }
            eprintln!(
                "skipping: MEMLOOM_TEST_DATABASE_URL is not set (run `bash scripts/test-sql.sh` to test against a throwaway PostgreSQL)"
            );
            None
        }
    }
}

async fn connect(config: &Config) -> Client {
    let (client, conn) = config
        .connect(NoTls)
        .await
        .unwrap_or_else(|e| panic!("cannot connect to the test server: {e}"));
    tokio::spawn(async move {
        let _ = conn.await;
    });
    client
}

impl TestDb {
    /// An empty database (no migrations), or None when tests are skipped.
    pub async fn empty(tag: &str) -> Option<TestDb> {
        static SEQ: AtomicU32 = AtomicU32::new(0);
        let server = server_config()?;
        let admin = connect(&server).await;
        let name = format!(
            "memloom_t_{tag}_{}_{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        for sql in [
            format!("DROP DATABASE IF EXISTS {name}"),
            format!("CREATE DATABASE {name}"),
        ] {
            admin
                .batch_execute(&sql)
                .await
                .unwrap_or_else(|e| panic!("cannot create test database {name}: {e:?}"));
        }
        let mut config = server.clone();
        config.dbname(&name);
        let client = connect(&config).await;
        Some(TestDb {
            client,
            config,
            admin,
            name,
        })
    }

    /// A migrated database, initialised for hash-v1 (256 dimensions, HNSW indexes).
    pub async fn new(tag: &str) -> Option<TestDb> {
        let db = TestDb::migrated(tag).await?;
        memloom_sql::init_store(&db.client, &HASH_V1_STORE, true)
            .await
            .expect("init_store");
        Some(db)
    }

    /// A migrated database whose embedder is not recorded yet.
    pub async fn migrated(tag: &str) -> Option<TestDb> {
        let db = TestDb::empty(tag).await?;
        memloom_sql::migrate(&db.client)
            .await
            .expect("migrations apply");
        Some(db)
    }

    /// Another connection to this test's database.
    pub async fn connect(&self) -> Client {
        connect(&self.config).await
    }

    /// A connection to this test's database as another role (no password: trust auth).
    pub async fn connect_as(&self, user: &str) -> Client {
        let mut config = self.config.clone();
        config.user(user);
        connect(&config).await
    }

    /// Creates `role`, an application role that row-level security binds (no superuser, no
    /// BYPASSRLS), with the privileges a memloom client needs, and lets it work in `namespaces`
    /// of this database (sql/0008: `memloom_grant_namespace`; `"*"` = every namespace). Roles
    /// are cluster-wide and the tests run concurrently, so each test names its own (two CREATE
    /// ROLEs of one name race); grants live in this test's database.
    pub async fn create_bound_role(&self, role: &str, namespaces: &[&str]) {
        self.client
            .batch_execute(&format!(
                "DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{role}') THEN \
                   CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS; END IF; END $$; \
                 GRANT USAGE ON SCHEMA public TO {role}; \
                 GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}; \
                 GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO {role};"
            ))
            .await
            .unwrap();
        for ns in namespaces {
            self.client
                .execute("SELECT memloom_grant_namespace($1, $2)", &[&role, ns])
                .await
                .unwrap();
        }
    }

    /// A connection whose NOTICE messages arrive on the returned channel.
    pub async fn connect_with_notices(&self) -> (Client, mpsc::Receiver<String>) {
        self.connect_with_notices_as(None).await
    }

    /// As `connect_with_notices`, as `user` when given.
    pub async fn connect_with_notices_as(
        &self,
        user: Option<&str>,
    ) -> (Client, mpsc::Receiver<String>) {
        let mut config = self.config.clone();
        if let Some(user) = user {
            config.user(user);
        }
        let (client, mut conn) = config.connect(NoTls).await.expect("connect");
        let (tx, rx) = mpsc::channel();
        tokio::spawn(async move {
            let mut messages = futures_util::stream::poll_fn(move |cx| conn.poll_message(cx));
            while let Some(Ok(message)) = futures_util::StreamExt::next(&mut messages).await {
                if let AsyncMessage::Notice(notice) = message {
                    let _ = tx.send(notice.message().to_string());
                }
            }
        });
        (client, rx)
    }

    /// `pg_dump --data-only` of this test's database (every table's rows, as SQL text).
    pub fn pg_dump_data(&self) -> String {
        use tokio_postgres::config::Host;
        let mut cmd = std::process::Command::new("/usr/lib/postgresql/15/bin/pg_dump");
        cmd.args(["--data-only", "--no-password"]);
        if let Some(Host::Tcp(h)) = self.config.get_hosts().first() {
            cmd.args(["--host", h]);
        }
        if let Some(p) = self.config.get_ports().first() {
            cmd.args(["--port", &p.to_string()]);
        }
        if let Some(u) = self.config.get_user() {
            cmd.args(["--username", u]);
        }
        cmd.args(["--dbname", &self.name]);
        let out = cmd
            .output()
            .expect("pg_dump runs (PostgreSQL 15 client, scripts/pg.sh install)");
        assert!(
            out.status.success(),
            "pg_dump failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("pg_dump writes UTF-8")
    }

    pub async fn drop_db(self) {
        let TestDb {
            client,
            admin,
            name,
            ..
        } = self;
        drop(client);
        let _ = admin
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .await;
    }

    /// Inserts a chunk; returns its id.
    pub async fn chunk(&self, ns: &str, source: &str, content: &str) -> i64 {
        self.client
            .query_one(
                "INSERT INTO memloom_items (namespace, kind, source, content, embedding) \
                 VALUES ($1, 'chunk', $2, $3, $4::real[]::vector) RETURNING id",
                &[&ns, &source, &content, &embed(content)],
            )
            .await
            .expect("insert chunk")
            .get(0)
    }

    /// Inserts an entity (embedded by its name) and its mentions; returns its id.
    pub async fn entity(&self, ns: &str, name: &str, mentions: &[(i64, f32)]) -> i64 {
        let id: i64 = self
            .client
            .query_one(
                "INSERT INTO memloom_entities (namespace, name, kind, embedding) \
                 VALUES ($1, $2, 'concept', $3::real[]::vector) RETURNING id",
                &[&ns, &name, &embed(name)],
            )
            .await
            .expect("insert entity")
            .get(0);
        for (item, strength) in mentions {
            self.client
                .execute(
                    "INSERT INTO memloom_mentions (entity_id, item_id, strength) VALUES ($1, $2, $3)",
                    &[&id, item, strength],
                )
                .await
                .expect("insert mention");
        }
        id
    }

    pub async fn refresh_stats(&self, ns: &str) {
        self.client
            .execute("SELECT memloom_refresh_stats($1)", &[&ns])
            .await
            .expect("refresh stats");
    }

    /// The keyword arm's ranking alone.
    pub async fn keyword_arm(&self, ns: &str, query: &str) -> Vec<i64> {
        self.client
            .query(
                "SELECT id FROM memloom_keyword_arm($1, $2, 50, NULL, 1000)",
                &[&query, &ns],
            )
            .await
            .expect("keyword arm")
            .iter()
            .map(|r| r.get(0))
            .collect()
    }

    pub async fn recall(&self, ns: &str, query: &str, limit: i32) -> Vec<memloom_sql::FusedRow> {
        let params = memloom_sql::FuseParams::new(query, embed(query), ns, limit);
        memloom_sql::fuse(&self.client, &params)
            .await
            .expect("memloom_fuse")
    }
}
