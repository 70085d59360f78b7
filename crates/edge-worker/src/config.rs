//! Configuration from the worker's vars, secrets and bindings, parsed into checked values.
//! [`WorkerConfig::read`] is the one place that reads them: the fetch handler calls it once per
//! request, at the door, and passes the result down; nothing deeper reads `env`. Error texts
//! name the variable, never its value (a `DATABASE_URL` holds a password).

use memloom_core::embed::{choose_embedder, EmbedderChoice, EmbedderSettings, MAX_API_DIMS};
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;

use crate::auth::TokenMap;
use crate::ApiError;

/// Everything the worker is configured with, read once at the door.
///
/// A setting that is missing or invalid is kept as its [`ConfigError`] and answered (500
/// `misconfigured`) only by the requests that need it, at the point they need it: `/v1/health`
/// works without `MEMLOOM_TOKENS`, and a malformed recall body is still a 400 when the
/// database is not configured.
#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// `MEMLOOM_TOKENS`: token SHA-256 -> namespace.
    pub tokens: Result<TokenMap, ConfigError>,
    /// `MEMLOOM_EMBED_URL` / `_MODEL` / `_DIMS`: the query embedder.
    pub embedder: Result<EmbedderConfig, ConfigError>,
    /// `MEMLOOM_EMBED_KEY`: the embeddings API's key.
    pub embed_key: Option<String>,
    /// The Hyperdrive binding `DB` or `DATABASE_URL`, and the deadlines.
    pub database: Result<Database, ConfigError>,
    /// `"hyperdrive"` when the `DB` binding is present, else `"database_url"` (for health).
    pub via: &'static str,
}

/// The Hyperdrive binding's connection details, as workerd gives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HyperdriveBinding {
    pub connection_string: String,
    pub host: String,
    pub port: u16,
}

/// Where the database is and how long to wait for it.
#[derive(Debug, Clone)]
pub struct Database {
    pub target: DbTarget,
    pub timeouts: Timeouts,
}

/// A setting the worker cannot use: `what` goes into the client's 500 `misconfigured` message
/// (it names the setting, never its value); `detail` only into the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub what: String,
    pub detail: Option<String>,
}

impl ConfigError {
    fn new(what: impl Into<String>) -> ConfigError {
        ConfigError {
            what: what.into(),
            detail: None,
        }
    }

    fn with_detail(what: &str, detail: String) -> ConfigError {
        ConfigError {
            what: what.to_string(),
            detail: Some(detail),
        }
    }

    /// The client's answer.
    pub fn api_error(&self) -> ApiError {
        ApiError::misconfigured(&self.what)
    }
}

impl WorkerConfig {
    /// Reads every setting. `var` returns a var's or secret's value (`None` when unset or
    /// empty); `hyperdrive` is the `DB` binding when there is one (it wins over `DATABASE_URL`).
    pub fn read(
        var: impl Fn(&str) -> Option<String>,
        hyperdrive: Option<HyperdriveBinding>,
    ) -> WorkerConfig {
        let tokens = match var("MEMLOOM_TOKENS") {
            None => Err(ConfigError::new("the MEMLOOM_TOKENS secret is not set")),
            Some(raw) => TokenMap::parse(&raw).map_err(|e| {
                ConfigError::with_detail("the MEMLOOM_TOKENS secret is not a valid token map", e)
            }),
        };
        let embedder = embedder_from_vars(
            var("MEMLOOM_EMBEDDER").as_deref(),
            var("MEMLOOM_EMBED_URL").as_deref(),
            var("MEMLOOM_EMBED_MODEL").as_deref(),
            var("MEMLOOM_EMBED_DIMS").as_deref(),
        )
        .map_err(|e| {
            ConfigError::with_detail(
                "the embedder settings (MEMLOOM_EMBEDDER, MEMLOOM_EMBED_*) are invalid",
                e,
            )
        })
        .and_then(built_in);
        let via = if hyperdrive.is_some() {
            "hyperdrive"
        } else {
            "database_url"
        };
        let target = match &hyperdrive {
            Some(hd) => hyperdrive_target(hd),
            None => match var("DATABASE_URL") {
                Some(url) => db_target(&url, "DATABASE_URL"),
                None => Err(
                    "neither a Hyperdrive binding DB nor a DATABASE_URL secret is set".to_string(),
                ),
            },
        };
        let database = target.map_err(ConfigError::new).and_then(|target| {
            let timeouts = Timeouts::from_vars(
                var("MEMLOOM_CONNECT_TIMEOUT_MS").as_deref(),
                var("MEMLOOM_QUERY_TIMEOUT_MS").as_deref(),
            )
            .map_err(ConfigError::new)?;
            Ok(Database { target, timeouts })
        });
        WorkerConfig {
            tokens,
            embedder,
            embed_key: var("MEMLOOM_EMBED_KEY"),
            database,
            via,
        }
    }
}

