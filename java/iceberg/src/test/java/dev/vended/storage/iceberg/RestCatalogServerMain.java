package dev.vended.storage.iceberg;

import dev.vended.storage.testkit.LocalS3Extension;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.HashMap;
import java.util.Map;

/**
 * Launches Iceberg's REST catalog test server ({@code org.apache.iceberg.rest.RESTCatalogServer}
 * of {@code iceberg-open-api} test-fixtures: a JdbcCatalog on SQLite behind Iceberg's own REST
 * servlet) in a child JVM ({@link RestCatalogServerLoopback}), until its stdin closes.
 */
public final class RestCatalogServerMain {

    private RestCatalogServerMain() {}

    /**
     * Starts {@link RestCatalogServerLoopback#main} in a child JVM whose classpath is the module's full test classpath
     * without the Spark runtime (Iceberg's server needs the unshaded iceberg-core), serving a
     * warehouse at {@code s3://<bucket>/wh} whose metadata files it writes through VendedFileIO
     * with the endpoint's root key. Close its stdin to stop it.
     */
    static Process start(int port, LocalS3Extension S3) throws Exception {
        Path file = Paths.get(System.getProperty("vended.iceberg.fullTestClasspath"));
        List<String> cp = new ArrayList<>();
        for (String entry : Files.readString(file).trim().split(java.io.File.pathSeparator)) {
            if (!entry.contains("iceberg-spark-runtime")) {
                cp.add(entry);
            }
        }
        cp.add(Paths.get("target", "classes").toAbsolutePath().toString());
        cp.add(Paths.get("target", "test-classes").toAbsolutePath().toString());
        Map<String, String> props = new HashMap<>();
        props.put("rest.port", Integer.toString(port));
        props.put("uri", "jdbc:sqlite:file:rest-catalog-" + System.nanoTime() + "?mode=memory&cache=shared");
        props.put("warehouse", S3.uri("wh"));
        // The server writes table metadata files through VendedFileIO with the root key.
        props.put("io-impl", VendedFileIO.class.getName());
        props.put("s3.endpoint", S3.endpoint());
        props.put("client.region", S3.region());
        S3.storageOptions().forEach((k, v) -> props.put(VendedFileIO.OPTION_PREFIX + k, v));
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-Xmx512m");
        props.forEach((k, v) -> cmd.add("-Drest-server." + k + "=" + v));
        cmd.add("-cp");
        cmd.add(String.join(java.io.File.pathSeparator, cp));
        cmd.add("dev.vended.storage.iceberg.RestCatalogServerLoopback");
        Path log = Paths.get("target", "rest-catalog-server.log");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(false).redirectError(log.toFile()).start();
        CompletableFuture<Boolean> ready =
                CompletableFuture.supplyAsync(
                        () -> {
                            try (BufferedReader r =
                                    new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                                String line;
                                while ((line = r.readLine()) != null) {
                                    if (line.contains("REST-SERVER-READY")) {
                                        return true;
                                    }
                                }
                                return false;
                            } catch (IOException e) {
                                return false;
                            }
                        });
        Boolean ok = ready.get(90, TimeUnit.SECONDS);
        if (!Boolean.TRUE.equals(ok)) {
            p.destroyForcibly();
            throw new IllegalStateException("Iceberg's REST catalog server did not start; see " + log.toAbsolutePath());
        }
        return p;
    }
}
