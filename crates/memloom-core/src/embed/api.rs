//! The API embedder: any OpenAI-compatible `/embeddings` endpoint. This file owns its rules,
//! once for every runtime (the npm package through memloom-wasm, the edge worker natively);
//! the callers only do the HTTP call (timeouts, retries, keys are I/O, at the edges).
//!
//! # The rules, precisely
//! 1. **Settings**: `url`, `model` and `dims` are all required; surrounding white space is
//!    trimmed and an empty value counts as unset.
//! 2. **URL**: `http://` or `https://` (any case) followed by a host. Trailing slashes are
//!    trimmed; a URL that then ends in `/embeddings` is the endpoint, any other is the API base
//!    and `/embeddings` is appended: `https://host/v1/` -> `https://host/v1/embeddings`.
//! 3. **Dims**: a whole number from 1 to [`MAX_API_DIMS`].
//! 4. **Identity**: name `api:<model>`, version [`API_EMBEDDER_VERSION`], the configured dims;
//!    the id (and the worker's label) is `api:<model>-v1`. A store records name, version and
//!    dims and refuses queries embedded otherwise.
//! 5. **Request**: `{"model", "input": [texts], "dimensions": dims, "encoding_format": "float"}`.
//! 6. **Response**: `{"data": [{"index", "embedding": [numbers]}]}` with exactly one entry per
//!    input, each `dims` long. An entry goes to position `index` (0-based; each index once), or
//!    to its own position when it has none. Numbers are read as `f64` and then rounded to `f32`,
//!    as `Float32Array.from(JSON.parse(body))` does. (The worker's serde_json reads decimals
//!    without `float_roundtrip`, whose tables cost its bundle about 10 KB gzipped: its `f64`
//!    can be one ulp off JSON.parse's, which changes the `f32` only for a number within an
//!    `f64` ulp of the midpoint between two `f32`s.)

use serde::{Deserialize, Deserializer, Serialize};

use crate::Error;

/// The version every API embedder's identity carries (a change of these rules that changes
/// vectors would bump it, so old stores refuse the new vectors).
pub const API_EMBEDDER_VERSION: u32 = 1;

/// The largest `dims` accepted: pgvector's `vector` type holds up to 16000 dimensions, above
/// every embedding model in use (OpenAI's largest is 3072).
pub const MAX_API_DIMS: usize = 16_000;

/// The settings' names, for error texts (the npm package's and the worker's variables).
const NEEDS: &str = "the embeddings API needs url, model and dims (MEMLOOM_EMBED_URL, MEMLOOM_EMBED_MODEL, MEMLOOM_EMBED_DIMS)";

/// One embeddings call's body: `{"model", "input", "dimensions", "encoding_format": "float"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ApiRequest<'a> {
    pub model: &'a str,
    pub input: Vec<&'a str>,
    pub dimensions: usize,
    pub encoding_format: &'static str,
}

/// A checked API embedder: where to POST, which model, how many dimensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiEmbedder {
    endpoint: String,
    model: String,
    dims: usize,
}

impl ApiEmbedder {
    /// Checks the settings (rules 1 to 3 of the module doc). `dims` is a number as JSON and JS
    /// have them, so a fraction, zero or a negative is refused here with the value named.
    pub fn new(
        url: Option<&str>,
        model: Option<&str>,
        dims: Option<f64>,
    ) -> Result<ApiEmbedder, Error> {
        let url = present(url);
        let model = present(model);
        let missing: Vec<&str> = [
            (url.is_none(), "MEMLOOM_EMBED_URL (url)"),
            (model.is_none(), "MEMLOOM_EMBED_MODEL (model)"),
            (dims.is_none(), "MEMLOOM_EMBED_DIMS (dims)"),
        ]
        .iter()
        .filter(|(unset, _)| *unset)
        .map(|(_, name)| *name)
        .collect();
        let (Some(url), Some(model), Some(dims)) = (url, model, dims) else {
            return Err(Error::invalid_option(format!(
                "{NEEDS}; set {}",
                missing.join(" and ")
            )));
        };
        let dims = check_dims(dims)?;
        let endpoint = endpoint(url)?;
        Ok(ApiEmbedder {
            endpoint,
            model: model.to_string(),
            dims,
        })
    }

    /// The URL to POST to, ending in `/embeddings`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The model, sent as `model` and part of the identity.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The dimensions, sent as `dimensions` and checked in every answer.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// The name a store records: `api:<model>`.
    pub fn name(&self) -> String {
        format!("api:{}", self.model)
    }

