//! The worker against the contracts it shares with the npm package, as data (native tests only):
//! the recall response's JSON Schema (`schema/recall-response.json`), the golden responses of
//! `tests/golden/recall-response.json` (computed by `tests/golden/make_recall_response.py`,
//! independently of both builders), `openapi.json` (its recall components are built from the
//! schema by `scripts/gen-openapi.mjs`; checked equal here) and the MCP recall tool's output
//! schema in `mcp_tools.json` (generated from `memloom mcp`, whose zod schema npm builds from
//! the schema file).

use serde_json::{json, Value};

use crate::api::{self, recall_response};
use memloom_sql::FusedRow;

const SCHEMA: &str = include_str!("../../../schema/recall-response.json");
const GOLDEN: &str = include_str!("../../../tests/golden/recall-response.json");
const OPENAPI: &str = include_str!("../openapi.json");

fn schema() -> Value {
    serde_json::from_str(SCHEMA).expect("schema/recall-response.json is JSON")
}

fn validator(schema: &Value) -> jsonschema::Validator {
    jsonschema::validator_for(schema).expect("a valid JSON Schema")
}

fn errors(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect()
}

fn cases() -> Vec<Value> {
    serde_json::from_str::<Vec<Value>>(GOLDEN).expect("tests/golden/recall-response.json is JSON")
}

/// Equal as JSON values, numbers compared as f64 (serde writes an f64 1.0 as `1.0`, Python and
/// JavaScript as `1`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn row(r: &Value) -> FusedRow {
    let s = |k: &str| r[k].as_str().map(str::to_string);
    let rank = |k: &str| r[k].as_i64().map(|v| i32::try_from(v).expect("a rank"));
    FusedRow {
        id: r["id"].as_i64().expect("id"),
        kind: s("kind").expect("kind"),
        source: s("source"),
        breadcrumb: s("breadcrumb"),
        key: s("key"),
        content: s("content").expect("content"),
        rrf_score: r["rrf_score"].as_f64().expect("rrf_score"),
        similarity: r["similarity"].as_f64().expect("similarity"),
        vector_rank: rank("vector_rank"),
        keyword_rank: rank("keyword_rank"),
        entity_rank: rank("entity_rank"),
    }
}

/// The worker's response to a golden case (None: a case timed in fractions of a millisecond,
/// which only the embedded store reports; the worker times in whole milliseconds).
fn worker_response(case: &Value) -> Option<Value> {
    let ms = |v: &Value| v.as_u64();
    let took_ms = ms(&case["tookMs"])?;
    let request = serde_json::to_vec(&case["request"]).unwrap();
    let recall = api::parse_recall(&request).expect("the golden request is valid");
    let rows: Vec<FusedRow> = case["rows"].as_array().unwrap().iter().map(row).collect();
    let explain = match case.get("timings") {
        None => None,
        Some(t) => recall.explain(
            t["embedder"].as_str()?.to_string(),
            ms(&t["embedMs"])?,
            ms(&t["queryMs"])?,
            t.get("connectMs")
                .map(|c| ms(c).expect("whole milliseconds")),
        ),
    };
    Some(serde_json::to_value(recall_response(&recall, &rows, took_ms, explain)).unwrap())
}

#[test]
fn the_worker_builds_the_golden_responses() {
    let mut built = 0;
    for case in cases() {
        let Some(got) = worker_response(&case) else {
            continue;
        };
        let want = &case["response"];
        assert!(
            same(&got, want),
            "{}: the worker built\n{got:#}\nthe golden response is\n{want:#}",
            case["name"]
        );
        built += 1;
    }
    assert!(built >= 3, "only {built} golden cases built");
}

#[test]
fn golden_and_built_responses_match_the_schema() {
    let v = validator(&schema());
    for case in cases() {
        let e = errors(&v, &case["response"]);
        assert!(e.is_empty(), "golden {}: {e:?}", case["name"]);
        if let Some(got) = worker_response(&case) {
            let e = errors(&v, &got);
            assert!(e.is_empty(), "built {}: {e:?}", case["name"]);
        }
    }
}

/// Responses the schema must refuse: it is not a validator that accepts anything.
fn broken_responses() -> Vec<(&'static str, Value)> {
    let explained = cases()
        .into_iter()
        .find(|c| c["request"]["explain"] == json!(true))
        .expect("a golden case with explain")["response"]
        .clone();
    let mut out = Vec::new();
    let mut edit = |what: &'static str, f: &dyn Fn(&mut Value)| {
        let mut r = explained.clone();
        f(&mut r);
        out.push((what, r));
    };
    edit("a hit without ranks", &|r| {
        r["results"][0].as_object_mut().unwrap().remove("ranks");
    });
    edit("a string score", &|r| {
        r["results"][0]["rrfScore"] = json!("0.05")
    });
    edit("an unknown kind", &|r| {
        r["results"][0]["kind"] = json!("file")
    });
    edit("a rank of 0", &|r| {
        r["results"][0]["ranks"]["vector"] = json!(0)
    });
    edit("the old contributions field", &|r| {
        r["results"][0]["contributions"] = json!({"vector": 0.1, "keyword": 0.0, "entity": 0.0});
    });
    edit("a term without its weight", &|r| {
        r["results"][0]["explain"]["terms"]["vector"]
            .as_object_mut()
            .unwrap()
            .remove("weight");
    });
    edit("explain without the embedder", &|r| {
        r["explain"].as_object_mut().unwrap().remove("embedder");
    });
    edit("no tookMs", &|r| {
        r.as_object_mut().unwrap().remove("tookMs");
    });
    out
}

