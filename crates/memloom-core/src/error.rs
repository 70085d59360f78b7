use std::fmt;

/// The one error type of memloom-core. Opaque on purpose: match on [`Error::kind`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

/// What went wrong, for callers that branch on it (the wasm facade maps these to JS errors,
/// the worker to HTTP status codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A caller-supplied option or parameter is out of range.
    InvalidOption,
    /// Data handed to the core (a static embedding table) is malformed or corrupted.
    InvalidData,
}

impl Error {
    pub(crate) fn invalid_option(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::InvalidOption,
            message: message.into(),
        }
    }

    pub(crate) fn invalid_data(message: impl Into<String>) -> Error {
        Error {
            kind: ErrorKind::InvalidData,
            message: message.into(),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}
