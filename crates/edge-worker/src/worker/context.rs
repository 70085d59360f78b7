//! The small context every handler gets: the configuration the fetch handler read at the door,
//! workerd's `Context` (to finish a connection after the response), the request's start time and
//! its log line. Handlers and the store layer read settings from here, never from `env`. Also
//! the request's clock: [`now`] and [`timeout`].

use std::future::Future;
use std::time::Duration;

use futures_util::future::{select, Either};
use worker::{Context, Date, Delay};

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

/// `fut`'s output, or `None` when `ms` pass first.
pub(crate) async fn timeout<F: Future>(ms: u32, fut: F) -> Option<F::Output> {
    let fut = std::pin::pin!(fut);
    let delay = std::pin::pin!(Delay::from(Duration::from_millis(u64::from(ms))));
    match select(fut, delay).await {
        Either::Left((out, _)) => Some(out),
        Either::Right(_) => None,
    }
}
