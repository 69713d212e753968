package dev.vended.storage.delta;

import dev.vended.storage.hadoop.VendedFileSystem;

import org.apache.hadoop.conf.Configuration;

/** Hadoop configurations of Delta tables served by {@link VendedFileSystem} in the tests. */
final class Tables {

    private Tables() {}

    /** A configuration binding {@code s3a} and {@code abfss} to {@link VendedFileSystem}. */
    static Configuration base() {
        Configuration c = new Configuration(false);
        c.set("fs.s3a.impl", VendedFileSystem.class.getName());
        c.set("fs.abfss.impl", VendedFileSystem.class.getName());
        c.set("fs.gs.impl", VendedFileSystem.class.getName());
        c.setBoolean("fs.s3a.impl.disable.cache", true);
        c.setBoolean("fs.abfss.impl.disable.cache", true);
        c.setBoolean("fs.gs.impl.disable.cache", true);
        return c;
    }

    /**
     * Adds table {@code name} at {@code s3a://bucket/prefix/} on the local endpoint, its
     * credentials issued by {@link DeltaTestProvider} living {@code ttlMillis}.
     */
    static Configuration s3(
            Configuration c, String endpoint, String name, String bucket, String prefix, long ttlMillis) {
        String p = "vended.storage.table." + name + ".";
        c.set(p + "location", "s3a://" + bucket + "/" + prefix + "/");
        c.set(p + "provider.class", DeltaTestProvider.class.getName());
        c.set(p + "options.aws_endpoint", endpoint);
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        c.set(p + "lead-time", "1s");
        c.set("test.delta.endpoint", endpoint);
        c.setLong("test.delta." + name + ".ttl-ms", ttlMillis);
        c.set("test.delta." + name + ".scope", bucket + "/" + prefix + "/");
        return c;
    }

    /**
     * Adds table {@code name} at {@code abfss://container@devstoreaccount1.dfs.core.windows.net/
     * prefix/} on Azurite at {@code endpoint}, with SAS tokens living {@code ttlMillis}.
     */
    static Configuration azure(
            Configuration c, String endpoint, String name, String container, String prefix, long ttlMillis) {
        String p = "vended.storage.table." + name + ".";
        c.set(p + "location", abfss(container, prefix));
        c.set(p + "provider.class", AzuriteTestProvider.class.getName());
        c.set(p + "options.azure_storage_use_emulator", "true");
        c.set(p + "options.azure_storage_endpoint", endpoint);
        c.set(p + "options.azure_storage_account_name", "devstoreaccount1");
        c.set(p + "lead-time", "1s");
        c.setLong("test.delta." + name + ".ttl-ms", ttlMillis);
        return c;
    }

    /**
     * Adds table {@code name} at {@code gs://bucket/prefix/} on fake-gcs-server's proxy at {@code
     * url}, with tokens from {@link GcsTestProvider} living {@code ttlMillis}.
     */
    static Configuration gcs(
            Configuration c, String url, String name, String bucket, String prefix, long ttlMillis) {
        String p = "vended.storage.table." + name + ".";
        c.set(p + "location", "gs://" + bucket + "/" + prefix + "/");
        c.set(p + "provider.class", GcsTestProvider.class.getName());
        c.set(p + "options.google_base_url", url);
        c.set(p + "lead-time", "1s");
        c.setLong("test.delta." + name + ".ttl-ms", ttlMillis);
        return c;
    }

    /** {@code abfss://container@devstoreaccount1.dfs.core.windows.net/prefix/}. */
    static String abfss(String container, String prefix) {
        return "abfss://" + container + "@devstoreaccount1.dfs.core.windows.net/" + prefix + "/";
    }
}