/// Default time to open the TCP connection and finish the Postgres startup.
pub const DEFAULT_CONNECT_TIMEOUT_MS: u32 = 3_000;
/// Default time for the queries of one request.
pub const DEFAULT_QUERY_TIMEOUT_MS: u32 = 5_000;
/// Default time for one call of the embeddings API.
pub const DEFAULT_EMBED_TIMEOUT_MS: u32 = 10_000;
const MAX_TIMEOUT_MS: u32 = 60_000;

/// Connect and query deadlines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    pub connect_ms: u32,
    pub query_ms: u32,
}

impl Timeouts {
    /// From `MEMLOOM_CONNECT_TIMEOUT_MS` and `MEMLOOM_QUERY_TIMEOUT_MS` (unset: defaults).
    pub fn from_vars(connect: Option<&str>, query: Option<&str>) -> Result<Timeouts, String> {
        Ok(Timeouts {
            connect_ms: millis(
                "MEMLOOM_CONNECT_TIMEOUT_MS",
                connect,
                DEFAULT_CONNECT_TIMEOUT_MS,
            )?,
            query_ms: millis("MEMLOOM_QUERY_TIMEOUT_MS", query, DEFAULT_QUERY_TIMEOUT_MS)?,
        })
    }
}

fn millis(name: &str, value: Option<&str>, default: u32) -> Result<u32, String> {
    match value.map(str::trim).filter(|v| !v.is_empty()) {
        None => Ok(default),
        Some(v) => match v.parse::<u32>() {
            Ok(ms) if (1..=MAX_TIMEOUT_MS).contains(&ms) => Ok(ms),
            _ => Err(format!(
                "{name} must be milliseconds between 1 and {MAX_TIMEOUT_MS}, not {v:?}"
            )),
        },
    }
}

/// Where the worker connects: host and port for the socket, the parsed config for the startup.
#[derive(Debug, Clone)]
pub struct DbTarget {
    pub host: String,
    pub port: u16,
    pub config: Config,
    /// Whether to negotiate TLS (the socket is then opened with StartTLS).
    pub tls: bool,
}

/// Parses a `postgres://` URL (or key=value string). TLS is used when the URL asks for it
/// (`sslmode=require` or `sslmode=prefer`); without `sslmode` the connection is plain, which
/// is what a loopback or private-network Postgres wants. Use Hyperdrive in production.
pub fn db_target(url: &str, var: &str) -> Result<DbTarget, String> {
    let mut config: Config = url
        .parse()
        .map_err(|_| format!("{var} is not a valid PostgreSQL connection string"))?;
    let host = match config.get_hosts().first() {
        Some(Host::Tcp(h)) if !h.is_empty() => h.clone(),
        #[allow(unreachable_patterns)]
        Some(_) => return Err(format!("{var} must name a TCP host, not a Unix socket")),
        None => return Err(format!("{var} has no host")),
    };
    let port = config.get_ports().first().copied().unwrap_or(5432);
    if config.get_user().is_none() {
        return Err(format!("{var} has no user"));
    }
    let explicit_ssl = url.contains("sslmode=");
    if !explicit_ssl {
        config.ssl_mode(SslMode::Disable);
    }
    let tls = config.get_ssl_mode() != SslMode::Disable;
    config.application_name("memloom-edge-worker");
    Ok(DbTarget {
        host,
        port,
        config,
        tls,
    })
}

/// The Hyperdrive binding's target: its connection string's user, password and database, its
/// host and port, and TLS by StartTLS (as Cloudflare's example: Hyperdrive answers the
/// SSLRequest).
pub fn hyperdrive_target(hd: &HyperdriveBinding) -> Result<DbTarget, String> {
    let mut t = db_target(&hd.connection_string, "the Hyperdrive binding DB")?;
    t.host = hd.host.clone();
    t.port = hd.port;
    t.config.ssl_mode(SslMode::Prefer);
    t.tls = true;
    Ok(t)
}