    /// The version a store records: [`API_EMBEDDER_VERSION`].
    pub fn version(&self) -> u32 {
        API_EMBEDDER_VERSION
    }

    /// `api:<model>-v1`: the npm embedder's `id` and the worker's label.
    pub fn id(&self) -> String {
        format!("{}-v{}", self.name(), self.version())
    }

    /// The body of one call embedding `texts`, in order (rule 5), for the caller to write as
    /// JSON (the worker with serde_json, the npm package with `JSON.stringify`).
    pub fn request<'a, S: AsRef<str>>(&'a self, texts: &'a [S]) -> ApiRequest<'a> {
        ApiRequest {
            model: &self.model,
            input: texts.iter().map(AsRef::as_ref).collect(),
            dimensions: self.dims,
            encoding_format: "float",
        }
    }

    /// The vectors of an answer to a call with `inputs` texts, in input order (rule 6).
    /// `answer` reads the answer's JSON: serde_json's deserializer over the body (the worker),
    /// or serde-wasm-bindgen's over `JSON.parse(body)` (the npm package: no JSON parser in the
    /// wasm, which stays small). An answer that is not JSON is the caller's to report, or to
    /// pass on as `null`, which is refused here like any other answer that does not fit.
    pub fn parse_response<'de, D: Deserializer<'de>>(
        &self,
        answer: D,
        inputs: usize,
    ) -> Result<Vec<Vec<f32>>, Error> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            data: Option<Vec<Item>>,
        }
        #[derive(Deserialize)]
        struct Item {
            index: Option<u64>,
            embedding: Option<Vec<f32>>,
        }
        let endpoint = &self.endpoint;
        let answer = Answer::deserialize(answer).map_err(|e| {
            Error::invalid_data(format!(
                "embeddings API at {endpoint} did not answer an embeddings response ({e}); it must answer JSON {{\"data\": [{{\"index\": 0, \"embedding\": [numbers]}}]}}, so check MEMLOOM_EMBED_URL points at an OpenAI-compatible /embeddings endpoint"
            ))
        })?;
        let data = answer.data.unwrap_or_default();
        if data.len() != inputs {
            let got = if data.is_empty() {
                "no".to_string()
            } else {
                data.len().to_string()
            };
            return Err(Error::invalid_data(format!(
                "embeddings API at {endpoint} returned {got} embeddings for {inputs} inputs"
            )));
        }
        let mut out: Vec<Option<Vec<f32>>> = vec![None; inputs];
        for (position, item) in data.into_iter().enumerate() {
            let v = item.embedding.unwrap_or_default();
            if v.len() != self.dims {
                let got = if v.is_empty() {
                    "no".to_string()
                } else {
                    v.len().to_string()
                };
                return Err(Error::invalid_data(format!(
                    "embeddings API returned {got} dimensions, expected {}; set MEMLOOM_EMBED_DIMS to the model's size, or use a model that accepts \"dimensions\"",
                    self.dims
                )));
            }
            let at = match item.index.map(|i| (i, usize::try_from(i))) {
                None => position,
                Some((_, Ok(i))) if i < inputs => i,
                Some((i, _)) => {
                    return Err(Error::invalid_data(format!(
                        "embeddings API at {endpoint} returned index {i} for {inputs} inputs; indexes must be 0 to {}",
                        inputs - 1
                    )))
                }
            };
            if out[at].replace(v).is_some() {
                return Err(Error::invalid_data(format!(
                    "embeddings API at {endpoint} returned index {at} twice; each input's embedding must come once"
                )));
            }
        }
        // n entries, each placed once in n slots: every slot is filled.
        Ok(out.into_iter().flatten().collect())
    }
}

/// A setting that is set: trimmed, not empty.
pub(crate) fn present(value: Option<&str>) -> Option<&str> {
    value.map(str::trim).filter(|v| !v.is_empty())
}

fn check_dims(dims: f64) -> Result<usize, Error> {
    if dims.fract() == 0.0 && (1.0..=MAX_API_DIMS as f64).contains(&dims) {
        return Ok(dims as usize);
    }
    Err(Error::invalid_option(format!(
        "embedding dims must be a whole number from 1 to {MAX_API_DIMS}, not {dims}; set MEMLOOM_EMBED_DIMS (dims) to the model's size"
    )))
}

