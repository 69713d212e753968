package dev.vended.storage.bench;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.WriteOptions;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.ThreadParams;

import software.amazon.awssdk.core.ResponseInputStream;
import software.amazon.awssdk.core.async.AsyncRequestBody;
import software.amazon.awssdk.core.async.BlockingOutputStreamAsyncRequestBody;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.model.GetObjectRequest;
import software.amazon.awssdk.services.s3.model.GetObjectResponse;
import software.amazon.awssdk.services.s3.model.PutObjectRequest;

/**
 * Streams (issue 12): one object of {@code size} bytes read through an InputStream into a reused
 * buffer, or written through an OutputStream in 1 MiB writes, never held whole.
 *
 * <ul>
 *   <li>{@code vended}: {@link ObjectStore#openInput} ({@link SeekableObjectInputStream}, default
 *       options: {@link ReadPolicy#ADAPTIVE}, 1 MiB reads) / {@link ObjectStore#openOutput}
 *       ({@link MultipartOutputStream}, default 5 MiB parts, 8 at once).
 *   <li>{@code vended-known}: {@code vended} opened with {@link ReadOptions#withKnownLength} (length
 *       and ETag from a listing or an earlier HEAD, as Hadoop passes a {@code FileStatus}): no HEAD
 *       at open, like the SDK's single GET.
 *   <li>{@code vended-stream}: {@code vended} with {@link ReadPolicy#SEQUENTIAL}; writes as
 *       {@code vended}.
 *   <li>{@code vended-random}: {@code vended} with {@link ReadPolicy#RANDOM} (ranged 1 MiB blocks,
 *       the next one prefetched); writes as {@code vended}.
 *   <li>{@code vended-8m}: the same with 8 MiB blocks and reads, 8 MiB parts (the SDK's part size).
 *   <li>{@code sdk}: reads {@code S3Client.getObject} ({@link ResponseInputStream}, one GET); writes
 *       {@code S3AsyncClient} with {@code multipartEnabled(true)} (8 MiB parts) fed by {@link
 *       BlockingOutputStreamAsyncRequestBody} (unknown length, like an OutputStream).
 *   <li>{@code vended-stream-nosum}, {@code sdk-sums}: checksums off for ours, the SDK's default
 *       integrity on (issue 32's cost: see {@link #kind()}).
 *   <li>{@code http}: the ceiling, {@code java.net.http} unsigned against {@link CeilingServer}
 *       (memory, no disk): the same reads into a reused buffer, a streamed PUT body.
 * </ul>
 *
 * GETs all read one object written in the setup (by the same client, then read back and checked by
 * CRC-32); every thread writes its own key. Throughput is ops/s summed over threads.
 */
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@State(Scope.Benchmark)
public class StreamBenchmark {

    static final int CHUNK = 1 << 20;

    @Param({"vended", "vended-known", "vended-stream", "vended-random", "vended-8m", "sdk", "http",
            "vended-stream-nosum", "sdk-sums"})
    public String client;

    @Param({"67108864"})
    public long size;

    ObjectStore store;
    S3Client s3;
    S3AsyncClient s3async;
    HttpClient http;
    String base;
    String bucket;
    String getKey;
    String getETag;
    byte[] chunk;

