//! The Azure storage option keys this library reads itself. Every other `azure_` key is passed
//! to `object_store`'s `MicrosoftAzureBuilder` by its `AzureConfigKey` name.

/// SAS token: the query string of a shared access signature (`sv=...&se=...&sig=...`, with or
/// without a leading `?`), as Lance vends it and as Iceberg's `adls.sas-token.<host>` maps to
/// (secret).
pub const AZURE_STORAGE_SAS_TOKEN: &str = "azure_storage_sas_token";
/// `object_store`'s other name for [`AZURE_STORAGE_SAS_TOKEN`] (secret).
pub const AZURE_STORAGE_SAS_KEY: &str = "azure_storage_sas_key";
/// OAuth bearer token (Microsoft Entra ID access token) for the storage account (secret).
pub const AZURE_STORAGE_TOKEN: &str = "azure_storage_token";
/// Shared account key, base64 (secret).
pub const AZURE_STORAGE_ACCOUNT_KEY: &str = "azure_storage_account_key";
/// The credential keys above, in the order a credential is looked for.
pub const AZURE_CREDENTIAL_KEYS: [&str; 4] = [
    AZURE_STORAGE_SAS_TOKEN,
    AZURE_STORAGE_SAS_KEY,
    AZURE_STORAGE_TOKEN,
    AZURE_STORAGE_ACCOUNT_KEY,
];

/// Storage account name (3-24 lowercase letters and digits). An `abfss://` URI names it too;
/// both must agree.
pub const AZURE_STORAGE_ACCOUNT_NAME: &str = "azure_storage_account_name";
/// Blob service URL of the account, e.g. `https://acct.blob.core.windows.net`. With
/// [`AZURE_STORAGE_USE_EMULATOR`] it is the emulator's base URL (`http://127.0.0.1:10000`) and
/// the account is appended as the first path segment.
pub const AZURE_STORAGE_ENDPOINT: &str = "azure_storage_endpoint";
/// `"true"` for the Azurite emulator: path-style URLs (`<endpoint>/<account>/<container>`),
/// plain HTTP allowed, account `devstoreaccount1` unless named.
pub const AZURE_STORAGE_USE_EMULATOR: &str = "azure_storage_use_emulator";
/// `"true"` to allow plain HTTP endpoints.
pub const AZURE_ALLOW_HTTP: &str = "azure_allow_http";
/// `"true"` to send unsigned requests (public containers).
pub const AZURE_SKIP_SIGNATURE: &str = "azure_skip_signature";

/// The emulator's account when none is named (Azurite's well-known development account).
pub const EMULATOR_ACCOUNT: &str = "devstoreaccount1";
/// The emulator's blob endpoint when neither [`AZURE_STORAGE_ENDPOINT`] nor the environment
/// variable [`EMULATOR_URL_ENV`] names one (Azurite's default, as in `object_store`).
pub const DEFAULT_EMULATOR_URL: &str = "http://127.0.0.1:10000";
/// The environment variable `object_store` reads the emulator's blob endpoint from.
pub const EMULATOR_URL_ENV: &str = "AZURITE_BLOB_STORAGE_URL";
