package com.example.orders;

import java.io.IOException;
import java.io.StringReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/** Stands for your catalog client: whatever you call to get a table's short-lived credentials. */
public interface CatalogClient {

    /**
     * Loads a table's storage options.
     *
     * @param table the table, e.g. {@code db.orders}
     * @return credentials as storage options ({@code aws_access_key_id}, {@code
     *     aws_secret_access_key}, {@code aws_session_token}) plus {@code expires_at_millis}, epoch
     *     milliseconds as a decimal string
     * @throws IOException if the catalog cannot be reached or refuses
     */
    Map<String, String> loadCredentials(String table) throws IOException;

    /**
     * A stand-in HTTP catalog, for the samples that must build a client themselves (the Spark
     * provider): {@code GET <url>/tables/<table>/credentials} with {@code Authorization: Bearer
     * <token>}, answered with {@code key=value} lines. Replace it with your catalog's client.
     *
     * @param url the catalog's base URL, e.g. {@code https://catalog.example/v1}
     * @param token the bearer token (a secret: never logged, never in an exception message)
     * @return a client; each call is one HTTP request with a 30 s timeout
     */
    static CatalogClient http(URI url, String token) {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
        String base = url.toString().replaceAll("/+$", "");
        return table -> {
            URI uri =
                    URI.create(
                            base
                                    + "/tables/"
                                    + URLEncoder.encode(table, StandardCharsets.UTF_8)
                                    + "/credentials");
            HttpRequest request =
                    HttpRequest.newBuilder(uri)
                            .timeout(Duration.ofSeconds(30))
                            .header("Authorization", "Bearer " + token)
                            .GET()
                            .build();
            HttpResponse<String> response;
            try {
                response = http.send(request, HttpResponse.BodyHandlers.ofString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted while asking " + uri, e);
            }
            if (response.statusCode() != 200) {
                throw new IOException(uri + " answered HTTP " + response.statusCode());
            }
            Properties answer = new Properties();
            answer.load(new StringReader(response.body()));
            Map<String, String> options = new HashMap<>();
            answer.stringPropertyNames().forEach(k -> options.put(k, answer.getProperty(k)));
            return options;
        };
    }
}
