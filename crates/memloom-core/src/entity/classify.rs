//! One whitespace-free token -> the typed entities it names (identifier, error code, file, flag,
//! ticket, host, version), or nothing when it is a plain word.
//!
//! The rules, in the order they are tried (the first that matches wins):
//! 1. `--flag[=value]` -> flag; `-x` (one to three letters) inside code -> flag.
//! 2. `scheme://[user@]host[:port]/…` -> host.
//! 3. `#123` (two or more digits) -> ticket.
//! 4. `LEFT=right` -> each side on its own (`NODE_OPTIONS=--max-old-space-size=2048`).
//! 5. A call or index tail is cut: `fs.readFile(path` -> `fs.readFile`.
//! 6. `ERR_*` and the errno names (`EADDRINUSE`) -> error code.
//! 7. `ABC-123` (not a standard such as `SHA-256`) -> ticket, upper-cased.
//! 8. `v18.19.0`, `18.19.0`, `18.x` -> version, as `v…`; four numbers -> host (IPv4).
//! 9. Paths (`/etc/x`, `./x`, `~/x`, `a/b.ext`, `a/b/c`) and `name.ext` with a known extension
//!    -> file, case-folded; a path's base name is a file too.
//! 10. `host:port`, dotted lowercase names ending in a known last label, `localhost` -> host.
//! 11. `$NAME`, `@scope/pkg`, `node:fs`, anything with `_`, dotted names (`fs.readFile`), camel
//!     case (`readFileSync`), `Content-Type`, and hyphenated lowercase words that look like
//!     service names (`billing-db-1`, `orders-api`, or followed by "service", "worker"…)
//!     -> identifier, spelling kept.

use super::canon::{cut_call_tail, trim_word};
use super::stoplist::{
    contains, AMBIGUOUS_EXTS, ERRNO, FILE_EXTS, NOT_TICKET, SERVICE_PARTS, TLDS,
};
use super::strength::FACTOR_PATH_BASENAME;
use super::EntityKind;

/// One typed entity found in a token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Typed {
    pub kind: EntityKind,
    pub name: String,
    /// Multiplies the occurrence's weight (see `strength.rs`).
    pub factor: f32,
}

/// What the scanner knows about a token's surroundings.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Context {
    /// The token is inside an inline code span or is a whole heading.
    pub in_code: bool,
    /// The next word is a noun such as "service" or "worker".
    pub before_thing_noun: bool,
}

/// Longest token looked at; longer runs (base64, minified code) are not entities.
const MAX_TOKEN_BYTES: usize = 200;

fn typed(kind: EntityKind, name: impl Into<String>) -> Typed {
    Typed {
        kind,
        name: name.into(),
        factor: 1.0,
    }
}

/// Appends the typed entities `tok` names to `out`; returns whether there were any.
pub(crate) fn classify(tok: &str, ctx: Context, out: &mut Vec<Typed>) -> bool {
    let before = out.len();
    classify_into(tok, ctx, out, 0);
    out.len() > before
}

