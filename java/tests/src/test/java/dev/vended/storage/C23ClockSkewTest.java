package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.KeyStats;
import dev.vended.storage.testkit.LocalS3Extension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * C23: the endpoint's clock is exact, but every answer is read 3 s after the endpoint stamped its
 * {@code Date} (a proxy holds each answer: the starved or GC-paused reader, injected). No clock
 * offset is learned from such samples, no request fails, and the endpoint rejects none: a late
 * answer is evidence of a bound, not of an offset. The Rust twin, with the endpoint 2 minutes
 * ahead as well, is crates/core/tests/it/c23_clock_evidence.rs.
 */
class C23ClockSkewTest {

    /** The enforcing local endpoint, whatever VENDED_STORAGE_TEST_ENDPOINT says. */
    @RegisterExtension
    static final LocalS3Extension S3 = LocalS3Extension.create().localOnly().bucket("c23");

    private static final Duration TTL = Duration.ofSeconds(4);
    private static final long HOLD_MILLIS = 3_000;

    @Test
    @Timeout(90)
    void c23_answersReadThreeSecondsLateLearnNoOffsetAndFailNothing() throws Exception {
        URI upstream = URI.create(S3.endpoint());
        try (DelayingProxy proxy =
                new DelayingProxy(upstream.getHost(), upstream.getPort(), HOLD_MILLIS)) {
            String viaProxy = "http://127.0.0.1:" + proxy.port();
            AtomicInteger vends = new AtomicInteger();
            StorageOptionsProvider provider =
                    () -> {
                        vends.incrementAndGet();
                        Map<String, String> o = S3.storageOptions(S3.mintCredentials(TTL));
                        o.put("aws_endpoint", viaProxy);
                        return o;
                    };
            Map<String, String> initial = S3.storageOptions(S3.mintCredentials(TTL));
            initial.put("aws_endpoint", viaProxy);
            ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
            AtomicLong maxOffset = new AtomicLong();
            AtomicInteger ops = new AtomicInteger();
            try (ObjectStore store = ObjectStore.open(S3.uri("c23/"), initial, provider)) {
                long stopAt = System.currentTimeMillis() + 15_000;
                Thread[] workers = new Thread[8];
                for (int w = 0; w < workers.length; w++) {
                    int worker = w;
                    workers[w] =
                            new Thread(
                                    () -> {
                                        for (int i = 0;
                                                i < 1_000 && System.currentTimeMillis() < stopAt;
                                                i++) {
                                            byte[] body =
                                                    ("worker " + worker + " object " + i)
                                                            .getBytes(StandardCharsets.UTF_8);
                                            String key = "w" + worker + "/o" + i;
                                            try {
                                                store.put(key, body);
                                                if (!Arrays.equals(body, store.get(key))) {
                                                    failures.add(key + ": wrong bytes");
                                                }
                                                ops.incrementAndGet();
                                                long offset =
                                                        store.refreshStats().clockOffsetMillis();
                                                maxOffset.accumulateAndGet(
                                                        Math.abs(offset), Math::max);
                                            } catch (StorageException e) {
                                                failures.add(key + ": " + e);
                                            }
                                        }
                                    },
                                    "c23-worker-" + w);
                    workers[w].start();
                }
                for (Thread t : workers) {
                    t.join(60_000);
                }
            }
            assertTrue(failures.isEmpty(), () -> failures.size() + " failures: " + failures);
            assertEquals(0, maxOffset.get(), "a clock offset was learned from late answers");
            long rejected = S3.stats().values().stream().mapToLong(KeyStats::rejected).sum();
            assertEquals(0, rejected, "requests the endpoint rejected");
            assertTrue(vends.get() >= 2, () -> "the 4 s credentials were refreshed: " + vends);
            assertTrue(ops.get() >= 8, () -> ops + " operations");
            System.out.printf(
                    "C23: %d put+get rounds with every answer read %d ms late: 0 failures,"
                            + " offset 0, %d provider calls%n",
                    ops.get(), HOLD_MILLIS, vends.get());
        }
    }

    /**
     * A TCP proxy on 127.0.0.1 that forwards requests at once and passes every byte of every
     * answer on {@code holdMillis} after it arrived. Its threads are daemons and end with their
     * connection or when the proxy is closed.
     */
    private static final class DelayingProxy implements AutoCloseable {
        private final ServerSocket listener;
        private final ConcurrentLinkedQueue<Socket> sockets = new ConcurrentLinkedQueue<>();

        DelayingProxy(String host, int port, long holdMillis) throws IOException {
            listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
            daemon(
                    () -> {
                        while (!listener.isClosed()) {
                            try {
                                Socket client = listener.accept();
                                Socket server = new Socket();
                                server.connect(new InetSocketAddress(host, port), 5_000);
                                sockets.add(client);
                                sockets.add(server);
                                daemon(() -> copy(client, server, 0));
                                daemon(() -> copy(server, client, holdMillis));
                            } catch (IOException closed) {
                                return;
                            }
                        }
                    });
        }

        int port() {
            return listener.getLocalPort();
        }

        private static void daemon(Runnable r) {
            Thread t = new Thread(r, "c23-proxy");
            t.setDaemon(true);
            t.start();
        }

        /** Bytes read at {@code arrivedMillis}; {@code null} bytes: the end of the stream. */
        private record Chunk(long arrivedMillis, byte[] bytes) {}

        /** Copies {@code from} to {@code to}, each chunk {@code holdMillis} after it arrived. */
        private static void copy(Socket from, Socket to, long holdMillis) {
            BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
            daemon(
                    () -> {
                        try {
                            OutputStream out = to.getOutputStream();
                            while (true) {
                                Chunk c = chunks.take();
                                long wait =
                                        c.arrivedMillis() + holdMillis - System.currentTimeMillis();
                                if (wait > 0) {
                                    Thread.sleep(wait);
                                }
                                if (c.bytes() == null) {
                                    to.shutdownOutput();
                                    return;
                                }
                                out.write(c.bytes());
                                out.flush();
                            }
                        } catch (IOException | InterruptedException e) {
                            close(to);
                        }
                    });
            try {
                InputStream in = from.getInputStream();
                byte[] buf = new byte[64 * 1024];
                int n;
                while ((n = in.read(buf)) > 0) {
                    chunks.add(new Chunk(System.currentTimeMillis(), Arrays.copyOf(buf, n)));
                }
            } catch (IOException e) {
                // the connection ended
            }
            chunks.add(new Chunk(System.currentTimeMillis(), null));
        }

        private static void close(Socket s) {
            try {
                s.close();
            } catch (IOException ignored) {
                // closing anyway
            }
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : sockets) {
                close(s);
            }
        }
    }
}
