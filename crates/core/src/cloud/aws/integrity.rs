//! S3's checksum rules (see [`crate::cloud::integrity`]). Writes: `object_store` computes a
//! CRC-64/NVME over every single `PUT` and every part (`aws_checksum_algorithm=crc64nvme`, set
//! by the builder when checksums are on) and sends it before signing; S3 verifies each and
//! stores the object's full-object CRC64NVME. Reads: every request carries the signed header
//! `x-amz-checksum-mode: ENABLED` ([`CHECKSUM_MODE`]), so a whole-object `GET` answer carries
//! the stored `x-amz-checksum-crc64nvme` (or a full-object `x-amz-checksum-crc32c`), checked
//! here. A `COMPOSITE` checksum (a checksum of part checksums) cannot be checked against the
//! bytes of one `GET` and is skipped.

use object_store::client::HttpRequest;
use object_store::HeaderMap;

use crate::cloud::integrity::{Algorithm, Rules, Stored};

/// The request header that asks S3 to return stored checksums (name, value).
pub const CHECKSUM_MODE: (&str, &str) = ("x-amz-checksum-mode", "ENABLED");

/// S3's rules.
pub static RULES: Rules = Rules { stored, prepare };

fn stored(headers: &HeaderMap) -> Option<Stored> {
    let kind = headers
        .get("x-amz-checksum-type")
        .and_then(|v| v.to_str().ok());
    if kind.is_some_and(|k| !k.eq_ignore_ascii_case("FULL_OBJECT")) {
        return None;
    }
    let value = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            // `<base64>-N` is a composite checksum without a type header.
            .filter(|v| !v.contains('-'))
            .map(str::to_string)
    };
    value("x-amz-checksum-crc64nvme")
        .map(|base64| Stored {
            algorithm: Algorithm::Crc64Nvme,
            base64,
        })
        .or_else(|| {
            value("x-amz-checksum-crc32c").map(|base64| Stored {
                algorithm: Algorithm::Crc32c,
                base64,
            })
        })
}

fn prepare(_req: &mut HttpRequest) {}
