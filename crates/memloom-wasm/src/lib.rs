//! wasm-bindgen facade over `memloom-core`.
//!
//! This crate converts types and nothing else: JS values in (via `serde-wasm-bindgen`), core
//! calls, JS values out (JSON-compatible: plain objects and `null`, never `Map`s or
//! `undefined`). Core errors become JS `Error`s whose message is the core's message. Every
//! decision about what is chunked, embedded or ranked lives in `memloom-core`.

use std::sync::OnceLock;

use memloom_core as core;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

/// Serializes to a plain JS value (objects, not `Map`s; `None` as `null`).
fn to_js<T: Serialize>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(|e| JsError::new(&e.to_string()))
}

/// Deserializes `value` as `T`, naming `what` in the error.
fn from_js<T: for<'de> Deserialize<'de>>(value: JsValue, what: &str) -> Result<T, JsError> {
    serde_wasm_bindgen::from_value(value).map_err(|e| {
        let msg = e.to_string();
        let msg = msg.strip_prefix("Error: ").unwrap_or(&msg);
        JsError::new(&format!("invalid {what}: {msg}"))
    })
}

fn core_err(e: core::Error) -> JsError {
    JsError::new(&e.to_string())
}

/// `chunk` options as JS passes them: every field optional.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct JsChunkOptions {
    max_bytes: Option<usize>,
}

/// Chunks a document (markdown by extension of `source`, plain text otherwise).
#[wasm_bindgen]
pub fn chunk(source: &str, text: &str, options: JsValue) -> Result<JsValue, JsError> {
    let js: JsChunkOptions = if options.is_undefined() || options.is_null() {
        JsChunkOptions::default()
    } else {
        from_js(options, "chunk options")?
    };
    let mut opts = core::ChunkOptions::default();
    if let Some(max_bytes) = js.max_bytes {
        opts.max_bytes = max_bytes;
    }
    let chunks = core::chunk_document(source, text, &opts).map_err(core_err)?;
    to_js(&chunks)
}

/// Embeds one text with `hash-v1`.
#[wasm_bindgen]
pub fn embed(text: &str) -> Vec<f32> {
    core::embed(text)
}

/// Embeds many texts with `hash-v1`: one `Float32Array` per text, in order.
#[wasm_bindgen(js_name = embedBatch)]
pub fn embed_batch(texts: Vec<String>) -> Vec<js_sys::Float32Array> {
    texts
        .iter()
        .map(|t| js_sys::Float32Array::from(core::embed(t).as_slice()))
        .collect()
}

/// The embedder's identity: `{ id: "hash-v1", name: "hash", version: 1, dims: 256 }`.
#[wasm_bindgen(js_name = embedderInfo)]
pub fn embedder_info() -> Result<JsValue, JsError> {
    info_js(core::HASH_V1)
}

fn info_js(info: core::EmbedderInfo) -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    struct Info {
        id: String,
        name: &'static str,
        version: u32,
        dims: usize,
    }
    to_js(&Info {
        id: info.id(),
        name: info.name,
        version: info.version,
        dims: info.dims,
    })
}

/// The static embedders' table (`static-v1.bin`, both versions) once loaded. Not compiled in (it is ~7.8 MB): the package ships it as
/// a file and passes its bytes to `loadStaticModel`, so the wasm stays small for those who
/// never use it.
static STATIC_MODEL: OnceLock<core::StaticModel> = OnceLock::new();

/// Loads the static embedders' table from the bytes of `static-v1.bin` (checked: magic, sizes,
/// checksum). Once one is loaded, later calls keep it and return at once.
#[wasm_bindgen(js_name = loadStaticModel)]
pub fn load_static_model(bytes: &[u8]) -> Result<(), JsError> {
    if STATIC_MODEL.get().is_none() {
        let model = core::StaticModel::from_bytes(bytes).map_err(core_err)?;
        let _ = STATIC_MODEL.set(model);
    }
    Ok(())
}

