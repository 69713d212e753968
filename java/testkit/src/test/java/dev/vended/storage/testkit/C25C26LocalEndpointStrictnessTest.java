package dev.vended.storage.testkit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.ObjectAlreadyExistsException;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.PreconditionFailedException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * The local endpoint is as strict as S3 where users test their own logic against it: C25
 * (conditional writes are atomic per key) and C26 (every key S3 accepts works).
 */
class C25C26LocalEndpointStrictnessTest {

    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("strict");

    @Test
    @Timeout(120)
    void c25PutIfAbsentFrom16ThreadsHasOneWinnerPerKey() throws Exception {
        int threads = 16;
        int keys = 50;
        AtomicIntegerArray winners = new AtomicIntegerArray(keys);
        try (ObjectStore store = ObjectStore.open(S3.uri("c25/"), S3.storageOptions())) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<Integer>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    byte[] body = ("thread " + t).getBytes(StandardCharsets.UTF_8);
                    results.add(
                            pool.submit(
                                    () -> {
                                        int refused = 0;
                                        for (int k = 0; k < keys; k++) {
                                            try {
                                                store.putIfAbsent("k" + k, body);
                                                winners.incrementAndGet(k);
                                            } catch (ObjectAlreadyExistsException e) {
                                                refused++;
                                            }
                                        }
                                        return refused;
                                    }));
                }
                int refused = 0;
                for (Future<Integer> f : results) {
                    refused += f.get();
                }
                assertEquals(threads * keys - keys, refused);
            } finally {
                pool.shutdownNow();
            }
            for (int k = 0; k < keys; k++) {
                assertEquals(1, winners.get(k), "winners of key k" + k);
            }

            // putIfMatch with one ETag from 8 threads: one winner.
            String eTag = store.head("k0").eTag();
            ExecutorService cas = Executors.newFixedThreadPool(8);
            try {
                List<Future<Boolean>> won = new ArrayList<>();
                for (int t = 0; t < 8; t++) {
                    byte[] body = ("cas " + t).getBytes(StandardCharsets.UTF_8);
                    won.add(
                            cas.submit(
                                    () -> {
                                        try {
                                            store.putIfMatch("k0", body, eTag);
                                            return true;
                                        } catch (PreconditionFailedException e) {
                                            return false;
                                        }
                                    }));
                }
                int wins = 0;
                for (Future<Boolean> f : won) {
                    wins += f.get() ? 1 : 0;
                }
                assertEquals(1, wins);
            } finally {
                cas.shutdownNow();
            }
            assertThrows(
                    PreconditionFailedException.class,
                    () -> store.putIfMatch("missing", new byte[] {1}, eTag));
        }
    }

    @Test
    @Timeout(60)
    void c26KeysUpTo1024BytesAreStoredListedAndReadBack() throws Exception {
        String prefix = "warehouse/orders/";
        List<String> names =
                List.of(
                        "_temporary/0/_temporary/attempt_202612020400001234567890123456789"
                                + "01234_0001_m_000001_9/p=0/part-00001-3f2b8c1e-9d4a-4b7e-8a61-"
                                + "0c5d2e7f9a13.c000.snappy.parquet",
                        "with space/a+b%25=c/ünïcödé-日本語.txt",
                        "long/" + "k".repeat(1024 - prefix.length() - 5));
        try (ObjectStore store = ObjectStore.open(S3.uri(prefix), S3.storageOptions())) {
            assertTrue((prefix + names.get(0)).getBytes(StandardCharsets.UTF_8).length > 170);
            for (String name : names) {
                store.put(name, name.getBytes(StandardCharsets.UTF_8));
                assertArrayEquals(name.getBytes(StandardCharsets.UTF_8), store.get(name), name);
            }
            Set<String> listed = new TreeSet<>();
            for (ObjectMeta meta : store.list("")) {
                listed.add(meta.path());
            }
            assertEquals(new TreeSet<>(names), listed);
        }
        assertEquals(1024, (prefix + names.get(2)).getBytes(StandardCharsets.UTF_8).length);
    }
}
