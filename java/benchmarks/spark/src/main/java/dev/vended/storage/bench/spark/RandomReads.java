package dev.vended.storage.bench.spark;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.testkit.VendedCredentials;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import software.amazon.awssdk.auth.credentials.AwsSessionCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache.ApacheHttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;

/**
 * Random reads of one object (1 GiB, or {@code --scale-mb} if smaller) at 64 KiB, 1 MiB and 8 MiB,
 * 1 and 4 threads: {@code getRange} ({@link ObjectStore#getRange}, a new array per read), {@code
 * into} ({@code ObjectStore.getRange(path, position, buf, off, len)} into a reused array), {@code
 * stream} ({@link ObjectStore#openInput} with {@link ReadPolicy#RANDOM} and a known length, one
 * stream per thread, {@code readFully(position, ...)} into a reused array) and {@code sdk} (the
 * AWS SDK v2 {@code S3Client}, its Apache client as S3A uses, a ranged GET per read into a reused
 * array). The same offsets (seeded) for every client; clients alternate within each round, after
 * a warm-up of every client (64 KiB and 1 MiB reads, not measured).
 */
final class RandomReads {

    static final String[] CLIENTS = {"getRange", "into", "stream", "sdk"};
    static final int[] SIZES = {64 << 10, 1 << 20, 8 << 20};
    static final String KEY = "random/object";

    private final SparkBench b;

    RandomReads(SparkBench b) {
        this.b = b;
    }

    record Cell(int size, int threads, String client, int round, double mibps, double cpuSecPerGib,
            double getsPerRead, double fetchedPerRead, double load, double switchesPerGib) {}

    String run() throws Exception {
        long objectSize = Math.min(1L << 30, (long) (Double.parseDouble(b.arg("scale-mb", "1024")) * 1048576));
        int rounds = Integer.parseInt(b.arg("rounds", "3"));
        long budget = (long) (Double.parseDouble(b.arg("budget-mb", "256")) * 1048576);
        VendedCredentials key = b.server.issueCredentials(4 * 3600_000L, null);
        Map<String, String> options = b.server.options(key);
        List<Cell> cells = new ArrayList<>();
        String[] clients = b.arg("clients", String.join(",", CLIENTS)).split(",");
        try (ObjectStore store = ObjectStore.open("s3://vended/", options);
                S3Client s3 = S3Client.builder()
                        .endpointOverride(URI.create(b.server.endpoint()))
                        .region(Region.US_EAST_1)
                        .forcePathStyle(true)
                        .credentialsProvider(StaticCredentialsProvider.create(AwsSessionCredentials.create(
                                key.accessKeyId(), key.secretAccessKey(), key.sessionToken())))
                        .httpClientBuilder(ApacheHttpClient.builder().maxConnections(64))
                        .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                        .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                        .build()) {
            byte[] chunk = new byte[1 << 20];
            new SplittableRandom(7).nextBytes(chunk);
            try (MultipartOutputStream out = store.openOutput(KEY)) {
                for (long off = 0; off < objectSize; off += chunk.length) {
                    out.write(chunk, 0, (int) Math.min(chunk.length, objectSize - off));
                }
            }
            String eTag = store.head(KEY).eTag();
            System.out.printf(Locale.ROOT, "random reads: object %d MiB, %d MiB per measurement, %d rounds%n",
                    objectSize >> 20, budget >> 20, rounds);
            ExecutorService pool = Executors.newFixedThreadPool(4);
            try {
                // Warm-up, not measured: every client compiles its request path first.
                for (String client : clients) {
                    for (int size : new int[] {64 << 10, 1 << 20}) {
                        measure(pool, store, s3, eTag, objectSize, size, 4, client, 0, budget / 2);
                    }
                }
                for (int size : ints(b.arg("sizes", "65536,1048576,8388608"))) {
                    for (int threads : ints(b.arg("threads", "1,4"))) {
                        for (int r = 1; r <= rounds; r++) {
                            for (int i = 0; i < clients.length; i++) {
                                String client = clients[(i + r) % clients.length];
                                Cell c = measure(pool, store, s3, eTag, objectSize, size, threads, client, r, budget);
                                cells.add(c);
                                System.out.printf(Locale.ROOT,
                                        "  %5d KiB t%d %-8s r%d %8.1f MiB/s  cpu %.2f s/GiB  switches %.0f/GiB"
                                                + "  GET/read %.2f  fetched/read %.2f  load1 %.1f%n",
                                        size >> 10, threads, client, r, c.mibps, c.cpuSecPerGib,
                                        c.switchesPerGib, c.getsPerRead, c.fetchedPerRead, c.load);
                            }
                        }
                    }
                }
            } finally {
                pool.shutdownNow();
            }
        }
        String t = table(cells);
        System.out.print(t);
        return t;
    }

    static int[] ints(String csv) {
        return java.util.Arrays.stream(csv.split(",")).map(String::trim).filter(x -> !x.isEmpty())
                .mapToInt(Integer::parseInt).toArray();
    }

