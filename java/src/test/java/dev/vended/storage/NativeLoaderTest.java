package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

/** Platform detection of the native loader (no native library needed). */
class NativeLoaderTest {

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
