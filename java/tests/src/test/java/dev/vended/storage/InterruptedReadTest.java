package dev.vended.storage;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A synchronous read whose body stalls halfway ends when its thread is interrupted (Spark killing
 * a task), not when the HTTP client's timeout and retries run out: it throws {@link
 * StorageInterruptedException}, the thread stays interrupted, and the connection is dropped. The
 * endpoint is a raw socket on 127.0.0.1 that announces the range asked for (of a 1 MiB object),
 * sends 1000 bytes and then holds the rest until the client closes the connection.
 */
@Timeout(120)
class InterruptedReadTest {

    private static final int LENGTH = 1 << 20;
    private static final Pattern RANGE = Pattern.compile("(?i)\r\nrange: bytes=(\\d+)-(\\d+)");

    private ServerSocket listener;
    private Thread acceptor;
    private final CountDownLatch halfSent = new CountDownLatch(1);
    private final CountDownLatch clientClosed = new CountDownLatch(1);

    @BeforeEach
    void start() throws IOException {
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor =
                new Thread(
                        () -> {
                            try (Socket s = listener.accept()) {
                                serve(s);
                            } catch (IOException e) {
                                // closed
                            }
                        },
                        "stalling-endpoint");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    @AfterEach
    void stop() throws Exception {
        listener.close();
        acceptor.join(10_000);
    }

    /** Answers the first request with 1000 bytes of its range, then waits for the client. */
    private void serve(Socket socket) throws IOException {
        InputStream in = socket.getInputStream();
        OutputStream out = socket.getOutputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b == -1) {
                return;
            }
            head.append((char) b);
        }
        // The range asked for (bytes=a-b), answered as asked.
        Matcher range = RANGE.matcher(head);
        boolean ranged = range.find();
        long first = ranged ? Long.parseLong(range.group(1)) : 0;
        long last = ranged ? Long.parseLong(range.group(2)) : LENGTH - 1;
        out.write(
                ("HTTP/1.1 206 Partial Content\r\nContent-Length: "
                                + (last - first + 1)
                                + "\r\nContent-Range: bytes "
                                + first
                                + "-"
                                + last
                                + "/"
                                + LENGTH
                                + "\r\nETag: \"e1\"\r\n"
                                + "Last-Modified: Tue, 01 Dec 2026 12:00:00 GMT\r\n\r\n")
                        .getBytes(StandardCharsets.US_ASCII));
        out.write(new byte[1000]);
        out.flush();
        halfSent.countDown();
        // Held: the rest never comes. The client closing its end ends this read.
        while (in.read() != -1) {
            // discard
        }
        clientClosed.countDown();
    }

    private ObjectStore open() throws StorageException {
        return ObjectStore.open(
                "s3://stall/p/",
                Map.of(
                        "aws_endpoint", "http://127.0.0.1:" + listener.getLocalPort(),
                        "aws_region", "us-east-1",
                        "aws_allow_http", "true",
                        "aws_access_key_id", "stall",
                        "aws_secret_access_key", "stall-secret"));
    }

    /** Runs {@code read} on a thread, interrupts it once the body stalled, returns its failure. */
    private Throwable interruptedDuring(IoAction read) throws Exception {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicBoolean stillInterrupted = new AtomicBoolean();
        Thread reader =
                new Thread(
                        () -> {
                            try {
                                read.run();
                            } catch (Throwable t) {
                                failure.set(t);
                                stillInterrupted.set(Thread.currentThread().isInterrupted());
                            }
                        },
                        "interrupted-reader");
        reader.start();
        assertThat(halfSent.await(30, TimeUnit.SECONDS)).as("the endpoint sent half").isTrue();
        long interruptedAt = System.nanoTime();
        reader.interrupt();
        reader.join(30_000);
        assertThat(reader.isAlive()).as("the read ended after the interrupt").isFalse();
        // Generous slack: the check runs every 50 ms; the HTTP client's own timeout is 30 s.
        assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - interruptedAt))
                .isLessThan(10_000);
        assertThat(stillInterrupted).as("the thread stays interrupted after %s", failure.get()).isTrue();
        assertThat(clientClosed.await(30, TimeUnit.SECONDS)).as("connection dropped").isTrue();
        return failure.get();
    }

    private interface IoAction {
        void run() throws IOException;
    }

    @Test
    void aRangeWhoseBodyStallsEndsAtTheInterrupt() throws Exception {
        try (ObjectStore store = open()) {
            Throwable t = interruptedDuring(() -> store.getRange("o", 0, LENGTH));
            assertThat(t).isInstanceOf(StorageInterruptedException.class);
            assertThat(((StorageException) t).kind()).isEqualTo(StorageException.Kind.INTERRUPTED);
            assertThat(((StorageException) t).isRetryable()).isFalse();
        }
    }

    @Test
    void aStreamBlockWhoseBodyStallsEndsAtTheInterrupt() throws Exception {
        try (ObjectStore store = open()) {
            ReadOptions known =
                    ReadOptions.defaults()
                            .withKnownLength(LENGTH, "\"e1\"")
                            .withReadPolicy(ReadPolicy.RANDOM);
            Throwable t =
                    interruptedDuring(
                            () -> {
                                try (SeekableObjectInputStream in = store.openInput("o", known)) {
                                    in.readFully(0, new byte[100]);
                                }
                            });
            assertThat(t).isInstanceOf(StorageInterruptedException.class);
        }
    }
}
