package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.vended.storage.testing.NativeLoaderMain;
import dev.vended.storage.testkit.ChildJvm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The native loader: platform names, the error when the platform's library is missing, and the
 * version check between the classes and the library. Loading itself runs in child JVMs (this JVM
 * loads the test-hooks library through {@value NativeLoader#LIBRARY_PROPERTY}), with the core
 * classes and their bundled library on the class path.
 */
@Timeout(120)
class NativeLoaderTest {

    /** The host platform, which the core classes under test bundle. */
    private static final String HOST =
            NativeLoader.platformDirectory(
                    System.getProperty("os.name"), System.getProperty("os.arch"));

    private static ChildJvm.Result runChild(List<Path> classPathPrefix, List<String> jvmArgs)
            throws Exception {
        List<Path> classPath = new ArrayList<>(classPathPrefix);
        classPath.add(ChildJvm.codeSource(ObjectStore.class));
        classPath.add(ChildJvm.codeSource(NativeLoaderMain.class));
        return ChildJvm.run(
                classPath,
                jvmArgs,
                NativeLoaderMain.class.getName(),
                List.of(),
                Duration.ofSeconds(60));
    }

    private static ChildJvm.Result runChild(List<String> jvmArgs) throws Exception {
        return runChild(List.of(), jvmArgs);
    }

    /** A class path directory whose version resource shadows the core classes' one. */
    private static Path versionOverride(Path dir, String content) throws Exception {
        Path file = dir.resolve("dev/vended/storage/" + NativeLoader.VERSION_RESOURCE);
        Files.createDirectories(file.getParent());
        Files.writeString(file, content, StandardCharsets.UTF_8);
        return dir;
    }

    /** A failed child: exit 1 from NativeLoaderMain's catch, i.e. an error and never a crash. */
    private static void assertLinkFailure(ChildJvm.Result r) {
        assertEquals(1, r.exitCode(), r::describe);
        assertTrue(r.output().contains("FAILED java.lang.UnsatisfiedLinkError"), r::describe);
        assertFalse(r.output().contains("LOADED"), r::describe);
    }

    @Test
    void extractsAndLoadsTheBundledLibraryWithoutTheProperty() throws Exception {
        ChildJvm.Result r = runChild(List.of());
        assertEquals(0, r.exitCode(), r::describe);
        // The check passed: the bundled library is of the classes' version.
        assertTrue(r.output().contains("LOADED " + NativeLoader.javaVersion()), r::describe);
    }

    @Test
    void aMissingLibraryFileIsAnUnsatisfiedLinkErrorNamingThePath() throws Exception {
        Path missing = Path.of(System.getProperty("java.io.tmpdir"), "no-such-dir", "libnone.so");
        ChildJvm.Result r =
                runChild(List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + missing));
        assertLinkFailure(r);
        assertTrue(r.output().contains(missing.toString()), r::describe);
    }

    @Test
    void theClassesAndTheTestLibraryAreOfOneRelease() {
        // This JVM loaded the test-hooks library through the property: the check let it through.
        NativeLoader.load();
        assertEquals(NativeLoader.javaVersion(), ObjectStore.nativeVersion());
        assertTrue(NativeLoader.javaVersion().matches("\\d+\\.\\d+\\.\\d+.*"));
    }

    @Test
    void aLibraryOfAnotherReleaseIsRefusedNamingBothVersions(@TempDir Path dir) throws Exception {
        // Classes claiming 9.9.9 against the bundled library of this release.
        String nativeVersion = NativeLoader.javaVersion();
        ChildJvm.Result r =
                runChild(List.of(versionOverride(dir, "version=9.9.9\n")), List.of());
        assertLinkFailure(r);
        assertTrue(
                r.output()
                        .contains(
                                "is version "
                                        + nativeVersion
                                        + " (JNI ABI "
                                        + NativeLoader.NATIVE_ABI
                                        + ") but the Java classes are version 9.9.9"),
                r::describe);
        assertTrue(r.output().contains("-D" + NativeLoader.LIBRARY_PROPERTY), r::describe);
    }

    @Test
    void anUnfilledVersionResourceIsAnIncompleteJar(@TempDir Path dir) throws Exception {
        ChildJvm.Result r =
                runChild(
                        List.of(versionOverride(dir, "version=${project.version}\n")),
                        List.of());
        assertLinkFailure(r);
        assertTrue(r.output().contains("the jar is incomplete"), r::describe);
    }

    @Test
    void versionMismatchComparesVersionAndAbi() {
        assertNull(NativeLoader.versionMismatch("0.1.0", 1, "0.1.0/1", "lib"));

        String abi = NativeLoader.versionMismatch("0.1.0", 2, "0.1.0/1", "lib");
        assertTrue(abi != null && abi.contains("(JNI ABI 1) but") && abi.contains("(JNI ABI 2)"));

        String version = NativeLoader.versionMismatch("0.2.0", 1, "0.1.0/1", "/x/lib.so");
        assertTrue(
                version != null
                        && version.contains("/x/lib.so is version 0.1.0")
                        && version.contains("classes are version 0.2.0"),
                version);

        // A prefix or a malformed report is no match either.
        assertTrue(NativeLoader.versionMismatch("0.1.0", 1, "0.1.0-rc1/1", "lib") != null);
        assertTrue(NativeLoader.versionMismatch("0.1.0", 1, "0.1.0", "lib") != null);
        assertTrue(NativeLoader.versionMismatch("0.1.0", 1, null, "lib") != null);
    }

    @Test
    void anUnsupportedPlatformNamesItTheBundledOnesAndTheWayOut() throws Exception {
        assumeTrue(HOST != null, "host platform not supported");
        ChildJvm.Result r = runChild(List.of("-Dos.arch=ppc64le"));
        assertLinkFailure(r);
        assertTrue(r.output().contains("os.arch=ppc64le"), r::describe);
        assertTrue(r.output().contains("bundled platforms: " + HOST), r::describe);
        assertTrue(r.output().contains("cargo build --release -p vended-storage-jni"), r::describe);
        assertTrue(r.output().contains("-D" + NativeLoader.LIBRARY_PROPERTY + "="), r::describe);
    }

    @Test
    void aSupportedPlatformTheJarLacksIsNamedWithItsResource() throws Exception {
        assumeTrue("linux-x86_64".equals(HOST), "the jar under test bundles the Linux platforms");
        ChildJvm.Result r = runChild(List.of("-Dos.name=Mac OS X", "-Dos.arch=aarch64"));
        assertLinkFailure(r);
        assertTrue(r.output().contains("detected platform osx-aarch_64"), r::describe);
        assertTrue(
                r.output().contains("/native/osx-aarch_64/libvended_storage_jni.dylib"),
                r::describe);
        assertTrue(
                r.output().contains("bundled platforms: linux-x86_64, linux-aarch_64;"),
                r::describe);
    }

    @Test
    void theClassPathBundlesEveryShippedPlatform() {
        assertEquals(List.of("linux-x86_64", "linux-aarch_64"), NativeLoader.bundledPlatforms());
    }

    @Test
    void aMessageSaysWhenNothingIsBundled() {
        String m = NativeLoader.missingLibraryMessage("Linux", "amd64", "linux-x86_64", List.of());
        assertTrue(m.contains("bundled platforms: none (the jar is incomplete)"), m);
    }

    @Test
    void mapsSupportedPlatformsAsOsMavenPluginDoes() {
        assertEquals("linux-x86_64", NativeLoader.platformDirectory("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platformDirectory("Linux", "x86_64"));
        assertEquals("linux-aarch_64", NativeLoader.platformDirectory("Linux", "aarch64"));
        assertEquals("osx-aarch_64", NativeLoader.platformDirectory("Mac OS X", "aarch64"));
        assertEquals("osx-x86_64", NativeLoader.platformDirectory("Mac OS X", "x86_64"));
        assertEquals("windows-x86_64", NativeLoader.platformDirectory("Windows 11", "amd64"));
        assertEquals("windows-aarch_64", NativeLoader.platformDirectory("Windows 11", "arm64"));
    }

    @Test
    void namesTheLibraryFilePerOperatingSystem() {
        assertEquals(
                "/native/linux-x86_64/libvended_storage_jni.so",
                NativeLoader.resourceName("linux-x86_64"));
        assertEquals(
                "/native/osx-aarch_64/libvended_storage_jni.dylib",
                NativeLoader.resourceName("osx-aarch_64"));
        assertEquals(
                "/native/windows-x86_64/vended_storage_jni.dll",
                NativeLoader.resourceName("windows-x86_64"));
    }

    @Test
    void rejectsUnsupportedPlatforms() {
        assertNull(NativeLoader.platformDirectory("SunOS", "sparcv9"));
        assertNull(NativeLoader.platformDirectory("Linux", "ppc64le"));
        assertNull(NativeLoader.platformDirectory("Linux", "x86"));
        assertNull(NativeLoader.platformDirectory("FreeBSD", "amd64"));
    }
}
