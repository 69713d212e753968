package dev.vended.storage;

import java.util.Locale;

/**
 * Base class of every checked exception thrown by {@link ObjectStore}.
 *
 * <p>The subclasses name the failures callers usually handle differently: {@link
 * ObjectNotFoundException}, {@link ObjectAlreadyExistsException}, {@link
 * PreconditionFailedException}, {@link CredentialsException}, {@link InvalidOptionsException} and
 * {@link StorageTimeoutException}. Anything else (I/O errors, unexpected endpoint answers) is
 * reported as a plain {@code StorageException}.
 *
 * <p>Every exception also carries a {@link #kind()}, decided by the native core (Rust {@code
 * vended_storage::error::ErrorKind}), and whether trying the same call again later may succeed
 * ({@link #isRetryable()}): a program can act on these without parsing messages. For example a
 * plain {@code StorageException} of kind {@link Kind#TRANSIENT} (an endpoint's 5xx or 429, a
 * dropped connection) is retryable; one of kind {@link Kind#IO} is not.
 *
 * <p>Messages are one line and never contain secrets (secret keys, session tokens, SAS tokens,
 * passwords); see {@link Redaction}.
 */
public class StorageException extends java.io.IOException {
    private static final long serialVersionUID = 2L;

    /**
     * What kind of failure an exception is: the part a program acts on. The names are those of
     * the native core's {@code ErrorKind::as_str} ({@code crates/core/src/error.rs}).
     */
    public enum Kind {
        /** The object does not exist. */
        NOT_FOUND,
        /** The object exists already (create-only writes, copy if not exists). */
        ALREADY_EXISTS,
        /** A precondition failed (ETag or version mismatch, not modified). */
        PRECONDITION,
        /**
         * The credentials were refused by the endpoint (after one retry with fresh ones), lack a
         * permission, or could not be obtained from the provider.
         */
        CREDENTIALS,
        /** The URI, an option, a setting or an argument cannot be used. */
        INVALID_OPTIONS,
        /** A provider or a request took longer than allowed. */
        TIMEOUT,
        /** A failure that may heal by itself (a 5xx answer, a dropped connection). */
        TRANSIENT,
        /**
         * Any other I/O failure (an unexpected answer, an unsupported operation, an internal
         * error).
         */
        IO,
        /** The store or session was closed. */
        CLOSED,
        /** The calling thread was interrupted while it waited ({@link StorageInterruptedException}). */
        INTERRUPTED,
        /**
         * The bytes received do not have the checksum the service stores for them ({@link
         * ChecksumMismatchException}).
         */
        INTEGRITY;

        /**
         * The kind named {@code name} (as the native side spells it), or {@link #IO} for an
         * unknown or {@code null} name (a newer native library with a kind this class lacks).
         */
        static Kind fromNative(String name) {
            if (name == null) {
                return IO;
            }
            try {
                return valueOf(name.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return IO;
            }
        }

        /** Whether a failure of this kind is retryable when nothing more is known. */
        boolean retryableByDefault() {
            return this == TRANSIENT || this == TIMEOUT;
        }
    }

    /** The kind; never {@code null}. */
    private final Kind kind;

    /** Whether the same call may succeed later without any change. */
    private final boolean retryable;

    /**
     * Creates the exception, of kind {@link Kind#IO}, not retryable.
     *
     * @param message what went wrong; never contains a secret
     */
    public StorageException(String message) {
        this(message, null, Kind.IO);
    }

    /**
     * Creates the exception, of kind {@link Kind#IO}, not retryable.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     */
    public StorageException(String message, Throwable cause) {
        this(message, cause, Kind.IO);
    }

    /**
     * Creates the exception with a kind; retryable exactly for {@link Kind#TRANSIENT} and {@link
     * Kind#TIMEOUT}.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     * @param kind the kind ({@code null} means {@link Kind#IO})
     */
    public StorageException(String message, Throwable cause, Kind kind) {
        this(
                message,
                cause,
                kind == null ? Kind.IO : kind,
                kind != null && kind.retryableByDefault());
    }

    /**
     * Creates the exception with a kind and retryability, both as decided elsewhere.
     *
     * @param message what went wrong; never contains a secret
     * @param cause the underlying failure, or {@code null}
     * @param kind the kind ({@code null} means {@link Kind#IO})
     * @param retryable whether the same call may succeed later without any change
     */
    public StorageException(String message, Throwable cause, Kind kind, boolean retryable) {
        super(message, cause);
        this.kind = kind == null ? Kind.IO : kind;
        this.retryable = retryable;
    }

    /**
     * The native library constructs every exception through this constructor (JNI signature
     * {@code (Ljava/lang/String;Ljava/lang/Throwable;Ljava/lang/String;Z)V}), with the core's kind
     * name and retryability.
     */
    StorageException(String message, Throwable cause, String kind, boolean retryable) {
        this(message, cause, Kind.fromNative(kind), retryable);
    }

    /**
     * What kind of failure this is.
     *
     * @return the kind, never {@code null}
     */
    public Kind kind() {
        return kind;
    }

    /**
     * Whether trying the same call again later may succeed without any change: transient
     * failures and timeouts, and provider failures the provider marks retryable (a catalog's 5xx
     * or an exception thrown by a Java provider, but not a catalog's 401, 403 or 404).
     *
     * @return {@code true} when a later retry makes sense
     */
    public boolean isRetryable() {
        return retryable;
    }
}
