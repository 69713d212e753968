package dev.vended.storage;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Properties;

/**
 * Loads {@code libvended_storage_jni} once per class loader and checks that it belongs to these
 * classes.
 *
 * <h2>Where the library comes from</h2>
 *
 * <p>If the system property {@value #LIBRARY_PROPERTY} is set, or else the environment variable
 * {@value #LIBRARY_ENV}, it names the library file to load with {@link System#load} instead of the
 * bundled one (an absolute path; a relative path or a missing file is an {@link
 * UnsatisfiedLinkError} naming it and where it came from). Use it for a library built separately
 * ({@code cargo build --release -p vended-storage-jni}, then {@code
 * target/release/libvended_storage_jni.so}, {@code .dylib} on macOS), e.g. for a platform the jar
 * does not bundle; the project's JUnit suite uses the property to load the test build of the
 * library (cargo package {@code vended-storage-jni-test-hooks}), which the jar never contains.
 *
 * <p>Otherwise the library bundled in the jar as the resource {@code
 * /native/<platform>/<file>} is extracted to a temporary file and loaded from there. Platform
 * names follow the classifiers of the {@code os-maven-plugin} (as the OpenDAL and Netty native
 * jars do): {@code <os>-<arch>} with {@code os} one of {@code linux}, {@code osx}, {@code windows}
 * and {@code arch} one of {@code x86_64}, {@code aarch_64}; the file is {@code
 * libvended_storage_jni.so} (Linux), {@code libvended_storage_jni.dylib} (macOS) or {@code
 * vended_storage_jni.dll} (Windows). For example {@code /native/linux-x86_64/libvended_storage_jni.so}
 * or {@code /native/linux-aarch_64/libvended_storage_jni.so}. The Linux libraries are built against
 * glibc 2.17, so they load on any glibc of 2.17 or newer, but not on musl (Alpine). When the
 * running platform (operating system, architecture and, on Linux, C library; see {@link
 * NativePlatform}) has no bundled library, or the bundled one fails to load, the one {@link
 * UnsatisfiedLinkError} names the detected platform, the platforms the class path bundles, and the
 * ways out: the property or the environment variable naming a library built on that machine.
 *
 * <h2>Version check</h2>
 *
 * <p>Right after loading, before any other native method, the loader calls the library's {@code
 * nativeAbi()}, which reports its crate version and the number of its JNI contract, and compares
 * them with the version of these classes (the resource {@code dev/vended/storage/version.properties},
 * written by the build) and {@link #NATIVE_ABI}. A library from another release, or one that
 * predates the check, is an {@link UnsatisfiedLinkError} naming both versions, never a crash from
 * a changed native signature.
 *
 * <h2>Class loaders</h2>
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

    /**
     * Environment variable naming an absolute path of the native library to load instead, when
     * {@value #LIBRARY_PROPERTY} is not set.
     */
    static final String LIBRARY_ENV = "VENDED_STORAGE_NATIVE_LIBRARY";

    /**
     * The number of the JNI contract these classes expect; must equal {@code NATIVE_ABI} in {@code
     * crates/jni/src/lib.rs}. Bump both whenever a native method is added, removed or renamed, or
     * changes its parameter or return types.
     */
    static final int NATIVE_ABI = 9;

    /** The resource, next to this class, holding {@code version=<the classes' version>}. */
    static final String VERSION_RESOURCE = "version.properties";

    /** The operating systems a platform name can start with (os-maven-plugin names). */
    static final List<String> OPERATING_SYSTEMS = List.of("linux", "osx", "windows");

    /** The architectures a platform name can end with (os-maven-plugin names). */
    static final List<String> ARCHITECTURES = List.of("x86_64", "aarch_64");

    private static final String LIBRARY_NAME = "vended_storage_jni";

    private static final String BUILD_HINT =
            "build the library from the same source release with cargo (cargo build --release -p"
                    + " vended-storage-jni; docs/platforms.md has the steps) and name the file with"
                    + " -D"
                    + LIBRARY_PROPERTY
                    + "=/absolute/path/to/it or the environment variable "
                    + LIBRARY_ENV
                    + "=/absolute/path/to/it";

    private static boolean loaded;
    private static String failure;

    private NativeLoader() {}

    /**
     * Loads the library unless this class loader already did, and checks its version.
     *
     * @throws UnsatisfiedLinkError when the library cannot be found or loaded, or is not of this
     *     release (also on every later call)
     */
    static synchronized void load() {
        if (loaded) {
            return;
        }
        if (failure != null) {
            throw new UnsatisfiedLinkError(failure);
        }
        try {
            String source = doLoad();
            checkVersion(source);
            loaded = true;
            NativeLog.install();
        } catch (UnsatisfiedLinkError e) {
            failure = e.getMessage();
            throw e;
        }
    }

    /**
     * The JNI contract of the loaded library: {@code "<crate version>/<ABI>"}, e.g. {@code
     * 0.1.0/1}. Name and signature never change (the JNI symbol {@code
     * Java_dev_vended_storage_NativeLoader_nativeAbi}).
     */
    private static native String nativeAbi();

    /**
     * Where the library comes from: an explicit file ({@code file} set) or a resource of the jar.
     *
     * @param file the file named by the property or the environment variable, or {@code null}
     * @param resource the bundled resource, or {@code null} for an explicit file
     * @param platform the bundled resource's platform name, or {@code null} for an explicit file
     * @param description where it came from, for messages
     */
    record Source(Path file, String resource, String platform, String description) {}

    /** Loads the library and returns a description of where it came from, for messages. */
    private static String doLoad() {
        NativePlatform detected = NativePlatform.current();
        List<String> bundled = bundledPlatforms();
        String property = System.getProperty(LIBRARY_PROPERTY);
        Source source = locate(detected, property, System.getenv(LIBRARY_ENV), bundled);
        if (source.file() != null) {
            System.load(source.file().toString());
            return source.description();
        }
        String fileName = libraryFileName(source.platform());
        int dot = fileName.lastIndexOf('.');
        Path tmp;
        try (InputStream in = NativeLoader.class.getResourceAsStream(source.resource())) {
            if (in == null) {
                throw new UnsatisfiedLinkError(
                        missingLibraryMessage(detected, source.platform(), bundled));
            }
            tmp = Files.createTempFile(fileName.substring(0, dot) + "-", fileName.substring(dot));
            tmp.toFile().deleteOnExit();
            Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "cannot extract vended-storage native library "
                                    + source.resource()
                                    + " to a temporary file: "
                                    + e);
            error.initCause(e);
            throw error;
        }
        try {
            System.load(tmp.toAbsolutePath().toString());
        } catch (UnsatisfiedLinkError e) {
            // E.g. a C library older than glibc 2.17: the one message, with the system's reason.
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "vended-storage: the bundled native library "
                                    + source.resource()
                                    + " for the detected platform "
                                    + source.platform()
                                    + " ("
                                    + detected.describe()
                                    + ") does not load here ("
                                    + e.getMessage()
                                    + (source.platform().startsWith("linux-")
                                            ? "); the jar's Linux libraries need glibc 2.17 or"
                                                    + " newer; "
                                            : "); ")
                                    + carriedAndWaysOut(bundled));
            error.initCause(e);
            throw error;
        }
        return source.description();
    }

    /**
     * Decides where the library comes from, without loading anything: the property, else the
     * environment variable, else the bundled library of the detected platform.
     *
     * @param detected the running platform ({@link NativePlatform#current()})
     * @param property the value of {@value #LIBRARY_PROPERTY}, or {@code null}
     * @param env the value of {@value #LIBRARY_ENV}, or {@code null}
     * @param bundled the platforms the class path bundles ({@link #bundledPlatforms()})
     * @return the source to load
     * @throws UnsatisfiedLinkError when the named file is relative or missing, or when no library
     *     is bundled for the detected platform (the message names it, the bundled platforms and
     *     the ways out)
     */
    static Source locate(
            NativePlatform detected, String property, String env, List<String> bundled) {
        if (property != null && !property.isBlank()) {
            return explicit(property, "-D" + LIBRARY_PROPERTY);
        }
        if (env != null && !env.isBlank()) {
            return explicit(env, "environment variable " + LIBRARY_ENV);
        }
        String platform = detected.directory();
        if (platform == null || !bundled.contains(platform)) {
            throw new UnsatisfiedLinkError(missingLibraryMessage(detected, platform, bundled));
        }
        String resource = resourceName(platform);
        return new Source(null, resource, platform, resource + " (bundled in the jar)");
    }

    private static Source explicit(String value, String origin) {
        Path path = Path.of(value.trim());
        if (!path.isAbsolute()) {
            throw new UnsatisfiedLinkError(origin + " must be an absolute path, got: " + value);
        }
        if (!Files.isRegularFile(path)) {
            throw new UnsatisfiedLinkError(origin + " names no such file: " + value);
        }
        return new Source(path, null, null, path + " (" + origin + ")");
    }

    /** Compares the loaded library's version and ABI with these classes'. */
    private static void checkVersion(String source) {
        String javaVersion = javaVersion();
        String report;
        try {
            report = nativeAbi();
        } catch (UnsatisfiedLinkError e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "vended-storage: the native library "
                                    + source
                                    + " predates these classes (version "
                                    + javaVersion
                                    + ", JNI ABI "
                                    + NATIVE_ABI
                                    + "): it has no version check; "
                                    + BUILD_HINT);
            error.initCause(e);
            throw error;
        } catch (RuntimeException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "vended-storage: the native library " + source + " failed its version"
                                    + " check: " + e);
            error.initCause(e);
            throw error;
        }
        String mismatch = versionMismatch(javaVersion, NATIVE_ABI, report, source);
        if (mismatch != null) {
            throw new UnsatisfiedLinkError(mismatch);
        }
    }

    /**
     * The version of these classes, from {@value #VERSION_RESOURCE}.
     *
     * @throws UnsatisfiedLinkError when the resource is missing or was not filled in by the build
     */
    static String javaVersion() {
        Properties p = new Properties();
        try (InputStream in = NativeLoader.class.getResourceAsStream(VERSION_RESOURCE)) {
            if (in != null) {
                p.load(in);
            }
        } catch (IOException e) {
            UnsatisfiedLinkError error =
                    new UnsatisfiedLinkError(
                            "vended-storage: cannot read dev/vended/storage/"
                                    + VERSION_RESOURCE
                                    + ": "
                                    + e);
            error.initCause(e);
            throw error;
        }
        String version = p.getProperty("version", "").trim();
        if (version.isEmpty() || version.contains("${")) {
            throw new UnsatisfiedLinkError(
                    "vended-storage: the class path has no usable dev/vended/storage/"
                            + VERSION_RESOURCE
                            + " (got '"
                            + version
                            + "'); the jar is incomplete: build it with Maven or Gradle, which"
                            + " write it");
        }
        return version;
    }

    /**
     * Checks a native library's report against these classes.
     *
     * @param javaVersion the version of the Java classes
     * @param javaAbi the JNI contract number of the Java classes
     * @param nativeReport what the library's {@code nativeAbi()} returned ({@code
     *     "<version>/<abi>"}), possibly {@code null} or malformed
     * @param source where the library came from, for the message
     * @return {@code null} when both match, otherwise the error message, naming both versions
     */
    static String versionMismatch(
            String javaVersion, int javaAbi, String nativeReport, String source) {
        String nativeVersion = nativeReport;
        String nativeAbi = "?";
        if (nativeReport != null) {
            int slash = nativeReport.lastIndexOf('/');
            if (slash >= 0) {
                nativeVersion = nativeReport.substring(0, slash);
                nativeAbi = nativeReport.substring(slash + 1);
            }
        }
        if (javaVersion.equals(nativeVersion) && String.valueOf(javaAbi).equals(nativeAbi)) {
            return null;
        }
        return "vended-storage: the native library "
                + source
                + " is version "
                + nativeVersion
                + " (JNI ABI "
                + nativeAbi
                + ") but the Java classes are version "
                + javaVersion
                + " (JNI ABI "
                + javaAbi
                + "); the classes and the native library must come from the same release: use"
                + " the jar's own library (unset -D"
                + LIBRARY_PROPERTY
                + " and "
                + LIBRARY_ENV
                + " if set), or "
                + BUILD_HINT;
    }

    /**
     * The error message when no library for the running platform is available.
     *
     * @param osName the JVM's {@code os.name}
     * @param osArch the JVM's {@code os.arch}
     * @param platform the platform name detected from them, or {@code null} if unsupported
     * @param bundled the platforms the class path bundles (see {@link #bundledPlatforms})
     */
    static String missingLibraryMessage(
            String osName, String osArch, String platform, List<String> bundled) {
        return missingLibraryMessage(
                new NativePlatform(osName, osArch, NativePlatform.UNKNOWN), platform, bundled);
    }

    /**
     * The error message when no library for the running platform is available: the detected
     * platform, the bundled ones, and the ways out.
     *
     * @param detected the running platform
     * @param platform its platform name ({@link NativePlatform#directory()}), or {@code null} if
     *     unsupported (including Linux with musl)
     * @param bundled the platforms the class path bundles (see {@link #bundledPlatforms})
     */
    static String missingLibraryMessage(
            NativePlatform detected, String platform, List<String> bundled) {
        StringBuilder m = new StringBuilder("vended-storage: ");
        if (platform == null) {
            m.append("no native library for this platform (").append(detected.describe());
            if (NativePlatform.MUSL.equals(detected.libc())) {
                m.append("; the Linux libraries are built against glibc 2.17 and do not load on")
                        .append(" musl");
            }
            m.append("); platform names are ")
                    .append(OPERATING_SYSTEMS)
                    .append(" x ")
                    .append(ARCHITECTURES)
                    .append(", e.g. linux-x86_64");
        } else {
            m.append("this class path has no native library for the detected platform ")
                    .append(platform)
                    .append(" (")
                    .append(detected.describe())
                    .append("; resource ")
                    .append(resourceName(platform))
                    .append(')');
        }
        m.append("; ").append(carriedAndWaysOut(bundled));
        return m.toString();
    }

    /** {@code bundled platforms: ...; <the ways out>}, the end of every loading error. */
    private static String carriedAndWaysOut(List<String> bundled) {
        StringBuilder m = new StringBuilder("bundled platforms: ");
        if (bundled.isEmpty()) {
            m.append("none (the jar is incomplete)");
        } else {
            m.append(String.join(", ", bundled));
        }
        m.append("; use the vended-storage jar for your platform, or ")
                .append(BUILD_HINT)
                .append(" (the loader checks that it is of this release, ")
                .append(javaVersionOrUnknown())
                .append(" with JNI ABI ")
                .append(NATIVE_ABI)
                .append(", and rejects a mismatched one)");
        return m.toString();
    }

    private static String javaVersionOrUnknown() {
        try {
            return javaVersion();
        } catch (UnsatisfiedLinkError e) {
            return "version unknown";
        }
    }

    /**
     * The platforms whose library the class path bundles, found by probing every supported
     * platform name.
     *
     * @return platform names such as {@code linux-x86_64}, in {@link #OPERATING_SYSTEMS} x {@link
     *     #ARCHITECTURES} order
     */
    static List<String> bundledPlatforms() {
        List<String> found = new ArrayList<>();
        for (String os : OPERATING_SYSTEMS) {
            for (String arch : ARCHITECTURES) {
                String platform = os + "-" + arch;
                if (NativeLoader.class.getResource(resourceName(platform)) != null) {
                    found.add(platform);
                }
            }
        }
        return found;
    }

    /** The resource of a platform's library, e.g. {@code /native/linux-x86_64/libvended_storage_jni.so}. */
    static String resourceName(String platform) {
        return "/native/" + platform + "/" + libraryFileName(platform);
    }

    /** The library file name on a platform's operating system. */
    static String libraryFileName(String platform) {
        if (platform.startsWith("windows-")) {
            return LIBRARY_NAME + ".dll";
        }
        if (platform.startsWith("osx-")) {
            return "lib" + LIBRARY_NAME + ".dylib";
        }
        return "lib" + LIBRARY_NAME + ".so";
    }

    /**
     * The platform name for a JVM's {@code os.name} and {@code os.arch}, normalised as the {@code
     * os-maven-plugin} does, e.g. {@code linux-x86_64}, {@code osx-aarch_64}; {@code null} if the
     * platform is not supported.
     */
    static String platformDirectory(String osName, String osArch) {
        String os = osName.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "");
        String arch = osArch.toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "");
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
        String archPart;
        switch (arch) {
            case "x8664":
            case "amd64":
            case "ia32e":
            case "em64t":
            case "x64":
                archPart = "x86_64";
                break;
            case "aarch64":
            case "arm64":
                archPart = "aarch_64";
                break;
            default:
                return null;
        }
        return osPart + "-" + archPart;
    }
}