/// The query embedder: hash-v1 compiled in, static-v1 or -v2 (its vocabulary and token rows read from
/// the store: sql/memloom/13_static_table.sql), or an OpenAI-compatible API. memloom-core's
/// type: its rules and identity are the npm package's too; the worker only does the call
/// (`worker/embed.rs`).
pub type EmbedderConfig = EmbedderChoice;

/// From `MEMLOOM_EMBEDDER` (an offline one: `hash-v1`, `static-v1`, `static-v2`) or `MEMLOOM_EMBED_URL`,
/// `MEMLOOM_EMBED_MODEL`, `MEMLOOM_EMBED_DIMS`: the npm package's names, and its rule
/// (memloom-core's `choose_embedder`). Neither: hash-v1.
pub fn embedder_from_vars(
    offline: Option<&str>,
    url: Option<&str>,
    model: Option<&str>,
    dims: Option<&str>,
) -> Result<EmbedderConfig, String> {
    // A var is text; the core takes the number (as npm's settings give it) and checks it.
    // Read as a JSON number by serde_json, which the worker links anyway: `str::parse::<f64>`
    // would add core's decimal-to-float tables, about 17 KB gzipped.
    let dims = match dims.map(str::trim).filter(|d| !d.is_empty()) {
        None => None,
        Some(d) => Some(serde_json::from_str::<f64>(d).map_err(|_| {
            format!("MEMLOOM_EMBED_DIMS must be the model's dimensions, a whole number from 1 to {MAX_API_DIMS}, not {d:?}")
        })?),
    };
    let settings = EmbedderSettings {
        name: offline,
        url,
        model,
        dims,
    };
    choose_embedder(&settings).map_err(|e| e.to_string())
}

/// What a worker built without the `static-v1` feature answers (500 `misconfigured`) when
/// `MEMLOOM_EMBEDDER` asks for static-v1 or -v2: the fix is a build, not a setting.
pub const STATIC_NOT_BUILT: &str = "MEMLOOM_EMBEDDER is a static embedder, but this worker was built without static-v1 and static-v2 (scripts/build-worker.sh --no-static); deploy the default build (bash scripts/build-worker.sh, the crate's static-v1 feature), or set MEMLOOM_EMBEDDER to the store's embedder";

/// The chosen embedder, if this build carries it. The static embedders need the core's
/// WordPiece tokenizer and character tables in the wasm (the crate's `static-v1` feature, on by
/// default); the small build leaves them out to fit the bundle budget.
fn built_in(embedder: EmbedderConfig) -> Result<EmbedderConfig, ConfigError> {
    if matches!(embedder, EmbedderConfig::Static(_)) && !cfg!(feature = "static-v1") {
        return Err(ConfigError::new(STATIC_NOT_BUILT));
    }
    Ok(embedder)
}

