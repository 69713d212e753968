package dev.vended.storage.delta.kernel;

import dev.vended.storage.StorageOptionsProvider;

import io.delta.kernel.Snapshot;
import io.delta.kernel.TableManager;
import io.delta.kernel.defaults.engine.DefaultEngine;
import io.delta.kernel.engine.Engine;

import java.io.IOException;
import java.util.Map;

/** The example docs/delta.md shows (region kernel-open), run by {@code KernelCommitsTest}. */
final class KernelDocsExample {

    private KernelDocsExample() {}

    /** Opens the table's latest snapshot as the docs show; returns its version. */
    static long latestVersion(
            String table, Map<String, String> options, StorageOptionsProvider provider)
            throws IOException {
        // region:kernel-open
        // table: its location, e.g. s3://bucket/tables/t (what the catalog scopes keys to);
        // options: what the catalog returned with it; provider: asks the catalog again
        try (VendedKernelFileIO io = VendedKernelFileIO.open(table, options, provider)) {
            Engine engine = DefaultEngine.create(io); // Kernel's default engine on the store
            Snapshot latest = TableManager.loadSnapshot(table).build(engine);
            // then Kernel's scan (latest.getScanBuilder()) and commit APIs, with this engine
            return latest.getVersion();
        }
        // endregion
    }
}
