package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testing.ExitWithoutCloseMain;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/**
 * A JVM whose {@code main} returns with an S3 store still open (native runtime threads exist and
 * have called the provider) exits promptly with code 0: the runtime threads are attached as daemons
 * and nothing waits for them.
 */
@Timeout(90)
class JvmExitTest {

    /** Generous bound from "main returned" to "process exited". */
    private static final long MAX_EXIT_MILLIS = 10_000;

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("exit");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static void assertExitsPromptly(String mode) throws Exception {
        ChildJvm.Result r =
                ChildJvm.run(
                        classPath(ExitWithoutCloseMain.class),
                        List.of(),
                        ExitWithoutCloseMain.class.getName(),
                        List.of(server.endpoint(), server.bucket(), mode),
                        Duration.ofSeconds(60));
        assertFalse(r.timedOut(), () -> "the JVM did not exit: " + r.describe());
        long returnedAt = r.markerMillis("MAIN-RETURNING");
        assertTrue(returnedAt > 0, () -> "main did not get to return: " + r.describe());
        assertEquals(0, r.exitCode(), r::describe);
        long exitMillis = r.exitedAtMillis() - returnedAt;
        assertTrue(
                exitMillis < MAX_EXIT_MILLIS,
                () -> "exit took " + exitMillis + " ms after main returned: " + r.describe());
        assertTrue(
                r.output().contains("THREAD vended-storage-"),
                () -> "no native runtime thread was seen: " + r.describe());
        assertFalse(
                r.output().contains("daemon=false"),
                () -> "a native runtime thread is not a daemon: " + r.describe());
        assertTrue(r.jniWarnings().isEmpty(), () -> "JNI warnings: " + r.describe());
    }

    @Test
    void jvmExitsWhenMainReturnsWithAStoreOpen() throws Exception {
        assertExitsPromptly("idle");
    }

    @Test
    void jvmExitsWhileARefreshIsInFlightOnANativeThread() throws Exception {
        assertExitsPromptly("inflight");
    }

    /** The library, the test classes holding {@code main}, and the testkit with its dependencies. */
    private static List<java.nio.file.Path> classPath(Class<?> main) {
        List<java.nio.file.Path> path = new java.util.ArrayList<>();
        path.add(ChildJvm.codeSource(ObjectStore.class));
        path.add(ChildJvm.codeSource(main));
        path.addAll(ChildJvm.testkitClassPath());
        return path;
    }
}
