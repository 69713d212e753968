package dev.vended.storage.hadoop.contract;

import dev.vended.storage.hadoop.TestTableProvider;
import dev.vended.storage.hadoop.VendedFileSystem;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/**
 * The contract of {@link VendedFileSystem} ({@code contract/vended.xml}) on {@code
 * vended://contract/}: one table covering the bucket of a local endpoint started once per JVM,
 * with one-hour credentials from {@link TestTableProvider}.
 */
public class VendedContract extends AbstractFSContract {

    private static final String BUCKET = "contract";
    private static LocalS3Server server;
    private FileSystem fs;

    /** @param conf the test's configuration */
    public VendedContract(Configuration conf) {
        super(conf);
        addConfResource("contract/vended.xml");
    }

    private static synchronized LocalS3Server server() {
        if (server == null) {
            try {
                server = LocalS3Server.start(BUCKET);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            // Stops with the JVM: the endpoint exits when its stdin closes.
            Runtime.getRuntime().addShutdownHook(new Thread(server::close));
        }
        return server;
    }

    @Override
    public void init() throws IOException {
        super.init();
        LocalS3Server s = server();
        TestTableProvider.server = s;
        Configuration c = getConf();
        String p = "vended.storage.table.contract.";
        c.set(p + "location", "vended://" + BUCKET + "/");
        c.set(p + "provider.class", TestTableProvider.class.getName());
        c.set(p + "options.aws_endpoint", s.endpoint());
        c.set(p + "options.aws_region", "us-east-1");
        c.set(p + "options.aws_allow_http", "true");
        fs = FileSystem.get(URI.create("vended://" + BUCKET + "/"), c);
    }

    @Override
    public FileSystem getTestFileSystem() {
        return fs;
    }

    @Override
    public String getScheme() {
        return VendedFileSystem.SCHEME;
    }

    @Override
    public Path getTestPath() {
        return new Path("/test");
    }
}
