package dev.vended.storage.iceberg;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.vended.storage.testkit.LocalS3Extension;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The vending layer of the test, on 127.0.0.1 under {@code /catalog}, in front of Iceberg's REST
 * catalog test server (which vends nothing): every {@code loadTable} and create answer gets {@code
 * storage-credentials} for the table's location, minted by the local S3 endpoint and living {@code
 * ttl}, and a relative {@code client.refresh-credentials-endpoint}, which it serves ({@code
 * loadCredentials}) by minting again. Everything else is forwarded unchanged.
 */
final class VendingCatalog implements AutoCloseable {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Pattern CREDENTIALS =
            Pattern.compile("/v1/namespaces/([^/]+)/tables/([^/]+)/credentials");
    private static final Pattern TABLE = Pattern.compile("/v1/namespaces/([^/]+)/tables(/([^/]+))?");

    private final HttpServer server;
    private final String backend;
    private final LocalS3Extension s3;
    private final Duration ttl;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /** Keys minted for loadTable/create answers. */
    final List<VendedCredentials> tableAnswers = new CopyOnWriteArrayList<>();

    /** Keys minted for refresh calls ({@code loadCredentials}). */
    final List<VendedCredentials> refreshes = new CopyOnWriteArrayList<>();

    /** Requests that failed in the layer itself. */
    final AtomicInteger failures = new AtomicInteger();

    VendingCatalog(String backend, LocalS3Extension s3, Duration ttl) throws IOException {
        this.backend = backend;
        this.s3 = s3;
        this.ttl = ttl;
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(java.util.concurrent.Executors.newFixedThreadPool(8));
        server.createContext("/catalog/", this::handle);
        server.start();
    }

    String uri() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/catalog";
    }

    private ObjectNode credential(String location, List<VendedCredentials> into) {
        String scope = location.substring("s3://".length());
        scope = scope.substring(scope.indexOf('/') + 1) + "/";
        VendedCredentials c = s3.mintCredentials(ttl, scope);
        into.add(c);
        ObjectNode entry = JSON.createObjectNode();
        entry.put("prefix", location);
        entry.set("config", JSON.valueToTree(RefreshEndpoint.config(c)));
        return entry;
    }

    private void handle(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getRawPath().substring("/catalog".length());
        String query = ex.getRequestURI().getRawQuery();
        String pathAndQuery = path + (query == null ? "" : "?" + query);
        byte[] body = ex.getRequestBody().readAllBytes();
        int status;
        String answer;
        try {
            Matcher cred = CREDENTIALS.matcher(path);
            if (cred.matches()) {
                HttpResponse<String> table = forward("GET", path.replace("/credentials", ""), null);
                status = table.statusCode();
                answer = table.body();
                if (status == 200) {
                    String location = JSON.readTree(answer).path("metadata").path("location").asText();
                    ObjectNode r = JSON.createObjectNode();
                    r.putArray("storage-credentials").add(credential(location, refreshes));
                    answer = r.toString();
                }
            } else {
                HttpResponse<String> r = forward(ex.getRequestMethod(), pathAndQuery, body);
                status = r.statusCode();
                answer = r.body();
                Matcher table = TABLE.matcher(path);
                boolean matches = table.matches();
                boolean load = matches && "GET".equals(ex.getRequestMethod()) && table.group(2) != null;
                boolean create = matches && "POST".equals(ex.getRequestMethod()) && table.group(2) == null;
                if (status == 200 && (load || create)) {
                    answer = addCredentials(table.group(1), answer);
                }
            }
        } catch (RuntimeException | InterruptedException e) {
            failures.incrementAndGet();
            status = 500;
            answer = "{\"error\":{\"message\":\"vending layer failed\",\"type\":\"ServerError\",\"code\":500}}";
        }
        byte[] out = answer == null ? new byte[0] : answer.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, out.length == 0 ? -1 : out.length);
        if (out.length > 0) {
            ex.getResponseBody().write(out);
        }
        ex.close();
    }

    private String addCredentials(String namespace, String answer) throws IOException {
        ObjectNode r = (ObjectNode) JSON.readTree(answer);
        String location = r.path("metadata").path("location").asText();
        String table = location.substring(location.lastIndexOf('/') + 1);
        r.putArray("storage-credentials").add(credential(location, tableAnswers));
        ObjectNode config = r.has("config") ? (ObjectNode) r.get("config") : r.putObject("config");
        config.put(
                "client.refresh-credentials-endpoint",
                "v1/namespaces/" + namespace + "/tables/" + table + "/credentials");
        return r.toString();
    }

    private HttpResponse<String> forward(String method, String pathAndQuery, byte[] body)
            throws IOException, InterruptedException {
        HttpRequest request =
                HttpRequest.newBuilder(URI.create(backend + pathAndQuery))
                        .timeout(Duration.ofSeconds(30))
                        .header("Content-Type", "application/json")
                        .method(
                                method,
                                body == null || body.length == 0
                                        ? HttpRequest.BodyPublishers.noBody()
                                        : HttpRequest.BodyPublishers.ofByteArray(body))
                        .build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Every key this layer minted. */
    List<VendedCredentials> allKeys() {
        List<VendedCredentials> all = new java.util.ArrayList<>(tableAnswers);
        all.addAll(refreshes);
        return all;
    }

    @Override
    public void close() {
        server.stop(0);
        ((java.util.concurrent.ExecutorService) server.getExecutor()).shutdownNow();
    }
}
