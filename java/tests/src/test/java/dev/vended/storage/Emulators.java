package dev.vended.storage;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProcess;
import dev.vended.storage.testkit.FakeGcsServer;

import org.junit.jupiter.api.Assumptions;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Starts the testkit's {@link AzuriteServer} and {@link FakeGcsServer} for the JUnit suite. A
 * missing emulator (see {@link EmulatorProcess#toolsDirectory()}) fails the test unless {@code
 * VENDED_STORAGE_SKIP_EMULATORS=1}, which skips it.
 */
final class Emulators {

    private Emulators() {}

    private static void requireInstalled(String relative) {
        Path path = EmulatorProcess.toolsDirectory().resolve(relative);
        if (Files.exists(path)) {
            return;
        }
        boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
        Assumptions.assumeFalse(
                skip, path + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
        throw new AssertionError(
                path
                        + " not found: run bin/install-emulators.sh (or set -D"
                        + EmulatorProcess.TOOLS_PROPERTY
                        + ", or VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
    }

    static AzuriteServer startAzurite() throws Exception {
        requireInstalled(AzuriteServer.TOOL);
        return AzuriteServer.start();
    }

    static FakeGcsServer startFakeGcs() throws Exception {
        requireInstalled(FakeGcsServer.TOOL);
        return FakeGcsServer.start();
    }
}
