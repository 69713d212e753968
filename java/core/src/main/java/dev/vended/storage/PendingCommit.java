package dev.vended.storage;

import java.io.Serializable;
import java.util.Objects;

/**
 * A multipart upload whose parts are written but which is not completed: nothing is visible at
 * its path until {@link PendingCommits#commit(PendingCommit)} completes it, possibly in another
 * JVM and with another credential (an upload id is not bound to the credential that started it).
 * Serializable; {@link #json()} is its portable form ({@code
 * {"version":1,"location":"s3://bucket/prefix/path","key":"prefix/path","upload_id":"…",
 * "parts":["etag",…],"length":n}}), read back with {@link #fromJson(String)}. {@code toString()}
 * shows the location, upload id and length (no credential is ever part of it).
 */
public final class PendingCommit implements Serializable {
    private static final long serialVersionUID = 1L;

    /** The portable JSON form, as {@link #json()} returns it. */
    private final String json;

    /** The object's location ({@code s3://bucket/prefix/path}). */
    private final String location;

    /** The object's full key in its bucket or container. */
    private final String key;

    /** The store's upload id (empty on Azure). */
    private final String uploadId;

    /** The object's size in bytes once committed. */
    private final long length;

    /** How many parts the upload has. */
    private final int parts;

    private PendingCommit(String json, String[] fields) {
        if (fields == null || fields.length != 5) {
            throw new IllegalStateException("native library returned a malformed pending commit");
        }
        this.json = json;
        this.location = fields[0];
        this.key = fields[1];
        this.uploadId = fields[2];
        this.length = Long.parseLong(fields[3]);
        this.parts = Integer.parseInt(fields[4]);
    }

    /**
     * Reads a pending commit from its JSON form (as {@link #json()} gives it).
     *
     * @param json the JSON
     * @return the pending commit
     * @throws NullPointerException if {@code json} is null
     * @throws InvalidOptionsException naming {@code pending_commit} when the JSON is malformed or of
     *     another format version
     * @throws StorageException if the native side fails otherwise
     */
    public static PendingCommit fromJson(String json) throws StorageException {
        Objects.requireNonNull(json, "json");
        return new PendingCommit(json, PendingNative.describe(json));
    }

    /**
     * The JSON form, for saving and for another JVM.
     *
     * @return the JSON
     */
    public String json() {
        return json;
    }

    /**
     * The object's location, e.g. {@code s3://bucket/prefix/path}.
     *
     * @return the location
     */
    public String location() {
        return location;
    }

    /**
     * The object's full key in its bucket or container.
     *
     * @return the key
     */
    public String key() {
        return key;
    }

    /**
     * The store's upload id (empty on Azure).
     *
     * @return the id
     */
    public String uploadId() {
        return uploadId;
    }

    /**
     * The object's size once committed.
     *
     * @return bytes
     */
    public long length() {
        return length;
    }

    /**
     * How many parts the upload has (0 in a record written when the upload started).
     *
     * @return the number of parts
     */
    public int partCount() {
        return parts;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PendingCommit && ((PendingCommit) o).json.equals(json);
    }

    @Override
    public int hashCode() {
        return json.hashCode();
    }

    @Override
    public String toString() {
        return "PendingCommit{location="
                + location
                + ", uploadId="
                + uploadId
                + ", length="
                + length
                + ", parts="
                + parts
                + "}";
    }
}
