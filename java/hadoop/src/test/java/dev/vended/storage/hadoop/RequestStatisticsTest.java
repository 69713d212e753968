package dev.vended.storage.hadoop;

import static org.assertj.core.api.Assertions.assertThat;

import dev.vended.storage.testkit.LocalS3Server;
import dev.vended.storage.testkit.RequestRecord;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.statistics.IOStatisticsSupport;
import org.apache.hadoop.fs.statistics.StoreStatisticNames;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The FileSystem's IOStatistics count its tables' HTTP requests and credential refreshes as the
 * native store made them: the counts are checked against the endpoint's own request log and the
 * provider's own call count.
 */
@Timeout(120)
class RequestStatisticsTest {

    private static final String BUCKET = "reqstats";
    private static LocalS3Server server;

    @BeforeAll
    static void start() throws IOException {
        server = LocalS3Server.start(BUCKET);
        TestTableProvider.server = server;
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    private static List<RequestRecord> requestsUnder(String prefix) throws IOException {
        return server.requests().stream()
                .filter(r -> r.key() != null && r.key().startsWith(prefix))
                .toList();
    }

    private static Map<String, Long> counters(FileSystem fs) {
        return IOStatisticsSupport.retrieveIOStatistics(fs).counters();
    }

    private static long delta(Map<String, Long> after, Map<String, Long> before, String name) {
        return after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
    }

    @Test
    void readsAndARefreshAreCountedExactlyPerTable() throws Exception {
        Configuration c = VendedFileSystemTest.conf(server);
        VendedFileSystemTest.table(c, server, "countone", "s3a://" + BUCKET + "/countone/", null);
        Path p = new Path("s3a://" + BUCKET + "/countone/f.bin");
        try (FileSystem fs = FileSystem.newInstance(URI.create("s3a://" + BUCKET + "/"), c)) {
            try (FSDataOutputStream out = fs.create(p, true)) {
                out.write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
            }
            Map<String, Long> before = counters(fs);
            int logged = requestsUnder("countone/").size();
            int calls = TestTableProvider.calls("countone");
            byte[] buf = new byte[8];
            int reads = 5;
            for (int i = 0; i < reads; i++) {
                try (FSDataInputStream in = fs.open(p)) {
                    in.readFully(0, buf);
                }
            }
            // The endpoint forgets the current key: the next request is rejected (403), the
            // store fetches a new credential (one provider call) and retries it.
            List<String> keys = TestTableProvider.keys("countone");
            server.revoke(keys.get(keys.size() - 1));
            try (FSDataInputStream in = fs.open(p)) {
                in.readFully(0, buf);
            }
            assertThat(buf[7]).isEqualTo((byte) 8);
            Map<String, Long> after = counters(fs);

            long requests = delta(after, before, StoreStatisticNames.STORE_IO_REQUEST);
            // every attempt the endpoint logged for the table, no more, no less
            assertThat(requests).isEqualTo(requestsUnder("countone/").size() - logged);
            // each open is one HEAD and each readFully one GET; the last open's HEAD was
            // rejected (403, no body), probed with one GET whose code told a revoked key from
            // a denied path (C29), and sent again with the new credential
            assertThat(delta(after, before, StoreStatisticNames.ACTION_HTTP_HEAD_REQUEST))
                    .isEqualTo(reads + 2L);
            assertThat(delta(after, before, StoreStatisticNames.ACTION_HTTP_GET_REQUEST))
                    .isEqualTo(reads + 2L);
            assertThat(requests).isEqualTo(2L * reads + 4);
            assertThat(delta(after, before, StoreStatisticNames.ACTION_HTTP_PUT_REQUEST)).isZero();
            assertThat(delta(after, before, StoreStatistics.CREDENTIAL_REFRESH))
                    .isEqualTo(TestTableProvider.calls("countone") - calls)
                    .isEqualTo(1);
            // a 403 is not retried by the HTTP client, nor throttling
            assertThat(delta(after, before, StoreStatisticNames.STORE_IO_RETRY)).isZero();
            assertThat(delta(after, before, StoreStatisticNames.STORE_IO_THROTTLED)).isZero();
            // the one table's own counters are the sums
            assertThat(after)
                    .containsEntry(
                            "table.countone." + StoreStatisticNames.STORE_IO_REQUEST,
                            after.get(StoreStatisticNames.STORE_IO_REQUEST))
                    .containsEntry(
                            "table.countone." + StoreStatistics.CREDENTIAL_REFRESH,
                            after.get(StoreStatistics.CREDENTIAL_REFRESH));
        }
    }
}
