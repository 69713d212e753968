package dev.vended.storage.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import org.junit.jupiter.api.Test;

/** {@link VendedTable} serialized to 200 "tasks" on 4 threads of one JVM, without Spark. */
class VendedTableTest {

    private static byte[] serialize(Object o) throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(o);
        }
        return bytes.toByteArray();
    }

    private static VendedTable deserialize(byte[] b) throws Exception {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(b))) {
            return (VendedTable) in.readObject();
        }
    }

    private static int runTasks(byte[] handle, int tasks) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> out = new ArrayList<>();
            for (int i = 0; i < tasks; i++) {
                out.add(
                        pool.submit(
                                () -> {
                                    try (ObjectStore s = deserialize(handle).open()) {
                                        return s.get("obj").length;
                                    }
                                }));
            }
            int total = 0;
            for (Future<Integer> f : out) {
                total += f.get();
            }
            return total;
        } finally {
            pool.shutdown();
        }
    }

    @Test
    void c14_snapshotArrivingExpiredRefreshesOncePerJvmNotPerTask() throws Exception {
        try (LocalS3Server server = LocalS3Server.start("vtable")) {
            String location = server.uri("t/");
            try (ObjectStore root = ObjectStore.open(location, server.rootOptions())) {
                root.put("obj", new byte[7]);
            }
            VendedTable table =
                    VendedTable.of(
                            location,
                            new SerializableIssuer("unit-expiring", server.endpoint(), 1_000, 60_000),
                            server.endpointOptions(),
                            null);
            assertFalse(table.toString().contains("aws_secret"), table.toString());
            byte[] handle = serialize(table);
            long wait = table.snapshotExpiresAtMillis() - System.currentTimeMillis() + 50;
            if (wait > 0) {
                Thread.sleep(wait); // the snapshot must really arrive expired
            }
            assertEquals(200 * 7, runTasks(handle, 200));
            assertEquals(2, SerializableIssuer.calls("unit-expiring"), "driver call + one refresh");

            VendedTable fresh =
                    VendedTable.of(
                            location,
                            new SerializableIssuer("unit-fresh", server.endpoint(), 60_000, 60_000),
                            server.endpointOptions(),
                            null);
            assertEquals(200 * 7, runTasks(serialize(fresh), 200));
            assertEquals(1, SerializableIssuer.calls("unit-fresh"), "the snapshot seeds: no call");
            server.stats().forEach((k, s) -> assertEquals(0, s.rejected(), k + " " + s));
        }
    }
}
