package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testing.LocalRefsMain;
import dev.vended.storage.testing.LocalRefsScenario;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/**
 * Local references: converting a 10,000-entry provider map does not overflow the local reference
 * table, and 200 provider calls in a row on the native runtime's long-lived threads do not
 * accumulate local references. The child-JVM test runs the same under {@code -Xcheck:jni} (which
 * prints "WARNING: JNI local refs: N, exceeds capacity" when a frame overflows) whatever this JVM
 * runs with, and fails on any JNI warning.
 */
@Timeout(90)
class LocalReferencesTest {

    private static LocalS3Server server;

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("localrefs");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void providerMapOfTenThousandEntries() throws Exception {
        List<String> threads = LocalRefsScenario.bigMap(server.endpoint(), server.bucket(), 10_000);
        assertEquals(1, threads.size());
    }

    @Test
    void twoHundredConsecutiveProviderCallsOnLongLivedThreads() throws Exception {
        List<String> threads =
                LocalRefsScenario.consecutiveRefreshes(server.endpoint(), server.bucket(), 200);
        assertEquals(200, threads.size());
    }

    @Test
    void sameUnderXcheckJniInAChildJvmWithoutWarnings() throws Exception {
        ChildJvm.Result r =
                ChildJvm.run(
                        classPath(LocalRefsMain.class),
                        ChildJvm.xcheckJni() ? List.of() : List.of("-Xcheck:jni"),
                        LocalRefsMain.class.getName(),
                        List.of(server.endpoint(), server.bucket()),
                        Duration.ofSeconds(60));
        assertFalse(r.timedOut(), r::describe);
        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.output().contains("LOCAL-REFS-OK"), r::describe);
        assertTrue(r.jniWarnings().isEmpty(), () -> "JNI warnings: " + r.describe());
        assertTrue(r.command().contains("-Xcheck:jni"), r::describe);
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
