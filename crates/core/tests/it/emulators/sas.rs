//! Azure SAS tokens for Azurite's development account, signed with its public key.

use std::time::Duration;

use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use super::{now_millis, AZURITE_ACCOUNT, AZURITE_KEY};

fn se(expires_at_millis: i64) -> String {
    chrono::DateTime::from_timestamp_millis(expires_at_millis)
        .unwrap()
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

fn sign(to_sign: &str, bad_signature: bool) -> String {
    let mut key = base64::engine::general_purpose::STANDARD
        .decode(AZURITE_KEY)
        .unwrap();
    if bad_signature {
        key[0] ^= 0xff;
    }
    let mut mac = <Hmac<Sha256>>::new_from_slice(&key).unwrap();
    mac.update(to_sign.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// An account SAS for Azurite's dev account (blob service; service, container and object
/// resources; read/write/delete/list/add/create), expiring at `expires_at_millis` rounded down
/// to the second (`se` has second resolution). Signed as in
/// <https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas> (version
/// 2021-08-06: the string to sign ends with the empty encryption scope and a newline).
/// `bad_signature` signs with a wrong key (Azurite answers 403 AuthorizationFailure).
pub fn account_sas(expires_at_millis: i64, bad_signature: bool) -> String {
    let se = se(expires_at_millis);
    let (sv, sp, ss, srt, spr) = ("2021-08-06", "rwdlac", "b", "sco", "https,http");
    let to_sign = format!("{AZURITE_ACCOUNT}\n{sp}\n{ss}\n{srt}\n\n{se}\n\n{spr}\n{sv}\n\n");
    let sig = sign(&to_sign, bad_signature);
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("sv", sv)
        .append_pair("ss", ss)
        .append_pair("srt", srt)
        .append_pair("sp", sp)
        .append_pair("se", &se)
        .append_pair("spr", spr)
        .append_pair("sig", &sig)
        .finish()
}

/// `expires_at_millis` of a SAS valid for about `ttl` (whole seconds, as `se` has).
pub fn sas_expiry(ttl: Duration) -> i64 {
    (now_millis() + ttl.as_millis() as i64) / 1000 * 1000
}

/// A service SAS for the whole of `container` (`sr=c`; read, add, create, write, delete, list),
/// version 2018-11-09, expiring at `expires_at_millis` rounded down to the second. Its string to
/// sign: permissions, start, expiry, canonical resource `/blob/<account>/<container>`, identifier,
/// IP, protocol, version, resource, snapshot time and the five response headers
/// (<https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas>).
///
/// Needed where Azurite 3.35.0 refuses an account SAS: a container's Blob Batch
/// (`POST ?restype=container&comp=batch`, used by multi-key deletes) has no entry in its
/// account-SAS permission table (`OperationAccountSASPermission.js` maps only
/// `Service_SubmitBatch`), so it throws and answers a bodiless 500; its container-SAS table
/// (`OperationBlobSASPermission.js`) maps `Container_SubmitBatch`.
pub fn container_sas(container: &str, expires_at_millis: i64) -> String {
    let se = se(expires_at_millis);
    let (sp, spr, sv, sr) = ("racwdl", "https,http", "2018-11-09", "c");
    let resource = format!("/blob/{AZURITE_ACCOUNT}/{container}");
    let to_sign = format!("{sp}\n\n{se}\n{resource}\n\n\n{spr}\n{sv}\n{sr}\n\n\n\n\n\n");
    let sig = sign(&to_sign, false);
    url::form_urlencoded::Serializer::new(String::new())
        .append_pair("sv", sv)
        .append_pair("sr", sr)
        .append_pair("sp", sp)
        .append_pair("se", &se)
        .append_pair("spr", spr)
        .append_pair("sig", &sig)
        .finish()
}
