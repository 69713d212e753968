package dev.vended.storage.bench.spark;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.ToDoubleFunction;
import java.util.zip.CRC32;

import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.BlockingOutputStreamAsyncRequestBody;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/**
 * What checksums cost on 64 MiB streams (issue 32), in alternating rounds: each round reads (then
 * writes) with every client in turn, the order rotated per round, and each cell records MiB/s and
 * the client process's CPU seconds per GiB (the endpoint runs in its own process). Clients:
 * {@code on} ({@link ObjectStore#openInput} with {@link ReadPolicy#SEQUENTIAL}: one whole-object
 * GET, checked at its end; {@link ObjectStore#openOutput}: CRC64NVME on every part), {@code off}
 * (the same with storage option {@code checksums=false}), {@code sdk-sums} (AWS SDK v2 with its
 * default integrity, {@code WHEN_SUPPORTED}: CRC32 on uploads, validation of whole GETs) and
 * {@code sdk} ({@code WHEN_REQUIRED}). SDK reads: {@code S3Client.getObject} (Apache client, as
 * S3A); SDK writes: {@code S3AsyncClient.putObject} streamed from an OutputStream (Netty, its
 * multipart client: 8 MiB parts, as the streams benchmark measures it). All
 * read into, or write from, a reused 1 MiB array.
 *
 * <p>The table gives medians over the rounds, and the cost of checksums as the median of each
 * round's own ratio of {@code on} to {@code off}, so slow rounds (load on the machine) cancel.
 *
 * <pre>
 * --rounds 9 --object-mb 64 --read-mb 1024 --write-mb 512 --ops read,write
 * </pre>
 */
final class StreamCost {

    static final String[] CLIENTS = {"on", "off", "sdk-sums", "sdk"};
    private static final int CHUNK = 1 << 20;

    private final SparkBench b;

    StreamCost(SparkBench b) {
        this.b = b;
    }

    record Cell(String op, String client, int round, double mibps, double cpuSecPerGib, double load) {}

    String run() throws Exception {
        long objectSize = (long) (Double.parseDouble(b.arg("object-mb", "64")) * 1048576);
        int rounds = Integer.parseInt(b.arg("rounds", "9"));
        long readBudget = (long) (Double.parseDouble(b.arg("read-mb", "1024")) * 1048576);
        long writeBudget = (long) (Double.parseDouble(b.arg("write-mb", "512")) * 1048576);
        List<String> ops = Arrays.asList(b.arg("ops", "read,write").split(","));
        VendedCredentials key = b.server.issueCredentials(4 * 3600_000L, null);
        byte[] chunk = new byte[CHUNK];
        new SplittableRandom(32).nextBytes(chunk);
        Map<String, ObjectStore> stores = new HashMap<>();
        List<Cell> cells = new ArrayList<>();
        StaticCredentialsProvider creds = StaticCredentialsProvider.create(AwsSessionCredentials.create(
                key.accessKeyId(), key.secretAccessKey(), key.sessionToken()));
        try (S3Client sdk = sync(creds, false);
                S3Client sdkSums = sync(creds, true);
                S3AsyncClient sdkAsync = async(creds, false);
                S3AsyncClient sdkAsyncSums = async(creds, true)) {
            for (String c : new String[] {"on", "off"}) {
                Map<String, String> options = new HashMap<>(b.server.options(key));
                options.put("checksums", Boolean.toString(c.equals("on")));
                stores.put(c, ObjectStore.open("s3://vended/", options));
            }
            Clients clients = new Clients(stores, sdk, sdkSums, sdkAsync, sdkAsyncSums, chunk, objectSize);
            // Every client writes its own object once and reads it back (checked by CRC-32): the
            // objects the read rounds use, written the way each client writes.
            long want = expectedCrc(chunk, objectSize);
            for (String c : CLIENTS) {
                clients.write(c, "cost/" + c);
                CRC32 crc = new CRC32();
                long n = clients.read(c, "cost/" + c, new byte[CHUNK], crc);
                if (n != objectSize || crc.getValue() != want) {
                    throw new IOException(c + ": read back " + n + " bytes, CRC " + crc.getValue() + " not " + want);
                }
            }
            System.out.printf(Locale.ROOT, "stream cost: %d MiB objects, %d rounds, %d MiB read and %d MiB written"
                    + " per cell%n", objectSize >> 20, rounds, readBudget >> 20, writeBudget >> 20);
            for (int r = 0; r <= rounds; r++) {
                for (String op : ops) {
                    for (int i = 0; i < CLIENTS.length; i++) {
                        String c = CLIENTS[(i + r) % CLIENTS.length];
                        long budget = op.equals("read") ? readBudget : writeBudget;
                        // Round 0 warms every path up and is not counted.
                        Cell cell = measure(clients, op, c, r, r == 0 ? budget / 4 : budget, objectSize);
                        if (r > 0) {
                            cells.add(cell);
                            System.out.printf(Locale.ROOT, "  %-5s %-8s r%d %8.1f MiB/s  cpu %.3f s/GiB  load1 %.1f%n",
                                    op, c, r, cell.mibps, cell.cpuSecPerGib, cell.load);
                        }
                    }
                }
            }
        } finally {
            for (ObjectStore s : stores.values()) {
                s.close();
            }
        }
        String t = table(cells, ops);
        System.out.print(t);
        return t;
    }

