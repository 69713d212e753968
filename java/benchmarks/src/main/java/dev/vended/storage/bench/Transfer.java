package dev.vended.storage.bench;

import dev.vended.storage.ObjectStore;
import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import software.amazon.awssdk.auth.credentials.AnonymousCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.SdkHttpClient;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/** One way of moving whole objects as {@code byte[]}: the thing being compared. */
interface Transfer extends AutoCloseable {

    byte[] get(String key) throws Exception;

    void put(String key, byte[] data) throws Exception;

    @Override
    void close();

    /** Builds the client named by the benchmark's {@code client} parameter. */
    static Transfer create(String client) throws IOException {
        switch (client) {
            case "vended":
                return Vended.open(true);
            case "vended-static":
                return Vended.open(false);
            case "vended-unsigned":
                return Vended.unsigned(BenchEnv.ceiling());
            case "sdk":
                return Sdk.open(false);
            case "sdk-default-checksums":
                return Sdk.open(true);
            case "sdk-unsigned":
                return Sdk.unsigned(BenchEnv.ceiling());
            case "http":
                return new PlainHttp(BenchEnv.ceiling());
            default:
                throw new IllegalArgumentException("unknown client " + client);
        }
    }

    /**
     * {@code ObjectStore} (Rust object_store over JNI). With a provider (the product's normal use),
     * seeded with the same credentials, so the provider is never called during the measurement.
     */
    final class Vended implements Transfer {
        private final ObjectStore store;

        private Vended(ObjectStore store) {
            this.store = store;
        }

        static Vended open(boolean withProvider) throws IOException {
            String endpoint = BenchEnv.endpoint();
            BenchEnv.Creds creds = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
            Map<String, String> options = BenchEnv.endpointOptions(endpoint);
            options.putAll(BenchEnv.credentialOptions(creds));
            StorageOptionsProvider provider = null;
            if (withProvider) {
                Map<String, String> answer = new HashMap<>(options);
                provider = () -> new HashMap<>(answer);
            }
            try {
                return new Vended(
                        ObjectStore.open("s3://" + BenchEnv.bucket() + "/", options, provider));
            } catch (Exception e) {
                throw new IOException("cannot open ObjectStore: " + e, e);
            }
        }

        /**
         * Unsigned ({@code aws_skip_signature}) against the in-memory {@link CeilingServer}: the
         * client's own cost without the S3 endpoint's (SigV4 check, MD5, disk).
         */
        static Vended unsigned(String ceiling) throws IOException {
            Map<String, String> options = BenchEnv.endpointOptions(ceiling);
            options.put("aws_skip_signature", "true");
            try {
                return new Vended(ObjectStore.open("s3://" + BenchEnv.bucket() + "/", options));
            } catch (Exception e) {
                throw new IOException("cannot open ObjectStore: " + e, e);
            }
        }

        @Override
        public byte[] get(String key) throws Exception {
            return store.get(key);
        }

        @Override
        public void put(String key, byte[] data) throws Exception {
            store.put(key, data);
        }

        @Override
        public void close() {
            store.close();
        }
    }

    /**
     * AWS SDK for Java v2 {@code S3Client} (its default Apache 5 HTTP client, path-style, endpoint
     * override, session credentials). By default checksums are computed and validated only when an
     * operation requires them (object_store computes none); {@code defaultChecksums} keeps the
     * SDK's defaults (CRC32 on PUT, validation on GET).
     */
    final class Sdk implements Transfer {
        private final S3Client s3;
        private final String bucket;

        private Sdk(S3Client s3, String bucket) {
            this.s3 = s3;
            this.bucket = bucket;
        }

        static Sdk open(boolean defaultChecksums) throws IOException {
            String endpoint = BenchEnv.endpoint();
            BenchEnv.Creds c = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
            return build(
                    endpoint,
                    StaticCredentialsProvider.create(
                            AwsSessionCredentials.create(
                                    c.accessKeyId(), c.secretAccessKey(), c.sessionToken())),
                    defaultChecksums);
        }

        /** Anonymous (unsigned) against the in-memory {@link CeilingServer}. */
        static Sdk unsigned(String ceiling) {
            return build(ceiling, AnonymousCredentialsProvider.create(), false);
        }

        private static Sdk build(
                String endpoint, AwsCredentialsProvider credentials, boolean defaultChecksums) {
            var b =
                    S3Client.builder()
                            .endpointOverride(URI.create(endpoint))
                            .region(Region.of(BenchEnv.REGION))
                            .forcePathStyle(true)
                            .credentialsProvider(credentials)
                            .httpClientBuilder(httpClient());
            if (!defaultChecksums) {
                b.requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED);
            }
            return new Sdk(b.build(), BenchEnv.bucket());
        }

        /**
         * The SDK's default sync HTTP client in 2.57 (Apache 5, highest priority on the class path),
         * or Apache 4 with {@code -Dbench.sdkHttp=apache4}; 64 connections either way.
         */
        static SdkHttpClient.Builder<?> httpClient() {
            if ("apache4".equals(System.getProperty("bench.sdkHttp"))) {
                return ApacheHttpClient.builder()
                        .maxConnections(64)
                        .socketTimeout(Duration.ofSeconds(60));
            }
            return Apache5HttpClient.builder()
                    .maxConnections(64)
                    .socketTimeout(Duration.ofSeconds(60));
        }

        @Override
        public byte[] get(String key) {
            return s3.getObjectAsBytes(GetObjectRequest.builder().bucket(bucket).key(key).build())
                    .asByteArrayUnsafe();
        }

        @Override
        public void put(String key, byte[] data) {
            s3.putObject(
                    PutObjectRequest.builder().bucket(bucket).key(key).build(),
                    RequestBody.fromBytes(data));
        }

        @Override
        public void close() {
            s3.close();
        }
    }

    /**
     * The loopback ceiling: {@code java.net.http.HttpClient}, no signing, against {@link
     * CeilingServer} (in the driver JVM) that serves N bytes from memory and discards uploads. The
     * local S3 endpoint cannot be used for this since it rejects unsigned requests.
     */
    final class PlainHttp implements Transfer {
        private static final Duration TIMEOUT = Duration.ofSeconds(60);
        private final HttpClient http;
        private final String base;

        PlainHttp(String base) {
            this.base = base;
            this.http =
                    HttpClient.newBuilder()
                            .proxy(HttpClient.Builder.NO_PROXY)
                            .version(HttpClient.Version.HTTP_1_1)
                            .connectTimeout(Duration.ofSeconds(10))
                            .build();
        }

        @Override
        public byte[] get(String key) throws Exception {
            // The key is "get-<size>": the server answers with that many bytes.
            HttpResponse<byte[]> r =
                    http.send(
                            HttpRequest.newBuilder(URI.create(base + "/" + key))
                                    .timeout(TIMEOUT)
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofByteArray());
            if (r.statusCode() != 200) {
                throw new IOException("ceiling GET: HTTP " + r.statusCode());
            }
            return r.body();
        }

        @Override
        public void put(String key, byte[] data) throws Exception {
            HttpResponse<Void> r =
                    http.send(
                            HttpRequest.newBuilder(URI.create(base + "/" + key))
                                    .timeout(TIMEOUT)
                                    .PUT(HttpRequest.BodyPublishers.ofByteArray(data))
                                    .build(),
                            HttpResponse.BodyHandlers.discarding());
            if (r.statusCode() != 200) {
                throw new IOException("ceiling PUT: HTTP " + r.statusCode());
            }
        }

        @Override
        public void close() {
            // HttpClient has no close() before Java 21; its threads are daemons.
        }
    }
}
