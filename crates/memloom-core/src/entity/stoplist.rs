//! Fixed word lists used by the extractor. Each is sorted (a test checks it) and searched with
//! `binary_search`.

/// Capitalised words that are not names on their own: sentence starters, pronouns, admonitions
/// ("Note", "Returns", "Example"), doc boilerplate, days and months. Lowercase; a name
/// sequence loses these at either end.
pub(crate) const NAME_STOP: &[&str] = &[
    "a", "about", "above", "according", "across", "added", "after", "afterwards", "again",
    "against", "all", "also", "although", "always", "among", "an", "and", "another", "any",
    "anything", "april", "are", "as", "at", "august", "available", "be", "because", "been",
    "before", "being", "below", "besides", "both", "but", "by", "calling", "can", "caution",
    "certain", "change", "changed", "changes", "clarification", "class", "consider", "could",
    "currently", "december", "default", "deprecated", "deprecation", "description", "details",
    "did", "do", "does", "doing", "done", "during", "each", "either", "else", "even", "every",
    "example", "examples", "experimental", "false", "february", "first", "fixme", "following",
    "for", "formerly", "friday", "from", "further", "furthermore", "generally", "get", "given",
    "had", "has", "have", "having", "he", "hello", "hence", "her", "here", "hi", "his", "how",
    "however", "i", "if", "important", "in", "including", "indeed", "info", "instead", "into",
    "is", "it", "its", "january", "july", "june", "just", "last", "later", "legacy", "let", "like",
    "likewise", "many", "march", "may", "maybe", "meanwhile", "might", "monday", "more",
    "moreover", "most", "much", "must", "my", "namely", "neither", "never", "nevertheless", "new",
    "next", "no", "none", "nor", "not", "note", "notes", "november", "now", "october", "of",
    "often", "ok", "okay", "on", "once", "one", "only", "optional", "or", "other", "others",
    "otherwise", "our", "over", "parameters", "params", "per", "perhaps", "please", "possible",
    "previously", "prior", "rather", "read", "recommended", "regardless", "related", "required",
    "return", "returned", "returns", "same", "saturday", "second", "see", "september", "she",
    "should", "similarly", "since", "so", "some", "something", "sometimes", "stability", "stable",
    "still", "such", "summary", "sunday", "supported", "suppose", "tbd", "thank", "thanks", "that",
    "the", "their", "them", "then", "there", "therefore", "these", "they", "third", "this",
    "those", "though", "thursday", "thus", "tip", "to", "today", "todo", "tomorrow", "true",
    "tuesday", "type", "typically", "under", "unless", "unlike", "until", "up", "upon", "us",
    "use", "used", "useful", "uses", "using", "usually", "value", "version", "versions", "via",
    "warning", "was", "we", "wednesday", "were", "what", "whatever", "when", "whenever", "where",
    "whereas", "whether", "which", "while", "who", "whom", "whose", "why", "will", "with",
    "within", "without", "would", "yes", "yesterday", "yet", "you", "your",
];

/// All-capital words too generic to be names on their own. Lowercase.
pub(crate) const ACRONYM_STOP: &[&str] = &[
    "a", "an", "and", "api", "are", "as", "at", "be", "by", "caution", "do", "eg", "etc", "faq",
    "fixme", "for", "id", "ids", "ie", "if", "important", "in", "is", "it", "n/a", "na", "no",
    "not", "note", "of", "ok", "on", "or", "so", "tbd", "the", "tip", "to", "todo", "us", "usa",
    "warning", "we", "yes",
];

/// Words ending in `s` that are not plurals (lowercase).
pub(crate) const NO_SINGULAR: &[&str] = &[
    "access", "across", "address", "afterwards", "alias", "always", "analysis", "analytics",
    "atlas", "aws", "axis", "basis", "bias", "canvas", "chaos", "diagnostics", "dns", "does",
    "economics", "ethics", "express", "graphics", "has", "headers", "hers", "his", "https", "its",
    "jenkins", "kubernetes", "lens", "less", "mathematics", "metrics", "minus", "news", "nodejs",
    "numerous", "ours", "perhaps", "physics", "plus", "politics", "postgres", "previous",
    "process", "redis", "sass", "series", "sometimes", "species", "ssl", "thanks", "theirs",
    "this", "tls", "towards", "unless", "various", "was", "whereas", "windows", "yes", "yours",
];