/// Rule 2: the endpoint of an API base or of a full `/embeddings` URL.
fn endpoint(url: &str) -> Result<String, Error> {
    let scheme_end = url.find("://").map(|i| i + 3).unwrap_or(0);
    let scheme = &url[..scheme_end];
    let http = scheme.eq_ignore_ascii_case("http://") || scheme.eq_ignore_ascii_case("https://");
    let rest = url[scheme_end..].trim_end_matches('/');
    if !http || rest.is_empty() || rest.starts_with('/') {
        // The value is not echoed: a URL can carry a key (userinfo or query).
        return Err(Error::invalid_option(
            "the embeddings API URL must start with http:// or https:// and name a host; set MEMLOOM_EMBED_URL (url) to the API base, such as https://api.openai.com/v1",
        ));
    }
    let base = url.trim_end_matches('/');
    Ok(if base.ends_with("/embeddings") {
        base.to_string()
    } else {
        format!("{base}/embeddings")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn spec(url: &str, dims: f64) -> Result<ApiEmbedder, Error> {
        ApiEmbedder::new(Some(url), Some("m"), Some(dims))
    }

    #[test]
    fn endpoints_of_a_base_and_of_a_full_url() {
        for (url, endpoint) in [
            (
                "https://api.example.com/v1",
                "https://api.example.com/v1/embeddings",
            ),
            (
                "https://api.example.com/v1/",
                "https://api.example.com/v1/embeddings",
            ),
            (
                "https://api.example.com/v1//",
                "https://api.example.com/v1/embeddings",
            ),
            (
                "http://127.0.0.1:8080/v1/embeddings",
                "http://127.0.0.1:8080/v1/embeddings",
            ),
            // The npm package kept this trailing slash; both doors now trim it.
            ("https://h/v1/embeddings/", "https://h/v1/embeddings"),
            ("  HTTPS://h/v1 ", "HTTPS://h/v1/embeddings"),
            ("https://h", "https://h/embeddings"),
        ] {
            assert_eq!(spec(url, 3.0).unwrap().endpoint(), endpoint, "{url}");
        }
    }

    #[test]
    fn only_http_urls_with_a_host() {
        for url in [
            "ftp://h/v1",
            "api.example.com/v1",
            "https://",
            "https:///v1",
            "file:///x",
        ] {
            let e = spec(url, 3.0).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidOption);
            assert!(e.to_string().contains("http:// or https://"), "{url}: {e}");
            assert!(e.to_string().contains("MEMLOOM_EMBED_URL"), "{e}");
        }
        let e = spec("ftp://user:sk-secret@h/v1", 3.0).unwrap_err();
        assert!(!e.to_string().contains("sk-secret"), "{e}");
    }

    #[test]
    fn dims_bounds() {
        assert_eq!(spec("https://h/v1", 1.0).unwrap().dims(), 1);
        assert_eq!(spec("https://h/v1", 16_000.0).unwrap().dims(), 16_000);
        for bad in [0.0, -3.0, 1.5, 16_001.0, f64::NAN, f64::INFINITY] {
            let e = spec("https://h/v1", bad).unwrap_err();
            assert!(e.to_string().contains("1 to 16000"), "{bad}: {e}");
            assert!(e.to_string().contains("MEMLOOM_EMBED_DIMS"), "{e}");
        }
        let e = spec("https://h/v1", 1.5).unwrap_err().to_string();
        assert!(e.contains("not 1.5"), "{e}");
    }

    #[test]
    fn every_setting_is_required_and_named() {
        let e = ApiEmbedder::new(Some("https://h/v1"), None, Some(3.0)).unwrap_err();
        assert!(e.to_string().starts_with(NEEDS), "{e}");
        assert!(
            e.to_string().ends_with("; set MEMLOOM_EMBED_MODEL (model)"),
            "{e}"
        );
        let e = ApiEmbedder::new(Some(" "), Some(""), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.ends_with("set MEMLOOM_EMBED_URL (url) and MEMLOOM_EMBED_MODEL (model) and MEMLOOM_EMBED_DIMS (dims)"),
            "{e}"
        );
    }

    #[test]
    fn identity() {
        let a = ApiEmbedder::new(
            Some("https://h/v1"),
            Some(" text-embedding-3-small "),
            Some(1536.0),
        )
        .unwrap();
        assert_eq!(a.model(), "text-embedding-3-small");
        assert_eq!(a.name(), "api:text-embedding-3-small");
        assert_eq!(a.version(), 1);
        assert_eq!(a.id(), "api:text-embedding-3-small-v1");
        assert_eq!(a.dims(), 1536);
    }

    #[test]
    fn request_of_a_batch() {
        let a = spec("https://h/v1", 3.0).unwrap();
        let texts = ["a \"quoted\" text", "b"];
        assert_eq!(
            serde_json::to_string(&a.request(&texts)).unwrap(),
            r#"{"model":"m","input":["a \"quoted\" text","b"],"dimensions":3,"encoding_format":"float"}"#
        );
        let texts = [String::from("x")];
        assert_eq!(
            serde_json::to_string(&a.request(&texts)).unwrap(),
            r#"{"model":"m","input":["x"],"dimensions":3,"encoding_format":"float"}"#
        );
    }

    fn parse(body: &str, n: usize) -> Result<Vec<Vec<f32>>, String> {
        let mut json = serde_json::Deserializer::from_str(body);
        spec("https://h/v1", 2.0)
            .unwrap()
            .parse_response(&mut json, n)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn answers_are_placed_by_index() {
        let body = r#"{"object":"list","data":[{"index":1,"embedding":[3,4]},{"index":0,"embedding":[1,2]}],"usage":{}}"#;
        assert_eq!(
            parse(body, 2).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
        // Without indexes, in the order given.
        let body = r#"{"data":[{"embedding":[1,2]},{"embedding":[3,4]}]}"#;
        assert_eq!(
            parse(body, 2).unwrap(),
            vec![vec![1.0, 2.0], vec![3.0, 4.0]]
        );
        assert_eq!(parse(r#"{"data":[]}"#, 0).unwrap(), Vec::<Vec<f32>>::new());
    }

    #[test]
    fn numbers_are_rounded_as_js_rounds_them() {
        // JSON.parse gives the nearest f64; Float32Array.from rounds that to f32.
        let text = "0.1000000000000000055511151231257827";
        let body = format!(r#"{{"data":[{{"embedding":[{text},-1e-45]}}]}}"#);
        let v = parse(&body, 1).unwrap();
        assert_eq!(
            v[0][0].to_bits(),
            (text.parse::<f64>().unwrap() as f32).to_bits()
        );
        assert_eq!(v[0][1].to_bits(), (-1e-45f64 as f32).to_bits());
    }

    #[test]
    fn answers_that_do_not_fit_are_refused_saying_why() {
        let count = parse(r#"{"data":[{"embedding":[1,2]}]}"#, 2).unwrap_err();
        assert_eq!(
            count,
            "embeddings API at https://h/v1/embeddings returned 1 embeddings for 2 inputs"
        );
        let none = parse(r#"{"error":{"message":"quota"}}"#, 1).unwrap_err();
        assert!(
            none.contains("returned no embeddings for 1 inputs"),
            "{none}"
        );
        let dims = parse(r#"{"data":[{"embedding":[1,2,3]}]}"#, 1).unwrap_err();
        assert!(dims.starts_with("embeddings API returned 3 dimensions, expected 2; set MEMLOOM_EMBED_DIMS to the model's size"), "{dims}");
        let missing = parse(r#"{"data":[{"index":0}]}"#, 1).unwrap_err();
        assert!(
            missing.contains("returned no dimensions, expected 2"),
            "{missing}"
        );
        let range = parse(
            r#"{"data":[{"index":2,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}"#,
            2,
        )
        .unwrap_err();
        assert!(
            range.contains("returned index 2 for 2 inputs; indexes must be 0 to 1"),
            "{range}"
        );
        let twice = parse(
            r#"{"data":[{"index":0,"embedding":[1,2]},{"index":0,"embedding":[1,2]}]}"#,
            2,
        )
        .unwrap_err();
        assert!(twice.contains("returned index 0 twice"), "{twice}");
        let html = parse("<html>busy</html>", 1).unwrap_err();
        assert!(
            html.contains("did not answer an embeddings response"),
            "{html}"
        );
        let null = parse("null", 1).unwrap_err();
        assert!(
            null.contains("did not answer an embeddings response"),
            "{null}"
        );
        let base64 = parse(r#"{"data":[{"index":0,"embedding":"AACAPw=="}]}"#, 1).unwrap_err();
        assert!(
            base64.contains("did not answer an embeddings response"),
            "{base64}"
        );
    }
}