    private Cell measure(ExecutorService pool, ObjectStore store, S3Client s3, String eTag, long objectSize,
            int size, int threads, String client, int round, long budget) throws Exception {
        int perThread = (int) Math.max(4, budget / size / threads);
        Counters.Mark m = b.counters.mark();
        List<Future<Long>> fs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = 1000L * size + 10L * round + t;
            fs.add(pool.submit(() -> reads(store, s3, eTag, objectSize, size, perThread, client, seed)));
        }
        long bytes = 0;
        for (Future<Long> f : fs) {
            bytes += f.get();
        }
        Counters.Window w = b.counters.since(m);
        long reads = (long) perThread * threads;
        long gets = w.count("GET", "vended", true);
        double secs = w.wallNanos() / 1e9;
        return new Cell(size, threads, client, round, bytes / 1048576.0 / secs,
                w.cpuNanos() / 1e9 / (bytes / (double) (1L << 30)), gets / (double) reads,
                w.bytesFromEndpoint() < 0 ? Double.NaN : w.bytesFromEndpoint() / (double) bytes, Counters.load(),
                w.contextSwitches() < 0 ? Double.NaN : w.contextSwitches() / (bytes / (double) (1L << 30)));
    }

    private static long reads(ObjectStore store, S3Client s3, String eTag, long objectSize, int size, int n,
            String client, long seed) throws IOException {
        SplittableRandom rnd = new SplittableRandom(seed);
        byte[] buf = new byte[size];
        long total = 0;
        SeekableObjectInputStream in = client.equals("stream")
                ? store.openInput(KEY, ReadOptions.defaults().withReadPolicy(ReadPolicy.RANDOM)
                        .withKnownLength(objectSize, eTag))
                : null;
        try {
            for (int i = 0; i < n; i++) {
                long off = rnd.nextLong(objectSize - size + 1);
                switch (client) {
                    case "getRange" -> total += store.getRange(KEY, off, off + size).length;
                    case "into" -> {
                        int got = store.getRange(KEY, off, buf, 0, size);
                        if (got != size) {
                            throw new IOException("into: " + got + " of " + size + " bytes at " + off);
                        }
                        total += got;
                    }
                    case "stream" -> {
                        in.readFully(off, buf, 0, size);
                        total += size;
                    }
                    default -> {
                        GetObjectRequest req = GetObjectRequest.builder().bucket("vended").key(KEY)
                                .range("bytes=" + off + "-" + (off + size - 1)).build();
                        try (ResponseInputStream<GetObjectResponse> body = s3.getObject(req)) {
                            int got = body.readNBytes(buf, 0, size);
                            if (got != size) {
                                throw new IOException("sdk: " + got + " of " + size + " bytes at " + off);
                            }
                            total += got;
                        }
                    }
                }
            }
        } finally {
            if (in != null) {
                in.close();
            }
        }
        return total;
    }

    private static String table(List<Cell> cells) {
        StringBuilder sb = new StringBuilder("\n## Random reads: ObjectStore vs the SDK's ranged GET"
                + " (median of the rounds)\n\n| read | thr | client | MiB/s | /sdk | CPU s/GiB | CPU /sdk"
                + " | context switches /GiB | GETs per read | bytes fetched per byte read |\n"
                + "|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
        for (int size : SIZES) {
            for (int threads : new int[] {1, 4}) {
                if (cells.stream().noneMatch(c -> c.size == size && c.threads == threads)) {
                    continue;
                }
                double sdkMibps = med(cells, size, threads, "sdk", Cell::mibps);
                double sdkCpu = med(cells, size, threads, "sdk", Cell::cpuSecPerGib);
                for (String c : CLIENTS) {
                    double mibps = med(cells, size, threads, c, Cell::mibps);
                    if (Double.isNaN(mibps)) {
                        continue;
                    }
                    double cpu = med(cells, size, threads, c, Cell::cpuSecPerGib);
                    sb.append(String.format(Locale.ROOT, "| %s | %d | %s | %.1f | %s | %.2f | %s | %.0f | %.2f | %.2f |%n",
                            size >= 1 << 20 ? (size >> 20) + " MiB" : (size >> 10) + " KiB", threads, c, mibps,
                            c.equals("sdk") ? "" : String.format(Locale.ROOT, "**%.2f×**", mibps / sdkMibps), cpu,
                            c.equals("sdk") ? "" : String.format(Locale.ROOT, "%.2f", cpu / sdkCpu),
                            med(cells, size, threads, c, Cell::switchesPerGib),
                            med(cells, size, threads, c, Cell::getsPerRead),
                            med(cells, size, threads, c, Cell::fetchedPerRead)));
                }
            }
        }
        return sb.toString();
    }

    private static double med(List<Cell> cells, int size, int threads, String client,
            java.util.function.ToDoubleFunction<Cell> f) {
        double[] v = cells.stream().filter(c -> c.size == size && c.threads == threads && c.client.equals(client))
                .mapToDouble(f).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }
}