/// Whether `loadStaticModel` has succeeded.
#[wasm_bindgen(js_name = staticModelLoaded)]
pub fn static_model_loaded() -> bool {
    STATIC_MODEL.get().is_some()
}

fn static_model() -> Result<&'static core::StaticModel, JsError> {
    STATIC_MODEL.get().ok_or_else(|| {
        JsError::new(
            "static-v1's table is not loaded; call loadStaticModel(bytes of static-v1.bin) first (staticEmbedder() does it)",
        )
    })
}

/// The static embedder's version from its number (1: `static-v1`, 2: `static-v2`).
fn static_version(version: u32) -> Result<core::StaticVersion, JsError> {
    core::StaticVersion::from_version(version).ok_or_else(|| {
        JsError::new(&format!(
            "no static embedder version {version}; the versions are 1 (static-v1) and 2 (static-v2)"
        ))
    })
}

/// Embeds one text with the static embedder's `version` (1 or 2).
#[wasm_bindgen(js_name = embedStatic)]
pub fn embed_static(text: &str, version: u32) -> Result<Vec<f32>, JsError> {
    Ok(static_model()?.embed(text, static_version(version)?))
}

/// Embeds many texts with the static embedder's `version` (1 or 2): one `Float32Array` per
/// text, in order.
#[wasm_bindgen(js_name = embedStaticBatch)]
pub fn embed_static_batch(
    texts: Vec<String>,
    version: u32,
) -> Result<Vec<js_sys::Float32Array>, JsError> {
    let model = static_model()?;
    let version = static_version(version)?;
    Ok(texts
        .iter()
        .map(|t| js_sys::Float32Array::from(model.embed(t, version).as_slice()))
        .collect())
}

/// The WordPiece ids the static embedders sum for `text` (no `[CLS]` / `[SEP]`), for parity tests.
#[wasm_bindgen(js_name = tokenizeStatic)]
pub fn tokenize_static(text: &str) -> Result<Vec<u32>, JsError> {
    Ok(static_model()?.tokenize(text))
}

/// The static embedder's identity for `version`, e.g. `{ id: "static-v2", name: "static",
/// version: 2, dims: 512 }`.
#[wasm_bindgen(js_name = staticEmbedderInfo)]
pub fn static_embedder_info(version: u32) -> Result<JsValue, JsError> {
    info_js(static_version(version)?.info())
}

/// An API embedder as JS sees it: what to POST where, and the identity a store records.
#[derive(Serialize)]
struct JsApiEmbedder {
    endpoint: String,
    model: String,
    dims: usize,
    id: String,
    name: String,
    version: u32,
}

fn api_js(api: &core::ApiEmbedder) -> JsApiEmbedder {
    JsApiEmbedder {
        endpoint: api.endpoint().to_string(),
        model: api.model().to_string(),
        dims: api.dims(),
        id: api.id(),
        name: api.name(),
        version: api.version(),
    }
}

/// Checks an API embedder's settings (`url`, `model`, `dims`; unset: `undefined`) into
/// `{ endpoint, model, dims, id, name, version }`.
#[wasm_bindgen(js_name = apiEmbedderSpec)]
pub fn api_embedder_spec(
    url: Option<String>,
    model: Option<String>,
    dims: Option<f64>,
) -> Result<JsValue, JsError> {
    let api = core::ApiEmbedder::new(url.as_deref(), model.as_deref(), dims).map_err(core_err)?;
    to_js(&api_js(&api))
}

/// The embedder the settings select: `{ offline: "hash-v1" | "static-v1" | "static-v2" }` or `{ api: spec }`
/// (the spec as `apiEmbedderSpec` gives it).
#[wasm_bindgen(js_name = chooseEmbedder)]
pub fn choose_embedder(
    name: Option<String>,
    url: Option<String>,
    model: Option<String>,
    dims: Option<f64>,
) -> Result<JsValue, JsError> {
    #[derive(Serialize)]
    #[serde(rename_all = "lowercase")]
    enum JsChoice {
        Offline(String),
        Api(JsApiEmbedder),
    }
    let choice = core::choose_embedder(&core::EmbedderSettings {
        name: name.as_deref(),
        url: url.as_deref(),
        model: model.as_deref(),
        dims,
    })
    .map_err(core_err)?;
    to_js(&match &choice {
        core::EmbedderChoice::Api(api) => JsChoice::Api(api_js(api)),
        offline => JsChoice::Offline(offline.id()),
    })
}