fn classify_into(tok: &str, ctx: Context, out: &mut Vec<Typed>, depth: u8) {
    if tok.len() > MAX_TOKEN_BYTES || !tok.chars().any(char::is_alphanumeric) {
        return;
    }
    // 1. flags
    if let Some(rest) = tok.strip_prefix("--") {
        let name = rest.split('=').next().unwrap_or("");
        let name = name.trim_end_matches(['.', ',', ':']);
        if name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        {
            out.push(typed(EntityKind::Flag, format!("--{name}")));
            if let Some((_, value)) = rest.split_once('=') {
                if depth == 0 {
                    classify_into(trim_word(value), ctx, out, depth + 1);
                }
            }
        }
        return;
    }
    if ctx.in_code && tok.len() <= 4 {
        if let Some(rest) = tok.strip_prefix('-') {
            if !rest.is_empty() && rest.chars().all(|c| c.is_ascii_alphabetic()) {
                out.push(typed(EntityKind::Flag, tok));
            }
            return;
        }
    }
    // 2. URLs
    if let Some(at) = tok.find("://") {
        let authority = tok[at + 3..].split(['/', '?', '#']).next().unwrap_or("");
        let host = authority.rsplit('@').next().unwrap_or("");
        let host = strip_port(host).unwrap_or(host).to_ascii_lowercase();
        if is_hostname(&host) && (host.contains('.') || host == "localhost") {
            out.push(typed(EntityKind::Host, host));
        }
        return;
    }
    // 3. #123
    if let Some(num) = tok.strip_prefix('#') {
        if num.len() >= 2 && num.bytes().all(|b| b.is_ascii_digit()) {
            out.push(typed(EntityKind::Ticket, tok));
        }
        return;
    }
    // 4. KEY=value
    if let Some((left, right)) = tok.split_once('=') {
        if depth == 0 {
            classify_into(trim_word(left), ctx, out, depth + 1);
            classify_into(trim_word(right), ctx, out, depth + 1);
        }
        return;
    }
    // 5. call / index tails
    let tok = cut_call_tail(tok);
    let tok = tok.strip_prefix("new ").unwrap_or(tok);
    if tok.is_empty() || tok.contains(['(', ')', '[', ']', '{', '}', '<', '>', ',', '"', '\'']) {
        return;
    }
    // 6. error codes
    if (tok.starts_with("ERR_") && is_upper_snake(tok)) || contains(ERRNO, tok) {
        out.push(typed(EntityKind::ErrorCode, tok));
        return;
    }
    // 7. tickets
    if let Some(t) = ticket(tok) {
        out.push(typed(EntityKind::Ticket, t));
        return;
    }
    // 8. versions and IPv4 addresses
    if let Some(v) = version(tok) {
        out.push(typed(EntityKind::Version, v));
        return;
    }
    if is_ipv4(strip_port(tok).unwrap_or(tok)) {
        out.push(typed(EntityKind::Host, strip_port(tok).unwrap_or(tok)));
        return;
    }
    if !tok.chars().any(char::is_alphabetic) {
        return;
    }
    // 9. files
    if let Some(()) = file(tok, out) {
        return;
    }
    // 10. hosts
    if let Some(h) = host(tok) {
        out.push(typed(EntityKind::Host, h));
        return;
    }
    // 11. identifiers
    if let Some(id) = identifier(tok, ctx) {
        out.push(typed(EntityKind::Identifier, id));
    }
}

fn is_upper_snake(tok: &str) -> bool {
    tok.bytes()
        .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

fn ticket(tok: &str) -> Option<String> {
    let (prefix, rest) = tok.split_once('-')?;
    let mut pchars = prefix.chars();
    let ok_prefix = pchars.next().is_some_and(|c| c.is_ascii_uppercase())
        && (2..=10).contains(&prefix.len())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && !contains(NOT_TICKET, prefix);
    if !ok_prefix {
        return None;
    }
    // CVE-2024-1234
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = digits(rest)
        || (prefix == "CVE"
            && rest
                .split_once('-')
                .is_some_and(|(a, b)| digits(a) && digits(b)));
    ok.then(|| tok.to_string())
}

/// `v18.19.0`, `V18.19`, `18.19.0`, `18.x`, `1.2.3-rc.1` -> `v…` (lowercase).
fn version(tok: &str) -> Option<String> {
    let (had_v, body) = match tok.strip_prefix(['v', 'V']) {
        Some(b) => (true, b),
        None => (false, tok),
    };
    let (core, suffix) = match body.find(['-', '+']) {
        Some(at) => (&body[..at], &body[at..]),
        None => (body, ""),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let numeric = |p: &str| !p.is_empty() && p.len() <= 9 && p.bytes().all(|b| b.is_ascii_digit());
    let wildcard = |p: &str| p == "x" || p == "X";
    if parts.is_empty()
        || parts.len() > 4
        || !numeric(parts[0])
        || !parts[1..].iter().all(|p| numeric(p) || wildcard(p))
    {
        return None;
    }
    let has_wildcard = parts[1..].iter().any(|p| wildcard(p));
    let ok = match parts.len() {
        1 => false,
        2 => had_v || has_wildcard,
        3 => true,
        _ => had_v, // four bare numbers are an IPv4 address
    };
    if !ok
        || !suffix
            .chars()
            .skip(1)
            .all(|c| c.is_ascii_alphanumeric() || c == '.')
    {
        return None;
    }
    Some(format!(
        "v{}{}",
        core.to_ascii_lowercase(),
        suffix.to_ascii_lowercase()
    ))
}

fn is_ipv4(tok: &str) -> bool {
    let parts: Vec<&str> = tok.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.len() <= 3
                && p.bytes().all(|b| b.is_ascii_digit())
                && p.parse::<u16>().is_ok_and(|n| n <= 255)
        })
}

