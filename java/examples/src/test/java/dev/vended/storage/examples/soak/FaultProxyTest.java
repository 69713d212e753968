package dev.vended.storage.examples.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpServer;

import dev.vended.storage.examples.soak.FaultSchedule.Kind;
import dev.vended.storage.examples.soak.FaultSchedule.Rates;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.EnumMap;
import java.util.Map;

/** The soak's fault schedule (pure) and fault proxy (against a local upstream). */
class FaultProxyTest {

    private HttpServer upstream;

    @BeforeEach
    void startUpstream() throws IOException {
        upstream = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        upstream.createContext(
                "/",
                ex -> {
                    byte[] body = "hello through the proxy".getBytes(StandardCharsets.US_ASCII);
                    ex.getRequestBody().readAllBytes();
                    ex.sendResponseHeaders(200, body.length);
                    ex.getResponseBody().write(body);
                    ex.close();
                });
        upstream.start();
    }

    @AfterEach
    void stopUpstream() {
        upstream.stop(0);
    }

    @Test
    void scheduleIsAFunctionOfSeedAndRequestNumber() {
        FaultSchedule a = new FaultSchedule(7, Rates.DEFAULT);
        FaultSchedule b = new FaultSchedule(7, Rates.DEFAULT);
        FaultSchedule c = new FaultSchedule(8, Rates.DEFAULT);
        int differ = 0;
        for (long n = 0; n < 2000; n++) {
            assertEquals(b.decide(n, true), a.decide(n, true));
            if (!a.decide(n, true).equals(c.decide(n, true))) {
                differ++;
            }
        }
        assertTrue(differ > 50, "seeds 7 and 8 differ in " + differ + " of 2000");
    }

    @Test
    void scheduleKeepsItsRatesAndBounds() {
        FaultSchedule s = new FaultSchedule(1, new Rates(2, 1, 5));
        Map<Kind, Integer> counts = new EnumMap<>(Kind.class);
        int n = 200_000;
        for (long i = 0; i < n; i++) {
            FaultSchedule.Fault f = s.decide(i, true);
            counts.merge(f.kind(), 1, Integer::sum);
            switch (f.kind()) {
                case LATENCY -> assertBetween(50, 1500, f.amount());
                case RESET_MID_RESPONSE -> assertBetween(1, 1 << 20, f.amount());
                default -> assertEquals(0, f.amount());
            }
            if (f.kind() == Kind.RESET_BEFORE || f.kind() == Kind.RESET_MID_RESPONSE) {
                assertEquals(Kind.NONE, s.decide(i, false).kind());
            }
        }
        assertBetween(0.018 * n, 0.022 * n, counts.get(Kind.ERROR_503));
        int resets = counts.get(Kind.RESET_BEFORE) + counts.get(Kind.RESET_MID_RESPONSE);
        assertBetween(0.008 * n, 0.012 * n, resets);
        assertBetween(0.046 * n, 0.054 * n, counts.get(Kind.LATENCY));
    }

    @Test
    void ratesParseAndRejectNonsense() {
        assertEquals(new Rates(2, 1, 5), FaultSchedule.parse("503=2,reset=1,latency=5"));
        assertEquals(new Rates(0, 0, 0.5), FaultSchedule.parse("latency=0.5"));
        assertEquals(Rates.DEFAULT, FaultSchedule.parse(Rates.DEFAULT.toString()));
        IllegalArgumentException bad =
                assertThrows(IllegalArgumentException.class, () -> FaultSchedule.parse("500=2"));
        assertTrue(bad.getMessage().contains("500=2"), bad.getMessage());
        IllegalArgumentException sum =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> FaultSchedule.parse("503=60,latency=50"));
        assertTrue(sum.getMessage().contains("more than 100"), sum.getMessage());
    }

    @Test
    void onlyIdempotentRequestsAreResettable() {
        assertTrue(FaultSchedule.resettable("GET /b/k HTTP/1.1\r\nhost: x\r\n\r\n"));
        assertTrue(FaultSchedule.resettable("HEAD /b/k HTTP/1.1\r\nhost: x\r\n\r\n"));
        assertTrue(FaultSchedule.resettable("PUT /b/k HTTP/1.1\r\nhost: x\r\n\r\nbody"));
        assertFalse(FaultSchedule.resettable("PUT /b/k HTTP/1.1\r\nIf-None-Match: *\r\n\r\n"));
        assertFalse(FaultSchedule.resettable("DELETE /b/k HTTP/1.1\r\nhost: x\r\n\r\n"));
        assertFalse(FaultSchedule.resettable("POST /b/k?uploads HTTP/1.1\r\nhost: x\r\n\r\n"));
        assertFalse(FaultSchedule.resettable("GET /b/k HTTP/1.1\r\nhost: x"));
    }

    @Test
    void proxyForwardsAnswers503AndResets() throws Exception {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        int port = upstream.getAddress().getPort();
        try (FaultProxy clean = FaultProxy.start(port, new FaultSchedule(1, new Rates(0, 0, 0)))) {
            HttpResponse<String> r =
                    http.send(get(clean, "/a"), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertEquals("hello through the proxy", r.body());
            assertEquals(1, clean.requests.get());
        }
        try (FaultProxy slow = FaultProxy.start(port, new FaultSchedule(1, new Rates(0, 0, 100)))) {
            HttpResponse<String> r =
                    http.send(get(slow, "/a"), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, r.statusCode());
            assertEquals(1, slow.delayed.get());
            assertBetween(50, 1500, slow.delayMillis.get());
        }
        try (FaultProxy busy = FaultProxy.start(port, new FaultSchedule(1, new Rates(100, 0, 0)))) {
            HttpResponse<String> r =
                    http.send(get(busy, "/a"), HttpResponse.BodyHandlers.ofString());
            assertEquals(503, r.statusCode());
            assertTrue(r.body().contains("<Code>SlowDown</Code>"), r.body());
            assertEquals(1, busy.errors503.get());
        }
        try (FaultProxy rst = FaultProxy.start(port, new FaultSchedule(1, new Rates(0, 100, 0)))) {
            assertThrows(
                    IOException.class,
                    () -> http.send(get(rst, "/a"), HttpResponse.BodyHandlers.ofString()));
            assertTrue(rst.resetsBefore.get() + rst.resetsMid.get() > 0, rst.statsLine());
        }
    }

    private static void assertBetween(double low, double high, long actual) {
        assertTrue(actual >= low && actual <= high, actual + " not in [" + low + ", " + high + "]");
    }

    private static HttpRequest get(FaultProxy proxy, String path) {
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + proxy.port() + path))
                .timeout(Duration.ofSeconds(10))
                .build();
    }
}