/// The spec `apiEmbedderSpec` returned, checked again (its endpoint is its own endpoint).
fn api_of(endpoint: &str, model: &str, dims: f64) -> Result<core::ApiEmbedder, JsError> {
    core::ApiEmbedder::new(Some(endpoint), Some(model), Some(dims)).map_err(core_err)
}

/// The body of one embeddings call for `texts`, as a plain object for `JSON.stringify`.
#[wasm_bindgen(js_name = apiEmbeddingsRequest)]
pub fn api_embeddings_request(
    endpoint: &str,
    model: &str,
    dims: f64,
    texts: Vec<String>,
) -> Result<JsValue, JsError> {
    to_js(&api_of(endpoint, model, dims)?.request(&texts))
}

/// The vectors of an embeddings answer (`JSON.parse` of its body; `null` when it was not JSON)
/// to a call with `inputs` texts: one `Float32Array` per input, in input order. Read from the
/// JS value, so the wasm carries no JSON parser.
#[wasm_bindgen(js_name = apiEmbeddingsResponse)]
pub fn api_embeddings_response(
    endpoint: &str,
    model: &str,
    dims: f64,
    answer: JsValue,
    inputs: usize,
) -> Result<Vec<js_sys::Float32Array>, JsError> {
    let vectors = api_of(endpoint, model, dims)?
        .parse_response(serde_wasm_bindgen::Deserializer::from(answer), inputs)
        .map_err(core_err)?;
    Ok(vectors
        .iter()
        .map(|v| js_sys::Float32Array::from(v.as_slice()))
        .collect())
}

/// Fusion parameters as JS passes them: every field optional, defaults from the core.
#[derive(Deserialize, Default)]
struct JsFuseParams {
    k: Option<u32>,
    weights: Option<JsWeights>,
}

#[derive(Deserialize, Default)]
struct JsWeights {
    vector: Option<f64>,
    keyword: Option<f64>,
    entity: Option<f64>,
}