#[test]
fn the_schema_refuses_broken_responses() {
    let v = validator(&schema());
    for (what, r) in broken_responses() {
        assert!(!v.is_valid(&r), "the schema accepted {what}");
    }
}

/// `v` with every local `$ref` replaced by what it points at in `doc` (the schema has no cycles).
fn inline(v: &Value, doc: &Value) -> Value {
    match v {
        Value::Object(m) => {
            if let Some(Value::String(r)) = m.get("$ref") {
                let target = doc
                    .pointer(r.strip_prefix('#').expect("a local $ref"))
                    .unwrap_or_else(|| panic!("{r} resolves"));
                return inline(target, doc);
            }
            Value::Object(m.iter().map(|(k, v)| (k.clone(), inline(v, doc))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(|v| inline(v, doc)).collect()),
        _ => v.clone(),
    }
}

#[test]
fn openapi_recall_response_is_the_schema() {
    // openapi.json's recall components are built from the schema by scripts/gen-openapi.mjs;
    // here both are resolved into one tree each and compared, whatever the components' names.
    let openapi: Value = serde_json::from_str(OPENAPI).unwrap();
    let served = inline(
        &openapi["components"]["schemas"]["RecallResponse"],
        &openapi,
    );
    let schema = schema();
    let mut want = inline(&schema, &schema);
    let want_map = want.as_object_mut().unwrap();
    want_map.remove("$schema");
    want_map.remove("$defs");
    assert!(
        served == want,
        "openapi.json's RecallResponse differs from schema/recall-response.json: run \
         `node scripts/gen-openapi.mjs` and review the diff"
    );
    let names: Vec<&String> = openapi["components"]["schemas"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert!(
        !names.iter().any(|n| *n == "Hit"),
        "a stale hand-written Hit component: {names:?}"
    );
}

#[test]
fn openapi_request_bounds_are_the_limits() {
    // scripts/gen-openapi.mjs fills them from schema/limits.json, which build.rs turns into
    // crate::limits; the worker enforces those consts, so the document must publish the same.
    use crate::limits::*;
    let openapi: Value = serde_json::from_str(OPENAPI).unwrap();
    let schemas = &openapi["components"]["schemas"];
    let recall = &schemas["RecallRequest"]["properties"];
    let memory = &schemas["MemoryRequest"]["properties"];
    let hint = "openapi.json's request bounds differ from schema/limits.json: run \
                `node scripts/gen-openapi.mjs` and review the diff";
    assert_eq!(recall["query"]["maxLength"], MAX_QUERY_CHARS, "{hint}");
    assert_eq!(recall["limit"]["maximum"], MAX_LIMIT, "{hint}");
    assert_eq!(recall["limit"]["default"], DEFAULT_LIMIT, "{hint}");
    for arm in ["vector", "keyword", "entity"] {
        let max = recall["weights"]["properties"][arm]["maximum"].as_f64();
        assert_eq!(max, Some(MAX_WEIGHT), "{arm}: {hint}");
    }
    assert_eq!(memory["text"]["maxLength"], MAX_MEMORY_BYTES, "{hint}");
    assert_eq!(memory["key"]["maxLength"], MAX_KEY_CHARS, "{hint}");
}

#[test]
fn the_served_openapi_resolves_the_recall_response() {
    // Every component a recall response refers to is in the served document, and the golden
    // responses validate against the RecallResponse component resolved inside it.
    let openapi: Value = serde_json::from_str(OPENAPI).unwrap();
    let mut doc = openapi["components"]["schemas"]["RecallResponse"].clone();
    doc["components"] = openapi["components"].clone();
    doc["$schema"] = json!("https://json-schema.org/draft/2020-12/schema");
    let v = validator(&doc);
    for case in cases() {
        let e = errors(&v, &case["response"]);
        assert!(e.is_empty(), "openapi, golden {}: {e:?}", case["name"]);
    }
    for (what, r) in broken_responses() {
        assert!(!v.is_valid(&r), "openapi's RecallResponse accepted {what}");
    }
}

#[test]
fn the_embedded_documents_are_the_files_without_their_indentation() {
    // build.rs strips the white space between tokens (key order kept) from what the wasm embeds.
    let embedded = [
        (crate::route::OPENAPI_JSON, OPENAPI),
        (crate::mcp::TOOLS_FILE, include_str!("mcp_tools.json")),
    ];
    for (served, file) in embedded {
        let (a, b): (Value, Value) = (
            serde_json::from_str(served).unwrap(),
            serde_json::from_str(file).unwrap(),
        );
        assert_eq!(a, b);
        assert!(!served.contains("\n  "), "still indented");
        // Key order kept: the first keys come in the file's order (Value sorts them).
        let first = |s: &str| {
            s.split(':')
                .next()
                .unwrap()
                .trim_start_matches(['{', ' ', '\n'])
                .to_string()
        };
        assert_eq!(first(served), first(file));
    }
}

#[test]
fn the_mcp_recall_output_schema_takes_the_golden_responses() {
    // mcp_tools.json is `memloom mcp`'s tools/list, whose recall outputSchema npm builds from
    // the schema file (npm/src/tools.js): the golden responses pass it, the broken ones fail.
    let file: Value = serde_json::from_str(crate::mcp::TOOLS_FILE).unwrap();
    let recall = file["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "recall")
        .expect("the recall tool");
    let v = validator(&recall["outputSchema"]);
    for case in cases() {
        let e = errors(&v, &case["response"]);
        assert!(
            e.is_empty(),
            "mcp_tools.json, golden {}: {e:?}",
            case["name"]
        );
    }
    for (what, r) in broken_responses() {
        assert!(
            !v.is_valid(&r),
            "the MCP recall outputSchema accepted {what}"
        );
    }
}
