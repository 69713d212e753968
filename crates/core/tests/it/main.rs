//! The core crate's integration tests, gathered in ONE test binary (`cargo test -p vended-storage
//! --test it`): each file of this folder is a module, so the dependency tree is linked once
//! instead of once per file (see docs/development.md, "Build each thing once"). Support modules
//! (`common`, `catalog_support`, `conformance`, `emulators`) are shared by the test modules.
//! Run one suite with a filter on its module name: `cargo test -p vended-storage --test it c18_`.
//!
//! Process-wide state is shared by every module here: the `log` logger (one capture logger,
//! `common::logs`) and the environment variables the Azure tests set before their stores open.

mod catalog_support;
mod common;
mod conformance;
mod emulators;

mod a1_echoed_secrets;
mod a2_short_bodies;
mod access_mode;
mod adversarial;
mod adversarial_clouds;
mod adversarial_inputs;
mod azure_bad_answers;
mod azure_batch_delete;
mod azure_emulator;
mod azure_oauth;
mod c02_clock_skew;
mod c17_backoff_after_expiry;
mod c18_auth_retry;
mod c19_secrets_never_echoed;
mod c20_validation_at_open;
mod c21_single_delete;
mod c22_outage_recovery;
mod c22_table_open_recovery;
mod c23_clock_evidence;
mod c24_abandoned_uploads;
mod c24_azure_uncommitted_blocks;
mod c27_error_locations;
mod c28_config_only_prefix_scoped;
mod c29_denied_paths;
mod c30_non_http_catalog_uri;
mod c31_signing_margin;
mod cache_identity;
mod cache_identity_registry;
mod catalog_azure_gcs;
mod catalog_iceberg;
mod catalog_iceberg_refresh;
mod catalog_lance;
mod catalog_lance_azure;
mod catalog_unity;
mod catalog_unity_server;
mod client_options;
mod commit_files;
mod conformance_local;
mod conformance_localstack;
mod conformance_moto;
mod create_only_multipart;
mod fleet_refresh_jitter;
mod gcs_emulator;
mod integrity_emulators;
mod integrity_s3;
mod io_blocking_reader;
mod io_memory;
mod io_s3;
mod no_secrets;
mod pending_commit;
mod proxy_flips;
mod read_only_credentials;
mod refresh_e2e;
mod table_opens;
