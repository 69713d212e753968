package dev.vended.storage.catalog;

import static org.junit.jupiter.api.Assertions.assertFalse;

import com.sun.net.httpserver.HttpServer;

import org.junit.jupiter.api.AfterEach;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * A scripted local catalog (the JDK's HTTP server on 127.0.0.1, a free port) shared by the catalog
 * provider tests: it records every request and answers with whatever the test's handler returns
 * (status, JSON body, delay). Stopped after each test.
 */
abstract class CatalogProvidersSupport {

    static final String TOKEN = "tenant-a-token-0123456789";

    /**
     * The client timeout of every case that expects an answer: generous, so a starved machine
     * (CI under -Xcheck:jni with trace logging) never turns a 404 into a timeout.
     */
    static final Duration GENEROUS = Duration.ofSeconds(20);

    /** How long the scripted catalog waits before it answers in the timeout cases. */
    static final long SLOW_REPLY_MILLIS = 6_000;

    /** 800 ms for the case that expects a timeout (the messages name it), else {@link #GENEROUS}. */
    static Duration timeoutFor(CatalogException.Kind expected) {
        return expected == CatalogException.Kind.TIMEOUT ? Duration.ofMillis(800) : GENEROUS;
    }

    /** One recorded request. */
    record Request(String method, String rawPath, Map<String, List<String>> headers, String body) {
        String header(String name) {
            for (Map.Entry<String, List<String>> e : headers.entrySet()) {
                if (e.getKey().equalsIgnoreCase(name)) {
                    return e.getValue().get(0);
                }
            }
            return null;
        }
    }

    /** A reply: status, body, delay. */
    record Reply(int status, String body, long delayMillis) {
        static Reply json(int status, String body) {
            return new Reply(status, body, 0);
        }
    }

    HttpServer server;
    final List<Request> requests = Collections.synchronizedList(new ArrayList<>());

    String start(Function<Request, Reply> handler) throws Exception {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext(
                "/",
                exchange -> {
                    Request r =
                            new Request(
                                    exchange.getRequestMethod(),
                                    exchange.getRequestURI().getRawPath(),
                                    exchange.getRequestHeaders(),
                                    new String(
                                            exchange.getRequestBody().readAllBytes(),
                                            StandardCharsets.UTF_8));
                    requests.add(r);
                    Reply reply = handler.apply(r);
                    if (reply.delayMillis() > 0) {
                        try {
                            Thread.sleep(reply.delayMillis());
                        } catch (InterruptedException e) {
                            Thread.currentThread().interrupt();
                        }
                    }
                    byte[] b = reply.body().getBytes(StandardCharsets.UTF_8);
                    exchange.getResponseHeaders().add("Content-Type", "application/json");
                    try {
                        exchange.sendResponseHeaders(reply.status(), b.length == 0 ? -1 : b.length);
                        if (b.length > 0) {
                            exchange.getResponseBody().write(b);
                        }
                    } catch (java.io.IOException e) {
                        // client gone (timeout test)
                    }
                    exchange.close();
                });
        server.setExecutor(java.util.concurrent.Executors.newCachedThreadPool(r -> {
            Thread t = new Thread(r, "mock-catalog");
            t.setDaemon(true);
            return t;
        }));
        server.start();
        return "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterEach
    void stop() {
        if (server != null) {
            server.stop(0);
        }
    }

    static void assertClean(String text) {
        assertFalse(text.contains(TOKEN), () -> "token leaked: " + text);
        assertFalse(text.contains("secret-of-"), () -> "secret leaked: " + text);
    }
}
