package dev.vended.storage.examples.gradle;

import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageException;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Map;

/**
 * The smallest use of the library from a Gradle project: opens an in-memory store, writes one
 * object, reads it and its metadata back and prints {@code OK <native version>}; exits 1 on a mismatch.
 */
public final class ConsumerMain {
    private ConsumerMain() {}

    /**
     * Runs the round trip.
     *
     * @param args ignored
     * @throws StorageException if the store cannot be opened or an operation fails
     */
    public static void main(String[] args) throws StorageException {
        byte[] data = "hello from a Gradle build".getBytes(StandardCharsets.UTF_8);
        try (ObjectStore store = ObjectStore.open("memory://", Map.of())) {
            store.put("gradle-consumer/hello.txt", data);
            byte[] back = store.get("gradle-consumer/hello.txt");
            // ObjectMeta is a record: Gradle 4.4 warns that it cannot analyse it ("Malformed
            // class file"), javac compiles the use.
            ObjectMeta meta = store.head("gradle-consumer/hello.txt");
            if (!Arrays.equals(data, back) || meta.size() != data.length) {
                System.err.println(
                        "MISMATCH: wrote "
                                + data.length
                                + " bytes, read back "
                                + back.length
                                + ", head says "
                                + meta.size());
                System.exit(1);
            }
        }
        System.out.println("OK " + ObjectStore.nativeVersion());
    }
}
