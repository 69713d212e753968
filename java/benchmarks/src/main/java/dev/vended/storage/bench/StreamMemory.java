package dev.vended.storage.bench;

import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.ReadOptions;
import dev.vended.storage.ReadPolicy;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.WriteOptions;
import dev.vended.storage.testkit.LocalS3Server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.zip.CRC32;

/**
 * Issue 12, memory: uploads {@code size} bytes through {@link MultipartOutputStream} (1 MiB
 * writes from one reused array) and downloads them through {@link SeekableObjectInputStream} into
 * one reused 1 MiB array, and reports the process's peak RSS growth of each phase: {@code VmHWM}
 * after the phase minus {@code VmRSS} before it, the peak reset between phases by writing {@code
 * 5} to {@code /proc/self/clear_refs} (Linux). Run with a fixed, pre-touched heap ({@code -Xms =
 * -Xmx}, {@code -XX:+AlwaysPreTouch}) so that heap growth is not counted as the streams'.
 *
 * <pre>
 * java -Xms256m -Xmx256m -XX:+AlwaysPreTouch -Dvended.storage.localS3=target/release/local-s3 \
 *   -cp 'java/benchmarks/target/classes:java/benchmarks/target/lib/*' \
 *   dev.vended.storage.bench.StreamMemory [size bytes, default 1 GiB] [log dir, default /tmp]
 * </pre>
 *
 * Exits 1 when a phase's growth is above the target {@code partSize * maxConcurrency + 64 MiB}
 * or the object read back differs (length or CRC-32).
 */
public final class StreamMemory {

    private static final int CHUNK = 1 << 20;
    private static final double MIB = 1 << 20;

    private StreamMemory() {}

    public static void main(String[] argv) throws Exception {
        long size = argv.length > 0 ? Long.parseLong(argv[0]) : 1L << 30;
        Path logDir = Path.of(argv.length > 1 ? argv[1] : "/tmp");
        WriteOptions wo = WriteOptions.defaults();
        long partSize = wo.partSize();
        int concurrency = wo.maxConcurrency();
        long targetBytes = partSize * concurrency + (64L << 20);
        byte[] chunk = BenchEnv.randomBytes(CHUNK, 11);
        byte[] buf = new byte[CHUNK];
        CRC32 want = new CRC32();
        for (long off = 0; off < size; off += CHUNK) {
            want.update(chunk, 0, (int) Math.min(CHUNK, size - off));
        }
        boolean ok = true;
        try (LocalS3Server s3 = LocalS3Server.start(
                        LocalS3Server.binaryFromProperty(), "mem", logDir.resolve("stream-memory-local-s3.log"),
                        true);
                ObjectStore store = StreamClients.vended(s3.endpoint(), "mem")) {
            // Warm-up (native library, runtime threads, connection pool, JIT): 32 MiB both ways.
            upload(store, "warm", 32L << 20, chunk, wo);
            download(store, "warm", buf, null, false);
            download(store, "warm", buf, null, true);
            System.gc();

            long[] up = phase(() -> upload(store, "big", size, chunk, wo));
            CRC32 got = new CRC32();
            long[] readBytes = new long[1];
            long[] down = phase(() -> readBytes[0] = download(store, "big", buf, got, false));
            CRC32 gotStreaming = new CRC32();
            long[] streamedBytes = new long[1];
            long[] streamed =
                    phase(() -> streamedBytes[0] = download(store, "big", buf, gotStreaming, true));
            System.out.printf(Locale.ROOT, "object %.0f MiB, part size %.0f MiB x %d at once; target growth <= %.0f MiB; load1 %.2f%n",
                    size / MIB, partSize / MIB, concurrency, targetBytes / MIB, BenchMain.loadAverage());
            ok &= report("upload   (MultipartOutputStream)", up, size, targetBytes);
            ok &= report("download (SeekableObjectInputStream, RANDOM: ranged blocks)", down, size,
                    targetBytes);
            ok &= report("download (SeekableObjectInputStream, defaults: ADAPTIVE streams a scan)",
                    streamed, size, targetBytes);
            if (streamedBytes[0] != size || gotStreaming.getValue() != want.getValue()) {
                System.out.println("FAIL: streamed back " + streamedBytes[0] + " bytes, CRC-32 "
                        + Long.toHexString(gotStreaming.getValue()));
                ok = false;
            }
            if (readBytes[0] != size || got.getValue() != want.getValue()) {
                System.out.println("FAIL: read back " + readBytes[0] + " bytes, CRC-32 "
                        + Long.toHexString(got.getValue()) + " want " + Long.toHexString(want.getValue()));
                ok = false;
            } else {
                System.out.println("read back " + size + " bytes, CRC-32 matches");
            }
        }
        System.exit(ok ? 0 : 1);
    }

    interface Phase {
        void run() throws Exception;
    }

    /** {RSS before, peak after, nanos} of {@code p}, with the peak reset first. */
    private static long[] phase(Phase p) throws Exception {
        Files.writeString(Path.of("/proc/self/clear_refs"), "5");
        long before = status("VmRSS");
        long t0 = System.nanoTime();
        p.run();
        long nanos = System.nanoTime() - t0;
        long peak = status("VmHWM");
        return new long[] {before, peak, nanos};
    }

    private static boolean report(String what, long[] r, long size, long target) {
        long growth = r[1] - r[0];
        double mibs = size / MIB / (r[2] / 1e9);
        boolean ok = growth <= target;
        System.out.printf(Locale.ROOT, "%s: RSS before %.1f MiB, peak %.1f MiB, growth %.1f MiB (%s); %.1f s, %.0f MiB/s%n",
                what, r[0] / MIB, r[1] / MIB, growth / MIB, ok ? "within target" : "ABOVE target",
                r[2] / 1e9, mibs);
        return ok;
    }

    static void upload(ObjectStore store, String key, long size, byte[] chunk, WriteOptions wo)
            throws IOException {
        try (MultipartOutputStream out = store.openOutput(key, wo)) {
            for (long off = 0; off < size; off += CHUNK) {
                out.write(chunk, 0, (int) Math.min(CHUNK, size - off));
            }
        }
    }

    static long download(ObjectStore store, String key, byte[] buf, CRC32 crc, boolean streaming)
            throws IOException {
        long total = 0;
        // streaming: the defaults (ADAPTIVE, which streams a scan); otherwise ranged blocks.
        ReadOptions options = streaming
                ? ReadOptions.defaults()
                : ReadOptions.defaults().withReadPolicy(ReadPolicy.RANDOM);
        try (SeekableObjectInputStream in = store.openInput(key, options)) {
            int n;
            while ((n = in.read(buf, 0, buf.length)) >= 0) {
                if (crc != null) {
                    crc.update(buf, 0, n);
                }
                total += n;
            }
        }
        return total;
    }

    /** A {@code kB} line of {@code /proc/self/status}, in bytes. */
    static long status(String field) throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith(field + ":")) {
                String[] parts = line.substring(field.length() + 1).trim().split("\\s+");
                return Long.parseLong(parts[0]) * 1024;
            }
        }
        throw new IOException("no " + field + " in /proc/self/status");
    }
}
