package dev.vended.storage;

import java.util.Base64;

/**
 * A checksum a service stores for a whole object ({@link ObjectStore#storedChecksum}).
 *
 * @param algorithm {@code CRC64NVME}, {@code CRC32C} or {@code MD5}
 * @param base64 the value, base64 as the service's header carries it (CRCs big-endian)
 */
public record StoredChecksum(String algorithm, String base64) {

    /**
     * The checksum's bytes.
     *
     * @return the decoded value (8 bytes for CRC64NVME, 4 for CRC32C, 16 for MD5)
     */
    public byte[] bytes() {
        return Base64.getDecoder().decode(base64);
    }
}
