package dev.vended.storage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Locale;

/**
 * Loads {@code libvended_storage_jni} once per class loader.
 *
 * <p>If the system property {@value #LIBRARY_PROPERTY} is set, it names the library file to load
 * with {@link System#load} instead of the bundled one (an absolute path; a relative path or a
 * missing file is an {@link UnsatisfiedLinkError} naming it). Use it for a library built
 * separately, e.g. for a platform the jar does not bundle; the project's JUnit suite uses it to
 * load the test build of the library (cargo feature {@code test-hooks}), which the jar never
 * contains. Otherwise the library bundled in the jar under {@code /native/<os>-<arch>/} is
 * extracted to a temporary file and loaded from there.
 *
 * <p>A JVM can load one native library <em>file</em> into one class loader only. The bundled
 * library is extracted to a new temporary file per class loader, so when this jar is loaded by
 * several isolated class loaders (application servers, Spark with isolated class paths) each gets
 * its own copy of the native library, with its own runtime threads, store registry and handles
 * (stores are not shared between the copies). With {@value #LIBRARY_PROPERTY} set, the second class
 * loader fails with {@link UnsatisfiedLinkError} ("already loaded in another classloader"); put the
 * jar on a shared (parent) class path instead.
 */
final class NativeLoader {

    /** System property naming an absolute path of the native library to load instead. */
    static final String LIBRARY_PROPERTY = "vended.storage.native.library";

    private static final String LIBRARY_NAME = "vended_storage_jni";

    private static boolean loaded;
    private static String failure;

    private NativeLoader() {}

    /**
     * Loads the library unless this class loader already did.
     *
     * @throws UnsatisfiedLinkError when the library cannot be found or loaded (also on every later
     *     call)
     */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        if (failure != null) {
            throw new UnsatisfiedLinkError(failure);
        }
        try {
            doLoad();
            loaded = true;
            NativeLog.install();
        } catch (UnsatisfiedLinkError e) {
            failure = e.getMessage();
            throw e;
        }
    }

    private static void doLoad() {
        String explicit = System.getProperty(LIBRARY_PROPERTY);
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit.trim());
            if (!path.isAbsolute()) {
                throw new UnsatisfiedLinkError(
                        "-D" + LIBRARY_PROPERTY + " must be an absolute path, got: " + explicit);
            }
            if (!Files.isRegularFile(path)) {
                throw new UnsatisfiedLinkError(
                        "-D" + LIBRARY_PROPERTY + " names no such file: " + explicit);
            }
            System.load(path.toString());
            return;
        }

        String osName = System.getProperty("os.name", "");
        String osArch = System.getProperty("os.arch", "");
        String platform = platformDirectory(osName, osArch);
        if (platform == null) {
            throw new UnsatisfiedLinkError(
                    "vended-storage has no native library for os.name="
                            + osName
                            + ", os.arch="
                            + osArch
                            + "; build it with cargo and point -D"
                            + LIBRARY_PROPERTY
                            + " at it");
        }
        String fileName = System.mapLibraryName(LIBRARY_NAME);
        String resource = "/native/" + platform + "/" + fileName;
        try (InputStream in = NativeLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new UnsatisfiedLinkError(
                        "vended-storage native library not found on the class path at "
                                + resource
                                + " (platform "
                                + platform
                                + " is not bundled in this jar); build it with cargo and point -D"
                                + LIBRARY_PROPERTY
                                + " at it");
            }
            int dot = fileName.lastIndexOf('.');
            Path tmp =
                    Files.createTempFile(fileName.substring(0, dot) + "-", fileName.substring(dot));
            tmp.toFile().deleteOnExit();
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
            System.load(tmp.toAbsolutePath().toString());
        } catch (IOException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "cannot extract vended-storage native library "
                                    + resource
                                    + " to a temporary file: "
                                    + e);
            error.initCause(e);
            throw error;
        }
    }

    /**
     * The resource directory for a platform, e.g. {@code linux-x86_64}, or {@code null} if the
     * platform is not supported.
     */
    static String platformDirectory(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT);
        String arch = osArch.toLowerCase(Locale.ROOT);
        String osPart;
        if (os.startsWith("linux")) {
            osPart = "linux";
        } else if (os.startsWith("mac") || os.startsWith("darwin")) {
            osPart = "darwin";
        } else if (os.startsWith("windows")) {
            osPart = "windows";
        } else {
            return null;
        }
        String archPart;
        switch (arch) {
            case "amd64":
            case "x86_64":
            case "x86-64":
                archPart = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                archPart = "aarch64";
                break;
            default:
                return null;
        }
        return osPart + "-" + archPart;
    }
}
