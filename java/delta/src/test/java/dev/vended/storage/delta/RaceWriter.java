package dev.vended.storage.delta;

import io.delta.storage.LogStore;

import java.nio.file.FileAlreadyExistsException;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;

/**
 * One writer of the two-JVM race ({@link TwoDriverRaceTest}): commits versions {@code 0..n-1} of
 * one Delta log through a log store, waiting at a cross-JVM barrier before each version (in
 * {@link RacingFileSystem#create} for log stores that check existence first, before {@code write}
 * for {@link VendedLogStore}), and prints {@code RESULT <v> WON|LOST|ERROR <message>} per version.
 *
 * <p>Arguments: log store class, {@code create-only|s3a-create}, endpoint, bucket, prefix, table
 * name, versions, barrier port, writer id.
 */
public final class RaceWriter {

    private RaceWriter() {}

    /**
     * Runs the writer.
     *
     * @param args see the class description
     * @throws Exception on a setup failure (exit code 1)
     */
    public static void main(String[] args) throws Exception {
        String logStoreClass = args[0];
        boolean s3aCreate = args[1].equals("s3a-create");
        String endpoint = args[2];
        String bucket = args[3];
        String prefix = args[4];
        String table = args[5];
        int versions = Integer.parseInt(args[6]);
        int port = Integer.parseInt(args[7]);
        String writer = args[8];

        Configuration c = Tables.s3(Tables.base(), endpoint, table, bucket, prefix, 4_000);
        c.set("fs.s3a.impl", RacingFileSystem.class.getName());
        c.setBoolean("test.delta.s3a-create", s3aCreate);
        LogStore store =
                (LogStore) Class.forName(logStoreClass).getConstructor(Configuration.class).newInstance(c);
        boolean barrierInCreate = !(store instanceof VendedLogStore);
        Path log = new Path("s3a://" + bucket + "/" + prefix + "/_delta_log");
        try (Barrier barrier = new Barrier(port)) {
            if (barrierInCreate) {
                Barrier.current = barrier;
            }
            for (int v = 0; v < versions; v++) {
                Path p = new Path(log, String.format("%020d.json", v));
                String outcome;
                try {
                    if (!barrierInCreate) {
                        barrier.await(v);
                    }
                    store.write(p, List.of("writer " + writer + " version " + v).iterator(), false, c);
                    outcome = "WON";
                } catch (FileAlreadyExistsException e) {
                    outcome = "LOST";
                } catch (Exception e) {
                    outcome = "ERROR " + e;
                }
                System.out.println("RESULT " + v + " " + outcome);
            }
        }
        System.out.flush();
        System.exit(0);
    }
}