#[derive(Deserialize)]
struct JsArms {
    #[serde(default)]
    vector: Vec<i64>,
    #[serde(default)]
    keyword: Vec<i64>,
    #[serde(default)]
    entity: Vec<i64>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct JsFused {
    id: i64,
    rrf_score: f64,
    ranks: core::Ranks,
}

/// Weighted reciprocal-rank fusion of the arms' rankings (ids best first).
#[wasm_bindgen]
pub fn fuse(arms: JsValue, params: JsValue) -> Result<JsValue, JsError> {
    let arms: JsArms = from_js(arms, "fuse arms")?;
    let js: JsFuseParams = if params.is_undefined() || params.is_null() {
        JsFuseParams::default()
    } else {
        from_js(params, "fuse params")?
    };
    let mut p = core::FuseParams::default();
    if let Some(k) = js.k {
        p.k = k;
    }
    if let Some(w) = js.weights {
        p.weights.vector = w.vector.unwrap_or(p.weights.vector);
        p.weights.keyword = w.keyword.unwrap_or(p.weights.keyword);
        p.weights.entity = w.entity.unwrap_or(p.weights.entity);
    }
    let arms = core::ArmRankings {
        vector: arms.vector,
        keyword: arms.keyword,
        entity: arms.entity,
    };
    let fused: Vec<JsFused> = core::fuse(&arms, &p)
        .map_err(core_err)?
        .into_iter()
        .map(|f| JsFused {
            id: f.id,
            rrf_score: f.rrf_score,
            ranks: f.ranks,
        })
        .collect();
    to_js(&fused)
}

/// Each hit's explain terms (`{vector, keyword, entity}`, each `{rank, weight, term}` or null
/// where the arm did not vote), for a list of hits' ranks, the weights in effect and `k`. One
/// call for all the hits of a recall: crossing into the wasm per hit cost more than the terms.
#[wasm_bindgen(js_name = explainTerms)]
pub fn explain_terms(ranks: JsValue, weights: JsValue, k: f64) -> Result<JsValue, JsError> {
    let ranks: Vec<core::Ranks> = from_js(ranks, "ranks")?;
    let weights: core::Weights = from_js(weights, "weights")?;
    let terms: Vec<core::ArmTerms> = ranks
        .iter()
        .map(|r| core::explain_terms(r, &weights, k))
        .collect();
    to_js(&terms)
}

/// A recall response (`{query, results}`; other fields are ignored) as the text an agent reads.
#[wasm_bindgen(js_name = formatRecall)]
pub fn format_recall(recall: JsValue) -> Result<String, JsError> {
    let r: core::recall_text::Recall = from_js(recall, "recall response")?;
    Ok(core::recall_text::format_recall(&r.query, &r.results))
}

/// Where a recall hit comes from, as an agent should cite it.
#[wasm_bindgen]
pub fn citation(hit: JsValue) -> Result<String, JsError> {
    let h: core::recall_text::Hit = from_js(hit, "recall hit")?;
    Ok(core::recall_text::citation(&h))
}

/// What remember answers a model, from the saved memory's key, id and version. Plain arguments,
/// not an object through serde: its deserializer cost the wasm 1.3 KB gzipped.
#[wasm_bindgen(js_name = rememberedText)]
pub fn remembered_text(key: Option<String>, id: f64, version: f64) -> String {
    // Ids and versions are integers well inside f64's exact range; `as` saturates, never panics.
    core::recall_text::remembered_text(key.as_deref(), id as i64, version as i64)
}

/// An instant text (`asOf`, `since`, `until`, a memory's `at`) by memloom-core's rule, as the
/// canonical UTC text `YYYY-MM-DDTHH:MM:SS.mmmZ`; the error names `field`.
#[wasm_bindgen(js_name = parseInstant)]
pub fn parse_instant(field: &str, text: &str, end_of_day: bool) -> Result<String, JsError> {
    core::parse_instant(field, text, end_of_day, core::InstantForms::TextOrDate)
        .map(core::Instant::iso)
        .map_err(core_err)
}

/// A `Date`'s time value as the same canonical text (`shown`: the Date as an error shows it).
#[wasm_bindgen(js_name = dateInstant)]
pub fn date_instant(field: &str, millis: f64, shown: &str) -> Result<String, JsError> {
    core::Instant::from_millis(field, millis, shown)
        .map(core::Instant::iso)
        .map_err(core_err)
}

/// The refusal of a value that is neither text nor a `Date` (`shown`: the value as JSON).
#[wasm_bindgen(js_name = notAnInstant)]
pub fn not_an_instant(field: &str, shown: &str) -> String {
    core::not_an_instant(field, shown, core::InstantForms::TextOrDate).to_string()
}

/// A recall's `since` .. `until` (canonical texts, as `parseInstant` / `dateInstant` give them,
/// or null): an error when the window is empty.
#[wasm_bindgen(js_name = checkWindow)]
pub fn check_window(since: Option<String>, until: Option<String>) -> Result<(), JsError> {
    let at = |field: &str, v: Option<String>| {
        v.map(|v| core::parse_instant(field, &v, false, core::InstantForms::Text))
            .transpose()
    };
    core::check_window(
        at("since", since).map_err(core_err)?,
        at("until", until).map_err(core_err)?,
    )
    .map_err(core_err)
}

/// The offline embedders' ids, the default first (npm/schema/embedders.js is built from it).
#[wasm_bindgen(js_name = offlineEmbedders)]
pub fn offline_embedders() -> Vec<String> {
    core::embed::OFFLINE_EMBEDDERS
        .iter()
        .map(core::EmbedderInfo::id)
        .collect()
}

/// The refusal of an `MEMLOOM_EMBEDDER` that names no offline embedder.
#[wasm_bindgen(js_name = unknownEmbedder)]
pub fn unknown_embedder(name: &str) -> String {
    core::unknown_embedder(name).to_string()
}

/// A mention as JS sees it: `{ name, display, kind, strength, count }`.
#[derive(Serialize)]
struct JsMention<'a> {
    name: &'a str,
    display: &'a str,
    kind: &'static str,
    strength: f32,
    count: u32,
}

