//! Which embedder the settings select, one rule for the npm package and the edge worker:
//! `MEMLOOM_EMBEDDER` names an offline embedder ([`OFFLINE_EMBEDDERS`]), `MEMLOOM_EMBED_URL`
//! (with `_MODEL` and `_DIMS`) an embeddings API ([`ApiEmbedder`]); both set is an error (a
//! store's vectors come from one embedder, and silently preferring one would embed queries
//! with the other store's model); neither: `hash-v1`. Where the settings come from (env,
//! config files, flags, the worker's vars) is each door's business.

use super::api::{present, ApiEmbedder};
use super::{EmbedderInfo, StaticVersion, HASH_V1, STATIC_V1, STATIC_V2};
use crate::Error;

/// The offline embedders, by the id `MEMLOOM_EMBEDDER` names them with.
pub const OFFLINE_EMBEDDERS: [EmbedderInfo; 3] = [HASH_V1, STATIC_V1, STATIC_V2];

/// The error for an `MEMLOOM_EMBEDDER` that names no offline embedder. npm's settings check
/// (which runs before its wasm is loaded) uses this text, taken from here at build time.
pub fn unknown_embedder(name: &str) -> Error {
    let known: Vec<String> = OFFLINE_EMBEDDERS.iter().map(EmbedderInfo::id).collect();
    Error::invalid_option(format!(
        "unknown embedder {name:?} (MEMLOOM_EMBEDDER / --embedder); the offline ones are {}, and MEMLOOM_EMBED_URL selects an embeddings API",
        known.join(", ")
    ))
}

/// The embedder settings as a door has read them (unset or blank: `None`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EmbedderSettings<'a> {
    /// `MEMLOOM_EMBEDDER`: an offline embedder's id.
    pub name: Option<&'a str>,
    /// `MEMLOOM_EMBED_URL`.
    pub url: Option<&'a str>,
    /// `MEMLOOM_EMBED_MODEL`.
    pub model: Option<&'a str>,
    /// `MEMLOOM_EMBED_DIMS`, as a number.
    pub dims: Option<f64>,
}

/// The embedder the settings select.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmbedderChoice {
    /// `hash-v1`.
    Hash,
    /// `static-v1` or `static-v2` (the table comes from the caller).
    Static(StaticVersion),
    /// An OpenAI-compatible API.
    Api(ApiEmbedder),
}

impl EmbedderChoice {
    /// The id: `hash-v1`, `static-v1`, `static-v2`, `api:<model>-v1`.
    pub fn id(&self) -> String {
        match self {
            EmbedderChoice::Hash => HASH_V1.id(),
            EmbedderChoice::Static(v) => v.info().id(),
            EmbedderChoice::Api(api) => api.id(),
        }
    }

    /// `(name, version, dims)` as a store records them (`memloom_meta`).
    pub fn identity(&self) -> (String, u32, usize) {
        match self {
            EmbedderChoice::Hash => (HASH_V1.name.to_string(), HASH_V1.version, HASH_V1.dims),
            EmbedderChoice::Static(v) => {
                let info = v.info();
                (info.name.to_string(), info.version, info.dims)
            }
            EmbedderChoice::Api(api) => (api.name(), api.version(), api.dims()),
        }
    }
}

/// Applies the rule of the module doc.
pub fn choose_embedder(settings: &EmbedderSettings<'_>) -> Result<EmbedderChoice, Error> {
    let name = present(settings.name);
    let url = present(settings.url);
    match (name, url) {
        (Some(name), Some(_)) => Err(Error::invalid_option(format!(
            "both the {name} embedder and MEMLOOM_EMBED_URL (embedder.url) are set; unset one of them"
        ))),
        (None, Some(url)) => Ok(EmbedderChoice::Api(ApiEmbedder::new(
            Some(url),
            settings.model,
            settings.dims,
        )?)),
        (None, None) => Ok(EmbedderChoice::Hash),
        (Some(name), None) => {
            if name == HASH_V1.id() {
                Ok(EmbedderChoice::Hash)
            } else if let Some(v) = StaticVersion::ALL
                .into_iter()
                .find(|v| name == v.info().id())
            {
                Ok(EmbedderChoice::Static(v))
            } else {
                Err(unknown_embedder(name))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn choose(
        name: Option<&str>,
        url: Option<&str>,
        model: Option<&str>,
        dims: Option<f64>,
    ) -> Result<EmbedderChoice, String> {
        choose_embedder(&EmbedderSettings {
            name,
            url,
            model,
            dims,
        })
        .map_err(|e| e.to_string())
    }

    #[test]
    fn neither_is_hash_v1() {
        assert_eq!(choose(None, None, None, None), Ok(EmbedderChoice::Hash));
        assert_eq!(
            choose(Some(" "), Some(""), None, None),
            Ok(EmbedderChoice::Hash)
        );
        assert_eq!(EmbedderChoice::Hash.id(), "hash-v1");
        assert_eq!(
            EmbedderChoice::Hash.identity(),
            ("hash".to_string(), 1, 256)
        );
    }

    #[test]
    fn offline_embedders_by_name() {
        assert_eq!(
            choose(Some("hash-v1"), None, None, None),
            Ok(EmbedderChoice::Hash)
        );
        let s = choose(Some(" static-v1 "), None, None, None).unwrap();
        assert_eq!(s, EmbedderChoice::Static(StaticVersion::V1));
        assert_eq!(s.id(), "static-v1");
        assert_eq!(s.identity(), ("static".to_string(), 1, 512));
        let s = choose(Some("static-v2"), None, None, None).unwrap();
        assert_eq!(s, EmbedderChoice::Static(StaticVersion::V2));
        assert_eq!(s.id(), "static-v2");
        assert_eq!(s.identity(), ("static".to_string(), 2, 512));
        let e = choose(Some("static-v3"), None, None, None).unwrap_err();
        assert_eq!(
            e,
            "unknown embedder \"static-v3\" (MEMLOOM_EMBEDDER / --embedder); the offline ones are hash-v1, static-v1, static-v2, and MEMLOOM_EMBED_URL selects an embeddings API"
        );
    }

    #[test]
    fn an_offline_name_and_a_url_is_an_error() {
        let e = choose(
            Some("static-v1"),
            Some("https://h/v1"),
            Some("m"),
            Some(3.0),
        )
        .unwrap_err();
        assert_eq!(
            e,
            "both the static-v1 embedder and MEMLOOM_EMBED_URL (embedder.url) are set; unset one of them"
        );
    }

    #[test]
    fn a_url_selects_the_api_with_its_rules() {
        let c = choose(None, Some("https://h/v1/"), Some("m"), Some(3.0)).unwrap();
        let EmbedderChoice::Api(api) = &c else {
            panic!("{c:?}")
        };
        assert_eq!(api.endpoint(), "https://h/v1/embeddings");
        assert_eq!(c.id(), "api:m-v1");
        assert_eq!(c.identity(), ("api:m".to_string(), 1, 3));
        let e = choose(None, Some("https://h/v1"), None, Some(3.0)).unwrap_err();
        assert!(e.contains("MEMLOOM_EMBED_MODEL"), "{e}");
    }
}