    /**
     * The client without its checksum variant: {@code vended-stream-nosum} is {@code
     * vended-stream} with storage option {@code checksums=false}; {@code sdk-sums} is {@code sdk}
     * with the SDK's default integrity ({@code WHEN_SUPPORTED}: a CRC on every upload, checksum
     * mode and validation on GETs) instead of {@code WHEN_REQUIRED}.
     */
    String kind() {
        return client.equals("sdk-sums") ? "sdk" : client.replace("-nosum", "");
    }

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        chunk = BenchEnv.randomBytes(CHUNK, 7);
        bucket = BenchEnv.bucket();
        String endpoint = BenchEnv.endpoint();
        switch (kind()) {
            case "vended", "vended-known", "vended-stream", "vended-random", "vended-8m" ->
                    store = StreamClients.vended(endpoint, bucket, !client.endsWith("-nosum"));
            case "sdk" -> {
                boolean sums = client.equals("sdk-sums");
                s3 = StreamClients.sdkSync(endpoint, sums);
                s3async = StreamClients.sdkAsync(endpoint, true, sums);
            }
            case "http" -> {
                base = BenchEnv.ceiling();
                http = HttpClient.newBuilder()
                        .proxy(HttpClient.Builder.NO_PROXY)
                        .version(HttpClient.Version.HTTP_1_1)
                        .build();
            }
            default -> throw new IllegalArgumentException("unknown client " + client);
        }
        if (client.equals("http")) {
            getKey = "get-" + size;
            long n = read(new byte[CHUNK], null);
            if (n != size) {
                throw new IllegalStateException("ceiling answered " + n + " bytes");
            }
            return;
        }
        getKey = "stream-get-" + size;
        write(getKey);
        if (store != null) {
            getETag = store.head(getKey).eTag();
        }
        CRC32 got = new CRC32();
        long n = read(new byte[bufferSize()], got);
        CRC32 want = new CRC32();
        for (long off = 0; off < size; off += CHUNK) {
            want.update(chunk, 0, (int) Math.min(CHUNK, size - off));
        }
        if (n != size || got.getValue() != want.getValue()) {
            throw new IllegalStateException(client + ": read back " + n + " bytes, CRC "
                    + Long.toHexString(got.getValue()) + " want " + Long.toHexString(want.getValue()));
        }
        BenchEnv.check("streams " + client + " " + size + " B: written and read back, CRC-32 "
                + Long.toHexString(got.getValue()) + " matches");
    }

    int bufferSize() {
        return kind().equals("vended-8m") ? 8 << 20 : CHUNK;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        if (store != null) {
            store.close();
        }
        if (s3 != null) {
            s3.close();
        }
        if (s3async != null) {
            s3async.close();
        }
    }

    /** Per-thread read buffer and PUT key. */
    @State(Scope.Thread)
    public static class Slot {
        byte[] buf;
        String putKey;

        @Setup(Level.Trial)
        public void setUp(StreamBenchmark b, ThreadParams t) {
            buf = new byte[b.bufferSize()];
            putKey = "stream-put/" + b.client + "/" + b.size + "/t" + t.getThreadIndex();
        }
    }

    @Benchmark
    public long read(Slot slot) throws Exception {
        return read(slot.buf, null);
    }

    @Benchmark
    public void write(Slot slot) throws Exception {
        write(slot.putKey);
    }

    /** Reads the GET object to its end into {@code buf}; returns the bytes read. */
    long read(byte[] buf, CRC32 crc) throws Exception {
        switch (kind()) {
            case "vended", "vended-known", "vended-stream", "vended-random", "vended-8m" -> {
                ReadOptions o = ReadOptions.defaults().withBlockSize(bufferSize());
                if (kind().equals("vended-known")) {
                    o = o.withKnownLength(size, getETag);
                } else if (kind().equals("vended-stream")) {
                    o = o.withReadPolicy(ReadPolicy.SEQUENTIAL);
                } else if (kind().equals("vended-random")) {
                    o = o.withReadPolicy(ReadPolicy.RANDOM);
                }
                try (SeekableObjectInputStream in = store.openInput(getKey, o)) {
                    return drain(in, buf, crc);
                }
            }
            case "sdk" -> {
                try (ResponseInputStream<GetObjectResponse> in =
                        s3.getObject(GetObjectRequest.builder().bucket(bucket).key(getKey).build())) {
                    return drain(in, buf, crc);
                }
            }
            default -> {
                HttpResponse<InputStream> r = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/" + getKey))
                                .timeout(Duration.ofSeconds(120)).GET().build(),
                        HttpResponse.BodyHandlers.ofInputStream());
                try (InputStream in = r.body()) {
                    if (r.statusCode() != 200) {
                        throw new IOException("ceiling GET: HTTP " + r.statusCode());
                    }
                    return drain(in, buf, crc);
                }
            }
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

    private void writeChunks(OutputStream out) throws IOException {
        for (long off = 0; off < size; off += CHUNK) {
            out.write(chunk, 0, (int) Math.min(CHUNK, size - off));
        }
    }

    /** Writes {@code size} bytes to {@code key} in 1 MiB writes. */
    void write(String key) throws Exception {
        switch (kind()) {
            case "vended", "vended-known", "vended-stream", "vended-random", "vended-8m" -> {
                WriteOptions o = kind().equals("vended-8m")
                        ? WriteOptions.defaults().withPartSize(StreamClients.SDK_PART_SIZE)
                        : WriteOptions.defaults();
                try (MultipartOutputStream out = store.openOutput(key, o)) {
                    writeChunks(out);
                }
            }
            case "sdk" -> {
                BlockingOutputStreamAsyncRequestBody body = AsyncRequestBody.forBlockingOutputStream(null);
                CompletableFuture<?> done = s3async.putObject(
                        PutObjectRequest.builder().bucket(bucket).key(key).build(), body);
                try (OutputStream out = body.outputStream()) {
                    writeChunks(out);
                }
                done.get(300, TimeUnit.SECONDS);
            }
            default -> {
                HttpResponse<Void> r = http.send(
                        HttpRequest.newBuilder(URI.create(base + "/" + key))
                                .timeout(Duration.ofSeconds(120))
                                .PUT(HttpRequest.BodyPublishers.fromPublisher(
                                        HttpRequest.BodyPublishers.ofInputStream(
                                                () -> new ChunkInput(chunk, size)), size))
                                .build(),
                        HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() != 200) {
                    throw new IOException("ceiling PUT: HTTP " + r.statusCode());
                }
            }
        }
    }

    /** {@code size} bytes of {@code chunk} repeated, without holding them. */
    static final class ChunkInput extends InputStream {
        private final byte[] chunk;
        private long left;
        private int pos;

        ChunkInput(byte[] chunk, long size) {
            this.chunk = chunk;
            this.left = size;
        }

        @Override
        public int read() {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) {
            if (left == 0) {
                return -1;
            }
            int n = (int) Math.min(Math.min(len, chunk.length - pos), left);
            System.arraycopy(chunk, pos, b, off, n);
            pos = (pos + n) % chunk.length;
            left -= n;
            return n;
        }
    }
}
