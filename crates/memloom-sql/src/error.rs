use std::fmt;

/// The one error type of this crate.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    message: String,
    source: Option<tokio_postgres::Error>,
}

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The database reported an error (its message is kept, e.g. an embedder mismatch).
    Database,
    /// An applied migration differs from the one embedded here, or the database is newer.
    Migration,
    /// An argument was rejected before reaching the database.
    InvalidInput,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn db(context: &str, err: tokio_postgres::Error) -> Error {
        let detail = match err.as_db_error() {
            Some(db) => db.message().to_string(),
            None => err.to_string(),
        };
        Error {
            kind: ErrorKind::Database,
            message: format!("{context}: {detail}"),
            source: Some(err),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The SQLSTATE code when the database raised the error.
    pub fn sqlstate(&self) -> Option<&str> {
        self.source
            .as_ref()
            .and_then(|e| e.code())
            .map(|c| c.code())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