/// `host:1234` -> `host`.
fn strip_port(tok: &str) -> Option<&str> {
    let (host, port) = tok.rsplit_once(':')?;
    (!host.is_empty()
        && !port.is_empty()
        && port.len() <= 5
        && port.bytes().all(|b| b.is_ascii_digit()))
    .then_some(host)
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|label| {
            !label.is_empty()
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        })
        && s.bytes().any(|b| b.is_ascii_lowercase())
}

fn host(tok: &str) -> Option<String> {
    if let Some(h) = strip_port(tok) {
        let lower = h.to_ascii_lowercase();
        return is_hostname(&lower).then_some(lower);
    }
    if tok == "localhost" {
        return Some(tok.to_string());
    }
    let last = tok.rsplit_once('.')?.1;
    (is_hostname(tok) && contains(TLDS, last)).then(|| tok.to_string())
}

/// `name.ext` with a known extension; for extensions that are also property names
/// (`console.log`, `process.env`) the stem must hold a `-`, `_`, `.` or digit.
fn has_known_ext(name: &str) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    if stem.is_empty() || ext.is_empty() || ext.len() > 10 {
        return false;
    }
    let ext = ext.to_ascii_lowercase();
    contains(FILE_EXTS, &ext)
        || (contains(AMBIGUOUS_EXTS, &ext)
            && stem.contains(|c: char| c.is_ascii_digit() || matches!(c, '-' | '_' | '.')))
}

/// `.env`, `.env.local`, `.npmrc`, `.gitignore`, `.eslintrc.json`; not `.stack`.
fn is_dotfile(tok: &str) -> bool {
    let Some(rest) = tok.strip_prefix('.') else {
        return false;
    };
    let first = rest.split('.').next().unwrap_or("");
    rest.starts_with(|c: char| c.is_ascii_alphabetic())
        && (first == "env"
            || first.ends_with("rc")
            || first.ends_with("ignore")
            || first.ends_with("config")
            || first.ends_with("attributes")
            || contains(FILE_EXTS, first))
}

fn is_path_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '/' | '.' | '_' | '-' | '~' | '@' | '+' | '%' | '*' | ':')
}

/// Files and paths. `Node.js` and `Vue.js` are product names, not files.
fn file(tok: &str, out: &mut Vec<Typed>) -> Option<()> {
    if !tok.chars().all(is_path_char) {
        return None;
    }
    let lower = tok.to_lowercase();
    if tok.contains('/') {
        if tok.starts_with('@') {
            return None; // npm scope: an identifier
        }
        let basename = lower.rsplit('/').next().unwrap_or("");
        let rooted = ["/", "./", "../", "~/"].iter().any(|p| tok.starts_with(p));
        let slashes = tok.matches('/').count();
        let ok = (rooted && tok.len() > 1) || has_known_ext(basename) || slashes >= 2;
        if !ok || tok.contains("//") || tok.contains(':') {
            return None;
        }
        let path = lower.trim_end_matches('/').to_string();
        out.push(typed(EntityKind::File, path.clone()));
        if basename != path && has_known_ext(basename) {
            out.push(Typed {
                kind: EntityKind::File,
                name: basename.to_string(),
                factor: FACTOR_PATH_BASENAME,
            });
        }
        return Some(());
    }
    if tok.contains(':') {
        return None;
    }
    // product names: `Node.js`, `Next.js`
    if let Some(stem) = tok.strip_suffix(".js") {
        if stem.starts_with(|c: char| c.is_uppercase()) && !stem.contains('.') {
            return None;
        }
    }
    if is_dotfile(&lower) || has_known_ext(&lower) {
        out.push(typed(EntityKind::File, lower));
        return Some(());
    }
    None
}