/// The entities a text mentions (offline extractor), strongest first. `breadcrumb` (optional)
/// is the heading path of a chunk; its last segment is the item's topic.
#[wasm_bindgen(js_name = extractEntities)]
pub fn extract_entities(text: &str, breadcrumb: Option<String>) -> Result<JsValue, JsError> {
    let mentions = core::extract_entities(text, breadcrumb.as_deref());
    let js: Vec<JsMention> = mentions
        .iter()
        .map(|m| JsMention {
            name: &m.name,
            display: &m.display,
            kind: m.kind.as_str(),
            strength: m.strength,
            count: m.count,
        })
        .collect();
    to_js(&js)
}

#[derive(Serialize)]
struct JsEntityKind {
    kind: &'static str,
    words: &'static str,
}

/// The entity kinds (memloom-core's `EntityKind::ALL`), each with its serialised name and the
/// words a model reads next to an entity's name: `[{kind: "error_code", words: "error code"}, ...]`.
#[wasm_bindgen(js_name = entityKinds)]
pub fn entity_kinds() -> Result<JsValue, JsError> {
    let js: Vec<JsEntityKind> = core::EntityKind::ALL
        .iter()
        .map(|k| JsEntityKind {
            kind: k.as_str(),
            words: k.words(),
        })
        .collect();
    to_js(&js)
}

/// Most mentions the offline extractor keeps per item (memloom-core's `MAX_MENTIONS`); an LLM
/// extractor's mentions are capped the same.
#[wasm_bindgen(js_name = maxMentions)]
pub fn max_mentions() -> usize {
    core::entity::MAX_MENTIONS
}

/// One vector in pgvector's binary form (memloom-core's `vector_binary`), for a `vector`
/// parameter sent as bytes (a recall's query).
#[wasm_bindgen(js_name = vectorBinary)]
pub fn vector_binary(vector: &[f32]) -> Result<Vec<u8>, JsError> {
    core::vector_binary::vector_binary(vector).map_err(|e| JsError::new(&e.to_string()))
}

/// Many vectors as one `vector[]` in PostgreSQL's binary array form (memloom-core's
/// `vector_array_binary`), for a parameter sent as bytes; `null` or `undefined` entries become
/// SQL NULL. `elementOid` is the receiving database's OID of the `vector` type.
#[wasm_bindgen(js_name = vectorArrayBinary)]
pub fn vector_array_binary(vectors: Vec<JsValue>, element_oid: u32) -> Result<Vec<u8>, JsError> {
    use wasm_bindgen::JsCast;
    let mut owned: Vec<Option<Vec<f32>>> = Vec::with_capacity(vectors.len());
    for (i, v) in vectors.iter().enumerate() {
        if v.is_null() || v.is_undefined() {
            owned.push(None);
            continue;
        }
        let Some(a) = v.dyn_ref::<js_sys::Float32Array>() else {
            return Err(JsError::new(&format!(
                "vectorArrayBinary: vector {} is not a Float32Array or null",
                i + 1
            )));
        };
        owned.push(Some(a.to_vec()));
    }
    let refs: Vec<Option<&[f32]>> = owned.iter().map(Option::as_deref).collect();
    core::vector_binary::vector_array_binary(&refs, element_oid)
        .map_err(|e| JsError::new(&e.to_string()))
}
