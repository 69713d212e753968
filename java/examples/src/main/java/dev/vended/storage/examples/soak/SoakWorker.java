package dev.vended.storage.examples.soak;

import dev.vended.storage.AsyncObjectStore;
import dev.vended.storage.MultipartOutputStream;
import dev.vended.storage.ObjectMeta;
import dev.vended.storage.ObjectNotFoundException;
import dev.vended.storage.ObjectStore;
import dev.vended.storage.SeekableObjectInputStream;
import dev.vended.storage.examples.soak.SoakStats.Op;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One soak thread: a seeded mix of put/get/getRange/head/list/delete, streams ({@code openOutput}
 * with one PUT or multipart, {@code openInput} with sequential reads and seeks) and async calls,
 * under its own prefix {@code t<id>/}, every read checked against {@link SeededContent}. Every key
 * is written once; an object whose write or delete failed is no longer checked (its state is
 * unknown) but may still be listed.
 */
final class SoakWorker implements Runnable {

    /** Objects a worker keeps; beyond this the oldest is deleted. */
    static final int MAX_LIVE = 24;

    /** Default part size of {@code openOutput} (5 MiB): larger objects are multipart uploads. */
    static final long PART_SIZE = 5L << 20;

    private static final long ASYNC_TIMEOUT_S = 300;

    /** How long a worker waits after a call failed before its next call, milliseconds. */
    static final long PAUSE_AFTER_FAILURE_MS = 100;

    private record Obj(long size, long seed) {}

    private final ObjectStore store;
    private final AsyncObjectStore async;
    private final SoakStats stats;
    private final long deadline;
    private final SplittableRandom random;
    private final String prefix;
    private final Map<String, Obj> live = new LinkedHashMap<>();
    private final Set<String> unknown = new HashSet<>();
    private long next;
    private long failedCalls;

    SoakWorker(
            int id,
            ObjectStore store,
            AsyncObjectStore async,
            SoakStats stats,
            long seed,
            long deadlineNanos) {

        this.store = store;
        this.async = async;
        this.stats = stats;
        this.deadline = deadlineNanos;
        this.random = new SplittableRandom(FaultSchedule.mix(seed * 1_000_003L + id));
        this.prefix = "t" + id + "/";
    }

    @Override
    public void run() {
        while (System.nanoTime() - deadline < 0) {
            long failuresBefore = failures();
            try {
                step();
            } catch (RuntimeException e) {
                // A contract broken (e.g. a null result): counted, and the worker goes on.
                failedCalls++;
                stats.crash(Thread.currentThread().getName(), e);
            }
            if (failures() != failuresBefore) {
                pauseAfterFailure();
            }
        }
    }

    private long failures() {
        return failedCalls;
    }

    private void failed(Op op, long startNanos, long endNanos, Throwable e) {
        failedCalls++;
        stats.failed(op, startNanos, endNanos, e);
    }

