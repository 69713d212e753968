package dev.vended.storage.testkit;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * fake-gcs-server (memory backend, plain HTTP) from {@code .tools/fake-gcs-server} (see {@link
 * EmulatorProcess#toolsDirectory()}) behind an {@link EmulatorProxy} in GCS mode, which accepts
 * only bearer tokens from {@link #tokens()} and answers 401 for missing, unknown, expired or
 * revoked ones (fake-gcs-server checks none). Stores reach it through {@link #url()} (the proxy).
 * Stock fake-gcs-server serves no XML-API list.
 */
public final class FakeGcsServer implements AutoCloseable {

    /** The installed binary, relative to the tools directory. */
    public static final String TOOL = "fake-gcs-server";

    private static final HttpClient HTTP =
            HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private final EmulatorProcess process;
    private final EmulatorProxy proxy;
    private final EmulatorProxy.Tokens tokens = new EmulatorProxy.Tokens();

    private FakeGcsServer(EmulatorProcess process) throws IOException {
        this.process = process;
        try {
            this.proxy = new EmulatorProxy(process.url(), tokens);
        } catch (IOException e) {
            process.close();
            throw e;
        }
    }

    /**
     * Starts fake-gcs-server from {@link EmulatorProcess#tool(String)} ({@link #TOOL}) and its
     * proxy.
     *
     * @return the running server; {@link #close()} stops it and the proxy
     * @throws IOException if it is not installed or does not start within 30 s
     */
    public static FakeGcsServer start() throws IOException {
        return start(EmulatorProcess.tool(TOOL));
    }

    /**
     * Starts the fake-gcs-server binary {@code bin} on 127.0.0.1, a free port, and its proxy.
     *
     * @param bin path of the fake-gcs-server binary
     * @return the running server; {@link #close()} stops it and the proxy
     * @throws IOException if it does not start within 30 s
     */
    public static FakeGcsServer start(Path bin) throws IOException {
        int port = EmulatorProcess.freePort();
        return new FakeGcsServer(
                EmulatorProcess.spawn(
                        List.of(
                                bin.toString(),
                                "-scheme", "http",
                                "-host", "127.0.0.1",
                                "-backend", "memory",
                                "-port", Integer.toString(port),
                                "-public-host", "127.0.0.1:" + port),
                        port,
                        "server started"));
    }

    /**
     * The token-checking proxy's base URL: what stores use as {@code google_base_url}.
     *
     * @return {@code http://127.0.0.1:PORT} of the proxy
     */
    public String url() {
        return proxy.url;
    }

    /**
     * fake-gcs-server's own URL (no token check).
     *
     * @return {@code http://127.0.0.1:PORT} of the emulator
     */
    public String emulatorUrl() {
        return process.url();
    }

    /**
     * How long fake-gcs-server took to listen.
     *
     * @return the time from spawning the process to its "started" line
     */
    public Duration startedIn() {
        return process.startedIn();
    }

    /**
     * The proxy (request counters, rejections, log).
     *
     * @return the proxy in GCS mode, checking {@link #tokens()}
     */
    public EmulatorProxy proxy() {
        return proxy;
    }

    /**
     * The tokens the proxy accepts.
     *
     * @return the live token registry; issue or revoke tokens through it
     */
    public EmulatorProxy.Tokens tokens() {
        return tokens;
    }

    /**
     * The options locating this server: {@code google_base_url} = {@link #url()}, plus {@code
     * credentials}.
     *
     * @param credentials credential options to add, such as those of {@link TokenProvider#vend()}
     * @return a new mutable map
     */
    public Map<String, String> storeOptions(Map<String, String> credentials) {
        Map<String, String> o = new HashMap<>();
        o.put("google_base_url", url());
        o.putAll(credentials);
        return o;
    }

    /**
     * Creates {@code bucket} (JSON API, directly at the emulator).
     *
     * @param bucket the bucket's name (put into JSON unescaped: letters, digits, {@code -}, {@code
     *     _}, {@code .} only)
     * @throws IOException if fake-gcs-server cannot be reached or does not answer 2xx (also when
     *     the thread is interrupted, with the interrupt flag set again)
     */
    public void createBucket(String bucket) throws IOException {
        HttpResponse<String> r;
        try {
            r = HTTP.send(
                    HttpRequest.newBuilder(URI.create(emulatorUrl() + "/storage/v1/b"))
                            .header("content-type", "application/json")
                            .POST(HttpRequest.BodyPublishers.ofString("{\"name\":\"" + bucket + "\"}"))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted creating bucket " + bucket, e);
        }
        if (r.statusCode() / 100 != 2) {
            throw new IOException("create bucket " + bucket + ": HTTP " + r.statusCode());
        }
    }

    /**
     * A provider of this proxy's tokens living {@code ttl}.
     *
     * @param ttl each token's lifetime
     * @return a new provider issuing from {@link #tokens()}
     */
    public TokenProvider tokenProvider(Duration ttl) {
        return new TokenProvider(tokens, ttl);
    }

    /**
     * Vends tokens of a proxy living {@code ttl} under Lance's {@code google_storage_token} with
     * {@code expires_at_millis}; counts calls and keeps each token (for leak checks).
     */
    public static final class TokenProvider implements StorageOptionsProvider {
        private final EmulatorProxy.Tokens tokens;
        private final Duration ttl;
        private final AtomicInteger calls = new AtomicInteger();
        private final List<String> vended = new CopyOnWriteArrayList<>();

        /**
         * A provider issuing from {@code tokens}, each living {@code ttl}.
         *
         * @param tokens the registry the proxy checks
         * @param ttl each token's lifetime
         */
        public TokenProvider(EmulatorProxy.Tokens tokens, Duration ttl) {
            this.tokens = tokens;
            this.ttl = ttl;
        }

        /**
         * One credential set, not counted as a call (its token is kept).
         *
         * @return a new mutable map of {@code google_storage_token} and {@code expires_at_millis}
         *     (epoch milliseconds, decimal)
         */
        public Map<String, String> vend() {
            long expires = System.currentTimeMillis() + ttl.toMillis();
            String token = tokens.issue(expires);
            vended.add(token);
            Map<String, String> o = new HashMap<>();
            o.put("google_storage_token", token);
            o.put("expires_at_millis", Long.toString(expires));
            return o;
        }

        /**
         * Times {@link #fetchStorageOptions()} was called.
         *
         * @return the number of calls so far ({@link #vend()} not counted)
         */
        public int calls() {
            return calls.get();
        }

        /**
         * Every token vended so far, for checking that none leaks.
         *
         * @return an immutable copy, oldest first
         */
        public List<String> vended() {
            return List.copyOf(vended);
        }

        @Override
        public Map<String, String> fetchStorageOptions() {
            calls.incrementAndGet();
            return vend();
        }

        @Override
        public String toString() {
            return "TokenProvider{ttl=" + ttl + ", calls=" + calls.get() + "}";
        }
    }

    /** Stops the proxy and fake-gcs-server. */
    @Override
    public void close() {
        proxy.close();
        process.close();
    }

    @Override
    public String toString() {
        return "FakeGcsServer{" + url() + "}";
    }
}
