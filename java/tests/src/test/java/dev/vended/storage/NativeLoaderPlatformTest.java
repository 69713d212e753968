package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vended.storage.testing.NativeLoaderMain;
import dev.vended.storage.testkit.ChildJvm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Where the native loader takes the library from on each platform, through its seam ({@link
 * NativeLoader#locate} with a {@link NativePlatform} the test makes, never a faked OS): the shipped
 * platforms resolve to their bundled resource; an unsupported platform, musl, or a platform the
 * jar lacks is one {@link UnsatisfiedLinkError} naming the detected platform, the bundled ones and
 * both ways out (property and environment variable); the environment variable loads a library in
 * a child JVM.
 */
@Timeout(120)
class NativeLoaderPlatformTest {

    /** What the library jar bundles (bin/build-natives, platforms "shipped"). */
    private static final List<String> SHIPPED = List.of("linux-x86_64", "linux-aarch_64");

    private static UnsatisfiedLinkError refused(NativePlatform platform) {
        return assertThrows(
                UnsatisfiedLinkError.class,
                () -> NativeLoader.locate(platform, null, null, SHIPPED));
    }

    /** Every loading error ends with what the jar carries and both ways out. */
    private static void assertCarriedAndWaysOut(String m) {
        assertTrue(m.contains("bundled platforms: linux-x86_64, linux-aarch_64;"), m);
        assertTrue(m.contains("-D" + NativeLoader.LIBRARY_PROPERTY + "=/absolute/path"), m);
        assertTrue(m.contains("environment variable " + NativeLoader.LIBRARY_ENV + "="), m);
        assertTrue(m.contains("cargo build --release -p vended-storage-jni"), m);
        assertTrue(m.contains("docs/platforms.md"), m);
        assertTrue(
                m.contains(
                        "it is of this release, "
                                + NativeLoader.javaVersion()
                                + " with JNI ABI "
                                + NativeLoader.NATIVE_ABI
                                + ", and rejects a mismatched one"),
                m);
    }

    @Test
    void theShippedGlibcPlatformsResolveToTheirBundledLibrary() {
        for (String arch : List.of("amd64", "aarch64")) {
            for (String libc : List.of(NativePlatform.GLIBC, NativePlatform.UNKNOWN)) {
                NativeLoader.Source s =
                        NativeLoader.locate(
                                new NativePlatform("Linux", arch, libc), null, "", SHIPPED);
                String platform = arch.equals("amd64") ? "linux-x86_64" : "linux-aarch_64";
                assertEquals(platform, s.platform());
                assertEquals("/native/" + platform + "/libvended_storage_jni.so", s.resource());
                assertNull(s.file());
            }
        }
    }

    @Test
    void muslIsRefusedNamingTheDetectedLibcAndTheWaysOut() {
        String m = refused(new NativePlatform("Linux", "amd64", NativePlatform.MUSL)).getMessage();
        assertTrue(m.startsWith("vended-storage: no native library for this platform ("), m);
        assertTrue(m.contains("os.name=Linux, os.arch=amd64, libc=musl"), m);
        assertTrue(m.contains("built against glibc 2.17 and do not load on musl"), m);
        assertCarriedAndWaysOut(m);
    }

    @Test
    void anUnsupportedArchitectureIsRefusedNamingIt() {
        String m =
                refused(new NativePlatform("Linux", "riscv64", NativePlatform.GLIBC)).getMessage();
        assertTrue(m.contains("os.arch=riscv64, libc=glibc"), m);
        assertTrue(m.contains("platform names are [linux, osx, windows] x [x86_64, aarch_64]"), m);
        assertCarriedAndWaysOut(m);

        String bsd =
                refused(new NativePlatform("FreeBSD", "amd64", NativePlatform.UNKNOWN))
                        .getMessage();
        assertTrue(bsd.contains("os.name=FreeBSD, os.arch=amd64"), bsd);
        assertCarriedAndWaysOut(bsd);
    }

    @Test
    void aSupportedPlatformTheJarLacksIsNamedWithItsResource() {
        String mac =
                refused(new NativePlatform("Mac OS X", "aarch64", NativePlatform.UNKNOWN))
                        .getMessage();
        assertTrue(mac.contains("no native library for the detected platform osx-aarch_64"), mac);
        assertTrue(mac.contains("/native/osx-aarch_64/libvended_storage_jni.dylib"), mac);
        assertCarriedAndWaysOut(mac);

        String windows =
                refused(new NativePlatform("Windows 11", "amd64", NativePlatform.UNKNOWN))
                        .getMessage();
        assertTrue(windows.contains("detected platform windows-x86_64"), windows);
        assertCarriedAndWaysOut(windows);
    }

    @Test
    void aJarWithoutLibrariesSaysItIsIncomplete() {
        UnsatisfiedLinkError e =
                assertThrows(
                        UnsatisfiedLinkError.class,
                        () ->
                                NativeLoader.locate(
                                        new NativePlatform("Linux", "amd64", "glibc"),
                                        null,
                                        null,
                                        List.of()));
        assertTrue(e.getMessage().contains("bundled platforms: none (the jar is incomplete)"));
    }

    @Test
    void theEnvironmentVariableNamesALibraryAndThePropertyWins(@TempDir Path dir)
            throws Exception {
        Path env = Files.createFile(dir.resolve("libfrom-env.so"));
        Path prop = Files.createFile(dir.resolve("libfrom-property.so"));
        NativePlatform musl = new NativePlatform("Linux", "amd64", NativePlatform.MUSL);

        // On a platform without a bundled library, the variable is the way out.
        NativeLoader.Source s = NativeLoader.locate(musl, null, env.toString(), SHIPPED);
        assertEquals(env, s.file());
        assertTrue(
                s.description().contains("environment variable " + NativeLoader.LIBRARY_ENV),
                s.description());
        assertNull(s.resource());

        NativeLoader.Source both =
                NativeLoader.locate(musl, prop.toString(), env.toString(), SHIPPED);
        assertEquals(prop, both.file());
        assertTrue(both.description().contains("-D" + NativeLoader.LIBRARY_PROPERTY));
    }

    @Test
    void aRelativeOrMissingFileInTheVariableIsRefusedNamingTheVariable(@TempDir Path dir) {
        NativePlatform linux = new NativePlatform("Linux", "amd64", NativePlatform.GLIBC);
        String relative =
                assertThrows(
                                UnsatisfiedLinkError.class,
                                () -> NativeLoader.locate(linux, null, "lib/x.so", SHIPPED))
                        .getMessage();
        assertEquals(
                "environment variable "
                        + NativeLoader.LIBRARY_ENV
                        + " must be an absolute path, got: lib/x.so",
                relative);
        String missing = dir.resolve("nothing.so").toString();
        String absent =
                assertThrows(
                                UnsatisfiedLinkError.class,
                                () -> NativeLoader.locate(linux, null, missing, SHIPPED))
                        .getMessage();
        assertTrue(absent.contains(NativeLoader.LIBRARY_ENV + " names no such file: " + missing));
    }

    @Test
    void detectsTheCLibraryFromTheProcessMap(@TempDir Path dir) throws Exception {
        Path musl = dir.resolve("musl-maps");
        Files.writeString(
                musl,
                "7f0000000000-7f0000001000 r-xp 00000000 08:01 12 /lib/ld-musl-x86_64.so.1\n",
                StandardCharsets.ISO_8859_1);
        assertEquals(NativePlatform.MUSL, NativePlatform.libcFromMaps(musl));

        Path glibc = dir.resolve("glibc-maps");
        Files.writeString(
                glibc,
                "7f0000000000-7f0000001000 r-xp 00000000 08:01 12"
                        + " /usr/lib/x86_64-linux-gnu/libc.so.6\n",
                StandardCharsets.ISO_8859_1);
        assertEquals(NativePlatform.GLIBC, NativePlatform.libcFromMaps(glibc));

        Path neither = Files.writeString(dir.resolve("other"), "nothing mapped\n");
        assertEquals(NativePlatform.UNKNOWN, NativePlatform.libcFromMaps(neither));
        assertEquals(NativePlatform.UNKNOWN, NativePlatform.libcFromMaps(dir.resolve("absent")));
    }

    @Test
    void thisLinuxJvmIsDetectedWithGlibc() {
        assumeTrue(System.getProperty("os.name").startsWith("Linux"), "Linux only");
        NativePlatform here = NativePlatform.current();
        assertEquals(NativePlatform.GLIBC, here.libc());
        assertEquals(
                NativeLoader.platformDirectory(
                        System.getProperty("os.name"), System.getProperty("os.arch")),
                here.directory());
    }

    @Test
    void theJarUnderTestBundlesEveryShippedPlatform() {
        List<String> bundled = NativeLoader.bundledPlatforms();
        assertTrue(bundled.containsAll(SHIPPED), () -> "bundled: " + bundled);
    }

    @Test
    void aBundledLibraryThatDoesNotLoadIsTheOneErrorWithTheSystemsReason(@TempDir Path dir)
            throws Exception {
        String host =
                NativeLoader.platformDirectory(
                        System.getProperty("os.name"), System.getProperty("os.arch"));
        assumeTrue("linux-x86_64".equals(host), "the shadowing file is the linux-x86_64 one");
        // A class path directory before the core classes shadows the bundled library with a file
        // that is no library, as a C library older than 2.17 would refuse the real one.
        Path shadow = dir.resolve("native/linux-x86_64/libvended_storage_jni.so");
        Files.createDirectories(shadow.getParent());
        Files.writeString(shadow, "not a shared object\n");
        ChildJvm.Result r =
                ChildJvm.run(
                        List.of(
                                dir,
                                ChildJvm.codeSource(ObjectStore.class),
                                ChildJvm.codeSource(NativeLoaderMain.class)),
                        List.of(),
                        NativeLoaderMain.class.getName(),
                        List.of(),
                        Duration.ofSeconds(60));
        assertEquals(1, r.exitCode(), r::describe);
        String m = r.output();
        assertTrue(
                m.contains(
                        "FAILED java.lang.UnsatisfiedLinkError: vended-storage: the bundled native"
                                + " library /native/linux-x86_64/libvended_storage_jni.so for the"
                                + " detected platform linux-x86_64 (os.name=Linux, os.arch=amd64,"
                                + " libc=glibc) does not load here ("),
                r::describe);
        assertTrue(m.contains("the jar's Linux libraries need glibc 2.17 or newer"), r::describe);
        assertCarriedAndWaysOut(m.substring(m.indexOf("FAILED")));
    }

    @Test
    void aChildJvmLoadsTheLibraryTheEnvironmentVariableNames() throws Exception {
        String library = System.getProperty(NativeLoader.LIBRARY_PROPERTY);
        assumeTrue(library != null && !library.isBlank(), "the suite names its library");
        String loaded = runChild(library);
        assertTrue(loaded.contains("LOADED " + NativeLoader.javaVersion()), loaded);

        String relative = runChild("relative/libvended_storage_jni.so");
        assertTrue(
                relative.contains(
                        "FAILED java.lang.UnsatisfiedLinkError: environment variable "
                                + NativeLoader.LIBRARY_ENV
                                + " must be an absolute path"),
                relative);
    }

    /** Runs NativeLoaderMain with the variable set and the property unset; returns its output. */
    private static String runChild(String envValue) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx128m");
        command.add("-cp");
        command.add(
                ChildJvm.codeSource(ObjectStore.class)
                        + File.pathSeparator
                        + ChildJvm.codeSource(NativeLoaderMain.class));
        command.add(NativeLoaderMain.class.getName());
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put(NativeLoader.LIBRARY_ENV, envValue);
        Process p = pb.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "child JVM did not exit");
        return new String(out, StandardCharsets.UTF_8);
    }
}