/// POSIX / libuv / Windows socket error names that are error codes on their own.
pub(crate) const ERRNO: &[&str] = &[
    "E2BIG", "EACCES", "EADDRINUSE", "EADDRNOTAVAIL", "EAFNOSUPPORT", "EAGAIN", "EAI_ADDRFAMILY",
    "EAI_AGAIN", "EAI_BADFLAGS", "EAI_FAIL", "EAI_FAMILY", "EAI_MEMORY", "EAI_NODATA",
    "EAI_NONAME", "EAI_SERVICE", "EAI_SOCKTYPE", "EALREADY", "EBADF", "EBUSY", "ECANCELED",
    "ECHILD", "ECONNABORTED", "ECONNREFUSED", "ECONNRESET", "EDEADLK", "EDESTADDRREQ", "EDOM",
    "EDQUOT", "EEXIST", "EFAULT", "EFBIG", "EHOSTDOWN", "EHOSTUNREACH", "EILSEQ", "EINPROGRESS",
    "EINTR", "EINVAL", "EIO", "EISCONN", "EISDIR", "ELOOP", "EMFILE", "EMLINK", "EMSGSIZE",
    "ENAMETOOLONG", "ENETDOWN", "ENETRESET", "ENETUNREACH", "ENFILE", "ENOBUFS", "ENODATA",
    "ENODEV", "ENOENT", "ENOEXEC", "ENOLCK", "ENOMEM", "ENONET", "ENOPROTOOPT", "ENOSPC", "ENOSYS",
    "ENOTCONN", "ENOTDIR", "ENOTEMPTY", "ENOTFOUND", "ENOTSOCK", "ENOTSUP", "ENOTTY", "ENXIO",
    "EOVERFLOW", "EPERM", "EPIPE", "EPROTO", "EPROTONOSUPPORT", "EPROTOTYPE", "ERANGE", "EROFS",
    "ESHUTDOWN", "ESPIPE", "ESRCH", "ETIMEDOUT", "ETXTBSY", "EWOULDBLOCK", "EXDEV",
   
   
];

/// File extensions that make `stem.ext` a file name (lowercase).
pub(crate) const FILE_EXTS: &[&str] = &[
    "avro", "bak", "bash", "bat", "bin", "c", "cc", "cfg", "cjs", "conf", "config", "cpp", "crt",
    "cs", "css", "csv", "cts", "d", "db", "diff", "dll", "dockerfile", "env", "exe", "gif", "go",
    "gql", "graphql", "gyp", "gypi", "gz", "h", "hbs", "hpp", "htm", "html", "ico", "ini", "ipynb",
    "jar", "java", "jpeg", "jpg", "js", "json", "jsonc", "jsonl", "jsx", "key", "kt", "lock",
    "lockb", "log", "lua", "map", "md", "mdx", "mjs", "mount", "mts", "node", "npmrc", "nvmrc",
    "parquet", "patch", "pdf", "pem", "php", "pid", "plist", "png", "properties", "proto", "ps1",
    "py", "pyc", "rb", "rs", "scss", "service", "sh", "so", "sock", "socket", "sql", "sqlite",
    "svg", "swift", "tar", "tf", "tfvars", "tgz", "timer", "toml", "ts", "tsv", "tsx", "txt",
    "wasm", "wat", "xml", "yaml", "yml", "zip", "zsh",
];

/// Last labels that make a dotted lowercase word a host name.
pub(crate) const TLDS: &[&str] = &[
    "ai", "app", "arpa", "au", "biz", "ca", "ch", "cloud", "cluster", "cn", "co", "com", "corp",
    "de", "dev", "edu", "es", "eu", "example", "fr", "gov", "home", "in", "info", "int",
    "internal", "intra", "invalid", "io", "it", "jp", "lan", "local", "localdomain", "localhost",
    "me", "mil", "net", "nl", "no", "online", "org", "ru", "se", "sh", "site", "svc", "tech",
    "test", "uk", "us", "xyz",
];

/// Upper-case prefixes of `ABC-123` words that are standards or algorithms, not tickets.
pub(crate) const NOT_TICKET: &[&str] = &[
    "AES", "AF", "ARM", "ARM64", "ASCII", "BLAKE2B", "CHACHA20", "CP", "DH", "ECDH", "ECMA",
    "ECMA262", "ES", "FIPS", "HMAC", "HTTP", "IE", "IEEE", "IP", "IPV", "ISO", "MD", "P", "PBKDF",
    "PKCS", "RFC", "RSA", "SHA", "SHA3", "SSL", "TLS", "UCS", "UTF", "UTF16", "UTF8", "WIN", "X",
    "X86",
];

