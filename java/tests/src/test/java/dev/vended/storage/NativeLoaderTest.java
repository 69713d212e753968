package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testing.NativeLoaderMain;
import dev.vended.storage.testkit.ChildJvm;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The native loader: platform detection, and (in child JVMs, since this JVM loads the test-hooks
 * library through {@value NativeLoader#LIBRARY_PROPERTY}) the two ways of loading the library.
 */
@Timeout(120)
class NativeLoaderTest {

    private static ChildJvm.Result runChild(List<String> jvmArgs) throws Exception {
        return ChildJvm.run(
                List.of(
                        ChildJvm.codeSource(ObjectStore.class),
                        ChildJvm.codeSource(NativeLoaderMain.class)),
                jvmArgs,
                NativeLoaderMain.class.getName(),
                List.of(),
                Duration.ofSeconds(60));
    }

    @Test
    void extractsAndLoadsTheBundledLibraryWithoutTheProperty() throws Exception {
        ChildJvm.Result r = runChild(List.of());
        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.output().contains("LOADED "), r::describe);
    }

    @Test
    void aMissingLibraryFileIsAnUnsatisfiedLinkErrorNamingThePath() throws Exception {
        Path missing = Path.of(System.getProperty("java.io.tmpdir"), "no-such-dir", "libnone.so");
        ChildJvm.Result r =
                runChild(List.of("-D" + NativeLoader.LIBRARY_PROPERTY + "=" + missing));
        assertEquals(1, r.exitCode(), r::describe);
        assertTrue(r.output().contains("FAILED java.lang.UnsatisfiedLinkError"), r::describe);
        assertTrue(r.output().contains(missing.toString()), r::describe);
    }

    @Test
    void mapsSupportedPlatforms() {
        assertEquals("linux-x86_64", NativeLoader.platformDirectory("Linux", "amd64"));
        assertEquals("linux-x86_64", NativeLoader.platformDirectory("Linux", "x86_64"));
        assertEquals("linux-aarch64", NativeLoader.platformDirectory("Linux", "aarch64"));
        assertEquals("darwin-aarch64", NativeLoader.platformDirectory("Mac OS X", "aarch64"));
        assertEquals("windows-x86_64", NativeLoader.platformDirectory("Windows 11", "amd64"));
    }

    @Test
    void rejectsUnsupportedPlatforms() {
        assertNull(NativeLoader.platformDirectory("SunOS", "sparcv9"));
        assertNull(NativeLoader.platformDirectory("Linux", "ppc64le"));
        assertNull(NativeLoader.platformDirectory("Linux", "x86"));
    }
}