fn identifier(tok: &str, ctx: Context) -> Option<String> {
    // $HOME, $NODE_ENV
    if let Some(var) = tok.strip_prefix('$') {
        if !var.is_empty() && var.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return Some(var.to_string());
        }
        return None;
    }
    let ident_char = |c: char| c.is_alphanumeric() || matches!(c, '_' | '$');
    // @scope/pkg, @decorator
    if let Some(rest) = tok.strip_prefix('@') {
        let ok = rest.starts_with(|c: char| c.is_ascii_alphabetic())
            && rest
                .chars()
                .all(|c| ident_char(c) || matches!(c, '/' | '-' | '.'))
            && rest.matches('/').count() <= 1;
        return ok.then(|| tok.to_string());
    }
    // node:fs
    if let Some((scheme, rest)) = tok.split_once(':') {
        let ok = (2..=10).contains(&scheme.len())
            && scheme.bytes().all(|b| b.is_ascii_lowercase())
            && !rest.is_empty()
            && rest.starts_with(|c: char| c.is_alphabetic())
            && rest
                .chars()
                .all(|c| ident_char(c) || matches!(c, '/' | '-' | '.'));
        return ok.then(|| tok.to_string());
    }
    if tok.contains('/') {
        return None;
    }
    // dotted: fs.readFile, process.env.NODE_ENV, Buffer.from
    if tok.contains('.') {
        let parts: Vec<&str> = tok.split('.').collect();
        let ok = parts.len() >= 2
            && parts.iter().all(|p| {
                p.starts_with(|c: char| c.is_alphabetic() || c == '_' || c == '$')
                    && p.chars().all(ident_char)
            })
            && parts.iter().any(|p| p.chars().count() >= 2); // not e.g, i.e
        let product = parts.len() == 2 && parts[1] == "js"; // Node.js
        return (ok && !product).then(|| tok.to_string());
    }
    if tok.contains('_') {
        let ok = tok.chars().all(ident_char)
            && tok.chars().any(char::is_alphanumeric)
            && tok.chars().filter(|c| c.is_alphanumeric()).count() >= 2;
        return ok.then(|| tok.to_string());
    }
    if tok.contains('-') {
        return hyphenated(tok, ctx);
    }
    if !tok.chars().all(ident_char) {
        return None;
    }
    // camel case: readFileSync, AbortController, X509Certificate, macOS
    let chars: Vec<char> = tok.chars().collect();
    // (at least four characters and starting with a letter: not `GiB`, `40P01`)
    let camel = chars.len() >= 4
        && !chars[0].is_numeric()
        && chars
            .windows(2)
            .any(|w| (w[0].is_lowercase() || w[0].is_numeric()) && w[1].is_uppercase());
    let upper_word = chars.len() >= 7
        && chars.iter().all(|c| c.is_uppercase() || c.is_numeric())
        && chars[0].is_alphabetic()
        && tok != "SQLSTATE"; // SIGTERM, OOMKILLED
    (camel || upper_word).then(|| tok.to_string())
}

