//! Keyed fingerprints: how a secret (static credentials, an SSE-C key, catalog headers) takes
//! part in an identity without ever being stored or printed.
//!
//! SipHash-1-3 with a key drawn at random once per process: equal inputs give equal
//! fingerprints within one process; a fingerprint cannot be reversed to its input and differs
//! between processes.

use std::hash::{Hash, Hasher};

use once_cell::sync::Lazy;

static KEY: Lazy<(u64, u64)> = Lazy::new(|| (rand::random(), rand::random()));

/// The keyed fingerprint of `value` (see the [module documentation](self)).
pub fn fingerprint<T: Hash + ?Sized>(value: &T) -> u64 {
    let (k0, k1) = *KEY;
    let mut h = siphasher::sip::SipHasher13::new_with_keys(k0, k1);
    value.hash(&mut h);
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_inputs_give_equal_fingerprints() {
        assert_eq!(fingerprint("a"), fingerprint("a"));
        assert_ne!(fingerprint("a"), fingerprint("b"));
    }
}
