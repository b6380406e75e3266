//! Random (v4) UUIDs: execution, approval and session ids.
//!
//! Natively `uuid`'s `fast-rng` draws them from `rand`'s thread-local CSPRNG. In a
//! browser, `uuid` would call `crypto.getRandomValues` for each id's 16 bytes: a
//! crossing out of wasm that took 1.75 µs of a 11.5 µs call in Chromium's profiler
//! (B1), 15% of it. There the bytes come from a pool filled by one
//! `getRandomValues` call per 256 ids; each byte is used once, so the ids are as
//! unpredictable as before.

use uuid::Uuid;

/// A new random UUID as its lowercase hyphenated text.
pub fn new_v4_string() -> String {
    let mut buf = [0u8; uuid::fmt::Hyphenated::LENGTH];
    new_v4().hyphenated().encode_lower(&mut buf).to_owned()
}

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
pub fn new_v4() -> Uuid {
    Uuid::new_v4()
}

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
pub fn new_v4() -> Uuid {
    use std::cell::RefCell;
    const POOL: usize = 16 * 256;
    thread_local! {
        static BYTES: RefCell<(Box<[u8; POOL]>, usize)> = RefCell::new((Box::new([0; POOL]), POOL));
    }
    BYTES.with(|b| {
        let (pool, used) = &mut *b.borrow_mut();
        if *used == POOL {
            getrandom::fill(&mut pool[..]).expect("crypto.getRandomValues for uuid v4 ids");
            *used = 0;
        }
        let mut bytes = [0u8; 16];
        bytes.copy_from_slice(&pool[*used..*used + 16]);
        *used += 16;
        uuid::Builder::from_random_bytes(bytes).into_uuid()
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn ids_are_v4_distinct_and_lowercase_hyphenated() {
        let ids: std::collections::HashSet<String> = (0..1000).map(|_| super::new_v4_string()).collect();
        assert_eq!(ids.len(), 1000);
        for id in &ids {
            let parsed = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(parsed.get_version_num(), 4);
            assert_eq!(id, &parsed.hyphenated().to_string());
        }
    }
}
