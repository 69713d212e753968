package dev.vended.storage.testing;

import dev.vended.storage.testkit.AdminClient;
import dev.vended.storage.testkit.EndpointProvider;
import dev.vended.storage.testkit.Waits;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * C15 driven through reflection only: the library ({@code dev.vended.storage.*}) and {@link
 * EndpointProvider} are loaded by an isolated {@link URLClassLoader} whose parent is the platform
 * class loader, as Spark and application servers do. Used in-process by {@code
 * C15IsolatedClassLoaderTest} and in a child JVM by {@link C15IsolatedMain}.
 *
 * <p>This class must not refer to any {@code dev.vended.storage} class except through reflection:
 * the class loader that loads it may not see them.
 */
public final class C15Scenario {

    /** Longest a single call into the library may take before it counts as a hang. */
    private static final Duration CALL_TIMEOUT = Duration.ofSeconds(20);

    private final ClassLoader loader;
    private final String endpoint;
    private final String bucket;
    private final List<String> report = new ArrayList<>();
    private final Class<?> storeClass;
    private final Class<?> providerInterface;
    private final Class<?> providerClass;
    private final ExecutorService caller;

    private C15Scenario(ClassLoader loader, String endpoint, String bucket) throws Exception {
        this.loader = loader;
        this.endpoint = endpoint;
        this.bucket = bucket;
        this.storeClass = Class.forName("dev.vended.storage.ObjectStore", true, loader);
        this.providerInterface =
                Class.forName("dev.vended.storage.StorageOptionsProvider", false, loader);
        this.providerClass =
                Class.forName("dev.vended.storage.testkit.EndpointProvider", true, loader);
        check(
                storeClass.getClassLoader() == loader,
                "ObjectStore not loaded by the isolated loader");
        check(
                providerClass.getClassLoader() == loader,
                "EndpointProvider not loaded by the isolated loader");
        this.caller =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, "c15-caller");
                            t.setDaemon(true);
                            return t;
                        });
    }

    /**
     * A class loader that sees only {@code entries} and the platform classes.
     *
     * @param entries class path entries (main classes and test classes)
     * @return the loader
     */
    public static URLClassLoader isolatedLoader(List<Path> entries) throws MalformedURLException {
        URL[] urls = new URL[entries.size()];
        for (int i = 0; i < urls.length; i++) {
            urls[i] = entries.get(i).toUri().toURL();
        }
        return new URLClassLoader("c15-isolated", urls, ClassLoader.getPlatformClassLoader());
    }

    /**
     * Runs one scenario.
     *
     * @param loader the isolated loader
     * @param endpoint the local endpoint URL
     * @param bucket its bucket
     * @param scenario {@code refresh} or {@code throw}
     * @return report lines (what was checked)
     * @throws AssertionError when a check fails, with the report so far
     */
    public static List<String> run(
            ClassLoader loader, String endpoint, String bucket, String scenario) throws Exception {
        C15Scenario s = new C15Scenario(loader, endpoint, bucket);
        try {
            switch (scenario) {
                case "refresh" -> s.refreshOnANativeThread();
                case "throw" -> s.providerThrows();
                default -> throw new IllegalArgumentException("unknown scenario " + scenario);
            }
            return List.copyOf(s.report);
        } catch (AssertionError e) {
            throw new AssertionError(
                    e.getMessage() + "\nreport so far:\n  " + String.join("\n  ", s.report), e);
        } finally {
            s.caller.shutdownNow();
        }
    }

    /**
     * Uses a store from an isolated loader (a provider called on a native thread), closes
     * everything and drops the loader: it must become collectable (nothing native keeps it: no
     * global reference, no thread context class loader left on a runtime thread). Then a new loader
     * (a new copy of the library) works, and this JVM keeps running while the old copy's idle
     * runtime threads time out.
     *
     * @return report lines
     */
    public static List<String> unloadThenReload(List<Path> entries, String endpoint, String bucket)
            throws Exception {
        List<String> report = new ArrayList<>();
        java.lang.ref.WeakReference<ClassLoader> ref =
                useAndDrop(entries, endpoint, bucket, report);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (ref.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(50);
        }
        check(ref.get() == null, "the isolated class loader is still reachable after close");
        report.add("the isolated class loader was collected after close");
        try (URLClassLoader second = isolatedLoader(entries)) {
            report.addAll(run(second, endpoint, bucket, "refresh"));
        }
        report.add("a second isolated loader works after the first was collected");
        // Blocking threads of the first copy idle out after 10 s and exit: still no crash.
        Thread.sleep(11_000);
        report.add("still running 11 s later");
        return report;
    }

    private static java.lang.ref.WeakReference<ClassLoader> useAndDrop(
            List<Path> entries, String endpoint, String bucket, List<String> report)
            throws Exception {
        URLClassLoader loader = isolatedLoader(entries);
        Class<?> storeClass = Class.forName("dev.vended.storage.ObjectStore", true, loader);
        Class<?> providerInterface =
                Class.forName("dev.vended.storage.StorageOptionsProvider", false, loader);
        Object provider =
                Class.forName("dev.vended.storage.testkit.RootProvider", true, loader)
                        .getConstructor(String.class)
                        .newInstance(endpoint);
        Object store =
                storeClass
                        .getMethod("open", String.class, Map.class, providerInterface)
                        .invoke(
                                null,
                                "s3://" + bucket + "/unload-" + UUID.randomUUID() + "/",
                                AdminClient.endpointOptions(endpoint),
                                provider);
        storeClass.getMethod("put", String.class, byte[].class).invoke(store, "u", new byte[] {5});
        byte[] back = (byte[]) storeClass.getMethod("get", String.class).invoke(store, "u");
        check(Arrays.equals(new byte[] {5}, back), "read back other bytes");
        storeClass.getMethod("close").invoke(store);
        Object log = provider.getClass().getMethod("callLog").invoke(provider);
        report.add("first loader: provider calls " + log);
        check(String.valueOf(log).contains("contextLoader=own"), "provider calls: " + log);
        loader.close();
        return new java.lang.ref.WeakReference<>(loader);
    }

    /**
     * Credentials of 2 s from the provider (none in the initial options): the first fetch and a
     * refresh after expiry both run on native runtime threads and must work.
     */
    private void refreshOnANativeThread() throws Exception {
        Object provider = newProvider(2_000);
        String uri = "s3://" + bucket + "/c15-" + UUID.randomUUID() + "/";
        byte[] data = "isolated".getBytes(StandardCharsets.UTF_8);
        Object store = open(uri, provider);
        try {
            call(store, "put", new Class<?>[] {String.class, byte[].class}, "c15.bin", data);
            byte[] back = (byte[]) call(store, "get", new Class<?>[] {String.class}, "c15.bin");
            check(Arrays.equals(data, back), "first read returned other bytes");
            int first = (Integer) invoke(provider, "calls");
            check(first >= 1, "the provider was never called");
            report.add("first fetch and read worked; provider calls=" + first);

            Object stats = call(store, "refreshStats", new Class<?>[0]);
            long expiresAt = (Long) stats.getClass().getMethod("expiresAtMillis").invoke(stats);
            check(expiresAt > 0, "no expiry after the first fetch: " + stats);
            Waits.sleepUntil(expiresAt + 250); // the scenario: gen1 expires while idle

            back = (byte[]) call(store, "get", new Class<?>[] {String.class}, "c15.bin");
            check(Arrays.equals(data, back), "read after expiry returned other bytes");
            int calls = (Integer) invoke(provider, "calls");
            check(calls > first, "no refresh after expiry (calls=" + calls + ")");
            report.add("read after expiry worked; provider calls=" + calls);
            checkNativeThreads(provider);
        } finally {
            call(store, "close", new Class<?>[0]);
        }
    }

    /**
     * The provider throws a checked exception of the isolated loader: the caller gets the isolated
     * loader's {@code CredentialsException} naming the provider, whose cause is the provider's own
     * exception, promptly; once the refresh backoff has passed, the next call (provider healthy
     * again) works on the same store.
     */
    private void providerThrows() throws Exception {
        Object provider = newProvider(60_000);
        invoke(provider, "failWith", new Class<?>[] {String.class}, "catalog down (isolated)");
        String uri = "s3://" + bucket + "/c15-" + UUID.randomUUID() + "/";
        Object store = open(uri, provider);
        try {
            long start = System.nanoTime();
            Throwable thrown = null;
            try {
                call(store, "get", new Class<?>[] {String.class}, "missing.bin");
            } catch (InvocationTargetException e) {
                thrown = e.getCause();
            }
            long millis = (System.nanoTime() - start) / 1_000_000;
            check(thrown != null, "the read succeeded although the provider throws");
            String where = describe(thrown);
            check(
                    thrown.getClass().getName().equals("dev.vended.storage.CredentialsException"),
                    "expected dev.vended.storage.CredentialsException, got " + where);
            check(
                    thrown.getClass().getClassLoader() == loader,
                    "the CredentialsException comes from class loader "
                            + thrown.getClass().getClassLoader()
                            + ", not the isolated loader that loaded the library: a catch of"
                            + " CredentialsException in the caller would miss it");
            check(
                    thrown.getMessage().contains("EndpointProvider"),
                    "message does not name the provider: " + thrown.getMessage());
            check(
                    thrown.getMessage().contains("catalog down (isolated)"),
                    "message lacks the provider's message: " + thrown.getMessage());
            Object own = invoke(provider, "lastThrown");
            check(own != null, "the provider did not record what it threw");
            check(
                    thrown.getCause() == own,
                    "the cause is not the provider's own exception: " + where);
            check(
                    own.getClass().getClassLoader() == loader,
                    "the provider's exception class is not from the isolated loader");
            report.add("provider failure surfaced in " + millis + " ms as " + where);

            invoke(provider, "succeed");
            // A failed refresh backs off (C17): the provider is asked again after the default
            // initial backoff of 1 s, not at the very next call.
            Thread.sleep(1_300);
            call(
                    store,
                    "put",
                    new Class<?>[] {String.class, byte[].class},
                    "after.bin",
                    new byte[] {9});
            byte[] back = (byte[]) call(store, "get", new Class<?>[] {String.class}, "after.bin");
            check(Arrays.equals(new byte[] {9}, back), "read after recovery returned other bytes");
            report.add("the next calls on the same store worked");
            checkNativeThreads(provider);
        } finally {
            call(store, "close", new Class<?>[0]);
        }
    }

    private void checkNativeThreads(Object provider) throws Exception {
        @SuppressWarnings("unchecked")
        List<String> log = (List<String>) invoke(provider, "callLog");
        for (String line : log) {
            check(
                    line.startsWith("vended-storage-") && line.contains("daemon=true"),
                    "provider called on a thread that is not a native daemon runtime thread: "
                            + line);
            check(
                    line.contains("contextLoader=own"),
                    "the native thread's context class loader was not the provider's: " + line);
        }
        report.add("provider calls: " + log);
    }

    private Object newProvider(long ttlMillis) throws Exception {
        return providerClass
                .getConstructor(String.class, long.class)
                .newInstance(endpoint, ttlMillis);
    }

    private Object open(String uri, Object provider) throws Exception {
        Method open =
                storeClass.getMethod(
                        "open", String.class, Map.class, providerInterface, Duration.class);
        Map<String, String> options = AdminClient.endpointOptions(endpoint);
        return withTimeout(
                "open", () -> open.invoke(null, uri, options, provider, Duration.ofMillis(500)));
    }

    private Object call(Object store, String name, Class<?>[] types, Object... args)
            throws Exception {
        Method m = storeClass.getMethod(name, types);
        return withTimeout(name, () -> m.invoke(store, args));
    }

    private static Object invoke(Object target, String name) throws Exception {
        return target.getClass().getMethod(name).invoke(target);
    }

    private static Object invoke(Object target, String name, Class<?>[] types, Object... args)
            throws Exception {
        return target.getClass().getMethod(name, types).invoke(target, args);
    }

    /** Runs a reflective call on a caller thread; a call that does not return is a hang. */
    private Object withTimeout(String what, java.util.concurrent.Callable<Object> call)
            throws Exception {
        Future<Object> f = caller.submit(call);
        try {
            return f.get(CALL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError(what + " did not return within " + CALL_TIMEOUT + " (hang)");
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof Exception ex) {
                throw ex;
            }
            if (c instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }

    private static String describe(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (b.length() > 0) {
                b.append(" <- caused by ");
            }
            b.append(c.getClass().getName())
                    .append("@")
                    .append(c.getClass().getClassLoader())
                    .append(": ")
                    .append(c.getMessage());
        }
        return b.toString();
    }

    private static void check(boolean ok, String message) {
        if (!ok) {
            throw new AssertionError(message);
        }
    }
}
