//! The mapping of a Unity Catalog `TemporaryCredentials` answer to storage options (see the
//! module documentation of [`unity`](super)).

use super::wire::TemporaryCredentials;
use crate::catalog::http::{Json, ScalarMap};
use crate::catalog::iceberg::{
    AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_SAS_TOKEN, GOOGLE_BEARER_TOKEN,
};
use crate::catalog::CatalogErrorKind;
use crate::options::{StorageOptions, EXPIRES_AT_MILLIS};

/// `azure_storage_token`: an Azure AD bearer token (`object_store`'s key).
pub const AZURE_STORAGE_TOKEN: &str = "azure_storage_token";

type Failure = (CatalogErrorKind, String);

fn malformed(message: String) -> Failure {
    (CatalogErrorKind::MalformedResponse, message)
}

/// The credential objects of an answer, in the order they are tried, with their names.
fn credential_fields(answer: TemporaryCredentials) -> [(&'static str, Json<ScalarMap>); 5] {
    [
        ("aws_temp_credentials", answer.aws_temp_credentials),
        (
            "azure_user_delegation_sas",
            answer.azure_user_delegation_sas,
        ),
        ("gcp_oauth_token", answer.gcp_oauth_token),
        ("r2_temp_credentials", answer.r2_temp_credentials),
        ("azure_aad", answer.azure_aad),
    ]
}

/// Maps a `TemporaryCredentials` answer to storage options. `location` is the storage location
/// the credential is for (the answer's `url` when it has one, else the table's location or the
/// path): the Azure account name is read from it.
pub(super) fn map_credentials(
    answer: TemporaryCredentials,
    location: Option<&str>,
) -> Result<StorageOptions, Failure> {
    let expires = expiration(answer.expiration_time.clone())?;
    let answer_url = answer
        .url
        .clone()
        .optional_string("url")
        .map_err(malformed)?;
    let location = answer_url.as_deref().or(location);
    let mut out = StorageOptions::new();
    let mut found = None;
    for (field, value) in credential_fields(answer) {
        let Some(map) = value.string_map(field).map_err(malformed)? else {
            continue;
        };
        found = Some(field);
        let get = |key: &str| -> Result<String, Failure> {
            match map.get(key).filter(|v| !v.is_empty()) {
                Some(v) => Ok(v.clone()),
                None => Err((
                    CatalogErrorKind::MissingField,
                    format!("'{field}' has no '{key}'"),
                )),
            }
        };
        let optional = |key: &str| map.get(key).filter(|v| !v.is_empty()).cloned();
        match field {
            "aws_temp_credentials" | "r2_temp_credentials" => {
                out.insert("aws_access_key_id".into(), get("access_key_id")?);
                out.insert("aws_secret_access_key".into(), get("secret_access_key")?);
                if let Some(token) = optional("session_token") {
                    out.insert("aws_session_token".into(), token);
                }
            }
            "azure_user_delegation_sas" => {
                let sas = get("sas_token")?;
                let sas = sas.trim_start_matches('?').to_string();
                out.insert(AZURE_STORAGE_SAS_TOKEN.into(), sas);
                if let Some(account) = location.and_then(azure_account) {
                    out.insert(AZURE_STORAGE_ACCOUNT_NAME.into(), account);
                }
            }
            "gcp_oauth_token" => {
                out.insert(GOOGLE_BEARER_TOKEN.into(), get("oauth_token")?);
            }
            _ => {
                out.insert(AZURE_STORAGE_TOKEN.into(), get("aad_token")?);
                if let Some(account) = location.and_then(azure_account) {
                    out.insert(AZURE_STORAGE_ACCOUNT_NAME.into(), account);
                }
            }
        }
        break;
    }
    if found.is_none() {
        return Err((
            CatalogErrorKind::MissingField,
            "the answer has no credential (none of aws_temp_credentials, \
             azure_user_delegation_sas, gcp_oauth_token, r2_temp_credentials, azure_aad)"
                .into(),
        ));
    }
    if let Some(ms) = expires {
        out.insert(EXPIRES_AT_MILLIS.into(), ms.to_string());
    }
    Ok(out)
}

/// `expiration_time` as epoch milliseconds: a JSON integer or a decimal string; `None` when
/// missing, `null` or `0` (no expiry stated). Anything else fails, naming the field, never the
/// value.
fn expiration(value: Json) -> Result<Option<i64>, Failure> {
    let bad = |what: &str| {
        malformed(format!(
            "'expiration_time' is {what}, expected epoch milliseconds (an integer)"
        ))
    };
    let ms = match value {
        Json::Null => return Ok(None),
        Json::Number(n) => n.as_i64().ok_or_else(|| bad("not a whole number"))?,
        Json::String(s) => s
            .trim()
            .parse::<i64>()
            .map_err(|_| bad("a string that is not a whole number"))?,
        other => return Err(bad(&format!("a JSON {}", other.kind()))),
    };
    match ms {
        0 => Ok(None),
        ms if ms < 0 => Err(bad("negative")),
        ms => Ok(Some(ms)),
    }
}

/// The storage account an Azure URL names: the first label of the host of
/// `abfs[s]://container@account.dfs.core.windows.net/...` or
/// `wasb[s]://container@account.blob.core.windows.net/...`, or of
/// `https://account.blob.core.windows.net/...`. `None` for other URLs (`az://container/...`
/// names no account: it comes from the caller's options).
pub(super) fn azure_account(location: &str) -> Option<String> {
    let url = url::Url::parse(location).ok()?;
    let host = url.host_str()?;
    let named = match url.scheme() {
        "abfs" | "abfss" | "wasb" | "wasbs" => !url.username().is_empty(),
        "https" | "http" => host.contains(".blob.") || host.contains(".dfs."),
        _ => false,
    };
    let account = host.split('.').next()?;
    (named && !account.is_empty()).then(|| account.to_string())
}
