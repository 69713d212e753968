//! The Unity Catalog REST wire types: the request bodies of `generateTemporaryTableCredentials`
//! and `generateTemporaryPathCredentials`, the fields of `TableInfo` and `TemporaryCredentials`
//! this crate reads, and the error body (`{"error_code", "message"}` of the OSS server; a
//! `google.rpc.Status` `{"code", "message"}` of other implementations).

use serde::{Deserialize, Serialize};

use crate::catalog::http::{decode_error_body, Json, Scalar, ScalarMap};

/// The body of `POST /temporary-table-credentials` (`GenerateTemporaryTableCredential`).
#[derive(Debug, Serialize)]
pub(super) struct TableCredentialsRequest<'a> {
    /// The table's id (UUID), from `getTable`.
    pub table_id: &'a str,
    /// `READ` or `READ_WRITE`.
    pub operation: &'static str,
}

/// The body of `POST /temporary-path-credentials` (`GenerateTemporaryPathCredential`).
#[derive(Debug, Serialize)]
pub(super) struct PathCredentialsRequest<'a> {
    /// The storage URL.
    pub url: &'a str,
    /// `PATH_READ` or `PATH_READ_WRITE`.
    pub operation: &'static str,
}

/// The fields of a `TableInfo` (`GET /tables/{full_name}`) this crate reads.
#[derive(Deserialize)]
pub(super) struct TableInfo {
    #[serde(default)]
    pub table_id: Scalar,
    #[serde(default)]
    pub storage_location: Scalar,
}

/// What the `getTable` answer names.
pub(super) const TABLE_INFO: &str = "a TableInfo object";

/// The fields of a `TemporaryCredentials` answer this crate reads. Each credential is an object
/// of strings; `expiration_time` is epoch milliseconds, a JSON number (the OSS server) or a
/// decimal string (servers that encode int64 as protobuf JSON does).
#[derive(Deserialize)]
pub(super) struct TemporaryCredentials {
    #[serde(default)]
    pub aws_temp_credentials: Json<ScalarMap>,
    #[serde(default)]
    pub azure_user_delegation_sas: Json<ScalarMap>,
    #[serde(default)]
    pub gcp_oauth_token: Json<ScalarMap>,
    #[serde(default)]
    pub r2_temp_credentials: Json<ScalarMap>,
    #[serde(default)]
    pub azure_aad: Json<ScalarMap>,
    #[serde(default)]
    pub expiration_time: Scalar,
    #[serde(default)]
    pub url: Scalar,
}

/// What a credentials answer names.
pub(super) const TEMPORARY_CREDENTIALS: &str = "a TemporaryCredentials object";

/// A Unity Catalog error body: `{"error_code": "TABLE_NOT_FOUND", "message": "..."}` (OSS
/// server), or `{"code": 5, "message": "..."}` (`google.rpc.Status`). Every field optional and
/// of any type.
#[derive(Deserialize)]
struct ErrorResponse {
    #[serde(default)]
    error_code: Scalar,
    #[serde(default)]
    code: Scalar,
    #[serde(default)]
    message: Scalar,
}

/// `(message, code)` of a Unity Catalog error body: `message`, and `error_code` (else `code`).
pub(super) fn unity_error_body(body: &[u8]) -> (Option<String>, Option<String>) {
    let Some(e) = decode_error_body::<ErrorResponse>(body) else {
        return (None, None);
    };
    let code = e
        .error_code
        .text()
        .filter(|c| !c.is_empty())
        .or_else(|| e.code.text().filter(|c| !c.is_empty()));
    (e.message.text().filter(|m| !m.is_empty()), code)
}
