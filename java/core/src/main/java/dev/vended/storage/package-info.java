/**
 * The Java API: {@link dev.vended.storage.ObjectStore} (open a location with storage options and
 * a {@link dev.vended.storage.StorageOptionsProvider}), its streams ({@link
 * dev.vended.storage.SeekableObjectInputStream}, {@link dev.vended.storage.MultipartOutputStream}),
 * {@link dev.vended.storage.AsyncObjectStore}, the read cache {@link dev.vended.storage.Session},
 * and the exceptions ({@link dev.vended.storage.StorageException} and one subclass per handled
 * kind). Credentials are refreshed natively before they expire, driven by requests.
 */
package dev.vended.storage;
