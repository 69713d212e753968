package dev.vended.storage.examples.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP forwarding proxy on 127.0.0.1 in front of an HTTP/1.1 endpoint that injects faults into the
 * requests passing through it: {@code 503 SlowDown} answers, connection resets and latency.
 *
 * <p>It forwards bytes unchanged (so SigV4 signatures, which cover the {@code Host} header the
 * client sent, stay valid) and parses no HTTP: a request is taken to start with the first bytes the
 * client sends on a connection, and again with the first bytes it sends after the endpoint has sent
 * something (HTTP/1.1 clients without pipelining, such as {@code object_store}'s, send the next
 * request only after reading the previous response). For each request, in order of arrival, the
 * {@link FaultSchedule} decides (from the seed and the request's number only) one of:
 *
 * <ul>
 *   <li>none: forwarded unchanged;
 *   <li>latency: forwarded after a delay;
 *   <li>503: not forwarded; the client gets {@code 503 SlowDown} with {@code Connection: close};
 *   <li>reset before: not forwarded; the client's connection is reset (RST);
 *   <li>reset mid-response: forwarded, and the client's connection is reset after a given number of
 *       response bytes (if the response is shorter, nothing happens).
 * </ul>
 *
 * Resets go only to requests a client may repeat after a dropped connection without changing the
 * outcome and that {@code object_store} marks so: {@code GET}, {@code HEAD} and unconditional
 * {@code PUT} (no {@code If-Match} / {@code If-None-Match} in the request head). A {@code POST}
 * (create or complete a multipart upload) or {@code DELETE} whose connection drops after it was
 * sent may or may not have taken effect, and {@code object_store} rightly does not retry it, so
 * those get only 503s and latency (which they survive: a 503 means "not done").
 *
 * <p>Runs in-process ({@link #start}) or as a child process ({@link #main}: prints {@code LISTENING
 * <port>}, answers each {@code STATS} line on stdin with {@link #statsLine()}, exits when stdin
 * closes), so that its threads and memory do not count in the soak's own figures.
 */
public final class FaultProxy implements AutoCloseable {

    private static final int MAX_CONNECTIONS = 512;
    private static final int BUFFER = 64 * 1024;
    private static final byte[] BODY_503 =
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>SlowDown</Code>"
                            + "<Message>Please reduce your request rate (injected by the soak's"
                            + " fault proxy).</Message></Error>")
                    .getBytes(StandardCharsets.US_ASCII);

    private final ServerSocket server;
    private final InetSocketAddress target;
    private final FaultSchedule schedule;
    private final ExecutorService pool;
    private final Semaphore slots = new Semaphore(MAX_CONNECTIONS);
    private final Thread acceptor;
    private volatile boolean closed;

    final AtomicLong connections = new AtomicLong();
    final AtomicLong refused = new AtomicLong();
    final AtomicLong requests = new AtomicLong();
    final AtomicLong errors503 = new AtomicLong();
    final AtomicLong resetsBefore = new AtomicLong();
    final AtomicLong resetsMid = new AtomicLong();
    final AtomicLong resetsNotReached = new AtomicLong();
    final AtomicLong delayed = new AtomicLong();
    final AtomicLong delayMillis = new AtomicLong();

    private FaultProxy(ServerSocket server, int targetPort, FaultSchedule schedule) {
        this.server = server;
        this.target = new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort);
        this.schedule = schedule;
        AtomicInteger n = new AtomicInteger();
        this.pool =
                Executors.newCachedThreadPool(
                        r -> {
                            Thread t = new Thread(r, "fault-proxy-" + n.incrementAndGet());
                            t.setDaemon(true);
                            return t;
                        });
        this.acceptor = new Thread(this::acceptLoop, "fault-proxy-accept");
        this.acceptor.setDaemon(true);
    }

    /**
     * Starts a proxy on an ephemeral port of 127.0.0.1.
     *
     * @param targetPort the port of the endpoint on 127.0.0.1 to forward to
     * @param schedule which request gets which fault
     * @return the running proxy
     * @throws IOException if the port cannot be bound
     */
    public static FaultProxy start(int targetPort, FaultSchedule schedule) throws IOException {
        ServerSocket s = new ServerSocket(0, 256, InetAddress.getLoopbackAddress());
        FaultProxy proxy = new FaultProxy(s, targetPort, schedule);
        proxy.acceptor.start();
        return proxy;
    }

    /**
     * The port the proxy listens on (127.0.0.1).
     *
     * @return the TCP port
     */
    public int port() {
        return server.getLocalPort();
    }

    /**
     * The counters as one line: {@code requests=N connections=N refused=N 503=N reset_before=N
     * reset_mid=N reset_not_reached=N latency=N latency_ms=N}.
     *
     * @return the line
     */
    public String statsLine() {
        return String.format(
                Locale.ROOT,
                "requests=%d connections=%d refused=%d 503=%d reset_before=%d reset_mid=%d"
                        + " reset_not_reached=%d latency=%d latency_ms=%d",
                requests.get(),
                connections.get(),
                refused.get(),
                errors503.get(),
                resetsBefore.get(),
                resetsMid.get(),
                resetsNotReached.get(),
                delayed.get(),
                delayMillis.get());
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing anyway
        }
        pool.shutdownNow();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            connections.incrementAndGet();
            if (!slots.tryAcquire()) {
                refused.incrementAndGet();
                closeQuietly(client);
                continue;
            }
            try {
                pool.execute(() -> serve(client));
            } catch (RuntimeException rejected) {
                slots.release();
                closeQuietly(client);
            }
        }
    }

    private void serve(Socket client) {
        try {
            Socket upstream = new Socket();
            try {
                upstream.connect(target, 10_000);
                upstream.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(upstream);
                closeQuietly(client);
                return;
            }
            Connection c = new Connection(client, upstream);
            pool.execute(c::pumpResponses);
            c.pumpRequests();
        } catch (RuntimeException e) {
            closeQuietly(client);
        } finally {
            slots.release();
        }
    }

    /**
     * A reset scheduled after {@code offset} response bytes; {@code seen} is the response side's.
     */
    private static final class PendingReset {
        final long offset;
        long seen;
        volatile boolean fired;

        PendingReset(long offset) {
            this.offset = offset;
        }
    }

    /** One client connection and its upstream connection, with a thread per direction. */
    private final class Connection {
        private final Socket client;
        private final Socket upstream;

        /**
         * Set by the response side before it forwards bytes: the next client bytes start a request.
         */
        private volatile boolean responseSeen = true;

        /**
         * Set when the request side takes over closing (503, reset): the response side just ends.
         */
        private final AtomicBoolean takenOver = new AtomicBoolean();

        private volatile PendingReset pending;
        private final AtomicInteger open = new AtomicInteger(2);

        Connection(Socket client, Socket upstream) {
            this.client = client;
            this.upstream = upstream;
        }

        void pumpRequests() {
            byte[] buf = new byte[BUFFER];
            try {
                InputStream in = client.getInputStream();
                OutputStream up = upstream.getOutputStream();
                while (true) {
                    int n = in.read(buf);
                    if (n < 0) {
                        upstream.shutdownOutput();
                        break;
                    }
                    if (responseSeen) {
                        responseSeen = false;
                        if (!startRequest(buf, n)) {
                            return; // taken over: answered or reset
                        }
                    }
                    up.write(buf, 0, n);
                }
            } catch (IOException e) {
                closeBoth();
            } finally {
                done();
            }
        }

        /** Applies the fault of a new request; false if the request side has ended the exchange. */
        private boolean startRequest(byte[] buf, int n) throws IOException {
            PendingReset previous = pending;
            if (previous != null && !previous.fired) {
                resetsNotReached.incrementAndGet();
            }
            pending = null;
            long number = requests.getAndIncrement();
            String head = new String(buf, 0, Math.min(n, 8192), StandardCharsets.ISO_8859_1);
            FaultSchedule.Fault f = schedule.decide(number, FaultSchedule.resettable(head));
            switch (f.kind()) {
                case LATENCY -> {
                    delayed.incrementAndGet();
                    delayMillis.addAndGet(f.amount());
                    sleep(f.amount());
                }
                case ERROR_503 -> {
                    errors503.incrementAndGet();
                    answer503(head.startsWith("HEAD "));
                    return false;
                }
                case RESET_BEFORE -> {
                    resetsBefore.incrementAndGet();
                    takenOver.set(true);
                    closeQuietly(upstream);
                    reset(client);
                    return false;
                }
                case RESET_MID_RESPONSE -> pending = new PendingReset(f.amount());
                case NONE -> {}
            }
            return true;
        }

        /**
         * Answers 503 with {@code Connection: close}, reads what the client still sends, closes.
         */
        private void answer503(boolean head) throws IOException {
            takenOver.set(true);
            closeQuietly(upstream);
            String headers =
                    "HTTP/1.1 503 Slow Down\r\nContent-Type: application/xml\r\nContent-Length: "
                            + BODY_503.length
                            + "\r\nConnection: close\r\n\r\n";
            OutputStream out = client.getOutputStream();
            out.write(headers.getBytes(StandardCharsets.US_ASCII));
            if (!head) {
                out.write(BODY_503);
            }
            out.flush();
            client.shutdownOutput();
            // Read the rest of the request body (if any) so that closing does not reset the answer.
            client.setSoTimeout(10_000);
            byte[] sink = new byte[BUFFER];
            try {
                InputStream in = client.getInputStream();
                for (int i = 0; i < 100_000 && in.read(sink) >= 0; i++) {
                    // discard
                }
            } catch (IOException e) {
                // the client closed or timed out: close anyway
            }
            closeQuietly(client);
        }

        void pumpResponses() {
            byte[] buf = new byte[BUFFER];
            try {
                InputStream in = upstream.getInputStream();
                OutputStream out = client.getOutputStream();
                while (true) {
                    int n = in.read(buf);
                    if (n < 0) {
                        if (!takenOver.get()) {
                            client.shutdownOutput();
                        }
                        break;
                    }
                    PendingReset p = pending;
                    if (p != null && !p.fired && p.seen + n >= p.offset) {
                        p.fired = true;
                        resetsMid.incrementAndGet();
                        out.write(buf, 0, (int) (p.offset - p.seen));
                        out.flush();
                        takenOver.set(true);
                        closeQuietly(upstream);
                        reset(client);
                        break;
                    }
                    if (p != null) {
                        p.seen += n;
                    }
                    responseSeen = true;
                    out.write(buf, 0, n);
                }
            } catch (IOException e) {
                if (!takenOver.get()) {
                    closeBoth();
                }
            } finally {
                done();
            }
        }

        private void closeBoth() {
            closeQuietly(client);
            closeQuietly(upstream);
        }

        private void done() {
            if (open.decrementAndGet() == 0 && !takenOver.get()) {
                closeBoth();
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes with SO_LINGER 0, which sends a TCP RST instead of a FIN. */
    private static void reset(Socket s) {
        try {
            s.setSoLinger(true, 0);
        } catch (SocketException e) {
            // already closed
        }
        closeQuietly(s);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    /**
     * Runs the proxy as a child process: {@code FaultProxy TARGET_PORT SEED FAULTS} where FAULTS is
     * {@link FaultSchedule#parse}'s format. Prints {@code LISTENING <port>}, then one {@link
     * #statsLine()} per {@code STATS} line read from stdin; exits when stdin closes.
     *
     * @param args target port, seed, fault rates
     * @throws Exception if the arguments are wrong or the port cannot be bound
     */
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: FaultProxy TARGET_PORT SEED FAULTS");
        }
        FaultSchedule schedule =
                new FaultSchedule(Long.parseLong(args[1]), FaultSchedule.parse(args[2]));
        try (FaultProxy proxy = start(Integer.parseInt(args[0]), schedule)) {
            System.out.println("LISTENING " + proxy.port());
            System.out.flush();
            BufferedReader in =
                    new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.trim().equals("STATS")) {
                    System.out.println("STATS " + proxy.statsLine());
                    System.out.flush();
                }
            }
        }
    }
}
