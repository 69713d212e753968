package dev.vended.storage;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.vended.storage.testing.C15IsolatedMain;
import dev.vended.storage.testing.C15Scenario;
import dev.vended.storage.testkit.ChildJvm;
import dev.vended.storage.testkit.LocalS3Server;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.URLClassLoader;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * C15: the library and a provider class are loaded by an isolated {@link URLClassLoader} whose
 * parent is the platform class loader (as Spark and application servers do); refreshes forced on
 * native runtime threads work, and a provider failure surfaces as the isolated loader's {@link
 * CredentialsException} to the caller, never a hang.
 *
 * <p>Two settings: a child JVM where only the isolated loader can see the library (the Spark case:
 * the application class path holds the test classes only), and this JVM, where the application
 * loader has loaded the library already and the isolated loader loads its own copy (the loader
 * extracts the library to a temporary file per class loader, so the JVM's "already loaded in
 * another classloader" rule, which is per file, does not apply).
 */
@Timeout(90)
class C15IsolatedClassLoaderTest {

    private static LocalS3Server server;

    /**
     * The in-process isolated loader stays reachable for the rest of this JVM: its copy of the
     * native library keeps runtime threads, and unloading it (loader collected) is not what this
     * test is about.
     */
    private static final List<URLClassLoader> KEEP = new ArrayList<>();

    @BeforeAll
    static void startEndpoint() throws Exception {
        server = LocalS3Server.start("c15");
    }

    @AfterAll
    static void stopEndpoint() {
        if (server != null) {
            server.close();
        }
    }

    private static Path mainClasses() {
        return ChildJvm.codeSource(ObjectStore.class);
    }

    private static Path testClasses() {
        return ChildJvm.codeSource(C15Scenario.class);
    }

    /**
     * The testkit (EndpointProvider, RootProvider) and its dependencies, which the isolated loader
     * must load too.
     */
    private static List<Path> testkitClasses() {
        return ChildJvm.testkitClassPath();
    }

    private static ChildJvm.Result runChild(String scenario) throws Exception {
        List<String> args = new ArrayList<>();
        args.addAll(List.of(scenario, server.endpoint(), server.bucket()));
        args.add(mainClasses().toString());
        args.add(testClasses().toString());
        testkitClasses().forEach(p -> args.add(p.toString()));
        // The application class path: the test classes and the testkit, not the library.
        List<Path> appPath = new ArrayList<>();
        appPath.add(testClasses());
        appPath.addAll(testkitClasses());
        return ChildJvm.run(
                appPath,
                List.of(),
                C15IsolatedMain.class.getName(),
                args,
                Duration.ofSeconds(60));
    }

    private static void assertChildPassed(ChildJvm.Result r) {
        assertFalse(r.timedOut(), () -> "hang: " + r.describe());
        assertEquals(0, r.exitCode(), r::describe);
        assertTrue(r.output().contains("C15-OK"), r::describe);
        assertTrue(r.jniWarnings().isEmpty(), () -> "JNI warnings: " + r.describe());
    }

    @Test
    void c15_refreshOnNativeThreadWithOnlyTheIsolatedLoader() throws Exception {
        assertChildPassed(runChild("refresh"));
    }

    @Test
    void c15_providerThrowingInIsolatedLoaderSurfacesToTheCaller() throws Exception {
        assertChildPassed(runChild("throw"));
    }

    @Test
    void c15_isolatedLoaderIsCollectableAfterCloseAndANewOneWorks() throws Exception {
        // As an application server undeploying and redeploying an application.
        assertChildPassed(runChild("unload"));
    }

    private static URLClassLoader inProcessLoader() throws Exception {
        ObjectStore.nativeVersion(); // the application loader has loaded the library
        URLClassLoader loader =
                C15Scenario.isolatedLoader(isolatedEntries());
        // The surefire JVM loads the test-hooks library named by -Dvended.storage.native.library;
        // a JVM loads one library file into one class loader only, so the isolated loader must
        // extract its own copy of the bundled library, as in production: load it with the
        // property unset (tests in this JVM run one at a time).
        String explicit = System.clearProperty(NativeLoader.LIBRARY_PROPERTY);
        try {
            loader.loadClass(ObjectStore.class.getName()).getMethod("nativeVersion").invoke(null);
        } finally {
            if (explicit != null) {
                System.setProperty(NativeLoader.LIBRARY_PROPERTY, explicit);
            }
        }
        synchronized (KEEP) {
            KEEP.add(loader);
        }
        return loader;
    }

    @Test
    void c15_refreshOnNativeThreadWithASecondLoaderInThisJvm() throws Exception {
        List<String> report =
                C15Scenario.run(inProcessLoader(), server.endpoint(), server.bucket(), "refresh");
        assertFalse(report.isEmpty());
    }

    @Test
    void c15_providerThrowingWithASecondLoaderInThisJvm() throws Exception {
        // The caller's context class loader (the application loader) also has a
        // CredentialsException class: the one thrown must still be the isolated loader's.
        assertEquals(
                ObjectStore.class.getClassLoader(), Thread.currentThread().getContextClassLoader());
        List<String> report =
                C15Scenario.run(inProcessLoader(), server.endpoint(), server.bucket(), "throw");
        assertFalse(report.isEmpty());
    }

    private static List<Path> isolatedEntries() {
        List<Path> entries = new ArrayList<>();
        entries.add(mainClasses());
        entries.add(testClasses());
        entries.addAll(testkitClasses());
        return entries;
    }
}