/// `Content-Type`, `X-Request-Id`, `billing-db-1`, `orders-api`; not `built-in`, `Non-blocking`.
fn hyphenated(tok: &str, ctx: Context) -> Option<String> {
    let parts: Vec<&str> = tok.split('-').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || !p.chars().all(char::is_alphanumeric))
        || !parts
            .iter()
            .any(|p| p.chars().filter(|c| c.is_alphabetic()).count() >= 2)
    {
        return None;
    }
    let has_upper = tok.chars().any(char::is_uppercase);
    if contains(NOT_TICKET, parts[0]) {
        return None; // UTF-8, SHA-256
    }
    if has_upper {
        // every part capitalised (headers) or any part all caps with a letter
        let header = parts
            .iter()
            .all(|p| p.starts_with(|c: char| c.is_uppercase() || c.is_numeric()));
        return header.then(|| tok.to_string());
    }
    let service = ctx.in_code
        || ctx.before_thing_noun
        || parts.iter().any(|p| p.bytes().any(|b| b.is_ascii_digit()))
        || parts.iter().any(|p| contains(SERVICE_PARTS, p));
    service.then(|| tok.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(tok: &str) -> Vec<(EntityKind, String)> {
        let mut out = Vec::new();
        classify(tok, Context::default(), &mut out);
        out.into_iter().map(|t| (t.kind, t.name)).collect()
    }

    fn kind(tok: &str) -> Option<EntityKind> {
        one(tok).first().map(|t| t.0)
    }

    #[test]
    fn each_kind() {
        use EntityKind::*;
        for (tok, k, name) in [
            ("--max-old-space-size=2048", Flag, "--max-old-space-size"),
            (
                "https://staging.orders.acme.dev/x",
                Host,
                "staging.orders.acme.dev",
            ),
            ("#4512", Ticket, "#4512"),
            ("fs.readFile(path", Identifier, "fs.readFile"),
            ("ERR_REQUIRE_ESM", ErrorCode, "ERR_REQUIRE_ESM"),
            ("EADDRINUSE", ErrorCode, "EADDRINUSE"),
            ("JIRA-123", Ticket, "JIRA-123"),
            ("CVE-2024-1234", Ticket, "CVE-2024-1234"),
            ("v18.19.0", Version, "v18.19.0"),
            ("18.19.0", Version, "v18.19.0"),
            ("V20.x", Version, "v20.x"),
            ("127.0.0.1:8080", Host, "127.0.0.1"),
            ("/etc/nginx/nginx.conf", File, "/etc/nginx/nginx.conf"),
            ("pg_hba.conf", File, "pg_hba.conf"),
            ("Package.JSON", File, "package.json"),
            (".env", File, ".env"),
            ("src/lib.rs", File, "src/lib.rs"),
            ("billing-db-1.internal:5432", Host, "billing-db-1.internal"),
            ("api-gateway.internal", Host, "api-gateway.internal"),
            ("cache-redis-01:6379", Host, "cache-redis-01"),
            ("localhost", Host, "localhost"),
            ("UV_THREADPOOL_SIZE", Identifier, "UV_THREADPOOL_SIZE"),
            ("__dirname", Identifier, "__dirname"),
            ("$NODE_ENV", Identifier, "NODE_ENV"),
            ("@types/node", Identifier, "@types/node"),
            ("node:fs", Identifier, "node:fs"),
            ("readFileSync", Identifier, "readFileSync"),
            ("AbortController", Identifier, "AbortController"),
            ("X509Certificate", Identifier, "X509Certificate"),
            (
                "server.keepAliveTimeout",
                Identifier,
                "server.keepAliveTimeout",
            ),
            ("Content-Type", Identifier, "Content-Type"),
            ("orders-api", Identifier, "orders-api"),
            ("billing-db-1", Identifier, "billing-db-1"),
            ("SIGTERM", Identifier, "SIGTERM"),
            ("console.log", Identifier, "console.log"),
            ("process.env", Identifier, "process.env"),
            ("app-error.log", File, "app-error.log"),
            ("yarn.lock", File, "yarn.lock"),
            (".npmrc", File, ".npmrc"),
            (".env.local", File, ".env.local"),
        ] {
            assert_eq!(one(tok).first(), Some(&(k, name.to_string())), "{tok}");
        }
        assert_eq!(
            one("NODE_OPTIONS=--max-old-space-size=2048"),
            [
                (Identifier, "NODE_OPTIONS".to_string()),
                (Flag, "--max-old-space-size".to_string())
            ]
        );
        assert_eq!(
            one("/etc/nginx/nginx.conf")[1],
            (File, "nginx.conf".to_string())
        );
    }

    #[test]
    fn plain_words_and_noise() {
        for tok in [
            "hello",
            "Hello",
            "HTTP",
            "42",
            "3.14",
            "18.19",
            "e.g",
            "i.e",
            "and/or",
            "built-in",
            "Non-blocking",
            "UTF-8",
            "SHA-256",
            "Node.js",
            ".stack",
            "GiB",
            "40P01",
            "a",
            "---",
            "http://",
            "#1",
            "v8",
        ] {
            assert_eq!(kind(tok), None, "{tok}: {:?}", one(tok));
        }
    }

    #[test]
    fn context_matters() {
        let mut out = Vec::new();
        let code = Context {
            in_code: true,
            ..Context::default()
        };
        assert!(classify("-e", code, &mut out));
        assert!(!classify("-e", Context::default(), &mut out));
        let noun = Context {
            before_thing_noun: true,
            ..Context::default()
        };
        assert!(classify("image-resize", noun, &mut out));
        assert!(!classify("image-resize", Context::default(), &mut out));
    }
}
