package dev.vended.storage.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

/**
 * Finds the {@code local-s3} binary for {@link LocalS3Server#binaryFromProperty()}: the system
 * property, the binary bundled in the testkit jar for the running platform (extracted once per
 * JVM), or the path the testkit build recorded.
 */
final class LocalS3Binary {

    private LocalS3Binary() {}

    /** See {@link LocalS3Server#binaryFromProperty()}. */
    static Path find() {
        String value = System.getProperty(LocalS3Server.BINARY_PROPERTY);
        if (value != null && !value.isBlank()) {
            Path path = Path.of(value.trim());
            if (!Files.isRegularFile(path)) {
                throw new IllegalStateException(
                        "system property "
                                + LocalS3Server.BINARY_PROPERTY
                                + " names "
                                + value
                                + ", which is not a file; build it with `cargo build --release -p"
                                + " vended-storage-local-s3 --bin local-s3`");
            }
            return path;
        }
        String platform = platform();
        Path bundled;
        try {
            bundled = bundledBinary(platform);
        } catch (IOException e) {
            throw new IllegalStateException(
                    "cannot extract the bundled local-s3 binary for "
                            + platform
                            + " to a temporary file (java.io.tmpdir="
                            + System.getProperty("java.io.tmpdir")
                            + "; it must allow executables): "
                            + e.getMessage(),
                    e);
        }
        if (bundled != null) {
            return bundled;
        }
        String recorded = builtBinary();
        if (recorded != null && !recorded.isBlank() && Files.isRegularFile(Path.of(recorded))) {
            return Path.of(recorded);
        }
        throw new IllegalStateException(
                "no local-s3 binary: system property "
                        + LocalS3Server.BINARY_PROPERTY
                        + " is not set, this testkit jar bundles none for platform "
                        + (platform == null
                                ? "(unsupported: os.name=" + System.getProperty("os.name")
                                        + ", os.arch=" + System.getProperty("os.arch") + ")"
                                : platform)
                        + (recorded == null || recorded.isBlank()
                                ? ""
                                : " and the recorded build path " + recorded + " does not exist")
                        + "; build it with `cargo build --release -p vended-storage-local-s3"
                        + " --bin local-s3` and pass -D"
                        + LocalS3Server.BINARY_PROPERTY
                        + "=/path/to/target/release/local-s3");
    }

    /** The extracted bundled binary of this JVM, once extracted. */
    private static Path extracted;

    /**
     * Extracts {@code native/<platform>/local-s3} from the class path to a new temporary directory
     * (once per JVM; removed at exit) and makes it executable.
     *
     * @return the executable, or {@code null} if the class path holds none for {@code platform}
     */
    private static synchronized Path bundledBinary(String platform) throws IOException {
        if (extracted != null && Files.isRegularFile(extracted)) {
            return extracted;
        }
        if (platform == null) {
            return null;
        }
        String resource = "/native/" + platform + "/local-s3";
        try (InputStream in = LocalS3Server.class.getResourceAsStream(resource)) {
            if (in == null) {
                return null;
            }
            Path dir = Files.createTempDirectory("vended-storage-local-s3-");
            Path file = dir.resolve("local-s3");
            Files.copy(in, file);
            if (!file.toFile().setExecutable(true, true)) {
                throw new IOException("cannot make " + file + " executable");
            }
            file.toFile().deleteOnExit();
            dir.toFile().deleteOnExit();
            extracted = file;
            return file;
        }
    }

    /**
     * The running platform as os-maven-plugin names it ({@code linux-x86_64}, {@code
     * osx-aarch_64}, ...), or {@code null} if unsupported.
     */
    static String platform() {
        String os =
                System.getProperty("os.name", "")
                        .toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^a-z0-9]+", "");
        String arch =
                System.getProperty("os.arch", "")
                        .toLowerCase(java.util.Locale.ROOT)
                        .replaceAll("[^a-z0-9]+", "");
        String osPart;
        if (os.startsWith("linux")) {
            osPart = "linux";
        } else if (os.startsWith("mac") || os.startsWith("osx") || os.startsWith("darwin")) {
            osPart = "osx";
        } else if (os.startsWith("windows")) {
            osPart = "windows";
        } else {
            return null;
        }
        switch (arch) {
            case "x8664":
            case "amd64":
            case "x64":
                return osPart + "-x86_64";
            case "aarch64":
            case "arm64":
                return osPart + "-aarch_64";
            default:
                return null;
        }
    }

    private static String builtBinary() {
        try (InputStream in = LocalS3Server.class.getResourceAsStream("testkit.properties")) {
            if (in == null) {
                return null;
            }
            Properties p = new Properties();
            p.load(in);
            String v = p.getProperty("local.s3.binary");
            return v == null || v.contains("${") ? null : v.trim();
        } catch (IOException e) {
            return null;
        }
    }
}
