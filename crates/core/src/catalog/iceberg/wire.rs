//! The Iceberg REST wire types: the `LoadCredentialsResponse` this crate reads and the
//! `IcebergErrorResponse` body.

use serde::{Deserialize, Deserializer};

use crate::catalog::http::{decode_error_body, Json, Scalar, ScalarMap};

/// What the answer names in messages: "the answer is a JSON array, expected a
/// LoadCredentialsResponse object".
pub(super) const RESPONSE: &str = "a LoadCredentialsResponse object";

/// A `LoadCredentialsResponse` (`{"storage-credentials": [StorageCredential...]}`).
#[derive(Deserialize)]
pub(super) struct LoadCredentialsResponse {
    #[serde(rename = "storage-credentials", default)]
    pub(super) storage_credentials: Json<serde::de::IgnoredAny, Json<StorageCredential>>,
}

/// One `StorageCredential` (`{"prefix": "s3://...", "config": {...}}`). `config` is `None`
/// only when the field is absent (`null` is kept, and rejected only if this entry is chosen).
#[derive(Deserialize)]
pub(super) struct StorageCredential {
    #[serde(default)]
    pub(super) prefix: Scalar,
    #[serde(default, deserialize_with = "present")]
    pub(super) config: Option<Json<ScalarMap>>,
}

fn present<'de, D: Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<Json<ScalarMap>>, D::Error> {
    Json::deserialize(d).map(Some)
}

/// An `IcebergErrorResponse` (`{"error": {"message", "type", "code"}}`); also accepted: an
/// `error` string, or a top-level `message`.
#[derive(Deserialize)]
struct IcebergErrorResponse {
    #[serde(default)]
    error: Json<ErrorModel>,
    #[serde(default)]
    message: Scalar,
}

/// The `ErrorModel` inside an [`IcebergErrorResponse`].
#[derive(Deserialize)]
struct ErrorModel {
    #[serde(default)]
    message: Scalar,
    #[serde(default, rename = "type")]
    kind: Scalar,
}

/// `(message, type)` of an `IcebergErrorResponse`.
pub(super) fn iceberg_error_body(body: &[u8]) -> (Option<String>, Option<String>) {
    let Some(e) = decode_error_body::<IcebergErrorResponse>(body) else {
        return (None, None);
    };
    match e.error {
        Json::Object(model) => (model.message.text(), model.kind.text()),
        Json::String(s) => (Some(s), None),
        _ => (e.message.text(), None),
    }
}
