package dev.vended.storage.hadoop.submit;

import dev.vended.storage.StorageOptionsProvider;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;

/**
 * The provider of the {@code spark-submit} check ({@code bin/spark-submit-check}): it lives in the
 * <b>submitted application jar</b>, not in the library jars given to {@code --jars}, and is named
 * by {@code vended.storage.table.<name>.provider.class}. Each call asks the table's endpoint
 * ({@code options.aws_endpoint}) for temporary credentials with STS {@code AssumeRole} (the local
 * endpoint answers it unsigned), lasting {@code submit.sts.duration-seconds} (default 3). Returns
 * only the credentials and their expiry: endpoint and region are the table's own options (C10).
 */
public final class StsCredentials implements StorageOptionsProvider {

    private static final AtomicInteger CALLS = new AtomicInteger();
    private static final Pattern FIELD =
            Pattern.compile("<(AccessKeyId|SecretAccessKey|SessionToken|Expiration)>([^<]*)</");

    private final URI endpoint;
    private final int durationSeconds;
    private final HttpClient http =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    /**
     * The constructor the FileSystem calls.
     *
     * @param conf the Hadoop configuration (Spark's {@code spark.hadoop.*} keys)
     * @param table the table's name in {@code vended.storage.table.<name>.*}
     * @throws IllegalArgumentException if the table has no {@code options.aws_endpoint}
     */
    public StsCredentials(Configuration conf, String table) {
        String url = conf.getTrimmed("vended.storage.table." + table + ".options.aws_endpoint");
        if (url == null || url.isEmpty()) {
            throw new IllegalArgumentException(
                    "vended.storage.table." + table + ".options.aws_endpoint is required");
        }
        this.endpoint = URI.create(url.replaceAll("/+$", "") + "/");
        this.durationSeconds = conf.getInt("submit.sts.duration-seconds", 3);
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws IOException, InterruptedException {
        CALLS.incrementAndGet();
        String form =
                "Action=AssumeRole&Version=2011-06-15"
                        + "&RoleArn=arn%3Aaws%3Aiam%3A%3A000000000000%3Arole%2Fsubmit"
                        + "&RoleSessionName=spark-submit-check&DurationSeconds="
                        + durationSeconds;
        HttpResponse<String> r =
                http.send(
                        HttpRequest.newBuilder(endpoint)
                                .timeout(Duration.ofSeconds(10))
                                .header("Content-Type", "application/x-www-form-urlencoded")
                                .POST(HttpRequest.BodyPublishers.ofString(form))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IOException("AssumeRole answered HTTP " + r.statusCode());
        }
        Map<String, String> f = new java.util.HashMap<>();
        Matcher m = FIELD.matcher(r.body());
        while (m.find()) {
            f.put(m.group(1), m.group(2));
        }
        if (f.size() != 4) {
            throw new IOException("AssumeRole answer lacks credentials (has " + f.keySet() + ")");
        }
        return Map.of(
                "aws_access_key_id", f.get("AccessKeyId"),
                "aws_secret_access_key", f.get("SecretAccessKey"),
                "aws_session_token", f.get("SessionToken"),
                "expires_at_millis",
                        Long.toString(Instant.parse(f.get("Expiration")).toEpochMilli()));
    }

    /**
     * Calls made in this JVM.
     *
     * @return the number of {@link #fetchStorageOptions()} calls
     */
    public static int calls() {
        return CALLS.get();
    }

    @Override
    public String toString() {
        return "StsCredentials{" + endpoint + ", " + durationSeconds + " s}";
    }
}
