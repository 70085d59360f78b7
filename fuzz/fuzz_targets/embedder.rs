//! Arbitrary bytes -> `hash-v1`. Invariants: no panic; 256 finite components of unit norm;
//! the same text gives the same bits (also after the per-thread word cache has changed).
#![no_main]

use libfuzzer_sys::fuzz_target;
use memloom_core::embed;
use memloom_core::embed::HASH_V1_DIMS;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let v = embed(&text);
    assert_eq!(v.len(), HASH_V1_DIMS);
    assert!(v.iter().all(|x| x.is_finite()), "non-finite component");
    let norm = v.iter().map(|x| f64::from(*x).powi(2)).sum::<f64>().sqrt();
    assert!((norm - 1.0).abs() < 1e-5, "norm {norm}");
    // Warm the cache with other words, then embed again: the bits must not move.
    let _ = embed("cache churn: max_connections pg_hba.conf Überprüfung 日本語");
    let again = embed(&text);
    assert!(
        v.iter()
            .zip(&again)
            .all(|(a, b)| a.to_bits() == b.to_bits()),
        "not deterministic"
    );
});