    private Cell measure(Clients clients, String op, String client, int round, long budget, long objectSize)
            throws Exception {
        int n = (int) Math.max(2, budget / objectSize);
        byte[] buf = new byte[CHUNK];
        Counters.Mark m = b.counters.mark();
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            if (op.equals("read")) {
                bytes += clients.read(client, "cost/" + client, buf, null);
            } else {
                clients.write(client, "cost/put/" + client);
                bytes += objectSize;
            }
        }
        Counters.Window w = b.counters.since(m);
        return new Cell(op, client, round, bytes / 1048576.0 / (w.wallNanos() / 1e9),
                w.cpuNanos() / 1e9 / (bytes / (double) (1L << 30)), Counters.load());
    }

    private static long expectedCrc(byte[] chunk, long size) {
        CRC32 crc = new CRC32();
        for (long off = 0; off < size; off += chunk.length) {
            crc.update(chunk, 0, (int) Math.min(chunk.length, size - off));
        }
        return crc.getValue();
    }

    private S3Client sync(StaticCredentialsProvider creds, boolean sums) {
        return S3Client.builder().endpointOverride(URI.create(b.server.endpoint())).region(Region.US_EAST_1)
                .forcePathStyle(true).credentialsProvider(creds)
                .httpClientBuilder(ApacheHttpClient.builder().maxConnections(64))
                .requestChecksumCalculation(sums ? RequestChecksumCalculation.WHEN_SUPPORTED
                        : RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(sums ? ResponseChecksumValidation.WHEN_SUPPORTED
                        : ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    private S3AsyncClient async(StaticCredentialsProvider creds, boolean sums) {
        return S3AsyncClient.builder().endpointOverride(URI.create(b.server.endpoint())).region(Region.US_EAST_1)
                .forcePathStyle(true).credentialsProvider(creds)
                .httpClientBuilder(NettyNioAsyncHttpClient.builder().maxConcurrency(64)
                        .readTimeout(Duration.ofSeconds(60)).writeTimeout(Duration.ofSeconds(60)))
                .multipartEnabled(true)
                .requestChecksumCalculation(sums ? RequestChecksumCalculation.WHEN_SUPPORTED
                        : RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(sums ? ResponseChecksumValidation.WHEN_SUPPORTED
                        : ResponseChecksumValidation.WHEN_REQUIRED)
                .build();
    }

    /** The four clients' reads and writes. */
    private record Clients(Map<String, ObjectStore> stores, S3Client sdk, S3Client sdkSums, S3AsyncClient sdkAsync,
            S3AsyncClient sdkAsyncSums, byte[] chunk, long size) {

        long read(String client, String key, byte[] buf, CRC32 crc) throws IOException {
            if (client.startsWith("sdk")) {
                S3Client s3 = client.equals("sdk") ? sdk : sdkSums;
                try (ResponseInputStream<GetObjectResponse> in =
                        s3.getObject(GetObjectRequest.builder().bucket("vended").key(key).build())) {
                    return drain(in, buf, crc);
                }
            }
            ReadOptions o = ReadOptions.defaults().withReadPolicy(ReadPolicy.SEQUENTIAL);
            try (SeekableObjectInputStream in = stores.get(client).openInput(key, o)) {
                return drain(in, buf, crc);
            }
        }

        void write(String client, String key) throws Exception {
            if (client.startsWith("sdk")) {
                S3AsyncClient s3 = client.equals("sdk") ? sdkAsync : sdkAsyncSums;
                BlockingOutputStreamAsyncRequestBody body = AsyncRequestBody.forBlockingOutputStream(null);
                CompletableFuture<?> done =
                        s3.putObject(PutObjectRequest.builder().bucket("vended").key(key).build(), body);
                try (OutputStream out = body.outputStream()) {
                    writeChunks(out);
                }
                done.get(300, TimeUnit.SECONDS);
                return;
            }
            try (MultipartOutputStream out = stores.get(client).openOutput(key)) {
                writeChunks(out);
            }
        }

        private void writeChunks(OutputStream out) throws IOException {
            for (long off = 0; off < size; off += chunk.length) {
                out.write(chunk, 0, (int) Math.min(chunk.length, size - off));
            }
        }

        private static long drain(InputStream in, byte[] buf, CRC32 crc) throws IOException {
            long total = 0;
            int n;
            while ((n = in.read(buf, 0, buf.length)) >= 0) {
                if (crc != null) {
                    crc.update(buf, 0, n);
                }
                total += n;
            }
            return total;
        }
    }

    private static String table(List<Cell> cells, List<String> ops) {
        StringBuilder sb = new StringBuilder("\n## Checksums on 64 MiB streams (median of the rounds)\n\n"
                + "| op | client | MiB/s | CPU s/GiB | /sdk-sums MiB/s | /sdk-sums CPU |\n"
                + "|---|---|---:|---:|---:|---:|\n");
        for (String op : ops) {
            double refMibps = med(cells, op, "sdk-sums", Cell::mibps);
            double refCpu = med(cells, op, "sdk-sums", Cell::cpuSecPerGib);
            for (String c : CLIENTS) {
                double mibps = med(cells, op, c, Cell::mibps);
                double cpu = med(cells, op, c, Cell::cpuSecPerGib);
                sb.append(String.format(Locale.ROOT, "| %s | %s | %.0f | %.3f | %.2fx | %.2f |%n", op, c, mibps, cpu,
                        mibps / refMibps, cpu / refCpu));
            }
        }
        sb.append("\n| op | throughput cost of checksums (median of per-round on/off) | CPU per GiB added |"
                + " SDK's own cost |\n|---|---:|---:|---:|\n");
        for (String op : ops) {
            sb.append(String.format(Locale.ROOT, "| %s | %.1f %% | %+.1f %% | %.1f %% |%n", op,
                    100 * (1 - pairedRatio(cells, op, "on", "off", Cell::mibps)),
                    100 * (pairedRatio(cells, op, "on", "off", Cell::cpuSecPerGib) - 1),
                    100 * (1 - pairedRatio(cells, op, "sdk-sums", "sdk", Cell::mibps))));
        }
        return sb.toString();
    }

    /** The median over rounds of {@code f(a) / f(b)} within each round. */
    static double pairedRatio(List<Cell> cells, String op, String a, String b, ToDoubleFunction<Cell> f) {
        List<Double> ratios = new ArrayList<>();
        for (Cell x : cells) {
            if (x.op.equals(op) && x.client.equals(a)) {
                cells.stream().filter(y -> y.op.equals(op) && y.client.equals(b) && y.round == x.round).findFirst()
                        .ifPresent(y -> ratios.add(f.applyAsDouble(x) / f.applyAsDouble(y)));
            }
        }
        return median(ratios.stream().mapToDouble(Double::doubleValue).sorted().toArray());
    }

    private static double med(List<Cell> cells, String op, String client, ToDoubleFunction<Cell> f) {
        return median(cells.stream().filter(c -> c.op.equals(op) && c.client.equals(client)).mapToDouble(f)
                .sorted().toArray());
    }

    private static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
