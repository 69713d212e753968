package dev.vended.storage;

import java.util.List;

/**
 * One level of a listing with the {@code /} delimiter ({@link ObjectStore#listWithDelimiter}).
 *
 * @param objects the objects directly under the prefix
 * @param commonPrefixes the "directories" directly under the prefix: paths relative to the store's
 *     prefix, without a trailing {@code /}
 */
public record ListResult(List<ObjectMeta> objects, List<String> commonPrefixes) {

    /**
     * Copies the lists (unmodifiable).
     *
     * @param objects the objects
     * @param commonPrefixes the common prefixes
     */
    public ListResult {
        objects = List.copyOf(objects);
        commonPrefixes = List.copyOf(commonPrefixes);
    }
}
