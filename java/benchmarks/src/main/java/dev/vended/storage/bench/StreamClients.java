package dev.vended.storage.bench;

import dev.vended.storage.ObjectStore;

import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import java.util.Map;

import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Client construction shared by the stream benchmarks (issue 12): an {@link ObjectStore} and the
 * AWS SDK v2 sync and async clients, all against the same local S3 endpoint with the same kind of
 * session credentials (from the endpoint's admin API).
 */
final class StreamClients {

    /** The SDK's default multipart part size (and threshold): 8 MiB. */
    static final long SDK_PART_SIZE = 8L << 20;

    private StreamClients() {}

    static ObjectStore vended(String endpoint, String bucket) throws IOException {
        return vended(endpoint, bucket, true);
    }

    /** {@link #vended(String, String)} with storage option {@code checksums} set. */
    static ObjectStore vended(String endpoint, String bucket, boolean checksums) throws IOException {
        BenchEnv.Creds creds = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
        Map<String, String> options = BenchEnv.endpointOptions(endpoint);
        options.putAll(BenchEnv.credentialOptions(creds));
        options.put("checksums", Boolean.toString(checksums));
        try {
            return ObjectStore.open("s3://" + bucket + "/", options);
        } catch (Exception e) {
            throw new IOException("cannot open ObjectStore: " + e, e);
        }
    }

    private static StaticCredentialsProvider sdkCredentials(String endpoint) throws IOException {
        BenchEnv.Creds c = BenchEnv.issueCredentials(endpoint, 4 * 3600_000L);
        return StaticCredentialsProvider.create(
                AwsSessionCredentials.create(c.accessKeyId(), c.secretAccessKey(), c.sessionToken()));
    }

    /** Sync S3Client (Apache 5, 64 connections), checksums only when required. */
    static S3Client sdkSync(String endpoint) throws IOException {
        return sdkSync(endpoint, false);
    }

    /**
     * {@link #sdkSync(String)}, or with {@code sums} the SDK's default integrity ({@code
     * WHEN_SUPPORTED} both ways).
     */
    static S3Client sdkSync(String endpoint, boolean sums) throws IOException {
        return S3Client.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(BenchEnv.REGION))
                .forcePathStyle(true)
                .credentialsProvider(sdkCredentials(endpoint))
                .httpClientBuilder(Transfer.Sdk.httpClient())
                .requestChecksumCalculation(sums
                        ? RequestChecksumCalculation.WHEN_SUPPORTED
                        : RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(sums
                        ? ResponseChecksumValidation.WHEN_SUPPORTED
                        : ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    /**
     * S3AsyncClient over Netty (64 connections), checksums only when required; with {@code
     * multipart} its multipart client ({@code multipartEnabled(true)}, default 8 MiB parts).
     */
    static S3AsyncClient sdkAsync(String endpoint, boolean multipart) throws IOException {
        return sdkAsync(endpoint, multipart, false);
    }

    /** {@link #sdkAsync(String, boolean)}, or with {@code sums} the SDK's default integrity. */
    static S3AsyncClient sdkAsync(String endpoint, boolean multipart, boolean sums)
            throws IOException {
        return S3AsyncClient.builder()
                .endpointOverride(URI.create(endpoint))
                .region(Region.of(BenchEnv.REGION))
                .forcePathStyle(true)
                .credentialsProvider(sdkCredentials(endpoint))
                .httpClientBuilder(
                        NettyNioAsyncHttpClient.builder()
                                .maxConcurrency(64)
                                .readTimeout(Duration.ofSeconds(60))
                                .writeTimeout(Duration.ofSeconds(60)))
                .requestChecksumCalculation(sums
                        ? RequestChecksumCalculation.WHEN_SUPPORTED
                        : RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(sums
                        ? ResponseChecksumValidation.WHEN_SUPPORTED
                        : ResponseChecksumValidation.WHEN_REQUIRED)
                .multipartEnabled(multipart)
                .build();
    }
}
