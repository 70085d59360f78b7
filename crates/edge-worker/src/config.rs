//! Configuration from the worker's vars and secrets, parsed into checked values. Error texts
//! name the variable, never its value (a `DATABASE_URL` holds a password).

use serde::Deserialize;
use tokio_postgres::config::{Host, SslMode};
use tokio_postgres::Config;

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

/// The query embedder: hash-v1 compiled in, or an OpenAI-compatible API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderConfig {
    Hash,
    Api {
        endpoint: String,
        model: String,
        dims: usize,
    },
}

impl EmbedderConfig {
    /// From `MEMLOOM_EMBED_URL`, `MEMLOOM_EMBED_MODEL`, `MEMLOOM_EMBED_DIMS` (the same names the
    /// npm package reads). No URL: hash-v1.
    pub fn from_vars(
        url: Option<&str>,
        model: Option<&str>,
        dims: Option<&str>,
    ) -> Result<EmbedderConfig, String> {
        let Some(url) = url.map(str::trim).filter(|u| !u.is_empty()) else {
            return Ok(EmbedderConfig::Hash);
        };
        let model = model.map(str::trim).filter(|m| !m.is_empty()).ok_or(
            "MEMLOOM_EMBED_URL is set but MEMLOOM_EMBED_MODEL is not; set both (and MEMLOOM_EMBED_DIMS)",
        )?;
        let dims = dims
            .and_then(|d| d.trim().parse::<usize>().ok())
            .filter(|d| (1..=16_000).contains(d))
            .ok_or("MEMLOOM_EMBED_DIMS must be the model's dimensions (1 to 16000)")?;
        if !url.starts_with("https://") && !url.starts_with("http://") {
            return Err("MEMLOOM_EMBED_URL must be an http(s) URL".into());
        }
        let endpoint = if url.trim_end_matches('/').ends_with("/embeddings") {
            url.trim_end_matches('/').to_string()
        } else {
            format!("{}/embeddings", url.trim_end_matches('/'))
        };
        Ok(EmbedderConfig::Api {
            endpoint,
            model: model.to_string(),
            dims,
        })
    }

    /// `(name, version, dims)` as `memloom_meta` records it.
    pub fn identity(&self) -> (String, i32, i32) {
        match self {
            EmbedderConfig::Hash => {
                let h = memloom_core::HASH_V1;
                (h.name.to_string(), h.version as i32, h.dims as i32)
            }
            EmbedderConfig::Api { model, dims, .. } => (format!("api:{model}"), 1, *dims as i32),
        }
    }

    /// `hash-v1`, `api:text-embedding-3-small-v1`.
    pub fn label(&self) -> String {
        let (name, version, _) = self.identity();
        format!("{name}-v{version}")
    }

    /// The JSON body of one embeddings call.
    pub fn request_body(&self, text: &str) -> Option<String> {
        match self {
            EmbedderConfig::Hash => None,
            EmbedderConfig::Api { model, dims, .. } => Some(
                serde_json::json!({
                    "model": model, "input": [text], "dimensions": dims, "encoding_format": "float"
                })
                .to_string(),
            ),
        }
    }
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingItem>,
}

#[derive(Deserialize)]
struct EmbeddingItem {
    embedding: Vec<f32>,
}

/// The one vector of an OpenAI-compatible `/embeddings` answer, checked against `dims`.
pub fn parse_embedding(body: &[u8], dims: usize) -> Result<Vec<f32>, String> {
    let resp: EmbeddingsResponse = serde_json::from_slice(body)
        .map_err(|e| format!("the embeddings API answered with unexpected JSON: {e}"))?;
    let v = resp
        .data
        .into_iter()
        .next()
        .ok_or("the embeddings API returned no embedding")?
        .embedding;
    if v.len() != dims {
        return Err(format!(
            "the embeddings API returned {} dimensions, expected {dims}",
            v.len()
        ));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn embedder_defaults_to_hash_v1() {
        let e = EmbedderConfig::from_vars(None, None, None).unwrap();
        assert_eq!(e.identity(), ("hash".to_string(), 1, 256));
        assert_eq!(e.label(), "hash-v1");
        assert_eq!(e.request_body("x"), None);
    }

    #[test]
    fn api_embedder_needs_model_and_dims() {
        let e =
            EmbedderConfig::from_vars(Some("https://api.example.com/v1/"), Some("m"), Some("3"))
                .unwrap();
        assert_eq!(
            e,
            EmbedderConfig::Api {
                endpoint: "https://api.example.com/v1/embeddings".into(),
                model: "m".into(),
                dims: 3
            }
        );
        assert_eq!(e.label(), "api:m-v1");
        assert!(EmbedderConfig::from_vars(Some("https://x/v1"), None, Some("3")).is_err());
        assert!(EmbedderConfig::from_vars(Some("https://x/v1"), Some("m"), None).is_err());
        assert!(EmbedderConfig::from_vars(Some("ftp://x"), Some("m"), Some("3")).is_err());
    }

    #[test]
    fn embedding_answers_are_checked() {
        let ok = br#"{"data":[{"index":0,"embedding":[0.5,0.25,1]}]}"#;
        assert_eq!(parse_embedding(ok, 3).unwrap(), vec![0.5, 0.25, 1.0]);
        assert!(parse_embedding(ok, 4).unwrap_err().contains("expected 4"));
        assert!(parse_embedding(br#"{"data":[]}"#, 3).is_err());
        assert!(parse_embedding(b"<html>", 3).is_err());
    }
}
