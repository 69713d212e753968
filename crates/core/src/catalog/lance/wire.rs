//! The Lance Namespace REST wire types: the `DescribeTable` request body, the fields of its
//! answer this crate reads, and the `ErrorResponse` body with its error code names.

use serde::{Deserialize, Serialize};

use super::TableDescription;
use crate::catalog::http::{decode_error_body, Json, Scalar, ScalarMap};
use crate::catalog::CatalogErrorKind;

/// The body of a `DescribeTable` request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DescribeTableRequest {
    /// The table id's parts, outermost namespace first.
    pub id: Vec<String>,
    /// Ask the namespace to vend credentials (`storage_options`).
    pub vend_credentials: bool,
    /// Ask for the table's complete URI (`table_uri`).
    pub with_table_uri: bool,
}

/// The fields of a `DescribeTableResponse` this crate reads (others are ignored).
#[derive(Deserialize)]
pub(super) struct DescribeTableResponse {
    #[serde(default)]
    location: Scalar,
    #[serde(default)]
    table_uri: Scalar,
    #[serde(default)]
    storage_options: Json<ScalarMap>,
}

/// What the answer names: an `object`, so that a wrong top-level type reads "the answer is a
/// JSON array, expected a DescribeTableResponse object".
pub(super) const RESPONSE: &str = "a DescribeTableResponse object";

impl TryFrom<DescribeTableResponse> for TableDescription {
    type Error = (CatalogErrorKind, String);

    fn try_from(r: DescribeTableResponse) -> std::result::Result<Self, Self::Error> {
        let malformed = |m: String| (CatalogErrorKind::MalformedResponse, m);
        Ok(TableDescription {
            location: r.location.optional_string("location").map_err(malformed)?,
            table_uri: r
                .table_uri
                .optional_string("table_uri")
                .map_err(malformed)?,
            storage_options: r
                .storage_options
                .string_map("storage_options")
                .map_err(malformed)?,
        })
    }
}

/// A Lance Namespace `ErrorResponse`
/// (`{"error": "...", "code": 4, "detail": "...", "instance": "..."}`); every field optional and
/// of any type (only strings, numbers and booleans are read as text, only a non-negative
/// integer as a code).
#[derive(Deserialize)]
struct ErrorResponse {
    #[serde(default)]
    error: Scalar,
    #[serde(default)]
    code: Scalar,
    #[serde(default)]
    detail: Scalar,
}

/// `(message, code)` of a Lance Namespace `ErrorResponse`: the `error` text (else `detail`),
/// and the `code` with its name (`4 TableNotFound`).
pub(super) fn lance_error_body(body: &[u8]) -> (Option<String>, Option<String>) {
    let Some(e) = decode_error_body::<ErrorResponse>(body) else {
        return (None, None);
    };
    let message = e
        .error
        .text()
        .filter(|s| !s.is_empty())
        .or_else(|| e.detail.text());
    let code = match e.code {
        Json::Number(n) => n.as_u64(),
        _ => None,
    }
    .map(|c| match lance_code_name(c) {
        Some(name) => format!("{c} {name}"),
        None => c.to_string(),
    });
    (message, code)
}

/// Names of the Lance Namespace error codes (`ErrorResponse.code`).
fn lance_code_name(code: u64) -> Option<&'static str> {
    const NAMES: [&str; 24] = [
        "Unsupported",
        "NamespaceNotFound",
        "NamespaceAlreadyExists",
        "NamespaceNotEmpty",
        "TableNotFound",
        "TableAlreadyExists",
        "TableIndexNotFound",
        "TableIndexAlreadyExists",
        "TableTagNotFound",
        "TableTagAlreadyExists",
        "TransactionNotFound",
        "TableVersionNotFound",
        "TableColumnNotFound",
        "InvalidInput",
        "ConcurrentModification",
        "PermissionDenied",
        "Unauthenticated",
        "ServiceUnavailable",
        "Internal",
        "InvalidTableState",
        "TableSchemaValidationError",
        "Throttling",
        "TableBranchNotFound",
        "TableBranchAlreadyExists",
    ];
    NAMES.get(usize::try_from(code).ok()?).copied()
}