/// `(name, version, dims)` as `memloom_meta` records them and `memloom_check_embedder` takes
/// them (SQL integers).
pub fn sql_identity(embedder: &EmbedderConfig) -> (String, i32, i32) {
    let (name, version, dims) = embedder.identity();
    // Versions are small and dims at most MAX_API_DIMS: both fit.
    (name, version as i32, dims as i32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use memloom_core::StaticVersion;

    #[test]
    fn timeouts_default_and_validate() {
        assert_eq!(
            Timeouts::from_vars(None, Some("")).unwrap(),
            Timeouts {
                connect_ms: 3000,
                query_ms: 5000
            }
        );
        assert_eq!(
            Timeouts::from_vars(Some("250"), None).unwrap().connect_ms,
            250
        );
        let e = Timeouts::from_vars(Some("0"), None).unwrap_err();
        assert!(e.contains("MEMLOOM_CONNECT_TIMEOUT_MS"), "{e}");
        assert!(Timeouts::from_vars(None, Some("soon")).is_err());
    }

    #[test]
    fn plain_url_is_plain_tcp() {
        let t = db_target("postgres://postgres@127.0.0.1:5544/memloom", "DATABASE_URL").unwrap();
        assert_eq!((t.host.as_str(), t.port, t.tls), ("127.0.0.1", 5544, false));
        assert_eq!(t.config.get_dbname(), Some("memloom"));
    }

    #[test]
    fn sslmode_require_asks_for_tls() {
        let t = db_target(
            "postgres://u:secret@db.example.com/app?sslmode=require",
            "DATABASE_URL",
        )
        .unwrap();
        assert!(t.tls);
        assert_eq!(t.port, 5432);
    }

    #[test]
    fn bad_urls_never_echo_the_password() {
        let e = db_target("postgres://u:hunter2@/db?sslmode=bogus", "DATABASE_URL").unwrap_err();
        assert!(!e.contains("hunter2"), "{e}");
        assert!(e.contains("DATABASE_URL"));
        assert!(db_target("postgres://u@/db?host=/tmp", "DATABASE_URL").is_err());
    }

    fn read(vars: &[(&str, &str)], hd: Option<HyperdriveBinding>) -> WorkerConfig {
        let vars: std::collections::HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        WorkerConfig::read(|name| vars.get(name).cloned(), hd)
    }

    const TOKENS: &str =
        r#"{"9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08":"team-a"}"#;

    #[test]
    fn config_reads_every_setting_once() {
        let c = read(
            &[
                ("MEMLOOM_TOKENS", TOKENS),
                ("DATABASE_URL", "postgres://app@127.0.0.1:5544/memloom"),
                ("MEMLOOM_QUERY_TIMEOUT_MS", "700"),
                ("MEMLOOM_EMBED_KEY", "k"),
            ],
            None,
        );
        assert_eq!(c.tokens.unwrap().namespace("test"), Some("team-a"));
        assert_eq!(c.embedder.unwrap(), EmbedderConfig::Hash);
        assert_eq!(c.embed_key.as_deref(), Some("k"));
        assert_eq!(c.via, "database_url");
        let db = c.database.unwrap();
        assert_eq!(
            (db.target.host.as_str(), db.target.port),
            ("127.0.0.1", 5544)
        );
        assert_eq!(
            db.timeouts,
            Timeouts {
                connect_ms: 3000,
                query_ms: 700
            }
        );
    }

    #[test]
    fn config_keeps_each_problem_for_the_request_that_needs_it() {
        let c = read(
            &[
                ("MEMLOOM_TOKENS", "[1]"),
                ("MEMLOOM_EMBED_URL", "https://api.example.com/v1"),
            ],
            None,
        );
        let tokens = c.tokens.unwrap_err();
        assert_eq!(
            tokens.what,
            "the MEMLOOM_TOKENS secret is not a valid token map"
        );
        assert!(tokens.detail.is_some());
        assert_eq!(tokens.api_error().code, "misconfigured");
        assert_eq!(tokens.api_error().status, 500);
        assert!(c.embedder.unwrap_err().detail.unwrap().contains("MODEL"));
        let db = c.database.unwrap_err();
        assert!(db.what.contains("DATABASE_URL"), "{}", db.what);
        assert!(db.api_error().message.contains("docs/WORKER.md"));

        let c = read(&[("DATABASE_URL", "postgres://u:hunter2@h/db")], None);
        assert_eq!(
            c.tokens.unwrap_err().what,
            "the MEMLOOM_TOKENS secret is not set"
        );
        assert!(c.database.is_ok());
        let c = read(
            &[
                ("DATABASE_URL", "postgres://u:hunter2@h/db"),
                ("MEMLOOM_CONNECT_TIMEOUT_MS", "-1"),
            ],
            None,
        );
        let e = c.database.unwrap_err();
        assert!(e.what.contains("MEMLOOM_CONNECT_TIMEOUT_MS") && !e.what.contains("hunter2"));
    }

    #[test]
    fn hyperdrive_wins_over_database_url_and_uses_starttls() {
        let hd = HyperdriveBinding {
            connection_string: "postgres://u:pw@abc.hyperdrive.local:5432/db".into(),
            host: "abc.hyperdrive.local".into(),
            port: 6543,
        };
        let c = read(&[("DATABASE_URL", "postgres://x@127.0.0.1/y")], Some(hd));
        assert_eq!(c.via, "hyperdrive");
        let t = c.database.unwrap().target;
        assert_eq!(
            (t.host.as_str(), t.port, t.tls),
            ("abc.hyperdrive.local", 6543, true)
        );
        assert_eq!(t.config.get_dbname(), Some("db"));
        assert_eq!(t.config.get_ssl_mode(), SslMode::Prefer);
    }

    // The rules themselves are memloom-core's (embed/api.rs, embed/choose.rs) and tested there;
    // these test the door: the vars reach them, and what comes back.
    #[test]
    fn embedder_defaults_to_hash_v1() {
        let e = embedder_from_vars(None, None, None, None).unwrap();
        assert_eq!(sql_identity(&e), ("hash".to_string(), 1, 256));
        assert_eq!(e.id(), "hash-v1");
    }

    #[test]
    fn api_embedder_from_the_vars() {
        let e = embedder_from_vars(
            None,
            Some("https://api.example.com/v1/"),
            Some("m"),
            Some(" 3 "),
        )
        .unwrap();
        let EmbedderConfig::Api(api) = &e else {
            panic!("{e:?}")
        };
        assert_eq!(api.endpoint(), "https://api.example.com/v1/embeddings");
        assert_eq!(sql_identity(&e), ("api:m".to_string(), 1, 3));
        assert_eq!(e.id(), "api:m-v1");
        let model = embedder_from_vars(None, Some("https://x/v1"), None, Some("3"));
        assert!(model.unwrap_err().contains("MEMLOOM_EMBED_MODEL"));
        let dims = embedder_from_vars(None, Some("https://x/v1"), Some("m"), None);
        assert!(dims.unwrap_err().contains("MEMLOOM_EMBED_DIMS"));
        let e =
            embedder_from_vars(None, Some("https://x/v1"), Some("m"), Some("many")).unwrap_err();
        assert!(
            e.contains("MEMLOOM_EMBED_DIMS") && e.contains("\"many\""),
            "{e}"
        );
        let e =
            embedder_from_vars(None, Some("https://x/v1"), Some("m"), Some("16001")).unwrap_err();
        assert!(e.contains("1 to 16000"), "{e}");
        assert!(embedder_from_vars(None, Some("ftp://x"), Some("m"), Some("3")).is_err());
    }

    // Without the static-v1 feature (`cargo test -p edge-worker --no-default-features`) the
    // name is still known (the core's rule), but the worker refuses it at the door and says
    // which build to deploy; with it, static-v1 is read like any other embedder.
    #[test]
    fn static_v1_needs_the_build_that_carries_it() {
        let c = read(&[("MEMLOOM_EMBEDDER", "static-v1")], None);
        if cfg!(feature = "static-v1") {
            assert_eq!(
                c.embedder.unwrap(),
                EmbedderConfig::Static(StaticVersion::V1)
            );
            let c = read(&[("MEMLOOM_EMBEDDER", "static-v2")], None);
            assert_eq!(
                c.embedder.unwrap(),
                EmbedderConfig::Static(StaticVersion::V2)
            );
            return;
        }
        let e = c.embedder.unwrap_err();
        assert_eq!(e.what, STATIC_NOT_BUILT);
        let api = e.api_error();
        assert_eq!((api.status, api.code), (500, "misconfigured"));
        assert!(
            api.message.contains("built without static-v1")
                && api.message.contains("bash scripts/build-worker.sh"),
            "{}",
            api.message
        );
        let c = read(&[("MEMLOOM_EMBEDDER", "hash-v1")], None);
        assert_eq!(c.embedder.unwrap(), EmbedderConfig::Hash);
    }

    #[test]
    fn offline_embedders_by_name() {
        let pick = |n: &str| embedder_from_vars(Some(n), None, None, None);
        let v1 = EmbedderConfig::Static(StaticVersion::V1);
        let v2 = EmbedderConfig::Static(StaticVersion::V2);
        assert_eq!(pick("static-v1").unwrap(), v1);
        assert_eq!(pick("static-v2").unwrap(), v2);
        assert_eq!(pick("hash-v1").unwrap(), EmbedderConfig::Hash);
        assert_eq!(sql_identity(&v1), ("static".to_string(), 1, 512));
        assert_eq!(sql_identity(&v2), ("static".to_string(), 2, 512));
        assert_eq!(v1.id(), "static-v1");
        assert_eq!(v2.id(), "static-v2");
        let e = pick("static-v3").unwrap_err();
        assert!(e.contains("hash-v1, static-v1, static-v2"), "{e}");
        let e = embedder_from_vars(
            Some("static-v1"),
            Some("https://x/v1"),
            Some("m"),
            Some("3"),
        )
        .unwrap_err();
        assert!(e.contains("unset one"), "{e}");
    }
}
