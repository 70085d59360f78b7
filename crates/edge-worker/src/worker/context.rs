//! The small context every handler gets: the configuration the fetch handler read at the door,
//! workerd's `Context` (to finish a connection after the response), the request's start time and
//! its log line. Handlers and the store layer read settings from here, never from `env`.

use worker::{Context, Date};

use crate::config::{ConfigError, WorkerConfig};
use crate::log::RequestLog;
use crate::ApiError;

pub(crate) struct RequestCx<'a> {
    pub config: &'a WorkerConfig,
    pub ctx: &'a Context,
    /// `Date.now()` when the request arrived, in milliseconds.
    pub start: u64,
    pub log: RequestLog,
}

impl RequestCx<'_> {
    /// Milliseconds since the request arrived.
    pub fn elapsed(&self) -> u64 {
        now().saturating_sub(self.start)
    }

    /// The 500 `misconfigured` answer for a setting this request needs, its detail logged.
    pub fn misconfigured(&mut self, e: &ConfigError) -> ApiError {
        if let Some(detail) = &e.detail {
            self.log.detail = Some(detail.clone());
        }
        e.api_error()
    }
}

/// Milliseconds since the epoch (workerd advances it only across I/O, which is what we time).
pub(crate) fn now() -> u64 {
    Date::now().as_millis()
}
