package dev.vended.storage.testkit;

/**
 * What a key minted by the local endpoint may do inside its scope (issue 24: read versus write
 * credentials, and credentials without LIST as some catalogs vend them).
 *
 * <table>
 *   <caption>What each kind of key may do</caption>
 *   <tr><th>key</th><th>GET, HEAD</th><th>LIST</th><th>PUT, copy, DELETE, multipart</th></tr>
 *   <tr><td>{@link #READ_WRITE} (the default)</td><td>yes</td><td>yes</td><td>yes</td></tr>
 *   <tr><td>{@link #READ_ONLY}</td><td>yes</td><td>yes</td><td>no</td></tr>
 *   <tr><td>{@code READ_WRITE.withoutList()}</td><td>yes</td><td>no</td><td>yes</td></tr>
 *   <tr><td>{@code READ_ONLY.withoutList()}</td><td>yes</td><td>no</td><td>no</td></tr>
 * </table>
 *
 * <p>A refused call gets 403 {@code AccessDenied} whose message says why: {@code the credential
 * is read-only: PutObject is a write, which it does not allow}, or {@code the credential does not
 * allow listing: ListObjectsV2 is refused}. "LIST" means {@code ListObjects}, {@code
 * ListObjectsV2}, {@code ListObjectVersions} and {@code ListMultipartUploads}; a read-only key may
 * call only {@code Get*}, {@code Head*}, {@code List*} and {@code SelectObjectContent}.
 *
 * @param write whether the key may write (put, copy into, delete, multipart uploads)
 * @param list whether the key may list objects and multipart uploads
 */
public record KeyAccess(boolean write, boolean list) {

    /** Everything the key's scope allows (what keys get when nothing is said). */
    public static final KeyAccess READ_WRITE = new KeyAccess(true, true);

    /** Reads and lists only. */
    public static final KeyAccess READ_ONLY = new KeyAccess(false, true);

    /**
     * The same access without LIST.
     *
     * @return a key kind that may not list
     */
    public KeyAccess withoutList() {
        return new KeyAccess(write, false);
    }

    /**
     * The endpoint's spelling of {@link #write()} (admin parameter {@code access}, STS parameter
     * {@code Access}).
     *
     * @return {@code read-write} or {@code read}
     */
    public String accessName() {
        return write ? "read-write" : "read";
    }
}
