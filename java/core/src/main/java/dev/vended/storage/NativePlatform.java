package dev.vended.storage;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The platform the JVM runs on, as {@link NativeLoader} needs it: the JVM's {@code os.name} and
 * {@code os.arch}, and on Linux the C library the process uses ({@code glibc} or {@code musl}),
 * since the bundled Linux libraries are built against glibc (2.17 or newer) and do not load on
 * musl (Alpine).
 *
 * @param osName the JVM's {@code os.name}, e.g. {@code Linux}
 * @param osArch the JVM's {@code os.arch}, e.g. {@code amd64}
 * @param libc {@value #GLIBC}, {@value #MUSL}, or {@value #UNKNOWN} (also for every non-Linux
 *     system, whose C library is the system's own)
 */
record NativePlatform(String osName, String osArch, String libc) {

    /** The GNU C library: what the bundled Linux libraries are built against. */
    static final String GLIBC = "glibc";

    /** The musl C library (Alpine Linux): no bundled library loads there. */
    static final String MUSL = "musl";

    /** No C library detected (not Linux, or nothing recognisable mapped). */
    static final String UNKNOWN = "unknown";

    /**
     * The running JVM's platform; the C library is read from {@code /proc/self/maps} on Linux.
     *
     * @return the detected platform, never {@code null}
     */
    static NativePlatform current() {
        String osName = System.getProperty("os.name", "");
        String osArch = System.getProperty("os.arch", "");
        String libc = UNKNOWN;
        if (osName.toLowerCase(Locale.ROOT).startsWith("linux")) {
            libc = libcFromMaps(Path.of("/proc/self/maps"));
        }
        return new NativePlatform(osName, osArch, libc);
    }

    /**
     * The C library named by a Linux process's memory map ({@code /proc/<pid>/maps} format): musl
     * maps {@code ld-musl-<arch>.so.1} (or {@code libc.musl-...}), glibc maps {@code libc.so.6}.
     *
     * @param maps the map file
     * @return {@value #MUSL}, {@value #GLIBC}, or {@value #UNKNOWN} if the file is unreadable or
     *     names neither
     */
    static String libcFromMaps(Path maps) {
        String text;
        try {
            text = Files.readString(maps, StandardCharsets.ISO_8859_1);
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
        if (text.contains("/ld-musl-") || text.contains("/libc.musl-")) {
            return MUSL;
        }
        if (text.contains("/libc.so.6") || text.contains("/libc-2.")) {
            return GLIBC;
        }
        return UNKNOWN;
    }

    /**
     * The platform name the jar's libraries are filed under, e.g. {@code linux-x86_64}; {@code
     * null} when no build for this platform can exist in a jar (unknown system or architecture, or
     * Linux with musl).
     */
    String directory() {
        String name = NativeLoader.platformDirectory(osName, osArch);
        if (name != null && name.startsWith("linux-") && MUSL.equals(libc)) {
            return null;
        }
        return name;
    }

    /** {@code os.name=..., os.arch=..., libc=...}, for messages. */
    String describe() {
        return "os.name=" + osName + ", os.arch=" + osArch + ", libc=" + libc;
    }
}