/// Parts of a hyphenated lowercase word that mark it as a service or resource name
/// (`orders-api`, `billing-db`) rather than an English compound (`built-in`).
pub(crate) const SERVICE_PARTS: &[&str] = &[
    "api", "apis", "auth", "backend", "batch", "be", "bot", "cache", "cdn", "cli", "cron", "db",
    "dev", "edge", "etl", "fe", "frontend", "gateway", "grpc", "infra", "ingress", "internal",
    "k8s", "kafka", "lambda", "lb", "mongo", "mysql", "ops", "pg", "postgres", "prod",
    "production", "proxy", "qa", "queue", "rabbitmq", "redis", "rpc", "sdk", "service", "srv",
    "staging", "stg", "svc", "uat", "vm", "web", "webhook", "webhooks", "worker", "workers", "www",
];

/// Nouns after a hyphenated word that mark it as a name: "the payments-webhook service".
pub(crate) const THING_NOUNS: &[&str] = &[
    "app", "apps", "bot", "bots", "box", "boxes", "bucket", "buckets", "channel", "channels",
    "cluster", "clusters", "container", "containers", "cron", "crons", "daemon", "daemons",
    "database", "databases", "db", "deployment", "deployments", "endpoint", "endpoints", "gateway",
    "gateways", "host", "hosts", "instance", "instances", "job", "jobs", "machine", "machines",
    "microservice", "microservices", "namespace", "namespaces", "pipeline", "pipelines", "pod",
    "pods", "project", "projects", "proxies", "proxy", "queue", "queues", "repo", "repos",
    "repositories", "repository", "server", "servers", "service", "services", "squad", "team",
    "teams", "topic", "topics", "vm", "vms", "worker", "workers",
];

/// One-word code spans too generic to be entities (literals, keywords). Compared as written.
pub(crate) const CODE_STOP: &[&str] = &[
    "False", "Infinity", "NaN", "None", "True", "any", "arg", "args", "as", "async", "await",
    "bar", "baz", "bigint", "bool", "boolean", "break", "callback", "case", "catch", "cb", "char",
    "class", "const", "continue", "data", "default", "delete", "do", "else", "err", "error",
    "export", "extends", "false", "finally", "float", "fn", "foo", "for", "from", "function", "id",
    "if", "import", "in", "instanceof", "int", "key", "let", "name", "never", "new", "nil", "none",
    "null", "number", "object", "of", "ok", "options", "opts", "qux", "result", "return", "self",
    "str", "string", "super", "switch", "symbol", "this", "throw", "true", "try", "type", "typeof",
    "undefined", "unknown", "value", "values", "var", "void", "while", "yield",
];

/// Lowercase words that take a version after them: "npm 9", "node 18".
pub(crate) const PRODUCT_WORDS: &[&str] = &[
    "alpine", "android", "angular", "bun", "cargo", "centos", "chrome", "debian", "deno", "docker",
    "electron", "firefox", "go", "helm", "icu", "ios", "java", "jdk", "jest", "kafka", "kubectl",
    "libuv", "macos", "mocha", "mysql", "nginx", "node", "nodejs", "npm", "openssl", "perl", "php",
    "pip", "pnpm", "postgres", "postgresql", "psql", "python", "python3", "rails", "react",
    "redis", "rhel", "ruby", "rust", "rustc", "safari", "terraform", "tsc", "typescript", "ubuntu",
    "v8", "vite", "vue", "webpack", "yarn",
];

/// Whether `word` is in the sorted `list`.
pub(crate) fn contains(list: &[&str], word: &str) -> bool {
    list.binary_search(&word).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_are_sorted_and_unique() {
        for list in [
            NAME_STOP,
            ACRONYM_STOP,
            NO_SINGULAR,
            ERRNO,
            FILE_EXTS,
            TLDS,
            NOT_TICKET,
            SERVICE_PARTS,
            THING_NOUNS,
            CODE_STOP,
            PRODUCT_WORDS,
        ] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{:?}", list.first());
        }
    }
}
