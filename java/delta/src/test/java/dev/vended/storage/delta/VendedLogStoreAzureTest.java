package dev.vended.storage.delta;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.AzuriteServer;
import dev.vended.storage.testkit.EmulatorProcess;
import dev.vended.storage.testkit.EmulatorProxy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link VendedLogStore} on Azure ({@code abfss://} on Azurite, served by {@code
 * VendedFileSystem}, 4 s account SAS tokens): the contract and the two-writer race; Azure's
 * create-only PUT is {@code If-None-Match: *} on Put Blob. Every test ends with no request
 * rejected by Azurite (counted by a proxy in front of it). Fails when Azurite is not installed,
 * unless {@code VENDED_STORAGE_SKIP_EMULATORS=1}.
 */
class VendedLogStoreAzureTest extends LogStoreContract {

    private static final String CONTAINER = "delta";
    private static AzuriteServer azurite;
    private static EmulatorProxy proxy;

    @BeforeAll
    static void start() throws IOException {
        Path tool = EmulatorProcess.toolsDirectory().resolve(AzuriteServer.TOOL);
        if (!Files.exists(tool)) {
            boolean skip = "1".equals(System.getenv("VENDED_STORAGE_SKIP_EMULATORS"));
            Assumptions.assumeFalse(skip, tool + " not found and VENDED_STORAGE_SKIP_EMULATORS=1: skipped");
            throw new AssertionError(tool + " not found: run bin/install-emulators.sh (or set"
                    + " VENDED_STORAGE_SKIP_EMULATORS=1 to skip)");
        }
        azurite = AzuriteServer.start();
        azurite.createContainer(CONTAINER);
        proxy = new EmulatorProxy(azurite.url(), null);
    }

    @AfterAll
    static void stop() {
        if (proxy != null) {
            proxy.close();
        }
        if (azurite != null) {
            azurite.close();
        }
    }

    @AfterEach
    void noRequestRejected() {
        assertThat(proxy.rejections()).as("requests rejected by Azurite").isZero();
        assertThat(proxy.requests.get()).isPositive();
    }

    @Override
    org.apache.hadoop.fs.Path table(String name) {
        return new org.apache.hadoop.fs.Path(Tables.abfss(CONTAINER, name));
    }

    @Override
    Configuration conf(String name, int writer) {
        return Tables.azure(Tables.base(), proxy.url, name + "-w" + writer, CONTAINER, name, 4_000);
    }
}
