package dev.vended.storage;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Metadata of one stored object.
 *
 * @param path the object's path, relative to the store's URI prefix
 * @param size the object's size in bytes
 * @param lastModifiedMillis last modification time, epoch milliseconds
 * @param eTag the object's entity tag, or {@code null} when the store has none
 * @param version the object's version, or {@code null} when the store does not version objects
 */
public record ObjectMeta(
        String path, long size, long lastModifiedMillis, String eTag, String version) {

    /** Number of strings per object in the native representation. */
    static final int NATIVE_FIELDS = 5;

    /**
     * Validates the components.
     *
     * @param path the object's path, relative to the store's URI prefix
     * @param size the object's size in bytes, not negative
     * @param lastModifiedMillis last modification time, epoch milliseconds
     * @param eTag the object's entity tag, or {@code null}
     * @param version the object's version, or {@code null}
     */
    public ObjectMeta {
        Objects.requireNonNull(path, "path");
        if (size < 0) {
            throw new IllegalArgumentException("size must not be negative: " + size);
        }
    }

    /**
     * The last modification time.
     *
     * @return {@link #lastModifiedMillis()} as an {@link Instant}
     */
    public Instant lastModified() {
        return Instant.ofEpochMilli(lastModifiedMillis);
    }

    /**
     * Decodes the native representation: {@code {path, size, lastModifiedMillis, eTag|null,
     * version|null}} starting at {@code offset}.
     */
    static ObjectMeta fromNative(String[] fields, int offset) {
        if (fields == null || offset < 0 || fields.length - offset < NATIVE_FIELDS) {
            throw new IllegalStateException(
                    "native library returned malformed object metadata (expected "
                            + NATIVE_FIELDS
                            + " fields at offset "
                            + offset
                            + ")");
        }
        return new ObjectMeta(
                fields[offset],
                parseLong(fields[offset + 1], "size"),
                parseLong(fields[offset + 2], "lastModifiedMillis"),
                fields[offset + 3],
                fields[offset + 4]);
    }

    /**
     * Decodes a native listing: {@link #NATIVE_FIELDS} strings per object, as {@link
     * #fromNative} reads them.
     *
     * @throws IllegalStateException if the strings are not whole objects
     */
    static List<ObjectMeta> listFromNative(String[] flat) {
        if (flat.length % NATIVE_FIELDS != 0) {
            throw new IllegalStateException(
                    "native library returned a malformed listing of " + flat.length + " strings");
        }
        List<ObjectMeta> out = new ArrayList<>(flat.length / NATIVE_FIELDS);
        for (int i = 0; i < flat.length; i += NATIVE_FIELDS) {
            out.add(fromNative(flat, i));
        }
        return Collections.unmodifiableList(out);
    }

    private static long parseLong(String value, String field) {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            throw new IllegalStateException(
                    "native library returned a malformed " + field + ": " + value, e);
        }
    }
}
