package dev.vended.storage.delta.spark;

import dev.vended.storage.StorageOptionsProvider;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.AdminClient;

import org.apache.hadoop.conf.Configuration;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * A provider built from configuration only ({@code vended.storage.table.<name>.provider.class}),
 * so that every JVM of a Spark application (driver and executors) builds its own from the Hadoop
 * configuration Spark ships: it issues keys at the local endpoint by URL ({@code
 * provider.conf.endpoint-url}, {@code .ttl-ms}, {@code .scope}) and appends one line per call to a
 * shared file ({@code provider.conf.calls-file}): the calling JVM's pid, the access key id and
 * the lengths and SHA-256 digests of the secret and the session token (never the values), so the
 * driver can count the calls of every JVM and look for the credentials without holding them.
 */
public final class FileRecordingIssuer implements StorageOptionsProvider {

    /** One provider call, as recorded. */
    public record Call(
            long pid,
            long millis,
            String accessKeyId,
            int secretLength,
            String secretSha,
            int tokenLength,
            String tokenSha) {}

    private final String endpoint;
    private final long ttlMillis;
    private final String scope;
    private final Path calls;

    /**
     * The constructor the FileSystem prefers.
     *
     * @param conf the Hadoop configuration, with the table's {@code provider.conf.*} settings
     * @param table the table's name in the configuration
     */
    public FileRecordingIssuer(Configuration conf, String table) {
        Map<String, String> c = VendedFileSystem.providerConf(conf, table);
        this.endpoint = c.get("endpoint-url");
        this.ttlMillis = Long.parseLong(c.get("ttl-ms"));
        this.scope = c.get("scope");
        this.calls = Paths.get(c.get("calls-file"));
    }

    @Override
    public Map<String, String> fetchStorageOptions() throws IOException {
        Map<String, String> options = AdminClient.issue(endpoint, ttlMillis, scope);
        String secret = options.get("aws_secret_access_key");
        String token = options.getOrDefault("aws_session_token", "");
        String line =
                String.join(
                                " ",
                                Long.toString(ProcessHandle.current().pid()),
                                Long.toString(System.currentTimeMillis()),
                                options.get("aws_access_key_id"),
                                Integer.toString(secret.length()),
                                sha256(secret),
                                Integer.toString(token.length()),
                                sha256(token))
                        + "\n";
        // One short write with O_APPEND: lines of concurrent JVMs do not interleave.
        Files.writeString(
                calls,
                line,
                StandardCharsets.UTF_8,
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
        return options;
    }

    /**
     * The calls recorded in {@code file}, oldest first per JVM.
     *
     * @param file the {@code calls-file}
     * @return the calls; empty if none was made
     * @throws IOException if the file cannot be read
     */
    public static List<Call> read(Path file) throws IOException {
        List<Call> out = new ArrayList<>();
        if (!Files.exists(file)) {
            return out;
        }
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            String[] f = line.split(" ");
            out.add(
                    new Call(
                            Long.parseLong(f[0]),
                            Long.parseLong(f[1]),
                            f[2],
                            Integer.parseInt(f[3]),
                            f[4],
                            Integer.parseInt(f[5]),
                            f[6]));
        }
        return out;
    }

    /**
     * The SHA-256 of a string's UTF-8 bytes, in lower-case hex.
     *
     * @param s the string
     * @return 64 hex digits
     */
    public static String sha256(String s) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(sha.digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
