package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A panic inside a native async task still ends the task: the sink hears it once, on a native
 * runtime thread, and {@link AsyncNative#take} throws the {@link StorageException} a panic in a
 * synchronous call gives (kind {@code IO}, the panic message), so no future or permit is leaked.
 */
@Timeout(60)
class AsyncPanicTest {

    @Test
    void aPanickingTaskEndsWithAStorageException() throws Exception {
        LinkedBlockingQueue<Long> ready = new LinkedBlockingQueue<>();
        LinkedBlockingQueue<String> threads = new LinkedBlockingQueue<>();
        AsyncNative.Sink sink =
                new AsyncNative.Sink() {
                    @Override
                    void ready(long task) {
                        threads.add(Thread.currentThread().getName());
                        ready.add(task);
                    }
                };
        long task = AsyncTestHooks.startPanic("async boom 42", sink);
        assertTrue(task > 0);
        Long heard = ready.poll(30, TimeUnit.SECONDS);
        assertEquals(task, heard);
        assertTrue(AsyncObjectStoreTest.isNativeThreadName(threads.poll()));
        StorageException e = assertThrows(StorageException.class, () -> AsyncNative.take(task));
        assertTrue(e.getMessage().contains("async boom 42"), e.getMessage());
        assertEquals(StorageException.Kind.IO, e.kind());
        assertFalse(e.isRetryable());
        // Taken once: the task is gone, and nothing else was delivered.
        assertThrows(IllegalStateException.class, () -> AsyncNative.take(task));
        assertEquals(null, ready.poll(200, TimeUnit.MILLISECONDS));
    }
}
