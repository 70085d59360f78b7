//! Bounded retries of writes that lost a race: a deadlock (40P01) or a serialization failure
//! (40001) aborts one transaction so that the others go on, and running it again then
//! succeeds. Every other error is returned at once. The crate has no runtime, so the caller
//! supplies the sleep (tokio's, or the worker's timer).

use std::future::Future;
use std::time::Duration;

use crate::Error;

/// Attempts of one write in all (the first and two retries).
pub const WRITE_ATTEMPTS: u32 = 3;

/// Whether `e` is a lost race that a new attempt of the whole transaction can win.
pub fn is_transient(e: &Error) -> bool {
    matches!(e.sqlstate(), Some(s) if is_transient_sqlstate(s))
}

/// `40001` (serialization_failure) and `40P01` (deadlock_detected).
pub fn is_transient_sqlstate(sqlstate: &str) -> bool {
    sqlstate == "40001" || sqlstate == "40P01"
}

/// The pause before retry `attempt` (1-based): 10 ms, 20 ms, ... doubled each time, plus a
/// jitter of up to the same again drawn from `seed`, so that the transactions that collided
/// do not meet again at the same instant.
pub fn backoff(attempt: u32, seed: u64) -> Duration {
    let base = 10u64 << attempt.saturating_sub(1).min(6);
    // splitmix64 of the seed and the attempt: any caller-side entropy is spread evenly.
    let mut z = seed
        .wrapping_add(u64::from(attempt))
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    Duration::from_millis(base + z % (base + 1))
}

/// Runs `op` up to [`WRITE_ATTEMPTS`] times while it fails with [`is_transient`], sleeping
/// [`backoff`] between attempts; returns the first success or the last error. `op` must be a
/// whole transaction (or one autocommitted statement): a statement that failed inside a
/// transaction has aborted it, so only a new transaction can retry.
pub async fn retry_transient<T, F, Fut, S, SFut>(
    seed: u64,
    mut sleep: S,
    mut op: F,
) -> Result<T, Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, Error>>,
    S: FnMut(Duration) -> SFut,
    SFut: Future<Output = ()>,
{
    let mut attempt = 1;
    loop {
        match op().await {
            Err(e) if attempt < WRITE_ATTEMPTS && is_transient(&e) => {
                sleep(backoff(attempt, seed)).await;
                attempt += 1;
            }
            out => return out,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_stays_within_twice_its_base() {
        for seed in 0..200 {
            for attempt in 1..=4 {
                let base = 10u64 << (attempt - 1);
                let ms = backoff(attempt, seed).as_millis() as u64;
                assert!(
                    (base..=2 * base).contains(&ms),
                    "attempt {attempt} seed {seed}: {ms}"
                );
            }
        }
        let spread: std::collections::HashSet<_> = (0..50).map(|s| backoff(1, s)).collect();
        assert!(
            spread.len() > 5,
            "jitter should vary with the seed: {spread:?}"
        );
    }

    #[test]
    fn only_deadlocks_and_serialization_failures_are_transient() {
        assert!(is_transient_sqlstate("40001") && is_transient_sqlstate("40P01"));
        for s in ["23503", "23505", "25P02", "57014", "42501"] {
            assert!(!is_transient_sqlstate(s), "{s}");
        }
    }
}
