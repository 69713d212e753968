/**
 * The JUnit 5 testkit: {@link dev.vended.storage.testkit.LocalS3Extension} starts the enforcing
 * local S3 endpoint for a test class and mints, vends and revokes credentials; {@link
 * dev.vended.storage.testkit.KeyStats} and {@link dev.vended.storage.testkit.RequestRecord} are
 * what the endpoint recorded.
 */
package dev.vended.storage.testkit;
