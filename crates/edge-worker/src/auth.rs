//! Bearer tokens -> namespaces. The worker never stores a token: the `MEMLOOM_TOKENS` secret is
//! a JSON object mapping the lowercase hex SHA-256 of each token to its namespace,
//! `{"9f86d0...": "team-a"}`. A request's token is hashed and looked up; a hit gives the one
//! namespace every query of that request is scoped to.

use std::collections::HashMap;

use sha2::{Digest, Sha256};

use crate::ApiError;

/// Longest namespace accepted in the token map.
pub const MAX_NAMESPACE_LEN: usize = 200;
/// Shortest token accepted: shorter ones are guessable.
pub const MIN_TOKEN_LEN: usize = 16;
/// Longest token accepted (header abuse guard).
pub const MAX_TOKEN_LEN: usize = 512;

/// The parsed `MEMLOOM_TOKENS` secret.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TokenMap {
    by_hash: HashMap<String, String>,
}

impl TokenMap {
    /// Parses the secret. Errors name the offending entry by position, never by value.
    pub fn parse(json: &str) -> Result<TokenMap, String> {
        let raw: HashMap<String, String> = serde_json::from_str(json).map_err(|e| {
            format!("MEMLOOM_TOKENS is not a JSON object of sha256-hex -> namespace: {e}")
        })?;
        let mut by_hash = HashMap::with_capacity(raw.len());
        for (i, (hash, ns)) in raw.into_iter().enumerate() {
            let hash = hash.to_ascii_lowercase();
            if hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(format!(
                    "MEMLOOM_TOKENS entry {i}: the key must be 64 hex digits (the token's SHA-256), not {} characters",
                    hash.len()
                ));
            }
            if ns.is_empty() || ns.len() > MAX_NAMESPACE_LEN {
                return Err(format!(
                    "MEMLOOM_TOKENS entry {i}: the namespace must have 1 to {MAX_NAMESPACE_LEN} bytes"
                ));
            }
            by_hash.insert(hash, ns);
        }
        Ok(TokenMap { by_hash })
    }

    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// The namespace of a token, if the token is known.
    pub fn namespace(&self, token: &str) -> Option<&str> {
        self.by_hash.get(&token_hash(token)).map(String::as_str)
    }
}

/// Lowercase hex SHA-256 of a token: what `MEMLOOM_TOKENS` stores
/// (`printf %s "$TOKEN" | sha256sum`).
pub fn token_hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let mut out = String::with_capacity(64);
    for b in digest.iter() {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// The token of an `Authorization` header value (`Bearer <token>`, scheme case-insensitive).
pub fn bearer_token(header: Option<&str>) -> Result<&str, ApiError> {
    let header = header.ok_or_else(|| {
        ApiError::unauthorized("missing bearer token; send Authorization: Bearer <token>")
    })?;
    let header = header.trim();
    let (scheme, token) = header.split_once(' ').unwrap_or((header, ""));
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(ApiError::unauthorized(
            "the Authorization header must use the Bearer scheme: Authorization: Bearer <token>",
        ));
    }
    let token = token.trim();
    if token.len() < MIN_TOKEN_LEN
        || token.len() > MAX_TOKEN_LEN
        || !token.bytes().all(|b| b.is_ascii_graphic())
    {
        return Err(unknown_token());
    }
    Ok(token)
}

/// The one answer for a token that is malformed, unknown or revoked (no oracle).
pub fn unknown_token() -> ApiError {
    ApiError::unauthorized("unknown or revoked token")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "test-token-namespace-a-0123456789";

    #[test]
    fn hash_matches_sha256sum() {
        // printf %s abc | sha256sum
        assert_eq!(
            token_hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn map_resolves_known_tokens_only() {
        let json = format!(r#"{{"{}": "team-a"}}"#, token_hash(TOKEN).to_uppercase());
        let map = TokenMap::parse(&json).unwrap();
        assert_eq!(map.namespace(TOKEN), Some("team-a"));
        assert_eq!(map.namespace("another-token-0123456789"), None);
    }

    #[test]
    fn map_rejects_plain_tokens_and_empty_namespaces() {
        let err = TokenMap::parse(r#"{"my-secret-token": "a"}"#).unwrap_err();
        assert!(err.contains("64 hex digits"), "{err}");
        assert!(
            !err.contains("my-secret-token"),
            "must not echo a token: {err}"
        );
        let json = format!(r#"{{"{}": ""}}"#, token_hash(TOKEN));
        assert!(TokenMap::parse(&json).unwrap_err().contains("namespace"));
        assert!(TokenMap::parse("[1]").is_err());
    }

    #[test]
    fn bearer_parsing() {
        assert_eq!(bearer_token(Some(&format!("Bearer {TOKEN}"))), Ok(TOKEN));
        assert_eq!(bearer_token(Some(&format!("bearer  {TOKEN} "))), Ok(TOKEN));
        assert_eq!(bearer_token(None).unwrap_err().status, 401);
        assert!(bearer_token(Some("Basic dXNlcjpwYXNz"))
            .unwrap_err()
            .message
            .contains("Bearer"));
        assert_eq!(bearer_token(Some("Bearer short")), Err(unknown_token()));
        assert_eq!(bearer_token(Some("Bearer")), Err(unknown_token()));
    }
}
