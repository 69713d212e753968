//! The Google Cloud Storage option keys this library reads itself. Every other `google_` key
//! is passed to `object_store`'s `GoogleCloudStorageBuilder` by its `GoogleConfigKey` name.

/// OAuth2 access token as Lance vends it (Lance's own key; secret).
pub const GOOGLE_STORAGE_TOKEN: &str = "google_storage_token";
/// OAuth2 access token under `object_store`'s key, as Iceberg's `gcs.oauth2.token` maps to
/// (secret).
pub const GOOGLE_BEARER_TOKEN: &str = "google_bearer_token";
/// Service account key JSON (`object_store` fetches and renews its own tokens with it; static
/// stores only; secret).
pub const GOOGLE_SERVICE_ACCOUNT_KEY: &str = "google_service_account_key";
/// Path of an application-credentials JSON file (static stores only).
pub const GOOGLE_APPLICATION_CREDENTIALS: &str = "google_application_credentials";
/// Base URL of the GCS API, e.g. `http://127.0.0.1:4443` for fake-gcs-server. Default
/// `https://storage.googleapis.com`.
pub const GOOGLE_BASE_URL: &str = "google_base_url";
/// `"true"` to send unsigned requests (public buckets).
pub const GOOGLE_SKIP_SIGNATURE: &str = "google_skip_signature";
