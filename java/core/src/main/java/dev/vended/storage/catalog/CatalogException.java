package dev.vended.storage.catalog;

import java.io.IOException;

/**
 * A failed catalog call: which catalog and operation, the HTTP status, and the catalog's own error
 * message and code. The catalog protocols run natively; the native library builds this exception
 * (through the public constructor) when a call made from Java fails ({@code fetchStorageOptions()},
 * {@code describeTable()}, {@code openTable(...)}), and attaches one as the cause of the {@link
 * dev.vended.storage.CredentialsException} a store throws when a refresh by a catalog spec failed.
 *
 * <p>The message never contains a header value (bearer token, API key): any occurrence of one in
 * the catalog's error text is replaced by {@code ***}.
 *
 * <p>A catalog call is never retried by itself. Inside a store, the credential refresher retries a
 * failed refresh while its credentials are valid, and again on a later request once they have
 * expired: a failure that {@link #isRetryable()} calls transient (5xx, timeouts) with exponential
 * backoff (1 s doubling to 30 s by default), a permanent one (404, 401, 403, a malformed answer)
 * at the slowest pace (30 s by default) from the start.
 */
public class CatalogException extends IOException {

    private static final long serialVersionUID = 1L;

    /** What kind of failure this is. */
    public enum Kind {
        /** HTTP 404: the table (or namespace) does not exist. */
        NOT_FOUND,
        /** HTTP 401: the catalog did not accept the caller's authentication. */
        UNAUTHORIZED,
        /** HTTP 403: the caller may not read the table's credentials. */
        FORBIDDEN,
        /** Another 4xx status (400, 406, 409, 408, 429, ...). */
        CLIENT_ERROR,
        /** A 5xx status. */
        SERVER_ERROR,
        /** No answer within the provider's timeout. */
        TIMEOUT,
        /** The catalog could not be reached (connection refused, DNS, TLS, ...). */
        TRANSPORT,
        /** The answer is not the JSON document the protocol defines. */
        MALFORMED_RESPONSE,
        /** The answer lacks a required field ({@code storage_options}, a matching credential). */
        MISSING_FIELD
    }

    /** @serial The kind of failure. */
    private final Kind kind;
    /** @serial The catalog protocol. */
    private final String catalog;
    /** @serial What was being done. */
    private final String operation;
    /** @serial The HTTP status, or -1. */
    private final int statusCode;
    /** @serial The catalog's error code, or null. */
    private final String errorCode;
    /** @serial The catalog's message. */
    private final String catalogMessage;

    /**
     * Creates the exception.
     *
     * @param kind the kind of failure
     * @param catalog the protocol, e.g. {@code "Lance Namespace"}
     * @param operation what was being done, e.g. {@code "describe table 'db$t' at http://h:1"}
     * @param statusCode the HTTP status, or {@code -1} when there was no answer
     * @param errorCode the catalog's error code or type, or {@code null}
     * @param catalogMessage the catalog's message (already free of secrets)
     * @param cause the underlying exception, or {@code null}
     */
    public CatalogException(
            Kind kind,
            String catalog,
            String operation,
            int statusCode,
            String errorCode,
            String catalogMessage,
            Throwable cause) {
        super(format(kind, catalog, operation, statusCode, errorCode, catalogMessage), cause);
        this.kind = kind;
        this.catalog = catalog;
        this.operation = operation;
        this.statusCode = statusCode;
        this.errorCode = errorCode;
        this.catalogMessage = catalogMessage;
    }

    /**
     * The kind of failure.
     *
     * @return the kind
     */
    public Kind kind() {
        return kind;
    }

    /**
     * The catalog protocol, e.g. {@code "Lance Namespace"} or {@code "Iceberg REST"}.
     *
     * @return the protocol's name
     */
    public String catalog() {
        return catalog;
    }

    /**
     * What was being done, e.g. {@code "describe table 'db$t' at http://h:1"}.
     *
     * @return the operation
     */
    public String operation() {
        return operation;
    }

    /**
     * The HTTP status.
     *
     * @return the status, or {@code -1} when the catalog did not answer (timeout, connection)
     */
    public int statusCode() {
        return statusCode;
    }

    /**
     * The catalog's error code or type: Lance {@code code} (e.g. {@code "4 TableNotFound"}),
     * Iceberg {@code error.type} (e.g. {@code "NoSuchTableException"}).
     *
     * @return the code, or {@code null} if none
     */
    public String errorCode() {
        return errorCode;
    }

    /**
     * The catalog's own message, or what was wrong with its answer.
     *
     * @return the message (free of secrets)
     */
    public String catalogMessage() {
        return catalogMessage;
    }

    /**
     * Whether the failure may heal by itself: 5xx, 408, 429, timeouts and connection errors. 404,
     * 401, 403, other 4xx and malformed or incomplete answers need someone to change the catalog or
     * the configuration.
     *
     * @return {@code true} when retrying later makes sense
     */
    public boolean isRetryable() {
        return retryable(kind, statusCode);
    }

    private static boolean retryable(Kind kind, int status) {
        switch (kind) {
            case SERVER_ERROR:
            case TIMEOUT:
            case TRANSPORT:
                return true;
            case CLIENT_ERROR:
                return status == 408 || status == 429;
            default:
                return false;
        }
    }

    private static String format(
            Kind kind, String catalog, String operation, int status, String code, String message) {
        StringBuilder b = new StringBuilder();
        b.append(catalog).append(' ').append(operation).append(" failed: ");
        if (status >= 0) {
            b.append("HTTP ").append(status);
            String reason = reason(status);
            if (reason != null) {
                b.append(' ').append(reason);
            }
            b.append(": ");
        }
        b.append(message);
        if (code != null) {
            b.append(" (catalog error code ").append(code).append(')');
        }
        b.append(retryable(kind, status) ? " [retryable]" : " [not retryable]");
        return b.toString();
    }

    private static String reason(int status) {
        switch (status) {
            case 200:
                return "OK";
            case 400:
                return "Bad Request";
            case 401:
                return "Unauthorized";
            case 403:
                return "Forbidden";
            case 404:
                return "Not Found";
            case 406:
                return "Not Acceptable";
            case 408:
                return "Request Timeout";
            case 409:
                return "Conflict";
            case 419:
                return "Authentication Timeout";
            case 429:
                return "Too Many Requests";
            case 500:
                return "Internal Server Error";
            case 502:
                return "Bad Gateway";
            case 503:
                return "Service Unavailable";
            case 504:
                return "Gateway Timeout";
            default:
                return null;
        }
    }
}