    /** As an application would: a failed call is not repeated at once (and the log stays sane). */
    private static void pauseAfterFailure() {
        try {
            Thread.sleep(PAUSE_AFTER_FAILURE_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void step() {
        int w = live.isEmpty() ? 0 : random.nextInt(100);
        if (live.size() > MAX_LIVE) {
            delete(oldest());
        } else if (w < 24) {
            putGet();
        } else if (w < 36) {
            get(pick());
        } else if (w < 46) {
            getRange(pick());
        } else if (w < 54) {
            head(pick());
        } else if (w < 58) {
            list();
        } else if (w < 64) {
            delete(pick());
        } else if (w < 72) {
            streamWrite();
        } else if (w < 84) {
            streamRead(pick());
        } else {
            asyncBatch();
        }
    }

    private String newKey() {
        return prefix + "o" + (next++);
    }

    private String oldest() {
        return live.keySet().iterator().next();
    }

    private String pick() {
        int i = random.nextInt(live.size());
        for (String k : live.keySet()) {
            if (i-- == 0) {
                return k;
            }
        }
        throw new IllegalStateException("unreachable");
    }

    /** 1 KiB to 256 KiB, more small ones than large ones. */
    private long smallSize() {
        return 1024L << random.nextInt(9) | random.nextInt(1024);
    }

    private void putGet() {
        String key = newKey();
        Obj o = new Obj(smallSize(), random.nextLong());
        byte[] data = SeededContent.bytes(o.seed, 0, (int) o.size);
        long t0 = System.nanoTime();
        try {
            store.put(key, data);
        } catch (IOException | RuntimeException e) {
            failed(Op.PUT, t0, System.nanoTime(), e);
            unknown.add(key);
            return;
        }
        stats.ok(Op.PUT, t0, System.nanoTime());
        stats.bytesWritten.addAndGet(o.size);
        live.put(key, o);
        get(key);
    }

    private void get(String key) {
        Obj o = live.get(key);
        long t0 = System.nanoTime();
        try {
            byte[] back = store.get(key);
            stats.ok(Op.GET, t0, System.nanoTime());
            check(Op.GET, key, o, 0, back, back.length, o.size);
        } catch (IOException | RuntimeException e) {
            failedRead(Op.GET, key, t0, e);
        }
    }

    private void getRange(String key) {
        Obj o = live.get(key);
        long start = random.nextLong(o.size);
        long end = start + 1 + random.nextLong(o.size - start);
        long t0 = System.nanoTime();
        try {
            byte[] back = store.getRange(key, start, end);
            stats.ok(Op.GET_RANGE, t0, System.nanoTime());
            check(Op.GET_RANGE, key, o, start, back, back.length, end - start);
        } catch (IOException | RuntimeException e) {
            failedRead(Op.GET_RANGE, key, t0, e);
        }
    }

    private void head(String key) {
        Obj o = live.get(key);
        long t0 = System.nanoTime();
        try {
            ObjectMeta m = store.head(key);
            stats.ok(Op.HEAD, t0, System.nanoTime());
            if (m.size() != o.size) {
                stats.mismatch(Op.HEAD, key + ": size " + m.size() + ", wrote " + o.size);
            }
        } catch (IOException | RuntimeException e) {
            failedRead(Op.HEAD, key, t0, e);
        }
    }

    private void list() {
        long t0 = System.nanoTime();
        List<ObjectMeta> listed;
        try {
            listed = store.list(prefix);
        } catch (IOException | RuntimeException e) {
            failed(Op.LIST, t0, System.nanoTime(), e);
            return;
        }
        stats.ok(Op.LIST, t0, System.nanoTime());
        Set<String> seen = new HashSet<>();
        for (ObjectMeta m : listed) {
            seen.add(m.path());
            Obj o = live.get(m.path());
            if (o == null && !unknown.contains(m.path())) {
                stats.mismatch(
                        Op.LIST, "listed " + m.path() + ", which was never written or was deleted");
            } else if (o != null && m.size() != o.size) {
                stats.mismatch(
                        Op.LIST, m.path() + ": listed size " + m.size() + ", wrote " + o.size);
            }
        }
        for (String k : live.keySet()) {
            if (!seen.contains(k)) {
                stats.mismatch(Op.LIST, "not listed: " + k + " (written and not deleted)");
            }
        }
    }

    private void delete(String key) {
        live.remove(key);
        long t0 = System.nanoTime();
        try {
            store.delete(key);
        } catch (IOException | RuntimeException e) {
            failed(Op.DELETE, t0, System.nanoTime(), e);
            unknown.add(key);
            return;
        }
        stats.ok(Op.DELETE, t0, System.nanoTime());
        long t1 = System.nanoTime();
        try {
            store.head(key);
            stats.ok(Op.HEAD, t1, System.nanoTime());
            stats.mismatch(Op.DELETE, key + " still there after delete");
        } catch (ObjectNotFoundException gone) {
            stats.ok(Op.HEAD, t1, System.nanoTime());
        } catch (IOException | RuntimeException e) {
            failed(Op.HEAD, t1, System.nanoTime(), e);
        }
    }

    /** Writes through {@code openOutput} in uneven chunks: 40% multipart (5.5-12 MiB). */
    private void streamWrite() {
        String key = newKey();
        long size =
                random.nextInt(10) < 4
                        ? PART_SIZE + (PART_SIZE / 10) + random.nextLong(7L << 20)
                        : (64L << 10) + random.nextLong(1L << 20);
        Obj o = new Obj(size, random.nextLong());
        Op op = size > PART_SIZE ? Op.MULTIPART_WRITE : Op.STREAM_WRITE;
        byte[] chunk = new byte[300 * 1024];
        long t0 = System.nanoTime();
        MultipartOutputStream out = null;
        try {
            out = store.openOutput(key);
            long pos = 0;
            while (pos < size) {
                int n = (int) Math.min(size - pos, 1 + random.nextInt(chunk.length));
                SeededContent.fill(o.seed, pos, chunk, 0, n);
                out.write(chunk, 0, n);
                pos += n;
            }
            out.close();
        } catch (IOException | RuntimeException e) {
            if (out != null) {
                try {
                    out.abort(); // no-op if the failure already aborted it
                } catch (IOException | RuntimeException ignored) {
                    // the failure is what is reported
                }
            }
            failed(op, t0, System.nanoTime(), e);
            unknown.add(key);
            return;
        }
        stats.ok(op, t0, System.nanoTime());
        stats.bytesWritten.addAndGet(size);
        live.put(key, o);
    }

    /** Reads through {@code openInput}: positioned reads, then the whole object in uneven reads. */
    private void streamRead(String key) {
        Obj o = live.get(key);
        long t0 = System.nanoTime();
        try (SeekableObjectInputStream in = store.openInput(key)) {
            readAndCheck(in, key, o);
            stats.ok(Op.STREAM_READ, t0, System.nanoTime());
        } catch (IOException | RuntimeException e) {
            failedRead(Op.STREAM_READ, key, t0, e);
        }
    }

    private void readAndCheck(SeekableObjectInputStream in, String key, Obj o) throws IOException {
        if (in.length() != o.size) {
            stats.mismatch(Op.STREAM_READ, key + ": length " + in.length() + ", wrote " + o.size);
            return;
        }
        for (int i = 0; i < 3; i++) {
            long pos = random.nextLong(o.size);
            byte[] b = new byte[(int) Math.min(o.size - pos, 1 + random.nextInt(256 * 1024))];
            in.readFully(pos, b);
            check(Op.STREAM_READ, key, o, pos, b, b.length, b.length);
        }
        in.seek(0);
        byte[] buf = new byte[128 * 1024];
        long pos = 0;
        while (pos < o.size) {
            int n = in.read(buf, 0, 1 + random.nextInt(buf.length));
            if (n < 0) {
                stats.mismatch(Op.STREAM_READ, key + ": end of stream at " + pos + " of " + o.size);
                return;
            }
            if (!check(Op.STREAM_READ, key, o, pos, buf, n, n)) {
                return;
            }
            pos += n;
        }
        if (in.read() != -1) {
            stats.mismatch(Op.STREAM_READ, key + ": bytes past the end (" + o.size + ")");
        }
    }

    /**
     * Four {@code putAsync}, then {@code getAsync} of each (checked), then two {@code deleteAsync}.
     */
    private void asyncBatch() {
        List<String> keys = new ArrayList<>();
        List<Obj> objs = new ArrayList<>();
        List<CompletableFuture<Void>> puts = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < 4; i++) {
            String key = newKey();
            Obj o = new Obj(smallSize(), random.nextLong());
            keys.add(key);
            objs.add(o);
            puts.add(async.putAsync(key, SeededContent.bytes(o.seed, 0, (int) o.size)));
        }
        List<String> stored = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            if (await(Op.ASYNC_PUT, puts.get(i), t0) != null) {
                unknown.add(keys.get(i));
            } else {
                stats.bytesWritten.addAndGet(objs.get(i).size);
                live.put(keys.get(i), objs.get(i));
                stored.add(keys.get(i));
            }
        }
        long t1 = System.nanoTime();
        List<CompletableFuture<byte[]>> gets = new ArrayList<>();
        for (String k : stored) {
            gets.add(async.getAsync(k));
        }
        for (int i = 0; i < stored.size(); i++) {
            CompletableFuture<byte[]> f = gets.get(i);
            if (await(Op.ASYNC_GET, f, t1) == null) {
                byte[] back = f.join();
                Obj o = live.get(stored.get(i));
                if (back == null) {
                    stats.mismatch(Op.ASYNC_GET, stored.get(i) + ": getAsync completed with null");
                    continue;
                }
                check(Op.ASYNC_GET, stored.get(i), o, 0, back, back.length, o.size);
            }
        }
        long t2 = System.nanoTime();
        List<String> doomed = stored.subList(0, Math.min(2, stored.size()));
        List<CompletableFuture<Void>> dels = new ArrayList<>();
        for (String k : doomed) {
            live.remove(k);
            dels.add(async.deleteAsync(k));
        }
        for (int i = 0; i < doomed.size(); i++) {
            if (await(Op.ASYNC_DELETE, dels.get(i), t2) != null) {
                unknown.add(doomed.get(i));
            }
        }
    }

    /** Waits for {@code f}; counts it; returns its failure or {@code null}. */
    private Throwable await(Op op, CompletableFuture<?> f, long startNanos) {
        try {
            f.get(ASYNC_TIMEOUT_S, TimeUnit.SECONDS);
            stats.ok(op, startNanos, System.nanoTime());
            return null;
        } catch (ExecutionException | TimeoutException e) {
            f.cancel(true);
            Throwable cause =
                    e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
            failed(op, startNanos, System.nanoTime(), cause);
            return cause;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            failed(op, startNanos, System.nanoTime(), e);
            return e;
        }
    }

    /** A failed read of a live object: a missing object is a mismatch, anything else a failure. */
    private void failedRead(Op op, String key, long t0, Exception e) {
        if (e instanceof ObjectNotFoundException) {
            stats.ok(op, t0, System.nanoTime());
            stats.mismatch(op, key + ": not found, but was written and not deleted");
        } else {
            failed(op, t0, System.nanoTime(), e);
        }
    }

    /** Checks {@code got[0, n)} is the object's content at {@code pos}, {@code want} bytes long. */
    private boolean check(Op op, String key, Obj o, long pos, byte[] got, int n, long want) {
        if (n != want) {
            stats.mismatch(op, key + ": got " + n + " bytes at " + pos + ", expected " + want);
            return false;
        }
        long bad = SeededContent.firstMismatch(o.seed, pos, got, 0, n);
        if (bad >= 0) {
            stats.mismatch(op, key + ": wrong byte at offset " + bad + " (read at " + pos + ")");
            return false;
        }
        stats.bytesVerified.addAndGet(n);
        return true;
    }
}
